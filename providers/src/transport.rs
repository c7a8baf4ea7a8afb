//! Failures below HTTP (connection, TLS, timeout) of the providers that call HTTP APIs with
//! reqwest, described the same way for all of them and without the URL (it may carry a
//! templated secret).

use crate::error::ProviderError;

/// A connection, TLS or timeout failure of `action`: temporary, and retried at once unless it
/// is a TLS failure (an untrusted certificate needs a configuration change, so it is a
/// configuration error that is still retried with backoff).
pub(crate) fn transport_error(action: &str, error: reqwest::Error) -> ProviderError {
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

/// Reads a response's body, refusing one longer than `max` bytes (a hostile or broken server
/// cannot make us allocate without bound). Failures are described as `action`'s.
#[cfg(feature = "onepassword")]
pub(crate) async fn read_body(
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
