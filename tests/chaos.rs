//! A short chaos run: `ttakji loadtest --chaos` starts Redis and the four
//! services as processes on the tests' PostgreSQL, plays through two
//! gateways while an authority is killed, an authority is stopped, Redis is
//! killed and restarted and a gateway is killed, and checks every game's
//! history for linearizability. The longer run for operators is in
//! docs/operating.md.

mod support;

use std::process::{Command, Stdio};

use support::fresh_postgres;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_stay_linearizable_through_each_kind_of_fault_with_nothing_lost() {
    let database = fresh_postgres().await;
    let dir = std::env::temp_dir().join(format!("ttakji-chaos-{}", uuid::Uuid::new_v4().simple()));
    let run = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || {
            Command::new(env!("CARGO_BIN_EXE_ttakji"))
                .args([
                    "loadtest",
                    "--chaos",
                    "--database-url",
                    &database,
                    "--games",
                    "4",
                    "--duration",
                    "23",
                    "--warmup",
                    "1",
                    "--fault-every",
                    "5",
                    "--json",
                    "--history-dir",
                ])
                .arg(&dir)
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output()
                .expect("the load test runs")
        }
    })
    .await
    .expect("joined");
    assert!(run.status.success(), "the chaos run failed: {}", run.status);
    let report: serde_json::Value =
        serde_json::from_slice(&run.stdout).expect("the report is JSON");

    let faults: Vec<&str> = report["faults"]
        .as_array()
        .expect("faults")
        .iter()
        .filter_map(|f| f["what"].as_str())
        .collect();
    assert_eq!(
        faults,
        [
            "authority kill -9",
            "authority SIGSTOP",
            "Redis kill -9 and restart",
            "gateway kill -9"
        ],
        "{report:#}"
    );
    let histories = &report["histories"];
    let games = histories["games"].as_u64().expect("games");
    assert!(games >= 4, "{report:#}");
    assert!(
        report["moves"].as_u64().is_some_and(|m| m > 100),
        "the games were played: {report:#}"
    );
    assert_eq!(
        histories["linearizable"].as_u64(),
        Some(games),
        "games whose history no order explains: {:#}",
        histories["not_linearizable"]
    );
    assert_eq!(histories["lost_moves"].as_u64(), Some(0), "{report:#}");
    assert_eq!(
        histories["duplicated_games"].as_u64(),
        Some(0),
        "{report:#}"
    );
    assert_eq!(histories["unread_games"].as_u64(), Some(0), "{report:#}");
    // Every game moved again after every fault.
    for fault in report["faults"].as_array().expect("faults") {
        assert_eq!(fault["not_recovered"].as_u64(), Some(0), "{fault:#}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
