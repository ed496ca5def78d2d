//! Who is calling. Our access tokens are issued here at sign-in, and
//! [`Authenticated`] checks the bearer token once per call, before the
//! request is read, putting the verified [`Caller`] in the request's
//! extensions; handlers take it from there with [`Caller::of`]. Methods in
//! [`crate::api::OPEN`] need no token.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::{Request, Status};
use ttakji_platform::auth::{Claims, TokenError, TokenKeys};

/// The signed-in player a call comes from, as their token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The account id.
    pub user_id: String,
    /// The nickname the token was issued with.
    pub nickname: String,
    /// A guest (nickname only) rather than a signed-in account.
    pub guest: bool,
}

impl From<Claims> for Caller {
    fn from(claims: Claims) -> Caller {
        Caller {
            user_id: claims.sub,
            nickname: claims.name,
            guest: claims.guest,
        }
    }
}

impl Caller {
    /// The caller [`Authenticated`] verified for `request`.
    ///
    /// # Errors
    /// UNAUTHENTICATED when there is none, so a handler served without the
    /// layer refuses every call rather than serving a stranger.
    pub fn of<T>(request: &Request<T>) -> Result<Caller, Status> {
        request
            .extensions()
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| Status::unauthenticated("sign in first: the caller is not verified"))
    }
}

/// A token just issued, with its expiry as the API reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedToken {
    pub access_token: String,
    /// When the token expires, in milliseconds since the Unix epoch.
    pub expires_at_unix_ms: i64,
}

/// Issues a token for a player who has just signed in or been renamed.
///
/// # Errors
/// INTERNAL when the token cannot be signed.
pub fn issue(
    keys: &TokenKeys,
    user_id: &str,
    nickname: &str,
    guest: bool,
) -> Result<IssuedToken, Status> {
    let (access_token, claims) = keys
        .issue(user_id, nickname, guest)
        .map_err(|e| Status::internal(e.to_string()))?;
    Ok(IssuedToken {
        access_token,
        expires_at_unix_ms: i64::try_from(claims.exp)
            .unwrap_or(i64::MAX)
            .saturating_mul(1000),
    })
}

/// The caller of a request, from `authorization: Bearer <token>`.
fn verify(keys: &TokenKeys, headers: &http::HeaderMap) -> Result<Claims, Status> {
    let header = headers
        .get("authorization")
        .ok_or_else(|| Status::unauthenticated("sign in first: no authorization header"))?;
    let value = header
        .to_str()
        .map_err(|_| Status::unauthenticated("the authorization header is not text"))?;
    let token = value.strip_prefix("Bearer ").ok_or_else(|| {
        Status::unauthenticated("the authorization header must be 'Bearer <token>'")
    })?;
    keys.verify(token.trim()).map_err(|e| {
        metrics::counter!("ttakji_tokens_refused_total", "reason" => refusal_reason(&e))
            .increment(1);
        Status::unauthenticated(e.to_string())
    })
}

/// The `reason` label of `ttakji_tokens_refused_total`.
fn refusal_reason(e: &TokenError) -> &'static str {
    match e {
        TokenError::Malformed(_) => "malformed",
        TokenError::NoKeyId => "no_key_id",
        TokenError::UnknownKey(_) => "unknown_key",
        TokenError::WrongAlgorithm(_) => "wrong_algorithm",
        TokenError::Expired => "expired",
        TokenError::BadSignature => "bad_signature",
        TokenError::Signing(_) => "signing",
    }
}

/// A public service behind the token check: a call to one of its methods
/// that is not open is refused as UNAUTHENTICATED, before its request is
/// read, unless it carries a valid token; a valid one puts the [`Caller`]
/// in the request's extensions and records `user_id` on the current span
/// (the call's span, see [`crate::calls`]). A path that names no method
/// goes through untouched, for the service to answer UNIMPLEMENTED.
#[derive(Debug, Clone)]
pub struct Authenticated<S> {
    inner: S,
    keys: TokenKeys,
}

impl<S> Authenticated<S> {
    /// `inner`, checked with `keys`.
    pub fn new(inner: S, keys: TokenKeys) -> Self {
        Authenticated { inner, keys }
    }
}

