//! A contract fake of the GitHub REST API for GitHub App installations and Actions secrets — a
//! fake, not GitHub.
//!
//! It follows GitHub's REST API reference (<https://docs.github.com/en/rest>), version
//! `2022-11-28`, served under `/api/v3` as GitHub Enterprise Server serves it:
//!
//! * "Create an installation access token for an app" (`POST /app/installations/{id}/access_tokens`)
//!   needs `Authorization: Bearer <JWT>`: an RS256 JWT whose signature the App's public key
//!   verifies, `iss` the App id, `exp` in the future and at most ten minutes after `iat`
//!   ("Generating a JSON Web Token (JWT) for a GitHub App"); else 401 `{"message": ...}`; an
//!   unknown installation is 404. It answers 201 `{"token", "expires_at"}` (an hour).
//! * Every other request needs an issued installation token (`Authorization: token ...` or
//!   `Bearer ...`), else 401 `{"message":"Bad credentials"}`, and `Accept:
//!   application/vnd.github+json` is checked; `GET /repos/{owner}/{repo}` gives the repository's
//!   `id`.
//! * Actions secrets ("REST API endpoints for GitHub Actions secrets") of an organization
//!   (`/orgs/{org}/actions/secrets`), a repository (`/repos/{owner}/{repo}/actions/secrets`) and
//!   an environment (`/repositories/{repository_id}/environments/{name}/secrets`, the path
//!   go-github uses): list, `public-key`, get, PUT (create 201, update 204), DELETE (204; 404
//!   when absent), and an organization secret's `repositories`. Names are letters, digits and
//!   `_`, not starting with a digit or `GITHUB_`, stored upper case (case-insensitive); a PUT
//!   needs `encrypted_value` and the current `key_id`, and for organizations a `visibility` of
//!   `all`, `private` or `selected`, else 422.
//!
//! The fake keeps one X25519 key pair per scope and opens every `encrypted_value` with its
//! private key as a libsodium sealed box: a value sealed to the wrong key, or not sealed, is
//! refused with 422, so a client encrypting wrongly fails its test.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use crypto_box::SecretKey;
use crypto_box::aead::OsRng;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject as _;
use serde_json::{Value, json};

use crate::server::{FakeServer, header, reject};

/// Where the API lives on the fake (an Enterprise Server's path).
pub const API_PREFIX: &str = "/api/v3";

/// Whose secrets one set is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// An organization's.
    Organization(String),
    /// A repository's (owner, name).
    Repository(String, String),
    /// An environment's (owner, repository, environment).
    Environment(String, String, String),
}

/// A secret as the fake holds it, opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSecret {
    /// The opened value.
    pub value: Vec<u8>,
    /// An organization secret's visibility.
    pub visibility: Option<String>,
    /// A `selected` organization secret's repository ids.
    pub selected_repository_ids: Vec<i64>,
}

struct KeyedScope {
    key: SecretKey,
    key_id: String,
    secrets: BTreeMap<String, StoredSecret>,
}

impl KeyedScope {
    fn new(number: u64) -> Self {
        Self {
            key: SecretKey::generate(&mut OsRng),
            key_id: format!("key-{number}"),
            secrets: BTreeMap::new(),
        }
    }
}

