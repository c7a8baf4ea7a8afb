//! The `CloudsmithAccessToken` generator: Cloudsmith access tokens.

use crate::meta::ServiceAccountSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// CloudsmithAccessTokenSpec defines the configuration for generating a Cloudsmith access token using OIDC authentication.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "CloudsmithAccessToken",
    plural = "cloudsmithaccesstokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "CloudsmithAccessToken generates Cloudsmith access token using OIDC authentication"
)]
#[serde(rename_all = "camelCase")]
pub struct CloudsmithAccessTokenSpec {
    /// APIURL configures the Cloudsmith API URL. Defaults to https://api.cloudsmith.io.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// OrgSlug is the organization slug in Cloudsmith
    pub org_slug: String,
    /// ServiceSlug is the service slug in Cloudsmith for OIDC authentication
    pub service_slug: String,
    /// Name of the service account you are federating with
    pub service_account_ref: ServiceAccountSelector,
}