impl<S: NamedService> NamedService for Authenticated<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> tower::Service<http::Request<Body>> for Authenticated<S>
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
        let path = request.uri().path();
        if crate::api::method(S::NAME, path).is_some() && !crate::api::is_open(path) {
            match verify(&self.keys, request.headers()) {
                Ok(claims) => {
                    tracing::Span::current().record("user_id", claims.sub.as_str());
                    request.extensions_mut().insert(Caller::from(claims));
                }
                Err(status) => return Box::pin(std::future::ready(Ok(status.into_http()))),
            }
        }
        // The clone that was not made ready stays behind (tower's advice).
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        Box::pin(ready.call(request))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::convert::Infallible;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use tonic::body::Body;
    use tower::{Service as _, ServiceExt as _};
    use ttakji_platform::auth::TokenKeys;

    use super::{Authenticated, Caller};

    pub(crate) fn keys() -> TokenKeys {
        TokenKeys::new(
            "t1",
            b"a test secret of some length",
            Duration::from_secs(60),
        )
    }

    /// A stand-in for a generated server (the GameService, or the
    /// AuthService when `SIGN_IN`): answers OK, or `refusal` when set, and
    /// keeps the caller each request reached it with.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct Handler<const SIGN_IN: bool = false> {
        pub(crate) reached: Arc<Mutex<Vec<Option<Caller>>>>,
        pub(crate) refusal: Option<tonic::Status>,
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

    pub(crate) fn call_to(path: &str, token: Option<&str>) -> http::Request<Body> {
        let mut request = http::Request::builder().uri(path);
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request.body(Body::default()).expect("a valid request")
    }

    /// The grpc-status of a response, as a client reads it.
    pub(crate) fn code_of(response: &http::Response<Body>) -> tonic::Code {
        tonic::Status::from_header_map(response.headers()).map_or(tonic::Code::Ok, |s| s.code())
    }

    async fn answer<const SIGN_IN: bool>(
        path: &str,
        token: Option<&str>,
    ) -> (tonic::Code, Vec<Option<Caller>>) {
        let handler = Handler::<SIGN_IN>::default();
        let mut gate = Authenticated::new(handler.clone(), keys());
        let response = gate
            .ready()
            .await
            .expect("ready")
            .call(call_to(path, token))
            .await
            .expect("infallible");
        let reached = handler.reached.lock().expect("not poisoned").clone();
        (code_of(&response), reached)
    }

    #[tokio::test]
    async fn a_call_without_a_token_is_refused_before_it_reaches_the_handler() {
        let (code, reached) = answer::<false>("/ttakji.v1.GameService/PlayMove", None).await;
        assert_eq!(code, tonic::Code::Unauthenticated);
        assert!(reached.is_empty(), "the handler ran: {reached:?}");
    }

    #[tokio::test]
    async fn a_call_with_a_forged_or_expired_token_is_refused() {
        let forged = TokenKeys::new("t1", b"someone else's secret", Duration::from_secs(60))
            .issue("u1", "jin", true)
            .expect("sign")
            .0;
        let mut claims = keys().issue("u1", "jin", true).expect("sign").1;
        claims.exp = claims.iat.saturating_sub(10);
        let expired = keys().sign(&claims).expect("sign");
        for token in [forged.as_str(), expired.as_str(), "not a token"] {
            let (code, reached) =
                answer::<false>("/ttakji.v1.GameService/PlayMove", Some(token)).await;
            assert_eq!(code, tonic::Code::Unauthenticated, "{token}");
            assert!(reached.is_empty(), "the handler ran for {token}");
        }
    }

    #[tokio::test]
    async fn a_call_with_a_good_token_reaches_the_handler_with_its_caller() {
        let (token, _) = keys().issue("u1", "jin", true).expect("sign");
        let (code, reached) =
            answer::<false>("/ttakji.v1.GameService/PlayMove", Some(&token)).await;
        assert_eq!(code, tonic::Code::Ok);
        let jin = Caller {
            user_id: "u1".to_owned(),
            nickname: "jin".to_owned(),
            guest: true,
        };
        assert_eq!(reached, vec![Some(jin)]);
    }

    #[tokio::test]
    async fn signing_in_needs_no_token_and_carries_no_caller() {
        let (code, reached) = answer::<true>("/ttakji.v1.AuthService/SignInGuest", None).await;
        assert_eq!(code, tonic::Code::Ok);
        assert_eq!(reached, vec![None]);
        let (code, reached) = answer::<true>("/ttakji.v1.AuthService/ChangeNickname", None).await;
        assert_eq!(code, tonic::Code::Unauthenticated, "renaming needs a token");
        assert!(reached.is_empty());
    }

    #[tokio::test]
    async fn a_path_that_names_no_method_is_left_for_the_service_to_answer() {
        let (_, reached) = answer::<false>("/ttakji.v1.GameService/NoSuchMethod", None).await;
        assert_eq!(reached, vec![None]);
    }

    #[test]
    fn a_request_that_skipped_the_check_has_no_caller() {
        let status = Caller::of(&tonic::Request::new(())).expect_err("no caller");
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
    }

    #[test]
    fn an_issued_token_expires_when_its_claims_say_in_milliseconds() {
        let issued = super::issue(&keys(), "u1", "jin", false).expect("sign");
        let claims = keys().verify(&issued.access_token).expect("verifies");
        assert_eq!(
            issued.expires_at_unix_ms,
            i64::try_from(claims.exp).expect("fits") * 1000
        );
        assert!(!claims.guest);
    }
}
