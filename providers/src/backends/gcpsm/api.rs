//! The Secret Manager v1 REST API (the HTTP/JSON mapping of `google.cloud.secretmanager.v1`)
//! over one `reqwest` client on rustls + ring, with the store's bearer tokens.
//!
//! Only the calls upstream's provider makes: `secrets.get|list|create|patch|delete|addVersion`,
//! `secrets.versions.access|list`. Lists follow `nextPageToken` for at most [`MAX_PAGES`] pages
//! of [`PAGE_SIZE`]; answers are read up to [`MAX_BODY_BYTES`] (a secret payload is at most
//! 64 KiB, so a list page is the largest answer).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::auth::TokenSource;
use super::error::{Failure, failure};
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};

/// Request timeout.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Largest answer read.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// Page size of lists.
const PAGE_SIZE: &str = "250";
/// Most pages followed by one list (250 000 secrets).
const MAX_PAGES: usize = 1000;

/// A secret's metadata as the API returns it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Secret {
    /// The full resource name.
    pub name: String,
    /// Labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// Pub/Sub topics notified of changes.
    #[serde(default)]
    pub topics: Vec<Topic>,
    /// The etag, sent back on update and delete.
    #[serde(default)]
    pub etag: String,
}

/// A Pub/Sub topic reference.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub(super) struct Topic {
    /// `projects/P/topics/T`.
    pub name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SecretPage {
    #[serde(default)]
    secrets: Vec<Secret>,
    #[serde(default)]
    next_page_token: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VersionPage {
    #[serde(default)]
    versions: Vec<Version>,
    #[serde(default)]
    next_page_token: String,
}

#[derive(Deserialize)]
struct Version {
    name: String,
}

/// One page of a list answer: its items and the next page's token (empty: the last page).
trait Page: serde::de::DeserializeOwned {
    type Item;
    fn into_parts(self) -> (Vec<Self::Item>, String);
}

impl Page for SecretPage {
    type Item = Secret;
    fn into_parts(self) -> (Vec<Secret>, String) {
        (self.secrets, self.next_page_token)
    }
}

impl Page for VersionPage {
    type Item = Version;
    fn into_parts(self) -> (Vec<Version>, String) {
        (self.versions, self.next_page_token)
    }
}

#[derive(Deserialize)]
struct Access {
    payload: Payload,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(default)]
    data: String,
}

/// One store's connection to Secret Manager.
pub(super) struct Api {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    tokens: Arc<TokenSource>,
}

/// The HTTPS client every Google call of this backend uses: system roots (which honour
/// `SSL_CERT_FILE`), ring.
pub(super) fn http_client() -> Result<reqwest::Client> {
    let tls = tls_config(Roots::System)?;
    https_client(
        tls,
        TIMEOUT,
        None,
        "failed to create GCP secretmanager client",
    )
}

impl Api {
    /// A connection to `endpoint` authenticating with `tokens`.
    pub(super) fn new(
        http: reqwest::Client,
        endpoint: reqwest::Url,
        tokens: Arc<TokenSource>,
    ) -> Self {
        Self {
            http,
            endpoint,
            tokens,
        }
    }

