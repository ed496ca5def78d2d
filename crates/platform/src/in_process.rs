//! Calls between services that share a process (`ttakji serve`), without a
//! socket. A server whose address was marked by [`serve_here`] puts its
//! service, with the layers every call over the network passes (the
//! service key, spans and counts, the codes it answers), in a table of the
//! process when it starts serving, and takes it out when it stops. A client
//! made by [`crate::grpc::client`] for that address calls the service
//! directly while it is in the table, and over the network otherwise: the
//! same generated clients and servers, the same requests and answers, less
//! the loopback TCP, HTTP/2 framing and the wake-ups between them.
//!
//! Services in processes of their own never mark their addresses, and a
//! client of an address no server of this process serves keeps gRPC.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{LazyLock, PoisonError, RwLock};
use std::task::{Context, Poll};

/// A server's whole service, as a client in the same process calls it.
pub type LocalService = tower::util::BoxCloneSyncService<
    http::Request<tonic::body::Body>,
    http::Response<tonic::body::Body>,
    Infallible,
>;

/// What the table holds for an address.
enum Slot {
    /// Marked by [`serve_here`]; its server has not started, or stopped.
    Marked,
    /// Its server is serving: calls go straight to it.
    Serving(LocalService),
}

static TABLE: LazyLock<RwLock<HashMap<SocketAddr, Slot>>> = LazyLock::new(RwLock::default);

/// Marks `addr` as the address of a server of this process whose calls
/// from this process go straight to it once it serves.
pub fn serve_here(addr: SocketAddr) {
    TABLE
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(addr)
        .or_insert(Slot::Marked);
}

/// While it lives, calls from this process to its address reach `service`
/// directly; made by [`serving`].
#[derive(Debug)]
pub struct Serving {
    addr: SocketAddr,
}

/// Puts `service` in the table for `addr` when `addr` was marked by
/// [`serve_here`]; the answer keeps it there until it is dropped.
pub fn serving(addr: SocketAddr, service: LocalService) -> Option<Serving> {
    let mut table = TABLE.write().unwrap_or_else(PoisonError::into_inner);
    let slot = table.get_mut(&addr)?;
    *slot = Slot::Serving(service);
    Some(Serving { addr })
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(slot) = TABLE
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&self.addr)
        {
            *slot = Slot::Marked;
        }
    }
}

/// The service serving `addr` in this process, if one is.
pub(crate) fn serving_at(addr: SocketAddr) -> Option<LocalService> {
    match TABLE
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&addr)
    {
        Some(Slot::Serving(service)) => Some(service.clone()),
        _ => None,
    }
}

/// The socket address of a URL such as `http://127.0.0.1:50052`: only
/// addresses written as IP and port can be served here.
fn address_of(url: &str) -> Option<SocketAddr> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))?;
    rest.trim_end_matches('/').parse().ok()
}

/// A channel to the server at a URL that calls it in this process while it
/// serves here, and through `channel` otherwise. Each call chooses as it
/// gets ready.
#[derive(Clone, Debug)]
pub struct Transport {
    addr: Option<SocketAddr>,
    channel: tonic::transport::Channel,
    chosen: Option<LocalService>,
}

impl Transport {
    /// Calls `url` through `channel` unless its server serves in this
    /// process.
    #[must_use]
    pub fn new(url: &str, channel: tonic::transport::Channel) -> Transport {
        Transport {
            addr: address_of(url),
            channel,
            chosen: None,
        }
    }
}

impl tower::Service<http::Request<tonic::body::Body>> for Transport {
    type Response = http::Response<tonic::body::Body>;
    type Error = tonic::codegen::StdError;
    type Future = futures_util::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.chosen = self.addr.and_then(serving_at);
        match &mut self.chosen {
            Some(local) => local.poll_ready(cx).map_err(|never| match never {}),
            None => tower::Service::<http::Request<tonic::body::Body>>::poll_ready(
                &mut self.channel,
                cx,
            )
            .map_err(Into::into),
        }
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        use futures_util::FutureExt as _;
        match self.chosen.take() {
            Some(mut local) => local
                .call(request)
                .map(|answered| answered.map_err(|never| match never {}))
                .boxed(),
            None => self
                .channel
                .call(request)
                .map(|r| r.map_err(Into::into))
                .boxed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ip_and_port_urls_can_be_served_here() {
        assert_eq!(
            address_of("http://127.0.0.1:50052"),
            Some(SocketAddr::from(([127, 0, 0, 1], 50052)))
        );
        assert_eq!(
            address_of("http://[::1]:9/"),
            Some(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 9)))
        );
        assert_eq!(address_of("http://authority:50052"), None);
        assert_eq!(address_of("unix:/run/ttakji.sock"), None);
    }

    #[test]
    fn a_server_is_called_here_only_while_marked_and_serving() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 1));
        let service = || {
            LocalService::new(tower::service_fn(|_| async {
                Ok::<_, Infallible>(http::Response::new(tonic::body::Body::empty()))
            }))
        };
        assert!(serving(addr, service()).is_none(), "not marked");
        assert!(serving_at(addr).is_none());
        serve_here(addr);
        assert!(serving_at(addr).is_none(), "marked, not yet serving");
        let held = serving(addr, service()).expect("marked");
        assert!(serving_at(addr).is_some());
        drop(held);
        assert!(serving_at(addr).is_none(), "stopped");
    }
}
