//! The v1beta1 Azure Key Vault provider (`spec.provider.azurekv`), where it differs from v1.

use crate::meta::ServiceAccountSelector;
use crate::v1::secret_store::azure_key_vault::{AzureAuthType, AzureKvAuth};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// AzureKVProvider configures a store to sync secrets using Azure Key Vault.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureKvProvider {
    /// Auth type defines how to authenticate to the keyvault service.
    /// Valid values are:
    /// - "ServicePrincipal" (default): Using a service principal (tenantId, clientId, clientSecret)
    /// - "ManagedIdentity": Using Managed Identity assigned to the pod (see aad-pod-identity)
    #[serde(default)]
    pub auth_type: AzureAuthType,
    /// Vault Url from which the secrets to be fetched from.
    pub vault_url: String,
    /// TenantID configures the Azure Tenant to send requests to. Required for ServicePrincipal auth type. Optional for WorkloadIdentity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// EnvironmentType specifies the Azure cloud environment endpoints to use for
    /// connecting and authenticating with Azure. By default it points to the public cloud AAD endpoint.
    /// The following endpoints are available, also see here: https://github.com/Azure/go-autorest/blob/main/autorest/azure/environments.go#L152
    /// PublicCloud, USGovernmentCloud, ChinaCloud, GermanCloud
    #[serde(default)]
    pub environment_type: AzureEnvironmentType,
    /// Auth configures how the operator authenticates with Azure. Required for ServicePrincipal auth type. Optional for WorkloadIdentity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_secret_ref: Option<AzureKvAuth>,
    /// ServiceAccountRef specified the service account
    /// that should be used when authenticating with WorkloadIdentity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
    /// If multiple Managed Identity is assigned to the pod, you can select the one to be used
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity_id: Option<String>,
}

/// AzureEnvironmentType specifies the Azure cloud environment endpoints to use for
/// connecting and authenticating with Azure. By default it points to the public cloud AAD endpoint.
/// The following endpoints are available, also see here: https://github.com/Azure/go-autorest/blob/main/autorest/azure/environments.go#L152
/// PublicCloud, USGovernmentCloud, ChinaCloud, GermanCloud
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum AzureEnvironmentType {
    #[default]
    PublicCloud,
    #[serde(rename = "USGovernmentCloud")]
    UsGovernmentCloud,
    ChinaCloud,
    GermanCloud,
}
