//! Sign-in with Google against a key set served here over local HTTP, with
//! ID tokens signed here: audience, issuer, expiry and signature checked,
//! the key set cached and fetched again for an unknown key id, and only
//! signed-in players queue for ranked games.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::Mutex;
use tonic::Code;
use ttakji_platform::bus::Bus;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;

const CLIENT_ID: &str = "ttakji-test.apps.googleusercontent.com";

/// A key set served over HTTP; the keys it holds can be changed, and the
/// fetches are counted.
struct KeyServer {
    url: String,
    keys: Arc<Mutex<Vec<&'static str>>>,
    fetches: Arc<AtomicUsize>,
}

async fn key_server(initial: Vec<&'static str>) -> KeyServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/certs", listener.local_addr().expect("addr"));
    let keys = Arc::new(Mutex::new(initial));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (k, f) = (Arc::clone(&keys), Arc::clone(&fetches));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (k, f) = (Arc::clone(&k), Arc::clone(&f));
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                f.fetch_add(1, Ordering::SeqCst);
                let jwks: Vec<serde_json::Value> = k
                    .lock()
                    .await
                    .iter()
                    .map(|j| serde_json::from_str(j).expect("jwk"))
                    .collect();
                let body = serde_json::json!({ "keys": jwks }).to_string();
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncache-control: public, max-age=3600\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    KeyServer { url, keys, fetches }
}

const JWK_1: &str = include_str!("data/google-test-key-1.jwk.json");
const JWK_2: &str = include_str!("data/google-test-key-2.jwk.json");
// Private keys of test-key-1 and test-key-2 (PKCS#1 DER, made for these tests).
const KEY_1: &[u8] = include_bytes!("data/google-test-key-1.der");
const KEY_2: &[u8] = include_bytes!("data/google-test-key-2.der");

fn id_token(der: &[u8], kid: &str, sub: &str, aud: &str, iss: &str, exp_from_now: i64) -> String {
    let now = ttakji_platform::auth::now_secs() as i64;
    let claims = serde_json::json!({
        "iss": iss, "aud": aud, "sub": sub, "iat": now, "exp": now + exp_from_now,
        "name": "Kim Jin", "given_name": "Jin", "email": "jin@example.com",
    });
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    let key = EncodingKey::from_rsa_der(der);
    jsonwebtoken::encode(&header, &claims, &key).expect("sign")
}

fn claims_json() -> serde_json::Value {
    let now = ttakji_platform::auth::now_secs() as i64;
    serde_json::json!({"iss": "https://accounts.google.com", "aud": CLIENT_ID, "sub": "g-9", "iat": now, "exp": now + 600})
}

/// `alg: none`, no signature.
fn unsigned() -> String {
    use base64::Engine as _;
    let b64 = |v: &serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let header = serde_json::json!({"alg": "none", "typ": "JWT", "kid": "test-key-1"});
    format!("{}.{}.", b64(&header), b64(&claims_json()))
}

/// HS256 keyed with the published RSA key, the classic confusion attack.
fn hs256_with_public_key() -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("test-key-1".to_owned());
    let key = EncodingKey::from_secret(JWK_1.as_bytes()).expect("secret");
    jsonwebtoken::encode(&header, &claims_json(), &key).expect("sign")
}

