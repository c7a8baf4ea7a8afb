//! A contract fake of the 1Password Connect server REST API — a fake, not 1Password.
//!
//! It follows 1Password's "Connect server API reference"
//! (<https://developer.1password.com/docs/connect/api-reference/>): every request needs
//! `Authorization: Bearer <token>` (401 `{"status":401,"message":...}` otherwise);
//! `GET /v1/vaults` (with the optional `filter=name eq "..."`), `GET /v1/vaults/{id}`,
//! `GET|POST /v1/vaults/{id}/items` (list with optional `filter=title eq "..."`, which returns
//! summaries without fields; create, whose body's `vault.id` must match the path and which needs a
//! `category`), `GET|PUT|DELETE /v1/vaults/{id}/items/{id}` (a replacement's `id` and `vault.id`
//! must match the path) and `GET .../items/{id}/files/{id}/content`. Unknown vaults and items are
//! 404 with Connect's error body; unsupported filters are 400. Ids are 26 lowercase letters and
//! digits, as Connect's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::server::{FakeServer, bearer};

/// What the fake holds.
#[derive(Default)]
struct Data {
    token: String,
    /// (id, name) of each vault.
    vaults: Vec<(String, String)>,
    /// Full items, each with `vault.id`.
    items: Vec<Value>,
    /// File contents by file id.
    files: HashMap<String, Vec<u8>>,
    next_id: u64,
}

impl Data {
    fn new_id(&mut self) -> String {
        self.next_id += 1;
        format!("{:0>26}", self.next_id)
    }
}

type Shared = Arc<Mutex<Data>>;

/// A running fake Connect server and handles to seed and inspect it.
pub struct OnePasswordFake {
    /// The HTTPS server (URL, CA, request log).
    pub server: FakeServer,
    data: Shared,
}

impl OnePasswordFake {
    /// Starts a fake accepting `token` and holding the named, empty vaults.
    pub async fn start(token: &str, vaults: &[&str]) -> std::io::Result<Self> {
        let mut data = Data {
            token: token.to_owned(),
            ..Data::default()
        };
        for name in vaults {
            let id = data.new_id();
            data.vaults.push((id, (*name).to_owned()));
        }
        let data = Arc::new(Mutex::new(data));
        let router = Router::new()
            .route("/v1/vaults", get(list_vaults))
            .route("/v1/vaults/{vault}", get(get_vault))
            .route(
                "/v1/vaults/{vault}/items",
                get(list_items).post(create_item),
            )
            .route(
                "/v1/vaults/{vault}/items/{item}",
                get(get_item).put(replace_item).delete(delete_item),
            )
            .route(
                "/v1/vaults/{vault}/items/{item}/files/{file}/content",
                get(file_content),
            )
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Adds an empty vault named `name`; returns its id.
    pub fn add_vault(&self, name: &str) -> String {
        let mut data = lock(&self.data);
        let id = data.new_id();
        data.vaults.push((id.clone(), name.to_owned()));
        id
    }

    /// The id of the vault named `name`.
    pub fn vault_id(&self, name: &str) -> Option<String> {
        lock(&self.data)
            .vaults
            .iter()
            .find(|(_, vault)| vault == name)
            .map(|(id, _)| id.clone())
    }

    /// Adds an item titled `title` with `fields` (label, value), `files` (name, bytes) and
    /// `tags` to vault `vault`; `category` as Connect's (`LOGIN`, `DOCUMENT`, ...). Returns its id.
    pub fn add_item(
        &self,
        vault: &str,
        title: &str,
        category: &str,
        fields: &[(&str, &str)],
        files: &[(&str, &[u8])],
        tags: &[&str],
    ) -> String {
        let vault_id = self.vault_id(vault).unwrap_or_default();
        let mut data = lock(&self.data);
        let id = data.new_id();
        let fields: Vec<Value> = fields
            .iter()
            .map(|(label, value)| json!({"id": label, "label": label, "value": value, "type": "CONCEALED"}))
            .collect();
        let mut file_values = Vec::new();
        for (name, content) in files {
            let file_id = data.new_id();
            data.files.insert(file_id.clone(), content.to_vec());
            file_values.push(json!({
                "id": file_id,
                "name": name,
                "size": content.len(),
                "content_path": format!("/v1/vaults/{vault_id}/items/{id}/files/{file_id}/content"),
            }));
        }
        data.items.push(json!({
            "id": id, "title": title, "category": category, "tags": tags,
            "vault": {"id": vault_id}, "fields": fields, "files": file_values,
        }));
        id
    }

    /// Sets the value of the field labelled `label` of item `item` in vault `vault` (by name),
    /// as a change made in 1Password would; whether such a field was found.
    pub fn set_field(&self, vault: &str, item: &str, label: &str, value: &str) -> bool {
        let vault_id = self.vault_id(vault).unwrap_or_default();
        let mut data = lock(&self.data);
        let field = data
            .items
            .iter_mut()
            .filter(|candidate| {
                candidate["id"] == item && candidate["vault"]["id"] == vault_id.as_str()
            })
            .filter_map(|candidate| candidate["fields"].as_array_mut())
            .flatten()
            .find(|field| field["label"] == label);
        match field {
            Some(field) => {
                field["value"] = json!(value);
                true
            }
            None => false,
        }
    }

    /// Every full item of vault `vault` (by name), as the fake holds them.
    pub fn items(&self, vault: &str) -> Vec<Value> {
        let vault_id = self.vault_id(vault).unwrap_or_default();
        lock(&self.data)
            .items
            .iter()
            .filter(|item| item["vault"]["id"] == vault_id.as_str())
            .cloned()
            .collect()
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Connect's error answer.
fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"status": status.as_u16(), "message": message})),
    )
        .into_response()
}

