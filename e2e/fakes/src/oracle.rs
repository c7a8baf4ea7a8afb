//! A contract fake of the OCI Vault APIs — a fake, not Oracle Cloud.
//!
//! It follows Oracle's API references: "Vault Secret Retrieval API" (20190301,
//! <https://docs.oracle.com/en-us/iaas/api/#/en/secretretrieval/20190301/>:
//! `SecretBundle/GetSecretBundleByName`), "Vault Secret Management API" (20180608,
//! <https://docs.oracle.com/en-us/iaas/api/#/en/secretmgmt/20180608/>: `ListSecrets`,
//! `CreateSecret`, `UpdateSecret`, `ScheduleSecretDeletion`), "Key Management API"
//! (`GetVault`), and "Request Signatures"
//! (<https://docs.oracle.com/en-us/iaas/Content/API/Concepts/signingrequests.htm>):
//!
//! * every request needs `Authorization: Signature version="1",keyId="<tenancy>/<user>/
//!   <fingerprint>",algorithm="rsa-sha256",headers="...",signature="..."`, signing at least
//!   `date (request-target) host` (and `content-length content-type x-content-sha256` for POST
//!   and PUT, whose digest and length must match the body); the signature is verified with the
//!   user's public key over the signing string rebuilt from the request as received, so a wrong
//!   signing string, key id or digest is 401 `NotAuthenticated` (the date's skew is not checked);
//! * `POST /20190301/secretbundles/actions/getByName?secretName=&vaultId=[&stage=]` answers the
//!   current (`CURRENT`/`LATEST`) or `PREVIOUS` version as `secretBundleContent`
//!   `{"contentType":"BASE64","content"}`; an unknown secret or vault is 404
//!   `NotAuthorizedOrNotFound`, an unknown stage 400;
//! * `GET /20180608/secrets?compartmentId=&vaultId=[&page=]` needs `compartmentId` (400 without)
//!   and answers [`PAGE_SIZE`] summaries a page with `opc-next-page`;
//! * `POST /20180608/secrets` needs `compartmentId`, `secretName`, `vaultId`, `keyId` (the
//!   vault's key) and base64 `secretContent` (400 otherwise; a taken name is 409);
//!   `PUT /20180608/secrets/{id}` adds a version; `POST .../{id}/actions/scheduleDeletion` sets
//!   `timeOfDeletion` (409 when already scheduled);
//! * `GET /20180608/vaults/{id}` answers the vault, 404 `NotAuthorizedOrNotFound` for another;
//! * with an instance registered ([`OracleFake::register_instance`]), `POST /v1/x509` is the
//!   identity service's X.509 federation (see [`crate::oracle_identity`]), and requests signed
//!   with key id `ST$<token>` by the session key of an unexpired token it issued are accepted
//!   like the user's.
//!
//! Errors are OCI's `{"code","message"}`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rustls::pki_types::PrivatePkcs8KeyDer;
use rustls::pki_types::pem::PemObject as _;
use serde_json::{Value, json};

use crate::oracle_identity::{InstanceIdentity, Session, exchange, federate, unix_now};
use crate::server::{FakeServer, header};

/// Longest request body read.
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Summaries per page of `ListSecrets`.
pub const PAGE_SIZE: usize = 3;

/// The identifiers the fake serves.
#[derive(Debug, Clone)]
pub struct Tenancy {
    /// `<tenancy>/<user>/<fingerprint>`: the key id signatures must name.
    pub key_id: String,
    /// The first vault's OCID (more can be added with [`OracleFake::add_vault`]).
    pub vault: String,
    /// The compartment's OCID.
    pub compartment: String,
    /// The vault's master encryption key OCID.
    pub encryption_key: String,
}

struct Stored {
    id: String,
    vault: String,
    name: String,
    versions: Vec<Vec<u8>>,
    tags: BTreeMap<String, String>,
    deletion: Option<String>,
}

