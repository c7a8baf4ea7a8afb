//! A contract fake of the Infisical REST API — a fake, not Infisical.
//!
//! It follows Infisical's "API Reference" (<https://infisical.com/docs/api-reference/overview/introduction>)
//! for the endpoints the Go SDK (`infisical/go-sdk`) calls, all under `/api`:
//!
//! * `POST /v1/auth/{universal-auth,jwt-auth,ldap-auth,kubernetes-auth}/login` with JSON bodies
//!   (`clientId`+`clientSecret`; `identityId`+`jwt`; `identityId`+`username`+`password`;
//!   optional `organizationSlug`) answer `{accessToken, expiresIn, accessTokenMaxTTL,
//!   tokenType}`; unknown credentials are 401. `POST /v1/auth/token/revoke` (`accessToken`)
//!   revokes a token.
//! * Every other call needs `Authorization: Bearer <token>` of a live issued (or seeded) token
//!   (401 otherwise).
//! * `GET /v3/secrets/raw` (list) and `GET /v3/secrets/raw/{name}` (one) need `environment`,
//!   `workspaceSlug` or `workspaceId`, and read `secretPath` (default `/`), `include_imports`,
//!   `expandSecretReferences` (`${NAME}` of the same folder) and `recursive` (list only); an
//!   unknown project or environment is 404, a missing secret 404.
//! * `POST`, `PATCH` and `DELETE /v3/secrets/raw/{name}` need a JSON body with `workspaceId`
//!   (the project id, not the slug), `environment` and `secretPath`, plus `secretValue` to create
//!   or update; creating an existing secret is 400, updating or deleting a missing one 404.
//! * `GET /v1/projects/slug/{slug}` returns the project (`id`, `slug`).
//!
//! Errors carry Infisical's body `{"reqId", "statusCode", "message", "error"}`; a request
//! missing required fields is 422 (`ValidationFailure`), as Infisical's request validation.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::server::{FakeServer, bearer};

/// The project id the fake gives its one project.
pub const PROJECT_ID: &str = "6f1e0c2a-4b7d-4e59-9a3c-2d8b1f0e7a61";

/// One stored secret.
#[derive(Clone)]
struct Stored {
    environment: String,
    path: String,
    key: String,
    value: String,
}

/// What the fake holds.
#[derive(Default)]
struct Data {
    project_slug: String,
    environments: Vec<String>,
    secrets: Vec<Stored>,
    /// (environment, folder, imported folder).
    imports: Vec<(String, String, String)>,
    /// Accepted logins: method and the body members it must carry.
    logins: Vec<(String, Value)>,
    tokens: BTreeSet<String>,
    revoked: Vec<String>,
    expires_in: u64,
    issued: u64,
}

type Shared = Arc<Mutex<Data>>;

/// An error answer, boxed to keep `Result`s small.
type Refused = Box<Response>;

/// What a write handler works on: the locked data, environment, folder and (for creates and
/// updates) the new value.
type Write<'a> = (MutexGuard<'a, Data>, String, String, Option<String>);

/// A running fake Infisical and handles to seed and inspect it.
pub struct InfisicalFake {
    /// The HTTPS server (URL, CA, request log); the API is under `<url>/api`.
    pub server: FakeServer,
    data: Shared,
}

