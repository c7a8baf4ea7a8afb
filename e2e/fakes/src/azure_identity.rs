//! A contract fake of the Microsoft Entra ID token endpoints a Key Vault client calls: the v2.0
//! client-credentials endpoint (`POST /{tenant}/oauth2/v2.0/token`, with a client secret, a
//! certificate-signed client assertion, or a federated token) and the Azure Instance Metadata
//! Service's managed-identity endpoint (`GET /metadata/identity/oauth2/token`).
//!
//! It is a fake, not Entra ID. It follows the Microsoft identity platform references
//! "OAuth 2.0 client credentials flow" (the request's `grant_type`, `client_id`, `scope` ending in
//! `/.default`, and exactly one of `client_secret` or `client_assertion_type` +
//! `client_assertion`), "Microsoft identity platform application authentication certificate
//! credentials" (an RS256 JWT whose header carries the certificate's SHA-1 thumbprint as `x5t`
//! and whose `aud` is the token endpoint, `iss` = `sub` = the client id, with `exp`, `nbf` and
//! `jti`), "Workload identity federation" (the federated token's `sub` must match the app's
//! federated credential and its `aud` must contain `api://AzureADTokenExchange`; the fake does
//! not check that token's signature, which Entra ID does against the issuer's keys) and "How to
//! use managed identities for Azure resources on an Azure VM to acquire an access token"
//! (`Metadata: true` header, `api-version` and `resource` query parameters, optional
//! `client_id` or `msi_res_id`). Errors are the OAuth 2.0 bodies `{"error": ..., "error_description": ...}` with
//! Entra ID's AADSTS codes. Issued tokens are opaque and remembered with their resource, so the
//! Key Vault fake accepts only tokens issued for its audience.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::server::{header, reject};

/// The client-assertion type the client-credentials flow accepts.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The audience a federated token must carry.
pub const TOKEN_EXCHANGE_AUDIENCE: &str = "api://AzureADTokenExchange";

/// How an application registration proves itself.
#[derive(Clone)]
pub enum AppCredential {
    /// A client secret.
    Secret(String),
    /// A certificate: its DER (for the `x5t` thumbprint) and the RSA public key (PKCS#1 DER)
    /// that verifies assertions.
    Certificate {
        /// The certificate, DER.
        der: Vec<u8>,
        /// The certificate's RSA public key, PKCS#1 `RSAPublicKey` DER.
        public_key: Vec<u8>,
    },
    /// A federated credential trusting tokens whose `sub` is this subject.
    Federated {
        /// The expected `sub` of the federated token.
        subject: String,
    },
}

/// Entra ID's memory: apps per tenant, managed identities, issued tokens.
#[derive(Default)]
pub struct Directory {
    apps: HashMap<(String, String), AppCredential>,
    managed_identities: Vec<String>,
    tokens: HashMap<String, String>,
    issued: u64,
}

/// The directory shared by the token routes and the Key Vault fake.
#[derive(Clone, Default)]
pub struct SharedDirectory(Arc<Mutex<Directory>>);

impl SharedDirectory {
    fn lock(&self) -> MutexGuard<'_, Directory> {
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Registers application `client_id` in `tenant`.
    pub fn register_app(&self, tenant: &str, client_id: &str, credential: AppCredential) {
        self.lock()
            .apps
            .insert((tenant.to_owned(), client_id.to_owned()), credential);
    }

    /// Assigns a managed identity with `client_id` (or ARM resource id, as IMDS's `msi_res_id`
    /// names it) to "this machine"; the first one assigned is the default IMDS answers for when
    /// no identity is named.
    pub fn assign_managed_identity(&self, client_id: &str) {
        self.lock().managed_identities.push(client_id.to_owned());
    }

    /// The resource `token` was issued for, if it was issued here.
    pub fn resource_of(&self, token: &str) -> Option<String> {
        self.lock().tokens.get(token).cloned()
    }

    /// How many tokens were issued so far.
    pub fn issued(&self) -> u64 {
        self.lock().issued
    }

