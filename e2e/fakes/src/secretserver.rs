//! A contract fake of Delinea Secret Server's REST API — a fake, not Secret Server.
//!
//! It follows Delinea's Secret Server REST API reference (Secret Server "REST API" guide,
//! `/SecretServer/Documents/restapi/` on a server: OAuth2 token, Secrets, SecretTemplates) and the
//! Delinea Platform's token and vault-broker calls, for the requests upstream's client
//! (`tss-sdk-go` v3, `server/server.go`, `server/secret.go`, `server/secret_template.go`) sends:
//!
//! * `GET /api/v1/healthcheck`: `{"healthy": true, ...}` (a Secret Server fake); in Platform
//!   mode 404, and `GET /health` answers healthy instead.
//! * `POST /oauth2/token`, form-encoded `grant_type=password`, `username`, `password`,
//!   optional `domain`: `{"access_token", "token_type": "bearer", "expires_in"}`; wrong
//!   credentials or domain are 400 `{"error": "invalid_grant"}`, another grant type 400
//!   `unsupported_grant_type`, another content type 400. Platform mode: `POST
//!   /identity/api/oauth2/token/xpmplatform` with `grant_type=client_credentials`, `client_id`,
//!   `client_secret` and `scope=xpmheadless` instead, and `GET /vaultbroker/api/vaults` (bearer)
//!   naming the default vault, `<url>/vault`, where the API below then lives.
//! * Every API call needs `Authorization: Bearer <token>` (an issued token, or the fixed token
//!   the fake was given): 401 otherwise. Errors are `{"errorCode", "message"}`.
//! * `GET /api/v1/secrets/{id}` (a `SecretModel`: `id`, `name`, `folderId`,
//!   `secretTemplateId`, `items` with `itemId`, `fieldId`, `fileAttachmentId`, `fieldName`,
//!   `slug`, `filename`, `itemValue`, `isFile`...; a file's `itemValue` is not its content);
//!   `GET /api/v1/secrets/0?secretPath=/folder/path/name`; unknown: 404.
//! * `GET /api/v1/secrets?paging.filter.searchText=...&paging.filter.searchField=Name&
//!   paging.filter.isExactMatch=true&paging.take=N` (N at most 30...): `{"records": [summary]}`
//!   of the secrets named exactly so; other search fields or a missing text are 400.
//! * `POST /api/v1/secrets` and `PUT /api/v1/secrets/{id}` (JSON, keys matched
//!   case-insensitively as ASP.NET does): the folder and template must exist, every item's
//!   `fieldId` (or `slug`) must be a non-file field of the template, an update's `id` must match
//!   the path. `DELETE /api/v1/secrets/{id}`.
//! * `GET`/`PUT /api/v1/secrets/{id}/fields/{slug}`: a file's content / a multipart upload
//!   (form file `file`, with a file name); `PATCH /api/v1/secrets/{id}/general` with
//!   `{"data": {"secretFields": [{"slug", "dirty": true, "value": null}]}}` clears a file.
//! * `GET /api/v1/secret-templates/{id}`: `{"id", "name", "fields": [{"secretTemplateFieldId",
//!   "fieldSlugName", "name", "isFile", ...}]}`.
//!
//! Templates 6001 (`username`, `password`, `notes`) and 6002 (`private-key` file, `passphrase`)
//! exist from the start; folders are added by the tests.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use serde_json::{Map, Value, json};

use crate::server::{FakeServer, bearer, header};

/// The "Username and Password" template: username, password, notes.
pub const PASSWORD_TEMPLATE: i64 = 6001;
/// The "Key File" template: a `private-key` file field, then `passphrase`.
pub const KEY_FILE_TEMPLATE: i64 = 6002;

/// How the fake authenticates.
#[derive(Debug, Clone, Default)]
pub struct Accounts {
    /// The user (Platform: client id) the token endpoint accepts.
    pub username: String,
    /// Its password (Platform: client secret).
    pub password: String,
    /// The domain a password grant must name (empty: none).
    pub domain: String,
    /// A fixed access token always accepted (store `token` auth).
    pub fixed_token: String,
    /// Serve as the Delinea Platform (token from its identity service, API under `/vault`).
    pub platform: bool,
}

