//! OCI request signatures: the HTTP Signature scheme (draft-cavage-http-signatures-08) as OCI's
//! "Request Signatures" documents it and the OCI SDKs apply it.
//!
//! Every request carries `date` and `host`; the signed headers are `date (request-target) host`
//! for GET and DELETE (without `host` for the identity service's federation endpoints, as the
//! SDKs sign those), and additionally `content-length content-type x-content-sha256` for
//! POST and PUT (`x-content-sha256` the base64 SHA-256 of the body). The signing string is one
//! `name: value` line per signed header (`(request-target)` is the lowercase method, a space and
//! the path with its query), joined by `\n`, signed with RSA PKCS#1 v1.5 SHA-256 by the API
//! key, and sent as `Authorization: Signature version="1",keyId="<tenancy>/<user>/<fingerprint>",
//! algorithm="rsa-sha256",headers="...",signature="<base64>"`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{HeaderMap, HeaderValue};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject as _;

use crate::error::{ProviderError, Result};

/// An API signing key and the identity it signs for.
pub struct Signer {
    key_id: String,
    key: ring::signature::RsaKeyPair,
    rng: ring::rand::SystemRandom,
    sign_host: bool,
}

impl Signer {
    /// A signer for user `user` of `tenancy`, whose API key (PKCS#1 or PKCS#8 PEM, not
    /// encrypted) has `fingerprint`.
    pub fn new(
        tenancy: &str,
        user: &str,
        fingerprint: &str,
        private_key_pem: &[u8],
    ) -> Result<Self> {
        let key_id = format!("{tenancy}/{user}/{}", fingerprint.trim());
        Self::from_pem(key_id, private_key_pem, "the private key")
    }

    /// A signer naming `key_id` with the RSA key `private_key_pem` (PKCS#1 or PKCS#8, not
    /// encrypted); `what` names the key in errors.
    pub fn from_pem(key_id: String, private_key_pem: &[u8], what: &str) -> Result<Self> {
        let invalid = |form: &str| {
            ProviderError::invalid_config(format!(
                "cannot setup new oracle client: {what} is not {form}"
            ))
        };
        let der = PrivateKeyDer::from_pem_slice(private_key_pem)
            .map_err(|_| invalid("a PEM private key"))?;
        let key = match &der {
            PrivateKeyDer::Pkcs1(pkcs1) => {
                ring::signature::RsaKeyPair::from_der(pkcs1.secret_pkcs1_der())
            }
            PrivateKeyDer::Pkcs8(pkcs8) => {
                ring::signature::RsaKeyPair::from_pkcs8(pkcs8.secret_pkcs8_der())
            }
            _ => return Err(invalid("an RSA key")),
        }
        .map_err(|_| invalid("a usable RSA key"))?;
        Ok(Self::with_key(key_id, key))
    }

    /// A signer naming `key_id` with `key`.
    pub fn with_key(key_id: String, key: ring::signature::RsaKeyPair) -> Self {
        Self {
            key_id,
            key,
            rng: ring::rand::SystemRandom::new(),
            sign_host: true,
        }
    }

    /// This signer without `host` among the signed headers, as the OCI SDKs sign requests to
    /// the identity service's federation endpoints.
    pub fn without_host(mut self) -> Self {
        self.sign_host = false;
        self
    }

    /// Adds `date`, `host` (and for a body its length, type and digest) and the
    /// `authorization` signature to `headers` of a `method` request to `url` carrying `body`.
    pub fn sign(
        &self,
        method: &reqwest::Method,
        url: &reqwest::Url,
        body: Option<&[u8]>,
        headers: &mut HeaderMap,
    ) -> Result<()> {
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let date = chrono::DateTime::from_timestamp(i64::try_from(seconds).unwrap_or(0), 0)
            .unwrap_or_default()
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        let target = match url.query() {
            Some(query) => format!("{} {}?{query}", method.as_str().to_lowercase(), url.path()),
            None => format!("{} {}", method.as_str().to_lowercase(), url.path()),
        };
        let mut values = vec![("date", date), ("(request-target)", target)];
        if self.sign_host {
            values.push(("host", host));
        }
        if let Some(body) = body {
            let digest = ring::digest::digest(&ring::digest::SHA256, body);
            values.push(("content-length", body.len().to_string()));
            values.push(("content-type", "application/json".to_owned()));
            values.push(("x-content-sha256", STANDARD.encode(digest.as_ref())));
        }
        let names: Vec<&str> = values.iter().map(|(name, _)| *name).collect();
        let signing_string = signing_string(&values);
        let mut signature = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(
                &ring::signature::RSA_PKCS1_SHA256,
                &self.rng,
                signing_string.as_bytes(),
                &mut signature,
            )
            .map_err(|_| ProviderError::invalid_config("failed to sign the OCI request"))?;
        let authorization = format!(
            "Signature version=\"1\",keyId=\"{}\",algorithm=\"rsa-sha256\",headers=\"{}\",signature=\"{}\"",
            self.key_id,
            names.join(" "),
            STANDARD.encode(signature)
        );
        for (name, value) in &values {
            if *name == "(request-target)" {
                continue;
            }
            headers.insert(*name, header_value(value)?);
        }
        headers.insert("authorization", header_value(&authorization)?);
        Ok(())
    }
}

/// The lines `name: value` joined by `\n`.
pub(super) fn signing_string(values: &[(&str, String)]) -> String {
    values
        .iter()
        .map(|(name, value)| format!("{name}: {value}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn header_value(value: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(value)
        .map_err(|_| ProviderError::invalid_config("the OCI key id is not a valid header value"))
}