    fn issue(&self, resource: &str) -> String {
        let mut directory = self.lock();
        directory.issued += 1;
        let token = format!("fake-token-{}-{:016x}", directory.issued, fastrand_u64());
        directory.tokens.insert(token.clone(), resource.to_owned());
        token
    }
}

fn fastrand_u64() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or_default();
    u64::from(nanos).wrapping_mul(6_364_136_223_846_793_005)
}

/// The token routes, for merging into the fake's router. `origin` holds the server's own
/// `https://127.0.0.1:PORT` (filled once it listens), whose token endpoint client assertions
/// must name as audience.
pub fn routes(directory: SharedDirectory, origin: Arc<Mutex<String>>) -> Router {
    Router::new()
        .route("/{tenant}/oauth2/v2.0/token", post(client_credentials))
        .route("/metadata/identity/oauth2/token", get(imds))
        .with_state((directory, origin))
}

type TokenState = (SharedDirectory, Arc<Mutex<String>>);

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    reject(
        status,
        json!({"error": error, "error_description": description, "error_codes": []}),
    )
}

async fn client_credentials(
    State((directory, origin)): State<TokenState>,
    Path(tenant): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !header(&headers, "content-type")
        .is_some_and(|kind| kind.starts_with("application/x-www-form-urlencoded"))
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "AADSTS900144: The request body must contain the following parameter: 'grant_type'.",
        );
    }
    let form: HashMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| form.get(name).map(String::as_str).filter(|v| !v.is_empty());
    for required in ["grant_type", "client_id", "scope"] {
        if field(required).is_none() {
            let description = format!(
                "AADSTS900144: The request body must contain the following parameter: '{required}'."
            );
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", &description);
        }
    }
    if field("grant_type") != Some("client_credentials") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "AADSTS70003: The app requested an unsupported grant type.",
        );
    }
    let client_id = field("client_id").unwrap_or_default();
    let scope = field("scope").unwrap_or_default();
    let Some(resource) = scope.strip_suffix("/.default") else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "AADSTS1002012: The provided value for scope is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier.",
        );
    };
    let credential = directory
        .lock()
        .apps
        .get(&(tenant.clone(), client_id.to_owned()))
        .cloned();
    let Some(credential) = credential else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "AADSTS700016: Application not found in the directory.",
        );
    };
    let origin = origin.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let endpoint = format!("{origin}/{tenant}/oauth2/v2.0/token");
    let proof = match (field("client_secret"), field("client_assertion_type")) {
        (Some(secret), None) => check_secret(&credential, secret),
        (None, Some(JWT_BEARER)) => match field("client_assertion") {
            Some(assertion) => check_assertion(&credential, assertion, client_id, &endpoint),
            None => Err(
                "AADSTS900144: The request body must contain the following parameter: 'client_assertion'.",
            ),
        },
        (None, Some(_)) => Err("AADSTS700025: Client assertion type is not supported."),
        (None, None) => Err(
            "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
        ),
        (Some(_), Some(_)) => {
            Err("AADSTS90014: Only one of client_secret or client_assertion may be sent.")
        }
    };
    if let Err(description) = proof {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", description);
    }
    token_answer(&directory, resource, false)
}

fn check_secret(credential: &AppCredential, secret: &str) -> Result<(), &'static str> {
    match credential {
        AppCredential::Secret(expected) if expected == secret => Ok(()),
        _ => Err("AADSTS7000215: Invalid client secret provided."),
    }
}