impl InfisicalFake {
    /// Starts a fake holding one project `project_slug` with `environments`, no secrets and no
    /// accepted credentials.
    pub async fn start(project_slug: &str, environments: &[&str]) -> std::io::Result<Self> {
        let data = Arc::new(Mutex::new(Data {
            project_slug: project_slug.to_owned(),
            environments: environments.iter().map(|e| (*e).to_owned()).collect(),
            expires_in: 7200,
            ..Data::default()
        }));
        let router = Router::new()
            .route("/api/v1/auth/{method}/login", post(login))
            .route("/api/v1/auth/token/revoke", post(revoke))
            .route("/api/v1/projects/slug/{slug}", get(project))
            .route("/api/v3/secrets/raw", get(list))
            .route(
                "/api/v3/secrets/raw/{name}",
                get(retrieve).post(create).patch(update).delete(delete),
            )
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Accepts a login at `/v1/auth/{method}/login` whose body carries every member of
    /// `credentials` (a JSON object) with that value.
    pub fn accept_login(&self, method: &str, credentials: Value) {
        lock(&self.data)
            .logins
            .push((method.to_owned(), credentials));
    }

    /// Accepts `token` as a pre-issued access token (token auth).
    pub fn accept_token(&self, token: &str) {
        lock(&self.data).tokens.insert(token.to_owned());
    }

    /// The lifetime (seconds) given to tokens issued from now on.
    pub fn set_expires_in(&self, seconds: u64) {
        lock(&self.data).expires_in = seconds;
    }

    /// How many logins succeeded so far.
    pub fn logins(&self) -> u64 {
        lock(&self.data).issued
    }

    /// The tokens revoked so far.
    pub fn revoked(&self) -> Vec<String> {
        lock(&self.data).revoked.clone()
    }

    /// Sets secret `key` of folder `path` in `environment` (creating it).
    pub fn set_secret(&self, environment: &str, path: &str, key: &str, value: &str) {
        let mut data = lock(&self.data);
        data.secrets
            .retain(|s| !(s.environment == environment && s.path == path && s.key == key));
        data.secrets.push(Stored {
            environment: environment.to_owned(),
            path: path.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
        });
    }

    /// Makes folder `path` of `environment` import the secrets of folder `from`.
    pub fn add_import(&self, environment: &str, path: &str, from: &str) {
        lock(&self.data)
            .imports
            .push((environment.to_owned(), path.to_owned(), from.to_owned()));
    }

    /// The stored value of secret `key` of folder `path` in `environment`.
    pub fn secret(&self, environment: &str, path: &str, key: &str) -> Option<String> {
        lock(&self.data)
            .find(environment, path, key)
            .map(|s| s.value.clone())
    }
}

impl Data {
    fn find(&self, environment: &str, path: &str, key: &str) -> Option<&Stored> {
        self.secrets
            .iter()
            .find(|s| s.environment == environment && s.path == path && s.key == key)
    }

    /// `value` with `${NAME}` replaced by the value of `NAME` in the same folder.
    fn expand(&self, environment: &str, path: &str, value: &str) -> String {
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            match after.find('}') {
                Some(end) => {
                    let name = &after[..end];
                    match self.find(environment, path, name) {
                        Some(secret) => out.push_str(&secret.value),
                        None => out.push_str(&rest[start..start + 3 + end]),
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// A secret as the API shows it.
    fn render(&self, secret: &Stored, expand: bool) -> Value {
        let value = if expand {
            self.expand(&secret.environment, &secret.path, &secret.value)
        } else {
            secret.value.clone()
        };
        json!({
            "id": format!("{}:{}:{}", secret.environment, secret.path, secret.key),
            "workspace": PROJECT_ID,
            "environment": secret.environment,
            "version": 1,
            "type": "shared",
            "secretKey": secret.key,
            "secretValue": value,
            "secretComment": "",
            "secretPath": secret.path,
        })
    }

    /// The folders `path` of `environment` imports.
    fn imported(&self, environment: &str, path: &str) -> Vec<String> {
        self.imports
            .iter()
            .filter(|(e, p, _)| e == environment && p == path)
            .map(|(_, _, from)| from.clone())
            .collect()
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Infisical's error answer.
fn error(status: StatusCode, error: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({
            "reqId": "req-fake",
            "statusCode": status.as_u16(),
            "message": message,
            "error": error,
        })),
    )
        .into_response()
}

fn unauthorized() -> Refused {
    Box::new(error(
        StatusCode::UNAUTHORIZED,
        "UnauthorizedError",
        "Token missing or invalid",
    ))
}

fn invalid(message: &str) -> Refused {
    Box::new(error(
        StatusCode::UNPROCESSABLE_ENTITY,
        "ValidationFailure",
        message,
    ))
}

fn not_found(message: &str) -> Refused {
    Box::new(error(StatusCode::NOT_FOUND, "NotFound", message))
}

/// The data, if the bearer token is live.
fn authorized<'a>(data: &'a Shared, headers: &HeaderMap) -> Result<MutexGuard<'a, Data>, Refused> {
    let data = lock(data);
    match bearer(headers) {
        Some(token) if data.tokens.contains(token) => Ok(data),
        _ => Err(unauthorized()),
    }
}

/// The query's pairs, decoded.
fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

fn query_value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// A JSON object body, or the 422 its absence gets.
fn json_body(body: &[u8]) -> Result<serde_json::Map<String, Value>, Refused> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(invalid("Body must be a JSON object")),
    }
}

fn text<'a>(object: &'a serde_json::Map<String, Value>, name: &str) -> Result<&'a str, Refused> {
    object
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(&format!("{name}: Required")))
}