struct TemplateField {
    id: i64,
    slug: &'static str,
    name: &'static str,
    is_file: bool,
}

struct Template {
    id: i64,
    name: &'static str,
    fields: Vec<TemplateField>,
}

#[derive(Clone, Default)]
struct Stored {
    name: String,
    folder_id: i64,
    template_id: i64,
    /// Values by template field id; a file's value carries its file name.
    values: BTreeMap<i64, (Vec<u8>, Option<String>)>,
}

struct Data {
    accounts: Accounts,
    tokens: Vec<String>,
    templates: Vec<Template>,
    folders: BTreeMap<i64, String>,
    secrets: BTreeMap<i64, Stored>,
    next_id: i64,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake Secret Server and handles to seed and inspect it.
pub struct SecretServerFake {
    /// The HTTPS server (URL, CA, request log).
    pub server: FakeServer,
    data: Shared,
}

impl SecretServerFake {
    /// Starts a fake accepting `accounts`.
    pub async fn start(accounts: Accounts) -> std::io::Result<Self> {
        let platform = accounts.platform;
        let data = Arc::new(Mutex::new(Data {
            accounts,
            tokens: Vec::new(),
            templates: templates(),
            folders: BTreeMap::new(),
            secrets: BTreeMap::new(),
            next_id: 1,
        }));
        let api = Router::new()
            .route("/api/v1/secrets", get(search).post(create))
            .route("/api/v1/secrets/{id}", get(read).put(update).delete(delete))
            .route("/api/v1/secrets/{id}/fields/{slug}", get(file).put(upload))
            .route("/api/v1/secrets/{id}/general", patch(clear_file))
            .route("/api/v1/secret-templates/{id}", get(template));
        let router = if platform {
            Router::new()
                .route(
                    "/health",
                    get(|| async { axum::Json(json!({"healthy": true})) }),
                )
                .route("/identity/api/oauth2/token/xpmplatform", post(token))
                .route("/vaultbroker/api/vaults", get(vaults))
                .nest("/vault", api)
        } else {
            Router::new()
                .route("/api/v1/healthcheck", get(health))
                .route("/oauth2/token", post(token))
                .merge(api)
        };
        let server = FakeServer::https(router.with_state(data.clone())).await?;
        Ok(Self { server, data })
    }

    /// Adds folder `id` at `path` (`/Team/Apps`).
    pub fn add_folder(&self, id: i64, path: &str) {
        lock(&self.data).folders.insert(id, path.to_owned());
    }

    /// Adds a secret and returns its id; `values` are (slug, value) of `template`'s fields.
    pub fn add_secret(
        &self,
        folder: i64,
        name: &str,
        template: i64,
        values: &[(&str, &[u8])],
    ) -> i64 {
        let mut data = lock(&self.data);
        let mut stored = Stored {
            name: name.to_owned(),
            folder_id: folder,
            template_id: template,
            values: BTreeMap::new(),
        };
        if let Some(template) = data.templates.iter().find(|t| t.id == template) {
            for (slug, value) in values {
                if let Some(field) = template.fields.iter().find(|f| f.slug == *slug) {
                    let filename = field.is_file.then(|| format!("{slug}.txt"));
                    stored.values.insert(field.id, (value.to_vec(), filename));
                }
            }
        }
        let id = data.next_id;
        data.next_id += 1;
        data.secrets.insert(id, stored);
        id
    }

    /// Sets field `slug` of secret `id` to `value` (a change made on the server).
    pub fn set_value(&self, id: i64, slug: &str, value: &[u8]) {
        let mut data = lock(&self.data);
        let Data {
            secrets, templates, ..
        } = &mut *data;
        let Some(stored) = secrets.get_mut(&id) else {
            return;
        };
        let field = templates
            .iter()
            .find(|t| t.id == stored.template_id)
            .and_then(|template| template.fields.iter().find(|f| f.slug == slug));
        if let Some(field) = field {
            let filename = field.is_file.then(|| format!("{slug}.txt"));
            stored.values.insert(field.id, (value.to_vec(), filename));
        }
    }

