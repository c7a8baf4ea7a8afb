//! Store configuration of the `gcpsm` backend: upstream's `ValidateStore` checks, the project
//! and location a store addresses, resource names, and where the APIs are reached.
//!
//! Endpoints: Google's public ones (`secretmanager.googleapis.com`, or
//! `secretmanager.<location>.rep.googleapis.com` for a regional store, as upstream;
//! `securetoken.googleapis.com` and `iamcredentials.googleapis.com` for workload identity,
//! `sts.googleapis.com` for federation), unless the operator's environment sets
//! `GCP_SECRETMANAGER_ENDPOINT`, `GCP_SECURETOKEN_ENDPOINT`, `GCP_IAMCREDENTIALS_ENDPOINT` or
//! `GCP_STS_ENDPOINT` (this build's addition, for an
//! emulator or a private endpoint; upstream has no such variables).

use external_secrets_crds::v1::GcpsmProvider;

use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

/// The variable overriding the Secret Manager endpoint (an HTTP(S) URL).
pub const ENDPOINT_VARIABLE: &str = "GCP_SECRETMANAGER_ENDPOINT";
/// The variable overriding the identity binding token endpoint's base URL.
pub const SECURE_TOKEN_VARIABLE: &str = "GCP_SECURETOKEN_ENDPOINT";
/// The variable overriding the Security Token Service's base URL (workload identity federation).
pub const STS_VARIABLE: &str = "GCP_STS_ENDPOINT";
/// The variable overriding the IAM Credentials endpoint's base URL.
pub const IAM_CREDENTIALS_VARIABLE: &str = "GCP_IAMCREDENTIALS_ENDPOINT";

/// Where each Google API a store uses is reached.
#[derive(Debug, Clone)]
pub struct Endpoints {
    /// Secret Manager (`/v1/...` is appended).
    pub secret_manager: reqwest::Url,
    /// The identity binding token exchange (`/v1/identitybindingtoken` is appended).
    pub secure_token: reqwest::Url,
    /// IAM Credentials (`/v1/projects/-/serviceAccounts/...` is appended).
    pub iam_credentials: reqwest::Url,
    /// The Security Token Service (`/v1/token` is appended).
    pub sts: reqwest::Url,
}

impl Endpoints {
    /// Google's endpoints for a store in `location`, as the environment overrides them.
    pub fn from_env(location: Option<&str>) -> Result<Self> {
        let variable = |name: &str, default: String| -> Result<reqwest::Url> {
            let value = std::env::var(name).ok().filter(|value| !value.is_empty());
            parse_url(&value.unwrap_or(default), name)
        };
        let secret_manager = match location {
            Some(location) => format!("https://secretmanager.{location}.rep.googleapis.com"),
            None => "https://secretmanager.googleapis.com".to_owned(),
        };
        Ok(Self {
            secret_manager: variable(ENDPOINT_VARIABLE, secret_manager)?,
            secure_token: variable(
                SECURE_TOKEN_VARIABLE,
                "https://securetoken.googleapis.com".into(),
            )?,
            iam_credentials: variable(
                IAM_CREDENTIALS_VARIABLE,
                "https://iamcredentials.googleapis.com".into(),
            )?,
            sts: variable(STS_VARIABLE, "https://sts.googleapis.com".into())?,
        })
    }
}

/// Upstream's `unable to find ProjectID in storeSpec`.
const NO_PROJECT: &str = "unable to find ProjectID in storeSpec";

/// Upstream's `ValidateStore`: referenced Secrets and ServiceAccounts must be in the store's
/// own namespace for a SecretStore; and (this build, where upstream fails at client creation)
/// the project must be known without a metadata server when a key is given.
pub fn validate_store(spec: &GcpsmProvider, store: &StoreId) -> Result<()> {
    let auth = spec.auth.as_ref();
    if let Some(secret_ref) = auth.and_then(|auth| auth.secret_ref.as_ref()) {
        let namespace = secret_ref
            .secret_access_key_secret_ref
            .as_ref()
            .and_then(|selector| selector.namespace.as_deref());
        check_namespace("invalid auth secret data", namespace, store)?;
    }
    if let Some(identity) = auth.and_then(|auth| auth.workload_identity.as_ref()) {
        check_namespace(
            "invalid workload identity service account reference",
            identity.service_account_ref.namespace.as_deref(),
            store,
        )?;
    }
    if let Some(location) = spec.location.as_deref() {
        check_segment("location", location)?;
    }
    if let Some(project) = spec.project_id.as_deref() {
        check_segment("projectID", project)?;
    }
    Ok(())
}

/// Upstream's `ValidateReferentSecretSelector` / `...ServiceAccountSelector`, prefixed as
/// upstream wraps them.
fn check_namespace(prefix: &str, namespace: Option<&str>, store: &StoreId) -> Result<()> {
    match (store.kind, namespace) {
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(ProviderError::invalid_config(format!(
                "{prefix}: namespace should either be empty or match the namespace of the \
                 SecretStore for a namespaced SecretStore"
            )))
        }
        _ => Ok(()),
    }
}

