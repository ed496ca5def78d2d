//! A server process that stops when the test process that started it ends.
//!
//! Statics are never dropped and `std::process::exit` or a kill skips
//! destructors, so the server cannot be stopped from a `Drop`. Instead it
//! runs under a small shell supervisor whose standard input is a pipe from
//! the test process. The kernel closes that pipe however the test process
//! ends; the supervisor then sends the server its stop signal, waits for it
//! to exit and removes the server's folder. Rust opens pipes close-on-exec,
//! so no other child of the test process holds the pipe open.

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The supervisor: `$1` the server's folder, `$2` its stop signal, the rest
/// the server's command line. It prints the server's process id, runs the
/// server with its output in `server.log`, and exits when the server does.
/// A watcher reads the pipe; at its end it stops the server and removes the
/// folder, killing the server outright if it has not stopped after 10 s.
/// The watcher ignores the signals a terminal or `timeout` sends to
/// the whole process group, so that it still cleans up after them.
const SUPERVISOR: &str = r#"
folder=$1; signal=$2; shift 2
exec 3<&0
"$@" </dev/null 3<&- >>"$folder/server.log" 2>&1 &
server=$!
echo "$server"
(
    trap '' HUP INT TERM
    cat >/dev/null
    kill -"$signal" "$server" 2>/dev/null
    waited=0
    while kill -0 "$server" 2>/dev/null && [ "$waited" -lt 200 ]; do
        # A zombie has exited: nobody may be left to reap it.
        state=$(sed 's/.*) //; s/ .*//' "/proc/$server/stat" 2>/dev/null)
        [ "$state" = Z ] && break
        waited=$((waited + 1))
        [ "$waited" -eq 100 ] && kill -KILL "$server" 2>/dev/null
        sleep 0.1
    done
    rm -rf "$folder"
) <&3 >/dev/null 2>&1 &
exec 3<&-
wait "$server"
"#;

/// A running server under its supervisor. Dropping it stops the server
/// too; a static one is stopped when the process ends.
#[derive(Debug)]
pub struct Supervised {
    pid: u32,
    folder: PathBuf,
    supervisor: Child,
    /// The write end of the supervisor's standard input.
    lifeline: Option<ChildStdin>,
}

/// Where a server keeps its files and log: a new folder under the system's
/// temporary folder, owned by `user` when one is given (and we are root).
///
/// # Errors
/// When the folder cannot be made or handed over.
pub fn server_folder(kind: &str, user: Option<&str>) -> Result<PathBuf, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let folder = std::env::temp_dir().join(format!(
        "ttakji-test-{kind}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    // A folder left by an earlier process with our id is stale.
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir(&folder).map_err(|e| format!("making {}: {e}", folder.display()))?;
    if let Some(user) = user.filter(|_| is_root()) {
        run(Command::new("chown").arg(format!("{user}:")).arg(&folder))?;
    }
    Ok(folder)
}

/// Whether this process runs as root, where PostgreSQL must be run as
/// another user.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

/// `command` as `user` when we are root (through `runuser`), else as we are.
pub fn as_user(user: Option<&str>, program: &Path) -> Command {
    match user.filter(|_| is_root()) {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--"]).arg(program);
            command
        }
        None => Command::new(program),
    }
}

/// Runs `command` to its end; its output is the error when it fails.
///
/// # Errors
/// When it cannot start or exits unsuccessfully.
pub fn run(command: &mut Command) -> Result<(), String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{command:?} did not start: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl Supervised {
    /// Starts `program` with `args` in `folder`, as `user` when we are root;
    /// `stop_signal` (`TERM`, `QUIT`) is what stops it at the end.
    ///
    /// # Errors
    /// When the supervisor cannot be started.
    pub fn start(
        folder: &Path,
        user: Option<&str>,
        stop_signal: &str,
        program: &Path,
        args: &[OsString],
    ) -> Result<Supervised, String> {
        let mut command = as_user(user, Path::new("sh"));
        command
            .args(["-c", SUPERVISOR, "sh"])
            .arg(folder)
            .arg(stop_signal)
            .arg(program)
            .args(args)
            .current_dir(folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut supervisor = command
            .spawn()
            .map_err(|e| format!("starting {}: {e}", program.display()))?;
        let lifeline = supervisor.stdin.take();
        let mut line = String::new();
        if let Some(stdout) = supervisor.stdout.take() {
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        let mut supervised = Supervised {
            pid: 0,
            folder: folder.to_owned(),
            supervisor,
            lifeline,
        };
        supervised.pid = line.trim().parse().map_err(|_| {
            format!(
                "{} did not start: {}",
                program.display(),
                supervised.log_tail()
            )
        })?;
        Ok(supervised)
    }

    /// The server's process id.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The server's folder.
    #[must_use]
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Whether the server has exited (say, because its port was taken).
    pub fn exited(&mut self) -> bool {
        !matches!(self.supervisor.try_wait(), Ok(None))
    }

    /// Waits until `ready` says this server (`what`) answers, for at most
    /// `within`.
    ///
    /// # Errors
    /// When the server exits first or `within` passes; with its log.
    pub fn wait_until_ready(
        &mut self,
        what: &str,
        within: Duration,
        mut ready: impl FnMut(&Supervised) -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            if self.exited() {
                return Err(format!("{what} exited: {}", self.log_tail()));
            }
            if ready(self) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{what} was not ready within {within:?}: {}",
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last lines the server wrote, for a failure's message.
    #[must_use]
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.folder.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        drop(self.lifeline.take());
        let _ = self.supervisor.wait();
    }
}
