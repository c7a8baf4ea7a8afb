//! The HashiCorp Vault provider: `spec.provider.vault` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use crate::v1::secret_store::CaProvider;
use crate::v1::secret_store::aws::{AwsAuthSecretRef, AwsJwtAuth};
use crate::v1::secret_store::gcp::{GcpWorkloadIdentity, GcpsmAuthSecretRef};
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// OpenBaoKVStoreVersion represents the version of the OpenBao KV secret engine.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum VaultKvStoreVersion {
    #[serde(rename = "v1")]
    V1,
    #[default]
    #[serde(rename = "v2")]
    V2,
}

/// VaultProvider configures a store to sync secrets using a Hashicorp Vault KV backend.
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
    /// CheckAndSet defines the Check-And-Set (CAS) settings for PushSecret operations.
    /// Only applies to Vault KV v2 stores. When enabled, write operations must include
    /// the current version of the secret to prevent unintentional overwrites.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_and_set: Option<VaultCheckAndSet>,
}

/// VaultAuth is the configuration used to authenticate with a Vault server.
/// Only one of `tokenSecretRef`, `appRole`,  `kubernetes`, `ldap`, `userPass`, `jwt`, `cert`, `iam` or `gcp`
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
    /// Gcp authenticates with Vault using Google Cloud Platform authentication method
    /// GCP authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcp: Option<VaultGcpAuth>,
}

/// VaultAppRole authenticates with Vault using the App Role auth mechanism,
/// with the role and secret stored in a Kubernetes Secret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("required" = ["path", "secretRef"]))]
pub struct VaultAppRole {
    /// Path where the App Role authentication backend is mounted
    /// in Vault, e.g: "approle"
    #[serde(default = "default_path")]
    pub path: String,
    /// RoleID configured in the App Role authentication backend when setting
    /// up the authentication backend in Vault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_id: Option<String>,
    /// Reference to a key in a Secret that contains the App Role ID used
    /// to authenticate with Vault.
    /// The `key` field must be specified and denotes which entry within the Secret
    /// resource is used as the app role id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_ref: Option<SecretKeySelector>,
    /// Reference to a key in a Secret that contains the App Role secret used
    /// to authenticate with Vault.
    /// The `key` field must be specified and denotes which entry within the Secret
    /// resource is used as the app role secret.
    pub secret_ref: SecretKeySelector,
}

impl Default for VaultAppRole {
    fn default() -> Self {
        Self {
            path: default_path(),
            role_id: Default::default(),
            role_ref: Default::default(),
            secret_ref: Default::default(),
        }
    }
}

/// VaultCertAuth authenticates with Vault using the JWT/OIDC authentication
/// method, with the role name and token stored in a Kubernetes Secret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VaultCertAuth {
    /// Path where the Certificate authentication backend is mounted
    /// in Vault, e.g: "cert"
    #[serde(default = "default_path_vault_cert_auth")]
    pub path: String,
    /// VaultRole specifies the Vault role to use for TLS certificate authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vault_role: Option<String>,
    /// ClientCert is a certificate to authenticate using the Cert Vault
    /// authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<SecretKeySelector>,
    /// SecretRef to a key in a Secret resource containing client private key to
    /// authenticate with Vault using the Cert authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

impl Default for VaultCertAuth {
    fn default() -> Self {
        Self {
            client_cert: Default::default(),
            path: default_path_vault_cert_auth(),
            secret_ref: Default::default(),
            vault_role: Default::default(),
        }
    }
}

/// VaultGCPAuth authenticates with Vault using Google Cloud Platform authentication method.
/// Refer: https://developer.hashicorp.com/vault/docs/auth/gcp
///
/// When ServiceAccountRef, SecretRef and WorkloadIdentity are not specified, the provider will use the controller pod's
/// identity to authenticate with GCP. This supports both GKE Workload Identity and service account keys.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VaultGcpAuth {
    /// Path where the GCP auth method is enabled in Vault, e.g: "gcp"
    #[serde(default = "default_path_vault_gcp_auth")]
    pub path: String,
    /// Vault Role. In Vault, a role describes an identity with a set of permissions, groups, or policies you want to attach to a user of the secrets engine.
    pub role: String,
    /// Project ID of the Google Cloud Platform project
    #[serde(rename = "projectID", skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Location optionally defines a location/region for the secret
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Specify credentials in a Secret object
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<GcpsmAuthSecretRef>,
    /// Specify a service account with Workload Identity
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity: Option<GcpWorkloadIdentity>,
    /// ServiceAccountRef to a service account for impersonation
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
}

