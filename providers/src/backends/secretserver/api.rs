//! Secret Server's REST API as upstream's SDK (`tss-sdk-go` v3, `server/server.go` and
//! `server/secret.go`) calls it.
//!
//! * Auth: an access token from the store is sent as it is. Otherwise the server is probed
//!   once: `GET /api/v1/healthcheck` answering healthy (JSON `{"healthy": true}`, or a body
//!   saying `Healthy`) is a Secret Server, whose token comes from `POST /oauth2/token` (form:
//!   `grant_type=password`, `username`, `password`, and `domain` when set); else `GET /health`
//!   answering healthy is the Delinea Platform, whose token comes from `POST
//!   /identity/api/oauth2/token/xpmplatform` (form: `grant_type=client_credentials`, the
//!   username as `client_id`, the password as `client_secret`, `scope=xpmheadless`), and whose
//!   API calls go to the default active vault `GET /vaultbroker/api/vaults` names. A fetched
//!   token is kept for a tenth of its lifetime (the SDK's rule) and dropped on 401/403.
//! * Secrets: `GET /api/v1/secrets/{id}`, `GET /api/v1/secrets/0?secretPath=...`, the exact-name
//!   search `GET /api/v1/secrets?paging.filter.searchText=...&paging.filter.searchField=Name&...`
//!   (30 records at most), `POST /api/v1/secrets`, `PUT /api/v1/secrets/{id}`, `DELETE
//!   /api/v1/secrets/{id}`, `GET /api/v1/secret-templates/{id}`. File fields are read from and
//!   uploaded to `/api/v1/secrets/{id}/fields/{slug}` (multipart), and cleared with `PATCH
//!   /api/v1/secrets/{id}/general`.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;
use tokio::sync::Mutex;

use super::error;
use super::secret::{Secret, SecretField, Summary, Template, parse_search};
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, form_body, https_client, read_body, tls_config, transport_error};
use crate::value::SecretValue;

/// Longest answer read (a secret with its files, a search page).
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Longest health-check answer read.
const MAX_PROBE_BYTES: usize = 64 * 1024;

/// Request timeout.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Longest token lifetime believed (a day), whatever the server says.
const MAX_TOKEN_SECONDS: u64 = 24 * 60 * 60;

/// How the client authenticates.
pub enum Credentials {
    /// A ready access token (`spec.token`).
    Token(SecretValue),
    /// A user (or, on the Platform, a client) and its password, with an optional domain.
    Password {
        /// `username`.
        username: SecretValue,
        /// `password`.
        password: SecretValue,
        /// `domain` (empty: none).
        domain: String,
    },
}

/// What the server turned out to be, and the token in use.
#[derive(Default)]
struct Session {
    /// `Some(true)` once probed as the Delinea Platform, `Some(false)` as Secret Server.
    platform: Option<bool>,
    /// The API's base URL (the Platform's vault URL, else `serverURL`).
    base: Option<String>,
    token: Option<(SecretValue, Instant)>,
}

/// A body sent with a request.
enum Body {
    /// JSON.
    Json(Vec<u8>),
    /// A multipart form and its content type.
    Multipart(String, Vec<u8>),
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Vault {
    #[serde(default)]
    is_default: bool,
    #[serde(default)]
    is_active: bool,
    #[serde(default)]
    connection: Connection,
}

#[derive(Deserialize, Default)]
struct Connection {
    #[serde(default)]
    url: String,
}

#[derive(Deserialize)]
struct Vaults {
    #[serde(default)]
    vaults: Vec<Vault>,
}

/// A Secret Server (or Platform) and the credentials to use it.
pub struct Api {
    http: reqwest::Client,
    server_url: String,
    credentials: Credentials,
    session: Mutex<Session>,
}

impl Api {
    /// A client of `server_url`, trusting `ca` (PEM) instead of the system roots when given.
    pub fn new(server_url: &str, ca: Option<&[u8]>, credentials: Credentials) -> Result<Self> {
        let server_url = server_url.trim_end_matches('/').to_owned();
        api_root(&server_url)?;
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
            "failed to create Secret Server client",
        )?;
        Ok(Self {
            http,
            server_url,
            credentials,
            session: Mutex::new(Session::default()),
        })
    }

