//! Faults a load test injects on a schedule: a shell command run at each
//! interval, or a process the load test starts itself and, at each
//! interval, kills with SIGKILL and starts again.

use std::io;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;

/// How long a process the load test started is given to stop on SIGTERM
/// at the end of the run before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A command the load test keeps running: `sh -c COMMAND` in a process
/// group of its own, so that killing the group takes whatever the command
/// started too. Its standard output goes to the load test's standard error,
/// leaving standard output to the report.
#[derive(Debug)]
pub struct Restartable {
    command: String,
    child: Option<Child>,
}

fn spawn(command: &str) -> io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::from(io::stderr()))
        .spawn()
}

/// Sends `signal` to the process group led by `child` (and to the child
/// itself, should the group be gone).
fn signal_group(child: &mut Child, signal: &str) {
    let group = format!("-{}", child.id());
    let sent = Command::new("kill")
        .args(["-s", signal, "--", &group])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !sent && signal == "KILL" {
        let _ = child.kill();
    }
}

impl Restartable {
    /// Starts `command`.
    pub fn start(command: &str) -> anyhow::Result<Restartable> {
        let child = spawn(command).with_context(|| format!("starting {command:?}"))?;
        Ok(Restartable {
            command: command.to_owned(),
            child: Some(child),
        })
    }

    /// Kills the process group with SIGKILL and waits for the command.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal_group(&mut child, "KILL");
            let _ = child.wait();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to the command's process group.
    pub fn signal(&mut self, signal: &str) {
        if let Some(child) = self.child.as_mut() {
            signal_group(child, signal);
        }
    }

    /// Kills the command at once and starts it again.
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        self.child = Some(spawn(&self.command)?);
        Ok(())
    }

    /// Stops the command at the end of the run: SIGTERM, then SIGKILL
    /// after [`STOP_GRACE`].
    pub fn stop(&mut self) {
        let Some(child) = self.child.as_mut() else {
            return;
        };
        signal_group(child, "TERM");
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                self.child = None;
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
    }
}

impl Drop for Restartable {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `sh -c COMMAND` to its end (its output on the load test's
/// standard error).
pub fn run_command(command: &str) -> io::Result<ExitStatus> {
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(io::stderr()))
        .status()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restarted_command_is_a_new_process_and_its_children_die_with_it() {
        let dir =
            std::env::temp_dir().join(format!("ttakji-loadtest-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let pids = dir.join("pids");
        // A shell that starts a child of its own and records both.
        let command = format!("sleep 60 & echo $$ $! >> {}; wait", pids.display());
        let mut process = Restartable::start(&command).expect("starts");
        let read = || -> Vec<Vec<String>> {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let text = std::fs::read_to_string(&pids).unwrap_or_default();
                if text.ends_with('\n') || Instant::now() > deadline {
                    return text
                        .lines()
                        .map(|l| l.split(' ').map(str::to_owned).collect())
                        .collect();
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        let first = read();
        process.restart().expect("restarts");
        let deadline = Instant::now() + Duration::from_secs(5);
        while read().len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let both = read();
        assert_eq!(both.len(), 2, "{both:?}");
        assert_ne!(first[0], both[1], "a new process");
        // Alive: listed and not a zombie waiting to be reaped.
        let alive = |pid: &str| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')))
        };
        // The first shell's own child went with it.
        let old_child = &both[0][1];
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(old_child) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(old_child), "the killed command's child lives on");
        process.stop();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
