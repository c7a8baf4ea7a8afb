//! OKE workload identity: a Kubernetes service-account token exchanged at the OKE proxymux for
//! a resource-principal session token, as the OCI SDKs' `OkeWorkloadIdentityConfigurationProvider`
//! does (upstream's `principalType: Workload`).
//!
//! * The proxymux is `https://$KUBERNETES_SERVICE_HOST:12250/resourcePrincipalSessionTokens`,
//!   trusted through the cluster CA at `OCI_KUBERNETES_SERVICE_ACCOUNT_CERT_PATH` (default the
//!   pod's `/var/run/secrets/kubernetes.io/serviceaccount/ca.crt`), as the SDKs read them.
//!   `OCI_PROXYMUX_ENDPOINT` replaces the whole URL (this build's addition, for tests: the SDKs
//!   fix the port).
//! * The request is a POST with `Authorization: Bearer <service-account token>`,
//!   `Content-Type: application/json`, an `opc-request-id` and `{"podKey": "<PEM public key of
//!   a fresh session key>"}`; the answer is a JSON string holding base64 of `{"token":
//!   "ST$<token>"}`. 403 means the cluster is not an enhanced one.
//! * The token is the pod's own (the file at `OCI_KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH`,
//!   default `/var/run/secrets/kubernetes.io/serviceaccount/token`, read at every renewal),
//!   or with `serviceAccountRef` one requested for that ServiceAccount with audiences `api`
//!   and the selector's, as upstream.
//!
//! Sessions are renewed as `session` describes. Tokens and keys never appear in errors.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use external_secrets_crds::meta::ServiceAccountSelector;

use super::session::{Session, SessionCache, session_key};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::token_file::read_token_file;
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};

/// The pod's service-account token, as the SDKs read it.
const TOKEN_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// The pod's cluster CA, as the SDKs read it.
const CA_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

/// Longest proxymux answer read (a token, base64 in a JSON string).
const MAX_BODY_BYTES: usize = 64 * 1024;

/// Longest cluster CA bundle read.
const MAX_CA_BYTES: u64 = 1024 * 1024;

/// Proxymux request timeout, as the SDKs'.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Lifetime asked for a referenced ServiceAccount's token.
const TOKEN_LIFETIME: Duration = Duration::from_secs(600);

/// Where the service-account token comes from.
enum TokenSource {
    /// The pod's own token file.
    File(PathBuf),
    /// A token requested for a referenced ServiceAccount.
    ServiceAccount {
        credentials: CredentialResolver,
        selector: ServiceAccountSelector,
    },
}

/// The workload's identity, federated on first use and renewed before expiry.
pub struct WorkloadIdentity {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    tokens: TokenSource,
    /// The current session, renewed by [`Self::federate`].
    pub sessions: SessionCache,
}

impl WorkloadIdentity {
    /// The proxymux client; with no `service_account` the pod's own identity, which
    /// `--deny-operator-identity` refuses to SecretStores.
    pub fn new(
        credentials: &CredentialResolver,
        service_account: Option<&ServiceAccountSelector>,
    ) -> Result<Self> {
        let tokens = match service_account {
            Some(selector) => TokenSource::ServiceAccount {
                credentials: credentials.clone(),
                selector: selector.clone(),
            },
            None => {
                credentials.use_operator_identity("oracle workload identity")?;
                TokenSource::File(env_or(
                    "OCI_KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH",
                    TOKEN_PATH,
                ))
            }
        };
        let endpoint = match std::env::var("OCI_PROXYMUX_ENDPOINT")
            .ok()
            .filter(|value| !value.is_empty())
        {
            Some(endpoint) => endpoint,
            None => {
                let host = std::env::var("KUBERNETES_SERVICE_HOST")
                    .ok()
                    .filter(|value| !value.is_empty())
                    .ok_or_else(|| {
                        ProviderError::invalid_config(
                            "can not create resource principal, environment variable: \
                             KUBERNETES_SERVICE_HOST, not present",
                        )
                    })?;
                format!("https://{host}:12250/resourcePrincipalSessionTokens")
            }
        };
        let endpoint = reqwest::Url::parse(&endpoint).map_err(|failure| {
            ProviderError::invalid_config(format!("invalid proxymux endpoint: {failure}"))
        })?;
        let ca_path = env_or("OCI_KUBERNETES_SERVICE_ACCOUNT_CERT_PATH", CA_PATH);
        let ca = read_ca(&ca_path)?;
        let tls = tls_config(Roots::Bundle {
            pem: &ca,
            invalid: "can not create resource principal, the Kubernetes service account CA \
                      holds no certificate",
        })?;
        let http = https_client(tls, TIMEOUT, Some("external-secrets"), "proxymux client")?;
        Ok(Self {
            http,
            endpoint,
            tokens,
            sessions: SessionCache::default(),
        })
    }

