//! A contract fake of IBM Cloud Secrets Manager (v2) and the IBM Cloud IAM token endpoint —
//! a fake, not IBM Cloud.
//!
//! It follows IBM's API references: "Secrets Manager API v2"
//! (<https://cloud.ibm.com/apidocs/secrets-manager/secrets-manager-v2>: "Get a secret" and "Get a
//! secret's metadata by name, type, and group") and "IAM Identity Services API", "Create an IAM
//! access token" (<https://cloud.ibm.com/apidocs/iam-identity-token-api#create-api-key-token>,
//! with the compute-resource token grant of trusted profiles):
//!
//! * `POST /identity/token` takes an `application/x-www-form-urlencoded` body (anything else is
//!   400) with `grant_type=urn:ibm:params:oauth:grant-type:apikey` and `apikey`, or
//!   `grant_type=urn:ibm:params:oauth:grant-type:cr-token`, `cr_token` and `profile_name`; an
//!   unknown key, token or profile is 400 with IAM's `{"errorCode","errorMessage"}`; it answers
//!   `{"access_token","refresh_token","token_type":"Bearer","expires_in":3600,"expiration"}`;
//! * `GET /api/v2/secrets/{id}` and
//!   `GET /api/v2/secret_groups/{group}/secret_types/{type}/secrets/{name}` need
//!   `Authorization: Bearer <a token the fake issued>` (else 401), refuse an unknown secret type
//!   with 400, and answer a missing secret with 404, in Secrets Manager's
//!   `{"errors":[{"code","message","status_code"}],"status_code","trace"}` shape;
//! * a secret is answered as one JSON object: the common fields (`id`, `name`, `secret_type`,
//!   `secret_group_id`, `crn`, `created_at`, `state`, `labels`, `versions_total`, ...) and the
//!   type's payload fields as seeded (`payload`, `username`/`password`, `api_key`, `certificate`,
//!   `data`, ...). The group named `default` has the id `default`, as in Secrets Manager.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};

use crate::server::{FakeServer, bearer, header};

/// The secret types Secrets Manager knows.
const SECRET_TYPES: [&str; 9] = [
    "arbitrary",
    "username_password",
    "iam_credentials",
    "service_credentials",
    "imported_cert",
    "public_cert",
    "private_cert",
    "kv",
    "custom_credentials",
];

struct Stored {
    group: String,
    object: Map<String, Value>,
}

#[derive(Default)]
struct Data {
    api_key: String,
    /// (trusted profile name, compute-resource token) container auth accepts.
    profile: Option<(String, String)>,
    issued: BTreeSet<String>,
    secrets: Vec<Stored>,
    next: u64,
}

impl Data {
    fn next_id(&mut self) -> String {
        self.next += 1;
        format!("{:08x}-0000-4000-8000-{:012x}", self.next, self.next)
    }
}

type Shared = Arc<Mutex<Data>>;

/// A running fake of IAM and Secrets Manager (one server, both APIs) and handles to seed it.
pub struct IbmFake {
    /// The HTTPS server: the store's `serviceURL` and `iamEndpoint` are both its `url`.
    pub server: FakeServer,
    data: Shared,
}

