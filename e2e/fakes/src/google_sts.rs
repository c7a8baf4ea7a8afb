//! A contract fake of Google's Security Token Service token exchange for workload identity
//! federation, `POST https://sts.googleapis.com/v1/token` (cloud.google.com/iam/docs/reference/
//! sts/rest/v1/TopLevel/token, RFC 8693), with IAM Credentials' `generateAccessToken` for
//! impersonation (the same handler as [`crate::google::WorkloadIdentityEndpoints`]'). It is a
//! fake: no Google service is involved.
//!
//! The exchange refuses (400, `{"error": "invalid_request" | "invalid_grant", ...}`) what the
//! real service refuses: a body that is not form-encoded, a `grant_type` other than
//! token-exchange, a `requested_token_type` other than `access_token`, a missing scope, an
//! `audience` other than the pool provider's, a `subject_token_type` other than the provider's,
//! and a subject token the provider does not accept: for a fixed token, any other value; for a
//! Kubernetes token, a JWT whose `aud` lacks the expected audience; for AWS, a request that is
//! not `POST https://sts.<region>.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15`
//! carrying `x-goog-cloud-target-resource` = the audience and a valid SigV4 signature by the
//! registered key (verified here from the key, as AWS would, with its own HMAC chain).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::{digest, hmac};
use serde_json::{Value, json};

use crate::google::{ACCESS_TOKEN_TYPE, CLOUD_PLATFORM, Identity, TOKEN_EXCHANGE, generate};
use crate::server::{FakeServer, header, reject};

/// The subject token type of a signed AWS request.
pub const AWS_TOKEN_TYPE: &str = "urn:ietf:params:aws:token-type:aws4_request";

/// What the pool provider accepts as subject.
#[derive(Clone)]
pub enum Subject {
    /// Exactly this token, of this type (a file or URL source).
    Fixed { token_type: String, token: String },
    /// A JWT (`urn:ietf:params:oauth:token-type:jwt`) whose `aud` includes this audience.
    Jwt { audience: String },
    /// A `GetCallerIdentity` request signed by these AWS keys, in this region.
    Aws {
        region: String,
        access_key_id: String,
        secret_access_key: String,
        session_token: Option<String>,
    },
}

struct Sts {
    subject: Subject,
    identity: Arc<Identity>,
}

/// A running STS (and IAM Credentials) fake.
pub struct StsEndpoints {
    /// The server (plain HTTP; tests point the provider at it through its endpoint settings).
    pub server: FakeServer,
    identity: Arc<Identity>,
}

impl StsEndpoints {
    /// Exchanges `subject` for pool provider `audience`; impersonation is allowed for Google
    /// service account `account`.
    pub async fn start(audience: &str, subject: Subject, account: &str) -> std::io::Result<Self> {
        let identity = Arc::new(Identity {
            audience: audience.to_owned(),
            account: account.to_owned(),
            exchanged: AtomicUsize::new(0),
            generated: AtomicUsize::new(0),
        });
        let sts = Arc::new(Sts {
            subject,
            identity: identity.clone(),
        });
        let router = Router::new()
            .route("/v1/token", post(exchange))
            .with_state(sts)
            .merge(
                Router::new()
                    .route("/v1/projects/-/serviceAccounts/{call}", post(generate))
                    .with_state(identity.clone()),
            );
        let server = FakeServer::http(router).await?;
        Ok(Self { server, identity })
    }

    /// Exchanges and impersonated tokens issued so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.identity.exchanged.load(Ordering::SeqCst),
            self.identity.generated.load(Ordering::SeqCst),
        )
    }
}

fn refuse(error: &str, description: &str) -> Response {
    reject(
        StatusCode::BAD_REQUEST,
        json!({"error": error, "error_description": description}),
    )
}

async fn exchange(State(sts): State<Arc<Sts>>, headers: HeaderMap, body: String) -> Response {
    if header(&headers, "content-type") != Some("application/x-www-form-urlencoded") {
        return refuse("invalid_request", "body must be form-encoded");
    }
    let form: std::collections::BTreeMap<String, String> = form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let field = |name: &str| form.get(name).map(String::as_str).unwrap_or_default();
    if field("grant_type") != TOKEN_EXCHANGE {
        return refuse("unsupported_grant_type", "grant_type");
    }
    if field("requested_token_type") != ACCESS_TOKEN_TYPE {
        return refuse("invalid_request", "requested_token_type");
    }
    if !field("scope")
        .split(' ')
        .any(|scope| scope == CLOUD_PLATFORM)
    {
        return refuse("invalid_request", "scope");
    }
    if field("audience") != sts.identity.audience {
        return refuse("invalid_target", "audience");
    }
    let token = field("subject_token");
    let accepted = match &sts.subject {
        Subject::Fixed {
            token_type,
            token: expected,
        } => (field("subject_token_type") == token_type && token == expected)
            .then_some(())
            .ok_or("subject token"),
        Subject::Jwt { audience } => {
            let audience_ok = field("subject_token_type") == crate::google::JWT_TOKEN_TYPE
                && jwt_audiences(token).iter().any(|aud| aud == audience);
            audience_ok.then_some(()).ok_or("subject token audience")
        }
        Subject::Aws { .. } if field("subject_token_type") != AWS_TOKEN_TYPE => {
            Err("subject_token_type")
        }
        Subject::Aws {
            region,
            access_key_id,
            secret_access_key,
            session_token,
        } => check_aws(
            token,
            &sts.identity.audience,
            region,
            access_key_id,
            secret_access_key,
            session_token.as_deref(),
        ),
    };
    if let Err(problem) = accepted {
        return refuse("invalid_grant", problem);
    }
    let number = sts.identity.exchanged.fetch_add(1, Ordering::SeqCst) + 1;
    axum::Json(json!({
        "access_token": format!("federated-{number}"),
        "issued_token_type": ACCESS_TOKEN_TYPE,
        "token_type": "Bearer",
        "expires_in": crate::google::TOKEN_LIFETIME_SECONDS,
    }))
    .into_response()
}

