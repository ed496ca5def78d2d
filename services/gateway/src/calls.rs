//! Every call of the public API as it comes in, before tonic reads the
//! request: the rate limits, the token check and the caller, who is put in
//! the request's extensions for the handler and on the call's span
//! (`enduser.id`). The span, the count and the timing of every call are the
//! server's ([`ttakji_platform::observed`]).

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tonic::body::Body;
use tonic::server::NamedService;
use ttakji_platform::auth::TokenKeys;

use crate::auth::{self, Caller};
use crate::limits::{Class, Limits};

/// A public service as clients reach it. Unless a method is open
/// ([`crate::api::OPEN`]) a call is refused as UNAUTHENTICATED without a
/// valid token, and with one the [`Caller`] goes in the request's
/// extensions for the handler. A path that names no method of the service
/// goes straight to it, to be answered UNIMPLEMENTED.
#[derive(Debug, Clone)]
pub struct Public<S> {
    inner: S,
    keys: TokenKeys,
    accounts: Option<crate::accounts::Known>,
    limits: Option<Limits>,
}

impl<S> Public<S> {
    /// `inner`, its tokens checked with `keys`.
    pub fn new(inner: S, keys: TokenKeys) -> Self {
        Public {
            inner,
            keys,
            accounts: None,
            limits: None,
        }
    }

    /// The same, refusing calls over the address's or the account's budget
    /// (RESOURCE_EXHAUSTED with a retry hint) before anything else.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// The same, also refusing a token whose account does not exist.
    #[must_use]
    pub fn with_accounts(mut self, accounts: crate::accounts::Known) -> Self {
        self.accounts = Some(accounts);
        self
    }
}

