//! The `VaultDynamicSecret` generator: HashiCorp Vault dynamic secrets.

use crate::v1::secret_store::SecretStoreRetrySettings;
use crate::v1::secret_store::vault::VaultProvider;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// VaultDynamicSecretSpec defines the desired spec of VaultDynamicSecret.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "VaultDynamicSecret",
    plural = "vaultdynamicsecrets",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "VaultDynamicSecret represents a generator that can create dynamic secrets from HashiCorp Vault."
)]
#[serde(rename_all = "camelCase")]
pub struct VaultDynamicSecretSpec {
    /// Used to select the correct ESO controller (think: ingress.ingressClassName)
    /// The ESO controller is instantiated with a specific controller name and filters VDS based on this property
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Vault API method to use (GET/POST/other)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Parameters to pass to Vault write (for non-GET methods)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_fields")]
    pub parameters: Option<serde_json::Value>,
    /// GetParameters are query-string parameters passed to Vault on GET calls.
    /// Each key may map to multiple values, matching HTTP query-string semantics.
    /// Ignored for non-GET methods; use Parameters for write bodies.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub get_parameters: BTreeMap<String, Vec<String>>,
    /// Result type defines which data is returned from the generator.
    /// By default, it is the "data" section of the Vault API response.
    /// When using e.g. /auth/token/create the "data" section is empty but
    /// the "auth" section contains the generated token.
    /// Please refer to the vault docs regarding the result data structure.
    /// Additionally, accessing the raw response is possibly by using "Raw" result type.
    #[serde(default)]
    pub result_type: VaultDynamicSecretResultType,
    /// Used to configure http retries if failed
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_settings: Option<SecretStoreRetrySettings>,
    /// Vault provider common spec
    pub provider: VaultProvider,
    /// Vault path to obtain the dynamic secret from
    pub path: String,
    /// Do not fail if no secrets are found. Useful for requests where no data is expected.
    #[serde(default)]
    pub allow_empty_response: bool,
}

/// VaultDynamicSecretResultType defines which part of the Vault API response should be returned.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum VaultDynamicSecretResultType {
    #[default]
    Data,
    Auth,
    Raw,
}