async fn login(State(data): State<Shared>, Path(method): Path<String>, body: Bytes) -> Response {
    let body = match json_body(&body) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    let required: &[&str] = match method.as_str() {
        "universal-auth" => &["clientId", "clientSecret"],
        "jwt-auth" | "kubernetes-auth" => &["identityId", "jwt"],
        "ldap-auth" => &["identityId", "username", "password"],
        _ => return *not_found("Route not found"),
    };
    for name in required {
        if let Err(refused) = text(&body, name) {
            return *refused;
        }
    }
    let mut data = lock(&data);
    let accepted = data.logins.iter().any(|(accepted, credentials)| {
        accepted == &method
            && credentials
                .as_object()
                .is_some_and(|wanted| wanted.iter().all(|(k, v)| body.get(k) == Some(v)))
    });
    if !accepted {
        return error(
            StatusCode::UNAUTHORIZED,
            "UnauthorizedError",
            "Invalid credentials",
        );
    }
    data.issued += 1;
    let token = format!("fake-access-token-{}", data.issued);
    data.tokens.insert(token.clone());
    axum::Json(json!({
        "accessToken": token,
        "expiresIn": data.expires_in,
        "accessTokenMaxTTL": 2_592_000,
        "tokenType": "Bearer",
    }))
    .into_response()
}

async fn revoke(State(data): State<Shared>, body: Bytes) -> Response {
    let body = match json_body(&body) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    let token = match text(&body, "accessToken") {
        Ok(token) => token.to_owned(),
        Err(refused) => return *refused,
    };
    let mut data = lock(&data);
    if !data.tokens.remove(&token) {
        return *unauthorized();
    }
    data.revoked.push(token);
    axum::Json(json!({"message": "Successfully revoked access token"})).into_response()
}

async fn project(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(slug): Path<String>,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(refused) => return *refused,
    };
    if slug != data.project_slug {
        return *not_found(&format!("Project with slug '{slug}' not found"));
    }
    axum::Json(json!({"id": PROJECT_ID, "slug": slug, "name": slug})).into_response()
}

/// The environment and folder of a read, checked against the project.
fn read_scope(data: &Data, pairs: &[(String, String)]) -> Result<(String, String), Refused> {
    let environment =
        query_value(pairs, "environment").ok_or_else(|| invalid("environment: Required"))?;
    let project_matches = match (
        query_value(pairs, "workspaceSlug").filter(|s| !s.is_empty()),
        query_value(pairs, "workspaceId").filter(|s| !s.is_empty()),
    ) {
        (Some(slug), _) => slug == data.project_slug,
        (None, Some(id)) => id == PROJECT_ID,
        (None, None) => return Err(invalid("Either workspaceId or workspaceSlug is required")),
    };
    if !project_matches {
        return Err(not_found("Project not found"));
    }
    if !data.environments.iter().any(|e| e == environment) {
        return Err(not_found(&format!(
            "Environment with slug '{environment}' not found"
        )));
    }
    let path = query_value(pairs, "secretPath").unwrap_or("/");
    Ok((environment.to_owned(), path.to_owned()))
}

fn flag(pairs: &[(String, String)], name: &str) -> bool {
    query_value(pairs, name) == Some("true")
}

async fn list(
    State(data): State<Shared>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(refused) => return *refused,
    };
    let pairs = query_pairs(query.as_deref());
    let (environment, path) = match read_scope(&data, &pairs) {
        Ok(scope) => scope,
        Err(refused) => return *refused,
    };
    let expand = flag(&pairs, "expandSecretReferences");
    let below = format!("{}/", path.trim_end_matches('/'));
    let secrets: Vec<Value> = data
        .secrets
        .iter()
        .filter(|s| s.environment == environment)
        .filter(|s| s.path == path || (flag(&pairs, "recursive") && s.path.starts_with(&below)))
        .map(|s| data.render(s, expand))
        .collect();
    let imports: Vec<Value> = if flag(&pairs, "include_imports") {
        data.imported(&environment, &path)
            .into_iter()
            .map(|from| {
                let secrets: Vec<Value> = data
                    .secrets
                    .iter()
                    .filter(|s| s.environment == environment && s.path == from)
                    .map(|s| data.render(s, expand))
                    .collect();
                json!({"secretPath": from, "environment": environment, "folderId": from, "secrets": secrets})
            })
            .collect()
    } else {
        Vec::new()
    };
    axum::Json(json!({"secrets": secrets, "imports": imports})).into_response()
}

