//! A contract fake of `bitwarden-sdk-server` — a fake, not the server nor Bitwarden.
//!
//! It follows the REST API of external-secrets' `bitwarden-sdk-server` (its `pkg/server`
//! routes and `pkg/bitwarden` login middleware) in front of Bitwarden Secrets Manager, with
//! request and response bodies as the Bitwarden SDK's schema (`SecretGetRequest`,
//! `SecretIdentifiersRequest`, `SecretCreateRequest`, `SecretPutRequest`,
//! `SecretsDeleteRequest`; Go's JSON decoding, so member names match in any case):
//!
//! * `GET /ready` and `GET /live` answer `ready` and `live` (the chart's probes).
//! * Under `/rest/api/1`, every call needs `Warden-Access-Token` (401 `Missing Warden access
//!   token` without it); the server logs in with that token against `Warden-Api-Url` and
//!   `Warden-Identity-Url` (empty: Bitwarden's cloud), so a token or URLs the fake was not
//!   given fail the login: 400 `failed to login to bitwarden using access token: ...`.
//! * `GET /secret` `{"id"}`; `GET /secrets` `{"organizationId"}` (identifiers `{"data":
//!   [{"id", "key", "organizationId"}]}`); `POST /secret` `{"key", "value", "note",
//!   "organizationId", "projectIds"}`; `PUT /secret` with `"id"` besides; `DELETE /secret`
//!   `{"ids"}` (per-id results `{"data": [{"id", "error"}]}`). A secret is `{"creationDate",
//!   "id", "key", "note", "organizationId", "projectId", "revisionDate", "value"}`.
//! * SDK failures are 400 with the SDK's text, the Bitwarden API status in brackets: `failed to
//!   get secret: API error: Received error message from server: [404 Not Found] ...` for an
//!   unknown id, `[403 Forbidden]` for another organization or a project the account cannot
//!   write; ids that are not UUIDs are refused as the SDK refuses them. A body that is not JSON
//!   is 500 on reads and 400 on writes, as the server answers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Extension, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::server::{FakeServer, header};

/// One stored secret.
#[derive(Clone)]
struct Stored {
    organization: String,
    key: String,
    value: String,
    note: String,
    project: String,
}

/// A machine account the fake lets in.
#[derive(Clone)]
struct Login {
    api_url: String,
    identity_url: String,
    organization: String,
}

/// The organization of the account a request logged in as.
#[derive(Clone)]
struct Organization(String);

#[derive(Default)]
struct Data {
    /// Accounts by access token.
    accounts: BTreeMap<String, Login>,
    /// (organization, project) pairs the accounts can write.
    projects: Vec<(String, String)>,
    /// Secrets by id.
    secrets: BTreeMap<String, Stored>,
    next_id: u64,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake SDK server and handles to seed and inspect it.
pub struct BitwardenFake {
    /// The HTTPS server (URL, CA, request log).
    pub server: FakeServer,
    data: Shared,
}

/// A machine account to let in.
pub struct Account<'a> {
    /// The machine account's access token.
    pub token: &'a str,
    /// The `Warden-Api-Url` the login must name (empty: none, Bitwarden's cloud).
    pub api_url: &'a str,
    /// The `Warden-Identity-Url` the login must name (empty: none).
    pub identity_url: &'a str,
    /// The organization (a UUID) the account belongs to and lists.
    pub organization: &'a str,
}

