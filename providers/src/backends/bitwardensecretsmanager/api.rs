//! The REST API of `bitwarden-sdk-server` as upstream's `SdkClient` calls it: every call goes to
//! `<bitwardenServerSDKURL>/rest/api/1/...` with the machine account's access token in
//! `Warden-Access-Token` and the Bitwarden API and identity URLs in `Warden-Api-Url` and
//! `Warden-Identity-Url` (the server logs in with them for each request), and a JSON body, even
//! on GET and DELETE:
//!
//! * `GET /secret` `{"id"}`: one secret;
//! * `GET /secrets` `{"organizationID"}`: the identifiers (id, key, organization) of every
//!   secret of an organization the account can see;
//! * `POST /secret` `{"key", "note", "organizationId", "projectIds", "value"}`: a new secret;
//! * `PUT /secret` with `"id"` besides: an updated one;
//! * `DELETE /secret` `{"ids"}`: per-id results `{"data": [{"id", "error"}]}`.
//!
//! Answers other than 200 are errors (see [`super::error`]).

use std::time::Duration;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::error;
use crate::error::Result;
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};
use crate::value::SecretValue;

/// Longest answer read: a list of every secret of an organization, or one secret.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Request timeout (upstream's client gives up after 10 s).
const TIMEOUT: Duration = Duration::from_secs(10);

/// The API prefix of the SDK server.
const API_PATH: &str = "/rest/api/1";

/// A secret as the SDK server returns it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Secret {
    /// The secret's UUID.
    pub id: String,
    /// Its name.
    #[serde(default)]
    pub key: String,
    /// Its note.
    #[serde(default)]
    pub note: String,
    /// The project it belongs to, if any.
    #[serde(default)]
    pub project_id: Option<String>,
    /// Its value.
    #[serde(default)]
    pub value: String,
}

/// One entry of a list: which secret, by id and name.
#[derive(Debug, Clone, Deserialize)]
pub struct Identifier {
    /// The secret's UUID.
    pub id: String,
    /// Its name.
    #[serde(default)]
    pub key: String,
}

#[derive(Deserialize)]
struct Identifiers {
    #[serde(default)]
    data: Option<Vec<Identifier>>,
}

#[derive(Deserialize)]
struct Deleted {
    #[serde(default)]
    data: Option<Vec<DeleteResult>>,
}

/// The outcome of deleting one id.
#[derive(Debug, Deserialize)]
pub struct DeleteResult {
    /// The id.
    pub id: String,
    /// Why it was not deleted, if it was not.
    #[serde(default)]
    pub error: Option<String>,
}

/// A secret to create (`id: None`) or update, as upstream sends it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Write<'a> {
    /// The secret to update; absent for a creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// Its name.
    pub key: &'a str,
    /// Its note.
    pub note: &'a str,
    /// The store's organization.
    pub organization_id: &'a str,
    /// The store's project (upstream writes to exactly one).
    pub project_ids: [&'a str; 1],
    /// The value.
    pub value: &'a str,
}

/// Where the SDK server is and whom it logs in as.
pub struct Config {
    /// `bitwardenServerSDKURL`.
    pub server_url: String,
    /// `apiURL`, without a trailing `/` (empty: the server's default).
    pub api_url: String,
    /// `identityURL`, without a trailing `/` (empty: the server's default).
    pub identity_url: String,
    /// The machine account's access token.
    pub token: SecretValue,
}

/// A client of one SDK server for one machine account.
pub struct SdkServer {
    http: reqwest::Client,
    config: Config,
}

impl SdkServer {
    /// A client trusting `ca` (PEM; none: the system roots, which honour `SSL_CERT_FILE`).
    pub fn new(config: Config, ca: Option<&[u8]>) -> Result<Self> {
        let roots = match ca {
            Some(pem) => Roots::Bundle {
                pem,
                invalid: "failed to append caBundle",
            },
            None => Roots::System,
        };
        let http = https_client(
            tls_config(roots)?,
            TIMEOUT,
            Some("external-secrets"),
            "error creating https client",
        )?;
        Ok(Self { http, config })
    }

    /// The secret with UUID `id`.
    pub async fn get(&self, id: &str) -> Result<Secret> {
        let body = serde_json::json!({ "id": id });
        self.call(Method::GET, "/secret", &body, "failed to get secret")
            .await
    }

    /// The identifiers of every secret of `organization` the account can see.
    pub async fn list(&self, organization: &str) -> Result<Vec<Identifier>> {
        let body = serde_json::json!({ "organizationID": organization });
        let answer: Identifiers = self
            .call(Method::GET, "/secrets", &body, "failed to list secrets")
            .await?;
        Ok(answer.data.unwrap_or_default())
    }

    /// Creates (`write.id` unset) or updates a secret.
    pub async fn write(&self, write: &Write<'_>) -> Result<Secret> {
        let (method, action) = match write.id {
            None => (Method::POST, "failed to create secret"),
            Some(_) => (Method::PUT, "failed to update secret"),
        };
        self.call(method, "/secret", write, action).await
    }

    /// Deletes the secrets `ids`, returning each one's outcome.
    pub async fn delete(&self, ids: &[&str]) -> Result<Vec<DeleteResult>> {
        let body = serde_json::json!({ "ids": ids });
        let answer: Deleted = self
            .call(Method::DELETE, "/secret", &body, "failed to delete secret")
            .await?;
        Ok(answer.data.unwrap_or_default())
    }

    /// One call: `body` as JSON to `path`, the 200 answer decoded.
    async fn call<Body: Serialize + ?Sized, Answer: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &Body,
        action: &str,
    ) -> Result<Answer> {
        let body = serde_json::to_vec(body).map_err(|failure| error::encoding(action, &failure))?;
        let url = format!(
            "{}{API_PATH}{path}",
            self.config.server_url.trim_end_matches('/')
        );
        let response = self
            .http
            .request(method, url)
            .header(
                "Warden-Access-Token",
                self.config.token.expose_str().unwrap_or_default(),
            )
            .header("Warden-Api-Url", &self.config.api_url)
            .header("Warden-Identity-Url", &self.config.identity_url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if status != reqwest::StatusCode::OK {
            return Err(error::status(action, status, &bytes));
        }
        serde_json::from_slice(&bytes).map_err(|failure| error::bad_body(action, &failure))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_upstreams_bodies() {
        let write = Write {
            id: None,
            key: "db",
            note: "n",
            organization_id: "org",
            project_ids: ["p"],
            value: "v",
        };
        assert_eq!(
            serde_json::to_value(&write).unwrap(),
            serde_json::json!({"key": "db", "note": "n", "organizationId": "org",
                "projectIds": ["p"], "value": "v"})
        );
        let update = Write {
            id: Some("id"),
            ..write
        };
        assert_eq!(serde_json::to_value(&update).unwrap()["id"], "id");
    }

    #[test]
    fn bundles_that_hold_no_certificate_are_refused_with_upstreams_message() {
        let config = || Config {
            server_url: "https://sdk".into(),
            api_url: String::new(),
            identity_url: String::new(),
            token: SecretValue::from("t"),
        };
        let error = SdkServer::new(config(), Some(b"not pem")).err().unwrap();
        assert_eq!(error.message(), "failed to append caBundle");
        assert!(SdkServer::new(config(), None).is_ok());
    }
}
