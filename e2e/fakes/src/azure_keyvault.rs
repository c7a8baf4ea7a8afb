//! A contract fake of the Azure Key Vault data plane (secrets, keys, certificates), served with
//! the Entra ID token endpoints of [`crate::azure_identity`] on one HTTPS server.
//!
//! It is a fake, not Key Vault. It follows the Key Vault REST API reference (api-version 7.4):
//! "Authentication, requests and responses" (a request without a bearer token is answered `401`
//! with `WWW-Authenticate: Bearer authorization="<authority>/<tenant>", resource="<audience>"`;
//! a token not issued for the vault's audience is refused; `api-version` is required), "Get
//! Secret", "Set Secret", "Get Secrets" (pages of at most `maxresults` (1..=25) items without
//! values, linked by `nextLink`), "Delete Secret" and "Recover Deleted Secret" (soft delete: a
//! deleted name is `409 ObjectIsDeletedButRecoverable` until recovered), "Get Key" and "Import
//! Key" (the public JSON Web Key is returned, private members are never stored), "Get
//! Certificate", "Delete Key/Certificate". Errors carry Key Vault's body
//! `{"error":{"code":"SecretNotFound","message":...}}`; a disabled secret reads as `403` with
//! inner code `SecretDisabled`. Object names must match `^[0-9a-zA-Z-]{1,127}$`; at most 15
//! tags.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header::WWW_AUTHENTICATE};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value, json};

mod writes;

use self::writes::{delete, import_certificate, import_key, recover, set_secret};
use crate::azure_identity::{self, SharedDirectory};
use crate::server::{FakeServer, bearer, reject};

/// The api-version the fake documents (any non-empty value is accepted).
pub const API_VERSION: &str = "7.4";

/// The public cloud's Key Vault audience, the resource real vaults name in their challenge.
pub const PUBLIC_AUDIENCE: &str = "https://vault.azure.net";

/// One version of an object.
#[derive(Clone)]
struct Version {
    id: String,
    /// Secret value, JWK, or certificate DER (base64).
    body: Value,
    content_type: Option<String>,
    tags: BTreeMap<String, String>,
    enabled: bool,
    expires: Option<i64>,
    updated: i64,
}

/// Versions of one object, newest last.
type Versions = Vec<Version>;

#[derive(Default)]
struct Vault {
    objects: HashMap<(Kind, String), Versions>,
    deleted: HashMap<(Kind, String), Versions>,
    next_version: u64,
}

/// The three collections of a vault.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kind {
    /// `/secrets`
    Secret,
    /// `/keys`
    Key,
    /// `/certificates`
    Certificate,
}

impl Kind {
    fn collection(self) -> &'static str {
        match self {
            Kind::Secret => "secrets",
            Kind::Key => "keys",
            Kind::Certificate => "certificates",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Secret => "Secret",
            Kind::Key => "Key",
            Kind::Certificate => "Certificate",
        }
    }
}

/// A running Key Vault fake and its directory.
pub struct KeyVaultFake {
    /// The HTTPS server: vault at `url`, Entra ID at `url/{tenant}/...`, IMDS at
    /// `url/metadata/...`.
    pub server: FakeServer,
    /// Who may get tokens.
    pub directory: SharedDirectory,
    vault: Arc<Mutex<Vault>>,
}

#[derive(Clone)]
struct Shared {
    vault: Arc<Mutex<Vault>>,
    directory: SharedDirectory,
    challenge: String,
    audience: String,
    origin: Arc<Mutex<String>>,
}

impl KeyVaultFake {
    /// Starts a vault whose challenge names `audience` (a real vault names
    /// [`PUBLIC_AUDIENCE`]; a client that checks the challenge against the vault's host needs
    /// the server's own origin) and `tenant` in the authority.
    pub async fn start(tenant: &str, audience: Option<&str>) -> std::io::Result<Self> {
        let vault = Arc::new(Mutex::new(Vault::default()));
        let directory = SharedDirectory::default();
        let origin = Arc::new(Mutex::new(String::new()));
        let shared = Shared {
            vault: vault.clone(),
            directory: directory.clone(),
            challenge: tenant.to_owned(),
            audience: audience.unwrap_or(PUBLIC_AUDIENCE).to_owned(),
            origin: origin.clone(),
        };
        // Both halves need the server's origin, known only once it listens: they read it from
        // a shared cell filled right after the server starts.
        let router = Router::new()
            .fallback(data_plane)
            .with_state(shared)
            .merge(azure_identity::routes(directory.clone(), origin.clone()));
        let server = FakeServer::https(router).await?;
        *origin.lock().unwrap_or_else(|p| p.into_inner()) = server.url.clone();
        let fake = Self {
            server,
            directory,
            vault,
        };
        Ok(fake)
    }

    fn lock(&self) -> MutexGuard<'_, Vault> {
        self.vault
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Adds a secret version (test setup, no auth).
    pub fn put_secret(&self, name: &str, value: &str, tags: &[(&str, &str)], enabled: bool) {
        let tags = tags
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let origin = self.server.url.clone();
        self.lock().add(
            &origin,
            Kind::Secret,
            name,
            json!(value),
            None,
            tags,
            enabled,
            None,
        );
    }

