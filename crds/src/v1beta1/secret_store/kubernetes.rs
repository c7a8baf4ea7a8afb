//! The v1beta1 Kubernetes (Secrets of another cluster or namespace) provider (`spec.provider.kubernetes`), where it differs from v1.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use crate::v1::secret_store::CaProvider;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// KubernetesProvider configures a store to sync secrets with a Kubernetes instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesProvider {
    /// configures the Kubernetes server Address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<KubernetesServer>,
    /// Auth configures how secret-manager authenticates with a Kubernetes instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<KubernetesAuth>,
    /// A reference to a secret that contains the auth information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_ref: Option<SecretKeySelector>,
    /// Remote namespace to fetch the secrets from
    #[serde(default = "default_remote_namespace")]
    #[schemars(
        regex(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    )]
    pub remote_namespace: String,
}

impl Default for KubernetesProvider {
    fn default() -> Self {
        Self {
            auth: Default::default(),
            auth_ref: Default::default(),
            remote_namespace: default_remote_namespace(),
            server: Default::default(),
        }
    }
}

/// KubernetesAuth defines authentication methods for the Kubernetes provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct KubernetesAuth {
    /// has both clientCert and clientKey as secretKeySelector
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert: Option<CertAuth>,
    /// use static token to authenticate with
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<TokenAuth>,
    /// points to a service account that should be used for authentication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account: Option<ServiceAccountSelector>,
}

/// CertAuth defines certificate-based authentication for the Kubernetes provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CertAuth {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<SecretKeySelector>,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_key: Option<SecretKeySelector>,
}

/// TokenAuth defines token-based authentication for the Kubernetes provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TokenAuth {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<SecretKeySelector>,
}

/// KubernetesServer defines the Kubernetes server connection configuration.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesServer {
    /// configures the Kubernetes server Address.
    #[serde(default = "default_url")]
    pub url: String,
    /// CABundle is a base64-encoded CA certificate
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// see: https://external-secrets.io/v0.4.1/spec/#external-secrets.io/v1alpha1.CAProvider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
}

impl Default for KubernetesServer {
    fn default() -> Self {
        Self {
            ca_bundle: Default::default(),
            ca_provider: Default::default(),
            url: default_url(),
        }
    }
}

fn default_remote_namespace() -> String {
    "default".to_owned()
}

fn default_url() -> String {
    "kubernetes.default".to_owned()
}
