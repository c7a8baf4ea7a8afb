//! The generic HTTP webhook provider: `spec.provider.webhook` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProviderType;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// WebhookProvider configures a store to sync secrets from simple web APIs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct WebhookProvider {
    /// Webhook Method
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Webhook url to call
    pub url: String,
    /// Headers
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Auth specifies a authorization protocol. Only one protocol may be set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthorizationProtocol>,
    /// Body
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Timeout
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Result formatting
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<WebhookResult>,
    /// Secrets to fill in templates
    /// These secrets will be passed to the templating function as key value pairs under the given name
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<WebhookSecret>,
    /// PEM encoded CA bundle used to validate webhook server certificate. Only used
    /// if the Server URL is using HTTPS protocol. This parameter is ignored for
    /// plain HTTP protocol connection. If not set the system root certificates
    /// are used to validate the TLS connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// The provider for the CA bundle to use to validate webhook server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<WebhookCaProvider>,
}

/// AuthorizationProtocol contains the protocol-specific configuration
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct AuthorizationProtocol {
    /// NTLMProtocol configures the store to use NTLM for auth
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntlm: Option<NtlmProtocol>,
}

/// NTLMProtocol contains the NTLM-specific configuration.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct NtlmProtocol {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub username_secret: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub password_secret: SecretKeySelector,
}

/// WebhookCAProvider defines a location to fetch the cert for the webhook provider from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookCaProvider {
    /// The type of provider to use such as "Secret", or "ConfigMap".
    pub r#type: CaProviderType,
    /// The name of the object located at the provider type.
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: String,
    /// The key where the CA certificate can be found in the Secret or ConfigMap.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub key: Option<String>,
    /// The namespace the Provider type is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    )]
    pub namespace: Option<String>,
}

/// WebhookResult defines how to process and extract secrets from the webhook response.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct WebhookResult {
    /// Json path of return value
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_path: Option<String>,
}

/// WebhookSecret defines a secret that will be passed to the webhook request.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSecret {
    /// Name of this secret in templates
    pub name: String,
    /// Secret ref to fill in credentials
    pub secret_ref: SecretKeySelector,
}
