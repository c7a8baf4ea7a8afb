//! The Infisical REST API, as this backend uses it (the endpoints upstream's `infisical/go-sdk`
//! v0.8 calls, under `<hostAPI>/api`): machine-identity logins (`/v1/auth/<method>/login`),
//! token revocation, the raw secrets of a project environment (`/v3/secrets/raw`, list and by
//! key; create, update and delete), and the project lookup by slug the writes need for the
//! project id. Bodies are bounded before they are read.

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};

/// The `User-Agent` of upstream's SDK client.
const USER_AGENT: &str = "infisical-go-sdk";

/// Longest answer read (a whole environment's secrets).
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Request timeout.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Upstream's message for a `caBundle` without a usable certificate.
const INVALID_CA: &str = "failed to get CA certificate: no valid certificate in caBundle";

/// An Infisical API endpoint (`<hostAPI>` with `/api` appended as the SDK does).
pub struct Api {
    http: reqwest::Client,
    base: reqwest::Url,
}

/// One secret as the raw endpoints return it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Secret {
    /// Its name.
    pub secret_key: String,
    /// Its value (references expanded when asked).
    #[serde(default)]
    pub secret_value: String,
    /// The folder it lives in (list answers).
    #[serde(default)]
    pub secret_path: Option<String>,
}

/// The answer of a list.
#[derive(Debug, Default, Deserialize)]
struct SecretList {
    #[serde(default)]
    secrets: Vec<Secret>,
    #[serde(default)]
    imports: Vec<SecretList>,
}

/// Where the secrets of a store live.
pub struct Scope<'a> {
    /// The project slug (`workspaceSlug`).
    pub project: &'a str,
    /// The environment slug.
    pub environment: &'a str,
    /// Resolve `${...}` references in values.
    pub expand: bool,
}

impl Scope<'_> {
    /// The query of a read of folder `path`: the scope, the flags, and one `extra` pair.
    fn query(
        &self,
        path: &str,
        imports: bool,
        extra: (&'static str, &str),
    ) -> Vec<(&'static str, String)> {
        vec![
            ("workspaceSlug", self.project.to_owned()),
            ("environment", self.environment.to_owned()),
            ("secretPath", path.to_owned()),
            ("expandSecretReferences", self.expand.to_string()),
            ("include_imports", imports.to_string()),
            (extra.0, extra.1.to_owned()),
        ]
    }
}

/// The secret a write addresses.
pub struct Target<'a> {
    /// The project's id (writes do not take the slug).
    pub project_id: &'a str,
    /// The environment slug.
    pub environment: &'a str,
    /// The folder.
    pub path: &'a str,
    /// The secret's name.
    pub key: &'a str,
}

