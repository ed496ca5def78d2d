//! Nicknames over `ttakji serve` as a process: a look-alike in another
//! script is taken like an upper-case copy, control characters are refused
//! at the edge, a renamed player's old name stays theirs, and a guest whose
//! tokens have all expired is removed, freeing its names.

mod support;

use std::time::{Duration, Instant};

use support::{sign_in, with_token};
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

async fn guest(url: &str, nickname: &str) -> Result<pb::SignInGuestResponse, tonic::Status> {
    AuthServiceClient::new(support::channel(url).await)
        .sign_in_guest(pb::SignInGuestRequest {
            nickname: nickname.to_owned(),
        })
        .await
        .map(tonic::Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_unique_by_skeleton_kept_after_a_rename_and_freed_when_a_guest_expires() {
    let dir = std::env::temp_dir().join(format!("ttakji-names-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    let server = support::serve_on(&db, &["--guest-sweep-every", "0.2"]);
    let url = format!("http://{}", server.addr);
    let jin = sign_in(&url, "jin").await;

    // Look-alikes: Cyrillic је, upper case, Ukrainian і.
    for look_alike in ["\u{458}in", "JIN", "j\u{456}n"] {
        let taken = guest(&url, look_alike).await.expect_err(look_alike);
        assert_eq!(taken.code(), tonic::Code::AlreadyExists, "{look_alike:?}");
        assert!(taken.message().contains("is taken"), "{}", taken.message());
    }
    // Control characters, refused before any store sees them.
    let nul = guest(&url, "ji\0n").await.expect_err("a NUL byte");
    assert_eq!(nul.code(), tonic::Code::InvalidArgument, "{nul:?}");
    let mut matching = MatchServiceClient::new(jin.channel.clone());
    let ruleset = matching
        .find_match(jin.req(pb::FindMatchRequest {
            board_size: 9,
            ruleset: "ttakji\0".to_owned(),
            ranked: false,
        }))
        .await
        .expect_err("a NUL in the ruleset");
    assert_eq!(ruleset.code(), tonic::Code::InvalidArgument);
    assert_eq!(
        ruleset.message(),
        "ruleset may not hold control characters (found U+0000)"
    );

    // A rename keeps the old name the player's own.
    let renamed = AuthServiceClient::new(jin.channel.clone())
        .change_nickname(jin.req(pb::ChangeNicknameRequest {
            nickname: "jin-go".to_owned(),
        }))
        .await
        .expect("renamed")
        .into_inner();
    let kept = guest(&url, "jin").await.expect_err("jin is still jin-go's");
    assert_eq!(kept.code(), tonic::Code::AlreadyExists);
    let back = AuthServiceClient::new(jin.channel.clone())
        .change_nickname(with_token(
            pb::ChangeNicknameRequest {
                nickname: "Jin".to_owned(),
            },
            &renamed.access_token,
        ))
        .await;
    assert!(back.is_ok(), "a player takes an old name back: {back:?}");

    // The guest's tokens have all expired: the sweep removes the account
    // and both its names are free.
    let store = sqlx::SqlitePool::connect(&db)
        .await
        .expect("the server's file");
    sqlx::query("UPDATE accounts SET tokens_expire_at = 1 WHERE user_id = $1")
        .bind(&jin.user_id)
        .execute(&store)
        .await
        .expect("expired");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match guest(&url, "jin-go").await {
            Ok(_) => break,
            Err(status) if status.code() == tonic::Code::AlreadyExists => {
                assert!(
                    Instant::now() < deadline,
                    "the expired guest was never removed"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(status) => panic!("{status:?}"),
        }
    }
    guest(&url, "jin")
        .await
        .expect("its other name is free too");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM accounts WHERE user_id = $1")
        .bind(&jin.user_id)
        .fetch_one(&store)
        .await
        .expect("count");
    assert_eq!(left, 0, "the account is gone");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
