//! The servers the tests get answer, are shared within a process, and stop
//! when the process that started them is killed.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ttakji_test_support::{
    DATABASE_URL_VAR, REDIS_URL_VAR, postgres_admin_url, postgres_database_url, redis_url,
};

/// `host:port` of a `scheme://[user@]host:port/…` URL.
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, rest)| rest);
    rest.split(['/', '?']).next().unwrap_or(rest).to_owned()
}

fn redis_answers(url: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(host_port(url)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut reply = [0; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

fn listens(url: &str) -> bool {
    TcpStream::connect(host_port(url)).is_ok()
}

#[test]
fn redis_answers_and_every_call_in_a_process_gets_the_same_one() {
    let url = redis_url();
    assert!(redis_answers(url), "no PONG from {url}");
    assert!(std::ptr::eq(url, redis_url()));
}

#[test]
fn postgres_listens_and_names_databases_on_the_same_server() {
    let admin = postgres_admin_url();
    assert!(listens(admin), "nothing listens at {admin}");
    assert!(std::ptr::eq(admin, postgres_admin_url()));
    let db = postgres_database_url("ttakji_t1");
    assert_eq!(host_port(&db), host_port(admin));
    assert!(db.contains("/ttakji_t1"), "{db}");
}

#[test]
fn throwaway_servers_stop_when_the_process_that_started_them_is_killed() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hold-test-servers"))
        .env_remove(REDIS_URL_VAR)
        .env_remove(DATABASE_URL_VAR)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the child starts");
    let stdout = child.stdout.take().expect("stdout");
    let line = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find(|line| line.starts_with("servers "))
        .expect("the child names its servers");
    let urls: Vec<&str> = line.split_whitespace().skip(1).collect();
    let [redis, postgres] = urls[..] else {
        panic!("two URLs in {line:?}");
    };
    assert!(redis_answers(redis), "{redis} answers while the child runs");
    assert!(listens(postgres), "{postgres} listens while the child runs");

    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    let deadline = Instant::now() + Duration::from_secs(20);
    while listens(redis) || listens(postgres) {
        assert!(
            Instant::now() < deadline,
            "a server outlived the killed process: redis {} postgres {}",
            listens(redis),
            listens(postgres)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
