//! A contract fake of the Akeyless V2 REST API as a gateway serves it — a fake, not Akeyless.
//!
//! It follows Akeyless's "API Reference" (<https://docs.akeyless.io/reference>), whose every
//! command is `POST /v2/<command>` with a JSON body (the gateway's REST port; its root answers
//! 404). `auth` takes `access-id` with `access-type` `access_key` (and `access-key`) or `k8s`
//! (with `k8s-service-account-token`, base64, and `k8s-auth-config-name`) and returns a
//! `token`; unknown credentials are 401. Every other command needs a live `token` (401
//! otherwise): `describe-item` (`name`; 404 for a missing item), `get-secret-value` (`names`,
//! optional `version`), `get-dynamic-secret-value` (`name`), `get-rotated-secret-value`
//! (`names`), `get-certificate-value` (`name`), `list-items` (`filter` path prefix, `type`,
//! `tag`), `create-secret` (`name`, `value`, `tags`; an existing name is 409),
//! `update-secret-val` (`name`, `value`; a new version) and `delete-item` (`name`). Errors carry
//! `{"error": "..."}`; a missing required field is 400.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::server::FakeServer;

/// One item.
#[derive(Clone)]
struct Item {
    kind: &'static str,
    /// Static secrets: every version, oldest first. Others: one JSON answer.
    versions: Vec<Value>,
    tags: Vec<String>,
}

/// What the fake holds.
#[derive(Default)]
struct Data {
    /// access id → access key.
    access_keys: BTreeMap<String, String>,
    /// (access id, config name, service-account JWT).
    kubernetes: Vec<(String, String, String)>,
    tokens: Vec<String>,
    items: BTreeMap<String, Item>,
    auths: u64,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake gateway and handles to seed and inspect it.
pub struct AkeylessFake {
    /// The HTTPS server (URL, CA, request log); commands are under `<url>/v2`.
    pub server: FakeServer,
    data: Shared,
}

impl AkeylessFake {
    /// Starts an empty fake.
    pub async fn start() -> std::io::Result<Self> {
        let data = Arc::new(Mutex::new(Data::default()));
        let router = Router::new()
            .route("/v2/{command}", post(command))
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Accepts access-key auth with `id` and `key`.
    pub fn accept_access_key(&self, id: &str, key: &str) {
        lock(&self.data)
            .access_keys
            .insert(id.to_owned(), key.to_owned());
    }

    /// Accepts Kubernetes auth of `id` through config `config` with service-account `jwt`.
    pub fn accept_kubernetes(&self, id: &str, config: &str, jwt: &str) {
        lock(&self.data)
            .kubernetes
            .push((id.to_owned(), config.to_owned(), jwt.to_owned()));
    }

    /// How many tokens were issued.
    pub fn auths(&self) -> u64 {
        lock(&self.data).auths
    }

    /// Sets static secret `name` to `value` (a new version when it exists) with `tags`.
    pub fn set_static(&self, name: &str, value: &str, tags: &[&str]) {
        let mut data = lock(&self.data);
        let item = data.items.entry(name.to_owned()).or_insert(Item {
            kind: "STATIC_SECRET",
            versions: Vec::new(),
            tags: Vec::new(),
        });
        item.versions.push(Value::String(value.to_owned()));
        item.tags = tags.iter().map(|tag| (*tag).to_owned()).collect();
    }

    /// Adds a dynamic secret answering `value`.
    pub fn set_dynamic(&self, name: &str, value: Value) {
        self.set_other(name, "DYNAMIC_SECRET", value);
    }

    /// Adds a rotated secret answering `value` (the whole `get-rotated-secret-value` answer).
    pub fn set_rotated(&self, name: &str, value: Value) {
        self.set_other(name, "ROTATED_SECRET", value);
    }

    /// Adds a certificate answering `value`.
    pub fn set_certificate(&self, name: &str, value: Value) {
        self.set_other(name, "CERTIFICATE", value);
    }

    fn set_other(&self, name: &str, kind: &'static str, value: Value) {
        lock(&self.data).items.insert(
            name.to_owned(),
            Item {
                kind,
                versions: vec![value],
                tags: Vec::new(),
            },
        );
    }

    /// The latest value of static secret `name` and its tags.
    pub fn static_value(&self, name: &str) -> Option<(String, Vec<String>)> {
        let data = lock(&self.data);
        let item = data.items.get(name)?;
        let value = item.versions.last()?.as_str()?.to_owned();
        Some((value, item.tags.clone()))
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

/// A required string field, or the 400 its absence gets.
fn field<'a>(body: &'a Map<String, Value>, name: &str) -> Result<&'a str, Box<Response>> {
    body.get(name).and_then(Value::as_str).ok_or_else(|| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            &format!("{name} is required"),
        ))
    })
}

async fn command(State(data): State<Shared>, Path(command): Path<String>, body: Bytes) -> Response {
    let Ok(Value::Object(body)) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "invalid JSON body");
    };
    let mut data = lock(&data);
    if command == "auth" {
        return match authenticate(&mut data, &body) {
            Ok(answer) => answer,
            Err(refused) => *refused,
        };
    }
    let token = body.get("token").or_else(|| body.get("uid-token"));
    if !token
        .and_then(Value::as_str)
        .is_some_and(|token| data.tokens.iter().any(|live| live == token))
    {
        return error(StatusCode::UNAUTHORIZED, "access denied: invalid token");
    }
    match serve(&mut data, &command, &body) {
        Ok(answer) => answer,
        Err(refused) => *refused,
    }
}

