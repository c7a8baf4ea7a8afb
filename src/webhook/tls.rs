//! The TLS settings of the webhook server from upstream's `--tls-ciphers` and
//! `--tls-min-version`.
//!
//! Cipher names are the IANA names Go uses too (`TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`).
//! As upstream, the list restricts TLS 1.2 only; TLS 1.3 suites are always on. Only suites the
//! TLS library implements exist (ECDHE with AES-GCM or ChaCha20-Poly1305); other names fail
//! as unknown names fail upstream. TLS 1.0 and 1.1 are not implemented: asking for them as the
//! minimum means 1.2.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::ResolvesServerCert;
use rustls::{ServerConfig, SupportedCipherSuite, SupportedProtocolVersion};

/// Why the TLS flags cannot be honoured.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TlsSettingsError {
    /// `--tls-ciphers` names a suite that does not exist here.
    #[error("--tls-ciphers: cipher {0} was not found")]
    UnknownCipher(String),
    /// The TLS library refused the combination.
    #[error("TLS configuration: {0}")]
    Rustls(String),
}

/// The server configuration serving the certificates `resolver` hands out, advertising `h2`
/// only when `http2` is on (`--enable-http2`).
pub fn server_config(
    provider: &CryptoProvider,
    (ciphers, min_version): (&str, &str),
    resolver: Arc<dyn ResolvesServerCert>,
    http2: bool,
) -> Result<ServerConfig, TlsSettingsError> {
    let provider = CryptoProvider {
        cipher_suites: cipher_suites(&provider.cipher_suites, ciphers)?,
        ..provider.clone()
    };
    let mut config = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(protocol_versions(min_version))
        .map_err(|error| TlsSettingsError::Rustls(error.to_string()))?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    // Upstream's `disableHTTP2` (the default) leaves `http/1.1` as the only protocol.
    config.alpn_protocols = crate::http_serve::alpn(http2);
    Ok(config)
}

/// The TLS 1.3 suites plus the TLS 1.2 suites named in `names` (comma-separated); all of
/// `available` when `names` is empty. The library's preference order is kept.
fn cipher_suites(
    available: &[SupportedCipherSuite],
    names: &str,
) -> Result<Vec<SupportedCipherSuite>, TlsSettingsError> {
    let wanted: Vec<&str> = names
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .collect();
    if wanted.is_empty() {
        return Ok(available.to_vec());
    }
    for name in &wanted {
        if !available.iter().any(|suite| suite_name(suite) == *name) {
            return Err(TlsSettingsError::UnknownCipher((*name).to_owned()));
        }
    }
    Ok(available
        .iter()
        .filter(|suite| {
            matches!(suite, SupportedCipherSuite::Tls13(_))
                || wanted.contains(&suite_name(suite).as_str())
        })
        .copied()
        .collect())
}

/// A suite's IANA name as Go spells it (rustls prefixes TLS 1.3 suites with `TLS13_`).
fn suite_name(suite: &SupportedCipherSuite) -> String {
    let name = suite.suite().as_str().unwrap_or_default();
    match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name.to_owned(),
    }
}

/// Upstream's `tlsVersion`: 1.3 for `1.3` and anything it does not know, else 1.2 and up.
fn protocol_versions(min_version: &str) -> &'static [&'static SupportedProtocolVersion] {
    static TLS13_ONLY: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
    match min_version {
        "" | "1.0" | "1.1" | "1.2" => rustls::ALL_VERSIONS,
        _ => &TLS13_ONLY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(suites: &[SupportedCipherSuite]) -> Vec<String> {
        suites.iter().map(suite_name).collect()
    }

    #[test]
    fn ciphers_restrict_tls12_only() {
        let available = rustls::crypto::ring::default_provider().cipher_suites;
        assert_eq!(cipher_suites(&available, "").unwrap(), available);
        let chosen = cipher_suites(
            &available,
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        )
        .unwrap();
        assert_eq!(
            names(&chosen),
            [
                "TLS_AES_256_GCM_SHA384",
                "TLS_AES_128_GCM_SHA256",
                "TLS_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            ]
        );
        // Naming a TLS 1.3 suite is accepted and changes nothing for TLS 1.3.
        assert!(cipher_suites(&available, "TLS_AES_128_GCM_SHA256").is_ok());
        assert_eq!(
            cipher_suites(&available, "TLS_RSA_WITH_RC4_128_SHA"),
            Err(TlsSettingsError::UnknownCipher(
                "TLS_RSA_WITH_RC4_128_SHA".into()
            ))
        );
    }

    #[test]
    fn min_version_as_upstream() {
        use rustls::ProtocolVersion::{TLSv1_2, TLSv1_3};
        let versions = |min: &str| {
            protocol_versions(min)
                .iter()
                .map(|version| version.version)
                .collect::<Vec<_>>()
        };
        for min in ["", "1.0", "1.1", "1.2"] {
            assert_eq!(versions(min), [TLSv1_3, TLSv1_2], "{min}");
        }
        assert_eq!(versions("1.3"), [TLSv1_3]);
        assert_eq!(versions("2.0"), [TLSv1_3]);
    }
}
