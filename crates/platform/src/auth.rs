//! Our own access tokens: HS256 JWTs with a key id, so keys can rotate.
//!
//! A token is signed with the current key; any key in the set verifies one
//! that names it in its `kid` header. Only HS256 is accepted: a token with
//! `alg: none` or any other algorithm, an unknown key id, a bad signature or
//! a past expiry is refused.

use std::collections::HashMap;
use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// The issuer written into and required from every token.
pub const ISSUER: &str = "ttakji";

/// What a token says about its holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The account id.
    pub sub: String,
    /// The nickname at sign-in.
    pub name: String,
    /// A guest account (nickname only) rather than a signed-in one.
    pub guest: bool,
    pub iss: String,
    /// Issued at, seconds since the Unix epoch.
    pub iat: u64,
    /// Expiry, seconds since the Unix epoch.
    pub exp: u64,
}

/// Why a token was refused.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the token is malformed: {0}")]
    Malformed(String),
    #[error("the token has no key id")]
    NoKeyId,
    #[error("the token names key {0:?}, which this server does not know")]
    UnknownKey(String),
    #[error("the token is signed with {0:?}; only HS256 is accepted")]
    WrongAlgorithm(String),
    #[error("the token has expired")]
    Expired,
    #[error("the token's signature does not match")]
    BadSignature,
    #[error("the token could not be signed: {0}")]
    Signing(String),
}

/// The keys that sign and verify tokens.
#[derive(Clone)]
pub struct TokenKeys {
    current: String,
    secrets: HashMap<String, Vec<u8>>,
    ttl: Duration,
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<&String> = self.secrets.keys().collect();
        ids.sort();
        f.debug_struct("TokenKeys")
            .field("current", &self.current)
            .field("key_ids", &ids)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl TokenKeys {
    /// A key set with one key, `kid`, which signs.
    #[must_use]
    pub fn new(kid: &str, secret: &[u8], ttl: Duration) -> TokenKeys {
        TokenKeys {
            current: kid.to_owned(),
            secrets: HashMap::from([(kid.to_owned(), secret.to_vec())]),
            ttl,
        }
    }

    /// Parses `kid1=secret1,kid2=secret2`: the first key signs, all verify.
    ///
    /// # Errors
    /// When the list is empty or an entry has no `=` or an empty part.
    pub fn parse(spec: &str, ttl: Duration) -> Result<TokenKeys, String> {
        let mut keys: Option<TokenKeys> = None;
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (kid, secret) = entry
                .split_once('=')
                .filter(|(k, s)| !k.is_empty() && s.len() >= 16)
                .ok_or_else(|| {
                    format!("token key entry {entry:?} is not kid=secret with a secret of 16 bytes or more")
                })?;
            match &mut keys {
                None => keys = Some(TokenKeys::new(kid, secret.as_bytes(), ttl)),
                Some(k) => {
                    k.secrets.insert(kid.to_owned(), secret.as_bytes().to_vec());
                }
            }
        }
        keys.ok_or_else(|| "no token key given".to_owned())
    }

    /// A key set with a fresh random key, for a single process that needs
    /// no tokens to outlive it.
    #[must_use]
    pub fn random(ttl: Duration) -> TokenKeys {
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        TokenKeys::new("k1", secret.as_bytes(), ttl)
    }

    /// How long a new token lives.
    #[must_use]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Signs a token for an account.
    ///
    /// # Errors
    /// Only if signing itself fails.
    pub fn issue(
        &self,
        user_id: &str,
        nickname: &str,
        guest: bool,
    ) -> Result<(String, Claims), TokenError> {
        let now = now_secs();
        let claims = Claims {
            sub: user_id.to_owned(),
            name: nickname.to_owned(),
            guest,
            iss: ISSUER.to_owned(),
            iat: now,
            exp: now + self.ttl.as_secs(),
        };
        let token = self.sign(&claims)?;
        Ok((token, claims))
    }

