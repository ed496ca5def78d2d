//! A throwaway PostgreSQL cluster: `initdb` in a temporary folder, then
//! `postgres` on loopback with trust authentication and no durability
//! (nothing here must survive a crash). PostgreSQL refuses to run as root,
//! so as root both run as the `postgres` user.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::supervisor::{Supervised, as_user, run, server_folder};
use crate::{READY_WITHIN, Server};

/// The user that owns the cluster when the tests run as root.
const USER: &str = "postgres";

/// Starts a new cluster on `port` and waits until it accepts connections.
pub(crate) fn start(port: u16) -> Result<Server, String> {
    let bin = binaries();
    let folder = server_folder("postgres", Some(USER))?;
    let data = folder.join("data");
    let initdb = run(as_user(Some(USER), &bin.join("initdb"))
        .arg("--pgdata")
        .arg(&data)
        .args([
            "--username",
            USER,
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-sync",
        ]));
    if let Err(failure) = initdb {
        let _ = std::fs::remove_dir_all(&folder);
        return Err(failure);
    }
    let mut args: Vec<OsString> = vec!["-D".into(), data.clone().into(), "-k".into()];
    args.push(folder.clone().into());
    for (name, value) in [
        ("port", port.to_string()),
        ("listen_addresses", "127.0.0.1".to_owned()),
        ("max_connections", "200".to_owned()),
        ("fsync", "off".to_owned()),
        ("synchronous_commit", "off".to_owned()),
        ("full_page_writes", "off".to_owned()),
    ] {
        args.push("-c".into());
        args.push(format!("{name}={value}").into());
    }
    // Counts every statement per database, for tests that bound the round
    // trips a call makes (`CREATE EXTENSION pg_stat_statements` in theirs).
    if bin.join("../lib/pg_stat_statements.so").exists() {
        args.push("-c".into());
        args.push("shared_preload_libraries=pg_stat_statements".into());
    }
    let mut server = Supervised::start(
        &folder,
        Some(USER),
        // An immediate stop: a smart one would wait for clients to leave.
        "QUIT",
        &bin.join("postgres"),
        &args,
    )?;
    // postmaster.pid says "ready" once this server listens on its port; it
    // exits instead when the port is taken.
    server.wait_until_ready(
        &format!("postgres on port {port}"),
        READY_WITHIN,
        |server| {
            let status = std::fs::read_to_string(data.join("postmaster.pid")).unwrap_or_default();
            is_ready(&status, server.pid(), port)
        },
    )?;
    Ok(Server {
        url: format!("postgres://{USER}@127.0.0.1:{port}/postgres"),
        _supervised: Some(server),
    })
}

/// Where `initdb` and `postgres` are: the newest
/// `/usr/lib/postgresql/<version>/bin` (Debian and Ubuntu keep them off the
/// `PATH`), else wherever the `PATH` finds them.
fn binaries() -> PathBuf {
    let newest = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .max();
    newest.map_or_else(PathBuf::new, |(_, bin)| bin)
}

/// Whether a `postmaster.pid` says that server `pid` accepts connections
/// on `port`: its lines are the pid, the data folder, the start time, the
/// port, the socket folder, the listen address, the shared memory key and
/// the status.
fn is_ready(postmaster_pid: &str, pid: u32, port: u16) -> bool {
    let lines: Vec<&str> = postmaster_pid.lines().map(str::trim).collect();
    lines.first() == Some(&pid.to_string().as_str())
        && lines.get(3) == Some(&port.to_string().as_str())
        && lines.get(7) == Some(&"ready")
}

#[cfg(test)]
mod tests {
    use super::*;

    const READY: &str =
        "4242\n/tmp/x/data\n1764580000\n6543\n/tmp/x\n127.0.0.1\n  1234567         3\nready   \n";

    #[test]
    fn a_cluster_is_ready_when_its_own_postmaster_reports_ready_on_its_port() {
        assert!(is_ready(READY, 4242, 6543));
        assert!(!is_ready(READY, 4243, 6543), "another server's file");
        assert!(!is_ready(READY, 4242, 6544), "another port");
        assert!(!is_ready(&READY.replace("ready", "starting"), 4242, 6543));
        assert!(!is_ready("", 4242, 6543));
    }
}
