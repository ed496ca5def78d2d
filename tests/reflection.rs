//! Server reflection lists what each port serves and nothing more, over
//! v1 and the v1alpha that older clients speak: the gateway's public port
//! does not advertise the internal services. Every service it lists
//! resolves, with every file and message it needs.

mod support;

use std::collections::BTreeSet;

use support::{embedded, sqlite_memory};
use ttakji_platform::bus::Bus;

/// The services the reflection service at `addr` lists, over `$version`.
macro_rules! listed {
    ($version:ident, $addr:expr) => {{
        use tonic_reflection::pb::$version::ServerReflectionRequest;
        use tonic_reflection::pb::$version::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::$version::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::$version::server_reflection_response::MessageResponse;
        let mut client =
            ServerReflectionClient::new(support::channel(&format!("http://{}", $addr)).await);
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut answers = client
            .server_reflection_info(tokio_stream::iter([request]))
            .await
            .expect("reflection answers")
            .into_inner();
        let answer = answers.message().await.expect("stream").expect("an answer");
        match answer.message_response {
            Some(MessageResponse::ListServicesResponse(list)) => list
                .service
                .into_iter()
                .map(|s| s.name)
                .collect::<BTreeSet<String>>(),
            other => panic!("not a list of services: {other:?}"),
        }
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_port_lists_only_its_own_services_over_v1_and_v1alpha() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let reflection = [
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    ];
    let public: BTreeSet<String> = [
        "ttakji.v1.AuthService",
        "ttakji.v1.GameService",
        "ttakji.v1.LadderService",
        "ttakji.v1.MatchService",
    ]
    .into_iter()
    .chain(reflection)
    .map(str::to_owned)
    .collect();
    assert_eq!(listed!(v1, service.gateway), public);
    assert_eq!(listed!(v1alpha, service.gateway), public);
    let authority: BTreeSet<String> = ["ttakji.internal.v1.AuthorityService"]
        .into_iter()
        .chain(reflection)
        .map(str::to_owned)
        .collect();
    assert_eq!(listed!(v1alpha, service.authority), authority);
}

/// Every file reflection at `addr` serves, over `$version`, that the
/// services it lists need: asked for each service by symbol, then for each
/// dependency by name, as `grpcurl describe` does. Panics on a name it
/// cannot resolve.
macro_rules! resolved {
    ($version:ident, $addr:expr, $services:expr) => {{
        use prost::Message as _;
        use tonic_reflection::pb::$version::ServerReflectionRequest;
        use tonic_reflection::pb::$version::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::$version::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::$version::server_reflection_response::MessageResponse;
        let mut client =
            ServerReflectionClient::new(support::channel(&format!("http://{}", $addr)).await);
        let mut files: std::collections::BTreeMap<String, prost_types::FileDescriptorProto> =
            std::collections::BTreeMap::new();
        let mut asks: Vec<MessageRequest> = $services
            .iter()
            .map(|s: &String| MessageRequest::FileContainingSymbol(s.clone()))
            .collect();
        while let Some(ask) = asks.pop() {
            let request = ServerReflectionRequest {
                host: String::new(),
                message_request: Some(ask.clone()),
            };
            let answer = client
                .server_reflection_info(tokio_stream::iter([request]))
                .await
                .expect("reflection answers")
                .into_inner()
                .message()
                .await
                .expect("stream")
                .expect("an answer");
            let Some(MessageResponse::FileDescriptorResponse(found)) = answer.message_response
            else {
                panic!("{ask:?} is not resolved: {:?}", answer.message_response);
            };
            for bytes in found.file_descriptor_proto {
                let file = prost_types::FileDescriptorProto::decode(bytes.as_slice())
                    .expect("a file descriptor");
                for dependency in &file.dependency {
                    if !files.contains_key(dependency) {
                        asks.push(MessageRequest::FileByFilename(dependency.clone()));
                    }
                }
                files.insert(file.name().to_owned(), file);
            }
        }
        files
    }};
}

/// The full names (`.pkg.Message`) of every message in `files`.
fn message_names(
    files: &std::collections::BTreeMap<String, prost_types::FileDescriptorProto>,
) -> BTreeSet<String> {
    fn nested(prefix: &str, message: &prost_types::DescriptorProto, out: &mut BTreeSet<String>) {
        let name = format!("{prefix}.{}", message.name());
        for inner in &message.nested_type {
            nested(&name, inner, out);
        }
        out.insert(name);
    }
    let mut names = BTreeSet::new();
    for file in files.values() {
        for message in &file.message_type {
            nested(&format!(".{}", file.package()), message, &mut names);
        }
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listed_service_its_methods_and_their_messages_resolve_over_v1_and_v1alpha() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    for addr in [service.gateway, service.authority] {
        let listed = listed!(v1, addr);
        assert!(
            listed.contains("grpc.health.v1.Health"),
            "health is listed at {addr}: {listed:?}"
        );
        let services: Vec<String> = listed.into_iter().collect();
        let over_v1 = resolved!(v1, addr, services);
        let over_v1alpha = resolved!(v1alpha, addr, services);
        assert_eq!(
            over_v1.keys().collect::<Vec<_>>(),
            over_v1alpha.keys().collect::<Vec<_>>()
        );
        let messages = message_names(&over_v1);
        let mut methods = 0;
        for name in &services {
            let (package, short) = name.rsplit_once('.').expect("a package");
            let declared = over_v1
                .values()
                .filter(|f| f.package() == package)
                .flat_map(|f| &f.service)
                .find(|s| s.name() == short)
                .unwrap_or_else(|| panic!("{name} is not in the files served"));
            for method in &declared.method {
                methods += 1;
                for message in [method.input_type(), method.output_type()] {
                    assert!(
                        messages.contains(message),
                        "{name}/{} needs {message}, which is not served",
                        method.name()
                    );
                }
            }
        }
        assert!(methods > 10, "only {methods} methods at {addr}");
    }
}
