//! The v1beta1 generic HTTP webhook provider (`spec.provider.webhook`), where it differs from v1.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::webhook::{AuthorizationProtocol, WebhookCaProvider, WebhookResult};
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// WebhookSecret defines a secret to be used in webhook templates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSecret {
    /// Name of this secret in templates
    pub name: String,
    /// Secret ref to fill in credentials
    pub secret_ref: SecretKeySelector,
}

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