    /// Adds a key version holding the public `jwk` (test setup).
    pub fn put_key(&self, name: &str, jwk: Value, tags: &[(&str, &str)]) {
        let tags = tags
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let origin = self.server.url.clone();
        self.lock()
            .add(&origin, Kind::Key, name, jwk, None, tags, true, None);
    }

    /// Adds a certificate version from its DER (test setup).
    pub fn put_certificate(&self, name: &str, der: &[u8], tags: &[(&str, &str)]) {
        let tags = tags
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let body = json!(base64::engine::general_purpose::STANDARD.encode(der));
        let origin = self.server.url.clone();
        self.lock().add(
            &origin,
            Kind::Certificate,
            name,
            body,
            None,
            tags,
            true,
            None,
        );
    }

    /// The newest version of a live object as its REST bundle, if any.
    pub fn bundle(&self, kind: Kind, name: &str) -> Option<Value> {
        let vault = self.lock();
        let versions = vault.objects.get(&(kind, name.to_owned()))?;
        versions.last().map(|version| bundle(kind, version))
    }

    /// Whether `name` is soft-deleted (recoverable).
    pub fn is_deleted(&self, kind: Kind, name: &str) -> bool {
        self.lock().deleted.contains_key(&(kind, name.to_owned()))
    }
}

impl Vault {
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        origin: &str,
        kind: Kind,
        name: &str,
        body: Value,
        content_type: Option<String>,
        tags: BTreeMap<String, String>,
        enabled: bool,
        expires: Option<i64>,
    ) -> Version {
        self.next_version += 1;
        let version_id = format!("{:032x}", u128::from(self.next_version) * 7_919 + 1_000_003);
        let version = Version {
            id: format!("{origin}/{}/{name}/{version_id}", kind.collection()),
            body,
            content_type,
            tags,
            enabled,
            expires,
            updated: now(),
        };
        self.objects
            .entry((kind, name.to_owned()))
            .or_default()
            .push(version.clone());
        version
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or_default()
}

fn attributes(version: &Version) -> Value {
    let mut attributes = json!({
        "enabled": version.enabled,
        "created": version.updated,
        "updated": version.updated,
        "recoveryLevel": "Recoverable+Purgeable",
    });
    if let Some(expires) = version.expires {
        attributes["exp"] = json!(expires);
    }
    attributes
}

/// The REST bundle of one version.
fn bundle(kind: Kind, version: &Version) -> Value {
    let mut out = json!({"attributes": attributes(version), "tags": version.tags});
    match kind {
        Kind::Secret => {
            out["id"] = json!(version.id);
            out["value"] = version.body.clone();
            if let Some(content_type) = &version.content_type {
                out["contentType"] = json!(content_type);
            }
        }
        Kind::Key => {
            let mut key = version.body.clone();
            key["kid"] = json!(version.id);
            out["key"] = key;
        }
        Kind::Certificate => {
            out["id"] = json!(version.id);
            out["cer"] = version.body.clone();
            out["kid"] = json!(version.id.replace("/certificates/", "/keys/"));
            out["sid"] = json!(version.id.replace("/certificates/", "/secrets/"));
        }
    }
    out
}

/// A list item: the bundle without the value (secrets) or with `kid` (keys).
fn item(kind: Kind, version: &Version) -> Value {
    let id = version
        .id
        .rsplit_once('/')
        .map_or(version.id.clone(), |(base, _)| base.to_owned());
    let mut out = json!({"attributes": attributes(version), "tags": version.tags});
    out[if kind == Kind::Key { "kid" } else { "id" }] = json!(id);
    if let (Kind::Secret, Some(content_type)) = (kind, &version.content_type) {
        out["contentType"] = json!(content_type);
    }
    out
}

fn kv_error(status: StatusCode, code: &str, message: &str, inner: Option<&str>) -> Response {
    let mut error = json!({"code": code, "message": message});
    if let Some(inner) = inner {
        error["innererror"] = json!({"code": inner});
    }
    reject(status, json!({"error": error}))
}

fn not_found(kind: Kind, name: &str) -> Response {
    let message = format!(
        "A {} with (name/id) {name} was not found in this key vault.",
        kind.noun().to_lowercase()
    );
    kv_error(
        StatusCode::NOT_FOUND,
        &format!("{}NotFound", kind.noun()),
        &message,
        None,
    )
}