    /// The value of field `slug` of the secret named `name` in `folder`, if both exist.
    pub fn value(&self, folder: i64, name: &str, slug: &str) -> Option<Vec<u8>> {
        let data = lock(&self.data);
        let stored = data
            .secrets
            .values()
            .find(|s| s.folder_id == folder && s.name == name)?;
        let field = data
            .templates
            .iter()
            .find(|t| t.id == stored.template_id)?
            .fields
            .iter()
            .find(|f| f.slug == slug)?;
        stored.values.get(&field.id).map(|(value, _)| value.clone())
    }
}

fn templates() -> Vec<Template> {
    let field = |id, slug, name, is_file| TemplateField {
        id,
        slug,
        name,
        is_file,
    };
    vec![
        Template {
            id: PASSWORD_TEMPLATE,
            name: "Username and Password",
            fields: vec![
                field(301, "username", "Username", false),
                field(302, "password", "Password", false),
                field(303, "notes", "Notes", false),
            ],
        },
        Template {
            id: KEY_FILE_TEMPLATE,
            name: "Key File",
            fields: vec![
                field(311, "private-key", "Private Key", true),
                field(312, "passphrase", "Passphrase", false),
            ],
        },
    ]
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"errorCode": code, "message": message})),
    )
        .into_response()
}

fn oauth_error(code: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": code}))).into_response()
}

async fn health() -> Response {
    axum::Json(
        json!({"healthy": true, "databaseHealthy": true, "serviceBusHealthy": true,
        "storageAccountHealthy": true, "scheduledForDeletion": false}),
    )
    .into_response()
}

async fn token(State(data): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if header(&headers, "content-type") != Some("application/x-www-form-urlencoded") {
        return oauth_error("invalid_request");
    }
    let form: BTreeMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| form.get(name).map(String::as_str).unwrap_or_default();
    let mut data = lock(&data);
    let accounts = data.accounts.clone();
    let accepted = if accounts.platform {
        if field("grant_type") != "client_credentials" {
            return oauth_error("unsupported_grant_type");
        }
        field("scope") == "xpmheadless"
            && field("client_id") == accounts.username
            && field("client_secret") == accounts.password
    } else {
        if field("grant_type") != "password" {
            return oauth_error("unsupported_grant_type");
        }
        field("username") == accounts.username
            && field("password") == accounts.password
            && field("domain") == accounts.domain
    };
    if !accepted {
        return oauth_error("invalid_grant");
    }
    let token = format!("tss-token-{}", data.tokens.len() + 1);
    data.tokens.push(token.clone());
    axum::Json(json!({"access_token": token, "token_type": "bearer", "expires_in": 1200}))
        .into_response()
}

/// Whether the request carries a token the fake issued or was given.
fn authorized(data: &Data, headers: &HeaderMap) -> bool {
    bearer(headers).is_some_and(|token| {
        data.tokens.iter().any(|known| known == token)
            || (!data.accounts.fixed_token.is_empty() && token == data.accounts.fixed_token)
    })
}

fn unauthorized() -> Response {
    error(
        StatusCode::UNAUTHORIZED,
        "API_AuthenticationFailed",
        "Authentication failed.",
    )
}

async fn vaults(State(data): State<Shared>, headers: HeaderMap) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let host = header(&headers, "host").unwrap_or_default();
    axum::Json(json!({"vaults": [
        {"vaultId": "v-2", "name": "other", "type": "SecretServer", "isDefault": false,
         "isGlobalDefault": false, "isActive": true,
         "connection": {"url": "https://wrong.invalid", "oAuthProfileId": ""}},
        {"vaultId": "v-1", "name": "default", "type": "SecretServer", "isDefault": true,
         "isGlobalDefault": true, "isActive": true,
         "connection": {"url": format!("https://{host}/vault/"), "oAuthProfileId": ""}},
    ]}))
    .into_response()
}

fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "API_SecretNotFound",
        "Secret not found.",
    )
}

fn model(data: &Data, id: i64, stored: &Stored) -> Value {
    let template = data.templates.iter().find(|t| t.id == stored.template_id);
    let items: Vec<Value> = template
        .map(|template| template.fields.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|field| {
            let (value, filename) = stored.values.get(&field.id).cloned().unwrap_or_default();
            let (item_value, attachment) = match (field.is_file, &filename) {
                (true, Some(_)) => (
                    json!("*** Not Valid For Display ***"),
                    json!(900 + field.id),
                ),
                (true, None) => (json!(""), Value::Null),
                _ => (json!(String::from_utf8_lossy(&value)), Value::Null),
            };
            json!({"itemId": id * 1000 + field.id, "fieldId": field.id,
                "fileAttachmentId": attachment, "fieldName": field.name, "slug": field.slug,
                "fieldDescription": "", "filename": filename, "itemValue": item_value,
                "isFile": field.is_file, "isNotes": field.slug == "notes",
                "isPassword": field.slug == "password", "isList": false, "listType": "None"})
        })
        .collect();
    json!({"id": id, "name": stored.name, "secretTemplateId": stored.template_id,
        "secretTemplateName": template.map(|t| t.name), "folderId": stored.folder_id,
        "siteId": 1, "active": true, "checkedOut": false, "checkOutEnabled": false,
        "autoChangeEnabled": false, "secretPolicyId": null, "passwordTypeWebScriptId": null,
        "launcherConnectAsSecretId": null, "checkOutIntervalMinutes": null,
        "enableInheritPermissions": true, "enableInheritSecretPolicy": true,
        "items": items})
}

fn query(raw: Option<&str>) -> BTreeMap<String, String> {
    form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

fn secret_id(text: &str) -> Option<i64> {
    text.parse().ok().filter(|id| *id >= 0)
}

async fn read(
    State(data): State<Shared>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let Some(id) = secret_id(&id) else {
        return error(
            StatusCode::BAD_REQUEST,
            "API_InvalidId",
            "The secret id is invalid.",
        );
    };
    let query = query(raw.as_deref());
    let found = match (id, query.get("secretPath")) {
        (0, Some(path)) => {
            let path = path.replace('\\', "/");
            data.secrets.iter().find(|(_, stored)| {
                data.folders
                    .get(&stored.folder_id)
                    .is_some_and(|folder| format!("{folder}/{}", stored.name) == path)
            })
        }
        (0, None) => None,
        (id, _) => data.secrets.get_key_value(&id),
    };
    match found {
        Some((id, stored)) => axum::Json(model(&data, *id, stored)).into_response(),
        None => not_found(),
    }
}

async fn search(
    State(data): State<Shared>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let query = query(raw.as_deref());
    let get = |name: &str| query.get(name).map(String::as_str);
    let (Some(text), Some("Name")) = (
        get("paging.filter.searchText"),
        get("paging.filter.searchField"),
    ) else {
        return error(
            StatusCode::BAD_REQUEST,
            "API_InvalidFilter",
            "searchText and searchField=Name required.",
        );
    };
    let take = get("paging.take")
        .and_then(|take| take.parse::<usize>().ok())
        .unwrap_or(10);
    let exact = get("paging.filter.isExactMatch") == Some("true");
    let records: Vec<Value> = data
        .secrets
        .iter()
        .filter(|(_, stored)| {
            if exact {
                stored.name == text
            } else {
                stored.name.contains(text)
            }
        })
        .take(take)
        .map(|(id, stored)| {
            json!({"id": id, "name": stored.name, "folderId": stored.folder_id,
                "secretTemplateId": stored.template_id, "active": true})
        })
        .collect();
    axum::Json(json!({"skip": 0, "take": take, "records": records, "success": true}))
        .into_response()
}

/// The member `name` of a JSON object, matched case-insensitively.
fn member<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    object
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
}

