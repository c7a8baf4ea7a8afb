//! The v1beta1 Akeyless provider (`spec.provider.akeyless`), where it differs from v1.

use crate::v1::secret_store::CaProvider;
use crate::v1::secret_store::akeyless::{AkeylessAuthSecretRef, AkeylessKubernetesAuth};
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

/// AkeylessAuth defines methods of authentication with Akeyless Vault.
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
}