impl Default for VaultGcpAuth {
    fn default() -> Self {
        Self {
            location: Default::default(),
            path: default_path_vault_gcp_auth(),
            project_id: Default::default(),
            role: Default::default(),
            secret_ref: Default::default(),
            service_account_ref: Default::default(),
            workload_identity: Default::default(),
        }
    }
}

/// VaultIamAuth authenticates with Vault using the Vault's AWS IAM authentication method. Refer: https://developer.hashicorp.com/vault/docs/auth/aws
///
/// When JWTAuth and SecretRef are not specified, the provider will use the controller pod's
/// identity to authenticate with AWS. This supports both IRSA and EKS Pod Identity.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaultIamAuth {
    /// Path where the AWS auth method is enabled in Vault, e.g: "aws"
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// AWS region
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// This is the AWS role to be assumed before talking to vault
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Vault Role. In vault, a role describes an identity with a set of permissions, groups, or policies you want to attach a user of the secrets engine
    pub vault_role: String,
    /// AWS External ID set on assumed IAM roles
    #[serde(rename = "externalID", skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// X-Vault-AWS-IAM-Server-ID is an additional header used by Vault IAM auth method to mitigate against different types of replay attacks. More details here: https://developer.hashicorp.com/vault/docs/auth/aws
    #[serde(
        rename = "vaultAwsIamServerID",
        skip_serializing_if = "Option::is_none"
    )]
    pub vault_aws_iam_server_id: Option<String>,
    /// Specify credentials in a Secret object
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<AwsAuthSecretRef>,
    /// Specify a service account with IRSA enabled
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwt: Option<AwsJwtAuth>,
}

/// VaultJwtAuth authenticates with Vault using the JWT/OIDC authentication
/// method, with the role name and a token stored in a Kubernetes Secret resource or
/// a Kubernetes service account token retrieved via `TokenRequest`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("required" = ["path"]))]
pub struct VaultJwtAuth {
    /// Path where the JWT authentication backend is mounted
    /// in Vault, e.g: "jwt"
    #[serde(default = "default_path_vault_jwt_auth")]
    pub path: String,
    /// Role is a JWT role to authenticate using the JWT/OIDC Vault
    /// authentication method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Optional SecretRef that refers to a key in a Secret resource containing JWT token to
    /// authenticate with Vault using the JWT/OIDC authentication method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
    /// Optional ServiceAccountToken specifies the Kubernetes service account for which to request
    /// a token for with the `TokenRequest` API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes_service_account_token: Option<VaultKubernetesServiceAccountTokenAuth>,
}

impl Default for VaultJwtAuth {
    fn default() -> Self {
        Self {
            kubernetes_service_account_token: Default::default(),
            path: default_path_vault_jwt_auth(),
            role: Default::default(),
            secret_ref: Default::default(),
        }
    }
}

/// VaultKubernetesServiceAccountTokenAuth authenticates with Vault using a temporary
/// Kubernetes service account token retrieved by the `TokenRequest` API.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaultKubernetesServiceAccountTokenAuth {
    /// Service account field containing the name of a kubernetes ServiceAccount.
    pub service_account_ref: ServiceAccountSelector,
    /// Optional audiences field that will be used to request a temporary Kubernetes service
    /// account token for the service account referenced by `serviceAccountRef`.
    /// Defaults to a single audience `vault` it not specified.
    ///
    /// Deprecated: use serviceAccountRef.Audiences instead
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audiences: Vec<String>,
    /// Optional expiration time in seconds that will be used to request a temporary
    /// Kubernetes service account token for the service account referenced by
    /// `serviceAccountRef`.
    ///
    /// Deprecated: this will be removed in the future.
    /// Defaults to 10 minutes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_seconds: Option<i64>,
}