/// Connect's error answer, boxed for `Result`s.
fn refuse(status: StatusCode, message: &str) -> Box<Response> {
    Box::new(error(status, message))
}

/// The store, if the bearer token is the fake's.
fn authorized<'a>(
    data: &'a Shared,
    headers: &HeaderMap,
) -> Result<MutexGuard<'a, Data>, Box<Response>> {
    let data = lock(data);
    match bearer(headers) {
        Some(token) if token == data.token => Ok(data),
        Some(_) => Err(refuse(StatusCode::UNAUTHORIZED, "Invalid token signature")),
        None => Err(refuse(StatusCode::UNAUTHORIZED, "Invalid bearer token")),
    }
}

/// The value of a `filter=<attribute> eq "<value>"` query; `Err` for any other filter.
fn filter(query: Option<&str>, attribute: &str) -> Result<Option<String>, Box<Response>> {
    let Some(query) = query else { return Ok(None) };
    let mut wanted = None;
    for (key, value) in url_pairs(query) {
        if key != "filter" {
            return Err(refuse(StatusCode::BAD_REQUEST, "Invalid query parameter"));
        }
        let quoted = value
            .strip_prefix(&format!("{attribute} eq \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "Invalid filter"))?;
        wanted = Some(quoted.replace("\\\"", "\"").replace("\\\\", "\\"));
    }
    Ok(wanted)
}

/// `application/x-www-form-urlencoded` pairs, decoded.
fn url_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' if index + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(byte) => {
                        out.push(byte);
                        index += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn vault_json(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "type": "USER_CREATED", "items": 0})
}

async fn list_vaults(
    State(data): State<Shared>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    let wanted = match filter(query.as_deref(), "name") {
        Ok(wanted) => wanted,
        Err(bad) => return *bad,
    };
    let vaults: Vec<Value> = data
        .vaults
        .iter()
        .filter(|(_, name)| wanted.as_ref().is_none_or(|wanted| wanted == name))
        .map(|(id, name)| vault_json(id, name))
        .collect();
    axum::Json(vaults).into_response()
}

async fn get_vault(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(vault): Path<String>,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    match data.vaults.iter().find(|(id, _)| *id == vault) {
        Some((id, name)) => axum::Json(vault_json(id, name)).into_response(),
        None => error(StatusCode::NOT_FOUND, "vault not found"),
    }
}

/// The vault exists (404 otherwise).
fn known_vault(data: &Data, vault: &str) -> Result<(), Box<Response>> {
    if data.vaults.iter().any(|(id, _)| id == vault) {
        Ok(())
    } else {
        Err(refuse(StatusCode::NOT_FOUND, "vault not found"))
    }
}

/// An item as a list shows it: no fields, files or sections.
fn summary(item: &Value) -> Value {
    let mut summary = item.clone();
    if let Some(object) = summary.as_object_mut() {
        object.remove("fields");
        object.remove("files");
        object.remove("sections");
    }
    summary
}