    /// The secret with `id`, its files downloaded.
    pub async fn secret(&self, id: i64) -> Result<Secret> {
        let action = "error getting secret";
        let body = self
            .call(
                Method::GET,
                &["secrets", &id.to_string()],
                &[],
                None,
                action,
            )
            .await?;
        self.with_files(Secret::parse(&body, action)?).await
    }

    /// The secret at `path` (`/folder/.../name`), its files downloaded.
    pub async fn secret_by_path(&self, path: &str) -> Result<Secret> {
        let action = "error getting secret by path";
        let query = [("secretPath", path)];
        let body = self
            .call(Method::GET, &["secrets", "0"], &query, None, action)
            .await?;
        self.with_files(Secret::parse(&body, action)?).await
    }

    /// The secrets named exactly `name` (the SDK's search: 30 at most).
    pub async fn search(&self, name: &str) -> Result<Vec<Summary>> {
        let action = "error searching secrets";
        let query = [
            ("paging.filter.searchText", name),
            ("paging.filter.searchField", "Name"),
            ("paging.filter.doNotCalculateTotal", "true"),
            ("paging.take", "30"),
            ("paging.skip", "0"),
            ("paging.filter.isExactMatch", "true"),
        ];
        let body = self
            .call(Method::GET, &["secrets"], &query, None, action)
            .await?;
        parse_search(&body, action)
    }

    /// The template with `id`.
    pub async fn template(&self, id: i64) -> Result<Template> {
        let action = "failed to get secret template";
        let path = ["secret-templates", &id.to_string()];
        let body = self.call(Method::GET, &path, &[], None, action).await?;
        Template::parse(&body, action)
    }

    /// Creates `secret` (non-file fields), returning its id.
    pub async fn create(&self, secret: &Secret) -> Result<i64> {
        let action = "failed to create secret";
        let body = Body::Json(secret.to_json()?);
        let answer = self
            .call(Method::POST, &["secrets"], &[], Some(body), action)
            .await?;
        Ok(Secret::parse(&answer, action)?.id)
    }

    /// Replaces the non-file fields of `secret`.
    pub async fn update(&self, secret: &Secret) -> Result<()> {
        let action = "failed to update secret";
        let body = Body::Json(secret.to_json()?);
        let path = ["secrets", &secret.id.to_string()];
        self.call(Method::PUT, &path, &[], Some(body), action)
            .await
            .map(drop)
    }

    /// Sets file field `field` of secret `id` to its value: uploads it, or clears the field
    /// when the value is empty (the SDK's `updateFiles`).
    pub async fn write_file(&self, id: i64, field: &SecretField) -> Result<()> {
        let id = id.to_string();
        if field.item_value.is_empty() {
            let action = "failed to clear file field";
            let patch = serde_json::json!({"Data": {"SecretFields": [
                {"Slug": field.slug, "Dirty": true, "Value": null}
            ]}});
            let body = Body::Json(patch.to_string().into_bytes());
            let path = ["secrets", &id, "general"];
            return self
                .call(Method::PATCH, &path, &[], Some(body), action)
                .await
                .map(drop);
        }
        let action = "failed to upload file";
        let body = multipart(&upload_filename(&field.filename), &field.item_value);
        let path = ["secrets", &id, "fields", &field.slug];
        self.call(Method::PUT, &path, &[], Some(body), action)
            .await
            .map(drop)
    }

    /// Deletes secret `id`.
    pub async fn delete(&self, id: i64) -> Result<()> {
        let action = "failed to delete secret";
        let path = ["secrets", &id.to_string()];
        self.call(Method::DELETE, &path, &[], None, action)
            .await
            .map(drop)
    }

