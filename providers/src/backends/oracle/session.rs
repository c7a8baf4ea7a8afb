//! Federated sessions, shared by the instance and workload principals as the OCI SDKs share
//! them: a fresh 2048-bit RSA session key per renewal, a security token (a JWT) issued for its
//! public half, requests signed by the session key with key id `ST$<token>`, and renewal once
//! the token's `exp` is less than five minutes away (the SDKs' buffer).
//!
//! Tokens and keys never appear in errors.

use std::future::Future;

use reqwest::Method;
use reqwest::header::HeaderMap;
use tokio::sync::Mutex;

use super::signer::Signer;
use crate::error::{ProviderError, Result};

/// Seconds before a token's `exp` from which it is renewed (the SDKs' buffer).
const RENEW_BEFORE_SECONDS: i64 = 5 * 60;

/// Size of the session key, as the SDKs generate it.
const SESSION_KEY_BITS: usize = 2048;

/// A security token and the session key it was issued for.
pub struct Session {
    signer: Signer,
    expires: i64,
}

impl Session {
    /// The session of `token` (without its `ST$` prefix) for `key`; `action` starts the error
    /// when the token is no JWT with an `exp`.
    pub fn new(token: &str, key: ring::signature::RsaKeyPair, action: &str) -> Result<Self> {
        let expires = expiry(token)
            .ok_or_else(|| ProviderError::invalid_data(format!("{action}: malformed token")))?;
        Ok(Self {
            signer: Signer::with_key(format!("ST${token}"), key),
            expires,
        })
    }
}

/// The current session of a principal, renewed on demand.
#[derive(Default)]
pub struct SessionCache(Mutex<Option<Session>>);

impl SessionCache {
    /// Signs a request with the current session, first replacing it by `renew`'s when there is
    /// none or its token is about to expire. Concurrent callers wait for one renewal.
    pub async fn sign<Renew, Renewed>(
        &self,
        renew: Renew,
        method: &Method,
        url: &reqwest::Url,
        body: Option<&[u8]>,
        headers: &mut HeaderMap,
    ) -> Result<()>
    where
        Renew: FnOnce() -> Renewed,
        Renewed: Future<Output = Result<Session>>,
    {
        let mut session = self.0.lock().await;
        let current = match session.take() {
            Some(current) if current.expires - RENEW_BEFORE_SECONDS > unix_now() => current,
            _ => renew().await?,
        };
        let signed = current.signer.sign(method, url, body, headers);
        *session = Some(current);
        signed
    }
}

/// A fresh session key pair: ring's signing key and the public key's SubjectPublicKeyInfo DER.
pub fn session_key() -> Result<(ring::signature::RsaKeyPair, Vec<u8>)> {
    use rsa::pkcs8::{EncodePrivateKey as _, EncodePublicKey as _};
    let failed = || ProviderError::invalid_config("failed to generate a new session key pair");
    let private = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, SESSION_KEY_BITS)
        .map_err(|_| failed())?;
    let pkcs8 = private.to_pkcs8_der().map_err(|_| failed())?;
    let public = private
        .to_public_key()
        .to_public_key_der()
        .map_err(|_| failed())?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(pkcs8.as_bytes()).map_err(|_| failed())?;
    Ok((key, public.as_bytes().to_vec()))
}

/// The `exp` claim (seconds since the epoch) of the JWT `token`.
fn expiry(token: &str) -> Option<i64> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&payload).ok()?;
    let exp = claims.get("exp")?;
    exp.as_i64().or_else(|| {
        exp.as_f64()
            .filter(|exp| exp.is_finite())
            .map(|exp| exp as i64)
    })
}

/// Seconds since the epoch.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::*;

    #[test]
    fn expiry_reads_the_exp_claim_and_refuses_other_text() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"exp":1700000000,"sub":"x"}"#);
        assert_eq!(expiry(&format!("h.{payload}.s")), Some(1_700_000_000));
        assert_eq!(expiry("not a token"), None);
        let no_exp = URL_SAFE_NO_PAD.encode(br#"{"sub":"x"}"#);
        assert_eq!(expiry(&format!("h.{no_exp}.s")), None);
    }
}
