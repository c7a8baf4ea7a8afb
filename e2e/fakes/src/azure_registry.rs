//! A contract fake of Azure Container Registry's token endpoints, with the Entra ID and IMDS
//! routes of [`crate::azure_identity`] on the same server (one origin plays the registry, the
//! authority and the metadata service).
//!
//! It is a fake, not ACR. It follows Azure's "ACR AAD-OAuth" reference
//! (github.com/Azure/acr, docs/AAD-OAuth.md) and "Azure Container Registry authentication":
//! `POST /oauth2/exchange` takes a form-encoded `grant_type=access_token`, `service` (the
//! registry's login server), optional `tenant` and `access_token` (an Entra ID token for Azure
//! Resource Manager) and answers `{"refresh_token": ...}`; `POST /oauth2/token` takes
//! `grant_type=refresh_token`, `service`, `scope` (`repository:NAME:ACTIONS`) and a
//! `refresh_token` it issued, and answers `{"access_token": ...}`. Anything else is refused as
//! ACR refuses it: 400 for a malformed request (wrong content type, missing field, other grant
//! or service), 401 for a token it does not accept, with the registry's error body
//! `{"errors":[{"code":...,"message":...}]}`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;

use crate::azure_identity::{self, SharedDirectory};
use crate::server::{FakeServer, header, reject};

/// The Resource Manager audiences whose Entra ID tokens the exchange accepts.
const ARM_AUDIENCES: [&str; 2] = [
    "https://management.azure.com",
    "https://management.core.windows.net",
];

#[derive(Default)]
struct Tokens {
    /// Refresh tokens issued, with the tenant they were asked for.
    refresh: HashMap<String, String>,
    /// Access tokens issued, with their scope.
    access: HashMap<String, String>,
    issued: u64,
}

#[derive(Clone)]
struct Shared {
    tokens: Arc<Mutex<Tokens>>,
    directory: SharedDirectory,
    tenant: String,
    origin: Arc<Mutex<String>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Tokens> {
        self.tokens
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// A running registry fake and its directory.
pub struct RegistryFake {
    /// The HTTPS server: registry at `url`, Entra ID at `url/{tenant}/...`, IMDS at
    /// `url/metadata/...`.
    pub server: FakeServer,
    /// Who may get Entra ID tokens.
    pub directory: SharedDirectory,
    shared: Shared,
}

impl RegistryFake {
    /// Starts a registry of `tenant` (whose login server is the server's `127.0.0.1:PORT`).
    pub async fn start(tenant: &str) -> std::io::Result<Self> {
        let directory = SharedDirectory::default();
        let origin = Arc::new(Mutex::new(String::new()));
        let shared = Shared {
            tokens: Arc::default(),
            directory: directory.clone(),
            tenant: tenant.to_owned(),
            origin: origin.clone(),
        };
        let router = Router::new()
            .route("/oauth2/exchange", post(exchange))
            .route("/oauth2/token", post(token))
            .with_state(shared.clone())
            .merge(azure_identity::routes(directory.clone(), origin.clone()));
        let server = FakeServer::https(router).await?;
        *origin.lock().unwrap_or_else(|p| p.into_inner()) = server.url.clone();
        Ok(Self {
            server,
            directory,
            shared,
        })
    }

    /// The registry's login server, as a generator's `registry` names it.
    pub fn login_server(&self) -> String {
        login_server(&self.server.url)
    }

    /// Whether `token` is a refresh token this registry issued.
    pub fn is_refresh_token(&self, token: &str) -> bool {
        self.shared.lock().refresh.contains_key(token)
    }

    /// The scope of access token `token`, if this registry issued it.
    pub fn access_scope(&self, token: &str) -> Option<String> {
        self.shared.lock().access.get(token).cloned()
    }
}

fn login_server(origin: &str) -> String {
    origin.trim_start_matches("https://").to_owned()
}

fn registry_error(status: StatusCode, code: &str, message: &str) -> Response {
    reject(
        status,
        json!({"errors": [{"code": code, "message": message}]}),
    )
}

/// The form fields of a token request, or why it is malformed (a 400).
fn form(
    shared: &Shared,
    headers: &HeaderMap,
    body: &Bytes,
    grant: &str,
    required: &[&str],
) -> Result<HashMap<String, String>, String> {
    let malformed = |message: &str| Err(message.to_owned());
    if !header(headers, "content-type")
        .is_some_and(|kind| kind.starts_with("application/x-www-form-urlencoded"))
    {
        return malformed("the request body must be form-encoded");
    }
    let form: HashMap<String, String> = form_urlencoded::parse(body).into_owned().collect();
    for field in required {
        if form.get(*field).is_none_or(String::is_empty) {
            return malformed(&format!("missing {field}"));
        }
    }
    if form.get("grant_type").map(String::as_str) != Some(grant) {
        return malformed("unsupported grant_type");
    }
    let origin = shared.origin.lock().unwrap_or_else(|p| p.into_inner());
    if form.get("service") != Some(&login_server(&origin)) {
        return malformed("service does not name this registry");
    }
    Ok(form)
}

fn issue(shared: &Shared, kind: &str) -> String {
    let mut tokens = shared.lock();
    tokens.issued += 1;
    format!("acr-{kind}-{}", tokens.issued)
}

async fn exchange(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let required = ["grant_type", "service", "access_token"];
    let form = match form(&shared, &headers, &body, "access_token", &required) {
        Ok(form) => form,
        Err(message) => {
            return registry_error(StatusCode::BAD_REQUEST, "UNSUPPORTED", &message);
        }
    };
    let tenant = form.get("tenant").cloned().unwrap_or_default();
    if !tenant.is_empty() && tenant != shared.tenant {
        return registry_error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "the token's tenant does not own this registry",
        );
    }
    let resource = form
        .get("access_token")
        .and_then(|token| shared.directory.resource_of(token));
    let accepted =
        resource.is_some_and(|resource| ARM_AUDIENCES.contains(&resource.trim_end_matches('/')));
    if !accepted {
        return registry_error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "the access token is not valid for Azure Resource Manager",
        );
    }
    let token = issue(&shared, "refresh");
    shared.lock().refresh.insert(token.clone(), tenant);
    (StatusCode::OK, axum::Json(json!({"refresh_token": token}))).into_response()
}

async fn token(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let required = ["grant_type", "service", "scope", "refresh_token"];
    let form = match form(&shared, &headers, &body, "refresh_token", &required) {
        Ok(form) => form,
        Err(message) => {
            return registry_error(StatusCode::BAD_REQUEST, "UNSUPPORTED", &message);
        }
    };
    let known = form
        .get("refresh_token")
        .is_some_and(|token| shared.lock().refresh.contains_key(token));
    if !known {
        return registry_error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "the refresh token is not valid",
        );
    }
    let scope = form.get("scope").cloned().unwrap_or_default();
    if !scope.starts_with("repository:") || scope.split(':').count() != 3 {
        return registry_error(StatusCode::BAD_REQUEST, "UNSUPPORTED", "invalid scope");
    }
    let token = issue(&shared, "access");
    shared.lock().access.insert(token.clone(), scope);
    (StatusCode::OK, axum::Json(json!({"access_token": token}))).into_response()
}
