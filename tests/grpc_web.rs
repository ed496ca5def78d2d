//! Browsers' way in: gRPC-web over plain HTTP/1.1 on the gateway's own
//! port, as a browser's `fetch` sends it, against `ttakji serve` as a
//! process: a unary call in binary and in text (base64) framing, a server
//! stream (`WatchGame`) that carries a move as it is played, errors in the
//! trailers, and CORS for the configured origin only.

mod support;

use std::time::{Duration, Instant};

use base64::Engine as _;
use prost::Message as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use ttakji_proto::v1 as pb;

const ORIGIN: &str = "https://play.example";

/// One gRPC-web frame: flag (0 data, 0x80 trailers), length, bytes.
fn frame(flag: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![flag];
    out.extend_from_slice(&u32::try_from(bytes.len()).expect("small").to_be_bytes());
    out.extend_from_slice(bytes);
    out
}

/// What came back: the status line, the headers (lower-cased names) and
/// the body, de-chunked.
#[derive(Debug, Default)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body's frames, decoded from base64 first for the text framing.
    fn frames(&self) -> Vec<(u8, Vec<u8>)> {
        let body = if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/grpc-web-text"))
        {
            // Each frame is encoded on its own, padding and all.
            let mut bytes = Vec::new();
            for chunk in self
                .body
                .chunks(4)
                .collect::<Vec<_>>()
                .split_inclusive(|c| c.contains(&b'='))
            {
                let segment: Vec<u8> = chunk.concat();
                bytes.extend(
                    base64::engine::general_purpose::STANDARD
                        .decode(&segment)
                        .expect("base64 body"),
                );
            }
            bytes
        } else {
            self.body.clone()
        };
        let mut frames = Vec::new();
        let mut rest = body.as_slice();
        while rest.len() >= 5 {
            let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
            if rest.len() < 5 + len {
                break;
            }
            frames.push((rest[0], rest[5..5 + len].to_vec()));
            rest = &rest[5 + len..];
        }
        frames
    }

    /// A trailer: from the trailers frame, or from the headers of an answer
    /// that is trailers only (an error before any message).
    fn trailer(&self, name: &str) -> Option<String> {
        let prefix = format!("{name}:");
        self.frames()
            .into_iter()
            .find(|(f, _)| f & 0x80 != 0)
            .and_then(|(_, t)| {
                String::from_utf8_lossy(&t)
                    .lines()
                    .find_map(|l| l.strip_prefix(prefix.as_str()).map(|s| s.trim().to_owned()))
            })
            .or_else(|| self.header(name).map(str::to_owned))
    }

    fn grpc_status(&self) -> Option<String> {
        self.trailer("grpc-status")
    }
}

/// Reads an HTTP/1.1 answer from `raw`; `None` until its head is complete.
fn parse(raw: &[u8]) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut rest = &raw[end + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        let mut body = Vec::new();
        while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
            let Ok(size) =
                usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
            else {
                break;
            };
            if size == 0 || rest.len() < line_end + 2 + size {
                break;
            }
            body.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest = &rest[(line_end + 4 + size).min(rest.len())..];
        }
        body
    } else {
        rest.to_vec()
    };
    Some(Answer {
        status,
        headers,
        body,
    })
}

/// Sends one HTTP/1.1 request and reads until `done` says the answer is
/// enough (or the server closes, or 10 s pass).
async fn http1(
    addr: std::net::SocketAddr,
    head: &str,
    body: &[u8],
    done: impl Fn(&Answer) -> bool,
) -> Answer {
    let mut socket = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request = format!(
        "{head}Host: {addr}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.expect("head");
    socket.write_all(body).await.expect("body");
    let mut raw = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 8192];
    loop {
        if let Some(answer) = parse(&raw)
            && done(&answer)
        {
            return answer;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, socket.read(&mut buf)).await {
            Ok(Ok(0)) | Err(_) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => panic!("reading the answer: {e}"),
        }
    }
    parse(&raw).unwrap_or_else(|| panic!("no HTTP answer: {:?}", String::from_utf8_lossy(&raw)))
}

