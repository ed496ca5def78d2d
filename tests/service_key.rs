//! Internal services answer only calls that carry the service key the
//! deployment shares; health checks need none, and a service run alone
//! without a key does not start.

mod support;

use std::time::Duration;

use support::{SERVICE_KEY, fresh_postgres, redis_url};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;

fn load(key: Option<&str>) -> tonic::Request<internal::GetGameRequest> {
    let mut request = tonic::Request::new(internal::GetGameRequest {
        game_id: "0123456789abcdef0123456789abcdef".into(),
        user_id: String::new(),
        include_score_preview: false,
    });
    if let Some(key) = key {
        request.metadata_mut().insert(
            ttakji_platform::grpc::SERVICE_KEY_HEADER,
            key.parse().expect("metadata"),
        );
    }
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_internal_call_without_the_service_key_is_unauthenticated() {
    let db = fresh_postgres().await;
    let authority = support::authority_process(&db);
    let channel = support::channel(&format!("http://{}", authority.addr)).await;
    let mut client = AuthorityServiceClient::new(channel.clone());

    let none = client.get_game(load(None)).await.expect_err("refused");
    assert_eq!(none.code(), tonic::Code::Unauthenticated, "{none:?}");
    let wrong = client
        .get_game(load(Some("not-the-key-of-this-deployment")))
        .await
        .expect_err("refused");
    assert_eq!(wrong.code(), tonic::Code::Unauthenticated, "{wrong:?}");
    // With the key the call is the authority's to answer: no such game.
    let keyed = support::eventually(Duration::from_secs(10), || {
        let mut client = client.clone();
        async move {
            match client.get_game(load(Some(SERVICE_KEY))).await {
                Err(status) if status.code() == tonic::Code::NotFound => Ok(()),
                Err(status) if status.code() == tonic::Code::Unavailable => Err(status),
                other => panic!("with the key: {other:?}"),
            }
        }
    });
    keyed.await;

    // Health checks (probes) need no key.
    let health = tonic_health::pb::health_client::HealthClient::new(channel)
        .check(tonic_health::pb::HealthCheckRequest {
            service: "ttakji.internal.v1.AuthorityService".into(),
        })
        .await
        .expect("health answers")
        .into_inner();
    assert_eq!(
        health.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
}

#[test]
fn an_internal_service_run_alone_without_a_key_does_not_start() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ttakji"))
        .args([
            "matchmaker",
            "--listen",
            "127.0.0.1:0",
            "--redis-url",
            redis_url(),
        ])
        .env_remove("TTAKJI_SERVICE_KEY")
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--service-key"), "{said}");
}
