//! CPU time from the kernel's own counters (`/proc/<pid>/stat`): what the
//! load test reports of itself and of servers, and what the benchmarks
//! measure a process by.

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
}