fn authenticate(data: &mut Data, body: &Map<String, Value>) -> Result<Response, Box<Response>> {
    let id = field(body, "access-id")?;
    let kind = body
        .get("access-type")
        .and_then(Value::as_str)
        .unwrap_or("access_key");
    let accepted = match kind {
        "access_key" | "api_key" => {
            let key = field(body, "access-key")?;
            data.access_keys.get(id).is_some_and(|known| known == key)
        }
        "k8s" => {
            let encoded = field(body, "k8s-service-account-token")?;
            let config = field(body, "k8s-auth-config-name")?;
            let jwt = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| {
                    Box::new(error(StatusCode::BAD_REQUEST, "invalid k8s token encoding"))
                })?;
            data.kubernetes
                .iter()
                .any(|(known_id, known_config, known_jwt)| {
                    known_id == id && known_config == config && known_jwt.as_bytes() == jwt
                })
        }
        _ => false,
    };
    if !accepted {
        return Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            "authentication failed: access denied",
        )));
    }
    data.auths += 1;
    let token = format!("t-fake-{}", data.auths);
    data.tokens.push(token.clone());
    Ok(axum::Json(json!({ "token": token })).into_response())
}

fn not_found(name: &str) -> Box<Response> {
    Box::new(error(
        StatusCode::NOT_FOUND,
        &format!("item not found: {name}"),
    ))
}

fn serve(
    data: &mut Data,
    command: &str,
    body: &Map<String, Value>,
) -> Result<Response, Box<Response>> {
    let answer = match command {
        "describe-item" => {
            let name = field(body, "name")?;
            let item = data.items.get(name).ok_or_else(|| not_found(name))?;
            json!({
                "item_name": name,
                "item_type": item.kind,
                "item_tags": item.tags,
                "last_version": item.versions.len(),
            })
        }
        "get-secret-value" => {
            let names = body
                .get("names")
                .and_then(Value::as_array)
                .ok_or_else(|| Box::new(error(StatusCode::BAD_REQUEST, "names is required")))?;
            let version = body.get("version").and_then(Value::as_u64).unwrap_or(0);
            let mut out = Map::new();
            for name in names.iter().filter_map(Value::as_str) {
                let item = data
                    .items
                    .get(name)
                    .filter(|item| item.kind == "STATIC_SECRET")
                    .ok_or_else(|| not_found(name))?;
                let chosen = match usize::try_from(version).unwrap_or(usize::MAX) {
                    0 => item.versions.last(),
                    number => item.versions.get(number - 1),
                };
                let value = chosen.ok_or_else(|| {
                    Box::new(error(StatusCode::NOT_FOUND, "item version not found"))
                })?;
                out.insert(name.to_owned(), value.clone());
            }
            Value::Object(out)
        }
        "get-dynamic-secret-value" | "get-certificate-value" | "get-rotated-secret-value" => {
            let (key, kind) = match command {
                "get-dynamic-secret-value" => ("name", "DYNAMIC_SECRET"),
                "get-certificate-value" => ("name", "CERTIFICATE"),
                _ => ("names", "ROTATED_SECRET"),
            };
            let name = field(body, key)?;
            let item = data
                .items
                .get(name)
                .filter(|item| item.kind == kind)
                .ok_or_else(|| not_found(name))?;
            item.versions.last().cloned().unwrap_or(Value::Null)
        }
        "list-items" => {
            let filter = body.get("filter").and_then(Value::as_str).unwrap_or("");
            let tag = body.get("tag").and_then(Value::as_str).unwrap_or("");
            let items: Vec<Value> = data
                .items
                .iter()
                .filter(|(name, item)| {
                    name.starts_with(filter)
                        && item.kind != "CERTIFICATE"
                        && (tag.is_empty() || item.tags.iter().any(|t| t == tag))
                })
                .map(|(name, item)| json!({"item_name": name, "item_type": item.kind}))
                .collect();
            json!({ "items": items })
        }
        "create-secret" => {
            let name = field(body, "name")?;
            let value = field(body, "value")?;
            if data.items.contains_key(name) {
                return Err(Box::new(error(StatusCode::CONFLICT, "item already exists")));
            }
            let tags = body
                .get("tags")
                .and_then(Value::as_array)
                .map(|tags| {
                    tags.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let item = Item {
                kind: "STATIC_SECRET",
                versions: vec![Value::String(value.to_owned())],
                tags,
            };
            data.items.insert(name.to_owned(), item);
            json!({ "name": name })
        }
        "update-secret-val" => {
            let name = field(body, "name")?;
            let value = field(body, "value")?;
            let item = data.items.get_mut(name).ok_or_else(|| not_found(name))?;
            item.versions.push(Value::String(value.to_owned()));
            json!({ "name": name })
        }
        "delete-item" => {
            let name = field(body, "name")?;
            data.items.remove(name).ok_or_else(|| not_found(name))?;
            json!({})
        }
        _ => return Err(Box::new(error(StatusCode::NOT_FOUND, "unknown command"))),
    };
    Ok(axum::Json(answer).into_response())
}
