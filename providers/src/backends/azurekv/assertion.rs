//! Client assertions for a service principal's certificate credential: an RS256 JWT whose
//! header names the certificate by its SHA-1 thumbprint (`x5t`) and whose claims name the token
//! endpoint (`aud`) and the application (`iss`, `sub`), as the Microsoft identity platform's
//! "certificate credentials" reference requires. Signed with ring; no openssl.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{ProviderError, Result};

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
        let key = match PrivateKeyDer::from_pem_slice(pem) {
            Ok(PrivateKeyDer::Pkcs8(key)) => RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()),
            Ok(PrivateKeyDer::Pkcs1(key)) => RsaKeyPair::from_der(key.secret_pkcs1_der()),
            _ => return Err(invalid("no RSA private key block")),
        }
        .map_err(|_| invalid("the private key is not a usable RSA key"))?;
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
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut signature = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                signed.as_bytes(),
                &mut signature,
            )
            .map_err(|_| ProviderError::invalid_config("failed to sign the client assertion"))?;
        Ok(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}
