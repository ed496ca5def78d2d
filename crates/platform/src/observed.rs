//! The one layer every gRPC server wears: each call gets a span named after
//! its RPC (`ttakji.v1.GameService/PlayMove`) with OpenTelemetry's `rpc.*`
//! attributes, joined to the caller's trace, and is counted and timed by
//! service, method and status code when it ends. No handler measures itself.
//!
//! The status is the one the client reads: from the answer's headers for a
//! refusal, from its trailers for a call that ran, `CANCELLED` for an
//! answer dropped before its end (a client that hung up). Only methods of
//! the compiled contracts (ours, health, reflection) are named; any other
//! path is [`Rpc::UNKNOWN`], so a client's made-up names never become
//! labels.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};
use std::time::Instant;

use http_body::Frame;
use prost::Message as _;
use tracing::Instrument as _;

use crate::refusal::code_name;

/// The calls a server answers, spanned, counted and timed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObservedLayer;

impl<S> tower::Layer<S> for ObservedLayer {
    type Service = Observed<S>;
    fn layer(&self, inner: S) -> Observed<S> {
        Observed { inner }
    }
}

/// See [`ObservedLayer`].
#[derive(Debug, Clone)]
pub struct Observed<S> {
    inner: S,
}

/// The names of one call: `service` is the full name of the gRPC service
/// (`ttakji.v1.GameService`), `method` the method's (`PlayMove`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rpc {
    pub service: &'static str,
    pub method: &'static str,
}

impl Rpc {
    /// What a path that names no known method is counted and spanned as.
    pub const UNKNOWN: Rpc = Rpc {
        service: "unknown",
        method: "unknown",
    };

    /// The RPC a request path names: a method of a contract the servers
    /// know, or [`Rpc::UNKNOWN`].
    #[must_use]
    pub fn of_path(path: &str) -> Rpc {
        path.strip_prefix('/')
            .and_then(|name| KNOWN.get(name))
            .copied()
            .unwrap_or(Rpc::UNKNOWN)
    }
}

impl std::fmt::Display for Rpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.service, self.method)
    }
}

/// Every method of the compiled contracts, by `service/method`, read once
/// from their descriptors: ours, gRPC health and reflection.
static KNOWN: LazyLock<HashMap<String, Rpc>> = LazyLock::new(|| {
    let sets = [
        ttakji_proto::FILE_DESCRIPTOR_SET,
        tonic_health::pb::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
    ];
    let mut known = HashMap::new();
    for bytes in sets {
        // Compiled into the binary, so a set always decodes; were one not
        // to, its calls would be named `unknown`, never refused.
        let Ok(set) = prost_types::FileDescriptorSet::decode(bytes) else {
            continue;
        };
        for file in set.file {
            let package = file.package().to_owned();
            for service in &file.service {
                let full: &'static str =
                    Box::leak(format!("{package}.{}", service.name()).into_boxed_str());
                for method in &service.method {
                    let method: &'static str = Box::leak(method.name().to_owned().into_boxed_str());
                    let rpc = Rpc {
                        service: full,
                        method,
                    };
                    known.insert(rpc.to_string(), rpc);
                }
            }
        }
    }
    known
});

/// The span of a call: named `service/method` for the trace backend, a
/// child of the caller's trace context, with the `rpc.*` attributes and
/// room for the caller (`enduser.id`), the status, and the game, player
/// and move a call on the move path names ([`record_move`]).
fn span_of(rpc: Rpc, headers: &http::HeaderMap) -> tracing::Span {
    let span = tracing::info_span!(
        "rpc",
        otel.name = %rpc,
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        rpc.system = "grpc",
        rpc.service = rpc.service,
        rpc.method = rpc.method,
        rpc.grpc.status_code = tracing::field::Empty,
        enduser.id = tracing::field::Empty,
        game_id = tracing::field::Empty,
        user_id = tracing::field::Empty,
        move_number = tracing::field::Empty,
    );
    crate::telemetry::set_parent_from(&span, &crate::telemetry::HeaderExtractor(headers));
    span
}

/// Names the game, the player (when the call names one) and the move
/// number on the current call's span. The handlers of moves and passes,
/// the calls a game makes most, record their ids here instead of opening
/// a span of their own: it would last exactly as long as the call's, and
/// each span is a share of a move's CPU.
pub fn record_move(game_id: &str, user_id: Option<&str>, move_number: u32) {
    let call = tracing::Span::current();
    call.record("game_id", game_id);
    if let Some(user_id) = user_id {
        call.record("user_id", user_id);
    }
    call.record("move_number", move_number);
}

