//! Contract fakes of an OCI compute instance's identity — fakes, not Oracle Cloud: the instance
//! metadata service's identity documents and the identity service's X.509 federation.
//!
//! They follow Oracle's "Calling Services from an Instance"
//! (<https://docs.oracle.com/en-us/iaas/Content/Identity/Tasks/callingservicesfrominstances.htm>),
//! the instance metadata service v2 reference
//! (<https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm>) and the
//! wire protocol of the OCI SDKs' instance principal provider (oci-go-sdk `common/auth`):
//!
//! * [`InstanceMetadata`] serves plain HTTP under `/opc/v2`: `instance/region` (text),
//!   `identity/cert.pem` (the leaf, subject `OU=opc-tenant:<tenancy>`), `identity/key.pem` and
//!   `identity/intermediate.pem`; a request without `Authorization: Bearer Oracle` is 401.
//! * `POST /v1/x509` (served by [`crate::oracle::OracleFake`] beside the Vault APIs, see
//!   [`federate`]) must be signed by the leaf key with key id
//!   `<tenancy>/fed-x509-sha256/<colon-separated SHA-256 of the leaf>` over `date
//!   (request-target) content-length content-type x-content-sha256`; the body must carry the
//!   registered leaf as `certificate`, its intermediate in `intermediateCertificates`,
//!   `fingerprintAlgorithm` `SHA256` and an RSA `publicKey` (base64 SubjectPublicKeyInfo DER).
//!   Anything else is 401 `NotAuthenticated` (400 for a malformed body). The answer is
//!   `{"token"}`, a JWT-shaped token whose `exp` is the configured lifetime away; requests
//!   signed by the session key with key id `ST$<token>` are then accepted until `exp`.
//! * `POST /resourcePrincipalSessionTokens` (also served by the Vault fake, see [`exchange`]) is
//!   the OKE proxymux of the SDKs' `OkeWorkloadIdentityConfigurationProvider`: a registered
//!   service-account bearer token and a `podKey` PEM public key give a session token the same
//!   way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use crate::server::{FakeServer, header};

/// The region the metadata service answers.
pub const REGION: &str = "us-ashburn-1";

/// An instance's identity documents: a leaf certificate naming the tenancy, signed for the
/// given RSA key, and an unrelated intermediate.
#[derive(Debug, Clone)]
pub struct InstanceIdentity {
    /// The tenancy OCID in the leaf's subject.
    pub tenancy: String,
    /// The leaf certificate, PEM.
    pub leaf_pem: String,
    /// The leaf's private key, PEM (the key it was created with).
    pub key_pem: String,
    /// The intermediate certificate, PEM.
    pub intermediate_pem: String,
}

impl InstanceIdentity {
    /// A leaf for `tenancy` over the RSA PKCS#8 PEM key `key_pem`, and an intermediate.
    pub fn new(tenancy: &str, key_pem: &str) -> Result<Self, rcgen::Error> {
        let key = rcgen::KeyPair::from_pem_and_sign_algo(key_pem, &rcgen::PKCS_RSA_SHA256)?;
        let mut leaf = rcgen::CertificateParams::default();
        leaf.distinguished_name
            .push(rcgen::DnType::CommonName, "ocid1.instance.oc1..fake");
        leaf.distinguished_name.push(
            rcgen::DnType::OrganizationalUnitName,
            format!("opc-tenant:{tenancy}"),
        );
        let leaf = leaf.self_signed(&key)?;
        let mut intermediate = rcgen::CertificateParams::default();
        intermediate
            .distinguished_name
            .push(rcgen::DnType::CommonName, "fake OCI instance intermediate");
        let intermediate = intermediate.self_signed(&rcgen::KeyPair::generate()?)?;
        Ok(Self {
            tenancy: tenancy.to_owned(),
            leaf_pem: leaf.pem(),
            key_pem: key_pem.to_owned(),
            intermediate_pem: intermediate.pem(),
        })
    }

    /// The leaf's DER.
    pub fn leaf_der(&self) -> Vec<u8> {
        pem_der(&self.leaf_pem)
    }