async fn sign_in(
    auth: &mut AuthServiceClient<tonic::transport::Channel>,
    token: String,
) -> Result<pb::SignInGoogleResponse, tonic::Status> {
    auth.sign_in_google(pb::SignInGoogleRequest {
        id_token: token,
        nickname: String::new(),
    })
    .await
    .map(tonic::Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_id_tokens_are_checked_and_sign_the_player_in() {
    let keys = key_server(vec![JWK_1]).await;
    let service = support::embedded_full(
        support::sqlite_memory().await,
        Bus::in_process(),
        ttakji_matchmaker::Tickets::memory(),
        Some((CLIENT_ID.to_owned(), keys.url.clone())),
    )
    .await;
    let url = format!("http://{}", service.gateway);
    let mut auth = AuthServiceClient::new(support::channel(&url).await);
    let google = "https://accounts.google.com";

    let first = sign_in(
        &mut auth,
        id_token(KEY_1, "test-key-1", "g-1", CLIENT_ID, google, 600),
    )
    .await
    .expect("signed in");
    assert!(first.new_account);
    assert_eq!(first.nickname, "Jin");
    let claims = support::keys()
        .verify(&first.access_token)
        .expect("our token");
    assert!(!claims.guest, "a Google sign-in is not a guest");
    let again = sign_in(
        &mut auth,
        id_token(
            KEY_1,
            "test-key-1",
            "g-1",
            CLIENT_ID,
            "accounts.google.com",
            600,
        ),
    )
    .await
    .expect("signed in again");
    assert_eq!(
        (again.user_id.as_str(), again.new_account),
        (first.user_id.as_str(), false)
    );
    assert_eq!(
        keys.fetches.load(Ordering::SeqCst),
        1,
        "the key set is cached"
    );

    for (token, why) in [
        (
            id_token(KEY_1, "test-key-1", "g-2", "someone-else", google, 600),
            "audience",
        ),
        (
            id_token(
                KEY_1,
                "test-key-1",
                "g-2",
                CLIENT_ID,
                "https://evil.example",
                600,
            ),
            "issuer",
        ),
        (
            id_token(KEY_1, "test-key-1", "g-2", CLIENT_ID, google, -60),
            "expired",
        ),
        (
            id_token(KEY_2, "test-key-1", "g-2", CLIENT_ID, google, 600),
            "signature",
        ),
        ("not.a.token".to_owned(), "malformed"),
        (unsigned(), "alg none"),
        (
            hs256_with_public_key(),
            "HS256 with the public key as secret",
        ),
    ] {
        let status = sign_in(&mut auth, token).await.expect_err(why);
        assert_eq!(status.code(), Code::Unauthenticated, "{why}: {status:?}");
    }

    // Google rotates its keys: a token with a new key id makes the gateway
    // fetch the key set again, though not more than once in two seconds.
    keys.keys.lock().await.push(JWK_2);
    let too_soon = sign_in(
        &mut auth,
        id_token(KEY_2, "test-key-2", "g-3", CLIENT_ID, google, 600),
    )
    .await
    .expect_err("fetched less than two seconds ago");
    assert_eq!(too_soon.code(), Code::Unauthenticated);
    assert_eq!(keys.fetches.load(Ordering::SeqCst), 1);
    tokio::time::sleep(ttakji_gateway::google::REFETCH_AT_MOST_EVERY).await;
    let rotated = sign_in(
        &mut auth,
        id_token(KEY_2, "test-key-2", "g-3", CLIENT_ID, google, 600),
    )
    .await
    .expect("signed in with the new key");
    assert!(rotated.new_account);
    assert_ne!(
        rotated.nickname.to_lowercase(),
        "jin",
        "nicknames stay unique"
    );
    assert_eq!(keys.fetches.load(Ordering::SeqCst), 2);

    // Ranked play: signed-in players queue, guests are refused.
    let guest = support::sign_in(&url, "guest1").await;
    let mut matches =
        ttakji_proto::v1::match_service_client::MatchServiceClient::new(guest.channel.clone());
    let ranked = pb::FindMatchRequest {
        board_size: 9,
        ranked: true,
        ruleset: String::new(),
    };
    let refused = matches
        .find_match(guest.req(ranked.clone()))
        .await
        .expect_err("guest");
    assert_eq!(refused.code(), Code::PermissionDenied);
    // Two signed-in players: a ranked game end to end, and both ratings move.
    let queue = |token: String| {
        let mut matches = matches.clone();
        let ranked = ranked.clone();
        async move {
            let mut stream = matches
                .find_match(support::with_token(ranked, &token))
                .await
                .expect("a signed-in player queues for ranked games")
                .into_inner();
            let mut last = None;
            while let Some(m) = stream.message().await.expect("stream") {
                last = m.ticket;
            }
            last.expect("ticket")
        }
    };
    let (t1, t3) = tokio::join!(
        queue(first.access_token.clone()),
        queue(rotated.access_token.clone())
    );
    assert_eq!(t1.state, pb::TicketState::Matched as i32);
    assert_eq!(t1.game_id, t3.game_id);
    assert!(t1.pool.is_some_and(|p| p.ranked));
    let mut games =
        ttakji_proto::v1::game_service_client::GameServiceClient::new(guest.channel.clone());
    games
        .resign(support::with_token(
            pb::ResignRequest {
                game_id: t1.game_id.clone(),
                ..Default::default()
            },
            &first.access_token,
        ))
        .await
        .expect("resign");
    let mut ladder =
        ttakji_proto::v1::ladder_service_client::LadderServiceClient::new(guest.channel.clone());
    let mut rating = pb::LadderEntry::default();
    for _ in 0..100 {
        rating = ladder
            .get_my_rating(support::with_token(
                pb::GetMyRatingRequest { board_size: 9 },
                &rotated.access_token,
            ))
            .await
            .expect("rating")
            .into_inner()
            .entry
            .expect("entry");
        if rating.games == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        (rating.rating, rating.games),
        (1220, 1),
        "the winner of a ranked game"
    );
    let loser = ladder
        .get_my_rating(support::with_token(
            pb::GetMyRatingRequest { board_size: 9 },
            &first.access_token,
        ))
        .await
        .expect("rating")
        .into_inner()
        .entry
        .expect("entry");
    assert_eq!(loser.rating, 1180);
}
