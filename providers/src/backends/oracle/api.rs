//! The OCI APIs this backend calls, every request signed by the store's [`Principal`]:
//!
//! * Secret Retrieval (`https://secrets.vaults.<region>.oci.oraclecloud.com`):
//!   `POST /20190301/secretbundles/actions/getByName?secretName=&vaultId=[&stage=]`;
//! * Vault secret management (`https://vaults.<region>.oci.oraclecloud.com`):
//!   `GET /20180608/secrets?compartmentId=&vaultId=[&page=]` (pages by `opc-next-page`),
//!   `POST /20180608/secrets`, `PUT /20180608/secrets/{id}`,
//!   `POST /20180608/secrets/{id}/actions/scheduleDeletion`;
//! * Key Management (`https://kms.<region>.oraclecloud.com`): `GET /20180608/vaults/{id}`.
//!
//! `OCI_SECRETS_ENDPOINT`, `OCI_VAULTS_ENDPOINT` and `OCI_KMS_ENDPOINT` in the operator's
//! environment replace the regional endpoints (this build's addition, for tests and private
//! endpoints). Bodies are bounded.

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error;
use super::instance::InstancePrincipal;
use super::signer::Signer;
use super::workload::WorkloadIdentity;
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};

/// Longest answer read (a secret bundle holds up to 25 KiB; a list page up to 1000 summaries).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Most list pages read.
const MAX_PAGES: usize = 100;

/// Request timeout.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A secret's current (or staged) version as Secret Retrieval answers it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// The secret's OCID.
    pub secret_id: String,
    /// The content (`contentType` `BASE64`).
    pub secret_bundle_content: Option<Value>,
    /// When the secret is scheduled to be deleted, if it is.
    pub time_of_deletion: Option<String>,
}

/// One entry of a vault's secret list.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The secret's name.
    pub secret_name: String,
    /// Its free-form tags.
    #[serde(default)]
    pub freeform_tags: std::collections::BTreeMap<String, String>,
    /// When the secret is scheduled to be deleted, if it is.
    pub time_of_deletion: Option<String>,
}

/// The regional endpoints, as the environment overrides them.
struct Endpoints {
    secrets: reqwest::Url,
    vaults: reqwest::Url,
    kms: reqwest::Url,
}

impl Endpoints {
    fn new(region: &str) -> Result<Self> {
        let endpoint = |variable: &str, default: String| {
            let url = std::env::var(variable)
                .ok()
                .filter(|value| !value.is_empty())
                .unwrap_or(default);
            reqwest::Url::parse(&url).map_err(|failure| {
                ProviderError::invalid_config(format!(
                    "cannot setup new oracle client: invalid endpoint: {failure}"
                ))
            })
        };
        Ok(Self {
            secrets: endpoint(
                "OCI_SECRETS_ENDPOINT",
                format!("https://secrets.vaults.{region}.oci.oraclecloud.com"),
            )?,
            vaults: endpoint(
                "OCI_VAULTS_ENDPOINT",
                format!("https://vaults.{region}.oci.oraclecloud.com"),
            )?,
            kms: endpoint(
                "OCI_KMS_ENDPOINT",
                format!("https://kms.{region}.oraclecloud.com"),
            )?,
        })
    }
}

/// A response: status, body and `opc-next-page`.
struct Answer {
    status: StatusCode,
    body: Vec<u8>,
    next_page: Option<String>,
}

/// Who signs the requests.
pub enum Principal {
    /// A user's API key.
    User(Signer),
    /// The compute instance's federated session.
    Instance(InstancePrincipal),
    /// The OKE workload's resource-principal session.
    Workload(WorkloadIdentity),
}

impl Principal {
    async fn sign(
        &self,
        method: &Method,
        url: &reqwest::Url,
        body: Option<&[u8]>,
        headers: &mut reqwest::header::HeaderMap,
    ) -> Result<()> {
        match self {
            Self::User(signer) => signer.sign(method, url, body, headers),
            Self::Instance(instance) => {
                let renew = || instance.federate();
                instance
                    .sessions
                    .sign(renew, method, url, body, headers)
                    .await
            }
            Self::Workload(workload) => {
                let renew = || workload.federate();
                workload
                    .sessions
                    .sign(renew, method, url, body, headers)
                    .await
            }
        }
    }
}

/// The HTTP client of every OCI call, trusting the system roots (upstream has no CA field for
/// this provider).
pub fn http_client() -> Result<reqwest::Client> {
    https_client(
        tls_config(Roots::System)?,
        TIMEOUT,
        Some("external-secrets"),
        "cannot setup new oracle client",
    )
}

/// The OCI services of one region, signing as one principal.
pub struct Api {
    http: reqwest::Client,
    endpoints: Endpoints,
    principal: Principal,
}

impl Api {
    /// Clients of the services of `region` over `http`.
    pub fn new(region: &str, http: reqwest::Client, principal: Principal) -> Result<Self> {
        Ok(Self {
            http,
            endpoints: Endpoints::new(region)?,
            principal,
        })
    }