    /// The current service-account token.
    async fn token(&self) -> Result<String> {
        match &self.tokens {
            TokenSource::File(path) => read_token_file(path, "service account token"),
            TokenSource::ServiceAccount {
                credentials,
                selector,
            } => {
                let mut audiences = vec!["api".to_owned()];
                audiences.extend(selector.audiences.iter().cloned());
                let token = credentials
                    .service_account_token(
                        &selector.name,
                        selector.namespace.as_deref(),
                        &audiences,
                        TOKEN_LIFETIME,
                        Referent::Allowed,
                    )
                    .await?;
                token.token.expose_str().map(str::to_owned).ok_or_else(|| {
                    ProviderError::invalid_data("the service account token is not text")
                })
            }
        }
    }

    /// A new session: a fresh session key exchanged at the proxymux.
    pub async fn federate(&self) -> Result<Session> {
        let action = "failed to get a Workload Identity token";
        let token = self.token().await?;
        let (session_key, public_key) = session_key()?;
        let pem = format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
            STANDARD.encode(public_key)
        );
        let request_id = format!("{:032X}", fastrand::u128(..));
        let response = self
            .http
            .post(self.endpoint.clone())
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("opc-request-id", request_id)
            .body(serde_json::json!({ "podKey": pem }).to_string())
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let answer = read_body(response, MAX_BODY_BYTES, action).await?;
        if status == reqwest::StatusCode::FORBIDDEN {
            return Err(ProviderError::permission_denied(format!(
                "please ensure the cluster type is enhanced: Status: {status}"
            )));
        }
        if !status.is_success() {
            let error = format!("{action}. Status: {status}");
            return Err(if status.is_client_error() {
                ProviderError::permission_denied(error)
            } else {
                ProviderError::unavailable(error)
            });
        }
        let malformed = || ProviderError::invalid_data(format!("{action}: malformed answer"));
        let encoded: String = serde_json::from_slice(&answer).map_err(|_| malformed())?;
        let decoded = STANDARD.decode(encoded).map_err(|_| malformed())?;
        #[derive(serde::Deserialize)]
        struct Answer {
            token: String,
        }
        let answer: Answer = serde_json::from_slice(&decoded).map_err(|_| malformed())?;
        let token = answer.token.strip_prefix("ST$").ok_or_else(malformed)?;
        Session::new(token, session_key, action)
    }
}

/// The path in `variable`, or `default`.
fn env_or(variable: &str, default: &str) -> PathBuf {
    std::env::var_os(variable)
        .filter(|value| !value.is_empty())
        .map_or_else(|| PathBuf::from(default), PathBuf::from)
}

/// The cluster CA bundle at `path`, bounded.
fn read_ca(path: &std::path::Path) -> Result<Vec<u8>> {
    use std::io::Read as _;
    let failure = |_| {
        ProviderError::invalid_config(format!(
            "can not create resource principal, error getting Kubernetes Service Account CA at {}",
            path.display()
        ))
    };
    let mut ca = Vec::new();
    std::fs::File::open(path)
        .map_err(failure)?
        .take(MAX_CA_BYTES)
        .read_to_end(&mut ca)
        .map_err(failure)?;
    Ok(ca)
}