async fn list_items(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(vault): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    if let Err(missing) = known_vault(&data, &vault) {
        return *missing;
    }
    let wanted = match filter(query.as_deref(), "title") {
        Ok(wanted) => wanted,
        Err(bad) => return *bad,
    };
    let items: Vec<Value> = data
        .items
        .iter()
        .filter(|item| item["vault"]["id"] == vault.as_str())
        .filter(|item| {
            wanted
                .as_ref()
                .is_none_or(|title| item["title"] == title.as_str())
        })
        .map(summary)
        .collect();
    axum::Json(items).into_response()
}

/// Checks an item body for create or replace; gives fields without ids their ids.
fn checked_item(data: &mut Data, vault: &str, body: &[u8]) -> Result<Value, Box<Response>> {
    let mut item: Value = serde_json::from_slice(body)
        .map_err(|_| refuse(StatusCode::BAD_REQUEST, "Invalid request body"))?;
    if item["vault"]["id"] != vault {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "Invalid item: vault ID in body does not match path",
        ));
    }
    if !item["category"].is_string() {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "Invalid item: category is required",
        ));
    }
    if let Some(fields) = item.get_mut("fields").and_then(Value::as_array_mut) {
        for field in fields {
            if !field["type"].is_string() && !field["type"].is_null() {
                return Err(refuse(StatusCode::BAD_REQUEST, "Invalid item field type"));
            }
            if field.get("id").is_none_or(|id| !id.is_string()) {
                data.next_id += 1;
                field["id"] = json!(format!("f{}", data.next_id));
            }
        }
    }
    Ok(item)
}

async fn create_item(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path(vault): Path<String>,
    body: Bytes,
) -> Response {
    let mut data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    if let Err(missing) = known_vault(&data, &vault) {
        return *missing;
    }
    let mut item = match checked_item(&mut data, &vault, &body) {
        Ok(item) => item,
        Err(bad) => return *bad,
    };
    if item
        .get("id")
        .is_some_and(|id| id.as_str().is_some_and(|id| !id.is_empty()))
    {
        return error(StatusCode::BAD_REQUEST, "Invalid item: id must not be set");
    }
    item["id"] = json!(data.new_id());
    data.items.push(item.clone());
    axum::Json(item).into_response()
}

fn item_index(data: &Data, vault: &str, item: &str) -> Result<usize, Box<Response>> {
    known_vault(data, vault)?;
    data.items
        .iter()
        .position(|candidate| candidate["id"] == item && candidate["vault"]["id"] == vault)
        .ok_or_else(|| refuse(StatusCode::NOT_FOUND, "item not found"))
}

async fn get_item(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path((vault, item)): Path<(String, String)>,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    match item_index(&data, &vault, &item) {
        Ok(index) => axum::Json(data.items[index].clone()).into_response(),
        Err(missing) => *missing,
    }
}

async fn replace_item(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path((vault, item)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let mut data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    let index = match item_index(&data, &vault, &item) {
        Ok(index) => index,
        Err(missing) => return *missing,
    };
    let replacement = match checked_item(&mut data, &vault, &body) {
        Ok(replacement) => replacement,
        Err(bad) => return *bad,
    };
    if replacement["id"] != item.as_str() {
        return error(
            StatusCode::BAD_REQUEST,
            "Invalid item: ID in body does not match path",
        );
    }
    data.items[index] = replacement.clone();
    axum::Json(replacement).into_response()
}

async fn delete_item(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path((vault, item)): Path<(String, String)>,
) -> Response {
    let mut data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    match item_index(&data, &vault, &item) {
        Ok(index) => {
            data.items.remove(index);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(missing) => *missing,
    }
}

async fn file_content(
    State(data): State<Shared>,
    headers: HeaderMap,
    Path((vault, item, file)): Path<(String, String, String)>,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(denied) => return *denied,
    };
    let index = match item_index(&data, &vault, &item) {
        Ok(index) => index,
        Err(missing) => return *missing,
    };
    let attached = data.items[index]["files"].as_array().is_some_and(|files| {
        files
            .iter()
            .any(|candidate| candidate["id"] == file.as_str())
    });
    match data.files.get(&file).filter(|_| attached) {
        Some(content) => content.clone().into_response(),
        None => error(StatusCode::NOT_FOUND, "file not found"),
    }
}