    /// The bundle of secret `name` in `vault` (its current version, or `stage`); `None` when
    /// OCI answers 404.
    pub async fn bundle(
        &self,
        vault: &str,
        name: &str,
        stage: Option<&str>,
    ) -> Result<Option<Bundle>> {
        let mut query = vec![("secretName", name), ("vaultId", vault)];
        query.extend(stage.map(|stage| ("stage", stage)));
        let url = url(
            &self.endpoints.secrets,
            &["20190301", "secretbundles", "actions", "getByName"],
            &query,
        )?;
        let operation = "GetSecretBundleByName";
        let answer = self
            .send(Method::POST, url, Some(Vec::new()), operation)
            .await?;
        if answer.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        decode(&answer, "Secrets", operation).map(Some)
    }

    /// Every secret of `vault` in `compartment`, across pages.
    pub async fn list(&self, compartment: &str, vault: &str) -> Result<Vec<Summary>> {
        let operation = "ListSecrets";
        let mut all = Vec::new();
        let mut page: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![("compartmentId", compartment), ("vaultId", vault)];
            query.extend(page.as_deref().map(|page| ("page", page)));
            let url = url(&self.endpoints.vaults, &["20180608", "secrets"], &query)?;
            let answer = self.send(Method::GET, url, None, operation).await?;
            let items: Vec<Summary> = decode(&answer, "Vaults", operation)?;
            all.extend(items);
            match answer.next_page {
                Some(next) => page = Some(next),
                None => return Ok(all),
            }
        }
        Err(ProviderError::invalid_data(format!(
            "{operation}: more than {MAX_PAGES} pages"
        )))
    }

    /// Creates a secret (`details` is OCI's `CreateSecretDetails`).
    pub async fn create(&self, details: &Value) -> Result<()> {
        let url = url(&self.endpoints.vaults, &["20180608", "secrets"], &[])?;
        self.write(Method::POST, url, details, "CreateSecret").await
    }

    /// Replaces the content of secret `id` (`details` is OCI's `UpdateSecretDetails`).
    pub async fn update(&self, id: &str, details: &Value) -> Result<()> {
        let url = url(&self.endpoints.vaults, &["20180608", "secrets", id], &[])?;
        self.write(Method::PUT, url, details, "UpdateSecret").await
    }

    /// Schedules secret `id` for deletion (OCI's default delay).
    pub async fn schedule_deletion(&self, id: &str) -> Result<()> {
        let url = url(
            &self.endpoints.vaults,
            &["20180608", "secrets", id, "actions", "scheduleDeletion"],
            &[],
        )?;
        self.write(
            Method::POST,
            url,
            &serde_json::json!({}),
            "ScheduleSecretDeletion",
        )
        .await
    }

    /// Reads vault `id` (the store's check); the error carries OCI's error code.
    pub async fn vault(&self, id: &str) -> std::result::Result<(), (ProviderError, String)> {
        let operation = "GetVault";
        let url = url(&self.endpoints.kms, &["20180608", "vaults", id], &[])
            .map_err(|error| (error, String::new()))?;
        let answer = self
            .send(Method::GET, url, None, operation)
            .await
            .map_err(|error| (error, String::new()))?;
        if answer.status.is_success() {
            return Ok(());
        }
        Err(error::status(
            "KmsVault",
            operation,
            answer.status,
            &answer.body,
        ))
    }

    async fn write(
        &self,
        method: Method,
        url: reqwest::Url,
        details: &Value,
        operation: &str,
    ) -> Result<()> {
        let answer = self
            .send(
                method,
                url,
                Some(details.to_string().into_bytes()),
                operation,
            )
            .await?;
        if answer.status.is_success() {
            return Ok(());
        }
        Err(error::status("Vaults", operation, answer.status, &answer.body).0)
    }

    /// Signs and sends one request, reading the (bounded) answer whatever its status.
    async fn send(
        &self,
        method: Method,
        url: reqwest::Url,
        body: Option<Vec<u8>>,
        operation: &str,
    ) -> Result<Answer> {
        let mut headers = reqwest::header::HeaderMap::new();
        self.principal
            .sign(&method, &url, body.as_deref(), &mut headers)
            .await?;
        headers.insert(
            "accept",
            reqwest::header::HeaderValue::from_static("application/json"),
        );
        let mut request = self.http.request(method, url).headers(headers);
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request
            .send()
            .await
            .map_err(|failure| transport_error(operation, failure))?;
        let status = response.status();
        let next_page = response
            .headers()
            .get("opc-next-page")
            .and_then(|value| value.to_str().ok())
            .filter(|value| !value.is_empty())
            .map(str::to_owned);
        let body = read_body(response, MAX_BODY_BYTES, operation).await?;
        Ok(Answer {
            status,
            body,
            next_page,
        })
    }
}

/// `base` with `segments` appended and `query` set.
fn url(base: &reqwest::Url, segments: &[&str], query: &[(&str, &str)]) -> Result<reqwest::Url> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|()| ProviderError::invalid_config("an OCI endpoint cannot be a base URL"))?
        .pop_if_empty()
        .extend(segments);
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    Ok(url)
}

/// A successful answer's JSON, or the error OCI answered with.
fn decode<T: DeserializeOwned>(answer: &Answer, service: &str, operation: &str) -> Result<T> {
    if !answer.status.is_success() {
        return Err(error::status(service, operation, answer.status, &answer.body).0);
    }
    serde_json::from_slice(&answer.body).map_err(|failure| error::bad_body(operation, &failure))
}
