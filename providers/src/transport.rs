//! The HTTPS transport every backend that calls an HTTP API with reqwest shares: one way to
//! build a client on rustls + ring with the trust roots a store asks for, one bounded body
//! reader, and failures below HTTP (connection, TLS, timeout) described the same way for all of
//! them and without the URL (it may carry a templated secret).

use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

use crate::error::ProviderError;

/// The certificates a client trusts.
#[derive(Clone, Copy)]
pub enum Roots<'a> {
    /// The system's (which honour `SSL_CERT_FILE`).
    System,
    /// Only a configured bundle (`caBundle`/`caProvider`): every certificate in it must parse and
    /// at least one must be there, as upstream's `AppendCertsFromPEM` check; `invalid` is the
    /// backend's (upstream's) message when they do not.
    Bundle {
        /// The PEM certificates.
        pem: &'a [u8],
        /// The configuration error's message for an unusable bundle.
        invalid: &'static str,
    },
    /// The system's, and those of an optional extra bundle that parse (azurekv's extra CA).
    SystemAnd(Option<&'a [u8]>),
}

/// A TLS 1.2/1.3 configuration on ring trusting `roots`, still to be told whether the client
/// presents a certificate.
pub fn tls_builder(
    roots: Roots<'_>,
) -> Result<
    rustls::ConfigBuilder<rustls::ClientConfig, rustls::client::WantsClientCert>,
    ProviderError,
> {
    let roots = root_store(roots)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS12, &rustls::version::TLS13])
        .map_err(|error| ProviderError::invalid_config(format!("tls setup failed: {error}")))?
        .with_root_certificates(roots))
}

/// A TLS configuration trusting `roots`, without a client certificate.
pub fn tls_config(roots: Roots<'_>) -> Result<rustls::ClientConfig, ProviderError> {
    Ok(tls_builder(roots)?.with_no_client_auth())
}

/// An HTTPS client on `tls` whose requests give up after `timeout`. `failure` starts the
/// (configuration) error if the client cannot be built.
pub fn https_client(
    tls: rustls::ClientConfig,
    timeout: Duration,
    user_agent: Option<&'static str>,
    failure: &str,
) -> Result<reqwest::Client, ProviderError> {
    let mut builder = reqwest::Client::builder()
        .timeout(timeout)
        .tls_backend_preconfigured(tls);
    if let Some(user_agent) = user_agent {
        builder = builder.user_agent(user_agent);
    }
    builder.build().map_err(|error| {
        ProviderError::invalid_config(format!("{failure}: {}", error.without_url()))
    })
}

fn root_store(roots: Roots<'_>) -> Result<rustls::RootCertStore, ProviderError> {
    let mut store = rustls::RootCertStore::empty();
    match roots {
        Roots::Bundle { pem, invalid } => {
            let bad_bundle = || ProviderError::invalid_config(invalid);
            for certificate in CertificateDer::pem_slice_iter(pem) {
                let certificate = certificate.map_err(|_| bad_bundle())?;
                store.add(certificate).map_err(|_| bad_bundle())?;
            }
            if store.is_empty() {
                return Err(bad_bundle());
            }
        }
        Roots::System => add_system_roots(&mut store),
        Roots::SystemAnd(extra) => {
            add_system_roots(&mut store);
            for certificate in CertificateDer::pem_slice_iter(extra.unwrap_or_default()).flatten() {
                let _ = store.add(certificate);
            }
        }
    }
    Ok(store)
}

fn add_system_roots(store: &mut rustls::RootCertStore) {
    for certificate in rustls_native_certs::load_native_certs().certs {
        // Unparsable system certificates are skipped, as Go's loader does.
        let _ = store.add(certificate);
    }
}

/// A connection, TLS or timeout failure of `action`: temporary, and retried at once unless it
/// is a TLS failure (an untrusted certificate needs a configuration change, so it is a
/// configuration error that is still retried with backoff).
pub fn transport_error(action: &str, error: reqwest::Error) -> ProviderError {
    if let Some(tls) = rustls_cause(&error) {
        let message = format!("{action}: tls handshake failed: {tls}");
        return ProviderError::invalid_config(message).with_temporary(true);
    }
    if error.is_timeout() {
        return ProviderError::unavailable(format!("{action}: request timed out"));
    }
    let mut causes = String::new();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        causes.push_str(": ");
        causes.push_str(&cause.to_string());
        source = cause.source();
    }
    let error = error.without_url();
    ProviderError::unavailable(format!("{action}: {error}{causes}"))
}

/// An `application/x-www-form-urlencoded` body of `pairs` (the URL query serializer does the
/// escaping): token endpoints (OAuth, IBM IAM) take their parameters this way.
pub fn form_body(pairs: &[(&str, &str)]) -> String {
    let Ok(mut url) = reqwest::Url::parse("http://form.invalid/") else {
        return String::new();
    };
    url.query_pairs_mut().extend_pairs(pairs);
    url.query().unwrap_or_default().to_owned()
}

/// Reads a response's body, refusing one longer than `max` bytes (a hostile or broken server
/// cannot make us allocate without bound). Failures are described as `action`'s.
pub async fn read_body(
    mut response: reqwest::Response,
    max: usize,
    action: &str,
) -> Result<Vec<u8>, ProviderError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| transport_error(action, error))?
    {
        if body.len() + chunk.len() > max {
            return Err(ProviderError::invalid_data(format!(
                "{action}: response body exceeds {max} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The rustls error behind a transport error, looking inside the `io::Error`s that wrap it
/// (their `source()` skips the wrapped error).
fn rustls_cause(error: &reqwest::Error) -> Option<&rustls::Error> {
    let mut current = std::error::Error::source(error);
    while let Some(cause) = current {
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        current = match cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => cause.source(),
        };
    }
    None
}