/// Applies a write body's items to `stored`; an error answer when one is not a non-file field.
fn apply_items(
    data: &Data,
    stored: &mut Stored,
    body: &Map<String, Value>,
) -> Result<(), &'static str> {
    let template = data
        .templates
        .iter()
        .find(|t| t.id == stored.template_id)
        .ok_or("unknown secret template")?;
    let Some(Value::Array(items)) = member(body, "items") else {
        return Err("items are required");
    };
    for item in items {
        let item = item.as_object().ok_or("an item is not an object")?;
        let field_id = member(item, "fieldId")
            .and_then(Value::as_i64)
            .unwrap_or_default();
        let slug = member(item, "slug")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let field = template
            .fields
            .iter()
            .find(|f| f.id == field_id || (!slug.is_empty() && f.slug == slug))
            .ok_or("an item names no field of the template")?;
        if field.is_file {
            return Err("file fields are set through their fields endpoint");
        }
        let value = member(item, "itemValue")
            .and_then(Value::as_str)
            .unwrap_or_default();
        stored
            .values
            .insert(field.id, (value.as_bytes().to_vec(), None));
    }
    Ok(())
}

fn invalid_body() -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "API_InvalidBody",
        "The request is invalid.",
    )
}

fn json_body(headers: &HeaderMap, body: &[u8]) -> Option<Map<String, Value>> {
    if !header(headers, "content-type").is_some_and(|value| value.starts_with("application/json")) {
        return None;
    }
    serde_json::from_slice(body).ok()
}

async fn create(State(data): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let mut data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let Some(body) = json_body(&headers, &body) else {
        return invalid_body();
    };
    let int = |name: &str| {
        member(&body, name)
            .and_then(Value::as_i64)
            .unwrap_or_default()
    };
    let name = member(&body, "name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut stored = Stored {
        name: name.to_owned(),
        folder_id: int("folderId"),
        template_id: int("secretTemplateId"),
        values: BTreeMap::new(),
    };
    if name.is_empty() || !data.folders.contains_key(&stored.folder_id) {
        return error(
            StatusCode::BAD_REQUEST,
            "API_InvalidSecret",
            "name and an existing folder are required",
        );
    }
    if let Err(refused) = apply_items(&data, &mut stored, &body) {
        return error(StatusCode::BAD_REQUEST, "API_InvalidItems", refused);
    }
    let id = data.next_id;
    data.next_id += 1;
    let answer = model(&data, id, &stored);
    data.secrets.insert(id, stored);
    axum::Json(answer).into_response()
}

async fn update(
    State(data): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let Some(body) = json_body(&headers, &body) else {
        return invalid_body();
    };
    let Some(id) = secret_id(&id) else {
        return not_found();
    };
    if member(&body, "id").and_then(Value::as_i64) != Some(id) {
        return error(
            StatusCode::BAD_REQUEST,
            "API_IdMismatch",
            "The body's id must match the path.",
        );
    }
    let Some(mut stored) = data.secrets.get(&id).cloned() else {
        return not_found();
    };
    if let Err(refused) = apply_items(&data, &mut stored, &body) {
        return error(StatusCode::BAD_REQUEST, "API_InvalidItems", refused);
    }
    let answer = model(&data, id, &stored);
    data.secrets.insert(id, stored);
    axum::Json(answer).into_response()
}

async fn delete(
    State(data): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let mut data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    match secret_id(&id).and_then(|id| data.secrets.remove(&id).map(|_| id)) {
        Some(id) => axum::Json(json!({"id": id, "objectType": "Secret", "responseCodes": []}))
            .into_response(),
        None => not_found(),
    }
}