fn jwt_audiences(token: &str) -> Vec<String> {
    let claims = token
        .split('.')
        .nth(1)
        .and_then(|part| URL_SAFE_NO_PAD.decode(part).ok())
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .unwrap_or_default();
    match &claims["aud"] {
        Value::Array(audiences) => audiences
            .iter()
            .filter_map(|aud| aud.as_str().map(str::to_owned))
            .collect(),
        Value::String(aud) => vec![aud.clone()],
        _ => Vec::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn sign(key: &[u8], data: &str) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
        .as_ref()
        .to_vec()
}

/// Verifies a serialized, signed `GetCallerIdentity` request as AWS would.
fn check_aws(
    token: &str,
    audience: &str,
    region: &str,
    access_key_id: &str,
    secret_access_key: &str,
    session_token: Option<&str>,
) -> Result<(), &'static str> {
    let decoded: String = form_urlencoded::parse(format!("t={token}").as_bytes())
        .map(|(_, value)| value.into_owned())
        .next()
        .unwrap_or_default();
    let request: Value = serde_json::from_str(&decoded).map_err(|_| "subject token is not JSON")?;
    let host = format!("sts.{region}.amazonaws.com");
    if request["url"] != format!("https://{host}?Action=GetCallerIdentity&Version=2011-06-15")
        || request["method"] != "POST"
    {
        return Err("not a GetCallerIdentity request of the region");
    }
    let headers: std::collections::BTreeMap<String, String> = request["headers"]
        .as_array()
        .map(|headers| {
            headers
                .iter()
                .map(|h| {
                    let key = h["key"].as_str().unwrap_or_default().to_ascii_lowercase();
                    (key, h["value"].as_str().unwrap_or_default().to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    let get = |name: &str| headers.get(name).map(String::as_str).unwrap_or_default();
    if get("host") != host || get("x-goog-cloud-target-resource") != audience {
        return Err("host or x-goog-cloud-target-resource");
    }
    if session_token.is_some_and(|token| get("x-amz-security-token") != token) {
        return Err("x-amz-security-token");
    }
    let authorization = get("authorization");
    let parts = authorization
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("authorization scheme")?;
    let mut credential = "";
    let mut signed = "";
    let mut signature = "";
    for part in parts.split(", ") {
        match part.split_once('=') {
            Some(("Credential", value)) => credential = value,
            Some(("SignedHeaders", value)) => signed = value,
            Some(("Signature", value)) => signature = value,
            _ => {}
        }
    }
    let scope: Vec<&str> = credential.split('/').collect();
    let [key_id, date, scope_region, "sts", "aws4_request"] = scope.as_slice() else {
        return Err("credential scope");
    };
    if *key_id != access_key_id || *scope_region != region {
        return Err("credential key or region");
    }
    let signed_names: Vec<&str> = signed.split(';').collect();
    let required = ["host", "x-amz-date", "x-goog-cloud-target-resource"];
    if required.iter().any(|name| !signed_names.contains(name)) {
        return Err("signed headers");
    }
    let canonical_headers: String = signed_names
        .iter()
        .map(|name| format!("{name}:{}\n", get(name).trim()))
        .collect();
    let empty_hash = hex(digest::digest(&digest::SHA256, b"").as_ref());
    let canonical = format!(
        "POST\n/\nAction=GetCallerIdentity&Version=2011-06-15\n{canonical_headers}\n{signed}\n{empty_hash}"
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{date}/{region}/sts/aws4_request\n{}",
        get("x-amz-date"),
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref())
    );
    let mut key = sign(format!("AWS4{secret_access_key}").as_bytes(), date);
    for step in [region, "sts", "aws4_request"] {
        key = sign(&key, step);
    }
    if hex(&sign(&key, &string_to_sign)) != signature {
        return Err("SignatureDoesNotMatch");
    }
    Ok(())
}
