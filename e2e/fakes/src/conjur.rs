//! A contract fake of the CyberArk Conjur (Secrets Manager self-hosted / open source) REST API —
//! a fake, not Conjur.
//!
//! It follows the Conjur REST API reference
//! (<https://docs.cyberark.com/conjur-open-source/latest/en/content/developer/conjur_api/conjur-api.htm>,
//! sections Authenticate, JWT Authenticator, Retrieve a Secret, Batch Secret Retrieval and
//! List Resources) for the calls upstream's client (`cyberark/conjur-api-go`) makes:
//!
//! * `POST /authn/{account}/{login}/authenticate` with the API key as the `text/plain` body;
//! * `POST /authn-jwt/{service}/{account}[/{host}]/authenticate` with the form `jwt=<JWT>`: the
//!   JWT's signature is checked against the service's JWKS (ES256 or RS256 keys), and its
//!   `iss`, `aud` and `exp` against the service's configuration; without a host in the URL the
//!   claim the service names (`token-app-property`) gives the host, below `identity-path`;
//! * `GET /secrets/{account}/variable/{id}`, `GET /secrets?variable_ids=<account:variable:id,...>`
//!   and `GET /resources/{account}?kind=variable&limit=&offset=`, each with
//!   `Authorization: Token token="<base64 of an access token this fake issued>"`.
//!
//! Failed authentication is 401 with an empty body, as Conjur answers; other errors are
//! `{"error": {"code", "message"}}`: a missing variable (or one without a value) 404, a
//! variable the test denied 403, malformed parameters 422. Access tokens are Conjur's JSON
//! shape (`protected`, `payload` with `sub`, `iat`, `exp`, `signature`), valid 8 minutes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use crate::server::{FakeServer, header};

/// Seconds an access token is valid (Conjur's default).
const TOKEN_SECONDS: u64 = 8 * 60;

/// A JWT authenticator (`authn-jwt/<service>`) and its configuration variables.
#[derive(Debug, Clone, Default)]
pub struct JwtService {
    /// `public-keys`/`jwks-uri`: the JWKS (`{"keys": [...]}`) signatures are checked against.
    pub jwks: Value,
    /// `issuer`: the `iss` tokens must carry.
    pub issuer: String,
    /// `audience`: a value `aud` must contain, when set.
    pub audience: Option<String>,
    /// `token-app-property`: the claim naming the host when the URL does not.
    pub token_app_property: Option<String>,
    /// `identity-path`: the policy branch hosts named by the claim live under.
    pub identity_path: String,
    /// Hosts (`host/...`) allowed to authenticate with this service.
    pub hosts: BTreeSet<String>,
}

#[derive(Default)]
struct Variable {
    value: Option<String>,
    annotations: Vec<(String, String)>,
}

