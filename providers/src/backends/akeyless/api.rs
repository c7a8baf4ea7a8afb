//! The Akeyless V2 REST API, as this backend uses it (the commands upstream calls through
//! `akeyless-go` v4): every command is a `POST /<command>` with a JSON body carrying the token
//! (`token`, or `uid-token` for universal-identity tokens starting `u-`). Bodies are bounded
//! before they are read.

use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};

/// The public API (upstream's `defaultAPIUrl`).
pub const DEFAULT_URL: &str = "https://api.akeyless.io";

/// Longest answer read.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Request timeout (upstream's HTTP client's).
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Upstream's message for a `caBundle` without a usable certificate.
const INVALID_CA: &str = "failed to append caBundle";

/// An Akeyless API (the public one or a gateway's `/v2`).
pub struct Api {
    http: reqwest::Client,
    base: reqwest::Url,
}

impl Api {
    /// A client of `gateway` (empty: the public API), trusting `ca` when given. A gateway URL
    /// gets `/v2` appended unless it already ends so or its root already answers commands
    /// ("unknown command" to an empty one), as upstream's `getV2Url`.
    pub async fn new(gateway: &str, ca: Option<&[u8]>) -> Result<Self> {
        let roots = match ca {
            Some(pem) => Roots::Bundle {
                pem,
                invalid: INVALID_CA,
            },
            None => Roots::System,
        };
        let http = https_client(
            tls_config(roots)?,
            TIMEOUT,
            None,
            "failed to build http client",
        )?;
        let url = if gateway.is_empty() {
            DEFAULT_URL
        } else {
            gateway
        };
        let mut base = reqwest::Url::parse(url)
            .map_err(|_| ProviderError::invalid_config(error::INVALID_URL))?;
        if !gateway.is_empty() && !base.path().trim_end_matches('/').ends_with("/v2") {
            let probe = http
                .post(base.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .send()
                .await;
            let answers_commands = match probe {
                Ok(response) => read_body(response, 4096, "probe")
                    .await
                    .is_ok_and(|body| String::from_utf8_lossy(&body).contains("unknown command")),
                Err(_) => false,
            };
            if !answers_commands {
                let path = format!("{}/v2", base.path().trim_end_matches('/'));
                base.set_path(&path);
            }
        }
        Ok(Self { http, base })
    }

    /// The URL commands go to.
    pub fn url(&self) -> &reqwest::Url {
        &self.base
    }

    /// Sends `command` with `body` (and `token` when given); the status and the answer.
    pub async fn call(
        &self,
        command: &str,
        mut body: Map<String, Value>,
        token: Option<&str>,
    ) -> Result<(StatusCode, Vec<u8>)> {
        if let Some(token) = token {
            let field = if token.starts_with("u-") {
                "uid-token"
            } else {
                "token"
            };
            body.insert(field.to_owned(), token.into());
        }
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ProviderError::invalid_config(error::INVALID_URL))?
            .pop_if_empty()
            .push(command);
        let action = format!("akeyless {command}");
        let response = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(Value::Object(body).to_string())
            .send()
            .await
            .map_err(|failure| transport_error(&action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, &action).await?;
        Ok((status, bytes))
    }

    /// [`Self::call`], a non-2xx answer being an error described as `action`'s.
    pub async fn json<T: DeserializeOwned>(
        &self,
        command: &str,
        body: Map<String, Value>,
        token: Option<&str>,
        action: &str,
    ) -> Result<T> {
        let (status, bytes) = self.call(command, body, token).await?;
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        // serde's message may quote a value, so only the position is kept.
        serde_json::from_slice(&bytes).map_err(|failure| {
            ProviderError::invalid_data(format!(
                "{action}: unexpected response at line {} column {}",
                failure.line(),
                failure.column()
            ))
        })
    }
}
