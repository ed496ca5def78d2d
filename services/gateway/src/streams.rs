//! The tasks behind the gateway's server streams (a game's events, a queue
//! ticket, a challenge, a rematch). Each is tracked by the shutdown signal,
//! so the gateway waits for it, and it ends at the first of: its work is
//! done, its client has gone away, the gateway is shutting down.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::mpsc;
use tokio_stream::StreamExt as _;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use ttakji_platform::shutdown::Shutdown;

/// A server stream as the handlers return it.
pub type Stream<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send>>;

/// Where a stream's task sends what its client reads. Messages travel
/// boxed: a channel holds a block of slots from the start, and a game
/// event is most of a kilobyte, so a slot of one pointer keeps an idle
/// watcher small.
#[derive(Debug)]
pub struct Sender<T> {
    inner: mpsc::Sender<Box<Result<T, Status>>>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender {
            inner: self.inner.clone(),
        }
    }
}

/// The client has gone away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone;

impl<T> Sender<T> {
    /// Sends one message, waiting while the client's buffer is full.
    ///
    /// # Errors
    /// When the client has gone away.
    pub async fn send(&self, message: Result<T, Status>) -> Result<(), Gone> {
        self.inner.send(Box::new(message)).await.map_err(|_| Gone)
    }

    /// Completes when the client has gone away.
    pub async fn closed(&self) {
        self.inner.closed().await;
    }
}

/// A channel of up to `buffer` unread messages and the stream that reads it.
pub fn channel<T: Send + 'static>(buffer: usize) -> (Sender<T>, Stream<T>) {
    let (tx, rx) = mpsc::channel(buffer);
    (
        Sender { inner: tx },
        Box::pin(ReceiverStream::new(rx).map(|boxed| *boxed)),
    )
}

/// Runs `work` until it ends, `client` has gone away or `shutdown` fires,
/// whichever comes first; `work` is dropped where it stands in the last two
/// cases (a send waiting on a slow reader, a call to another service).
pub async fn until_done<T>(client: &Sender<T>, mut shutdown: Shutdown, work: impl Future) {
    tokio::select! {
        _ = work => {}
        () = client.closed() => {}
        () = shutdown.wait() => {}
    }
}

/// A stream of up to `buffer` unread messages fed by `feed`, which runs as
/// a tracked task (see [`until_done`]); the stream ends when `feed` does.
pub fn spawn<T, F, W>(shutdown: &Shutdown, buffer: usize, feed: F) -> Stream<T>
where
    T: Send + 'static,
    F: FnOnce(Sender<T>) -> W,
    W: Future<Output = ()> + Send + 'static,
{
    let (tx, stream) = channel(buffer);
    let client = tx.clone();
    let work = feed(tx);
    let signal = shutdown.clone();
    shutdown.spawn(async move { until_done(&client, signal, work).await });
    stream
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio_stream::StreamExt as _;

    #[tokio::test(start_paused = true)]
    async fn a_stream_ends_when_its_work_is_done() {
        let (trigger, shutdown) = ttakji_platform::shutdown::channel();
        let mut stream = super::spawn(&shutdown, 1, |tx| async move {
            let _ = tx.send(Ok(7)).await;
        });
        assert_eq!(stream.next().await.map(Result::ok), Some(Some(7)));
        assert!(stream.next().await.is_none(), "the stream stays open");
        assert_eq!(trigger.completed(Duration::from_secs(1)).await, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_ends_a_stream_whose_task_waits_on_a_slow_reader() {
        let (trigger, shutdown) = ttakji_platform::shutdown::channel();
        let mut stream = super::spawn(&shutdown, 1, |tx| async move {
            for n in 0.. {
                if tx.send(Ok(n)).await.is_err() {
                    break;
                }
            }
        });
        assert_eq!(stream.next().await.map(Result::ok), Some(Some(0)));
        // The task is now blocked on a full buffer; shutdown must still end it.
        assert_eq!(trigger.completed(Duration::from_secs(1)).await, 0);
        let rest: Vec<_> = stream.collect().await;
        assert!(rest.len() <= 1, "the task kept sending: {rest:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_ends_when_its_client_goes_away() {
        let (_trigger, shutdown) = ttakji_platform::shutdown::channel();
        let (alive, ended) = tokio::sync::oneshot::channel::<()>();
        let stream = super::spawn::<u32, _, _>(&shutdown, 1, |_tx| async move {
            let _alive = alive;
            std::future::pending::<()>().await;
        });
        drop(stream);
        let dropped = tokio::time::timeout(Duration::from_secs(1), ended).await;
        assert!(
            matches!(dropped, Ok(Err(_))),
            "the task outlived its client"
        );
        assert!(!shutdown.is_triggered());
    }
}
