//! The Azure Key Vault provider: `spec.provider.azurekv` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// AzureKVProvider configures a store to sync secrets using Azure KV.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureKvProvider {
    /// Auth type defines how to authenticate to the keyvault service.
    /// Valid values are:
    /// - "ServicePrincipal" (default): Using a service principal (tenantId, clientId, clientSecret)
    /// - "ManagedIdentity": Using Managed Identity assigned to the pod (see aad-pod-identity)
    /// - "WorkloadIdentity": Using a Kubernetes ServiceAccount federated with Entra ID
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
    /// PublicCloud, USGovernmentCloud, ChinaCloud, GermanCloud, AzureStackCloud
    /// Use AzureStackCloud when you need to configure custom Azure Stack Hub or Azure Stack Edge endpoints.
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
    /// UseAzureSDK enables the use of the new Azure SDK for Go (azcore-based) instead of the legacy go-autorest SDK.
    /// This is experimental and may have behavioral differences. Defaults to false (legacy SDK).
    #[serde(rename = "useAzureSDK", default)]
    pub use_azure_sdk: bool,
    /// CustomCloudConfig defines custom Azure endpoints for non-standard clouds.
    /// Required when EnvironmentType is AzureStackCloud.
    /// Optional for other environment types - useful for Azure China when using Workload Identity
    /// with AKS, where the OIDC issuer (login.partner.microsoftonline.cn) differs from the
    /// standard China Cloud endpoint (login.chinacloudapi.cn).
    /// IMPORTANT: This feature REQUIRES UseAzureSDK to be set to true. Custom cloud
    /// configuration is not supported with the legacy go-autorest SDK.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_cloud_config: Option<AzureCustomCloudConfig>,
}

/// AzureKVAuth is the configuration used to authenticate with Azure.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureKvAuth {
    /// The Azure clientId of the service principle or managed identity used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<SecretKeySelector>,
    /// The Azure tenantId of the managed identity used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<SecretKeySelector>,
    /// The Azure ClientSecret of the service principle used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<SecretKeySelector>,
    /// The Azure ClientCertificate of the service principle used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_certificate: Option<SecretKeySelector>,
}

/// AzureAuthType describes how to authenticate to the Azure Keyvault
/// Only one of the following auth types may be specified.
/// If none of the following auth type is specified, the default one
/// is ServicePrincipal.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum AzureAuthType {
    #[default]
    ServicePrincipal,
    ManagedIdentity,
    WorkloadIdentity,
}

/// AzureCustomCloudConfig specifies custom cloud configuration for private Azure environments
/// IMPORTANT: Custom cloud configuration is ONLY supported when UseAzureSDK is true.
/// The legacy go-autorest SDK does not support custom cloud endpoints.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureCustomCloudConfig {
    /// ActiveDirectoryEndpoint is the AAD endpoint for authentication
    /// Required when using custom cloud configuration
    pub active_directory_endpoint: String,
    /// KeyVaultEndpoint is the Key Vault service endpoint
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_vault_endpoint: Option<String>,
    /// KeyVaultDNSSuffix is the DNS suffix for Key Vault URLs
    #[serde(rename = "keyVaultDNSSuffix", skip_serializing_if = "Option::is_none")]
    pub key_vault_dns_suffix: Option<String>,
    /// ResourceManagerEndpoint is the Azure Resource Manager endpoint
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_manager_endpoint: Option<String>,
}

/// AzureEnvironmentType specifies the Azure cloud environment endpoints to use for
/// connecting and authenticating with Azure. By default, it points to the public cloud AAD endpoint.
/// The following endpoints are available, also see here: https://github.com/Azure/go-autorest/blob/main/autorest/azure/environments.go#L152
/// PublicCloud, USGovernmentCloud, ChinaCloud, GermanCloud, AzureStackCloud
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum AzureEnvironmentType {
    #[default]
    PublicCloud,
    #[serde(rename = "USGovernmentCloud")]
    UsGovernmentCloud,
    ChinaCloud,
    GermanCloud,
    AzureStackCloud,
}
