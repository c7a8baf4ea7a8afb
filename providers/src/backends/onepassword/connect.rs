//! The 1Password Connect server REST API, as this backend uses it (the endpoints upstream's
//! `connect-sdk-go` calls): vaults by id or by `name eq` filter, items by `title eq` filter, full
//! items, file contents, and item create, replace and delete. Every request carries the connect
//! token as a bearer token; responses are bounded before they are read.

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use super::error;
use super::model::{File, Item, Vault};
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};
use crate::value::SecretValue;

/// The `User-Agent` upstream sends.
const USER_AGENT: &str = "external-secrets";

/// Longest answer read (an item with its fields, or one file).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Request timeout (Connect answers from its local cache).
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A Connect server and the token to call it with.
pub struct Connect {
    http: reqwest::Client,
    host: reqwest::Url,
    token: SecretValue,
}

impl Connect {
    /// A client of the server at `host` (system trust roots, which honour `SSL_CERT_FILE`).
    pub fn new(host: &str, token: SecretValue) -> Result<Self> {
        let host = reqwest::Url::parse(host).map_err(|error| {
            ProviderError::invalid_config(format!(
                "unable to parse URL: spec.provider.onepassword.connectHost: {error}"
            ))
        })?;
        let tls = tls_config(Roots::System)?;
        let http = https_client(
            tls,
            TIMEOUT,
            Some(USER_AGENT),
            "failed to build http client",
        )?;
        Ok(Self { http, host, token })
    }

    /// A vault by id (26 lowercase letters and digits, as Connect's ids) or by name.
    pub async fn vault(&self, query: &str) -> Result<Vault> {
        let action = "error finding 1Password Vault";
        if is_id(query) {
            return self
                .json(Method::GET, &["v1", "vaults", query], &[], None, action)
                .await;
        }
        let filter = format!("name eq \"{}\"", escape(query));
        let vaults: Vec<Vault> = self
            .json(
                Method::GET,
                &["v1", "vaults"],
                &[("filter", &filter)],
                None,
                action,
            )
            .await?;
        match <[Vault; 1]>::try_from(vaults) {
            Ok([vault]) => Ok(vault),
            Err(vaults) => Err(ProviderError::invalid_config(format!(
                "{action}: found {} vaults named {query:?}",
                vaults.len()
            ))),
        }
    }

    /// The summaries of the items titled `title` in a vault.
    pub async fn items_titled(&self, vault: &str, title: &str) -> Result<Vec<Item>> {
        let filter = format!("title eq \"{}\"", escape(title));
        let path = ["v1", "vaults", vault, "items"];
        let action = "error finding 1Password Item";
        self.json(Method::GET, &path, &[("filter", &filter)], None, action)
            .await
    }

    /// The summaries of every item of a vault.
    pub async fn items(&self, vault: &str) -> Result<Vec<Item>> {
        let path = ["v1", "vaults", vault, "items"];
        let action = "error finding 1Password Item";
        self.json(Method::GET, &path, &[], None, action).await
    }

    /// One full item (fields and files).
    pub async fn item(&self, vault: &str, id: &str) -> Result<Item> {
        let path = ["v1", "vaults", vault, "items", id];
        let action = "error finding 1Password Item";
        self.json(Method::GET, &path, &[], None, action).await
    }

    /// Creates `item` in `vault`.
    pub async fn create(&self, vault: &str, item: &Item) -> Result<Item> {
        let path = ["v1", "vaults", vault, "items"];
        let action = "error creating 1Password Item";
        self.json(Method::POST, &path, &[], Some(item), action)
            .await
    }

    /// Replaces `item` (found by its id in its vault).
    pub async fn update(&self, item: &Item) -> Result<Item> {
        let path = ["v1", "vaults", &item.vault.id, "items", &item.id];
        let action = "error updating 1Password Item";
        self.json(Method::PUT, &path, &[], Some(item), action).await
    }

