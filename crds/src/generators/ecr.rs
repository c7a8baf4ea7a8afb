//! The `ECRAuthorizationToken` generator: AWS ECR authorization tokens.

use crate::v1::secret_store::aws::{AwsAuthSecretRef, AwsJwtAuth};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ECRAuthorizationTokenSpec defines the desired state to generate an AWS ECR authorization token.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "ECRAuthorizationToken",
    root = "EcrAuthorizationToken",
    plural = "ecrauthorizationtokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "ECRAuthorizationToken uses the GetAuthorizationToken API to retrieve an authorization token.\nThe authorization token is valid for 12 hours.\nThe authorizationToken returned is a base64 encoded string that can be decoded\nand used in a docker login command to authenticate to a registry.\nFor more information, see Registry authentication (https://docs.aws.amazon.com/AmazonECR/latest/userguide/Registries.html#registry_auth) in the Amazon Elastic Container Registry User Guide."
)]
#[serde(rename_all = "camelCase")]
pub struct EcrAuthorizationTokenSpec {
    /// Region specifies the region to operate in.
    pub region: String,
    /// Auth defines how to authenticate with AWS
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<AwsAuth>,
    /// You can assume a role before making calls to the
    /// desired AWS service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Scope specifies the ECR service scope.
    /// Valid options are private and public.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// AWSAuth tells the controller how to do authentication with aws.
/// Only one of secretRef or jwt can be specified.
/// if none is specified the controller will load credentials using the aws sdk defaults.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AwsAuth {
    /// AWSAuthSecretRef holds secret references for AWS credentials
    /// both AccessKeyID and SecretAccessKey must be defined in order to properly authenticate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<AwsAuthSecretRef>,
    /// AWSJWTAuth provides configuration to authenticate against AWS using service account tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwt: Option<AwsJwtAuth>,
}