    /// Signs any claims with the current key (tests use it for expired tokens).
    ///
    /// # Errors
    /// Only if signing itself fails.
    pub fn sign(&self, claims: &Claims) -> Result<String, TokenError> {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.current.clone());
        let secret = self
            .secrets
            .get(&self.current)
            .map_or(&[][..], Vec::as_slice);
        let key =
            EncodingKey::from_secret(secret).map_err(|e| TokenError::Signing(e.to_string()))?;
        jsonwebtoken::encode(&header, claims, &key).map_err(|e| TokenError::Signing(e.to_string()))
    }

    /// Verifies a token and returns its claims.
    ///
    /// # Errors
    /// See [`TokenError`].
    pub fn verify(&self, token: &str) -> Result<Claims, TokenError> {
        // The algorithm is checked before anything else is trusted: a token
        // with `alg: none` (or RS256 with our secret as a "public key") is
        // refused by name.
        let alg = algorithm_named(token);
        if alg != "HS256" {
            return Err(TokenError::WrongAlgorithm(alg));
        }
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| TokenError::Malformed(e.to_string()))?;
        let kid = header.kid.ok_or(TokenError::NoKeyId)?;
        let secret = self.secrets.get(&kid).ok_or(TokenError::UnknownKey(kid))?;
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_required_spec_claims(&["exp", "iss", "sub"]);
        validation.leeway = 0;
        let key =
            DecodingKey::from_secret(secret).map_err(|e| TokenError::Malformed(e.to_string()))?;
        jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => TokenError::Expired,
                jsonwebtoken::errors::ErrorKind::InvalidSignature => TokenError::BadSignature,
                _ => TokenError::Malformed(e.to_string()),
            })
    }
}

/// The `alg` a token's header names, for the error message.
fn algorithm_named(token: &str) -> String {
    use base64::Engine as _;
    token
        .split('.')
        .next()
        .and_then(|h| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(h)
                .ok()
        })
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|v| v.get("alg").and_then(|a| a.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "no readable algorithm".to_owned())
}

/// Seconds since the Unix epoch.
#[must_use]
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> TokenKeys {
        TokenKeys::new("k1", b"0123456789abcdef0123", Duration::from_secs(60))
    }

    #[test]
    fn a_token_verifies_with_the_key_that_signed_it() {
        let (token, claims) = keys().issue("u1", "jin", true).expect("sign");
        assert_eq!(keys().verify(&token).expect("verify"), claims);
    }

    #[test]
    fn a_rotated_key_set_still_verifies_old_tokens_and_signs_with_the_new_key() {
        let (old, _) = keys().issue("u1", "jin", true).expect("sign");
        let rotated = TokenKeys::parse(
            "k2=fedcba9876543210fedc,k1=0123456789abcdef0123",
            Duration::from_secs(60),
        )
        .expect("parse");
        assert!(rotated.verify(&old).is_ok());
        let (new, _) = rotated.issue("u1", "jin", true).expect("sign");
        assert!(matches!(keys().verify(&new), Err(TokenError::UnknownKey(k)) if k == "k2"));
    }

    #[test]
    fn expired_foreign_and_unsigned_tokens_are_refused() {
        let mut claims = keys().issue("u1", "jin", true).expect("sign").1;
        claims.exp = now_secs() - 5;
        let expired = keys().sign(&claims).expect("sign");
        assert!(matches!(keys().verify(&expired), Err(TokenError::Expired)));

        let other = TokenKeys::new("k1", b"another-secret-of-16", Duration::from_secs(60));
        let (foreign, _) = other.issue("u1", "jin", true).expect("sign");
        assert!(matches!(
            keys().verify(&foreign),
            Err(TokenError::BadSignature)
        ));

        let unsigned = unsigned_token("u1");
        assert!(
            matches!(keys().verify(&unsigned), Err(TokenError::WrongAlgorithm(a)) if a == "none")
        );
        assert!(keys().verify("not a token").is_err());
    }

    fn unsigned_token(sub: &str) -> String {
        use base64::Engine as _;
        let b64 = |v: &serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        let header = serde_json::json!({"alg": "none", "typ": "JWT", "kid": "k1"});
        let claims = serde_json::json!({"sub": sub, "name": "x", "guest": true, "iss": ISSUER, "iat": 0, "exp": now_secs() + 60});
        format!("{}.{}.", b64(&header), b64(&claims))
    }

    #[test]
    fn key_lists_with_short_secrets_are_refused() {
        assert!(TokenKeys::parse("k1=short", Duration::from_secs(1)).is_err());
        assert!(TokenKeys::parse("", Duration::from_secs(1)).is_err());
    }
}