struct Data {
    app_id: i64,
    installation_id: i64,
    app_public_key: Vec<u8>,
    tokens: Vec<String>,
    /// (owner, name, id) of each repository.
    repositories: Vec<(String, String, i64)>,
    scopes: BTreeMap<Scope, KeyedScope>,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake GitHub and handles to seed and inspect it.
pub struct GithubFake {
    /// The HTTPS server (URL, CA, request log); the API is under [`API_PREFIX`].
    pub server: FakeServer,
    data: Shared,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

impl GithubFake {
    /// Starts a fake for App `app_id`'s installation `installation_id`, verifying JWTs with the
    /// public half of `private_key_pem` (PKCS#1 or PKCS#8; only the public key is kept).
    pub async fn start(
        app_id: i64,
        installation_id: i64,
        private_key_pem: &str,
    ) -> std::io::Result<Self> {
        let pair = match PrivateKeyDer::from_pem_slice(private_key_pem.as_bytes()) {
            Ok(PrivateKeyDer::Pkcs1(key)) => {
                ring::signature::RsaKeyPair::from_der(key.secret_pkcs1_der())
            }
            Ok(PrivateKeyDer::Pkcs8(key)) => {
                ring::signature::RsaKeyPair::from_pkcs8(key.secret_pkcs8_der())
            }
            _ => return Err(std::io::Error::other("not an RSA private key PEM")),
        }
        .map_err(|failure| std::io::Error::other(failure.to_string()))?;
        let app_public_key = ring::signature::KeyPair::public_key(&pair)
            .as_ref()
            .to_vec();
        let data = Arc::new(Mutex::new(Data {
            app_id,
            installation_id,
            app_public_key,
            tokens: Vec::new(),
            repositories: Vec::new(),
            scopes: BTreeMap::new(),
        }));
        let state = data.clone();
        let router = Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = state.clone();
                async move { handle(&state, &method, &uri, &headers, &body) }
            },
        );
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Adds a scope (an organization, or a repository or environment whose repository is then
    /// created if new) with a fresh key pair; returns the repository id for repository scopes.
    pub fn add_scope(&self, scope: &Scope) -> Option<i64> {
        let mut data = lock(&self.data);
        let number = NEXT.fetch_add(1, Ordering::SeqCst);
        data.scopes
            .entry(scope.clone())
            .or_insert_with(|| KeyedScope::new(number));
        let (owner, repo) = match scope {
            Scope::Organization(_) => return None,
            Scope::Repository(owner, repo) | Scope::Environment(owner, repo, _) => (owner, repo),
        };
        if let Some((_, _, id)) = data
            .repositories
            .iter()
            .find(|(o, r, _)| o == owner && r == repo)
        {
            return Some(*id);
        }
        let id = 100_000 + i64::try_from(number).unwrap_or_default();
        data.repositories.push((owner.clone(), repo.clone(), id));
        Some(id)
    }

    /// Stores `value` as secret `name` of `scope` (which must have been added), as if pushed.
    pub fn set_secret(&self, scope: &Scope, name: &str, value: &[u8], visibility: Option<&str>) {
        if let Some(keyed) = lock(&self.data).scopes.get_mut(scope) {
            keyed.secrets.insert(
                name.to_ascii_uppercase(),
                StoredSecret {
                    value: value.to_vec(),
                    visibility: visibility.map(str::to_owned),
                    selected_repository_ids: Vec::new(),
                },
            );
        }
    }

    /// Grants the `selected` organization secret `name` to `ids`.
    pub fn select_repositories(&self, scope: &Scope, name: &str, ids: &[i64]) {
        if let Some(secret) = lock(&self.data)
            .scopes
            .get_mut(scope)
            .and_then(|keyed| keyed.secrets.get_mut(&name.to_ascii_uppercase()))
        {
            secret.selected_repository_ids = ids.to_vec();
        }
    }

    /// The secret `name` of `scope`, opened.
    pub fn secret(&self, scope: &Scope, name: &str) -> Option<StoredSecret> {
        lock(&self.data)
            .scopes
            .get(scope)?
            .secrets
            .get(&name.to_ascii_uppercase())
            .cloned()
    }

    /// How many installation tokens were issued.
    pub fn tokens_issued(&self) -> usize {
        lock(&self.data).tokens.len()
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn message(status: StatusCode, text: &str) -> Response {
    reject(
        status,
        json!({"message": text, "documentation_url": "https://docs.github.com/rest"}),
    )
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or_default())
        .unwrap_or_default()
}

fn handle(
    state: &Shared,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let Some(path) = uri.path().strip_prefix(API_PREFIX) else {
        return message(StatusCode::NOT_FOUND, "Not Found");
    };
    if header(headers, "accept") != Some("application/vnd.github+json") {
        return message(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported 'Accept' header",
        );
    }
    let segments: Vec<String> = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            form_urlencoded::parse(format!("s={segment}").as_bytes())
                .map(|(_, value)| value.into_owned())
                .next()
                .unwrap_or_default()
        })
        .collect();
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    let mut data = lock(state);
    if let ["app", "installations", id, "access_tokens"] = parts.as_slice() {
        if method != Method::POST {
            return message(StatusCode::NOT_FOUND, "Not Found");
        }
        return issue_token(&mut data, id, headers);
    }
    let token = header(headers, "authorization").and_then(|value| {
        value
            .strip_prefix("token ")
            .or_else(|| value.strip_prefix("Bearer "))
    });
    if !token.is_some_and(|token| data.tokens.iter().any(|issued| issued == token)) {
        return message(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let (scope, rest) = match parts.as_slice() {
        ["repos", owner, repo] if method == Method::GET => {
            return match data
                .repositories
                .iter()
                .find(|(o, r, _)| o == owner && r == repo)
            {
                Some((owner, name, id)) => axum::Json(json!({
                    "id": id, "name": name, "full_name": format!("{owner}/{name}"),
                }))
                .into_response(),
                None => message(StatusCode::NOT_FOUND, "Not Found"),
            };
        }
        ["orgs", org, "actions", "secrets", rest @ ..] => {
            (Scope::Organization((*org).to_owned()), rest)
        }
        ["repos", owner, repo, "actions", "secrets", rest @ ..] => (
            Scope::Repository((*owner).to_owned(), (*repo).to_owned()),
            rest,
        ),
        [
            "repositories",
            id,
            "environments",
            environment,
            "secrets",
            rest @ ..,
        ] => {
            let Some((owner, repo, _)) = data
                .repositories
                .iter()
                .find(|(_, _, number)| number.to_string() == *id)
            else {
                return message(StatusCode::NOT_FOUND, "Not Found");
            };
            (
                Scope::Environment(owner.clone(), repo.clone(), (*environment).to_owned()),
                rest,
            )
        }
        _ => return message(StatusCode::NOT_FOUND, "Not Found"),
    };
    let organization = matches!(scope, Scope::Organization(_));
    let Some(keyed) = data.scopes.get_mut(&scope) else {
        return message(StatusCode::NOT_FOUND, "Not Found");
    };
    secrets(keyed, organization, method, rest, body)
}

/// `POST /app/installations/{id}/access_tokens` with the App's JWT.
fn issue_token(data: &mut Data, id: &str, headers: &HeaderMap) -> Response {
    let jwt = header(headers, "authorization").and_then(|value| value.strip_prefix("Bearer "));
    if let Err(problem) = jwt.ok_or("no JWT").and_then(|jwt| check_jwt(data, jwt)) {
        return message(StatusCode::UNAUTHORIZED, problem);
    }
    if id != data.installation_id.to_string() {
        return message(StatusCode::NOT_FOUND, "Not Found");
    }
    let token = format!("ghs_fake{}", NEXT.fetch_add(1, Ordering::SeqCst));
    data.tokens.push(token.clone());
    let expires = chrono::DateTime::from_timestamp(now() + 3600, 0)
        .map(|time| time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default();
    (
        StatusCode::CREATED,
        axum::Json(json!({
            "token": token,
            "expires_at": expires,
            "permissions": {"secrets": "write", "organization_secrets": "write", "environments": "write"},
            "repository_selection": "all",
        })),
    )
        .into_response()
}

/// Checks an App JWT as GitHub does: RS256 by the App's key, `iss` the App id, a live `exp` at
/// most ten minutes after `iat`.
fn check_jwt(data: &Data, jwt: &str) -> Result<(), &'static str> {
    let undecodable = "A JSON web token could not be decoded";
    let (input, signature) = jwt.rsplit_once('.').ok_or(undecodable)?;
    let (header, claims) = input.split_once('.').ok_or(undecodable)?;
    let decode = |part: &str| -> Result<Value, &'static str> {
        let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| undecodable)?;
        serde_json::from_slice(&bytes).map_err(|_| undecodable)
    };
    if decode(header)?["alg"] != "RS256" {
        return Err(undecodable);
    }
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| undecodable)?;
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &data.app_public_key,
    )
    .verify(input.as_bytes(), &signature)
    .map_err(|_| "A JSON web token could not be decoded")?;
    let claims = decode(claims)?;
    let issuer = match &claims["iss"] {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        _ => String::new(),
    };
    if issuer != data.app_id.to_string() {
        return Err("Integration not found");
    }
    let (Some(iat), Some(exp)) = (claims["iat"].as_i64(), claims["exp"].as_i64()) else {
        return Err("Missing 'issued at' or 'expiration' time in the JWT");
    };
    if exp <= now() {
        return Err(
            "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
        );
    }
    if exp - iat > 600 || iat > now() + 60 {
        return Err("'Expiration time' claim ('exp') is too far in the future");
    }
    Ok(())
}