impl BitwardenFake {
    /// Starts a fake that lets no account in yet.
    pub async fn start() -> std::io::Result<Self> {
        let data = Arc::new(Mutex::new(Data::default()));
        let api = Router::new()
            .route(
                "/secret",
                get(get_secret)
                    .post(create_secret)
                    .put(update_secret)
                    .delete(delete_secrets),
            )
            .route("/secrets", get(list_secrets))
            .layer(middleware::from_fn_with_state(data.clone(), login))
            .with_state(data.clone());
        let router = Router::new()
            .route("/ready", get(|| async { "ready" }))
            .route("/live", get(|| async { "live" }))
            .nest("/rest/api/1", api);
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Lets `account` in.
    pub fn add_account(&self, account: Account<'_>) {
        let login = Login {
            api_url: account.api_url.to_owned(),
            identity_url: account.identity_url.to_owned(),
            organization: account.organization.to_owned(),
        };
        lock(&self.data)
            .accounts
            .insert(account.token.to_owned(), login);
    }

    /// Lets the accounts of `organization` read and write its project `project` (a UUID).
    pub fn add_project(&self, organization: &str, project: &str) {
        let pair = (organization.to_owned(), project.to_owned());
        lock(&self.data).projects.push(pair);
    }

    /// Stores a secret of `organization` named `key` in `project`, returning its new id.
    pub fn add_secret(
        &self,
        organization: &str,
        project: &str,
        key: &str,
        value: &str,
        note: &str,
    ) -> String {
        let mut data = lock(&self.data);
        let stored = Stored {
            organization: organization.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
            note: note.to_owned(),
            project: project.to_owned(),
        };
        insert(&mut data, stored)
    }

    /// Changes the value of secret `id` (as a user editing it in Bitwarden would).
    pub fn set_value(&self, id: &str, value: &str) {
        if let Some(stored) = lock(&self.data).secrets.get_mut(id) {
            stored.value = value.to_owned();
        }
    }

    /// Every secret of `organization` named `key`, by id.
    pub fn secrets_named(&self, organization: &str, key: &str) -> Vec<SeenSecret> {
        lock(&self.data)
            .secrets
            .iter()
            .filter(|(_, stored)| stored.organization == organization && stored.key == key)
            .map(|(id, stored)| SeenSecret {
                id: id.clone(),
                project: stored.project.clone(),
                value: stored.value.clone(),
                note: stored.note.clone(),
            })
            .collect()
    }
}

/// A stored secret as a test sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenSecret {
    /// Its id.
    pub id: String,
    /// Its project.
    pub project: String,
    /// Its value.
    pub value: String,
    /// Its note.
    pub note: String,
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Stores `stored` under a new UUID (version 4 layout, counter-made).
fn insert(data: &mut Data, stored: Stored) -> String {
    data.next_id += 1;
    let id = format!("5e1d0c2b-7a4f-4c3e-9b8d-{:012x}", data.next_id);
    data.secrets.insert(id.clone(), stored);
    id
}

/// The SDK's error answer: 400 with its text and the Bitwarden API status it saw.
fn sdk_error(what: &str, status: &str, message: &str) -> Response {
    let body =
        format!("{what}: API error: Received error message from server: [{status}] {message}\n");
    (StatusCode::BAD_REQUEST, body).into_response()
}

fn not_found(what: &str) -> Response {
    sdk_error(what, "404 Not Found", "Resource not found.")
}

fn forbidden(what: &str) -> Response {
    sdk_error(what, "403 Forbidden", "You do not have permission.")
}

/// A member of a JSON object by name in any case, as Go's decoder matches struct fields.
fn member<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body.as_object()?
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
}

fn text<'a>(body: &'a Value, name: &str) -> &'a str {
    member(body, name).and_then(Value::as_str).unwrap_or("")
}

/// Whether `id` is a dashed UUID (the SDK's commands carry `Uuid`s).
fn is_uuid(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    parts.len() == 5
        && parts.iter().zip([8, 4, 4, 4, 12]).all(|(part, length)| {
            part.len() == length && part.bytes().all(|b| b.is_ascii_hexdigit())
        })
}

fn invalid_uuid(what: &str) -> Response {
    let body = format!("{what}: Invalid command value: UUID parsing failed\n");
    (StatusCode::BAD_REQUEST, body).into_response()
}

/// The middleware's login: the token and URLs must be the account's.
async fn login(State(data): State<Shared>, request: Request, next: Next) -> Response {
    let headers: &HeaderMap = request.headers();
    let Some(token) = header(headers, "warden-access-token").filter(|token| !token.is_empty())
    else {
        return (StatusCode::UNAUTHORIZED, "Missing Warden access token\n").into_response();
    };
    let account = lock(&data).accounts.get(token).cloned().filter(|login| {
        header(headers, "warden-api-url").unwrap_or("") == login.api_url
            && header(headers, "warden-identity-url").unwrap_or("") == login.identity_url
    });
    let Some(account) = account else {
        let body = "failed to login to bitwarden using access token: bitwarden login: API \
                    error: Received error message from server: [400 Bad Request] \
                    {\"error\":\"invalid_client\"}\n";
        return (StatusCode::BAD_REQUEST, body).into_response();
    };
    let mut request = request;
    request
        .extensions_mut()
        .insert(Organization(account.organization));
    next.run(request).await
}

/// The request body as JSON, or the server's answer to one that is not.
fn body(bytes: &Bytes, status: StatusCode) -> Result<Value, Box<Response>> {
    serde_json::from_slice(bytes)
        .map_err(|_| Box::new((status, "invalid character in JSON body\n").into_response()))
}

fn secret_json(id: &str, stored: &Stored) -> Value {
    json!({
        "creationDate": "2026-01-01T00:00:00Z",
        "id": id,
        "key": stored.key,
        "note": stored.note,
        "organizationId": stored.organization,
        "projectId": stored.project,
        "revisionDate": "2026-01-01T00:00:00Z",
        "value": stored.value,
    })
}

async fn get_secret(
    State(data): State<Shared>,
    Extension(Organization(organization)): Extension<Organization>,
    bytes: Bytes,
) -> Response {
    let request = match body(&bytes, StatusCode::INTERNAL_SERVER_ERROR) {
        Ok(request) => request,
        Err(refused) => return *refused,
    };
    let id = text(&request, "id");
    if !is_uuid(id) {
        return invalid_uuid("failed to get secret");
    }
    let data = lock(&data);
    match data.secrets.get(id) {
        Some(stored) if stored.organization == organization => {
            axum::Json(secret_json(id, stored)).into_response()
        }
        _ => not_found("failed to get secret"),
    }
}