struct Data {
    tenancy: Tenancy,
    public_key_der: Vec<u8>,
    vaults: Vec<String>,
    secrets: Vec<Stored>,
    /// The registered instance and the lifetime of the tokens issued to it.
    instance: Option<(InstanceIdentity, i64)>,
    /// The service-account token the proxymux accepts and the lifetime of its tokens.
    workload: Option<(String, i64)>,
    sessions: BTreeMap<String, Session>,
    federations: usize,
    exchanges: usize,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake and handles to seed and inspect it.
pub struct OracleFake {
    /// The HTTPS server; all three APIs are under its `url`.
    pub server: FakeServer,
    data: Shared,
}

impl OracleFake {
    /// Starts a fake for `tenancy` verifying signatures with the public half of the PKCS#8 PEM
    /// `private_key_pem` (only the public key is kept).
    pub async fn start(tenancy: Tenancy, private_key_pem: &str) -> std::io::Result<Self> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(private_key_pem.as_bytes())
            .map_err(std::io::Error::other)?;
        let pair = ring::signature::RsaKeyPair::from_pkcs8(der.secret_pkcs8_der())
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        let public_key_der = ring::signature::KeyPair::public_key(&pair)
            .as_ref()
            .to_vec();
        let data = Arc::new(Mutex::new(Data {
            vaults: vec![tenancy.vault.clone()],
            tenancy,
            public_key_der,
            secrets: Vec::new(),
            instance: None,
            workload: None,
            sessions: BTreeMap::new(),
            federations: 0,
            exchanges: 0,
        }));
        let router = Router::new()
            .route("/20190301/secretbundles/actions/getByName", post(bundle))
            .route("/20180608/secrets", get(list).post(create))
            .route("/20180608/secrets/{id}", axum::routing::put(update))
            .route(
                "/20180608/secrets/{id}/actions/scheduleDeletion",
                post(schedule_deletion),
            )
            .route("/20180608/vaults/{id}", get(vault))
            .route("/v1/x509", post(x509))
            .route_layer(middleware::from_fn_with_state(
                data.clone(),
                check_signature,
            ))
            .route("/resourcePrincipalSessionTokens", post(proxymux))
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Accepts federation requests of `identity`'s leaf from now on, issuing tokens valid for
    /// `token_seconds` (replacing any instance registered before).
    pub fn register_instance(&self, identity: &InstanceIdentity, token_seconds: i64) {
        lock(&self.data).instance = Some((identity.clone(), token_seconds));
    }

    /// Accepts proxymux exchanges of `service_account_token` from now on, issuing tokens valid
    /// for `token_seconds`.
    pub fn register_workload(&self, service_account_token: &str, token_seconds: i64) {
        lock(&self.data).workload = Some((service_account_token.to_owned(), token_seconds));
    }

    /// How many tokens the X.509 federation endpoint has issued.
    pub fn federations(&self) -> usize {
        lock(&self.data).federations
    }

    /// How many tokens the proxymux has issued.
    pub fn exchanges(&self) -> usize {
        lock(&self.data).exchanges
    }

    /// Adds an empty vault `vault` (same compartment and key).
    pub fn add_vault(&self, vault: &str) {
        lock(&self.data).vaults.push(vault.to_owned());
    }

    /// Creates secret `name` in `vault`, or adds `value` as its new version; `tags` are its
    /// free-form tags.
    pub fn put_secret(&self, vault: &str, name: &str, value: &str, tags: &[(&str, &str)]) {
        let mut data = lock(&self.data);
        let tags = tags
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        match data
            .secrets
            .iter_mut()
            .find(|secret| secret.vault == vault && secret.name == name)
        {
            Some(secret) => {
                secret.versions.push(value.as_bytes().to_vec());
                secret.tags = tags;
            }
            None => {
                let id = format!("ocid1.vaultsecret.oc1..fake{}", data.secrets.len());
                data.secrets.push(Stored {
                    id,
                    vault: vault.to_owned(),
                    name: name.to_owned(),
                    versions: vec![value.as_bytes().to_vec()],
                    tags,
                    deletion: None,
                });
            }
        }
    }

    /// The current value of `name` in `vault` and whether its deletion is scheduled.
    pub fn secret(&self, vault: &str, name: &str) -> Option<(String, bool)> {
        let data = lock(&self.data);
        let secret = data
            .secrets
            .iter()
            .find(|secret| secret.vault == vault && secret.name == name)?;
        let current = secret.versions.last()?;
        Some((
            String::from_utf8_lossy(current).into_owned(),
            secret.deletion.is_some(),
        ))
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"code": code, "message": message})),
    )
        .into_response()
}

fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "NotAuthorizedOrNotFound",
        "Authorization failed or requested resource not found.",
    )
}

