//! The `Webhook` generator: values fetched from an HTTP endpoint.

use crate::v1::secret_store::webhook::{AuthorizationProtocol, WebhookCaProvider, WebhookResult};
use k8s_openapi::ByteString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// SecretKeySelector defines a reference to a specific key within a Kubernetes Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeySelector {
    /// The name of the Secret resource being referred to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: Option<String>,
    /// The key where the token is found.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub key: Option<String>,
}

/// WebhookSpec controls the behavior of the external generator. Any body parameters should be passed to the server through the parameters field.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "Webhook",
    plural = "webhooks",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "Webhook connects to a third party API server to handle the secrets generation\nconfiguration parameters in spec.\nYou can specify the server, the token, and additional body parameters.\nSee documentation for the full API specification for requests and responses."
)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSpec {
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
    pub result: WebhookResult,
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

/// WebhookSecret defines a secret reference that will be used in webhook templates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSecret {
    /// Name of this secret in templates
    pub name: String,
    /// Secret ref to fill in credentials
    pub secret_ref: SecretKeySelector,
}