    /// Deletes `item`; one already gone counts as deleted.
    pub async fn delete(&self, item: &Item) -> Result<()> {
        let path = ["v1", "vaults", &item.vault.id, "items", &item.id];
        let action = "error deleting 1Password Item";
        let (status, bytes) = self.send(Method::DELETE, &path, &[], None, action).await?;
        if status.is_success() || status == StatusCode::NOT_FOUND {
            return Ok(());
        }
        Err(error::status(
            action,
            status.as_u16(),
            &message(status, &bytes),
        ))
    }

    /// The bytes of one file of an item.
    pub async fn file_content(&self, file: &File) -> Result<SecretValue> {
        let segments: Vec<&str> = file
            .content_path
            .split('/')
            .filter(|segment| !segment.is_empty())
            .collect();
        if segments.first() != Some(&"v1") || segments.contains(&"..") {
            return Err(ProviderError::invalid_data(
                "error finding 1Password Document: unexpected content path",
            ));
        }
        let action = "error finding 1Password Document";
        let body = self
            .checked(Method::GET, &segments, &[], None, action)
            .await?;
        Ok(SecretValue::new(body))
    }

    async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<&Item>,
        action: &str,
    ) -> Result<T> {
        let bytes = self.checked(method, path, query, body, action).await?;
        serde_json::from_slice(&bytes).map_err(|failure| error::bad_body(action, &failure))
    }

    /// Sends a request; a non-2xx answer is an error.
    async fn checked(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<&Item>,
        action: &str,
    ) -> Result<Vec<u8>> {
        let (status, bytes) = self.send(method, path, query, body, action).await?;
        if status.is_success() {
            return Ok(bytes);
        }
        Err(error::status(
            action,
            status.as_u16(),
            &message(status, &bytes),
        ))
    }

    /// Sends a request and reads the (bounded) answer, whatever its status.
    async fn send(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<&Item>,
        action: &str,
    ) -> Result<(StatusCode, Vec<u8>)> {
        let mut url = self.host.clone();
        url.path_segments_mut()
            .map_err(|()| {
                ProviderError::invalid_config(
                    "unable to parse URL: spec.provider.onepassword.connectHost: cannot be a base",
                )
            })?
            .pop_if_empty()
            .extend(path);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let token = self
            .token
            .expose_str()
            .ok_or_else(|| ProviderError::invalid_config("connect token is not valid UTF-8"))?;
        let mut request = self.http.request(method, url).bearer_auth(token.trim());
        if let Some(body) = body {
            let json = serde_json::to_vec(body).map_err(|failure| {
                ProviderError::invalid_request(format!("{action}: {failure}"))
            })?;
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(json);
        }
        let response = request
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        Ok((status, bytes))
    }
}

/// Connect's error message, or the status text when the body is not Connect's error JSON.
fn message(status: StatusCode, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct ConnectError {
        message: String,
    }
    match serde_json::from_slice::<ConnectError>(body) {
        Ok(error) => error.message.chars().take(256).collect(),
        Err(_) => status.canonical_reason().unwrap_or("error").to_owned(),
    }
}

/// Whether `query` has the shape of a Connect id (26 lowercase letters and digits).
fn is_id(query: &str) -> bool {
    query.len() == 26
        && query
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
}

/// A value quoted inside a Connect filter expression.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_connects_shape() {
        assert!(is_id("abcdefghijklmnopqrstuvwxy2"));
        assert!(!is_id("Production"));
        assert!(!is_id("ABCDEFGHIJKLMNOPQRSTUVWXY2"));
    }

    #[test]
    fn errors_keep_connects_message_or_the_status_text() {
        let body = br#"{"status":401,"message":"Invalid token signature"}"#;
        assert_eq!(
            message(StatusCode::UNAUTHORIZED, body),
            "Invalid token signature"
        );
        assert_eq!(message(StatusCode::BAD_GATEWAY, b"<html>"), "Bad Gateway");
    }
}