fn unauthenticated(why: &str) -> Response {
    error(
        StatusCode::UNAUTHORIZED,
        "NotAuthenticated",
        &format!(
            "The required information to complete authentication was not provided or was incorrect: {why}"
        ),
    )
}

/// The request as the signature covers it.
struct Signed<'a> {
    method: &'a Method,
    uri: &'a Uri,
    headers: &'a HeaderMap,
    body: &'a [u8],
}

/// The `Authorization` parameters `name="value"`.
fn parameters(authorization: &str) -> Option<BTreeMap<String, String>> {
    let rest = authorization.strip_prefix("Signature ")?;
    rest.split(',')
        .map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            let value = value.strip_prefix('"')?.strip_suffix('"')?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// Checks the request's signature; why not otherwise.
fn verify(data: &Data, request: &Signed<'_>) -> Result<(), String> {
    let authorization = header(request.headers, "authorization").unwrap_or_default();
    let parameters = parameters(authorization).ok_or_else(|| String::from("no signature"))?;
    let get = |name: &str| parameters.get(name).map(String::as_str).unwrap_or_default();
    if get("version") != "1" || get("algorithm") != "rsa-sha256" {
        return Err(String::from("unsupported signature version or algorithm"));
    }
    let key_id = get("keyId");
    let federation = request.uri.path() == "/v1/x509";
    let instance_key_id = data
        .instance
        .as_ref()
        .map(|(identity, _)| identity.key_id());
    let (public_key, mut required) = if federation {
        let (identity, _) = data
            .instance
            .as_ref()
            .ok_or_else(|| String::from("no instance is registered"))?;
        if instance_key_id.as_deref() != Some(key_id) {
            return Err(String::from("unknown key id"));
        }
        (leaf_public_key(identity)?, vec!["date", "(request-target)"])
    } else if let Some(token) = key_id.strip_prefix("ST$") {
        let session = data
            .sessions
            .get(token)
            .ok_or_else(|| String::from("unknown security token"))?;
        if session.expires <= unix_now() {
            return Err(String::from("the security token has expired"));
        }
        (
            session.public_key.clone(),
            vec!["date", "(request-target)", "host"],
        )
    } else if key_id == data.tenancy.key_id {
        (
            data.public_key_der.clone(),
            vec!["date", "(request-target)", "host"],
        )
    } else {
        return Err(String::from("unknown key id"));
    };
    let signed: Vec<&str> = get("headers").split(' ').collect();
    let with_body = matches!(*request.method, Method::POST | Method::PUT | Method::PATCH);
    if with_body {
        required.extend(["content-length", "content-type", "x-content-sha256"]);
        let digest = ring::digest::digest(&ring::digest::SHA256, request.body);
        if header(request.headers, "x-content-sha256") != Some(&STANDARD.encode(digest.as_ref())) {
            return Err(String::from("x-content-sha256 does not match the body"));
        }
        if header(request.headers, "content-length") != Some(&request.body.len().to_string()) {
            return Err(String::from("content-length does not match the body"));
        }
    }
    if let Some(missing) = required.iter().find(|name| !signed.contains(name)) {
        return Err(String::from(&format!("{missing} is not signed")));
    }
    let mut lines = Vec::new();
    for name in &signed {
        let value = if *name == "(request-target)" {
            let target = request
                .uri
                .path_and_query()
                .map(|path| path.as_str())
                .unwrap_or_default();
            format!("{} {target}", request.method.as_str().to_lowercase())
        } else {
            header(request.headers, name)
                .ok_or_else(|| String::from(&format!("signed header {name} is missing")))?
                .to_owned()
        };
        lines.push(format!("{name}: {value}"));
    }
    let signature = STANDARD
        .decode(get("signature"))
        .map_err(|_| String::from("signature is not base64"))?;
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &public_key,
    )
    .verify(lines.join("\n").as_bytes(), &signature)
    .map_err(|_| String::from("signature verification failed"))
}

/// The RSA public key of `identity`'s leaf (the key it was created with).
fn leaf_public_key(identity: &InstanceIdentity) -> Result<Vec<u8>, String> {
    let der = PrivatePkcs8KeyDer::from_pem_slice(identity.key_pem.as_bytes())
        .map_err(|_| String::from("the leaf key is not PKCS#8"))?;
    let pair = ring::signature::RsaKeyPair::from_pkcs8(der.secret_pkcs8_der())
        .map_err(|_| String::from("the leaf key is not RSA"))?;
    Ok(ring::signature::KeyPair::public_key(&pair)
        .as_ref()
        .to_vec())
}

