//! Who is calling. Our access tokens are issued here at sign-in, and
//! checked here once per call ([`authenticate`], run by
//! [`crate::calls::Public`] before the request is read), which puts the
//! verified [`Caller`] in the request's extensions; handlers take it from
//! there with [`Caller::of`].

use tonic::{Code, Request, Status};
use ttakji_platform::auth::{Claims, TokenError, TokenKeys};
use ttakji_platform::refusal::refused;

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
    /// The caller [`authenticate`] verified for `request`.
    ///
    /// # Errors
    /// UNAUTHENTICATED when there is none, so a handler reached without
    /// the check refuses every call rather than serving a stranger.
    pub fn of<T>(request: &Request<T>) -> Result<Caller, Status> {
        request
            .extensions()
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| sign_in_required("sign in first: the caller is not verified"))
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

/// Checks the bearer token of a call (`authorization: Bearer <token>`)
/// and puts its [`Caller`] in the request's extensions.
///
/// # Errors
/// UNAUTHENTICATED saying what is wrong: no header, not a bearer token, or
/// a token that is malformed, forged, expired or signed with an unknown key
/// (these last counted in `ttakji_tokens_refused_total{reason}`).
pub fn authenticate<B>(keys: &TokenKeys, request: &mut http::Request<B>) -> Result<(), Status> {
    let claims = verify(keys, request.headers())?;
    request.extensions_mut().insert(Caller::from(claims));
    Ok(())
}

/// The claims of the bearer token in `headers`.
fn verify(keys: &TokenKeys, headers: &http::HeaderMap) -> Result<Claims, Status> {
    let header = headers
        .get("authorization")
        .ok_or_else(|| sign_in_required("sign in first: no authorization header"))?;
    let value = header
        .to_str()
        .map_err(|_| token_invalid("the authorization header is not text"))?;
    let token = value
        .strip_prefix("Bearer ")
        .ok_or_else(|| token_invalid("the authorization header must be 'Bearer <token>'"))?;
    keys.verify(token.trim()).map_err(|e| {
        metrics::counter!("ttakji_tokens_refused_total", "reason" => refusal_reason(&e))
            .increment(1);
        let reason = if matches!(e, TokenError::Expired) {
            "SIGN_IN_EXPIRED"
        } else {
            "TOKEN_INVALID"
        };
        refused(Code::Unauthenticated, reason, e.to_string())
    })
}

fn sign_in_required(message: &str) -> Status {
    refused(Code::Unauthenticated, "SIGN_IN_REQUIRED", message)
}

fn token_invalid(message: &str) -> Status {
    refused(Code::Unauthenticated, "TOKEN_INVALID", message)
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

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use ttakji_platform::auth::TokenKeys;

    use super::{Caller, authenticate};

    pub(crate) fn keys() -> TokenKeys {
        TokenKeys::new(
            "t1",
            b"a test secret of some length",
            Duration::from_secs(60),
        )
    }

    pub(crate) fn jin() -> Caller {
        Caller {
            user_id: "u1".to_owned(),
            nickname: "jin".to_owned(),
            guest: true,
        }
    }

    /// A token for [`jin`].
    pub(crate) fn jins_token() -> String {
        keys().issue("u1", "jin", true).expect("sign").0
    }

    fn call_with(authorization: Option<&str>) -> http::Request<()> {
        let mut request = http::Request::builder().uri("/ttakji.v1.GameService/PlayMove");
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        request.body(()).expect("a valid request")
    }

    /// The refusal's message, or the caller the check put in the request.
    fn checked(authorization: Option<&str>) -> Result<Option<Caller>, String> {
        let mut request = call_with(authorization);
        authenticate(&keys(), &mut request).map_err(|status| {
            assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
            status.message().to_owned()
        })?;
        Ok(request.extensions().get::<Caller>().cloned())
    }

    #[test]
    fn a_call_without_a_token_is_told_to_sign_in() {
        assert_eq!(
            checked(None),
            Err("sign in first: no authorization header".to_owned())
        );
        assert_eq!(
            checked(Some(&jins_token())),
            Err("the authorization header must be 'Bearer <token>'".to_owned())
        );
    }

    #[test]
    fn a_forged_expired_or_garbled_token_is_refused() {
        let forged = TokenKeys::new("t1", b"someone else's secret", Duration::from_secs(60))
            .issue("u1", "jin", true)
            .expect("sign")
            .0;
        let mut claims = keys().issue("u1", "jin", true).expect("sign").1;
        claims.exp = claims.iat.saturating_sub(10);
        let expired = keys().sign(&claims).expect("sign");
        for token in [forged.as_str(), expired.as_str(), "not a token"] {
            assert!(
                checked(Some(&format!("Bearer {token}"))).is_err(),
                "{token}"
            );
        }
        assert_eq!(
            checked(Some(&format!("Bearer {expired}"))),
            Err("the token has expired".to_owned())
        );
    }

    #[test]
    fn a_good_token_puts_its_caller_in_the_request() {
        let header = format!("Bearer {}", jins_token());
        assert_eq!(checked(Some(&header)), Ok(Some(jin())));
        let tonic_request = tonic::Request::from_http({
            let mut request = call_with(Some(&header));
            authenticate(&keys(), &mut request).expect("a good token");
            request
        });
        assert_eq!(Caller::of(&tonic_request).ok(), Some(jin()));
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
