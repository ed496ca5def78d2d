//! `ttakji loadtest` as a process against `ttakji serve` on an SQLite file:
//! its JSON report, and a restart fault it injects itself.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{serve_args, spawn};

/// A folder of its own for one test's database.
fn temp_dir() -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ttakji-loadtest-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `ttakji loadtest ARGS --json` to its end and reads its report.
fn loadtest(args: &[&str]) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ttakji"))
        .arg("loadtest")
        .args(args)
        .arg("--json")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(support::child_log())
        .spawn()
        .expect("the ttakji binary starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("waits").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ttakji loadtest {args:?} did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    assert!(
        out.status.success(),
        "ttakji loadtest {args:?}: {}",
        out.status
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("the report is not one JSON object ({e}): {text}"))
}

fn number(report: &Value, path: &str) -> f64 {
    report
        .pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {path} in {report}"))
}

#[test]
fn a_short_load_test_against_the_single_process_server_reports_moves_and_ordered_round_trips() {
    let dir = temp_dir();
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    let args = serve_args(&db, "127.0.0.1:0");
    let server = spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let url = format!("http://{}", server.addr);

    let pid = server.child.id().to_string();
    let report = loadtest(&[
        "--gateway-url",
        &url,
        "--games",
        "4",
        "--duration",
        "3",
        "--warmup",
        "0.5",
        "--server-pid",
        &pid,
    ]);

    assert!(number(&report, "/moves") > 0.0, "{report}");
    assert!(number(&report, "/moves_per_second") > 0.0, "{report}");
    assert_eq!(number(&report, "/errors_total"), 0.0, "{report}");
    assert_eq!(report["errors"], serde_json::json!({}), "{report}");
    assert_eq!(report["faults"], serde_json::json!([]), "{report}");
    assert_eq!(number(&report, "/games"), 4.0);
    assert!(number(&report, "/games_started") >= 4.0, "{report}");
    assert_eq!(number(&report, "/warmup_s"), 0.5);
    for field in ["games_finished", "live_games", "duration_s"] {
        number(&report, &format!("/{field}"));
    }
    let p50 = number(&report, "/round_trip_ms/p50");
    let p99 = number(&report, "/round_trip_ms/p99");
    let p999 = number(&report, "/round_trip_ms/p99_9");
    let max = number(&report, "/round_trip_ms/max");
    assert!(
        0.0 < p50 && p50 <= p99 && p99 <= p999 && p999 <= max,
        "round trip percentiles out of order: {report}"
    );
    assert!(number(&report, "/round_trip_ms/count") > 0.0);
    for latency in ["call_ms", "baseline_ms"] {
        let p50 = number(&report, &format!("/{latency}/p50"));
        let p99 = number(&report, &format!("/{latency}/p99"));
        assert!(0.0 < p50 && p50 <= p99, "{latency}: {report}");
    }
    assert!(number(&report, "/round_trip_over_baseline_p50") > 0.0);
    // CPU from the kernel's counters: the load test's own, and the server's
    // per accepted move (it did work for every move it accepted).
    assert!(number(&report, "/cpu/load_test_s") >= 0.0, "{report}");
    assert!(number(&report, "/cpu/server_s") > 0.0, "{report}");
    assert!(number(&report, "/cpu/server_us_per_move") > 0.0, "{report}");
    assert_eq!(
        report["cpu"]["server_pids"],
        serde_json::json!([server.child.id()])
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_restart_fault_kills_the_server_the_load_test_started_and_reports_what_it_cost() {
    let dir = temp_dir();
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    // The restarted server must come back on the same address.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let listen = format!("127.0.0.1:{port}");
    let serve = std::iter::once(env!("CARGO_BIN_EXE_ttakji").to_owned())
        .chain(serve_args(&db, &listen))
        .collect::<Vec<_>>()
        .join(" ");

    let report = loadtest(&[
        "--gateway-url",
        &format!("http://{listen}"),
        "--games",
        "2",
        "--duration",
        "5",
        "--warmup",
        "0",
        "--fault-every",
        "2.5",
        "--fault-restart",
        &serve,
    ]);

    assert!(number(&report, "/moves") > 0.0, "{report}");
    let faults = report["faults"].as_array().expect("a list of faults");
    assert_eq!(faults.len(), 1, "{report}");
    let fault = &faults[0];
    assert_eq!(fault["what"], "restart");
    assert!(number(fault, "/at_s") >= 2.5, "{fault}");
    number(fault, "/failed_calls_total");
    let moving = number(fault, "/moving_games");
    assert!(moving >= 1.0, "games were moving at the fault: {fault}");
    assert!(
        number(fault, "/not_recovered") < moving,
        "no game moved again after the restart: {report}"
    );
    // The load test stopped the server it started: the port is free.
    assert!(
        std::net::TcpListener::bind(&listen).is_ok(),
        "the server still listens on {listen}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
