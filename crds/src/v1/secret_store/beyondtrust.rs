//! The BeyondTrust Password Safe provider: `spec.provider.beyondtrust` of a SecretStore.

use crate::meta::ValueOrSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BeyondtrustProvider provides access to a BeyondTrust secrets provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BeyondtrustProvider {
    /// Auth configures how the operator authenticates with Beyondtrust.
    pub auth: BeyondtrustAuth,
    /// Auth configures how API server works.
    pub server: BeyondtrustServer,
}

/// BeyondtrustAuth provides different ways to authenticate to a BeyondtrustProvider server.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BeyondtrustAuth {
    /// APIKey If not provided then ClientID/ClientSecret become required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<ValueOrSecretRef>,
    /// ClientID is the API OAuth Client ID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<ValueOrSecretRef>,
    /// ClientSecret is the API OAuth Client Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<ValueOrSecretRef>,
    /// Certificate (cert.pem) for use when authenticating with an OAuth client Id using a Client Certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<ValueOrSecretRef>,
    /// Certificate private key (key.pem). For use when authenticating with an OAuth client Id
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate_key: Option<ValueOrSecretRef>,
}

/// BeyondtrustServer configures a store to sync secrets using BeyondTrust Password Safe.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BeyondtrustServer {
    pub api_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The secret retrieval type. SECRET = Secrets Safe (credential, text, file). MANAGED_ACCOUNT = Password Safe account associated with a system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrieval_type: Option<String>,
    /// A character that separates the folder names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    /// When true, the response includes the decrypted password. When false, the password field is omitted. This option only applies to the SECRET retrieval type. Default: true.
    #[serde(default = "default_decrypt")]
    pub decrypt: bool,
    #[serde(rename = "verifyCA")]
    pub verify_ca: bool,
    /// Timeout specifies a time limit for requests made by this Client. The timeout includes connection time, any redirects, and reading the response body. Defaults to 45 seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub client_time_out_seconds: Option<i64>,
}

impl Default for BeyondtrustServer {
    fn default() -> Self {
        Self {
            api_url: Default::default(),
            api_version: Default::default(),
            client_time_out_seconds: Default::default(),
            decrypt: default_decrypt(),
            retrieval_type: Default::default(),
            separator: Default::default(),
            verify_ca: Default::default(),
        }
    }
}

fn default_decrypt() -> bool {
    true
}