    /// Checks that a token can be had (upstream's `ts.Token()` at client creation).
    pub(super) async fn check_credentials(&self) -> Result<()> {
        self.tokens
            .authorization()
            .await
            .map(drop)
            .map_err(|error| error.context("unable to get credentials"))
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<serde_json::Value>,
        action: &str,
    ) -> Result<Vec<u8>, Failure> {
        let other = |error: ProviderError| Failure::Other {
            status: String::new(),
            error,
        };
        let mut url = self.endpoint.clone();
        url.set_path(&format!("v1/{path}"));
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let authorization = self.tokens.authorization().await.map_err(other)?;
        let mut request = self
            .http
            .request(method, url)
            .header(reqwest::header::AUTHORIZATION, authorization);
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .map_err(|error| other(transport_error(action, error)))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action)
            .await
            .map_err(other)?;
        if status.is_success() {
            Ok(bytes)
        } else {
            Err(failure(action, status, &bytes))
        }
    }

    async fn call_json<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<serde_json::Value>,
        action: &str,
    ) -> Result<T, Failure> {
        let bytes = self.call(method, path, query, body, action).await?;
        serde_json::from_slice(&bytes).map_err(|error| Failure::Other {
            status: String::new(),
            error: ProviderError::invalid_data(format!("{action}: unreadable answer: {error}")),
        })
    }

    /// The payload of a version (`versions.access`).
    pub(super) async fn access(&self, version: &str) -> Result<Vec<u8>, Failure> {
        let path = format!("{version}:access");
        let action = "unable to access Secret from SecretManager Client";
        let access: Access = self
            .call_json(Method::GET, &path, &[], None, action)
            .await?;
        STANDARD
            .decode(access.payload.data)
            .map_err(|_| Failure::Other {
                status: String::new(),
                error: ProviderError::invalid_data(format!("{action}: payload is not base64")),
            })
    }

    /// A secret's metadata (`secrets.get`).
    pub(super) async fn get_secret(&self, name: &str) -> Result<Secret, Failure> {
        self.call_json(Method::GET, name, &[], None, "unable to get secret")
            .await
    }

    /// Every item of a list call at `path` with `filter`, following page tokens.
    async fn list_all<P: Page>(
        &self,
        path: &str,
        filter: &str,
        action: &str,
    ) -> Result<Vec<P::Item>, Failure> {
        let mut all = Vec::new();
        let mut token = String::new();
        for _ in 0..MAX_PAGES {
            let mut query = vec![("pageSize", PAGE_SIZE)];
            if !filter.is_empty() {
                query.push(("filter", filter));
            }
            if !token.is_empty() {
                query.push(("pageToken", token.as_str()));
            }
            let page: P = self
                .call_json(Method::GET, path, &query, None, action)
                .await?;
            let (items, next) = page.into_parts();
            all.extend(items);
            if next.is_empty() {
                return Ok(all);
            }
            token = next;
        }
        Err(Failure::Other {
            status: String::new(),
            error: ProviderError::invalid_data(format!("{action}: too many pages")),
        })
    }

    /// Every secret under `parent` the API's `filter` selects (`secrets.list`).
    pub(super) async fn list_secrets(&self, parent: &str, filter: &str) -> Result<Vec<Secret>> {
        let path = format!("{parent}/secrets");
        self.list_all::<SecretPage>(&path, filter, "failed to list secrets")
            .await
            .map_err(Failure::into_error)
    }

    /// The highest-numbered enabled version of `secret` (upstream picks the newest by creation
    /// time; numbers grow with creation), if any.
    pub(super) async fn latest_enabled_version(
        &self,
        secret: &str,
    ) -> Result<Option<String>, Failure> {
        let path = format!("{secret}/versions");
        let versions = self
            .list_all::<VersionPage>(&path, "state:ENABLED", "failed to list secret versions")
            .await?;
        Ok(versions
            .into_iter()
            .filter_map(|version| {
                let number = version.name.rsplit('/').next()?.parse::<u64>().ok()?;
                Some((number, version.name))
            })
            .max()
            .map(|(_, name)| name))
    }

    /// Creates secret `id` under `parent` (`secrets.create`).
    pub(super) async fn create_secret(
        &self,
        parent: &str,
        id: &str,
        secret: serde_json::Value,
    ) -> Result<Secret, Failure> {
        let path = format!("{parent}/secrets");
        self.call_json(
            Method::POST,
            &path,
            &[("secretId", id)],
            Some(secret),
            "failed to create secret",
        )
        .await
    }

    /// Replaces the fields `mask` names (`secrets.patch`).
    pub(super) async fn update_secret(
        &self,
        name: &str,
        secret: serde_json::Value,
        mask: &str,
    ) -> Result<(), Failure> {
        self.call(
            Method::PATCH,
            name,
            &[("updateMask", mask)],
            Some(secret),
            "failed to update secret",
        )
        .await
        .map(drop)
    }

    /// Adds a version holding `data` (`secrets.addVersion`).
    pub(super) async fn add_version(&self, secret: &str, data: &[u8]) -> Result<(), Failure> {
        let path = format!("{secret}:addVersion");
        let body = json!({"payload": {"data": STANDARD.encode(data)}});
        self.call(
            Method::POST,
            &path,
            &[],
            Some(body),
            "failed to add secret version",
        )
        .await
        .map(drop)
    }

    /// Deletes a secret whose etag is `etag` (`secrets.delete`).
    pub(super) async fn delete_secret(&self, name: &str, etag: &str) -> Result<(), Failure> {
        let query: Vec<(&str, &str)> = if etag.is_empty() {
            Vec::new()
        } else {
            vec![("etag", etag)]
        };
        self.call(
            Method::DELETE,
            name,
            &query,
            None,
            "failed to delete secret",
        )
        .await
        .map(drop)
    }
}
