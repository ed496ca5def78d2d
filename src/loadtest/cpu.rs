//! CPU time from the kernel's own counters (`/proc/<pid>/stat`): the load
//! test's, and that of the server processes it is told of, so a run says
//! whether the load test itself was the limit and what a move cost the
//! server.

/// Linux counts CPU time in ticks of 1/100 s (`USER_HZ`, the same on every
/// architecture's ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// The user and system CPU time, in seconds, that process `pid` (this one
/// when `None`) and every thread of it have used so far; `None` when the
/// process is gone or not readable.
pub fn seconds(pid: Option<u32>) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_owned(),
    };
    let stat = std::fs::read_to_string(path).ok()?;
    ticks(&stat).map(|t| t as f64 / TICKS_PER_SECOND)
}

/// utime + stime from a `stat` line: fields 14 and 15, counted after the
/// command name, which is in parentheses and may hold spaces.
fn ticks(stat: &str) -> Option<u64> {
    let (_, after) = stat.rsplit_once(')')?;
    let mut fields = after.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// CPU seconds of this process and of the server processes, read at the
/// start of the playing.
#[derive(Debug, Clone)]
pub struct Since {
    own: Option<f64>,
    servers: Vec<(u32, Option<f64>)>,
}

/// What a run cost in CPU.
#[derive(Debug, Clone, Default)]
pub struct Used {
    /// The load test's own CPU seconds.
    pub own: Option<f64>,
    /// The server processes' CPU seconds, summed; `None` when none was
    /// named or one could not be read at both ends.
    pub servers: Option<f64>,
    /// The server processes named.
    pub pids: Vec<u32>,
}

impl Since {
    /// Reads the counters now.
    pub fn now(server_pids: &[u32]) -> Since {
        Since {
            own: seconds(None),
            servers: server_pids.iter().map(|&p| (p, seconds(Some(p)))).collect(),
        }
    }

    /// The CPU used since [`Since::now`].
    pub fn used(&self) -> Used {
        let own = seconds(None).zip(self.own).map(|(now, then)| now - then);
        let servers = if self.servers.is_empty() {
            None
        } else {
            self.servers
                .iter()
                .map(|&(pid, then)| Some(seconds(Some(pid))? - then?))
                .sum()
        };
        Used {
            own,
            servers,
            pids: self.servers.iter().map(|(p, _)| *p).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_user_and_system_time_after_a_command_name_with_spaces() {
        let line = "4242 (tokio (worker) 1) S 1 4242 4242 0 -1 4194560 \
                    2001 0 0 0 1234 56 0 0 20 0 9 0 100 0 0";
        assert_eq!(ticks(line), Some(1234 + 56));
        assert_eq!(ticks("4242 (cut short) S 1"), None);
    }

    #[test]
    fn this_process_uses_cpu_and_a_missing_one_reads_as_none() {
        let before = Since::now(&[u32::MAX]);
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(50) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let used = before.used();
        assert!(used.own.is_some_and(|s| s >= 0.0));
        assert_eq!(used.servers, None, "no such process");
        assert_eq!(used.pids, vec![u32::MAX]);
    }
}
