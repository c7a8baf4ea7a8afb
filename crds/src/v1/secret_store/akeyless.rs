//! The Akeyless provider: `spec.provider.akeyless` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use crate::v1::secret_store::CaProvider;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// AkeylessProvider Configures an store to sync secrets using Akeyless KV.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AkeylessProvider {
    /// Akeyless GW API Url from which the secrets to be fetched from.
    #[serde(rename = "akeylessGWApiURL")]
    pub akeyless_gw_api_url: String,
    /// IgnoreCache bypasses the Gateway cache for secret reads when true.
    /// Only relevant when akeylessGWApiURL points to an Akeyless Gateway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignore_cache: Option<bool>,
    /// Auth configures how the operator authenticates with Akeyless.
    pub auth_secret_ref: AkeylessAuth,
    /// PEM/base64 encoded CA bundle used to validate Akeyless Gateway certificate. Only used
    /// if the AkeylessGWApiURL URL is using HTTPS protocol. If not set the system root certificates
    /// are used to validate the TLS connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// The provider for the CA bundle to use to validate Akeyless Gateway certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
}

/// AkeylessAuth configures how the operator authenticates with Akeyless.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AkeylessAuth {
    /// Reference to a Secret that contains the details
    /// to authenticate with Akeyless.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<AkeylessAuthSecretRef>,
    /// Kubernetes authenticates with Akeyless by passing the ServiceAccount
    /// token stored in the named Secret resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes_auth: Option<AkeylessKubernetesAuth>,
    /// ServiceAccountRef specifies a Kubernetes ServiceAccount used for azure_ad
    /// authentication on AKS Workload Identity. The operator obtains a federated
    /// identity token from this ServiceAccount via the TokenRequest API instead
    /// of using the ESO controller pod identity. Ignored for other access types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
}

/// AkeylessKubernetesAuth configures Kubernetes authentication with Akeyless.
/// It authenticates with Kubernetes ServiceAccount token stored.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AkeylessKubernetesAuth {
    /// the Akeyless Kubernetes auth-method access-id
    #[serde(rename = "accessID")]
    pub access_id: String,
    /// Kubernetes-auth configuration name in Akeyless-Gateway
    pub k8s_conf_name: String,
    /// Optional service account field containing the name of a kubernetes ServiceAccount.
    /// If the service account is specified, the service account secret token JWT will be used
    /// for authenticating with Akeyless. If the service account selector is not supplied,
    /// the secretRef will be used instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
    /// Optional secret field containing a Kubernetes ServiceAccount JWT used
    /// for authenticating with Akeyless. If a name is specified without a key,
    /// `token` is the default. If one is not specified, the one bound to
    /// the controller will be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

/// AkeylessAuthSecretRef references a Secret that contains the details
/// to authenticate with Akeyless.
/// AKEYLESS_ACCESS_TYPE_PARAM: AZURE_OBJ_ID OR GCP_AUDIENCE OR ACCESS_KEY OR KUB_CONFIG_NAME.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AkeylessAuthSecretRef {
    /// The SecretAccessID is used for authentication
    #[serde(rename = "accessID", skip_serializing_if = "Option::is_none")]
    pub access_id: Option<SecretKeySelector>,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type: Option<SecretKeySelector>,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type_param: Option<SecretKeySelector>,
}
