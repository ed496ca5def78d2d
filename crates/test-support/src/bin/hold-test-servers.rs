//! Starts the tests' throwaway Redis and PostgreSQL, prints
//! `servers <redis url> <postgres url>`, and waits to be killed: the test
//! that the servers stop with the process that started them kills it.

use std::io::Write as _;
use std::time::Duration;

fn main() {
    let line = format!(
        "servers {} {}\n",
        ttakji_test_support::redis_url(),
        ttakji_test_support::postgres_admin_url()
    );
    let mut out = std::io::stdout();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
    std::thread::sleep(Duration::from_secs(120));
}
