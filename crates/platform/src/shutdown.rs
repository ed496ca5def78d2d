//! One shutdown signal that fans out to every task of a service.

use tokio::sync::watch;

/// The sending side: trigger it once and every [`Shutdown`] clone wakes.
#[derive(Debug, Clone)]
pub struct ShutdownTrigger(watch::Sender<bool>);

/// The receiving side, cloned into every task that must stop.
#[derive(Debug, Clone)]
pub struct Shutdown(watch::Receiver<bool>);

/// A new signal pair.
#[must_use]
pub fn channel() -> (ShutdownTrigger, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (ShutdownTrigger(tx), Shutdown(rx))
}

impl ShutdownTrigger {
    /// Tells every task to stop.
    pub fn trigger(&self) {
        self.0.send_replace(true);
    }

    /// A receiver for a new task.
    #[must_use]
    pub fn subscribe(&self) -> Shutdown {
        Shutdown(self.0.subscribe())
    }
}

impl Shutdown {
    /// Completes once the signal has been triggered (or its trigger dropped).
    pub async fn wait(&mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }

    /// Whether the signal has been triggered.
    #[must_use]
    pub fn is_triggered(&self) -> bool {
        *self.0.borrow()
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
