//! The `QuayAccessToken` generator: Quay robot account tokens.

use crate::meta::ServiceAccountSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// QuayAccessTokenSpec defines the desired state to generate a Quay access token.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "QuayAccessToken",
    plural = "quayaccesstokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "QuayAccessToken generates Quay oauth token for pulling/pushing images"
)]
#[serde(rename_all = "camelCase")]
pub struct QuayAccessTokenSpec {
    /// URL configures the Quay instance URL. Defaults to quay.io.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Name of the robot account you are federating with
    pub robot_account: String,
    /// Name of the service account you are federating with
    pub service_account_ref: ServiceAccountSelector,
}