fn valid_name(name: &str) -> bool {
    (1..=127).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

async fn data_plane(State(shared): State<Shared>, request: Request) -> Response {
    let origin = shared
        .origin
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let query: HashMap<String, String> =
        form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let Some(token) = bearer(request.headers()).map(str::to_owned) else {
        let challenge = format!(
            "Bearer authorization=\"{origin}/{}\", resource=\"{}\"",
            shared.challenge, shared.audience
        );
        let mut response = kv_error(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "AKV10000: Request is missing a Bearer or PoP token.",
            None,
        );
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        return response;
    };
    if query.get("api-version").is_none_or(String::is_empty) {
        return kv_error(
            StatusCode::BAD_REQUEST,
            "BadParameter",
            "The request URI contains an invalid or missing api-version query parameter.",
            None,
        );
    }
    match shared.directory.resource_of(&token) {
        Some(resource) if resource.trim_end_matches('/') == shared.audience => {}
        Some(_) => {
            return kv_error(
                StatusCode::UNAUTHORIZED,
                "Unauthorized",
                "AKV10022: Invalid audience.",
                None,
            );
        }
        None => {
            return kv_error(
                StatusCode::UNAUTHORIZED,
                "Unauthorized",
                "AKV10032: Invalid issuer.",
                None,
            );
        }
    }
    let method = request.method().clone();
    let path: Vec<String> = request
        .uri()
        .path()
        .trim_start_matches('/')
        .split('/')
        .map(str::to_owned)
        .collect();
    let body = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut vault = shared.vault.lock().unwrap_or_else(|p| p.into_inner());
    route(&mut vault, &origin, &method, &path, &query, body)
}

fn kind_of(collection: &str) -> Option<Kind> {
    match collection {
        "secrets" => Some(Kind::Secret),
        "keys" => Some(Kind::Key),
        "certificates" => Some(Kind::Certificate),
        _ => None,
    }
}

fn route(
    vault: &mut Vault,
    origin: &str,
    method: &Method,
    path: &[String],
    query: &HashMap<String, String>,
    body: Value,
) -> Response {
    let segments: Vec<&str> = path.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        (&Method::GET, [collection]) => match kind_of(collection) {
            Some(kind) => list(vault, origin, kind, query),
            None => unknown_route(),
        },
        (&Method::GET, [collection, name]) | (&Method::GET, [collection, name, ""]) => {
            match kind_of(collection) {
                Some(kind) => get(vault, kind, name, None),
                None => unknown_route(),
            }
        }
        (&Method::GET, [collection, name, version]) => match kind_of(collection) {
            Some(kind) => get(vault, kind, name, Some(version)),
            None => unknown_route(),
        },
        (&Method::PUT, ["secrets", name]) => set_secret(vault, origin, name, body),
        (&Method::PUT, ["keys", name]) => import_key(vault, origin, name, body),
        (&Method::POST, ["certificates", name, "import"]) => {
            import_certificate(vault, origin, name, body)
        }
        (&Method::DELETE, [collection, name]) => match kind_of(collection) {
            Some(kind) => delete(vault, kind, name),
            None => unknown_route(),
        },
        (&Method::POST, ["deletedsecrets", name, "recover"]) => recover(vault, name),
        _ => unknown_route(),
    }
}

fn unknown_route() -> Response {
    kv_error(
        StatusCode::BAD_REQUEST,
        "BadParameter",
        "The request URI is not valid.",
        None,
    )
}

fn get(vault: &Vault, kind: Kind, name: &str, version: Option<&str>) -> Response {
    let Some(versions) = vault.objects.get(&(kind, name.to_owned())) else {
        return not_found(kind, name);
    };
    let found = match version.filter(|v| !v.is_empty()) {
        Some(wanted) => versions
            .iter()
            .find(|v| v.id.ends_with(&format!("/{wanted}"))),
        None => versions.last(),
    };
    let Some(found) = found else {
        return not_found(kind, name);
    };
    if kind == Kind::Secret && !found.enabled {
        return kv_error(
            StatusCode::FORBIDDEN,
            "Forbidden",
            "Operation get is not allowed on a disabled secret.",
            Some("SecretDisabled"),
        );
    }
    (StatusCode::OK, axum::Json(bundle(kind, found))).into_response()
}

fn list(vault: &Vault, origin: &str, kind: Kind, query: &HashMap<String, String>) -> Response {
    let page_size = match query.get("maxresults").map(|v| v.parse::<usize>()) {
        None => 25,
        Some(Ok(size)) if (1..=25).contains(&size) => size,
        Some(_) => {
            return kv_error(
                StatusCode::BAD_REQUEST,
                "BadParameter",
                "maxresults must be between 1 and 25.",
                None,
            );
        }
    };
    let skip: usize = match query.get("$skiptoken").map(|v| v.parse()) {
        None => 0,
        Some(Ok(skip)) => skip,
        Some(Err(_)) => {
            return kv_error(
                StatusCode::BAD_REQUEST,
                "BadParameter",
                "The skip token is not valid.",
                None,
            );
        }
    };
    let mut names: Vec<&(Kind, String)> =
        vault.objects.keys().filter(|(k, _)| *k == kind).collect();
    names.sort_by(|a, b| a.1.cmp(&b.1));
    let page: Vec<Value> = names
        .iter()
        .skip(skip)
        .take(page_size)
        .filter_map(|key| vault.objects.get(*key)?.last().map(|v| item(kind, v)))
        .collect();
    let next = (skip + page_size < names.len()).then(|| {
        format!(
            "{origin}/{}?api-version={API_VERSION}&$skiptoken={}&maxresults={page_size}",
            kind.collection(),
            skip + page_size
        )
    });
    (
        StatusCode::OK,
        axum::Json(json!({"value": page, "nextLink": next})),
    )
        .into_response()
}