/// A project or location is one path segment of every resource name.
fn check_segment(field: &str, value: &str) -> Result<()> {
    if value.is_empty() || value.contains(['/', '?', '#']) || value.len() > 128 {
        return Err(ProviderError::invalid_config(format!(
            "invalid {field} {value:?}: it must be one non-empty resource name segment"
        )));
    }
    Ok(())
}

/// Where a store's secrets live: `projects/P` or `projects/P/locations/L`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    project: String,
    location: Option<String>,
}

impl Parent {
    /// The store's project (`projectID`, else workload identity's `clusterProjectID`, as
    /// upstream) and location.
    pub fn of(spec: &GcpsmProvider) -> Result<Self> {
        let cluster_project = spec
            .auth
            .as_ref()
            .and_then(|auth| auth.workload_identity.as_ref())
            .and_then(|identity| identity.cluster_project_id.clone());
        let project = spec
            .project_id
            .clone()
            .filter(|project| !project.is_empty())
            .or(cluster_project.filter(|project| !project.is_empty()))
            .ok_or_else(|| ProviderError::invalid_config(NO_PROJECT))?;
        Ok(Self {
            project,
            location: spec
                .location
                .clone()
                .filter(|location| !location.is_empty()),
        })
    }

    /// The project id.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The regional location, if any.
    pub fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }

    /// The parent resource name secrets are listed and created under.
    pub fn name(&self) -> String {
        match &self.location {
            Some(location) => format!("projects/{}/locations/{location}", self.project),
            None => format!("projects/{}", self.project),
        }
    }

    /// The resource name of secret `key`.
    pub fn secret(&self, key: &str) -> String {
        format!("{}/secrets/{key}", self.name())
    }

    /// The resource name of version `version` of secret `key`.
    pub fn version(&self, key: &str, version: &str) -> String {
        format!("{}/versions/{version}", self.secret(key))
    }

    /// The short name of a listed secret (`projects/<number or id>/[locations/L/]secrets/KEY`:
    /// the API answers with the project number, so only the part after `secrets/` counts).
    pub fn short_name<'a>(&self, full: &'a str) -> &'a str {
        full.rsplit_once("/secrets/").map_or(full, |(_, key)| key)
    }
}

/// An HTTP(S) URL from configuration, with what set it in the error.
pub fn parse_url(text: &str, origin: &str) -> Result<reqwest::Url> {
    match reqwest::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(url),
        _ => Err(ProviderError::invalid_config(format!(
            "invalid endpoint {text:?} (from {origin}): it must be an http(s) URL"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn spec(json: serde_json::Value) -> GcpsmProvider {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn secret_stores_may_only_name_their_own_namespace() {
        let store = StoreId::secret_store("team", "gcp");
        let foreign = spec(serde_json::json!({"projectID": "p", "auth": {"secretRef": {
            "secretAccessKeySecretRef": {"name": "key", "key": "k", "namespace": "other"}}}}));
        let error = validate_store(&foreign, &store).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
        assert!(
            error
                .message()
                .starts_with("invalid auth secret data: namespace should")
        );
        let identity = spec(
            serde_json::json!({"projectID": "p", "auth": {"workloadIdentity": {
            "serviceAccountRef": {"name": "sa", "namespace": "other"}}}}),
        );
        let error = validate_store(&identity, &store).unwrap_err();
        assert!(
            error
                .message()
                .starts_with("invalid workload identity service account")
        );
        let cluster = StoreId::cluster_secret_store("gcp");
        validate_store(&foreign, &cluster).unwrap();
        validate_store(&identity, &cluster).unwrap();
    }

    #[test]
    fn names_are_global_or_regional() {
        let global = Parent::of(&spec(serde_json::json!({"projectID": "p"}))).unwrap();
        assert_eq!(
            global.version("db", "latest"),
            "projects/p/secrets/db/versions/latest"
        );
        let regional = Parent::of(&spec(
            serde_json::json!({"projectID": "p", "location": "europe-west1"}),
        ))
        .unwrap();
        assert_eq!(
            regional.secret("db"),
            "projects/p/locations/europe-west1/secrets/db"
        );
        assert_eq!(
            regional.short_name("projects/123/locations/x/secrets/db"),
            "db"
        );
        let from_cluster = spec(serde_json::json!({"auth": {"workloadIdentity": {
            "serviceAccountRef": {"name": "sa"}, "clusterProjectID": "c"}}}));
        assert_eq!(Parent::of(&from_cluster).unwrap().name(), "projects/c");
        let error = Parent::of(&spec(serde_json::json!({}))).unwrap_err();
        assert_eq!(error.message(), NO_PROJECT);
    }

    #[test]
    fn bad_segments_are_refused() {
        let store = StoreId::secret_store("team", "gcp");
        let bad = spec(serde_json::json!({"projectID": "p/secrets"}));
        assert!(validate_store(&bad, &store).is_err());
    }
}
