//! The `MFA` generator: TOTP one-time codes.

use crate::meta::SecretKeySelector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// MFASpec controls the behavior of the mfa generator.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "MFA",
    root = "Mfa",
    plural = "mfas",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "MFA generates a new TOTP token that is compliant with RFC 6238."
)]
#[serde(rename_all = "camelCase")]
pub struct MfaSpec {
    /// Secret is a secret selector to a secret containing the seed secret to generate the TOTP value from.
    pub secret: SecretKeySelector,
    /// Length defines the token length. Defaults to 6 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub length: Option<i64>,
    /// TimePeriod defines how long the token can be active. Defaults to 30 seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub time_period: Option<i64>,
    /// Algorithm to use for encoding. Defaults to SHA1 as per the RFC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    /// When defines a time parameter that can be used to pin the origin time of the generated token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub when: Option<Time>,
}
