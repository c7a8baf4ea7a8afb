//! The DevOps Secrets Vault REST API as upstream's `dsv-sdk-go` calls it: a bearer token from
//! `POST /v1/token` (client-credentials grant, kept until 90% of its lifetime has passed) and
//! a secret from `GET /v1/secrets/<path>`. URLs come from the store's `urlTemplate` (default
//! `https://%s.secretsvaultcloud.%s/v1/%s%s`: tenant, TLD, resource, `/`-prefixed path).

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde::Deserialize;
use tokio::sync::Mutex;

use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};
use crate::value::SecretValue;

/// The template upstream's SDK uses when the store sets none.
pub const DEFAULT_URL_TEMPLATE: &str = "https://%s.secretsvaultcloud.%s/v1/%s%s";

/// The TLD upstream's SDK uses when the store sets none.
pub const DEFAULT_TLD: &str = "com";

/// Longest answer read (one secret).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Request timeout.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Longest token lifetime believed (a day), whatever the server says.
const MAX_TOKEN_SECONDS: u64 = 24 * 60 * 60;

/// A secret as DSV returns it: its data is any JSON object (or null).
#[derive(Debug, Deserialize)]
pub struct Secret {
    /// The secret's data.
    #[serde(default)]
    pub data: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

/// Where the vault is and who the client is.
pub struct Config {
    /// `urlTemplate`, or the default.
    pub url_template: String,
    /// `tenant`.
    pub tenant: String,
    /// `tld`, or `com`.
    pub tld: String,
    /// The client id.
    pub client_id: SecretValue,
    /// The client secret.
    pub client_secret: SecretValue,
}

/// A DSV tenant and its client credentials, with the current token.
pub struct Dsv {
    http: reqwest::Client,
    config: Config,
    token: Mutex<Option<(SecretValue, Instant)>>,
}

impl Dsv {
    /// A client of the tenant (system trust roots, which honour `SSL_CERT_FILE`, as upstream).
    pub fn new(config: Config) -> Result<Self> {
        if config.url_template.matches("%s").count() != 4 {
            return Err(ProviderError::invalid_config(
                "urlTemplate must hold four %s: tenant, tld, resource and path",
            ));
        }
        let http = https_client(
            tls_config(Roots::System)?,
            TIMEOUT,
            Some("external-secrets"),
            "failed to create DSV client",
        )?;
        Ok(Self {
            http,
            config,
            token: Mutex::new(None),
        })
    }

    /// The URL of `resource` and `path` (upstream's `urlFor`), each path segment escaped.
    fn url(&self, resource: &str, path: &str) -> String {
        let path = path.trim_start_matches('/');
        let path = if path.is_empty() {
            String::new()
        } else {
            let escaped: Vec<String> = path.split('/').map(url_escape).collect();
            format!("/{}", escaped.join("/"))
        };
        let mut url = String::new();
        let values = [
            self.config.tenant.as_str(),
            self.config.tld.as_str(),
            resource,
            path.as_str(),
        ];
        let mut rest = self.config.url_template.as_str();
        for value in values {
            let Some((before, after)) = rest.split_once("%s") else {
                break;
            };
            url.push_str(before);
            url.push_str(value);
            rest = after;
        }
        url.push_str(rest);
        url
    }

    /// A valid access token: the kept one, or a new one.
    pub async fn token(&self) -> Result<SecretValue> {
        let mut kept = self.token.lock().await;
        if let Some((token, until)) = kept.as_ref()
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let action = "fetching token";
        let text = |value: &SecretValue| value.expose_str().unwrap_or_default().to_owned();
        let body = serde_json::json!({
            "grant_type": "client_credentials",
            "client_id": text(&self.config.client_id),
            "client_secret": text(&self.config.client_secret),
        });
        let response = self
            .http
            .post(self.url("token", ""))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        let answer: TokenAnswer =
            serde_json::from_slice(&bytes).map_err(|failure| error::bad_body(action, &failure))?;
        let lifetime = answer.expires_in.min(MAX_TOKEN_SECONDS);
        let until = Instant::now() + Duration::from_secs(lifetime - lifetime * 9 / 10);
        let token = SecretValue::from(answer.access_token);
        *kept = Some((token.clone(), until));
        Ok(token)
    }

    /// The secret at `path`.
    pub async fn secret(&self, path: &str) -> Result<Secret> {
        let token = self.token().await?;
        let action = "error getting secret from DSV";
        let response = self
            .http
            .get(self.url("secrets", path))
            .bearer_auth(token.expose_str().unwrap_or_default())
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if status == StatusCode::UNAUTHORIZED {
            // A revoked token is fetched anew at the next call.
            *self.token.lock().await = None;
        }
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        serde_json::from_slice(&bytes).map_err(|failure| error::bad_body(action, &failure))
    }
}

/// `segment` with everything but unreserved characters (and `:`, DSV's other path separator)
/// percent-encoded, so a key cannot add a query or change the host.
fn url_escape(segment: &str) -> String {
    let mut escaped = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~:".contains(&byte) {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dsv(template: &str) -> Result<Dsv> {
        Dsv::new(Config {
            url_template: template.to_owned(),
            tenant: "acme".into(),
            tld: "eu".into(),
            client_id: SecretValue::from("id"),
            client_secret: SecretValue::from("secret"),
        })
    }

    #[test]
    fn urls_follow_the_sdks_template() {
        let vault = dsv(DEFAULT_URL_TEMPLATE).unwrap();
        assert_eq!(
            vault.url("token", ""),
            "https://acme.secretsvaultcloud.eu/v1/token"
        );
        assert_eq!(
            vault.url("secrets", "/apps/db:prod"),
            "https://acme.secretsvaultcloud.eu/v1/secrets/apps/db:prod"
        );
        assert_eq!(
            vault.url("secrets", "a?b#c d"),
            "https://acme.secretsvaultcloud.eu/v1/secrets/a%3Fb%23c%20d"
        );
        assert!(dsv("https://%s.example/%s").is_err());
    }
}
