//! A contract fake of Google's OAuth 2.0 token endpoint for service accounts (the JWT-bearer
//! grant), as documented in "Using OAuth 2.0 for Server to Server Applications"
//! (developers.google.com/identity/protocols/oauth2/service-account, "Making the access token
//! request") and RFC 7523. It is a fake: no Google service is involved.
//!
//! It refuses, with Google's `{"error": "invalid_grant" | "invalid_request", ...}` answers, what
//! the real endpoint refuses: a method other than POST, a body that is not form-encoded, a
//! `grant_type` other than `urn:ietf:params:oauth:grant-type:jwt-bearer`, an assertion that is
//! not an RS256 JWT signed by the registered key, whose `iss` is not the registered account,
//! whose `aud` is not this endpoint's URL, whose `scope` is missing, or whose life
//! (`exp - iat`) exceeds one hour. Accepted requests get a fresh opaque token valid
//! [`TOKEN_LIFETIME_SECONDS`]; [`TokenEndpoint::issued`] counts them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rustls::pki_types::PrivatePkcs8KeyDer;
use rustls::pki_types::pem::PemObject as _;
use serde_json::{Value, json};

use crate::server::{FakeServer, header, reject};

/// The grant type Google requires.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// How long issued tokens live (Google issues one-hour tokens).
pub const TOKEN_LIFETIME_SECONDS: u64 = 3599;

struct Expected {
    account: String,
    public_key_der: Vec<u8>,
    audience: std::sync::OnceLock<String>,
    issued: AtomicUsize,
}

/// A running token endpoint.
pub struct TokenEndpoint {
    /// The server (plain HTTP: a key file's `token_uri` carries no CA).
    pub server: FakeServer,
    expected: Arc<Expected>,
}

impl TokenEndpoint {
    /// Serves tokens to `account` for JWTs signed by the key whose PKCS#8 PEM (the
    /// `private_key` of the account's key file) is `private_key_pem`; only its public half is
    /// kept.
    pub async fn start(account: &str, private_key_pem: &str) -> std::io::Result<Self> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(private_key_pem.as_bytes())
            .map_err(std::io::Error::other)?;
        let pair = ring::signature::RsaKeyPair::from_pkcs8(der.secret_pkcs8_der())
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        let public_key_der = ring::signature::KeyPair::public_key(&pair)
            .as_ref()
            .to_vec();
        let expected = Arc::new(Expected {
            account: account.to_owned(),
            public_key_der,
            audience: std::sync::OnceLock::new(),
            issued: AtomicUsize::new(0),
        });
        let router = Router::new()
            .route("/token", post(token))
            .with_state(expected.clone());
        let server = FakeServer::http(router).await?;
        let _ = expected.audience.set(format!("{}/token", server.url));
        Ok(Self { server, expected })
    }

    /// The `token_uri` to put in key files.
    pub fn token_uri(&self) -> String {
        format!("{}/token", self.server.url)
    }

    /// How many tokens were issued.
    pub fn issued(&self) -> usize {
        self.expected.issued.load(Ordering::SeqCst)
    }
}

fn refuse(error: &str, description: &str) -> Response {
    reject(
        StatusCode::BAD_REQUEST,
        json!({"error": error, "error_description": description}),
    )
}

async fn token(
    State(expected): State<Arc<Expected>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if header(&headers, "content-type") != Some("application/x-www-form-urlencoded") {
        return refuse(
            "invalid_request",
            "body must be application/x-www-form-urlencoded",
        );
    }
    let mut grant = None;
    let mut assertion = None;
    for pair in body.split('&') {
        match pair.split_once('=') {
            Some(("grant_type", value)) => {
                grant = Some(value.replace("%3A", ":").replace("%3a", ":"))
            }
            Some(("assertion", value)) => assertion = Some(value.to_owned()),
            _ => {}
        }
    }
    if grant.as_deref() != Some(JWT_BEARER) {
        return refuse("unsupported_grant_type", "Invalid grant_type");
    }
    let Some(assertion) = assertion else {
        return refuse("invalid_request", "Missing required parameter: assertion");
    };
    if let Err(problem) = check_assertion(&expected, &assertion) {
        return refuse("invalid_grant", problem);
    }
    let number = expected.issued.fetch_add(1, Ordering::SeqCst) + 1;
    axum::Json(json!({
        "access_token": format!("ya29.fake-{number}"),
        "expires_in": TOKEN_LIFETIME_SECONDS,
        "token_type": "Bearer",
    }))
    .into_response()
}

fn check_assertion(expected: &Expected, assertion: &str) -> Result<(), &'static str> {
    let mut parts = assertion.split('.');
    let (Some(head), Some(claims), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("Invalid JWT: not three parts");
    };
    let decode = |part: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| "Invalid JWT encoding")
    };
    let head: Value = serde_json::from_slice(&decode(head)?).map_err(|_| "Invalid JWT header")?;
    if head["alg"] != "RS256" {
        return Err("Invalid JWT: alg must be RS256");
    }
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &expected.public_key_der,
    );
    let signed = &assertion[..assertion.rfind('.').unwrap_or(0)];
    key.verify(signed.as_bytes(), &decode(signature)?)
        .map_err(|_| "Invalid JWT Signature.")?;
    let claims: Value =
        serde_json::from_slice(&decode(claims)?).map_err(|_| "Invalid JWT claims")?;
    if claims["iss"] != expected.account.as_str() {
        return Err("Invalid issuer");
    }
    if expected.audience.get().map(String::as_str) != claims["aud"].as_str() {
        return Err("Invalid JWT: aud must be the token endpoint");
    }
    if claims["scope"].as_str().is_none_or(str::is_empty) {
        return Err("Invalid JWT: scope is required");
    }
    let (Some(iat), Some(exp)) = (claims["iat"].as_u64(), claims["exp"].as_u64()) else {
        return Err("Invalid JWT: iat and exp are required");
    };
    if exp <= iat || exp - iat > 3600 {
        return Err("Invalid JWT: Token must be a short-lived token (60 minutes)");
    }
    Ok(())
}

