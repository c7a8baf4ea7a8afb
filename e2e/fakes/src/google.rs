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