/// The Actions-secrets endpoints of one scope (`rest`: what follows `.../secrets`).
fn secrets(
    keyed: &mut KeyedScope,
    organization: bool,
    method: &Method,
    rest: &[&str],
    body: &[u8],
) -> Response {
    match (method.as_str(), rest) {
        ("GET", []) => {
            let secrets: Vec<Value> = keyed
                .secrets
                .iter()
                .map(|(name, secret)| secret_json(name, secret, organization))
                .collect();
            axum::Json(json!({"total_count": secrets.len(), "secrets": secrets})).into_response()
        }
        ("GET", ["public-key"]) => axum::Json(json!({
            "key_id": keyed.key_id,
            "key": STANDARD.encode(keyed.key.public_key().as_bytes()),
        }))
        .into_response(),
        ("GET", [name]) => match keyed.secrets.get(&name.to_ascii_uppercase()) {
            Some(secret) => axum::Json(secret_json(
                &name.to_ascii_uppercase(),
                secret,
                organization,
            ))
            .into_response(),
            None => message(StatusCode::NOT_FOUND, "Not Found"),
        },
        ("GET", [name, "repositories"]) if organization => match keyed
            .secrets
            .get(&name.to_ascii_uppercase())
        {
            Some(secret) => {
                let repositories: Vec<Value> = secret
                    .selected_repository_ids
                    .iter()
                    .map(|id| json!({"id": id}))
                    .collect();
                axum::Json(json!({"total_count": repositories.len(), "repositories": repositories}))
                    .into_response()
            }
            None => message(StatusCode::NOT_FOUND, "Not Found"),
        },
        ("PUT", [name]) => put(keyed, organization, name, body),
        ("DELETE", [name]) => match keyed.secrets.remove(&name.to_ascii_uppercase()) {
            Some(_) => StatusCode::NO_CONTENT.into_response(),
            None => message(StatusCode::NOT_FOUND, "Not Found"),
        },
        _ => message(StatusCode::NOT_FOUND, "Not Found"),
    }
}