/// The X.509 federation endpoint (its signature checked by the middleware).
async fn x509(State(state): State<Shared>, body: Bytes) -> Response {
    let mut data = lock(&state);
    let Some((identity, lifetime)) = data.instance.clone() else {
        return not_found();
    };
    let serial = data.federations;
    match federate(&identity, &body, lifetime, serial) {
        Ok((token, session)) => {
            data.federations += 1;
            data.sessions.insert(token.clone(), session);
            axum::Json(json!({"token": token})).into_response()
        }
        Err(refusal) => *refusal,
    }
}

/// The OKE proxymux (bearer-authenticated, not signed).
async fn proxymux(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let mut data = lock(&state);
    let Some((service_account_token, lifetime)) = data.workload.clone() else {
        return not_found();
    };
    let serial = data.exchanges;
    match exchange(&headers, &body, &service_account_token, lifetime, serial) {
        Ok((answer, token, session)) => {
            data.exchanges += 1;
            data.sessions.insert(token, session);
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                answer,
            )
                .into_response()
        }
        Err(refusal) => *refusal,
    }
}

fn query_pairs(query: Option<&str>) -> BTreeMap<String, String> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

/// Refuses a request whose signature does not verify, before any handler sees it (the body,
/// bounded, is read to check its digest and handed on).
async fn check_signature(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            "Body too large",
        );
    };
    let signed = Signed {
        method: &parts.method,
        uri: &parts.uri,
        headers: &parts.headers,
        body: &body,
    };
    if let Err(why) = verify(&lock(&state), &signed) {
        return unauthenticated(&why);
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(body)))
        .await
}

fn summary(tenancy: &Tenancy, secret: &Stored) -> Value {
    let vault = &secret.vault;
    json!({
        "id": secret.id,
        "secretName": secret.name,
        "compartmentId": tenancy.compartment,
                "vaultId": vault,
        "keyId": tenancy.encryption_key,
        "lifecycleState": if secret.deletion.is_some() { "PENDING_DELETION" } else { "ACTIVE" },
        "freeformTags": secret.tags,
        "timeOfDeletion": secret.deletion,
        "timeCreated": "2026-01-01T00:00:00.000Z",
    })
}

async fn bundle(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let data = lock(&state);
    let query = query_pairs(query.as_deref());
    let Some(vault) = query
        .get("vaultId")
        .filter(|vault| data.vaults.contains(vault))
    else {
        return not_found();
    };
    let Some(secret) = query.get("secretName").and_then(|name| {
        data.secrets
            .iter()
            .find(|secret| &secret.vault == vault && &secret.name == name)
    }) else {
        return not_found();
    };
    let back = match query.get("stage").map(String::as_str) {
        None | Some("CURRENT" | "LATEST") => 1,
        Some("PREVIOUS") => 2,
        Some("PENDING" | "DEPRECATED") => return not_found(),
        Some(_) => {
            return error(StatusCode::BAD_REQUEST, "InvalidParameter", "Invalid stage");
        }
    };
    let Some(index) = secret.versions.len().checked_sub(back) else {
        return not_found();
    };
    let content = secret.versions.get(index).cloned().unwrap_or_default();
    axum::Json(json!({
        "secretId": secret.id,
        "versionNumber": index + 1,
        "stages": if back == 1 { json!(["CURRENT", "LATEST"]) } else { json!(["PREVIOUS"]) },
        "secretBundleContent": {"contentType": "BASE64", "content": STANDARD.encode(content)},
        "timeOfDeletion": secret.deletion,
        "metadata": null,
    }))
    .into_response()
}