    /// `secret` with the content of its attached files as their fields' values (the SDK's
    /// download step).
    async fn with_files(&self, mut secret: Secret) -> Result<Secret> {
        let id = secret.id.to_string();
        for field in &mut secret.fields {
            if field.is_file && field.file_attachment_id != 0 && !field.filename.is_empty() {
                let path = ["secrets", id.as_str(), "fields", field.slug.as_str()];
                let action = "error getting file field";
                field.item_value = self.call(Method::GET, &path, &[], None, action).await?;
            }
        }
        Ok(secret)
    }

    /// Sends one authenticated API request and returns the (bounded) answer of a 2xx.
    async fn call(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<Body>,
        action: &str,
    ) -> Result<Vec<u8>> {
        let (token, base) = self.token().await?;
        let mut url = api_root(&base)?;
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend(path);
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let token = token
            .expose_str()
            .ok_or_else(|| ProviderError::invalid_config("access token is not valid UTF-8"))?;
        let mut request = self.http.request(method, url).bearer_auth(token);
        request = match body {
            Some(Body::Json(json)) => request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(json),
            Some(Body::Multipart(content_type, bytes)) => request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(bytes),
            None => request,
        };
        let response = request
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            // A revoked token is fetched anew at the next call.
            self.session.lock().await.token = None;
        }
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        Ok(bytes)
    }

    /// A valid access token and the base URL to use it on.
    pub async fn token(&self) -> Result<(SecretValue, String)> {
        let (username, password, domain) = match &self.credentials {
            Credentials::Token(token) => return Ok((token.clone(), self.server_url.clone())),
            Credentials::Password {
                username,
                password,
                domain,
            } => (username, password, domain),
        };
        let mut session = self.session.lock().await;
        if let (Some((token, until)), Some(base)) = (&session.token, &session.base)
            && Instant::now() < *until
        {
            return Ok((token.clone(), base.clone()));
        }
        let platform = match session.platform {
            Some(platform) => platform,
            None => self.probe().await?,
        };
        session.platform = Some(platform);
        let text = |value: &SecretValue| value.expose_str().unwrap_or_default().to_owned();
        let (username, password) = (text(username), text(password));
        let (answer, base) = if platform {
            let form = form_body(&[
                ("grant_type", "client_credentials"),
                ("client_id", &username),
                ("client_secret", &password),
                ("scope", "xpmheadless"),
            ]);
            let url = format!("{}/identity/api/oauth2/token/xpmplatform", self.server_url);
            let answer = self.grant(&url, form).await?;
            let base = self.vault_url(&answer.access_token).await?;
            (answer, base)
        } else {
            let mut pairs = vec![
                ("username", username.as_str()),
                ("password", password.as_str()),
                ("grant_type", "password"),
            ];
            if !domain.is_empty() {
                pairs.push(("domain", domain));
            }
            let url = format!("{}/oauth2/token", self.server_url);
            (
                self.grant(&url, form_body(&pairs)).await?,
                self.server_url.clone(),
            )
        };
        let lifetime = answer.expires_in.min(MAX_TOKEN_SECONDS);
        let until = Instant::now() + Duration::from_secs(lifetime - lifetime * 9 / 10);
        let token = SecretValue::from(answer.access_token);
        session.token = Some((token.clone(), until));
        session.base = Some(base.clone());
        Ok((token, base))
    }

    /// Whether the server is the Delinea Platform (else Secret Server). When it answers as
    /// neither: the first probe's transport failure (a TLS or connection error says more than
    /// upstream's "invalid URL"), else upstream's message.
    async fn probe(&self) -> Result<bool> {
        let secret_server = self.healthy("api/v1/healthcheck").await;
        if matches!(secret_server, Ok(true)) {
            return Ok(false);
        }
        if matches!(self.healthy("health").await, Ok(true)) {
            return Ok(true);
        }
        Err(secret_server.err().unwrap_or_else(|| {
            ProviderError::unavailable(
                "invalid URL: the server answered neither Secret Server's nor the Platform's \
                 health check",
            )
        }))
    }

    /// The SDK's `checkJSONResponse`: a JSON object's `healthy`, else whether the body says
    /// `Healthy` (whatever the status).
    async fn healthy(&self, path: &str) -> Result<bool> {
        let action = "health check";
        let response = self
            .http
            .get(format!("{}/{path}", self.server_url))
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let body = read_body(response, MAX_PROBE_BYTES, action).await?;
        Ok(
            match serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&body) {
                Ok(object) => object
                    .get("healthy")
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or_default(),
                Err(_) => String::from_utf8_lossy(&body).contains("Healthy"),
            },
        )
    }

    /// Posts a token request form to `url`.
    async fn grant(&self, url: &str, form: String) -> Result<TokenAnswer> {
        let action = "error getting access token";
        let response = self
            .http
            .post(url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form)
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if !status.is_success() {
            return Err(error::token_status(action, status, &bytes));
        }
        serde_json::from_slice(&bytes).map_err(|failure| bad_answer(action, &failure))
    }

    /// The URL of the Platform's default active vault.
    async fn vault_url(&self, token: &str) -> Result<String> {
        let action = "error getting vaults";
        let response = self
            .http
            .get(format!("{}/vaultbroker/api/vaults", self.server_url))
            .bearer_auth(token)
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        let vaults: Vaults =
            serde_json::from_slice(&bytes).map_err(|failure| bad_answer(action, &failure))?;
        vaults
            .vaults
            .into_iter()
            .find(|vault| vault.is_default && vault.is_active && !vault.connection.url.is_empty())
            .map(|vault| vault.connection.url.trim_end_matches('/').to_owned())
            .ok_or_else(|| ProviderError::invalid_config("no configured vault found"))
    }
}

