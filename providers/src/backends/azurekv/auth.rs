//! Entra ID credentials of an `azurekv` store, resolved as upstream does for each `authType`,
//! and the access tokens they buy, cached and refreshed five minutes before they expire (as the
//! Azure SDKs do).
//!
//! - `ServicePrincipal`: `tenantId` and `authSecretRef.clientId` plus exactly one of
//!   `clientSecret` or `clientCertificate` (PEM with an RSA key, sent as a signed client
//!   assertion), against `<authority>/<tenant>/oauth2/v2.0/token`.
//! - `ManagedIdentity`: the instance metadata service, with `identityId` as `client_id`.
//! - `WorkloadIdentity`: a federated token exchanged at the same token endpoint — from a
//!   TokenRequest for `serviceAccountRef` (audience `api://AzureADTokenExchange` plus the
//!   selector's), client and tenant ids from the ServiceAccount's annotations, `authSecretRef` or
//!   `tenantId`; or, without `serviceAccountRef`, from the file and ids the Azure workload
//!   identity webhook puts in the environment.

use std::path::PathBuf;
use std::time::Duration;

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{AzureAuthType, AzureKvProvider};
use serde::Deserialize;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::assertion::CertificateSigner;
use super::error::{oauth_error, read_body};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::transport::transport_error;
use crate::value::SecretValue;

/// The audience of federated tokens.
pub const TOKEN_EXCHANGE_AUDIENCE: &str = "api://AzureADTokenExchange";
/// The ServiceAccount annotation holding the client id.
pub const ANNOTATION_CLIENT_ID: &str = "azure.workload.identity/client-id";
/// The ServiceAccount annotation holding the tenant id.
pub const ANNOTATION_TENANT_ID: &str = "azure.workload.identity/tenant-id";

/// Tokens are renewed this long before they expire.
const REFRESH_MARGIN: Duration = Duration::from_secs(300);
/// Longest lifetime believed from a token answer (Entra ID issues at most 24 hours).
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// Lifetime asked for federated ServiceAccount tokens.
const FEDERATED_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// What the process environment says for workload identity without `serviceAccountRef`
/// (set by the Azure workload identity webhook).
#[derive(Debug, Clone, Default)]
pub struct WorkloadEnvironment {
    /// `AZURE_CLIENT_ID`.
    pub client_id: Option<String>,
    /// `AZURE_TENANT_ID`.
    pub tenant_id: Option<String>,
    /// `AZURE_FEDERATED_TOKEN_FILE`.
    pub token_file: Option<PathBuf>,
}

impl WorkloadEnvironment {
    /// The values of this process's environment.
    pub fn from_process() -> Self {
        let read = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        Self {
            client_id: read("AZURE_CLIENT_ID"),
            tenant_id: read("AZURE_TENANT_ID"),
            token_file: read("AZURE_FEDERATED_TOKEN_FILE").map(PathBuf::from),
        }
    }
}

/// A federated token's source.
enum Federated {
    File(PathBuf),
    ServiceAccount {
        name: String,
        namespace: Option<String>,
        audiences: Vec<String>,
        credentials: CredentialResolver,
    },
}

/// How a token is obtained.
enum Credential {
    Secret(SecretValue),
    Certificate(Box<CertificateSigner>),
    Federated(Federated),
}

enum Method {
    TokenEndpoint {
        tenant: String,
        client_id: String,
        credential: Credential,
    },
    ManagedIdentity {
        identity_id: Option<String>,
    },
}

/// One store's token source with its cache.
pub struct TokenSource {
    http: reqwest::Client,
    authority: String,
    imds: String,
    method: Method,
    cached: Mutex<Option<(SecretValue, String, Instant)>>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    /// A number from the token endpoint, a string from IMDS.
    expires_in: serde_json::Value,
}

fn missing_tenant() -> ProviderError {
    ProviderError::invalid_config("missing tenantID in store config")
}

async fn selector_value(
    credentials: &CredentialResolver,
    selector: &SecretKeySelector,
) -> Result<String> {
    let name = selector.name.as_deref().unwrap_or_default();
    let key = selector.key.as_deref().unwrap_or_default();
    let value = credentials
        .secret_key(name, key, selector.namespace.as_deref(), Referent::Allowed)
        .await?;
    value.expose_str().map(str::to_owned).ok_or_else(|| {
        ProviderError::invalid_config(format!("the value of key {key:?} is not UTF-8"))
    })
}

