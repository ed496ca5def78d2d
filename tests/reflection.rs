//! Server reflection lists what each port serves and nothing more, over
//! v1 and the v1alpha that older clients speak: the gateway's public port
//! does not advertise the internal services.

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
    let authority: BTreeSet<String> = ["ttakji.v1.AuthorityService"]
        .into_iter()
        .chain(reflection)
        .map(str::to_owned)
        .collect();
    assert_eq!(listed!(v1alpha, service.authority), authority);
}