/// RFC 8693's grant type, as the identity binding token exchange requires.
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The subject token type of a Kubernetes ServiceAccount token.
pub const JWT_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:jwt";
/// The requested token type.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// The scope Secret Manager needs.
pub const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";

pub(crate) struct Identity {
    pub(crate) audience: String,
    pub(crate) account: String,
    pub(crate) exchanged: AtomicUsize,
    pub(crate) generated: AtomicUsize,
}

/// A contract fake of GKE workload identity's two Google endpoints: Secure Token's
/// `POST /v1/identitybindingtoken` (an RFC 8693 token exchange, JSON body, as upstream's
/// provider sends it) and IAM Credentials' `POST /v1/projects/-/serviceAccounts/{email}:
/// generateAccessToken` (cloud.google.com/iam/docs/reference/credentials/rest). It is a fake: the
/// exchange checks the grant type, subject and requested token types, the exact
/// `identitynamespace:<pool>:<provider>` audience, the cloud-platform scope and that the subject
/// token is a JWT whose `aud` includes the pool; `generateAccessToken` checks the bearer is a
/// token it exchanged, the account is the expected one and `scope` lists cloud-platform.
pub struct WorkloadIdentityEndpoints {
    /// The server (plain HTTP; the tests point the provider at it through its endpoint
    /// settings).
    pub server: FakeServer,
    identity: Arc<Identity>,
}

impl WorkloadIdentityEndpoints {
    /// Serves exchanges for `pool` and `provider`, and access tokens of Google service account
    /// `account`.
    pub async fn start(pool: &str, provider: &str, account: &str) -> std::io::Result<Self> {
        let identity = Arc::new(Identity {
            audience: format!("identitynamespace:{pool}:{provider}"),
            account: account.to_owned(),
            exchanged: AtomicUsize::new(0),
            generated: AtomicUsize::new(0),
        });
        let router = Router::new()
            .route("/v1/identitybindingtoken", post(exchange))
            .route("/v1/projects/-/serviceAccounts/{call}", post(generate))
            .with_state(identity.clone());
        let server = FakeServer::http(router).await?;
        Ok(Self { server, identity })
    }

    /// Exchanges and access tokens issued so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.identity.exchanged.load(Ordering::SeqCst),
            self.identity.generated.load(Ordering::SeqCst),
        )
    }
}

async fn exchange(
    State(identity): State<Arc<Identity>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if header(&headers, "content-type") != Some("application/json") {
        return refuse("invalid_request", "body must be JSON");
    }
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return refuse("invalid_request", "body must be JSON");
    };
    let checks = [
        ("grant_type", TOKEN_EXCHANGE),
        ("subject_token_type", JWT_TOKEN_TYPE),
        ("requested_token_type", ACCESS_TOKEN_TYPE),
        ("audience", identity.audience.as_str()),
        ("scope", CLOUD_PLATFORM),
    ];
    for (field, expected) in checks {
        if request[field] != expected {
            return refuse("invalid_request", field);
        }
    }
    let pool = identity.audience.split(':').nth(1).unwrap_or_default();
    let subject = request["subject_token"].as_str().unwrap_or_default();
    let claims = subject
        .split('.')
        .nth(1)
        .and_then(|part| URL_SAFE_NO_PAD.decode(part).ok())
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    let audience_ok = claims.is_some_and(|claims| match &claims["aud"] {
        Value::Array(audiences) => audiences.iter().any(|aud| aud == pool),
        Value::String(aud) => aud == pool,
        _ => false,
    });
    if !audience_ok {
        return refuse(
            "invalid_grant",
            "subject token audience does not include the pool",
        );
    }
    let number = identity.exchanged.fetch_add(1, Ordering::SeqCst) + 1;
    axum::Json(json!({
        "access_token": format!("federated-{number}"),
        "token_type": "Bearer",
        "expires_in": TOKEN_LIFETIME_SECONDS,
        "issued_token_type": ACCESS_TOKEN_TYPE,
    }))
    .into_response()
}

pub(crate) async fn generate(
    State(identity): State<Arc<Identity>>,
    axum::extract::Path(call): axum::extract::Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let unauthenticated = || {
        reject(
            StatusCode::UNAUTHORIZED,
            json!({"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "bad token"}}),
        )
    };
    let issued = identity.exchanged.load(Ordering::SeqCst);
    let bearer_ok = crate::server::bearer(&headers)
        .and_then(|token| token.strip_prefix("federated-"))
        .and_then(|number| number.parse::<usize>().ok())
        .is_some_and(|number| (1..=issued).contains(&number));
    if !bearer_ok {
        return unauthenticated();
    }
    if call != format!("{}:generateAccessToken", identity.account) {
        return reject(
            StatusCode::FORBIDDEN,
            json!({"error": {"code": 403, "status": "PERMISSION_DENIED", "message": "no access"}}),
        );
    }
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let scoped = request["scope"]
        .as_array()
        .is_some_and(|scopes| scopes.iter().any(|scope| scope == CLOUD_PLATFORM));
    if !scoped {
        return reject(
            StatusCode::BAD_REQUEST,
            json!({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "scope"}}),
        );
    }
    let number = identity.generated.fetch_add(1, Ordering::SeqCst) + 1;
    axum::Json(json!({
        "accessToken": format!("ya29.impersonated-{number}"),
        "expireTime": "2999-01-01T00:00:00Z",
    }))
    .into_response()
}
