//! The `ACRAccessToken` generator: Azure Container Registry access tokens.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use crate::v1::secret_store::azure_key_vault::AzureEnvironmentType;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ACRAccessTokenSpec defines how to generate the access token
/// e.g. how to authenticate and which registry to use.
/// see: https://github.com/Azure/acr/blob/main/docs/AAD-OAuth.md#overview
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "ACRAccessToken",
    root = "AcrAccessToken",
    plural = "acraccesstokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "ACRAccessToken returns an Azure Container Registry token\nthat can be used for pushing/pulling images.\nNote: by default it will return an ACR Refresh Token with full access\n(depending on the identity).\nThis can be scoped down to the repository level using .spec.scope.\nIn case scope is defined it will return an ACR Access Token.\n\nSee docs: https://github.com/Azure/acr/blob/main/docs/AAD-OAuth.md"
)]
#[serde(rename_all = "camelCase")]
pub struct AcrAccessTokenSpec {
    /// ACRAuth defines the authentication methods for Azure Container Registry.
    pub auth: AcrAuth,
    /// TenantID configures the Azure Tenant to send requests to. Required for ServicePrincipal auth type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// the domain name of the ACR registry
    /// e.g. foobarexample.azurecr.io
    pub registry: String,
    /// Define the scope for the access token, e.g. pull/push access for a repository.
    /// if not provided it will return a refresh token that has full scope.
    /// Note: you need to pin it down to the repository level, there is no wildcard available.
    ///
    /// examples:
    /// repository:my-repository:pull,push
    /// repository:my-repository:pull
    ///
    /// see docs for details: https://docs.docker.com/registry/spec/auth/scope/
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// EnvironmentType specifies the Azure cloud environment endpoints to use for
    /// connecting and authenticating with Azure. By default, it points to the public cloud AAD endpoint.
    /// The following endpoints are available, also see here: https://github.com/Azure/go-autorest/blob/main/autorest/azure/environments.go#L152
    /// PublicCloud, USGovernmentCloud, ChinaCloud, GermanCloud
    #[serde(default)]
    pub environment_type: AzureEnvironmentType,
}

/// ACRAuth defines the authentication methods for Azure Container Registry.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AcrAuth {
    /// ServicePrincipal uses Azure Service Principal credentials to authenticate with Azure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_principal: Option<AzureAcrServicePrincipalAuth>,
    /// ManagedIdentity uses Azure Managed Identity to authenticate with Azure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_identity: Option<AzureAcrManagedIdentityAuth>,
    /// WorkloadIdentity uses Azure Workload Identity to authenticate with Azure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity: Option<AzureAcrWorkloadIdentityAuth>,
}

/// AzureACRManagedIdentityAuth defines the configuration for using Azure Managed Identity authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureAcrManagedIdentityAuth {
    /// If multiple Managed Identity is assigned to the pod, you can select the one to be used
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity_id: Option<String>,
}

/// AzureACRServicePrincipalAuth defines the configuration for using Azure Service Principal authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureAcrServicePrincipalAuth {
    /// AzureACRServicePrincipalAuthSecretRef defines the secret references for Azure Service Principal authentication.
    /// It uses static credentials stored in a Kind=Secret.
    pub secret_ref: AzureAcrServicePrincipalAuthSecretRef,
}

/// AzureACRServicePrincipalAuthSecretRef defines the secret references for Azure Service Principal authentication.
/// It uses static credentials stored in a Kind=Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureAcrServicePrincipalAuthSecretRef {
    /// The Azure clientId of the service principle used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<SecretKeySelector>,
    /// The Azure ClientSecret of the service principle used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<SecretKeySelector>,
}

/// AzureACRWorkloadIdentityAuth defines the configuration for using Azure Workload Identity authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureAcrWorkloadIdentityAuth {
    /// ServiceAccountRef specified the service account
    /// that should be used when authenticating with WorkloadIdentity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
}
