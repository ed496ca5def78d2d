//! Graceful shutdown in two halves, as in mini-redis: one signal that fans
//! out to every task of a service, and a completion that waits until every
//! task spawned through [`Shutdown::spawn`] has finished.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::task::TaskTracker;

/// The sending side: trigger it once and every [`Shutdown`] clone wakes;
/// then [`ShutdownTrigger::completed`] waits for the tracked tasks.
#[derive(Debug, Clone)]
pub struct ShutdownTrigger {
    signal: watch::Sender<bool>,
    tasks: TaskTracker,
}

/// The receiving side, cloned into every task that must stop. Tasks spawned
/// through it are tracked, so the service can wait for them.
#[derive(Debug, Clone)]
pub struct Shutdown {
    signal: watch::Receiver<bool>,
    tasks: TaskTracker,
}

/// A new signal pair.
#[must_use]
pub fn channel() -> (ShutdownTrigger, Shutdown) {
    let (signal, rx) = watch::channel(false);
    let tasks = TaskTracker::new();
    (
        ShutdownTrigger {
            signal,
            tasks: tasks.clone(),
        },
        Shutdown { signal: rx, tasks },
    )
}

impl ShutdownTrigger {
    /// Tells every task to stop.
    pub fn trigger(&self) {
        self.signal.send_replace(true);
    }

    /// A receiver for a new task.
    #[must_use]
    pub fn subscribe(&self) -> Shutdown {
        Shutdown {
            signal: self.signal.subscribe(),
            tasks: self.tasks.clone(),
        }
    }

    /// Triggers the signal, then waits until every tracked task has ended,
    /// or `within` has passed. Returns how many tasks were still running
    /// when it gave up (0 when all ended).
    pub async fn completed(&self, within: Duration) -> usize {
        self.trigger();
        self.tasks.close();
        match tokio::time::timeout(within, self.tasks.wait()).await {
            Ok(()) => 0,
            Err(_) => self.tasks.len(),
        }
    }
}

impl Shutdown {
    /// Completes once the signal has been triggered (or its trigger dropped).
    pub async fn wait(&mut self) {
        let _ = self.signal.wait_for(|stop| *stop).await;
    }

    /// Whether the signal has been triggered.
    #[must_use]
    pub fn is_triggered(&self) -> bool {
        *self.signal.borrow()
    }

    /// Spawns a task that shutdown waits for. The task must end on its own
    /// once the signal is triggered.
    pub fn spawn<F>(&self, task: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tasks.spawn(task)
    }

    /// Like [`Shutdown::spawn`] for blocking work on the blocking pool.
    pub fn spawn_blocking<F, T>(&self, work: F) -> tokio::task::JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.tasks.spawn_blocking(work)
    }
}

/// Completes on Ctrl-C or SIGTERM, whichever comes first.
pub async fn os_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn completion_waits_for_a_task_that_is_still_cleaning_up() {
        let (trigger, shutdown) = super::channel();
        let cleaned = Arc::new(AtomicBool::new(false));
        let flag = cleaned.clone();
        let mut signal = shutdown.clone();
        shutdown.spawn(async move {
            signal.wait().await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            flag.store(true, Ordering::SeqCst);
        });
        assert_eq!(trigger.completed(Duration::from_secs(10)).await, 0);
        assert!(
            cleaned.load(Ordering::SeqCst),
            "returned before the task ended"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn completion_gives_up_on_a_task_that_ignores_the_signal() {
        let (trigger, shutdown) = super::channel();
        shutdown.spawn(std::future::pending::<()>());
        assert_eq!(trigger.completed(Duration::from_secs(1)).await, 1);
    }
}
