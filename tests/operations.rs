//! A running service as its operator sees it: spans exported over OTLP
//! reach a collector named after their RPCs with OpenTelemetry's `rpc.*`
//! attributes, JSON log lines carry the trace they belong to with their
//! fields as values, and the metrics page passes `promtool check metrics`
//! and answers HEAD as well as GET.

mod support;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::operator::{Received, promtool_check, start_collector};
use support::{Process, http, serve_args, sign_in, temp_sqlite};
use ttakji_proto::v1 as pb;

/// `ttakji serve` with `extra` arguments and `env`, its standard error
/// (the log) kept line by line.
fn serve_logging(extra: &[&str], env: &[(&str, &str)]) -> (Process, Arc<Mutex<Vec<String>>>) {
    let mut args = serve_args(&temp_sqlite(), "127.0.0.1:0");
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_ttakji"));
    command
        .args(&args)
        .env("TTAKJI_LIMITS_EXEMPT", "127.0.0.1")
        .envs(env.iter().copied())
        .stderr(Stdio::piped());
    let mut server = Process::start(command);
    let log = Arc::new(Mutex::new(Vec::new()));
    let stderr = server.child.stderr.take().expect("stderr");
    let lines = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            lines.lock().expect("not poisoned").push(line);
        }
    });
    (server, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_an_otlp_collector_by_rpc_name_and_log_lines_carry_their_trace() {
    let (collector_addr, collector) = start_collector().await;
    let endpoint = format!("http://{collector_addr}");
    let (server, log) = serve_logging(
        &["--otlp-endpoint", &endpoint, "--log-format", "json"],
        // Spans leave in batches every 100 ms instead of every 5 s.
        &[("OTEL_BSP_SCHEDULE_DELAY", "100"), ("RUST_LOG", "info")],
    );
    let jin = sign_in(&format!("http://{}", server.addr), "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    jin.play(&game.game_id, 1, "E5").await.expect("legal");

    let mut spans = Vec::new();
    for _ in 0..100 {
        spans = collector.0.lock().expect("not poisoned").clone();
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        if names.contains(&"ttakji.v1.GameService/PlayMove")
            && names.contains(&"ttakji.internal.v1.AuthorityService/SubmitAction")
            && names.contains(&"ttakji.internal.v1.AuthorityService/CreateGame")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let named = |name: &str| -> Received {
        spans
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .unwrap_or_else(|| {
                let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
                panic!("no span {name} among {names:?}")
            })
    };
    let play = named("ttakji.v1.GameService/PlayMove");
    assert_eq!(play.service, "ttakji", "the process's service.name");
    // SPAN_KIND_SERVER
    assert_eq!(play.kind, 2);
    assert_eq!(play.attribute("rpc.system"), Some("grpc"));
    assert_eq!(play.attribute("rpc.service"), Some("ttakji.v1.GameService"));
    assert_eq!(play.attribute("rpc.method"), Some("PlayMove"));
    assert_eq!(play.attribute("rpc.grpc.status_code"), Some("0"));
    assert!(
        play.attribute("enduser.id")
            .is_some_and(|id| !id.is_empty()),
        "{play:?}"
    );
    let submit = named("ttakji.internal.v1.AuthorityService/SubmitAction");
    assert_eq!(
        submit.trace_id, play.trace_id,
        "the authority's part of the move is in the move's trace"
    );

    // The authority's log line for the new game is inside the trace of
    // the call that created it, and says so.
    let created = named("ttakji.internal.v1.AuthorityService/CreateGame");
    let lines = log.lock().expect("not poisoned").clone();
    let mut joined = false;
    for line in &lines {
        let entry: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}"));
        assert!(
            entry["timestamp"].is_string() && entry["level"].is_string(),
            "{line}"
        );
        if let Some(fields) = entry["fields"].as_object() {
            for (key, value) in fields {
                let shown = value.as_str().unwrap_or_default();
                assert!(
                    !shown.starts_with("Some(") && !shown.starts_with('"'),
                    "{key} is logged in Rust's Debug form: {line}"
                );
            }
        }
        if entry["message"] == "game created" {
            assert_eq!(entry["fields"]["game_id"], game.game_id.as_str(), "{line}");
            assert_eq!(
                entry["trace_id"].as_str(),
                Some(created.trace_id.as_str()),
                "{line}"
            );
            assert!(
                entry["span_id"].as_str().is_some_and(|id| id.len() == 16),
                "{line}"
            );
            joined = true;
        }
    }
    assert!(joined, "no 'game created' line in {lines:#?}");
    server.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_page_passes_promtool_and_answers_head_and_get() {
    let (server, _log) = serve_logging(&[], &[("RUST_LOG", "warn")]);
    let metrics = server.listener("metrics");
    let jin = sign_in(&format!("http://{}", server.addr), "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    jin.play(&game.game_id, 1, "E5").await.expect("legal");
    let refused = jin.play(&game.game_id, 3, "E5").await;
    assert!(refused.is_err(), "a move on a stone is refused");

    let got = http(
        metrics,
        "GET /metrics HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n",
    )
    .await;
    let (head, page) = got.split_once("\r\n\r\n").expect("headers and a body");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    for series in [
        "rpc_server_calls_total{service=\"ttakji.v1.GameService\",method=\"PlayMove\",code=\"OK\"} 1",
        "rpc_server_call_duration_seconds_count{service=\"ttakji.v1.GameService\",method=\"PlayMove\"}",
        "ttakji_moves_accepted_total",
    ] {
        assert!(page.contains(series), "no {series} in\n{page}");
    }
    for line in page.lines().filter(|l| l.starts_with("# TYPE ")) {
        let name = line.split(' ').nth(2).expect("a name");
        assert!(
            page.contains(&format!("# HELP {name} ")),
            "{name} has no help"
        );
    }
    if let Err(complaints) = promtool_check(page) {
        panic!("promtool check metrics: {complaints}\n{page}");
    }

    let head_only = http(
        metrics,
        "HEAD /metrics HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n",
    )
    .await;
    let (head, body) = head_only.split_once("\r\n\r\n").expect("headers");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(body.is_empty(), "HEAD has no body: {body:?}");
    let elsewhere = http(
        metrics,
        "GET /other HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n",
    )
    .await;
    assert!(elsewhere.starts_with("HTTP/1.1 404"), "{elsewhere}");
    server.kill();
}
