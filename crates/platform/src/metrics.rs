//! The Prometheus endpoint: one recorder per process, and a `/metrics`
//! listener per service that renders it.

use std::net::SocketAddr;
use std::sync::OnceLock;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::shutdown::Shutdown;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first use. Latency histograms get
/// buckets from 0.5 ms to 10 s.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets(&[
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                10.0,
            ])
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed (tests embedding several
        // services): then this handle renders an empty page, never a panic.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Serves `GET /metrics` on `addr` until shutdown. Returns the bound address.
///
/// # Errors
/// When the address cannot be bound.
pub async fn serve(addr: SocketAddr, mut shutdown: Shutdown) -> std::io::Result<SocketAddr> {
    let handle = handle();
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    shutdown.clone().spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = shutdown.wait() => break,
                accepted = listener.accept() => accepted,
            };
            let Ok((mut stream, _)) = accepted else {
                continue;
            };
            tokio::spawn(async move {
                let mut buf = [0u8; 2048];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]);
                let (status, body) = if request.starts_with("GET /metrics") {
                    ("200 OK", handle.render())
                } else {
                    ("404 Not Found", "not found: try GET /metrics\n".to_owned())
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    Ok(bound)
}

/// Serves `/metrics` on `addr` if one is given (see [`serve`]); the
/// error names `service`.
///
/// # Errors
/// When the address cannot be bound.
pub async fn serve_if(
    addr: Option<SocketAddr>,
    shutdown: Shutdown,
    service: &str,
) -> anyhow::Result<Option<SocketAddr>> {
    match addr {
        Some(a) => serve(a, shutdown)
            .await
            .map(Some)
            .map_err(|e| anyhow::anyhow!("binding the {service}'s metrics to {a}: {e}")),
        None => Ok(None),
    }
}