fn secret_json(name: &str, secret: &StoredSecret, organization: bool) -> Value {
    let mut value = json!({
        "name": name,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    });
    if organization {
        value["visibility"] = json!(secret.visibility.clone().unwrap_or_else(|| "all".into()));
    }
    value
}

/// Create or update: the name, key id and sealed value checked, the value opened.
fn put(keyed: &mut KeyedScope, organization: bool, name: &str, body: &[u8]) -> Response {
    let valid_name = name
        .chars()
        .next()
        .is_some_and(|first| !first.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.to_ascii_uppercase().starts_with("GITHUB_");
    if !valid_name {
        return message(StatusCode::UNPROCESSABLE_ENTITY, "Invalid secret name");
    }
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return message(StatusCode::BAD_REQUEST, "Problems parsing JSON");
    };
    if request["key_id"].as_str() != Some(keyed.key_id.as_str()) {
        return message(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid request: key_id does not match the public key",
        );
    }
    let opened = request["encrypted_value"]
        .as_str()
        .and_then(|text| STANDARD.decode(text).ok())
        .and_then(|sealed| keyed.key.unseal(&sealed).ok());
    let Some(value) = opened else {
        return message(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Bad request - encrypted_value is not a valid sealed box for this key",
        );
    };
    let visibility = request["visibility"].as_str().map(str::to_owned);
    if organization && !matches!(visibility.as_deref(), Some("all" | "private" | "selected")) {
        return message(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid request: visibility is required",
        );
    }
    let selected_repository_ids = request["selected_repository_ids"]
        .as_array()
        .map(|ids| ids.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    let stored = StoredSecret {
        value,
        visibility: visibility.filter(|_| organization),
        selected_repository_ids,
    };
    match keyed.secrets.insert(name.to_ascii_uppercase(), stored) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => StatusCode::CREATED.into_response(),
    }
}