/// Checks a client assertion: a certificate-signed JWT, or a federated token.
fn check_assertion(
    credential: &AppCredential,
    assertion: &str,
    client_id: &str,
    endpoint: &str,
) -> Result<(), &'static str> {
    const MALFORMED: &str = "AADSTS50027: JWT token is invalid or malformed.";
    let mut parts = assertion.split('.');
    let (Some(head), Some(body), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(MALFORMED);
    };
    let decode = |part: &str| -> Result<Value, &'static str> {
        let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| MALFORMED)?;
        serde_json::from_slice(&bytes).map_err(|_| MALFORMED)
    };
    let (header, claims) = (decode(head)?, decode(body)?);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default();
    if claims["exp"].as_u64().is_none_or(|exp| exp < now) {
        return Err("AADSTS700024: Client assertion is not within its valid time range.");
    }
    match credential {
        AppCredential::Secret(_) => {
            Err("AADSTS700027: Client assertion contains an invalid signature.")
        }
        AppCredential::Federated { subject } => {
            let audiences = match &claims["aud"] {
                Value::String(one) => vec![one.clone()],
                Value::Array(many) => many
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
                _ => Vec::new(),
            };
            if !audiences.iter().any(|aud| aud == TOKEN_EXCHANGE_AUDIENCE) {
                return Err(
                    "AADSTS700212: No matching federated identity record found for presented assertion audience.",
                );
            }
            if claims["sub"].as_str() != Some(subject) {
                return Err(
                    "AADSTS70021: No matching federated identity record found for presented assertion.",
                );
            }
            Ok(())
        }
        AppCredential::Certificate { der, public_key } => {
            let thumbprint = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, der);
            if header["alg"].as_str() != Some("RS256")
                || header["x5t"].as_str() != Some(&URL_SAFE_NO_PAD.encode(thumbprint.as_ref()))
            {
                return Err(
                    "AADSTS700027: Client assertion contains an invalid signature. [Reason - The key was not found.]",
                );
            }
            let signed = format!("{head}.{body}");
            let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| MALFORMED)?;
            ring::signature::UnparsedPublicKey::new(
                &ring::signature::RSA_PKCS1_2048_8192_SHA256,
                public_key,
            )
            .verify(signed.as_bytes(), &signature)
            .map_err(|_| "AADSTS700027: Client assertion contains an invalid signature.")?;
            let claims_ok = claims["aud"].as_str() == Some(endpoint)
                && claims["iss"].as_str() == Some(client_id)
                && claims["sub"].as_str() == Some(client_id)
                && claims["jti"].as_str().is_some_and(|jti| !jti.is_empty())
                && claims["nbf"].as_u64().is_some_and(|nbf| nbf <= now + 300);
            if claims_ok {
                Ok(())
            } else {
                Err(
                    "AADSTS50027: JWT token is invalid or malformed. The aud, iss, sub, jti or nbf claim is wrong.",
                )
            }
        }
    }
}

/// The token answer; IMDS gives `expires_in` as a string, the v2.0 endpoint as a number.
fn token_answer(directory: &SharedDirectory, resource: &str, imds: bool) -> Response {
    let token = directory.issue(resource);
    let body = if imds {
        json!({"access_token": token, "expires_in": "3599", "token_type": "Bearer", "resource": resource})
    } else {
        json!({"access_token": token, "expires_in": 3599, "ext_expires_in": 3599, "token_type": "Bearer"})
    };
    (StatusCode::OK, axum::Json(body)).into_response()
}

async fn imds(State((directory, _)): State<TokenState>, headers: HeaderMap, uri: Uri) -> Response {
    if header(&headers, "metadata") != Some("true") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Required metadata header not specified",
        );
    }
    let query: HashMap<String, String> =
        form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    if query.get("api-version").is_none_or(String::is_empty) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Required query variable 'api-version' is missing",
        );
    }
    let Some(resource) = query.get("resource").filter(|r| !r.is_empty()) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Required query variable 'resource' is missing",
        );
    };
    // A user-assigned identity is named by client id or by ARM resource id, not both.
    let named = match (query.get("client_id"), query.get("msi_res_id")) {
        (Some(_), Some(_)) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Multiple identity parameters specified",
            );
        }
        (client_id, resource_id) => client_id.or(resource_id),
    };
    let known = {
        let identities = &directory.lock().managed_identities;
        match named {
            Some(id) => identities.contains(id),
            None => !identities.is_empty(),
        }
    };
    if !known {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Identity not found",
        );
    }
    let resource = resource.trim_end_matches('/').to_owned();
    token_answer(&directory, &resource, true)
}
