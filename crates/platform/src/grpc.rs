//! gRPC plumbing every service shares: server spans joined to the caller's
//! trace, a client interceptor that passes the trace on, error counting by
//! code, and the size limit reported as a bad argument.

use tonic::{Request, Status};

/// The longest id a client may send; ours are 32 hex digits.
pub const MAX_ID_LEN: usize = 64;

/// Checks an id from the wire (a game, a user, a ticket): 1 to
/// [`MAX_ID_LEN`] letters, digits or `-`. INVALID_ARGUMENT names `field`.
///
/// # Errors
/// When the id is empty, too long or holds other characters.
pub fn id<'a>(value: &'a str, field: &str) -> Result<&'a str, Status> {
    if value.is_empty() {
        return Err(Status::invalid_argument(format!("{field} is empty")));
    }
    if value.len() > MAX_ID_LEN
        || !value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(Status::invalid_argument(format!(
            "{field} {:?} is not an id",
            value.chars().take(80).collect::<String>()
        )));
    }
    Ok(value)
}

/// The span of one incoming gRPC request, a child of the caller's trace.
/// Pass to `tonic::transport::Server::builder().trace_fn(..)`.
#[must_use]
pub fn server_span(request: &http::Request<()>) -> tracing::Span {
    let span = tracing::info_span!(
        "grpc.request",
        otel.kind = "server",
        rpc.method = %request.uri().path(),
    );
    crate::telemetry::set_parent_from(&span, &crate::telemetry::HeaderExtractor(request.headers()));
    span
}

/// A client interceptor that writes the current trace context into every
/// outgoing request, so the callee's spans join the caller's trace.
#[derive(Debug, Clone, Copy, Default)]
pub struct PropagateTrace;

impl tonic::service::Interceptor for PropagateTrace {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        crate::telemetry::inject_into_metadata(request.metadata_mut());
        Ok(request)
    }
}

/// Counts a handler's outcome: `grpc_errors_total{method, code}` for errors.
/// Returns the result unchanged.
pub fn observe<T>(method: &'static str, result: Result<T, Status>) -> Result<T, Status> {
    if let Err(status) = &result {
        metrics::counter!("grpc_errors_total", "method" => method, "code" => code_name(status.code()))
            .increment(1);
        tracing::debug!(method, code = ?status.code(), message = status.message(), "request refused");
    }
    result
}

/// The gRPC name of a status code, as dashboards show it.
#[must_use]
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Rewrites tonic's answer to a message over the size limit (OUT_OF_RANGE,
/// sent before any handler runs) as INVALID_ARGUMENT: for a client, an
/// oversized request is a malformed one. Our handlers never answer
/// OUT_OF_RANGE themselves, so nothing else is touched.
pub fn oversized_is_invalid_argument<B>(mut response: http::Response<B>) -> http::Response<B> {
    let out_of_range = http::HeaderValue::from_static("11");
    if response.headers().get("grpc-status") == Some(&out_of_range) {
        metrics::counter!("grpc_errors_total", "method" => "any", "code" => "INVALID_ARGUMENT")
            .increment(1);
        response
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("3"));
    }
    response
}

/// The connections a gRPC server accepts on `listener`, with Nagle's
/// algorithm off: small frames (a move, an event on a stream) go out at
/// once instead of waiting up to 40 ms for the peer's delayed ACK.
pub fn incoming(
    listener: tokio::net::TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt as _;
    tokio_stream::wrappers::TcpListenerStream::new(listener).map(|accepted| {
        if let Ok(stream) = &accepted {
            let _ = stream.set_nodelay(true);
        }
        accepted
    })
}
