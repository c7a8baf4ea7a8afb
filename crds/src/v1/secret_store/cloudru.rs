//! The Cloud.ru Secret Manager provider: `spec.provider.cloudrusm` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// CloudruSMProvider configures a store to sync secrets using the Cloud.ru Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CloudruSmProvider {
    /// CSMAuth contains a secretRef for credentials.
    pub auth: CsmAuth,
    /// ProjectID is the project, which the secrets are stored in.
    #[serde(rename = "projectID", skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
}

/// CSMAuth contains a secretRef for credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CsmAuth {
    /// CSMAuthSecretRef holds secret references for Cloud.ru credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<CsmAuthSecretRef>,
}

/// CSMAuthSecretRef holds secret references for Cloud.ru credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CsmAuthSecretRef {
    /// The AccessKeyID is used for authentication
    #[serde(rename = "accessKeyIDSecretRef")]
    pub access_key_id_secret_ref: SecretKeySelector,
    /// The AccessKeySecret is used for authentication
    pub access_key_secret_secret_ref: SecretKeySelector,
}
