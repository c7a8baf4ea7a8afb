//! The v1beta1 HashiCorp Vault provider (`spec.provider.vault`), where it differs from v1.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use crate::v1::secret_store::vault::{
    VaultAppRole, VaultClientTls, VaultIamAuth, VaultJwtAuth, VaultKubernetesAuth,
    VaultKvStoreVersion, VaultLdapAuth, VaultUserPassAuth,
};
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// VaultProvider configures a store to sync secrets using a HashiCorp Vault KV backend.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaultProvider {
    /// Auth configures how secret-manager authenticates with the Vault server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<VaultAuth>,
    /// Server is the connection address for the Vault server, e.g: "https://vault.example.com:8200".
    pub server: String,
    /// Path is the mount path of the Vault KV backend endpoint, e.g:
    /// "secret". The v2 KV secret engine version specific "/data" path suffix
    /// for fetching secrets from Vault is optional and will be appended
    /// if not present in specified path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Version is the Vault KV secret engine version. This can be either "v1" or
    /// "v2". Version defaults to "v2".
    #[serde(default)]
    pub version: VaultKvStoreVersion,
    /// Name of the vault namespace. Namespaces is a set of features within Vault Enterprise that allows
    /// Vault environments to support Secure Multi-tenancy. e.g: "ns1".
    /// More about namespaces can be found here https://www.vaultproject.io/docs/enterprise/namespaces
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// PEM encoded CA bundle used to validate Vault server certificate. Only used
    /// if the Server URL is using HTTPS protocol. This parameter is ignored for
    /// plain HTTP protocol connection. If not set the system root certificates
    /// are used to validate the TLS connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// The configuration used for client side related TLS communication, when the Vault server
    /// requires mutual authentication. Only used if the Server URL is using HTTPS protocol.
    /// This parameter is ignored for plain HTTP protocol connection.
    /// It's worth noting this configuration is different from the "TLS certificates auth method",
    /// which is available under the `auth.cert` section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<VaultClientTls>,
    /// The provider for the CA bundle to use to validate Vault server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
    /// ReadYourWrites ensures isolated read-after-write semantics by
    /// providing discovered cluster replication states in each request.
    /// More information about eventual consistency in Vault can be found here
    /// https://www.vaultproject.io/docs/enterprise/consistency
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_your_writes: Option<bool>,
    /// ForwardInconsistent tells Vault to forward read-after-write requests to the Vault
    /// leader instead of simply retrying within a loop. This can increase performance if
    /// the option is enabled serverside.
    /// https://www.vaultproject.io/docs/configuration/replication#allow_forwarding_via_header
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward_inconsistent: Option<bool>,
    /// Headers to be added in Vault request
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// VaultAuth is the configuration used to authenticate with a Vault server.
/// Only one of `tokenSecretRef`, `appRole`,  `kubernetes`, `ldap`, `userPass`, `jwt` or `cert`
/// can be specified. A namespace to authenticate against can optionally be specified.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaultAuth {
    /// Name of the vault namespace to authenticate to. This can be different than the namespace your secret is in.
    /// Namespaces is a set of features within Vault Enterprise that allows
    /// Vault environments to support Secure Multi-tenancy. e.g: "ns1".
    /// More about namespaces can be found here https://www.vaultproject.io/docs/enterprise/namespaces
    /// This will default to Vault.Namespace field if set, or empty otherwise
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// TokenSecretRef authenticates with Vault by presenting a token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<SecretKeySelector>,
    /// AppRole authenticates with Vault using the App Role auth mechanism,
    /// with the role and secret stored in a Kubernetes Secret resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_role: Option<VaultAppRole>,
    /// Kubernetes authenticates with Vault by passing the ServiceAccount
    /// token stored in the named Secret resource to the Vault server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<VaultKubernetesAuth>,
    /// Ldap authenticates with Vault by passing username/password pair using
    /// the LDAP authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ldap: Option<VaultLdapAuth>,
    /// Jwt authenticates with Vault by passing role and JWT token using the
    /// JWT/OIDC authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwt: Option<VaultJwtAuth>,
    /// Cert authenticates with TLS Certificates by passing client certificate, private key and ca certificate
    /// Cert authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert: Option<VaultCertAuth>,
    /// Iam authenticates with vault by passing a special AWS request signed with AWS IAM credentials
    /// AWS IAM authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iam: Option<VaultIamAuth>,
    /// UserPass authenticates with Vault by passing username/password pair
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_pass: Option<VaultUserPassAuth>,
}

/// VaultCertAuth authenticates with Vault using the JWT/OIDC authentication
/// method, with the role name and token stored in a Kubernetes Secret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaultCertAuth {
    /// ClientCert is a certificate to authenticate using the Cert Vault
    /// authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<SecretKeySelector>,
    /// SecretRef to a key in a Secret resource containing client private key to
    /// authenticate with Vault using the Cert authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}