async fn retrieve(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(refused) => return *refused,
    };
    let pairs = query_pairs(query.as_deref());
    let (environment, path) = match read_scope(&data, &pairs) {
        Ok(scope) => scope,
        Err(refused) => return *refused,
    };
    if query_value(&pairs, "type").is_some_and(|t| t != "shared" && t != "personal") {
        return *invalid("type: Invalid enum value");
    }
    let mut found = data.find(&environment, &path, &name);
    if found.is_none() && flag(&pairs, "include_imports") {
        found = data
            .imported(&environment, &path)
            .iter()
            .find_map(|from| data.find(&environment, from, &name));
    }
    match found {
        Some(secret) => {
            let expand = flag(&pairs, "expandSecretReferences");
            axum::Json(json!({"secret": data.render(secret, expand)})).into_response()
        }
        None => *not_found(&format!("Secret with name '{name}' not found")),
    }
}

/// The checked scope of a write: environment and folder.
fn write_scope(
    data: &Data,
    body: &serde_json::Map<String, Value>,
) -> Result<(String, String), Refused> {
    let project = text(body, "workspaceId")?;
    let environment = text(body, "environment")?;
    let path = body
        .get("secretPath")
        .and_then(Value::as_str)
        .unwrap_or("/");
    if project != PROJECT_ID {
        return Err(not_found(&format!("Project with ID '{project}' not found")));
    }
    if !data.environments.iter().any(|e| e == environment) {
        return Err(not_found(&format!(
            "Environment with slug '{environment}' not found"
        )));
    }
    Ok((environment.to_owned(), path.to_owned()))
}

/// Authorizes a write and parses its body; `secretValue` is required when `with_value`.
fn begin_write<'a>(
    data: &'a Shared,
    headers: &HeaderMap,
    body: &[u8],
    with_value: bool,
) -> Result<Write<'a>, Refused> {
    let data = authorized(data, headers)?;
    let body = json_body(body)?;
    let (environment, path) = write_scope(&data, &body)?;
    let value = match with_value {
        true => Some(text(&body, "secretValue")?.to_owned()),
        false => None,
    };
    Ok((data, environment, path, value))
}

async fn create(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Bytes,
) -> Response {
    let (mut data, environment, path, value) = match begin_write(&data, &headers, &body, true) {
        Ok(begun) => begun,
        Err(refused) => return *refused,
    };
    let value = value.unwrap_or_default();
    if data.find(&environment, &path, &name).is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "Secret already exist",
        );
    }
    let stored = Stored {
        environment,
        path,
        key: name,
        value,
    };
    let rendered = data.render(&stored, false);
    data.secrets.push(stored);
    axum::Json(json!({"secret": rendered})).into_response()
}

async fn update(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Bytes,
) -> Response {
    let (mut data, environment, path, value) = match begin_write(&data, &headers, &body, true) {
        Ok(begun) => begun,
        Err(refused) => return *refused,
    };
    let value = value.unwrap_or_default();
    let Some(secret) = data
        .secrets
        .iter_mut()
        .find(|s| s.environment == environment && s.path == path && s.key == name)
    else {
        return *not_found(&format!("Secret with name '{name}' not found"));
    };
    secret.value = value;
    let stored = secret.clone();
    axum::Json(json!({"secret": data.render(&stored, false)})).into_response()
}

async fn delete(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Bytes,
) -> Response {
    let (mut data, environment, path, _) = match begin_write(&data, &headers, &body, false) {
        Ok(begun) => begun,
        Err(refused) => return *refused,
    };
    let Some(index) = data
        .secrets
        .iter()
        .position(|s| s.environment == environment && s.path == path && s.key == name)
    else {
        return *not_found(&format!("Secret with name '{name}' not found"));
    };
    let removed = data.secrets.remove(index);
    axum::Json(json!({"secret": data.render(&removed, false)})).into_response()
}
