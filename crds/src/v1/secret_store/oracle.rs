//! The Oracle Cloud Infrastructure Vault provider: `spec.provider.oracle` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// OracleProvider configures a store to sync secrets using an Oracle Vault
/// backend.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OracleProvider {
    /// Region is the region where vault is located.
    pub region: String,
    /// Vault is the vault's OCID of the specific vault where secret is located.
    pub vault: String,
    /// Compartment is the vault compartment OCID.
    /// Required for PushSecret
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compartment: Option<String>,
    /// EncryptionKey is the OCID of the encryption key within the vault.
    /// Required for PushSecret
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption_key: Option<String>,
    /// The type of principal to use for authentication. If left blank, the Auth struct will
    /// determine the principal type. This optional field must be specified if using
    /// workload identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal_type: Option<OraclePrincipalType>,
    /// Auth configures how secret-manager authenticates with the Oracle Vault.
    /// If empty, use the instance principal, otherwise the user credentials specified in Auth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<OracleAuth>,
    /// ServiceAccountRef specified the service account
    /// that should be used when authenticating with WorkloadIdentity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
}

/// OracleAuth defines the authentication method for the Oracle Vault provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OracleAuth {
    /// Tenancy is the tenancy OCID where user is located.
    pub tenancy: String,
    /// User is an access OCID specific to the account.
    pub user: String,
    /// SecretRef to pass through sensitive information.
    pub secret_ref: OracleSecretRef,
}

/// OracleSecretRef contains the secret reference for Oracle Vault authentication credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OracleSecretRef {
    /// PrivateKey is the user's API Signing Key in PEM format, used for authentication.
    pub privatekey: SecretKeySelector,
    /// Fingerprint is the fingerprint of the API private key.
    pub fingerprint: SecretKeySelector,
}

/// OraclePrincipalType defines the type of principal used for authentication with Oracle Vault.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum OraclePrincipalType {
    #[serde(rename = "")]
    Unset,
    UserPrincipal,
    InstancePrincipal,
    Workload,
}
