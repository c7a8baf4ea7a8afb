//! The IBM Cloud Secrets Manager v2 API as this backend uses it: a secret by id
//! (`GET /api/v2/secrets/{id}`) and by name in a secret group
//! (`GET /api/v2/secret_groups/{group}/secret_types/{type}/secrets/{name}`), each with the IAM
//! access token as `Authorization: Bearer`. Both answer the secret (with its current version's
//! payload) as one JSON object whose fields depend on `secret_type`. Bodies are bounded.

use reqwest::StatusCode;
use serde_json::{Map, Value};

use super::auth::Iam;
use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};

/// Longest answer read (a secret of up to Secrets Manager's 1 MiB payload, with room).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Request timeout (upstream's context timeout).
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// One secret as Secrets Manager answers it.
pub type Secret = Map<String, Value>;

/// Which secret to ask for.
#[derive(Debug, Clone, Copy)]
pub enum Lookup<'a> {
    /// By its id (a UUID).
    Id(&'a str),
    /// By name, type and group name.
    Name {
        /// The secret group's name.
        group: &'a str,
        /// The secret type (`arbitrary`, `kv`, ...).
        secret_type: &'a str,
        /// The secret's name.
        name: &'a str,
    },
}

/// A Secrets Manager instance and the IAM tokens to call it with.
pub struct Api {
    http: reqwest::Client,
    base: reqwest::Url,
    iam: Iam,
}

impl Api {
    /// A client of the instance at `service_url`, trusting the system roots (upstream has no CA
    /// field for this provider).
    pub fn new(service_url: &str, iam: Iam) -> Result<Self> {
        let base = reqwest::Url::parse(service_url).map_err(|failure| {
            ProviderError::invalid_config(format!("cannot setup new ibm client: {failure}"))
        })?;
        if base.cannot_be_a_base() {
            return Err(ProviderError::invalid_config(
                "cannot setup new ibm client: serviceURL cannot be a base URL",
            ));
        }
        let http = https_client(
            tls_config(Roots::System)?,
            TIMEOUT,
            Some("external-secrets"),
            "cannot setup new ibm client",
        )?;
        Ok(Self { http, base, iam })
    }

    /// The secret `lookup` names.
    pub async fn secret(&self, lookup: Lookup<'_>) -> Result<Secret> {
        let mut url = self.base.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| ProviderError::invalid_config("serviceURL cannot be a base URL"))?;
            segments.pop_if_empty().extend(["api", "v2"]);
            match lookup {
                Lookup::Id(id) => {
                    segments.extend(["secrets", id]);
                }
                Lookup::Name {
                    group,
                    secret_type,
                    name,
                } => {
                    segments.extend([
                        "secret_groups",
                        group,
                        "secret_types",
                        secret_type,
                        "secrets",
                        name,
                    ]);
                }
            }
        }
        let action = "failed to get secret from IBM Secrets Manager";
        let token = self.iam.token(&self.http).await?;
        let response = self
            .http
            .get(url)
            .bearer_auth(token.expose_str().unwrap_or_default())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let body = read_body(response, MAX_BODY_BYTES, action).await?;
        if status == StatusCode::UNAUTHORIZED {
            self.iam.forget().await;
        }
        if !status.is_success() {
            return Err(error::secrets_manager(action, status, &body));
        }
        serde_json::from_slice(&body).map_err(|failure| error::bad_body(action, &failure))
    }
}