#[derive(Default)]
struct Data {
    account: String,
    api_keys: BTreeMap<String, String>,
    jwt: BTreeMap<String, JwtService>,
    /// Issued tokens (the `Authorization` form) and their expiry (Unix seconds).
    tokens: BTreeMap<String, u64>,
    variables: BTreeMap<String, Variable>,
    denied: BTreeSet<String>,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake Conjur account and handles to seed it.
pub struct ConjurFake {
    /// The HTTPS server (URL, CA, request log).
    pub server: FakeServer,
    data: Shared,
}

impl ConjurFake {
    /// Starts a fake of `account`.
    pub async fn start(account: &str) -> std::io::Result<Self> {
        let data = Arc::new(Mutex::new(Data {
            account: account.to_owned(),
            ..Data::default()
        }));
        let router = Router::new()
            .route("/authn/{account}/{login}/authenticate", post(authn))
            .route(
                "/authn-jwt/{service}/{account}/authenticate",
                post(|state, Path((service, account)), headers, body| {
                    authn_jwt(state, (service, account, None), headers, body)
                }),
            )
            .route(
                "/authn-jwt/{service}/{account}/{host}/authenticate",
                post(|state, Path((service, account, host)), headers, body| {
                    authn_jwt(state, (service, account, Some(host)), headers, body)
                }),
            )
            .route("/secrets/{account}/variable/{*id}", get(secret))
            .route("/secrets", get(batch))
            .route("/resources/{account}", get(resources))
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Adds the role `login` (`host/...` or a user) with API key `api_key`.
    pub fn add_api_key(&self, login: &str, api_key: &str) {
        lock(&self.data)
            .api_keys
            .insert(login.to_owned(), api_key.to_owned());
    }

    /// Enables the JWT authenticator `service`.
    pub fn add_jwt_service(&self, service: &str, config: JwtService) {
        lock(&self.data).jwt.insert(service.to_owned(), config);
    }

    /// Creates or replaces variable `id` (unqualified) with `value` and `annotations`.
    pub fn set_variable(&self, id: &str, value: Option<&str>, annotations: &[(&str, &str)]) {
        let variable = Variable {
            value: value.map(str::to_owned),
            annotations: annotations
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
        };
        lock(&self.data).variables.insert(id.to_owned(), variable);
    }

    /// Refuses reads of variable `id` (the role lacks `execute`).
    pub fn deny(&self, id: &str) {
        lock(&self.data).denied.insert(id.to_owned());
    }

    /// Expires every access token issued so far.
    pub fn expire_tokens(&self) {
        lock(&self.data).tokens.clear();
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({"error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

fn unauthorized() -> Response {
    StatusCode::UNAUTHORIZED.into_response()
}

/// Issues an access token for `role`.
fn issue(data: &mut Data, role: &str) -> Response {
    let issued = now();
    let header = json!({"alg": "conjur.org/slosilo/v2", "kid": "fake"});
    let payload = json!({"sub": role, "iat": issued, "exp": issued + TOKEN_SECONDS});
    let raw = json!({
        "protected": URL_SAFE.encode(header.to_string()),
        "payload": URL_SAFE.encode(payload.to_string()),
        "signature": URL_SAFE.encode(format!("sig-{}", data.tokens.len())),
    })
    .to_string();
    data.tokens
        .insert(STANDARD.encode(&raw), issued + TOKEN_SECONDS);
    ([("content-type", "application/json")], raw).into_response()
}

/// Whether `headers` carry a live token of this fake.
fn authorized(data: &Data, headers: &HeaderMap) -> bool {
    header(headers, "authorization")
        .and_then(|value| value.strip_prefix("Token token=\""))
        .and_then(|value| value.strip_suffix('"'))
        .and_then(|token| data.tokens.get(token))
        .is_some_and(|expiry| *expiry > now())
}

async fn authn(
    State(data): State<Shared>,
    Path((account, login)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut data = lock(&data);
    let text =
        header(&headers, "content-type").is_some_and(|value| value.starts_with("text/plain"));
    if account != data.account || !text {
        return unauthorized();
    }
    match data.api_keys.get(&login) {
        Some(key) if key.as_bytes() == body.as_ref() => issue(&mut data, &login),
        _ => unauthorized(),
    }
}

async fn authn_jwt(
    State(data): State<Shared>,
    (service, account, host): (String, String, Option<String>),
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut data = lock(&data);
    let form = header(&headers, "content-type")
        .is_some_and(|value| value.starts_with("application/x-www-form-urlencoded"));
    let Some(config) = data
        .jwt
        .get(&service)
        .filter(|_| account == data.account && form)
    else {
        return unauthorized();
    };
    let jwt = form_urlencoded::parse(&body)
        .find(|(name, _)| name == "jwt")
        .map(|(_, value)| value.into_owned());
    let Some(claims) = jwt.as_deref().and_then(|jwt| verify(config, jwt)) else {
        return unauthorized();
    };
    let role = match (host, &config.token_app_property) {
        (Some(host), _) => Some(host),
        (None, Some(claim)) => claims[claim.as_str()].as_str().map(|value| {
            let path = config.identity_path.trim_matches('/');
            if path.is_empty() {
                format!("host/{value}")
            } else {
                format!("host/{path}/{value}")
            }
        }),
        (None, None) => None,
    };
    match role.filter(|role| config.hosts.contains(role)) {
        Some(role) => issue(&mut data, &role),
        None => unauthorized(),
    }
}

/// The claims of `jwt` when its signature, issuer, audience and expiry are good.
fn verify(config: &JwtService, jwt: &str) -> Option<Value> {
    let (signing_input, signature) = jwt.rsplit_once('.')?;
    let (header, payload) = signing_input.split_once('.')?;
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
    let keys = config.jwks["keys"].as_array()?;
    let signed = keys.iter().any(|key| {
        let kid_matches = header["kid"].is_null() || key["kid"] == header["kid"];
        kid_matches && verify_with(key, &header, signing_input, &signature)
    });
    let audience = match &config.audience {
        None => true,
        Some(wanted) => match &claims["aud"] {
            Value::String(aud) => aud == wanted,
            Value::Array(auds) => auds.iter().any(|aud| aud == wanted.as_str()),
            _ => false,
        },
    };
    let live = claims["exp"].as_u64().is_some_and(|exp| exp > now());
    (signed && audience && live && claims["iss"] == config.issuer.as_str()).then_some(claims)
}

/// Whether JWK `key` verifies `signature` of `input` with the algorithm `header` names.
fn verify_with(key: &Value, header: &Value, input: &str, signature: &[u8]) -> bool {
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED, RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents,
        UnparsedPublicKey,
    };
    let part = |name: &str| {
        key[name]
            .as_str()
            .and_then(|text| URL_SAFE_NO_PAD.decode(text).ok())
    };
    match (header["alg"].as_str(), key["kty"].as_str()) {
        (Some("ES256"), Some("EC")) => {
            let (Some(x), Some(y)) = (part("x"), part("y")) else {
                return false;
            };
            let point = [&[4u8][..], &x, &y].concat();
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
                .verify(input.as_bytes(), signature)
                .is_ok()
        }
        (Some("RS256"), Some("RSA")) => {
            let (Some(n), Some(e)) = (part("n"), part("e")) else {
                return false;
            };
            RsaPublicKeyComponents { n, e }
                .verify(&RSA_PKCS1_2048_8192_SHA256, input.as_bytes(), signature)
                .is_ok()
        }
        _ => false,
    }
}

async fn secret(
    State(data): State<Shared>,
    Path((account, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    read(&data, &account, &id)
        .map_or_else(Refused::answer, |value| value.to_owned().into_response())
}

/// Why a variable cannot be read.
enum Refused {
    Forbidden,
    Missing(String),
}

impl Refused {
    fn answer(self) -> Response {
        match self {
            Refused::Forbidden => error(StatusCode::FORBIDDEN, "forbidden", "Forbidden"),
            Refused::Missing(message) => error(StatusCode::NOT_FOUND, "not_found", &message),
        }
    }
}

/// The value of variable `id` of `account`, or Conjur's refusal.
fn read<'a>(data: &'a Data, account: &str, id: &str) -> Result<&'a str, Refused> {
    if data.denied.contains(id) {
        return Err(Refused::Forbidden);
    }
    let value = (account == data.account)
        .then(|| data.variables.get(id))
        .flatten()
        .and_then(|variable| variable.value.as_deref());
    value.ok_or_else(|| {
        Refused::Missing(format!(
            "CONJ00076E Variable {account}:variable:{id} is empty or not found."
        ))
    })
}

async fn batch(
    State(data): State<Shared>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let ids = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(name, _)| name == "variable_ids")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    if ids.is_empty() {
        let message = "variable_ids param must not be empty";
        return error(StatusCode::UNPROCESSABLE_ENTITY, "argument_error", message);
    }
    let mut values = serde_json::Map::new();
    for full in ids.split(',') {
        let mut parts = full.splitn(3, ':');
        let (Some(account), Some("variable"), Some(id)) =
            (parts.next(), parts.next(), parts.next())
        else {
            let message = format!("Invalid variable id {full:?}");
            return error(StatusCode::UNPROCESSABLE_ENTITY, "argument_error", &message);
        };
        match read(&data, account, id) {
            Ok(value) => values.insert(full.to_owned(), value.into()),
            Err(refused) => return refused.answer(),
        };
    }
    axum::Json(Value::Object(values)).into_response()
}

async fn resources(
    State(data): State<Shared>,
    Path(account): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let data = lock(&data);
    if !authorized(&data, &headers) {
        return unauthorized();
    }
    let query: BTreeMap<String, String> =
        form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let number = |name: &str, default: usize| match query.get(name) {
        None => Some(default),
        Some(text) => text.parse::<usize>().ok(),
    };
    let (Some(limit), Some(offset)) = (number("limit", usize::MAX), number("offset", 0)) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "argument_error",
            "invalid limit or offset",
        );
    };
    if limit == 0
        || query.get("kind").is_some_and(|kind| kind != "variable")
        || account != data.account
    {
        return axum::Json(json!([])).into_response();
    }
    let page: Vec<Value> = data
        .variables
        .iter()
        .skip(offset)
        .take(limit)
        .map(|(id, variable)| {
            let annotations: Vec<Value> = variable
                .annotations
                .iter()
                .map(|(name, value)| json!({"name": name, "value": value, "policy": format!("{account}:policy:root")}))
                .collect();
            json!({
                "created_at": "2026-01-01T00:00:00.000+00:00",
                "id": format!("{account}:variable:{id}"),
                "owner": format!("{account}:policy:root"),
                "policy": format!("{account}:policy:root"),
                "permissions": [],
                "annotations": annotations,
                "secrets": [{"version": 1, "expires_at": null}],
            })
        })
        .collect();
    axum::Json(Value::Array(page)).into_response()
}