impl<S, B> tower::Service<http::Request<B>> for Observed<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, S::Error>> + Send + 'static>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let rpc = Rpc::of_path(request.uri().path());
        let span = span_of(rpc, request.headers());
        let ending = Ending {
            rpc,
            span: span.clone(),
            started: Instant::now(),
            done: false,
        };
        let answer = span.in_scope(|| self.inner.call(request));
        Box::pin(
            async move {
                let response = answer.await?;
                let mut ending = ending;
                // A refusal comes as headers alone (trailers-only).
                if let Some(code) = grpc_status(response.headers()) {
                    ending.end(code);
                }
                Ok(response.map(|body| tonic::body::Body::new(ObservedBody { body, ending })))
            }
            .instrument(span),
        )
    }
}

/// The status code in `grpc-status`, if there is one.
fn grpc_status(headers: &http::HeaderMap) -> Option<tonic::Code> {
    headers
        .get("grpc-status")
        .map(|v| tonic::Code::from_bytes(v.as_bytes()))
}

/// What is left to do when a call ends: record its status on its span,
/// count it and time it. Done once, when the status is known, or on drop.
#[derive(Debug)]
struct Ending {
    rpc: Rpc,
    span: tracing::Span,
    started: Instant,
    done: bool,
}

impl Ending {
    fn end(&mut self, code: tonic::Code) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let Rpc { service, method } = self.rpc;
        let name = code_name(code);
        self.span.record("rpc.grpc.status_code", code as i32);
        if server_fault(code) {
            self.span.record("otel.status_code", "ERROR");
        }
        metrics::counter!(
            "rpc_server_calls_total",
            "service" => service,
            "method" => method,
            "code" => name,
        )
        .increment(1);
        metrics::histogram!(
            "rpc_server_call_duration_seconds",
            "service" => service,
            "method" => method,
        )
        .record(self.started.elapsed().as_secs_f64());
        if code != tonic::Code::Ok {
            self.span
                .in_scope(|| tracing::debug!(code = name, "call refused"));
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        // Dropped before a status: the client went away mid-answer.
        self.end(tonic::Code::Cancelled);
    }
}

/// The codes OpenTelemetry marks a server span failed for: the server's
/// faults, not the client's.
fn server_fault(code: tonic::Code) -> bool {
    use tonic::Code;
    matches!(
        code,
        Code::Unknown
            | Code::DeadlineExceeded
            | Code::Unimplemented
            | Code::Internal
            | Code::Unavailable
            | Code::DataLoss
    )
}

/// An answer's body that ends its call when the trailers pass (or when the
/// body ends without any), and is polled inside the call's span, so what a
/// stream does is logged and traced as part of its call.
struct ObservedBody {
    body: tonic::body::Body,
    ending: Ending,
}

impl http_body::Body for ObservedBody {
    type Data = bytes::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let span = this.ending.span.clone();
        let _entered = span.enter();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(code) = frame.trailers_ref().and_then(grpc_status) {
                    this.ending.end(code);
                }
            }
            Poll::Ready(Some(Err(status))) => this.ending.end(status.code()),
            Poll::Ready(None) => this.ending.end(tonic::Code::Ok),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for ObservedBody {
    fn drop(&mut self) {
        // A body with nothing left to send was read to its end even if no
        // one polled it; anything else was cut off (see `Ending`'s drop).
        if http_body::Body::is_end_stream(&self.body) {
            self.ending.end(tonic::Code::Ok);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rpc;

    #[test]
    fn methods_of_every_contract_are_named_and_others_are_not() {
        let play = Rpc::of_path("/ttakji.v1.GameService/PlayMove");
        assert_eq!(play.to_string(), "ttakji.v1.GameService/PlayMove");
        assert_eq!(
            (play.service, play.method),
            ("ttakji.v1.GameService", "PlayMove")
        );
        assert_ne!(Rpc::of_path("/grpc.health.v1.Health/Check"), Rpc::UNKNOWN);
        assert_ne!(
            Rpc::of_path("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"),
            Rpc::UNKNOWN
        );
        for made_up in [
            "/ttakji.v1.GameService/MadeUp",
            "/made.Up/PlayMove",
            "/ttakji.v1.GameService",
            "/",
            "",
        ] {
            assert_eq!(Rpc::of_path(made_up), Rpc::UNKNOWN, "{made_up}");
        }
    }
}