    /// The intermediate's DER.
    pub fn intermediate_der(&self) -> Vec<u8> {
        pem_der(&self.intermediate_pem)
    }

    /// The key id federation requests must be signed with.
    pub fn key_id(&self) -> String {
        let digest = ring::digest::digest(&ring::digest::SHA256, &self.leaf_der());
        let hex: Vec<String> = digest
            .as_ref()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        format!("{}/fed-x509-sha256/{}", self.tenancy, hex.join(":"))
    }
}

fn pem_der(pem: &str) -> Vec<u8> {
    let body: String = pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect();
    STANDARD.decode(body).unwrap_or_default()
}

/// The instance metadata service of one [`InstanceIdentity`], over plain HTTP as on an
/// instance.
pub struct InstanceMetadata {
    /// The server; `OCI_METADATA_BASE_URL` is its `url` with `/opc/v2`.
    pub server: FakeServer,
    available: Arc<AtomicBool>,
}

impl InstanceMetadata {
    /// Serves `identity`.
    pub async fn start(identity: &InstanceIdentity) -> std::io::Result<Self> {
        let available = Arc::new(AtomicBool::new(true));
        let document = |body: String| {
            let available = available.clone();
            move |headers: HeaderMap| async move {
                if !available.load(Ordering::SeqCst) {
                    return StatusCode::NOT_FOUND.into_response();
                }
                if header(&headers, "authorization") != Some("Bearer Oracle") {
                    return (
                        StatusCode::UNAUTHORIZED,
                        "missing Authorization: Bearer Oracle",
                    )
                        .into_response();
                }
                body.into_response()
            }
        };
        let router = Router::new()
            .route("/opc/v2/instance/region", get(document(REGION.to_owned())))
            .route(
                "/opc/v2/identity/cert.pem",
                get(document(identity.leaf_pem.clone())),
            )
            .route(
                "/opc/v2/identity/key.pem",
                get(document(identity.key_pem.clone())),
            )
            .route(
                "/opc/v2/identity/intermediate.pem",
                get(document(identity.intermediate_pem.clone())),
            );
        Ok(Self {
            server: FakeServer::http(router).await?,
            available,
        })
    }

    /// Makes every document 404 (`false`), as off an instance, or serves them again.
    pub fn set_available(&self, available: bool) {
        self.available.store(available, Ordering::SeqCst);
    }

    /// The base URL the SDKs read from `OCI_METADATA_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("{}/opc/v2", self.server.url)
    }
}

/// A federated session the Vault APIs accept: the session key (PKCS#1 RSA public key DER) and
/// the token's expiry.
pub struct Session {
    /// The RSA public key the token was issued for.
    pub public_key: Vec<u8>,
    /// Seconds since the epoch.
    pub expires: i64,
}

/// Answers a federation request (its signature already verified against `identity`'s leaf):
/// the token and its session, or the refusal.
pub fn federate(
    identity: &InstanceIdentity,
    body: &[u8],
    lifetime_seconds: i64,
    serial: usize,
) -> Result<(String, Session), Box<Response>> {
    let refuse = |status: StatusCode, code: &str, message: &str| {
        Box::new(
            (
                status,
                axum::Json(json!({"code": code, "message": message})),
            )
                .into_response(),
        )
    };
    let request: Value = serde_json::from_slice(body).map_err(|_| {
        refuse(
            StatusCode::BAD_REQUEST,
            "InvalidParameter",
            "body is not JSON",
        )
    })?;
    let text = |name: &str| {
        request
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    if text("certificate") != STANDARD.encode(identity.leaf_der()) {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "NotAuthenticated",
            "certificate is not the signing leaf",
        ));
    }
    let intermediate = STANDARD.encode(identity.intermediate_der());
    let intermediates = request
        .get("intermediateCertificates")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !intermediates
        .iter()
        .any(|item| item.as_str() == Some(&intermediate))
    {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "NotAuthenticated",
            "the leaf's intermediate certificate is missing",
        ));
    }
    if text("fingerprintAlgorithm") != "SHA256" {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "InvalidParameter",
            "fingerprintAlgorithm must be SHA256 for a fed-x509-sha256 key id",
        ));
    }
    let public_key = STANDARD
        .decode(text("publicKey"))
        .ok()
        .and_then(|spki| rsa_public_key(&spki))
        .ok_or_else(|| {
            refuse(
                StatusCode::BAD_REQUEST,
                "InvalidParameter",
                "publicKey is not a base64 RSA SubjectPublicKeyInfo",
            )
        })?;
    Ok(issue(
        &identity.tenancy,
        public_key,
        lifetime_seconds,
        serial,
    ))
}