/// `<base>/api/v1` as a URL to append path segments to.
fn api_root(base: &str) -> Result<Url> {
    let url = Url::parse(&format!("{base}/api/v1")).map_err(|failure| {
        ProviderError::invalid_config(format!("invalid serverURL: {failure}"))
    })?;
    if url.cannot_be_a_base() || !matches!(url.scheme(), "https" | "http") {
        return Err(ProviderError::invalid_config(
            "invalid serverURL: not an http(s) URL",
        ));
    }
    Ok(url)
}

fn bad_answer(action: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!(
        "{action}: unexpected response: {}",
        crate::redact::json_error(failure)
    ))
}

/// The SDK's upload file name: `File.txt` for none, `.txt` added when it has no extension.
fn upload_filename(filename: &str) -> String {
    let has_extension = filename.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && !extension.is_empty()
            && extension
                .chars()
                .all(|character| character.is_alphanumeric() || character == '_')
    });
    match filename {
        "" => "File.txt".to_owned(),
        _ if has_extension => filename.to_owned(),
        _ => format!("{filename}.txt"),
    }
}

/// A `multipart/form-data` body with `content` as the form file `file` named `filename`.
fn multipart(filename: &str, content: &[u8]) -> Body {
    // A boundary the content does not hold.
    let mut boundary = "external-secrets-boundary".to_owned();
    while content
        .windows(boundary.len())
        .any(|window| window == boundary.as_bytes())
    {
        boundary.push('x');
    }
    let name = filename.replace(['"', '\r', '\n'], "_");
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(content);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Body::Multipart(format!("multipart/form-data; boundary={boundary}"), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_names_follow_the_sdk() {
        assert_eq!(upload_filename(""), "File.txt");
        assert_eq!(upload_filename("id_rsa"), "id_rsa.txt");
        assert_eq!(upload_filename("cert.pem"), "cert.pem");
    }

    #[test]
    fn server_urls_must_be_http_bases() {
        let api = |url: &str| Api::new(url, None, Credentials::Token(SecretValue::from("t")));
        assert!(api("https://ss.example.com/SecretServer/").is_ok());
        assert!(api("not a url").is_err());
        assert!(api("mailto:a@b").is_err());
        let root = api_root("https://ss.example.com/SecretServer").unwrap();
        assert_eq!(root.as_str(), "https://ss.example.com/SecretServer/api/v1");
    }
}
