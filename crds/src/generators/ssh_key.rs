//! The `SSHKey` generator: SSH key pairs.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SSHKeySpec controls the behavior of the ssh key generator.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "SSHKey",
    root = "SshKey",
    plural = "sshkeys",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "SSHKey generates SSH key pairs."
)]
#[serde(rename_all = "camelCase")]
pub struct SshKeySpec {
    /// KeyType specifies the SSH key type (rsa, ecdsa, ed25519)
    #[serde(default)]
    pub key_type: SshKeyType,
    /// KeySize specifies the key size for RSA keys (default: 2048) and ECDSA keys (default: 256).
    /// For RSA keys: 2048, 3072, 4096
    /// For ECDSA keys: 256, 384, 521
    /// Ignored for ed25519 keys
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer", range(min = 256, max = 8192))]
    pub key_size: Option<i64>,
    /// Comment specifies an optional comment for the SSH key
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The values of `keyType` in [`SshKeySpec`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum SshKeyType {
    #[default]
    #[serde(rename = "rsa")]
    Rsa,
    #[serde(rename = "ecdsa")]
    Ecdsa,
    #[serde(rename = "ed25519")]
    Ed25519,
}