/// A JWT-shaped token for `tenancy` expiring `lifetime_seconds` from now, and its session.
fn issue(
    tenancy: &str,
    public_key: Vec<u8>,
    lifetime_seconds: i64,
    serial: usize,
) -> (String, Session) {
    let expires = unix_now() + lifetime_seconds;
    let claims = json!({"exp": expires, "res_tenant": tenancy, "jti": serial,
        "sub": "ocid1.instance.oc1..fake"});
    let token = format!(
        "{}.{}.fake-signature",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    (
        token,
        Session {
            public_key,
            expires,
        },
    )
}

/// Answers an OKE proxymux `POST /resourcePrincipalSessionTokens`: the bearer token must be
/// `service_account_token`, the content type JSON, an `opc-request-id` present and `podKey`
/// an RSA public key PEM (401 / 400 otherwise). The answer (a JSON string of base64
/// `{"token":"ST$<token>"}`) and the session, or the refusal.
pub fn exchange(
    headers: &HeaderMap,
    body: &[u8],
    service_account_token: &str,
    lifetime_seconds: i64,
    serial: usize,
) -> Result<(String, String, Session), Box<Response>> {
    let refuse =
        |status: StatusCode, message: &str| Box::new((status, message.to_owned()).into_response());
    let bearer = header(headers, "authorization").and_then(|value| value.strip_prefix("Bearer "));
    if bearer != Some(service_account_token) {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "invalid service account token",
        ));
    }
    if header(headers, "content-type") != Some("application/json")
        || header(headers, "opc-request-id").is_none_or(str::is_empty)
    {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "content-type application/json and opc-request-id are required",
        ));
    }
    let request: Value = serde_json::from_slice(body)
        .map_err(|_| refuse(StatusCode::BAD_REQUEST, "body is not JSON"))?;
    let pem = request
        .get("podKey")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !pem.starts_with("-----BEGIN PUBLIC KEY-----") {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "podKey is not a PEM public key",
        ));
    }
    let public_key = rsa_public_key(&pem_der(pem))
        .ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "podKey is not an RSA public key"))?;
    let (token, session) = issue(
        "ocid1.tenancy.oc1..workload",
        public_key,
        lifetime_seconds,
        serial,
    );
    let answer = serde_json::to_string(
        &STANDARD.encode(json!({"token": format!("ST${token}")}).to_string()),
    )
    .unwrap_or_default();
    Ok((answer, token, session))
}

/// The PKCS#1 `RSAPublicKey` inside an rsaEncryption SubjectPublicKeyInfo DER.
fn rsa_public_key(spki: &[u8]) -> Option<Vec<u8>> {
    /// AlgorithmIdentifier rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters.
    const RSA_ALGORITHM: [u8; 15] = [
        0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    let (tag, inner, rest) = der_element(spki)?;
    if tag != 0x30 || !rest.is_empty() {
        return None;
    }
    let inner = inner.strip_prefix(&RSA_ALGORITHM[..])?;
    let (tag, bits, rest) = der_element(inner)?;
    if tag != 0x03 || !rest.is_empty() {
        return None;
    }
    bits.strip_prefix(&[0u8][..]).map(<[u8]>::to_vec)
}

/// One DER element: its tag, contents and what follows it.
fn der_element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, rest) = rest.split_at(count);
        let length = bytes
            .iter()
            .fold(0usize, |length, byte| (length << 8) | usize::from(*byte));
        (length, rest)
    };
    if rest.len() < length {
        return None;
    }
    let (contents, rest) = rest.split_at(length);
    Some((tag, contents, rest))
}

/// Seconds since the epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}
