//! The Infisical provider: `spec.provider.infisical` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// InfisicalProvider configures a store to sync secrets using the Infisical provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfisicalProvider {
    /// Auth configures how the Operator authenticates with the Infisical API
    pub auth: InfisicalAuth,
    /// SecretsScope defines the scope of the secrets within the workspace
    pub secrets_scope: MachineIdentityScopeInWorkspace,
    /// HostAPI specifies the base URL of the Infisical API. If not provided, it defaults to "https://app.infisical.com/api".
    #[serde(rename = "hostAPI", default = "default_host_api")]
    pub host_api: String,
    /// CABundle is a PEM-encoded CA certificate bundle used to validate
    /// the Infisical server's TLS certificate. Mutually exclusive with CAProvider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// CAProvider is a reference to a Secret or ConfigMap that contains a CA certificate.
    /// The certificate is used to validate the Infisical server's TLS certificate.
    /// Mutually exclusive with CABundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
}

impl Default for InfisicalProvider {
    fn default() -> Self {
        Self {
            auth: Default::default(),
            ca_bundle: Default::default(),
            ca_provider: Default::default(),
            host_api: default_host_api(),
            secrets_scope: Default::default(),
        }
    }
}

/// InfisicalAuth specifies the authentication configuration for Infisical.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct InfisicalAuth {
    /// UniversalAuthCredentials represents the client credentials for universal authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub universal_auth_credentials: Option<UniversalAuthCredentials>,
    /// AzureAuthCredentials represents the credentials for Azure authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure_auth_credentials: Option<AzureAuthCredentials>,
    /// GcpIDTokenAuthCredentials represents the credentials for GCP ID token authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcp_id_token_auth_credentials: Option<IdentityIdAuthCredentials>,
    /// GcpIamAuthCredentials represents the credentials for GCP IAM authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcp_iam_auth_credentials: Option<GcpIamAuthCredentials>,
    /// JwtAuthCredentials represents the credentials for JWT authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwt_auth_credentials: Option<JwtAuthCredentials>,
    /// LdapAuthCredentials represents the credentials for LDAP authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ldap_auth_credentials: Option<LdapAuthCredentials>,
    /// OciAuthCredentials represents the credentials for OCI authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oci_auth_credentials: Option<OciAuthCredentials>,
    /// KubernetesAuthCredentials represents the credentials for Kubernetes authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes_auth_credentials: Option<KubernetesAuthCredentials>,
    /// AwsAuthCredentials represents the credentials for AWS authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws_auth_credentials: Option<IdentityIdAuthCredentials>,
    /// TokenAuthCredentials represents the credentials for access token-based authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_auth_credentials: Option<TokenAuthCredentials>,
}

/// The Infisical machine identity to log in as.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct IdentityIdAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub identity_id: SecretKeySelector,
}

/// AzureAuthCredentials represents the credentials for Azure authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AzureAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub identity_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<SecretKeySelector>,
}

/// GcpIamAuthCredentials represents the credentials for GCP IAM authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpIamAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub identity_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub service_account_key_file_path: SecretKeySelector,
}

/// JwtAuthCredentials represents the credentials for JWT authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct JwtAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub identity_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub jwt: SecretKeySelector,
}

/// KubernetesAuthCredentials represents the credentials for Kubernetes authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub identity_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_token_path: Option<SecretKeySelector>,
}

/// LdapAuthCredentials represents the credentials for LDAP authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct LdapAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub identity_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub ldap_password: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub ldap_username: SecretKeySelector,
}

/// OciAuthCredentials represents the credentials for OCI authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OciAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub identity_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub private_key: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_key_passphrase: Option<SecretKeySelector>,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub fingerprint: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub user_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub tenancy_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub region: SecretKeySelector,
}

/// TokenAuthCredentials represents the credentials for access token-based authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TokenAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub access_token: SecretKeySelector,
}

/// UniversalAuthCredentials represents the client credentials for universal authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct UniversalAuthCredentials {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub client_id: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub client_secret: SecretKeySelector,
}

/// MachineIdentityScopeInWorkspace defines the scope for machine identity within a workspace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineIdentityScopeInWorkspace {
    /// SecretsPath specifies the path to the secrets within the workspace. Defaults to "/" if not provided.
    #[serde(default = "default_secrets_path")]
    pub secrets_path: String,
    /// Recursive indicates whether the secrets should be fetched recursively. Defaults to false if not provided.
    #[serde(default)]
    pub recursive: bool,
    /// EnvironmentSlug is the required slug identifier for the environment.
    pub environment_slug: String,
    /// ProjectSlug is the required slug identifier for the project.
    pub project_slug: String,
    /// OrganizationSlug is the optional slug that identifies the organization that will be used
    /// during authentication. Useful for sub-organization setups
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization_slug: Option<String>,
    /// ExpandSecretReferences indicates whether secret references should be expanded. Defaults to true if not provided.
    #[serde(default = "default_expand_secret_references")]
    pub expand_secret_references: bool,
}

impl Default for MachineIdentityScopeInWorkspace {
    fn default() -> Self {
        Self {
            environment_slug: Default::default(),
            expand_secret_references: default_expand_secret_references(),
            organization_slug: Default::default(),
            project_slug: Default::default(),
            recursive: Default::default(),
            secrets_path: default_secrets_path(),
        }
    }
}

fn default_host_api() -> String {
    "https://app.infisical.com/api".to_owned()
}

fn default_expand_secret_references() -> bool {
    true
}

fn default_secrets_path() -> String {
    "/".to_owned()
}