impl IbmFake {
    /// Starts a fake whose IAM accepts `api_key`, with no secrets.
    pub async fn start(api_key: &str) -> std::io::Result<Self> {
        let data = Arc::new(Mutex::new(Data {
            api_key: api_key.to_owned(),
            ..Data::default()
        }));
        let router = Router::new()
            .route("/identity/token", post(token))
            .route("/api/v2/secrets/{id}", get(by_id))
            .route(
                "/api/v2/secret_groups/{group}/secret_types/{secret_type}/secrets/{name}",
                get(by_name),
            )
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Makes IAM accept the compute-resource token `cr_token` for trusted profile `profile`.
    pub fn trust_profile(&self, profile: &str, cr_token: &str) {
        lock(&self.data).profile = Some((profile.to_owned(), cr_token.to_owned()));
    }

    /// Creates (or replaces the fields of) the secret `name` of `secret_type` in group `group`;
    /// `fields` (a JSON object) are its type's fields. Returns its id.
    pub fn put_secret(&self, group: &str, secret_type: &str, name: &str, fields: Value) -> String {
        let mut data = lock(&self.data);
        let existing = data.secrets.iter().position(|stored| {
            stored.group == group
                && stored.object.get("name") == Some(&json!(name))
                && stored.object.get("secret_type") == Some(&json!(secret_type))
        });
        let id = match existing {
            Some(index) => data
                .secrets
                .remove(index)
                .object
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            None => data.next_id(),
        };
        let group_id = if group == "default" {
            "default".to_owned()
        } else {
            format!("group-{group}")
        };
        let mut object = Map::new();
        object.insert("id".into(), json!(id));
        object.insert("name".into(), json!(name));
        object.insert("secret_type".into(), json!(secret_type));
        object.insert("secret_group_id".into(), json!(group_id));
        object.insert(
            "crn".into(),
            json!(format!(
                "crn:v1:bluemix:public:secrets-manager:us-south:a/fake:instance:secret:{id}"
            )),
        );
        object.insert("created_at".into(), json!("2026-01-01T00:00:00Z"));
        object.insert("created_by".into(), json!("iam-ServiceId-fake"));
        object.insert("state".into(), json!(1));
        object.insert("state_description".into(), json!("active"));
        object.insert("labels".into(), json!([]));
        object.insert("versions_total".into(), json!(1));
        object.insert("downloaded".into(), json!(true));
        if let Value::Object(fields) = fields {
            object.extend(fields);
        }
        data.secrets.push(Stored {
            group: group.to_owned(),
            object,
        });
        id
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// IAM's error answer.
fn iam_error(code: &str, message: &str) -> Response {
    let body = json!({"errorCode": code, "errorMessage": message, "context": {}});
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// Secrets Manager's error answer.
fn sm_error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({
        "errors": [{"code": code, "message": message, "status_code": status.as_u16()}],
        "status_code": status.as_u16(),
        "trace": "fake-trace",
    });
    (status, axum::Json(body)).into_response()
}

async fn token(State(data): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if header(&headers, "content-type") != Some("application/x-www-form-urlencoded") {
        return iam_error(
            "BXNIM0109E",
            "Content-Type must be application/x-www-form-urlencoded",
        );
    }
    let form: Vec<(String, String)> = form_urlencoded::parse(&body)
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    let get = |name: &str| {
        form.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let mut data = lock(&data);
    let accepted = match get("grant_type") {
        Some("urn:ibm:params:oauth:grant-type:apikey") => {
            if get("apikey") != Some(data.api_key.as_str()) {
                return iam_error("BXNIM0415E", "Provided API key could not be found.");
            }
            true
        }
        Some("urn:ibm:params:oauth:grant-type:cr-token") => {
            let Some((profile, cr_token)) = &data.profile else {
                return iam_error("BXNIM0502E", "Trusted profile not found.");
            };
            if get("profile_name") != Some(profile.as_str()) {
                return iam_error("BXNIM0502E", "Trusted profile not found.");
            }
            if get("cr_token") != Some(cr_token.as_str()) {
                return iam_error("BXNIM0471E", "Provided compute resource token is invalid.");
            }
            true
        }
        _ => false,
    };
    if !accepted {
        return iam_error("BXNIM0109E", "Provided grant type is not supported.");
    }
    let token = format!("iam-access-token-{}", data.next_id());
    data.issued.insert(token.clone());
    axum::Json(json!({
        "access_token": token,
        "refresh_token": "not_supported",
        "token_type": "Bearer",
        "expires_in": 3600,
        "expiration": 4_102_444_800_u64,
        "scope": "ibm openid",
    }))
    .into_response()
}

/// The data, if the request carries a token IAM issued.
fn authorized<'a>(data: &'a Shared, headers: &HeaderMap) -> Option<MutexGuard<'a, Data>> {
    let data = lock(data);
    let token = bearer(headers)?;
    data.issued.contains(token).then_some(data)
}

fn unauthorized() -> Response {
    sm_error(StatusCode::UNAUTHORIZED, "unauthorized", "Unauthorized")
}

fn found(object: Option<&Map<String, Value>>) -> Response {
    match object {
        Some(object) => axum::Json(Value::Object(object.clone())).into_response(),
        None => sm_error(StatusCode::NOT_FOUND, "not_found", "Secret not found"),
    }
}

async fn by_id(State(data): State<Shared>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let Some(data) = authorized(&data, &headers) else {
        return unauthorized();
    };
    let secret = data
        .secrets
        .iter()
        .find(|stored| stored.object.get("id") == Some(&json!(id)));
    found(secret.map(|stored| &stored.object))
}

async fn by_name(
    State(data): State<Shared>,
    Path((group, secret_type, name)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> Response {
    let Some(data) = authorized(&data, &headers) else {
        return unauthorized();
    };
    if !SECRET_TYPES.contains(&secret_type.as_str()) {
        return sm_error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "Invalid secret_type path parameter",
        );
    }
    let secret = data.secrets.iter().find(|stored| {
        stored.group == group
            && stored.object.get("name") == Some(&json!(name))
            && stored.object.get("secret_type") == Some(&json!(secret_type))
    });
    found(secret.map(|stored| &stored.object))
}
