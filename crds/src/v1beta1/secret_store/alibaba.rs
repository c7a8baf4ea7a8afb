//! The v1beta1 Alibaba Cloud KMS provider (`spec.provider.alibaba`), where it differs from v1.

use crate::v1::secret_store::cloudru::CsmAuthSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// AlibabaProvider configures a store to sync secrets using the Alibaba Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AlibabaProvider {
    /// AlibabaAuth contains a secretRef for credentials.
    pub auth: AlibabaAuth,
    /// Alibaba Region to be used for the provider
    #[serde(rename = "regionID")]
    pub region_id: String,
}

/// AlibabaAuth contains a secretRef for credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AlibabaAuth {
    /// AlibabaAuthSecretRef holds secret references for Alibaba credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<CsmAuthSecretRef>,
    /// AlibabaRRSAAuth authenticates against Alibaba using RRSA (Resource-oriented RAM-based Service Authentication).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rrsa: Option<AlibabaRrsaAuth>,
}

/// AlibabaRRSAAuth authenticates against Alibaba using RRSA (Resource-oriented RAM-based Service Authentication).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AlibabaRrsaAuth {
    pub oidc_provider_arn: String,
    pub oidc_token_file_path: String,
    pub role_arn: String,
    pub session_name: String,
}
