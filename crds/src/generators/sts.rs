//! The `STSSessionToken` generator: AWS STS session tokens.

use crate::generators::ecr::AwsAuth;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// STSSessionTokenSpec defines the desired state to generate an AWS STS session token.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "STSSessionToken",
    root = "StsSessionToken",
    plural = "stssessiontokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "STSSessionToken uses the GetSessionToken API to retrieve an authorization token.\nThe authorization token is valid for 12 hours.\nThe authorizationToken returned is a base64 encoded string that can be decoded.\nFor more information, see GetSessionToken (https://docs.aws.amazon.com/STS/latest/APIReference/API_GetSessionToken.html)."
)]
#[serde(rename_all = "camelCase")]
pub struct StsSessionTokenSpec {
    /// Region specifies the region to operate in.
    pub region: String,
    /// Auth defines how to authenticate with AWS
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<AwsAuth>,
    /// You can assume a role before making calls to the
    /// desired AWS service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// RequestParameters contains parameters that can be passed to the STS service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_parameters: Option<RequestParameters>,
}

/// RequestParameters contains parameters that can be passed to the STS service.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct RequestParameters {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_duration: Option<i32>,
    /// SerialNumber is the identification number of the MFA device that is associated with the IAM user who is making
    /// the GetSessionToken call.
    /// Possible values: hardware device (such as GAHT12345678) or an Amazon Resource Name (ARN) for a virtual device
    /// (such as arn:aws:iam::123456789012:mfa/user)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// TokenCode is the value provided by the MFA device, if MFA is required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_code: Option<String>,
}
