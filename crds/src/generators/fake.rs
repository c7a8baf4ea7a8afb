//! The `Fake` generator: fixed test data.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// FakeSpec contains the static data.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "Fake",
    plural = "fakes",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "Fake generator is used for testing. It lets you define\na static set of credentials that is always returned."
)]
#[serde(rename_all = "camelCase")]
pub struct FakeSpec {
    /// Used to select the correct ESO controller (think: ingress.ingressClassName)
    /// The ESO controller is instantiated with a specific controller name and filters VDS based on this property
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Data defines the static data returned
    /// by this generator.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
}