async fn list(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let data = lock(&state);
    let query = query_pairs(query.as_deref());
    let Some(compartment) = query.get("compartmentId") else {
        return error(
            StatusCode::BAD_REQUEST,
            "MissingParameter",
            "Missing compartmentId",
        );
    };
    if compartment != &data.tenancy.compartment {
        return axum::Json(json!([])).into_response();
    }
    let vault = query.get("vaultId");
    let listed: Vec<&Stored> = data
        .secrets
        .iter()
        .filter(|secret| vault.is_none_or(|vault| &secret.vault == vault))
        .collect();
    let start: usize = match query.get("page").map(|page| page.parse()) {
        None => 0,
        Some(Ok(start)) => start,
        Some(Err(_)) => return error(StatusCode::BAD_REQUEST, "InvalidParameter", "Invalid page"),
    };
    let items: Vec<Value> = listed
        .iter()
        .skip(start)
        .take(PAGE_SIZE)
        .map(|secret| summary(&data.tenancy, secret))
        .collect();
    let mut response = axum::Json(Value::Array(items)).into_response();
    if start + PAGE_SIZE < listed.len()
        && let Ok(next) = HeaderValue::from_str(&(start + PAGE_SIZE).to_string())
    {
        response.headers_mut().insert("opc-next-page", next);
    }
    response
}

/// The decoded `secretContent` of a create or update body.
fn content(body: &Value) -> Option<Vec<u8>> {
    let content = body.get("secretContent")?;
    if content.get("contentType")?.as_str()? != "BASE64" {
        return None;
    }
    STANDARD.decode(content.get("content")?.as_str()?).ok()
}

async fn create(State(state): State<Shared>, body: Bytes) -> Response {
    let mut data = lock(&state);
    let Ok(details) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "InvalidParameter",
            "Body is not JSON",
        );
    };
    let text = |name: &str| {
        details
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let tenancy = data.tenancy.clone();
    let vault = text("vaultId").to_owned();
    if text("compartmentId") != tenancy.compartment
        || !data.vaults.contains(&vault)
        || text("keyId") != tenancy.encryption_key
    {
        return error(
            StatusCode::BAD_REQUEST,
            "InvalidParameter",
            "compartmentId, vaultId and keyId must name the vault's compartment and key",
        );
    }
    let name = text("secretName").to_owned();
    let Some(value) = content(&details).filter(|_| !name.is_empty()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "InvalidParameter",
            "secretName and BASE64 secretContent are required",
        );
    };
    if data
        .secrets
        .iter()
        .any(|secret| secret.vault == vault && secret.name == name)
    {
        return error(
            StatusCode::CONFLICT,
            "Conflict",
            "A secret with this name already exists",
        );
    }
    let id = format!("ocid1.vaultsecret.oc1..fake{}", data.secrets.len());
    data.secrets.push(Stored {
        id,
        vault,
        name,
        versions: vec![value],
        tags: BTreeMap::new(),
        deletion: None,
    });
    let created = data.secrets.last().map(|secret| summary(&tenancy, secret));
    axum::Json(created.unwrap_or_default()).into_response()
}

async fn update(State(state): State<Shared>, Path(id): Path<String>, body: Bytes) -> Response {
    let mut data = lock(&state);
    let Some(value) = serde_json::from_slice::<Value>(&body)
        .ok()
        .as_ref()
        .and_then(content)
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "InvalidParameter",
            "BASE64 secretContent is required",
        );
    };
    let tenancy = data.tenancy.clone();
    let Some(secret) = data.secrets.iter_mut().find(|secret| secret.id == id) else {
        return not_found();
    };
    if secret.deletion.is_some() {
        return error(
            StatusCode::CONFLICT,
            "IncorrectState",
            "The secret is pending deletion",
        );
    }
    secret.versions.push(value);
    axum::Json(summary(&tenancy, secret)).into_response()
}

async fn schedule_deletion(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    let mut data = lock(&state);
    let Some(secret) = data.secrets.iter_mut().find(|secret| secret.id == id) else {
        return not_found();
    };
    if secret.deletion.is_some() {
        return error(
            StatusCode::CONFLICT,
            "IncorrectState",
            "The secret is pending deletion",
        );
    }
    secret.deletion = Some("2026-02-01T00:00:00.000Z".to_owned());
    StatusCode::OK.into_response()
}

async fn vault(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    let data = lock(&state);
    if !data.vaults.contains(&id) {
        return not_found();
    }
    axum::Json(json!({
        "id": id,
        "compartmentId": data.tenancy.compartment,
        "displayName": "fake-vault",
        "lifecycleState": "ACTIVE",
        "vaultType": "DEFAULT",
    }))
    .into_response()
}
