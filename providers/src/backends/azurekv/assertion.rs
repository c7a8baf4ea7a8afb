//! Client assertions for a service principal's certificate credential: an RS256 JWT whose
//! header names the certificate by its SHA-1 thumbprint (`x5t`) and whose claims name the token
//! endpoint (`aud`) and the application (`iss`, `sub`), as the Microsoft identity platform's
//! "certificate credentials" reference requires. Signed with ring; no openssl.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::RsaKeyPair;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

use crate::error::{ProviderError, Result};
use crate::jwt::{KeyError, rsa_key_from_pem, sign_rs256};

/// How long an assertion is valid: Entra ID accepts up to ten minutes.
const LIFETIME_SECONDS: u64 = 600;

/// The certificate and key of a service principal, parsed once.
pub struct CertificateSigner {
    key: RsaKeyPair,
    thumbprint: String,
}

impl CertificateSigner {
    /// Parses a PEM bundle holding the certificate and its RSA private key (PKCS#8 or PKCS#1),
    /// the format upstream reads from `clientCertificate`.
    pub fn from_pem(pem: &[u8]) -> Result<Self> {
        let invalid = |what: &str| {
            ProviderError::invalid_config(format!("failed to parse client certificate: {what}"))
        };
        let certificate = CertificateDer::pem_slice_iter(pem)
            .next()
            .and_then(|first| first.ok())
            .ok_or_else(|| invalid("no CERTIFICATE block"))?;
        let key = rsa_key_from_pem(pem).map_err(|failure| match failure {
            KeyError::NoRsaBlock => invalid("no RSA private key block"),
            KeyError::Unusable => invalid("the private key is not a usable RSA key"),
        })?;
        let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &certificate);
        Ok(Self {
            key,
            thumbprint: URL_SAFE_NO_PAD.encode(digest.as_ref()),
        })
    }

    /// A fresh assertion for `client_id` at `token_endpoint`.
    pub fn assertion(&self, client_id: &str, token_endpoint: &str) -> Result<String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs())
            .unwrap_or_default();
        let header = serde_json::json!({"alg": "RS256", "typ": "JWT", "x5t": self.thumbprint});
        let claims = serde_json::json!({
            "aud": token_endpoint,
            "iss": client_id,
            "sub": client_id,
            "jti": format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
            "nbf": now,
            "iat": now,
            "exp": now + LIFETIME_SECONDS,
        });
        sign_rs256(&self.key, &header, &claims)
            .ok_or_else(|| ProviderError::invalid_config("failed to sign the client assertion"))
    }
}
