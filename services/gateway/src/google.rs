//! Sign-in with Google: an ID token is checked against Google's published
//! keys (RS256), its audience (our client id), its issuer
//! (`accounts.google.com`) and its expiry.
//!
//! The key set is cached as long as its `Cache-Control: max-age` says, and
//! fetched again when a token names a key id the cache does not hold (Google
//! rotates keys), at most once every [`REFETCH_AT_MOST_EVERY`] so a flood of
//! bad tokens cannot turn into a flood of fetches. The key set's URL is
//! configurable, so tests serve their own keys over local HTTP.

use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use tokio::sync::Mutex;
use tokio::time::Instant;
use tonic::Status;

/// Google's key set.
pub const GOOGLE_JWKS_URL: &str = "https://www.googleapis.com/oauth2/v3/certs";
/// A key set without a usable max-age is kept this long.
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(300);
/// The least time between two fetches for unknown key ids.
pub const REFETCH_AT_MOST_EVERY: Duration = Duration::from_secs(2);

/// What an ID token tells us.
#[derive(Debug, Clone, Deserialize)]
pub struct GoogleClaims {
    /// Google's stable id of the account.
    pub sub: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub given_name: Option<String>,
}

#[derive(Debug, Default)]
struct Cache {
    keys: Option<JwkSet>,
    fresh_until: Option<Instant>,
    last_fetch: Option<Instant>,
}

/// Checks Google ID tokens.
#[derive(Debug)]
pub struct GoogleVerifier {
    client_id: String,
    jwks_url: String,
    http: reqwest::Client,
    cache: Mutex<Cache>,
}

fn refused(why: impl std::fmt::Display) -> Status {
    ttakji_platform::refusal::refused(
        tonic::Code::Unauthenticated,
        "GOOGLE_TOKEN_REFUSED",
        format!("the Google ID token is refused: {why}"),
    )
}

/// `max-age` of a Cache-Control header.
fn max_age(header: Option<&reqwest::header::HeaderValue>) -> Option<Duration> {
    header?
        .to_str()
        .ok()?
        .split(',')
        .find_map(|part| part.trim().strip_prefix("max-age=")?.parse().ok())
        .map(Duration::from_secs)
}

impl GoogleVerifier {
    /// A verifier for tokens issued to `client_id`, with keys from `jwks_url`.
    ///
    /// # Errors
    /// When the HTTPS client cannot be made.
    pub fn new(client_id: &str, jwks_url: &str) -> anyhow::Result<GoogleVerifier> {
        // One TLS provider for the process; a second install is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()?;
        Ok(GoogleVerifier {
            client_id: client_id.to_owned(),
            jwks_url: jwks_url.to_owned(),
            http,
            cache: Mutex::new(Cache::default()),
        })
    }

    async fn fetch(&self, cache: &mut Cache) -> Result<(), Status> {
        cache.last_fetch = Some(Instant::now());
        let response = self
            .http
            .get(&self.jwks_url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| {
                tracing::warn!(error = %e, url = %self.jwks_url, "Google key set not fetched");
                Status::unavailable("Google's keys cannot be fetched right now; try again")
            })?;
        let ttl = max_age(response.headers().get(reqwest::header::CACHE_CONTROL))
            .unwrap_or(DEFAULT_MAX_AGE);
        let body = response
            .bytes()
            .await
            .map_err(|_| Status::unavailable("Google's keys could not be read; try again"))?;
        let keys: JwkSet = serde_json::from_slice(&body)
            .map_err(|e| Status::unavailable(format!("Google's key set is not readable: {e}")))?;
        metrics::counter!("ttakji_google_key_fetches_total").increment(1);
        cache.keys = Some(keys);
        cache.fresh_until = Some(Instant::now() + ttl);
        Ok(())
    }

    /// The key `kid`, from the cache or a fetch.
    async fn key(&self, kid: &str) -> Result<DecodingKey, Status> {
        let mut cache = self.cache.lock().await;
        let stale = cache.fresh_until.is_none_or(|t| Instant::now() >= t);
        if stale {
            self.fetch(&mut cache).await?;
        }
        let known = |c: &Cache| c.keys.as_ref().and_then(|k| k.find(kid)).cloned();
        let jwk = match known(&cache) {
            Some(jwk) => jwk,
            None => {
                let may_refetch = cache
                    .last_fetch
                    .is_none_or(|t| t.elapsed() >= REFETCH_AT_MOST_EVERY);
                if !stale && may_refetch {
                    self.fetch(&mut cache).await?;
                }
                known(&cache).ok_or_else(|| refused(format!("no Google key has id {kid:?}")))?
            }
        };
        DecodingKey::from_jwk(&jwk).map_err(|e| refused(format!("key {kid:?} is unusable: {e}")))
    }

    /// Checks a token and returns what it says.
    ///
    /// # Errors
    /// UNAUTHENTICATED saying what is wrong with the token; UNAVAILABLE when
    /// Google's keys cannot be fetched.
    pub async fn verify(&self, id_token: &str) -> Result<GoogleClaims, Status> {
        let header = jsonwebtoken::decode_header(id_token).map_err(refused)?;
        if header.alg != Algorithm::RS256 {
            return Err(refused(format!(
                "it is signed with {:?}, not RS256",
                header.alg
            )));
        }
        let kid = header.kid.ok_or_else(|| refused("it names no key id"))?;
        let key = self.key(&kid).await?;
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_audience(&[&self.client_id]);
        validation.set_issuer(&["accounts.google.com", "https://accounts.google.com"]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        // Allow for clocks that are a little apart, no more.
        validation.leeway = 30;
        jsonwebtoken::decode::<GoogleClaims>(id_token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => refused("it has expired"),
                jsonwebtoken::errors::ErrorKind::InvalidAudience => {
                    refused("it was issued to another app")
                }
                jsonwebtoken::errors::ErrorKind::InvalidIssuer => {
                    refused("it was not issued by Google")
                }
                jsonwebtoken::errors::ErrorKind::InvalidSignature => {
                    refused("its signature does not match")
                }
                _ => refused(e),
            })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn max_age_is_read_from_cache_control() {
        let v = reqwest::header::HeaderValue::from_static("public, max-age=19800, must-revalidate");
        assert_eq!(
            super::max_age(Some(&v)),
            Some(std::time::Duration::from_secs(19800))
        );
        let none = reqwest::header::HeaderValue::from_static("no-store");
        assert_eq!(super::max_age(Some(&none)), None);
    }
}