/// The template field `slug` of secret `id`, with the secret.
fn field_of(data: &Data, id: &str, slug: &str) -> Option<(i64, i64, bool)> {
    let id = secret_id(id)?;
    let stored = data.secrets.get(&id)?;
    let template = data.templates.iter().find(|t| t.id == stored.template_id)?;
    let field = template.fields.iter().find(|f| f.slug == slug)?;
    Some((id, field.id, field.is_file))
}

async fn file(
    State(data): State<Shared>,
    Path((id, slug)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let Some((id, field, is_file)) = field_of(&data, &id, &slug) else {
        return not_found();
    };
    let (value, _) = data
        .secrets
        .get(&id)
        .and_then(|stored| stored.values.get(&field).cloned())
        .unwrap_or_default();
    if is_file {
        return value.into_response();
    }
    axum::Json(json!(String::from_utf8_lossy(&value))).into_response()
}

/// The content and file name of the form file `file` of a multipart body.
fn multipart_file(content_type: &str, body: &[u8]) -> Option<(Vec<u8>, String)> {
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")?
        .trim_matches('"');
    let opening = format!("--{boundary}\r\n");
    let rest = body.strip_prefix(opening.as_bytes())?;
    let split = rest.windows(4).position(|window| window == b"\r\n\r\n")?;
    let headers = String::from_utf8_lossy(&rest[..split]).into_owned();
    let content = &rest[split + 4..];
    let closing = format!("\r\n--{boundary}--\r\n");
    let content = content.strip_suffix(closing.as_bytes())?;
    if !headers.contains("name=\"file\"") {
        return None;
    }
    let filename = headers
        .split("filename=\"")
        .nth(1)?
        .split('"')
        .next()?
        .to_owned();
    (!filename.is_empty()).then(|| (content.to_vec(), filename))
}

async fn upload(
    State(data): State<Shared>,
    Path((id, slug)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let Some((id, field, true)) = field_of(&data, &id, &slug) else {
        return error(
            StatusCode::BAD_REQUEST,
            "API_NotAFile",
            "No such file field.",
        );
    };
    let content_type = header(&headers, "content-type").unwrap_or_default();
    let Some((content, filename)) = multipart_file(content_type, &body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "API_InvalidUpload",
            "A multipart file is required.",
        );
    };
    if let Some(stored) = data.secrets.get_mut(&id) {
        stored.values.insert(field, (content, Some(filename)));
    }
    StatusCode::OK.into_response()
}

async fn clear_file(
    State(data): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let Some(body) = json_body(&headers, &body) else {
        return invalid_body();
    };
    let fields = member(&body, "data")
        .and_then(Value::as_object)
        .and_then(|data| member(data, "secretFields"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for change in fields.iter().filter_map(Value::as_object) {
        let slug = member(change, "slug")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let dirty = member(change, "dirty").and_then(Value::as_bool) == Some(true);
        let Some((id, field, true)) = field_of(&data, &id, slug).filter(|_| dirty) else {
            return error(
                StatusCode::BAD_REQUEST,
                "API_InvalidPatch",
                "Only dirty file fields are cleared.",
            );
        };
        if let Some(stored) = data.secrets.get_mut(&id) {
            stored.values.remove(&field);
        }
    }
    StatusCode::OK.into_response()
}

async fn template(
    State(data): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let Some(template) = id
        .parse::<i64>()
        .ok()
        .and_then(|id| data.templates.iter().find(|t| t.id == id))
    else {
        return error(
            StatusCode::NOT_FOUND,
            "API_TemplateNotFound",
            "Secret template not found.",
        );
    };
    let fields: Vec<Value> = template
        .fields
        .iter()
        .map(|field| {
            json!({"secretTemplateFieldId": field.id, "fieldSlugName": field.slug,
                "displayName": field.name, "description": "", "name": field.name,
                "isFile": field.is_file, "isPassword": field.slug == "password",
                "isNotes": field.slug == "notes", "isUrl": false, "isRequired": false,
                "isList": false, "listType": "None"})
        })
        .collect();
    axum::Json(json!({"id": template.id, "name": template.name, "fields": fields})).into_response()
}
