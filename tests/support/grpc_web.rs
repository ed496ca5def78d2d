//! A gRPC-web client over plain HTTP/1.1, written by hand as a browser's
//! `fetch` sends it: frames, the answer's head and de-chunked body, one-shot
//! requests and a kept-alive connection. The gRPC-web test and the move
//! round-trip bench use it.

use std::time::{Duration, Instant};

use base64::Engine as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One gRPC-web frame: flag (0 data, 0x80 trailers), length, bytes.
pub fn frame(flag: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![flag];
    out.extend_from_slice(&u32::try_from(bytes.len()).expect("small").to_be_bytes());
    out.extend_from_slice(bytes);
    out
}

/// What came back: the status line, the headers (lower-cased names) and
/// the body, de-chunked.
#[derive(Debug, Default)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether the whole body has come (the last chunk, or the length).
    pub complete: bool,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body's frames, decoded from base64 first for the text framing.
    pub fn frames(&self) -> Vec<(u8, Vec<u8>)> {
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
    pub fn trailer(&self, name: &str) -> Option<String> {
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

    pub fn grpc_status(&self) -> Option<String> {
        self.trailer("grpc-status")
    }
}

/// Reads an HTTP/1.1 answer from `raw`; `None` until its head is complete.
pub fn parse(raw: &[u8]) -> Option<Answer> {
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
    let (body, complete) = if chunked {
        let mut body = Vec::new();
        let mut complete = false;
        while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
            let Ok(size) =
                usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
            else {
                break;
            };
            if size == 0 {
                complete = rest.len() >= line_end + 4;
                break;
            }
            if rest.len() < line_end + 4 + size {
                break;
            }
            body.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest = &rest[line_end + 4 + size..];
        }
        (body, complete)
    } else {
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok());
        let complete = length.is_none_or(|n| rest.len() >= n);
        (rest.to_vec(), complete)
    };
    Some(Answer {
        status,
        headers,
        body,
        complete,
    })
}

/// Sends one HTTP/1.1 request and reads until `done` says the answer is
/// enough (or the server closes, or 10 s pass).
pub async fn http1(
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

/// One kept-alive HTTP/1.1 connection, for gRPC-web calls one after another.
#[derive(Debug)]
pub struct Connection {
    socket: tokio::net::TcpStream,
    addr: std::net::SocketAddr,
}

impl Connection {
    /// Connects to `addr`.
    ///
    /// # Panics
    /// When nothing listens there.
    pub async fn open(addr: std::net::SocketAddr) -> Connection {
        let socket = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connects");
        let _ = socket.set_nodelay(true);
        Connection { socket, addr }
    }

    /// A unary call to `path` in binary framing with `message` (encoded),
    /// read to the end of its answer.
    ///
    /// # Panics
    /// When the connection fails or the answer never ends.
    pub async fn unary(&mut self, path: &str, token: Option<&str>, message: &[u8]) -> Answer {
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let body = frame(0, message);
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n{auth}Content-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        let mut out = request.into_bytes();
        out.extend_from_slice(&body);
        self.socket.write_all(&out).await.expect("request");
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            if let Some(answer) = parse(&raw)
                && answer.complete
            {
                return answer;
            }
            let n = self.socket.read(&mut buf).await.expect("answer");
            assert!(n > 0, "the server closed the connection mid-answer");
            raw.extend_from_slice(&buf[..n]);
        }
    }
}
