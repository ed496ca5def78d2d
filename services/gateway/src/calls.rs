//! Every call of the public API, seen from outside its handler: one span
//! per call (`call`, with the method and the caller's `user_id`) and the
//! count of refused calls, `grpc_errors_total{method, code}`, whoever
//! refused them (the token check, tonic reading the request, the handler).

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tonic::body::Body;
use tonic::server::NamedService;
use tracing::Instrument as _;
use ttakji_platform::grpc::code_name;

/// A public service whose calls are spanned and whose refusals are counted.
///
/// A call is refused when its answer starts with a status other than OK
/// (an error sent later on an open stream is not a refusal). OUT_OF_RANGE
/// is left out: that is tonic's answer to a request over the size limit,
/// which the server rewrites as INVALID_ARGUMENT and counts itself
/// (`ttakji_platform::grpc::oversized_is_invalid_argument`). A path that
/// names no method of the service is neither spanned nor counted, so a
/// client's made-up names never become labels.
#[derive(Debug, Clone)]
pub struct Observed<S> {
    inner: S,
}

impl<S> Observed<S> {
    /// `inner`, observed.
    pub fn new(inner: S) -> Self {
        Observed { inner }
    }
}

impl<S: NamedService> NamedService for Observed<S> {
    const NAME: &'static str = S::NAME;
}

/// Counts a refused call and says so in the log and on the call's span.
fn count_refusal(method: &'static str, status: &tonic::Status) {
    let code = code_name(status.code());
    metrics::counter!("grpc_errors_total", "method" => method, "code" => code).increment(1);
    tracing::Span::current().record("code", code);
    tracing::debug!(method, code = ?status.code(), message = status.message(), "request refused");
}

impl<S> tower::Service<http::Request<Body>> for Observed<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + NamedService
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The clone that was not made ready stays behind (tower's advice).
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let Some(method) = crate::api::method(S::NAME, request.uri().path()) else {
            return Box::pin(ready.call(request));
        };
        let span = tracing::info_span!(
            "call",
            method,
            user_id = tracing::field::Empty,
            code = tracing::field::Empty
        );
        let answer = span.in_scope(|| ready.call(request));
        Box::pin(
            async move {
                let response = answer.await?;
                if let Some(status) = tonic::Status::from_header_map(response.headers())
                    && !matches!(status.code(), tonic::Code::Ok | tonic::Code::OutOfRange)
                {
                    count_refusal(method, &status);
                }
                Ok(response)
            }
            .instrument(span),
        )
    }
}

#[cfg(test)]
mod tests {
    use metrics_exporter_prometheus::PrometheusBuilder;
    use tonic::Code;
    use tower::{Service as _, ServiceExt as _};

    use super::Observed;
    use crate::auth::Authenticated;
    use crate::auth::tests::{Handler, call_to, code_of, keys};

    /// Sends `requests` through an observed, authenticated stand-in that
    /// refuses with `refusal`, and returns their codes and the metrics page.
    async fn metrics_after(
        requests: Vec<http::Request<tonic::body::Body>>,
        refusal: Option<tonic::Status>,
    ) -> (Vec<tonic::Code>, String) {
        let mut answered = Vec::new();
        let recorder = PrometheusBuilder::new().build_recorder();
        let page = recorder.handle();
        let _local = metrics::set_default_local_recorder(&recorder);
        let handler = Handler::<false> {
            refusal,
            ..Handler::default()
        };
        let mut service = Observed::new(Authenticated::new(handler, keys()));
        for request in requests {
            let response = service
                .ready()
                .await
                .expect("ready")
                .call(request)
                .await
                .expect("infallible");
            answered.push(code_of(&response));
        }
        (answered, page.render())
    }

    fn counted(page: &str, method: &str, code: &str) -> Option<String> {
        page.lines()
            .find(|line| {
                line.starts_with("grpc_errors_total{")
                    && line.contains(&format!("method=\"{method}\""))
                    && line.contains(&format!("code=\"{code}\""))
            })
            .and_then(|line| line.rsplit(' ').next())
            .map(str::to_owned)
    }

    #[tokio::test]
    async fn a_call_refused_for_its_token_is_counted_once_with_its_code() {
        let (answered, page) =
            metrics_after(vec![call_to("/ttakji.v1.GameService/PlayMove", None)], None).await;
        assert_eq!(answered, [Code::Unauthenticated]);
        assert_eq!(
            counted(&page, "PlayMove", "UNAUTHENTICATED").as_deref(),
            Some("1"),
            "{page}"
        );
        assert_eq!(page.matches("grpc_errors_total{").count(), 1, "{page}");
    }

    #[tokio::test]
    async fn a_call_the_handler_refuses_is_counted_with_the_handlers_code() {
        let (token, _) = keys().issue("u1", "jin", true).expect("sign");
        let calls = (0..2)
            .map(|_| call_to("/ttakji.v1.GameService/PlayMove", Some(&token)))
            .collect();
        let (answered, page) =
            metrics_after(calls, Some(tonic::Status::permission_denied("not yours"))).await;
        assert_eq!(answered, [Code::PermissionDenied, Code::PermissionDenied]);
        assert_eq!(
            counted(&page, "PlayMove", "PERMISSION_DENIED").as_deref(),
            Some("2"),
            "{page}"
        );
    }

    #[tokio::test]
    async fn calls_that_succeed_are_not_counted() {
        let (token, _) = keys().issue("u1", "jin", true).expect("sign");
        let call = call_to("/ttakji.v1.GameService/PlayMove", Some(&token));
        let (answered, page) = metrics_after(vec![call], None).await;
        assert_eq!(answered, [Code::Ok]);
        assert!(!page.contains("grpc_errors_total{"), "{page}");
    }

    #[tokio::test]
    async fn a_made_up_method_is_answered_but_never_becomes_a_label() {
        let call = call_to("/ttakji.v1.GameService/NoSuchMethod", None);
        let refusal = tonic::Status::unimplemented("no such method");
        let (answered, page) = metrics_after(vec![call], Some(refusal)).await;
        assert_eq!(answered, [Code::Unimplemented]);
        assert!(!page.contains("grpc_errors_total{"), "{page}");
    }

    #[tokio::test]
    async fn an_oversized_request_is_left_for_the_server_to_count() {
        let (token, _) = keys().issue("u1", "jin", true).expect("sign");
        let call = call_to("/ttakji.v1.GameService/PlayMove", Some(&token));
        let refusal = tonic::Status::out_of_range("decoded message length too large");
        let (answered, page) = metrics_after(vec![call], Some(refusal)).await;
        assert_eq!(answered, [Code::OutOfRange]);
        assert!(!page.contains("grpc_errors_total{"), "{page}");
    }
}