impl TokenSource {
    /// Resolves the store's credentials (reads referenced Secrets, ServiceAccounts).
    pub async fn resolve(
        spec: &AzureKvProvider,
        credentials: CredentialResolver,
        http: reqwest::Client,
        authority: String,
        imds: String,
        environment: &WorkloadEnvironment,
    ) -> Result<Self> {
        let method = match spec.auth_type {
            AzureAuthType::ServicePrincipal => service_principal(spec, &credentials).await?,
            AzureAuthType::ManagedIdentity => {
                credentials.use_operator_identity("managed identity")?;
                Method::ManagedIdentity {
                    identity_id: spec.identity_id.clone().filter(|id| !id.is_empty()),
                }
            }
            AzureAuthType::WorkloadIdentity => {
                workload_identity(spec, credentials, environment).await?
            }
        };
        Ok(Self {
            http,
            authority,
            imds: imds.trim_end_matches('/').to_owned(),
            method,
            cached: Mutex::new(None),
        })
    }

    /// A valid access token for `resource` (the vault's audience), from the cache when it has
    /// more than five minutes left.
    pub async fn token(&self, resource: &str) -> Result<SecretValue> {
        let mut cached = self.cached.lock().await;
        if let Some((token, for_resource, expires)) = cached.as_ref()
            && for_resource == resource
            && Instant::now() + REFRESH_MARGIN < *expires
        {
            return Ok(token.clone());
        }
        let answer = self.request(resource).await?;
        let seconds = match &answer.expires_in {
            serde_json::Value::Number(number) => number.as_u64(),
            serde_json::Value::String(text) => text.parse().ok(),
            _ => None,
        }
        .unwrap_or_default();
        let lifetime = Duration::from_secs(seconds).min(MAX_LIFETIME);
        let token = SecretValue::new(answer.access_token.into_bytes());
        *cached = Some((
            token.clone(),
            resource.to_owned(),
            Instant::now() + lifetime,
        ));
        Ok(token)
    }

    async fn request(&self, resource: &str) -> Result<TokenAnswer> {
        let request = match &self.method {
            Method::ManagedIdentity { identity_id } => {
                let mut query = vec![
                    ("api-version".to_owned(), "2018-02-01".to_owned()),
                    ("resource".to_owned(), resource.to_owned()),
                ];
                if let Some(id) = identity_id {
                    // An ARM resource id names the identity by resource, anything else by
                    // client id (as upstream's ACR generator and the Azure SDKs decide).
                    let field = if id.contains('/') {
                        "msi_res_id"
                    } else {
                        "client_id"
                    };
                    query.push((field.to_owned(), id.clone()));
                }
                let url = format!(
                    "{}/metadata/identity/oauth2/token?{}",
                    self.imds,
                    encode_form(&query)
                );
                self.http.get(url).header("Metadata", "true")
            }
            Method::TokenEndpoint {
                tenant,
                client_id,
                credential,
            } => {
                let endpoint = format!("{}/{tenant}/oauth2/v2.0/token", self.authority);
                let scope = format!("{}/.default", resource.trim_end_matches('/'));
                let mut form = vec![
                    ("grant_type".to_owned(), "client_credentials".to_owned()),
                    ("client_id".to_owned(), client_id.clone()),
                    ("scope".to_owned(), scope),
                ];
                let assertion = match credential {
                    Credential::Secret(secret) => {
                        let secret = secret.expose_str().unwrap_or_default().to_owned();
                        form.push(("client_secret".to_owned(), secret));
                        None
                    }
                    Credential::Certificate(signer) => {
                        Some(signer.assertion(client_id, &endpoint)?)
                    }
                    Credential::Federated(source) => Some(federated_token(source).await?),
                };
                if let Some(assertion) = assertion {
                    form.push(("client_assertion_type".to_owned(), JWT_BEARER.to_owned()));
                    form.push(("client_assertion".to_owned(), assertion));
                }
                self.http.post(endpoint).body(encode_form(&form)).header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
            }
        };
        let response = request
            .send()
            .await
            .map_err(|error| transport_error("failed to get an Azure access token", error))?;
        let status = response.status();
        let body = read_body(response).await?;
        if !status.is_success() {
            return Err(oauth_error(status, &body));
        }
        serde_json::from_slice(&body).map_err(|_| {
            ProviderError::unavailable("failed to get an Azure access token: unreadable answer")
        })
    }
}

const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// An `application/x-www-form-urlencoded` body (or query) of `pairs`.
pub(super) fn encode_form(pairs: &[(String, String)]) -> String {
    let mut out = String::new();
    for (index, (key, value)) in pairs.iter().enumerate() {
        if index > 0 {
            out.push('&');
        }
        out.push_str(&percent(key));
        out.push('=');
        out.push_str(&percent(value));
    }
    out
}

