//! A throwaway `redis-server`: loopback only, nothing saved to disk.

use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::net::{Ipv4Addr, TcpStream};
use std::path::Path;
use std::time::Duration;

use crate::supervisor::{Supervised, server_folder};
use crate::{READY_WITHIN, Server};

/// Starts `redis-server` on `port` and waits until it answers.
pub(crate) fn start(port: u16) -> Result<Server, String> {
    let folder = server_folder("redis", None)?;
    let args: Vec<OsString> = [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--dir",
    ]
    .iter()
    .map(OsString::from)
    .chain([folder.clone().into_os_string()])
    .collect();
    let mut server = Supervised::start(&folder, None, "TERM", Path::new("redis-server"), &args)?;
    // The server on the port must be ours: another process may have taken
    // the port first, and then ours exits.
    server.wait_until_ready(
        &format!("redis-server on port {port}"),
        READY_WITHIN,
        |server| server_pid(port) == Some(server.pid()),
    )?;
    Ok(Server {
        url: format!("redis://127.0.0.1:{port}"),
        _supervised: Some(server),
    })
}

/// The process id that the Redis on `port` reports, if one answers.
fn server_pid(port: u16) -> Option<u32> {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    stream.write_all(b"INFO server\r\n").ok()?;
    let mut reply = Vec::new();
    let mut chunk = [0; 4096];
    while !whole_reply(&reply) {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&chunk[..n]);
    }
    process_id(&String::from_utf8_lossy(&reply))
}

/// Whether `reply` holds a whole answer: a bulk string
/// (`$<length>\r\n<text>\r\n`) or any one-line reply (an error).
fn whole_reply(reply: &[u8]) -> bool {
    let Some(end) = reply.windows(2).position(|w| w == b"\r\n") else {
        return false;
    };
    match reply[..end].split_first() {
        Some((b'$', length)) => std::str::from_utf8(length)
            .ok()
            .and_then(|l| l.parse::<usize>().ok())
            .is_none_or(|length| reply.len() >= end + 2 + length + 2),
        _ => true,
    }
}

/// The `process_id:` field of an `INFO server` reply.
fn process_id(info: &str) -> Option<u32> {
    info.lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_id_is_read_from_an_info_reply() {
        let reply =
            "$60\r\n# Server\r\nredis_version:7.0.15\r\nprocess_id:4242\r\ntcp_port:1\r\n\r\n";
        assert_eq!(process_id(reply), Some(4242));
        assert_eq!(process_id("-ERR unknown command\r\n"), None);
    }

    #[test]
    fn a_reply_is_whole_once_its_announced_length_has_arrived() {
        assert!(!whole_reply(b"$12\r\nprocess"));
        assert!(!whole_reply(b"$1"));
        assert!(whole_reply(b"$12\r\nprocess_id:1\r\n"));
        assert!(whole_reply(b"-ERR no\r\n"));
    }
}
