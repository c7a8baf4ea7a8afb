//! The store's configuration checked as upstream's `ValidateStore` (no I/O), and the endpoints
//! of each Azure cloud: the Entra ID authority and the Key Vault audience.

use external_secrets_crds::v1::{AzureEnvironmentType, AzureKvProvider};

use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

/// The Entra ID authority and Key Vault audience of one cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cloud {
    /// Where tokens are requested: `<authority>/<tenant>/oauth2/v2.0/token`.
    pub authority: String,
    /// The Key Vault resource tokens are requested for (managed identity) and that vaults name
    /// in their challenge.
    pub audience: String,
}

impl Cloud {
    /// The cloud `spec` selects: `environmentType`, with `customCloudConfig` (upstream: only
    /// with `useAzureSDK`) overriding the authority and, where set, the vault audience.
    pub fn of(spec: &AzureKvProvider) -> Self {
        let (authority, audience) = match spec.environment_type {
            AzureEnvironmentType::PublicCloud | AzureEnvironmentType::AzureStackCloud => (
                "https://login.microsoftonline.com",
                "https://vault.azure.net",
            ),
            AzureEnvironmentType::ChinaCloud => {
                ("https://login.chinacloudapi.cn", "https://vault.azure.cn")
            }
            AzureEnvironmentType::UsGovernmentCloud => (
                "https://login.microsoftonline.us",
                "https://vault.usgovcloudapi.net",
            ),
            AzureEnvironmentType::GermanCloud => (
                "https://login.microsoftonline.de",
                "https://vault.microsoftazure.de",
            ),
        };
        let mut cloud = Cloud {
            authority: authority.to_owned(),
            audience: audience.to_owned(),
        };
        if let Some(custom) = &spec.custom_cloud_config {
            cloud.authority = custom
                .active_directory_endpoint
                .trim_end_matches('/')
                .to_owned();
            if let Some(endpoint) = custom
                .key_vault_endpoint
                .as_deref()
                .filter(|e| !e.is_empty())
            {
                cloud.audience = endpoint.trim_end_matches('/').to_owned();
            }
        }
        cloud
    }

    /// [`Cloud::of`], with `authority_host` (`AZURE_AUTHORITY_HOST`) replacing the public
    /// cloud's default authority as azidentity lets it: never an authority the spec chose
    /// (`customCloudConfig` or another `environmentType`), and only an `https` one.
    pub fn resolve(spec: &AzureKvProvider, authority_host: Option<&str>) -> Result<Self> {
        let mut cloud = Self::of(spec);
        let chosen = spec.custom_cloud_config.is_some()
            || spec.environment_type != AzureEnvironmentType::PublicCloud;
        let Some(host) = authority_host.filter(|_| !chosen) else {
            return Ok(cloud);
        };
        if !host.starts_with("https://") {
            return Err(ProviderError::invalid_config(
                "cannot use an authority host without https",
            ));
        }
        cloud.authority = host.trim_end_matches('/').to_owned();
        Ok(cloud)
    }
}

/// Upstream's `ValidateStore` for `spec.provider.azurekv`.
pub fn validate_store(spec: &AzureKvProvider, store: &StoreId) -> Result<()> {
    if let Some(auth) = &spec.auth_secret_ref {
        if let Some(client_id) = &auth.client_id {
            check_namespace(
                "AuthSecretRef.ClientID",
                client_id.namespace.as_deref(),
                store,
            )?;
        }
        if let Some(client_secret) = &auth.client_secret {
            let namespace = client_secret.namespace.as_deref();
            check_namespace("AuthSecretRef.ClientSecret", namespace, store)?;
        }
    }
    if let Some(account) = &spec.service_account_ref {
        check_namespace("ServiceAccountRef", account.namespace.as_deref(), store)?;
    }
    if let Some(custom) = &spec.custom_cloud_config {
        if !spec.use_azure_sdk {
            return Err(ProviderError::invalid_config(
                "CustomCloudConfig requires UseAzureSDK to be set to true - the legacy SDK does \
                 not support custom clouds",
            ));
        }
        if custom.active_directory_endpoint.is_empty() {
            return Err(ProviderError::invalid_config(
                "activeDirectoryEndpoint is required in CustomCloudConfig",
            ));
        }
    }
    if spec.environment_type == AzureEnvironmentType::AzureStackCloud
        && spec.custom_cloud_config.is_none()
    {
        return Err(ProviderError::invalid_config(
            "CustomCloudConfig is required when EnvironmentType is AzureStackCloud",
        ));
    }
    Ok(())
}