/// A unary gRPC-web call in binary framing, read to its trailers.
async fn call(
    addr: std::net::SocketAddr,
    path: &str,
    token: Option<&str>,
    message: &impl prost::Message,
) -> Answer {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST {path} HTTP/1.1\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n{auth}"
    );
    http1(addr, &head, &frame(0, &message.encode_to_vec()), |a| {
        a.grpc_status().is_some()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_signs_in_plays_and_watches_over_grpc_web_on_http1() {
    let dir = std::env::temp_dir().join(format!("ttakji-web-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    let server = support::serve_on(&db, &["--web-origins", ORIGIN]);
    let addr = server.addr;

    // Sign in, binary framing.
    let signed = call(
        addr,
        "/ttakji.v1.AuthService/SignInGuest",
        None,
        &pb::SignInGuestRequest {
            nickname: "webkim".to_owned(),
        },
    )
    .await;
    assert_eq!(signed.status, 200);
    assert_eq!(signed.grpc_status().as_deref(), Some("0"), "{signed:?}");
    let (_, data) = signed.frames().into_iter().next().expect("a data frame");
    let me = pb::SignInGuestResponse::decode(data.as_slice()).expect("the answer");
    assert!(!me.access_token.is_empty());

    // Text framing (base64), as browsers without binary streaming use it.
    let body = base64::engine::general_purpose::STANDARD.encode(frame(
        0,
        &pb::StartAiGameRequest {
            board_size: 9,
            color: pb::ColorChoice::Black as i32,
            level: pb::AiLevel::Easy as i32,
        }
        .encode_to_vec(),
    ));
    let head = format!(
        "POST /ttakji.v1.GameService/StartAiGame HTTP/1.1\r\nContent-Type: application/grpc-web-text\r\nAccept: application/grpc-web-text\r\nX-Grpc-Web: 1\r\nAuthorization: Bearer {}\r\n",
        me.access_token
    );
    let started = http1(addr, &head, body.as_bytes(), |a| a.grpc_status().is_some()).await;
    assert_eq!(started.grpc_status().as_deref(), Some("0"), "{started:?}");
    let (_, data) = started.frames().into_iter().next().expect("a data frame");
    let game = pb::StartAiGameResponse::decode(data.as_slice())
        .expect("the answer")
        .game
        .expect("a game");

    // A stream: WatchGame from the start carries the game's first event,
    // then the move about to be played.
    let watching = {
        let head = format!(
            "POST /ttakji.v1.GameService/WatchGame HTTP/1.1\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\nAuthorization: Bearer {}\r\n",
            me.access_token
        );
        let body = frame(
            0,
            &pb::WatchGameRequest {
                game_id: game.game_id.clone(),
                after_seq: 0,
            }
            .encode_to_vec(),
        );
        tokio::spawn(async move {
            http1(addr, &head, &body, |a| {
                a.frames().iter().any(|(flag, data)| {
                    *flag == 0
                        && pb::WatchGameResponse::decode(data.as_slice())
                            .ok()
                            .and_then(|m| m.event)
                            .and_then(|e| e.snapshot)
                            .is_some_and(|s| s.move_count >= 1)
                })
            })
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let played = call(
        addr,
        "/ttakji.v1.GameService/PlayMove",
        Some(&me.access_token),
        &pb::PlayMoveRequest {
            game_id: game.game_id.clone(),
            move_number: 1,
            point: Some(pb::Point { column: 4, row: 4 }),
        },
    )
    .await;
    assert_eq!(played.grpc_status().as_deref(), Some("0"), "{played:?}");
    let watched = watching.await.expect("the watcher");
    let seen = watched
        .frames()
        .iter()
        .filter(|(flag, _)| *flag == 0)
        .filter_map(|(_, d)| pb::WatchGameResponse::decode(d.as_slice()).ok())
        .filter_map(|m| m.event.and_then(|e| e.snapshot))
        .map(|s| s.move_count)
        .max();
    assert!(seen >= Some(1), "the stream carried the move: {watched:?}");

    // An error is a status in the trailers, with its message: a move
    // numbered far ahead is FAILED_PRECONDITION.
    let refused = call(
        addr,
        "/ttakji.v1.GameService/PlayMove",
        Some(&me.access_token),
        &pb::PlayMoveRequest {
            game_id: game.game_id.clone(),
            move_number: 9,
            point: Some(pb::Point { column: 4, row: 4 }),
        },
    )
    .await;
    assert_eq!(refused.grpc_status().as_deref(), Some("9"), "{refused:?}");
    assert!(
        refused
            .trailer("grpc-message")
            .is_some_and(|m| m.contains("is%20not%20next")),
        "{refused:?}"
    );
    let unauthenticated = call(
        addr,
        "/ttakji.v1.GameService/GetGame",
        None,
        &pb::GetGameRequest {
            game_id: game.game_id.clone(),
            include_score_preview: false,
        },
    )
    .await;
    assert_eq!(
        unauthenticated.grpc_status().as_deref(),
        Some("16"),
        "UNAUTHENTICATED: {unauthenticated:?}"
    );

    // CORS: the configured origin may call; another may not.
    let preflight = |origin: &str| {
        format!(
            "OPTIONS /ttakji.v1.AuthService/SignInGuest HTTP/1.1\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type,x-grpc-web,authorization\r\n"
        )
    };
    let allowed = http1(addr, &preflight(ORIGIN), b"", |_| true).await;
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some(ORIGIN),
        "{allowed:?}"
    );
    assert!(
        allowed
            .header("access-control-allow-headers")
            .is_some_and(|h| h.contains("authorization")),
        "{allowed:?}"
    );
    let other = http1(addr, &preflight("https://elsewhere.example"), b"", |_| true).await;
    assert_eq!(
        other.header("access-control-allow-origin"),
        None,
        "{other:?}"
    );
    let head = format!(
        "POST /ttakji.v1.AuthService/SignInGuest HTTP/1.1\r\nOrigin: {ORIGIN}\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n"
    );
    let body = frame(
        0,
        &pb::SignInGuestRequest {
            nickname: "weblee".to_owned(),
        }
        .encode_to_vec(),
    );
    let cross = http1(addr, &head, &body, |a| a.grpc_status().is_some()).await;
    assert_eq!(cross.grpc_status().as_deref(), Some("0"), "{cross:?}");
    assert_eq!(cross.header("access-control-allow-origin"), Some(ORIGIN));
    assert!(
        cross
            .header("access-control-expose-headers")
            .is_some_and(|h| h.contains("grpc-status") && h.contains("grpc-message")),
        "the page can read the status: {cross:?}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