impl Api {
    /// A client of `host_api`, trusting `ca` (PEM) when given, otherwise the system roots.
    pub fn new(host_api: &str, ca: Option<&[u8]>) -> Result<Self> {
        let mut base = reqwest::Url::parse(host_api).map_err(|failure| {
            ProviderError::invalid_config(format!("invalid hostAPI {host_api:?}: {failure}"))
        })?;
        if base.cannot_be_a_base() {
            return Err(ProviderError::invalid_config(format!(
                "invalid hostAPI {host_api:?}: not a base URL"
            )));
        }
        if !base.path().trim_end_matches('/').ends_with("/api") {
            let path = format!("{}/api", base.path().trim_end_matches('/'));
            base.set_path(&path);
        }
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
            Some(USER_AGENT),
            "failed to build http client",
        )?;
        Ok(Self { http, base })
    }

    /// Logs in at `/v1/auth/<method>/login` with `body`; the access token and its lifetime
    /// in seconds.
    pub async fn login(&self, method: &str, body: &Value) -> Result<(String, u64)> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Login {
            access_token: String,
            #[serde(default)]
            expires_in: u64,
        }
        let path = ["v1", "auth", method, "login"];
        let action = "failed to authenticate";
        let login: Login = self
            .json(Method::POST, &path, &[], None, Some(body), action)
            .await?;
        Ok((login.access_token, login.expires_in))
    }

    /// Revokes `token` (upstream's `Close`).
    pub async fn revoke(&self, token: &str) -> Result<()> {
        let body = serde_json::json!({ "accessToken": token });
        let path = ["v1", "auth", "token", "revoke"];
        let _: Value = self
            .json(
                Method::POST,
                &path,
                &[],
                None,
                Some(&body),
                "failed to revoke access token",
            )
            .await?;
        Ok(())
    }

    /// The secret `key` in folder `path`; `None` when the API answers 404.
    pub async fn secret(
        &self,
        token: &str,
        scope: &Scope<'_>,
        path: &str,
        key: &str,
        imports: bool,
    ) -> Result<Option<Secret>> {
        #[derive(Deserialize)]
        struct One {
            secret: Secret,
        }
        let query = scope.query(path, imports, ("type", "shared"));
        let query: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let action = "failed to get secret";
        let segments = ["v3", "secrets", "raw", key];
        let (status, bytes) = self
            .send(Method::GET, &segments, &query, Some(token), None, action)
            .await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let one: One = parse(status, &bytes, action)?;
        Ok(Some(one.secret))
    }

    /// Every secret of folder `path` (and below when `recursive`), imports included; a key
    /// of the folder wins over an imported one, as the SDK merges them.
    pub async fn secrets(
        &self,
        token: &str,
        scope: &Scope<'_>,
        path: &str,
        recursive: bool,
        imports: bool,
    ) -> Result<Vec<Secret>> {
        let recursive = recursive.to_string();
        let query = scope.query(path, imports, ("recursive", &recursive));
        let query: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let action = "failed to list secrets";
        let list: SecretList = self
            .json(
                Method::GET,
                &["v3", "secrets", "raw"],
                &query,
                Some(token),
                None,
                action,
            )
            .await?;
        let mut secrets = list.secrets;
        for import in list.imports {
            for secret in import.secrets {
                if !secrets.iter().any(|s| s.secret_key == secret.secret_key) {
                    secrets.push(secret);
                }
            }
        }
        secrets.sort_by(|a, b| a.secret_key.cmp(&b.secret_key));
        Ok(secrets)
    }

    /// Creates (`POST`), updates (`PATCH`) or deletes (`DELETE`) the secret at `target`;
    /// `value` for the first two. A 404 is returned as a status, for the caller to judge.
    pub async fn write(
        &self,
        token: &str,
        method: Method,
        target: &Target<'_>,
        value: Option<&str>,
    ) -> Result<StatusCode> {
        let mut body = serde_json::json!({
            "workspaceId": target.project_id,
            "environment": target.environment,
            "secretPath": target.path,
            "type": "shared",
        });
        if let (Some(value), Some(object)) = (value, body.as_object_mut()) {
            object.insert("secretValue".into(), value.into());
            object.insert("skipMultilineEncoding".into(), true.into());
        }
        let action = match method {
            Method::POST => "failed to create secret",
            Method::PATCH => "failed to update secret",
            _ => "failed to delete secret",
        };
        let segments = ["v3", "secrets", "raw", target.key];
        let (status, bytes) = self
            .send(method, &segments, &[], Some(token), Some(&body), action)
            .await?;
        if status.is_success() || status == StatusCode::NOT_FOUND {
            return Ok(status);
        }
        Err(error::status(action, status, &bytes))
    }

    /// The id of the project `slug` (`/v1/projects/slug/{slug}`, then the older
    /// `/v1/workspace/slug/{slug}` when that is 404, as upstream).
    pub async fn project_id(&self, token: &str, slug: &str) -> Result<String> {
        #[derive(Deserialize)]
        struct Project {
            #[serde(default)]
            id: String,
        }
        let action = format!("failed to resolve project id for slug {slug:?}");
        let mut last = None;
        for prefix in ["projects", "workspace"] {
            let segments = ["v1", prefix, "slug", slug];
            let (status, bytes) = self
                .send(Method::GET, &segments, &[], Some(token), None, &action)
                .await?;
            if status == StatusCode::NOT_FOUND {
                last = Some(error::status(&action, status, &bytes));
                continue;
            }
            let project: Project = parse(status, &bytes, &action)?;
            if project.id.is_empty() {
                return Err(ProviderError::invalid_data(format!(
                    "project lookup for slug {slug:?} returned no id"
                )));
            }
            return Ok(project.id);
        }
        Err(last
            .unwrap_or_else(|| ProviderError::invalid_config(action.clone()))
            .context(format!("no Infisical project found for slug {slug:?}")))
    }

    async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        token: Option<&str>,
        body: Option<&Value>,
        action: &str,
    ) -> Result<T> {
        let (status, bytes) = self.send(method, path, query, token, body, action).await?;
        parse(status, &bytes, action)
    }

    /// Sends a request and reads the (bounded) answer, whatever its status.
    async fn send(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        token: Option<&str>,
        body: Option<&Value>,
        action: &str,
    ) -> Result<(StatusCode, Vec<u8>)> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ProviderError::invalid_config("invalid hostAPI: not a base URL"))?
            .pop_if_empty()
            .extend(path);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = self.http.request(method, url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
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

/// A 2xx answer's JSON, or the error the status means.
fn parse<T: DeserializeOwned>(status: StatusCode, bytes: &[u8], action: &str) -> Result<T> {
    if !status.is_success() {
        return Err(error::status(action, status, bytes));
    }
    // serde's message may quote a value, so only the position is kept.
    serde_json::from_slice(bytes).map_err(|failure| {
        ProviderError::invalid_data(format!(
            "{action}: unexpected response at line {} column {}",
            failure.line(),
            failure.column()
        ))
    })
}