/// VaultKubernetesAuth authenticates against Vault using a Kubernetes ServiceAccount token stored in
/// a Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("required" = ["mountPath", "role"]))]
pub struct VaultKubernetesAuth {
    /// Path where the Kubernetes authentication backend is mounted in Vault, e.g:
    /// "kubernetes"
    #[serde(default = "default_mount_path")]
    pub mount_path: String,
    /// Optional service account field containing the name of a kubernetes ServiceAccount.
    /// If the service account is specified, the service account secret token JWT will be used
    /// for authenticating with Vault. If the service account selector is not supplied,
    /// the secretRef will be used instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
    /// Optional secret field containing a Kubernetes ServiceAccount JWT used
    /// for authenticating with Vault. If a name is specified without a key,
    /// `token` is the default. If one is not specified, the one bound to
    /// the controller will be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
    /// A required field containing the Vault Role to assume. A Role binds a
    /// Kubernetes ServiceAccount with a set of Vault policies.
    pub role: String,
}

impl Default for VaultKubernetesAuth {
    fn default() -> Self {
        Self {
            mount_path: default_mount_path(),
            role: Default::default(),
            secret_ref: Default::default(),
            service_account_ref: Default::default(),
        }
    }
}

/// VaultLdapAuth authenticates with Vault using the LDAP authentication method,
/// with the username and password stored in a Kubernetes Secret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("required" = ["path", "username"]))]
pub struct VaultLdapAuth {
    /// Path where the LDAP authentication backend is mounted
    /// in Vault, e.g: "ldap"
    #[serde(default = "default_path_vault_ldap_auth")]
    pub path: String,
    /// Username is an LDAP username used to authenticate using the LDAP Vault
    /// authentication method
    pub username: String,
    /// SecretRef to a key in a Secret resource containing password for the LDAP
    /// user used to authenticate with Vault using the LDAP authentication
    /// method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

impl Default for VaultLdapAuth {
    fn default() -> Self {
        Self {
            path: default_path_vault_ldap_auth(),
            secret_ref: Default::default(),
            username: Default::default(),
        }
    }
}

/// VaultUserPassAuth authenticates with Vault using UserPass authentication method,
/// with the username and password stored in a Kubernetes Secret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("required" = ["path", "username"]))]
pub struct VaultUserPassAuth {
    /// Path where the UserPassword authentication backend is mounted
    /// in Vault, e.g: "userpass"
    #[serde(default = "default_path_vault_user_pass_auth")]
    pub path: String,
    /// Username is a username used to authenticate using the UserPass Vault
    /// authentication method
    pub username: String,
    /// SecretRef to a key in a Secret resource containing password for the
    /// user used to authenticate with Vault using the UserPass authentication
    /// method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

impl Default for VaultUserPassAuth {
    fn default() -> Self {
        Self {
            path: default_path_vault_user_pass_auth(),
            secret_ref: Default::default(),
            username: Default::default(),
        }
    }
}

/// VaultCheckAndSet defines the Check-And-Set (CAS) settings for Vault KV v2 PushSecret operations.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaultCheckAndSet {
    /// Required when true, all write operations must include a check-and-set parameter.
    /// This helps prevent unintentional overwrites of secrets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// VaultClientTLS is the configuration used for client side related TLS communication,
/// when the Vault server requires mutual authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaultClientTls {
    /// CertSecretRef is a certificate added to the transport layer
    /// when communicating with the Vault server.
    /// If no key for the Secret is specified, external-secret will default to 'tls.crt'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<SecretKeySelector>,
    /// KeySecretRef to a key in a Secret resource containing client private key
    /// added to the transport layer when communicating with the Vault server.
    /// If no key for the Secret is specified, external-secret will default to 'tls.key'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_secret_ref: Option<SecretKeySelector>,
}

fn default_path() -> String {
    "approle".to_owned()
}

fn default_path_vault_cert_auth() -> String {
    "cert".to_owned()
}

fn default_path_vault_gcp_auth() -> String {
    "gcp".to_owned()
}

fn default_path_vault_jwt_auth() -> String {
    "jwt".to_owned()
}

fn default_mount_path() -> String {
    "kubernetes".to_owned()
}

fn default_path_vault_ldap_auth() -> String {
    "ldap".to_owned()
}

fn default_path_vault_user_pass_auth() -> String {
    "userpass".to_owned()
}
