//! The v1beta1 AWS Secrets Manager, Parameter Store and Certificate Manager provider (`spec.provider.aws`), where it differs from v1.

use crate::v1::secret_store::aws::{AwsAuthSecretRef, AwsJwtAuth};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Tag defines a tag key and value for AWS resources.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct Tag {
    pub key: String,
    pub value: String,
}

/// AWSProvider configures a store to sync secrets with AWS.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AwsProvider {
    /// Service defines which service should be used to fetch the secrets
    pub service: AwsServiceType,
    /// Auth defines the information necessary to authenticate against AWS
    /// if not set aws sdk will infer credentials from your environment
    /// see: https://docs.aws.amazon.com/sdk-for-go/v1/developer-guide/configuring-sdk.html#specifying-credentials
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<AwsAuth>,
    /// Role is a Role ARN which the provider will assume
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// AWS Region to be used for the provider
    pub region: String,
    /// AdditionalRoles is a chained list of Role ARNs which the provider will sequentially assume before assuming the Role
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_roles: Vec<String>,
    /// AWS External ID set on assumed IAM roles
    #[serde(rename = "externalID", skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// AWS STS assume role session tags
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_tags: Vec<Tag>,
    /// SecretsManager defines how the provider behaves when interacting with AWS SecretsManager
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secrets_manager: Option<SecretsManager>,
    /// AWS STS assume role transitive session tags. Required when multiple rules are used with the provider
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transitive_tag_keys: Vec<String>,
    /// Prefix adds a prefix to all retrieved values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
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
    /// AWSJWTAuth authenticates against AWS using service account tokens from the Kubernetes cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwt: Option<AwsJwtAuth>,
}

/// SecretsManager defines how the provider behaves when interacting with AWS
/// SecretsManager. Some of these settings are only applicable to controlling how
/// secrets are deleted, and hence only apply to PushSecret (and only when
/// deletionPolicy is set to Delete).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretsManager {
    /// Specifies whether to delete the secret without any recovery window. You
    /// can't use both this parameter and RecoveryWindowInDays in the same call.
    /// If you don't use either, then by default Secrets Manager uses a 30 day
    /// recovery window.
    /// see: https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_DeleteSecret.html#SecretsManager-DeleteSecret-request-ForceDeleteWithoutRecovery
    #[serde(skip_serializing_if = "Option::is_none")]
    pub force_delete_without_recovery: Option<bool>,
    /// The number of days from 7 to 30 that Secrets Manager waits before
    /// permanently deleting the secret. You can't use both this parameter and
    /// ForceDeleteWithoutRecovery in the same call. If you don't use either,
    /// then by default Secrets Manager uses a 30 day recovery window.
    /// see: https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_DeleteSecret.html#SecretsManager-DeleteSecret-request-RecoveryWindowInDays
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_window_in_days: Option<i64>,
}

/// AWSServiceType is an enum that defines the service/API that is used to fetch the secrets.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum AwsServiceType {
    SecretsManager,
    ParameterStore,
}