async fn list_secrets(
    State(data): State<Shared>,
    Extension(Organization(account)): Extension<Organization>,
    bytes: Bytes,
) -> Response {
    let request = match body(&bytes, StatusCode::INTERNAL_SERVER_ERROR) {
        Ok(request) => request,
        Err(refused) => return *refused,
    };
    let organization = text(&request, "organizationId");
    if !is_uuid(organization) {
        return invalid_uuid("failed to get secret");
    }
    let data = lock(&data);
    if organization != account {
        return forbidden("failed to get secret");
    }
    let identifiers: Vec<Value> = data
        .secrets
        .iter()
        .filter(|(_, stored)| stored.organization == organization)
        .map(|(id, stored)| json!({"id": id, "key": stored.key, "organizationId": organization}))
        .collect();
    axum::Json(json!({ "data": identifiers })).into_response()
}

/// The fields of a create or update, checked as Bitwarden checks them.
fn written(
    data: &Data,
    organization: &str,
    request: &Value,
    what: &str,
) -> Result<Stored, Box<Response>> {
    let key = text(request, "key");
    if key.is_empty() {
        let body = format!(
            "{what}: API error: Received error message from server: [400 Bad Request] The Key field is required.\n"
        );
        return Err(Box::new((StatusCode::BAD_REQUEST, body).into_response()));
    }
    if text(request, "organizationId") != organization {
        return Err(Box::new(forbidden(what)));
    }
    let projects: Vec<&str> = member(request, "projectIds")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let [project] = projects.as_slice() else {
        // The fake serves upstream's one-project writes only.
        let body = format!("{what}: exactly one project id expected by this fake\n");
        return Err(Box::new((StatusCode::BAD_REQUEST, body).into_response()));
    };
    let writable = |(owner, known): &(String, String)| owner == organization && known == project;
    if !data.projects.iter().any(writable) {
        return Err(Box::new(forbidden(what)));
    }
    Ok(Stored {
        organization: organization.to_owned(),
        key: key.to_owned(),
        value: text(request, "value").to_owned(),
        note: text(request, "note").to_owned(),
        project: (*project).to_owned(),
    })
}

async fn create_secret(
    State(data): State<Shared>,
    Extension(Organization(organization)): Extension<Organization>,
    bytes: Bytes,
) -> Response {
    let what = "failed to create secret";
    let request = match body(&bytes, StatusCode::BAD_REQUEST) {
        Ok(request) => request,
        Err(refused) => return *refused,
    };
    let mut data = lock(&data);
    match written(&data, &organization, &request, what) {
        Ok(stored) => {
            let id = insert(&mut data, stored.clone());
            axum::Json(secret_json(&id, &stored)).into_response()
        }
        Err(refused) => *refused,
    }
}

async fn update_secret(
    State(data): State<Shared>,
    Extension(Organization(organization)): Extension<Organization>,
    bytes: Bytes,
) -> Response {
    let what = "failed to update secret";
    let request = match body(&bytes, StatusCode::BAD_REQUEST) {
        Ok(request) => request,
        Err(refused) => return *refused,
    };
    let id = text(&request, "id").to_owned();
    if !is_uuid(&id) {
        return invalid_uuid(what);
    }
    let mut data = lock(&data);
    let owned = data.secrets.get(&id);
    if owned.is_none_or(|stored| stored.organization != organization) {
        return not_found(what);
    }
    match written(&data, &organization, &request, what) {
        Ok(stored) => {
            data.secrets.insert(id.clone(), stored.clone());
            axum::Json(secret_json(&id, &stored)).into_response()
        }
        Err(refused) => *refused,
    }
}

async fn delete_secrets(
    State(data): State<Shared>,
    Extension(Organization(organization)): Extension<Organization>,
    bytes: Bytes,
) -> Response {
    let request = match body(&bytes, StatusCode::BAD_REQUEST) {
        Ok(request) => request,
        Err(refused) => return *refused,
    };
    let ids: Vec<String> = member(&request, "ids")
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if ids.is_empty() || !ids.iter().all(|id| is_uuid(id)) {
        return invalid_uuid("failed to delete secrets");
    }
    let mut data = lock(&data);
    let results: Vec<Value> = ids
        .iter()
        .map(|id| {
            let owned = data
                .secrets
                .get(id)
                .is_some_and(|stored| stored.organization == organization);
            if owned {
                data.secrets.remove(id);
                json!({"id": id, "error": null})
            } else {
                json!({"id": id, "error": "Secret not found."})
            }
        })
        .collect();
    axum::Json(json!({ "data": results })).into_response()
}
