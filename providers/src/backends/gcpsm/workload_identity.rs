//! GKE workload identity, as upstream's `workloadIdentity` token source does it:
//!
//! 1. a token of the referenced Kubernetes ServiceAccount (TokenRequest, 15 minutes) for the
//!    audiences `<project>.svc.id.goog` plus the reference's `audiences`;
//! 2. exchanged at `securetoken.googleapis.com/v1/identitybindingtoken` (an OAuth 2.0 token
//!    exchange, RFC 8693: grant `token-exchange`, subject token type `jwt`, requested type
//!    `access_token`, audience `identitynamespace:<pool>:<provider>` where the provider is
//!    `https://container.googleapis.com/v1/projects/P/locations/L/clusters/C`, scope
//!    cloud-platform) for a federated token;
//! 3. if the ServiceAccount is annotated `iam.gke.io/gcp-service-account`, that Google service
//!    account's token from IAM Credentials `generateAccessToken` (bearer: the federated token);
//!    otherwise the federated token itself.
//!
//! The project is `clusterProjectID`, else the store's project; `clusterLocation` and
//! `clusterName` are required here (upstream asks the metadata server when they are unset).

use std::time::Duration;

use external_secrets_crds::v1::GcpWorkloadIdentity;
use serde::Deserialize;
use serde_json::json;

use super::auth::{Fetched, SCOPE, expires_in, now_seconds, read_answer};
use super::config::Endpoints;
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::value::SecretValue;

/// The annotation naming the Google service account to impersonate.
pub const GCP_SA_ANNOTATION: &str = "iam.gke.io/gcp-service-account";
/// RFC 8693's grant type.
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The subject token type of a Kubernetes ServiceAccount token.
pub const JWT_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:jwt";
/// The requested token type.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// Upstream's prefix for a ServiceAccount token that cannot be had.
pub(super) const POD_TOKEN: &str = "unable to fetch pod token";
/// Lifetime of the ServiceAccount tokens asked for (upstream's).
pub(super) const SA_TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// What a workload identity token source needs.
pub(super) struct WorkloadIdentity {
    account: String,
    namespace: Option<String>,
    audiences: Vec<String>,
    pool: String,
    provider: String,
    credentials: CredentialResolver,
    endpoints: Endpoints,
}

#[derive(Deserialize)]
struct Federated {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Generated {
    access_token: String,
    #[serde(default)]
    expire_time: String,
}

impl WorkloadIdentity {
    /// The source for `identity` in `project`.
    pub(super) fn new(
        identity: &GcpWorkloadIdentity,
        project: &str,
        credentials: &CredentialResolver,
        endpoints: &Endpoints,
    ) -> Result<Self> {
        let project = identity
            .cluster_project_id
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or(project);
        let required = |value: &Option<String>, field: &str| {
            value.clone().filter(|v| !v.is_empty()).ok_or_else(|| {
                ProviderError::invalid_config(format!(
                    "unable to lookup workload identity: {field} must be set (this build does \
                     not ask the metadata server)"
                ))
            })
        };
        let location = required(&identity.cluster_location, "clusterLocation")?;
        let cluster = required(&identity.cluster_name, "clusterName")?;
        let pool = format!("{project}.svc.id.goog");
        let mut audiences = vec![pool.clone()];
        audiences.extend(identity.service_account_ref.audiences.iter().cloned());
        Ok(Self {
            account: identity.service_account_ref.name.clone(),
            namespace: identity.service_account_ref.namespace.clone(),
            audiences,
            provider: format!(
                "https://container.googleapis.com/v1/projects/{project}/locations/{location}/clusters/{cluster}"
            ),
            pool,
            credentials: credentials.clone(),
            endpoints: endpoints.clone(),
        })
    }

    /// A fresh access token and its lifetime.
    pub(super) async fn fetch(&self, http: &reqwest::Client) -> Result<Fetched> {
        let namespace = self.namespace.as_deref();
        let annotations = self
            .credentials
            .service_account_annotations(&self.account, namespace, Referent::Allowed)
            .await?;
        let subject = self
            .credentials
            .service_account_token(
                &self.account,
                namespace,
                &self.audiences,
                SA_TOKEN_LIFETIME,
                Referent::Allowed,
            )
            .await
            .map_err(|error| error.context(POD_TOKEN))?;
        let body = json!({
            "grant_type": TOKEN_EXCHANGE,
            "subject_token_type": JWT_TOKEN_TYPE,
            "requested_token_type": ACCESS_TOKEN_TYPE,
            "subject_token": subject.token.expose_str().unwrap_or_default(),
            "audience": format!("identitynamespace:{}:{}", self.pool, self.provider),
            "scope": SCOPE,
        });
        let mut url = self.endpoints.secure_token.clone();
        url.set_path("v1/identitybindingtoken");
        let request = http
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string());
        let action = "unable to fetch identitybindingtoken";
        let federated: Federated = read_answer(request, action).await?;
        let Some(google_account) = annotations.get(GCP_SA_ANNOTATION) else {
            return Ok((
                SecretValue::new(federated.access_token),
                expires_in(federated.expires_in),
            ));
        };
        impersonate(
            http,
            &self.endpoints,
            google_account,
            &federated.access_token,
            None,
        )
        .await
    }
}

/// The token of Google service account `account` from IAM Credentials `generateAccessToken`,
/// authenticated with the federated token `bearer`, asking for `lifetime` seconds if given
/// (Google's default is one hour); with its expiry.
pub(super) async fn impersonate(
    http: &reqwest::Client,
    endpoints: &Endpoints,
    account: &str,
    bearer: &str,
    lifetime: Option<u64>,
) -> Result<Fetched> {
    let mut url = endpoints.iam_credentials.clone();
    url.set_path(&format!(
        "v1/projects/-/serviceAccounts/{account}:generateAccessToken"
    ));
    let mut body = json!({"scope": [SCOPE]});
    if let Some(seconds) = lifetime {
        body["lifetime"] = json!(format!("{seconds}s"));
    }
    let request = http
        .post(url)
        .bearer_auth(bearer)
        .header("content-type", "application/json")
        .body(body.to_string());
    let generated: Generated = read_answer(request, "unable to generate gcp access token").await?;
    // An unreadable or past expiry counts as expired now: the next call asks again.
    let expiry = chrono::DateTime::parse_from_rfc3339(&generated.expire_time)
        .ok()
        .and_then(|expiry| u64::try_from(expiry.timestamp()).ok())
        .unwrap_or_else(now_seconds);
    Ok((SecretValue::new(generated.access_token), expiry))
}
