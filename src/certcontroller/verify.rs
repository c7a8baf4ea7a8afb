//! Whether a CA certificate, a serving certificate and its key belong together and are valid
//! for a DNS name at a given time (upstream's `ValidCert`). The cert controller asks it before
//! deciding to rotate; the webhook asks it for readiness, as upstream's webhook reuses the cert
//! controller's check.
//!
//! The chain is checked with rustls' own WebPKI verifier, so "valid" means exactly what a TLS
//! client (the API server) will accept.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;

/// Why a certificate set is not usable. Messages name the file (Secret key) concerned and never
/// contain key material.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InvalidCertificate {
    /// A file is missing or empty.
    #[error("{0} is empty")]
    Empty(&'static str),
    /// A file holds no PEM block of the expected kind, or one that does not parse.
    #[error("{file}: {reason}")]
    Unparsable {
        /// `ca.crt`, `tls.crt` or `tls.key`.
        file: &'static str,
        /// What the parser said.
        reason: String,
    },
    /// `tls.key` is not the key of `tls.crt`.
    #[error("tls.key does not belong to tls.crt: {0}")]
    KeyMismatch(String),
    /// The CA in `ca.crt` that issued the chain is not valid at the time asked.
    #[error(
        "ca.crt: no issuing CA is valid at that time ({issuers} issuing CA certificates found)"
    )]
    ExpiredCa {
        /// How many certificates in `ca.crt` issued the chain.
        issuers: usize,
    },
    /// The chain does not verify for the name at the time asked.
    #[error("tls.crt is not valid for {dns_name:?} against ca.crt: {reason}")]
    NotValid {
        /// The DNS name checked.
        dns_name: String,
        /// What the verifier said (expiry, unknown issuer, name mismatch, ...).
        reason: String,
    },
}

/// The TLS implementation's crypto: the same for serving and for checking.
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Parses `tls.crt` (leaf first, then intermediates) and `tls.key` into the key TLS serves,
/// refusing a key that does not belong to the certificate.
pub fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    provider: &CryptoProvider,
) -> Result<CertifiedKey, InvalidCertificate> {
    let chain = certificates("tls.crt", cert_pem)?;
    if key_pem.is_empty() {
        return Err(InvalidCertificate::Empty("tls.key"));
    }
    let key =
        PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| unparsable("tls.key", error))?;
    CertifiedKey::from_der(chain, key, provider).map_err(|error| match error {
        rustls::Error::InconsistentKeys(_) => InvalidCertificate::KeyMismatch(error.to_string()),
        other => unparsable("tls.key", other),
    })
}

/// Checks that `tls.crt`/`tls.key` belong together and that `tls.crt` chains to `ca.crt` and
/// is valid for `dns_name` at `at` (upstream checks "now + lookahead" before rotating, and
/// "now + 1h" for the webhook's readiness).
pub fn check(
    ca_pem: &[u8],
    cert_pem: &[u8],
    key_pem: &[u8],
    dns_name: &str,
    at: SystemTime,
) -> Result<(), InvalidCertificate> {
    let provider = crypto_provider();
    let key = certified_key(cert_pem, key_pem, &provider)?;
    check_chain(ca_pem, &key.cert, dns_name, at, provider)
}

/// Checks that the served `chain` (leaf first) chains to `ca.crt` and is valid for `dns_name`
/// at `at`.
pub fn check_chain(
    ca_pem: &[u8],
    chain: &[CertificateDer<'static>],
    dns_name: &str,
    at: SystemTime,
    provider: Arc<CryptoProvider>,
) -> Result<(), InvalidCertificate> {
    let mut roots = RootCertStore::empty();
    for certificate in certificates("ca.crt", ca_pem)? {
        roots
            .add(certificate)
            .map_err(|error| unparsable("ca.crt", error))?;
    }
    let not_valid = |reason: String| InvalidCertificate::NotValid {
        dns_name: dns_name.to_owned(),
        reason,
    };
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|error| unparsable("ca.crt", error))?;
    let server_name = ServerName::try_from(dns_name.to_owned())
        .map_err(|error| not_valid(format!("not a DNS name: {error}")))?;
    let seconds = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (leaf, intermediates) = chain
        .split_first()
        .ok_or(InvalidCertificate::Empty("tls.crt"))?;
    verifier
        .verify_server_cert(
            leaf,
            intermediates,
            &server_name,
            &[],
            UnixTime::since_unix_epoch(seconds),
        )
        .map_err(|error| not_valid(error.to_string()))?;
    issuing_ca_valid(ca_pem, chain, seconds.as_secs())
}

/// WebPKI does not check the validity period of trust anchors, Go's verifier (upstream)
/// does: some CA in `ca.crt` that issued the top of `chain` must be valid at `at` too.
fn issuing_ca_valid(
    ca_pem: &[u8],
    chain: &[CertificateDer<'static>],
    at: u64,
) -> Result<(), InvalidCertificate> {
    let at = i64::try_from(at).unwrap_or(i64::MAX);
    let top = chain.last().ok_or(InvalidCertificate::Empty("tls.crt"))?;
    let (_, top) =
        x509_parser::parse_x509_certificate(top).map_err(|error| unparsable("tls.crt", error))?;
    let mut issuers = 0;
    for ca in certificates("ca.crt", ca_pem)? {
        let (_, ca) = x509_parser::parse_x509_certificate(&ca)
            .map_err(|error| unparsable("ca.crt", error))?;
        if ca.subject().as_raw() != top.issuer().as_raw() {
            continue;
        }
        issuers += 1;
        let validity = ca.validity();
        if validity.not_before.timestamp() <= at && at <= validity.not_after.timestamp() {
            return Ok(());
        }
    }
    Err(InvalidCertificate::ExpiredCa { issuers })
}

/// Every certificate in a PEM file, at least one.
fn certificates(
    file: &'static str,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, InvalidCertificate> {
    if pem.is_empty() {
        return Err(InvalidCertificate::Empty(file));
    }
    let certificates = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| unparsable(file, error))?;
    if certificates.is_empty() {
        return Err(unparsable(file, "no CERTIFICATE block"));
    }
    Ok(certificates)
}

fn unparsable(file: &'static str, reason: impl std::fmt::Display) -> InvalidCertificate {
    InvalidCertificate::Unparsable {
        file,
        reason: reason.to_string(),
    }
}