/// `application/x-www-form-urlencoded` escaping of one component.
fn percent(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

async fn federated_token(source: &Federated) -> Result<String> {
    match source {
        // A projected token of a few KiB on a local volume: read directly.
        Federated::File(path) => std::fs::read_to_string(path)
            .map(|token| token.trim().to_owned())
            .map_err(|error| {
                ProviderError::invalid_config(format!(
                    "unable to read token file {}: {error}",
                    path.display()
                ))
                .with_temporary(true)
            }),
        Federated::ServiceAccount {
            name,
            namespace,
            audiences,
            credentials,
        } => {
            let token = credentials
                .service_account_token(
                    name,
                    namespace.as_deref(),
                    audiences,
                    FEDERATED_TOKEN_LIFETIME,
                    Referent::Allowed,
                )
                .await?;
            Ok(token.token.expose_str().unwrap_or_default().to_owned())
        }
    }
}

async fn service_principal(
    spec: &AzureKvProvider,
    credentials: &CredentialResolver,
) -> Result<Method> {
    let tenant = spec.tenant_id.clone().ok_or_else(missing_tenant)?;
    let auth = spec
        .auth_secret_ref
        .as_ref()
        .ok_or_else(|| ProviderError::invalid_config("missing secretRef in provider config"))?;
    let missing =
        || ProviderError::invalid_config("missing accessKeyID/secretAccessKey in store config");
    let client_id = auth.client_id.as_ref().ok_or_else(missing)?;
    let credential = match (&auth.client_secret, &auth.client_certificate) {
        (Some(_), Some(_)) => {
            return Err(ProviderError::invalid_config(
                "both clientSecret and clientCredentials set",
            ));
        }
        (None, None) => return Err(missing()),
        (Some(secret), None) => {
            Credential::Secret(SecretValue::new(selector_value(credentials, secret).await?))
        }
        (None, Some(certificate)) => {
            let pem = selector_value(credentials, certificate).await?;
            Credential::Certificate(Box::new(CertificateSigner::from_pem(pem.as_bytes())?))
        }
    };
    Ok(Method::TokenEndpoint {
        tenant,
        client_id: selector_value(credentials, client_id).await?,
        credential,
    })
}

async fn workload_identity(
    spec: &AzureKvProvider,
    credentials: CredentialResolver,
    environment: &WorkloadEnvironment,
) -> Result<Method> {
    let Some(account) = &spec.service_account_ref else {
        credentials.use_operator_identity("workload identity")?;
        let (Some(client_id), Some(tenant), Some(file)) = (
            environment.client_id.clone(),
            environment.tenant_id.clone(),
            environment.token_file.clone(),
        ) else {
            return Err(ProviderError::invalid_config(
                "missing environment variables. AZURE_CLIENT_ID, AZURE_TENANT_ID and \
                 AZURE_FEDERATED_TOKEN_FILE must be set",
            ));
        };
        return Ok(Method::TokenEndpoint {
            tenant,
            client_id,
            credential: Credential::Federated(Federated::File(file)),
        });
    };
    let annotations = credentials
        .service_account_annotations(
            &account.name,
            account.namespace.as_deref(),
            Referent::Allowed,
        )
        .await?;
    let auth = spec.auth_secret_ref.as_ref();
    let mut client_id = None;
    if let Some(auth) = auth {
        let selector = auth.client_id.as_ref().ok_or_else(|| {
            ProviderError::invalid_config("missing accessKeyID/secretAccessKey in store config")
        })?;
        client_id = Some(selector_value(&credentials, selector).await?);
    }
    if let Some(annotated) = annotations.get(ANNOTATION_CLIENT_ID) {
        if client_id.is_some() {
            return Err(ProviderError::invalid_config(
                "multiple clientID found. Check secretRef and serviceAccountRef",
            ));
        }
        client_id = Some(annotated.clone());
    }
    let client_id = client_id.filter(|id| !id.is_empty()).ok_or_else(|| {
        ProviderError::invalid_config(format!(
            "missing clientID: either serviceAccountRef or service account annotation \
             '{ANNOTATION_CLIENT_ID}' is missing"
        ))
    })?;
    let mut tenant = None;
    if let Some(selector) = auth.and_then(|auth| auth.tenant_id.as_ref()) {
        tenant = Some(selector_value(&credentials, selector).await?);
    }
    tenant = tenant
        .filter(|t| !t.is_empty())
        .or_else(|| spec.tenant_id.clone());
    if let Some(annotated) = annotations.get(ANNOTATION_TENANT_ID) {
        if tenant.is_some() {
            return Err(ProviderError::invalid_config(
                "multiple tenantID found. Check secretRef, 'spec.provider.azurekv.tenantId', \
                 and serviceAccountRef",
            ));
        }
        tenant = Some(annotated.clone());
    }
    let tenant = tenant
        .or_else(|| environment.tenant_id.clone())
        .filter(|t| !t.is_empty())
        .ok_or_else(missing_tenant)?;
    let mut audiences = vec![TOKEN_EXCHANGE_AUDIENCE.to_owned()];
    audiences.extend(account.audiences.iter().cloned());
    Ok(Method::TokenEndpoint {
        tenant,
        client_id,
        credential: Credential::Federated(Federated::ServiceAccount {
            name: account.name.clone(),
            namespace: account.namespace.clone(),
            audiences,
            credentials,
        }),
    })
}