impl<S: NamedService> NamedService for Public<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> tower::Service<http::Request<Body>> for Public<S>
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

    fn call(&mut self, mut request: http::Request<Body>) -> Self::Future {
        // The clone that was not made ready stays behind (tower's advice).
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let path = request.uri().path();
        let Some(method) = crate::api::method(S::NAME, path) else {
            return Box::pin(ready.call(request));
        };
        // The address's budget is spent before the token is even read, so
        // a flood of bad tokens costs little; the account's after.
        let class = Class::of(method);
        let limits = self.limits.as_ref().and_then(|limits| {
            let addr = limits.client_address(&request);
            (!limits.is_exempt(addr)).then_some((limits, addr))
        });
        let over_address = limits.and_then(|(limits, addr)| {
            addr.and_then(|addr| limits.check_address(class, addr).err())
        });
        let checked = if let Some(over) = over_address {
            Err(over.status())
        } else if crate::api::is_open(path) {
            Ok(())
        } else {
            auth::authenticate(&self.keys, &mut request)
        };
        let caller = request
            .extensions()
            .get::<Caller>()
            .map(|c| c.user_id.clone());
        if let Some(user_id) = &caller {
            tracing::Span::current().record("enduser.id", user_id.as_str());
        }
        let checked = match (checked, limits, &caller) {
            (Ok(()), Some((limits, _)), Some(user_id)) => limits
                .check_account(class, user_id)
                .map_err(|over| over.status()),
            (checked, _, _) => checked,
        };
        let accounts = self.accounts.clone();
        Box::pin(async move {
            let checked = match (checked, accounts, caller) {
                (Ok(()), Some(accounts), Some(user_id)) => {
                    accounts.check(&user_id).await.map(|nickname| {
                        if let Some(caller) = request.extensions_mut().get_mut::<Caller>() {
                            caller.nickname = nickname;
                        }
                    })
                }
                (checked, _, _) => checked,
            };
            match checked {
                Ok(()) => ready.call(request).await,
                Err(status) => Ok(status.into_http()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::{Arc, Mutex};

    use http_body_util::BodyExt as _;
    use metrics_exporter_prometheus::PrometheusBuilder;
    use tonic::Code;
    use tonic::body::Body;
    use tower::{Layer as _, Service as _, ServiceExt as _};

    use tracing_subscriber::layer::SubscriberExt as _;

    use super::Public;
    use crate::auth::Caller;
    use crate::auth::tests::{jin, jins_token, keys};

    /// A stand-in for a generated server (the GameService, or the
    /// AuthService when `SIGN_IN`): answers OK, or `refusal` when set, and
    /// keeps the caller each request reached it with.
    #[derive(Debug, Clone, Default)]
    struct Handler<const SIGN_IN: bool> {
        reached: Arc<Mutex<Vec<Option<Caller>>>>,
        refusal: Option<tonic::Status>,
    }

    impl<const SIGN_IN: bool> tonic::server::NamedService for Handler<SIGN_IN> {
        const NAME: &'static str = if SIGN_IN {
            "ttakji.v1.AuthService"
        } else {
            "ttakji.v1.GameService"
        };
    }

    impl<const SIGN_IN: bool> tower::Service<http::Request<Body>> for Handler<SIGN_IN> {
        type Response = http::Response<Body>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<http::Response<Body>, Infallible>>;

        fn poll_ready(
            &mut self,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Infallible>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: http::Request<Body>) -> Self::Future {
            if let Ok(mut reached) = self.reached.lock() {
                reached.push(request.extensions().get::<Caller>().cloned());
            }
            std::future::ready(Ok(match &self.refusal {
                Some(status) => status.clone().into_http(),
                None => http::Response::new(Body::default()),
            }))
        }
    }

    /// The method, caller and status fields of every call's span, as
    /// `name=value`, in the order given.
    #[derive(Debug, Clone, Default)]
    struct CallSpans(Arc<Mutex<Vec<String>>>);

    impl tracing::field::Visit for &CallSpans {
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            let kept = ["rpc.method", "enduser.id", "rpc.grpc.status_code"];
            if kept.contains(&field.name())
                && let Ok(mut fields) = self.0.lock()
            {
                fields.push(format!("{}={value}", field.name()));
            }
        }

        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            self.record_str(field, &format!("{value:?}"));
        }
    }

    impl<S> tracing_subscriber::Layer<S> for CallSpans
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            if attrs.metadata().name() == "rpc" {
                attrs.record(&mut &*self);
            }
        }

        fn on_record(
            &self,
            id: &tracing::span::Id,
            values: &tracing::span::Record<'_>,
            ctx: tracing_subscriber::layer::Context<'_, S>,
        ) {
            if ctx.metadata(id).is_some_and(|m| m.name() == "rpc") {
                values.record(&mut &*self);
            }
        }
    }

    /// What became of some calls: the codes they were answered with, the
    /// callers the handler saw, the fields of their spans and the metrics
    /// page after them.
    #[derive(Debug)]
    struct Outcome {
        answered: Vec<Code>,
        reached: Vec<Option<Caller>>,
        spans: Vec<String>,
        page: String,
    }

    impl Outcome {
        /// The count of calls of `method` answered with `code`, as the
        /// page says.
        fn counted(&self, method: &str, code: &str) -> Option<&str> {
            self.page
                .lines()
                .find(|line| {
                    line.starts_with("rpc_server_calls_total{")
                        && line.contains(&format!("method=\"{method}\""))
                        && line.contains(&format!("code=\"{code}\""))
                })
                .and_then(|line| line.rsplit(' ').next())
        }

        /// The codes other than OK calls were counted with.
        fn refusals_counted(&self) -> usize {
            self.page
                .lines()
                .filter(|line| {
                    line.starts_with("rpc_server_calls_total{") && !line.contains("code=\"OK\"")
                })
                .count()
        }

        /// How many calls of `method` were timed, as the page says.
        fn timed(&self, method: &str) -> Option<&str> {
            self.page.lines().find_map(|line| {
                (line.starts_with("rpc_server_call_duration_seconds_count{")
                    && line.contains(&format!("method=\"{method}\"")))
                .then(|| line.rsplit(' ').next())
                .flatten()
            })
        }
    }

    /// Makes a call to each path (with `token`, if any) through a public
    /// stand-in that answers with `refusal`, if any, observed as the server
    /// observes every call, and reads each answer to its end.
    async fn calls<const SIGN_IN: bool>(
        paths: &[&str],
        token: Option<&str>,
        refusal: Option<tonic::Status>,
    ) -> Outcome {
        let recorder = PrometheusBuilder::new().build_recorder();
        let page = recorder.handle();
        let _local = metrics::set_default_local_recorder(&recorder);
        let spans = CallSpans::default();
        let _spans =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
        let handler = Handler::<SIGN_IN> {
            refusal,
            ..Handler::default()
        };
        let mut service =
            ttakji_platform::observed::ObservedLayer.layer(Public::new(handler.clone(), keys()));
        let mut answered = Vec::new();
        for path in paths {
            let mut request = http::Request::builder().uri(*path);
            if let Some(token) = token {
                request = request.header("authorization", format!("Bearer {token}"));
            }
            let request = request.body(Body::default()).expect("a valid request");
            let response = service
                .ready()
                .await
                .expect("ready")
                .call(request)
                .await
                .expect("infallible");
            answered.push(
                tonic::Status::from_header_map(response.headers()).map_or(Code::Ok, |s| s.code()),
            );
            let _ = response.into_body().collect().await;
        }
        let reached = handler.reached.lock().expect("not poisoned").clone();
        let spans = spans.0.lock().expect("not poisoned").clone();
        Outcome {
            answered,
            reached,
            spans,
            page: page.render(),
        }
    }

    const PLAY: &str = "/ttakji.v1.GameService/PlayMove";

    #[tokio::test]
    async fn a_call_without_a_token_is_refused_before_the_handler_and_counted_once_with_its_code() {
        let outcome = calls::<false>(&[PLAY], None, None).await;
        assert_eq!(outcome.answered, [Code::Unauthenticated]);
        assert!(outcome.reached.is_empty(), "the handler ran: {outcome:?}");
        assert_eq!(outcome.counted("PlayMove", "UNAUTHENTICATED"), Some("1"));
        assert_eq!(outcome.refusals_counted(), 1, "{}", outcome.page);
        assert_eq!(
            outcome.spans,
            ["rpc.method=PlayMove", "rpc.grpc.status_code=16"]
        );
    }

    #[tokio::test]
    async fn a_call_with_a_bad_token_is_refused_before_the_handler() {
        let outcome = calls::<false>(&[PLAY, PLAY], Some("not a token"), None).await;
        assert_eq!(outcome.answered, [Code::Unauthenticated; 2]);
        assert!(outcome.reached.is_empty(), "the handler ran: {outcome:?}");
        assert_eq!(outcome.counted("PlayMove", "UNAUTHENTICATED"), Some("2"));
    }

    #[tokio::test]
    async fn a_call_with_a_good_token_reaches_the_handler_with_its_caller_on_its_span_uncounted() {
        let outcome = calls::<false>(&[PLAY], Some(&jins_token()), None).await;
        assert_eq!(outcome.answered, [Code::Ok]);
        assert_eq!(outcome.reached, [Some(jin())]);
        assert_eq!(outcome.refusals_counted(), 0, "{}", outcome.page);
        assert_eq!(outcome.counted("PlayMove", "OK"), Some("1"));
        assert_eq!(
            outcome.spans,
            [
                "rpc.method=PlayMove",
                "enduser.id=u1",
                "rpc.grpc.status_code=0"
            ]
        );
    }

    #[tokio::test]
    async fn a_call_the_handler_refuses_is_counted_with_the_handlers_code() {
        let refusal = tonic::Status::permission_denied("not your game");
        let outcome = calls::<false>(&[PLAY], Some(&jins_token()), Some(refusal)).await;
        assert_eq!(outcome.answered, [Code::PermissionDenied]);
        assert_eq!(outcome.counted("PlayMove", "PERMISSION_DENIED"), Some("1"));
        assert_eq!(outcome.refusals_counted(), 1, "{}", outcome.page);
    }

    #[tokio::test]
    async fn every_call_is_timed_by_its_method_whether_refused_or_answered() {
        let refused = calls::<false>(&[PLAY, PLAY], None, None).await;
        assert_eq!(refused.timed("PlayMove"), Some("2"), "{}", refused.page);
        let answered = calls::<false>(&[PLAY], Some(&jins_token()), None).await;
        assert_eq!(answered.timed("PlayMove"), Some("1"), "{}", answered.page);
    }

    #[tokio::test]
    async fn signing_in_needs_no_token_but_renaming_does() {
        let sign_in = calls::<true>(&["/ttakji.v1.AuthService/SignInGuest"], None, None).await;
        assert_eq!(sign_in.answered, [Code::Ok]);
        assert_eq!(sign_in.reached, [None]);
        let rename = calls::<true>(&["/ttakji.v1.AuthService/ChangeNickname"], None, None).await;
        assert_eq!(rename.answered, [Code::Unauthenticated]);
        assert!(rename.reached.is_empty());
    }

    #[tokio::test]
    async fn a_made_up_method_is_left_for_the_service_to_answer_and_never_becomes_a_label() {
        let refusal = tonic::Status::unimplemented("no such method");
        let path = "/ttakji.v1.GameService/NoSuchMethod";
        let outcome = calls::<false>(&[path], None, Some(refusal)).await;
        assert_eq!(outcome.answered, [Code::Unimplemented]);
        assert_eq!(outcome.reached, [None]);
        assert_eq!(outcome.counted("unknown", "UNIMPLEMENTED"), Some("1"));
        assert!(!outcome.page.contains("NoSuchMethod"), "{}", outcome.page);
        assert_eq!(
            outcome.spans,
            ["rpc.method=unknown", "rpc.grpc.status_code=12"]
        );
    }
}
