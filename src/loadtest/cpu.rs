//! The CPU the load test and the server processes it is told of used while
//! playing, so a run says whether the load test itself was the limit and
//! what a move cost the server.

use ttakji::cpu::seconds;

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
