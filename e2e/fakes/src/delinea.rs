//! A contract fake of the Delinea DevOps Secrets Vault (DSV) REST API — a fake, not DSV.
//!
//! It follows Delinea's DSV API reference (<https://dsv.secretsvaultcloud.com/api>) for the two
//! calls upstream's client (`dsv-sdk-go`, `vault/vault.go` and `vault/secret.go`) makes:
//!
//! * `POST /v1/token` with a JSON body `{"grant_type": "client_credentials", "client_id": ...,
//!   "client_secret": ...}` and `Content-Type: application/json`: 200
//!   `{"accessToken": ..., "tokenType": "bearer", "expiresIn": 3600}`; wrong credentials are
//!   401, another grant type or a body that is not that JSON 400;
//! * `GET /v1/secrets/<path>` with `Authorization: Bearer <accessToken>`: the secret
//!   `{"id", "path", "attributes", "description", "data", "created", "lastModified",
//!   "createdBy", "lastModifiedBy", "version"}`; a missing or unknown token is 401, an unknown
//!   path 404. Errors are `{"code": N, "message": "..."}`.
//!
//! Paths are matched as DSV stores them: `/`-separated, `:` also accepted as separator.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::server::{FakeServer, bearer, header};

#[derive(Default)]
struct Data {
    client_id: String,
    client_secret: String,
    tokens: Vec<String>,
    /// Secret data by normalised path.
    secrets: BTreeMap<String, Value>,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake DSV tenant and handles to seed it.
pub struct DelineaFake {
    /// The HTTPS server (URL, CA, request log).
    pub server: FakeServer,
    data: Shared,
}

impl DelineaFake {
    /// Starts a fake accepting the client credentials `client_id` and `client_secret`.
    pub async fn start(client_id: &str, client_secret: &str) -> std::io::Result<Self> {
        let data = Arc::new(Mutex::new(Data {
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            ..Data::default()
        }));
        let router = Router::new()
            .route("/v1/token", post(token))
            .route("/v1/secrets/{*path}", get(secret))
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Creates or replaces the secret at `path` with `data` (a JSON object, or null).
    pub fn set_secret(&self, path: &str, data: Value) {
        lock(&self.data).secrets.insert(normalise(path), data);
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// A path with `:` separators written as `/`, without leading or trailing separators.
fn normalise(path: &str) -> String {
    path.replace(':', "/").trim_matches('/').to_owned()
}

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"code": status.as_u16(), "message": message});
    (status, axum::Json(body)).into_response()
}

async fn token(State(data): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if !header(&headers, "content-type").is_some_and(|value| value.starts_with("application/json"))
    {
        return error(StatusCode::BAD_REQUEST, "invalid content type");
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "invalid request body");
    };
    if request["grant_type"] != "client_credentials" {
        return error(StatusCode::BAD_REQUEST, "unsupported grant type");
    }
    let mut data = lock(&data);
    if request["client_id"] != data.client_id.as_str()
        || request["client_secret"] != data.client_secret.as_str()
    {
        return error(StatusCode::UNAUTHORIZED, "invalid client credentials");
    }
    let token = format!("dsv-token-{}", data.tokens.len() + 1);
    data.tokens.push(token.clone());
    axum::Json(json!({"accessToken": token, "tokenType": "bearer", "expiresIn": 3600}))
        .into_response()
}

async fn secret(
    State(data): State<Shared>,
    Path(path): Path<String>,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !bearer(&headers).is_some_and(|token| data.tokens.iter().any(|known| known == token)) {
        return error(StatusCode::UNAUTHORIZED, "invalid or missing access token");
    }
    let path = normalise(&path);
    match data.secrets.get(&path) {
        Some(secret) => axum::Json(json!({
            "id": format!("id-{}", path.len()),
            "path": path.replace('/', ":"),
            "attributes": {},
            "description": "",
            "data": secret,
            "created": "2026-01-01T00:00:00Z",
            "lastModified": "2026-01-01T00:00:00Z",
            "createdBy": "users:fake",
            "lastModifiedBy": "users:fake",
            "version": "1",
        }))
        .into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            "unable to find item with specified identifier",
        ),
    }
}