/// Upstream's `ValidateReferentSecretSelector` / `ValidateReferentServiceAccountSelector`: a
/// SecretStore may only name its own namespace.
fn check_namespace(field: &str, namespace: Option<&str>, store: &StoreId) -> Result<()> {
    match (store.kind, namespace) {
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(ProviderError::invalid_config(format!(
                "invalid {field}: namespace should either be empty or match the namespace of the \
                 SecretStore for a namespaced SecretStore"
            )))
        }
        _ => Ok(()),
    }
}

/// Whether a ClusterSecretStore's credentials live in the caller's namespace (a selector
/// without namespace): then a client cannot be built without a caller (upstream's
/// `isReferentSpec`).
pub fn is_referent(spec: &AzureKvProvider) -> bool {
    let secret_referent = spec.auth_secret_ref.as_ref().is_some_and(|auth| {
        [
            &auth.client_id,
            &auth.client_secret,
            &auth.client_certificate,
            &auth.tenant_id,
        ]
        .into_iter()
        .flatten()
        .any(|selector| selector.namespace.is_none())
    });
    let account_referent = spec
        .service_account_ref
        .as_ref()
        .is_some_and(|account| account.namespace.is_none());
    secret_referent || account_referent
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: serde_json::Value) -> AzureKvProvider {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn messages_are_upstreams() {
        let store = StoreId::secret_store("team", "kv");
        let foreign = spec(serde_json::json!({
            "vaultUrl": "https://v.vault.azure.net",
            "authSecretRef": {"clientId": {"name": "s", "key": "id", "namespace": "other"}}
        }));
        let error = validate_store(&foreign, &store).unwrap_err();
        assert!(
            error
                .message()
                .starts_with("invalid AuthSecretRef.ClientID: namespace")
        );
        let stack = spec(serde_json::json!({
            "vaultUrl": "https://v", "environmentType": "AzureStackCloud"
        }));
        assert_eq!(
            validate_store(&stack, &store).unwrap_err().message(),
            "CustomCloudConfig is required when EnvironmentType is AzureStackCloud"
        );
        let legacy = spec(serde_json::json!({
            "vaultUrl": "https://v",
            "customCloudConfig": {"activeDirectoryEndpoint": "https://login.example"}
        }));
        assert!(
            validate_store(&legacy, &store)
                .unwrap_err()
                .message()
                .starts_with("CustomCloudConfig requires UseAzureSDK")
        );
    }

    #[test]
    fn clouds_select_authority_and_audience() {
        let china = Cloud::of(&spec(serde_json::json!({
            "vaultUrl": "https://v", "environmentType": "ChinaCloud"
        })));
        assert_eq!(china.authority, "https://login.chinacloudapi.cn");
        assert_eq!(china.audience, "https://vault.azure.cn");
        let custom = Cloud::of(&spec(serde_json::json!({
            "vaultUrl": "https://v", "useAzureSDK": true,
            "customCloudConfig": {"activeDirectoryEndpoint": "https://login.example/"}
        })));
        assert_eq!(custom.authority, "https://login.example");
        assert_eq!(custom.audience, "https://vault.azure.net");
    }

    #[test]
    fn the_authority_host_replaces_only_the_public_default() {
        let public = spec(serde_json::json!({"vaultUrl": "https://v"}));
        let moved = Cloud::resolve(&public, Some("https://login.example")).unwrap();
        assert_eq!(moved.authority, "https://login.example");
        assert_eq!(moved.audience, "https://vault.azure.net");
        assert_eq!(
            Cloud::resolve(&public, None).unwrap().authority,
            "https://login.microsoftonline.com"
        );
        let plain = Cloud::resolve(&public, Some("http://login.example")).unwrap_err();
        assert_eq!(
            plain.message(),
            "cannot use an authority host without https"
        );
        let china =
            spec(serde_json::json!({"vaultUrl": "https://v", "environmentType": "ChinaCloud"}));
        let chosen = Cloud::resolve(&china, Some("https://login.example")).unwrap();
        assert_eq!(chosen.authority, "https://login.chinacloudapi.cn");
        let custom = spec(serde_json::json!({
            "vaultUrl": "https://v", "useAzureSDK": true,
            "customCloudConfig": {"activeDirectoryEndpoint": "https://login.custom"}
        }));
        let chosen = Cloud::resolve(&custom, Some("https://login.example")).unwrap();
        assert_eq!(chosen.authority, "https://login.custom");
    }
}
