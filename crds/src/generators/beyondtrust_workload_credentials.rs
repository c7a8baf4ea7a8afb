//! The `BeyondtrustWorkloadCredentialsDynamicSecret` generator: BeyondTrust Workload Credentials dynamic secrets.

use crate::v1::secret_store::SecretStoreRetrySettings;
use crate::v1::secret_store::beyondtrust_workload_credentials::BeyondtrustWorkloadCredentialsProvider;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BeyondtrustWorkloadCredentialsDynamicSecretSpec defines the desired spec for BeyondtrustWorkloadCredentials dynamic generator.
/// This generator enables obtaining temporary, short-lived credentials from BeyondTrust Workload Credentials.
/// For more information, see: https://docs.beyondtrust.com/bt-docs/docs/secrets-api
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "BeyondtrustWorkloadCredentialsDynamicSecret",
    plural = "beyondtrustworkloadcredentialsdynamicsecrets",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "BeyondtrustWorkloadCredentialsDynamicSecret represents a generator that requests dynamic credentials from BeyondTrust Workload Credentials.\nThis generator calls the BeyondTrust Workload Credentials API to generate fresh, temporary credentials\n(such as AWS STS credentials) each time an ExternalSecret is refreshed.\nDynamic secret definitions must be created in BeyondTrust Workload Credentials before they can be referenced.\nFor complete documentation, see: https://docs.beyondtrust.com/bt-docs/docs/secrets-api"
)]
#[serde(rename_all = "camelCase")]
pub struct BeyondtrustWorkloadCredentialsDynamicSecretSpec {
    /// Controller selects the controller that should handle this generator.
    /// Leave empty to use the default controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Provider contains the BeyondtrustWorkloadCredentials provider configuration including authentication,
    /// server connection details, and the folder path to the dynamic secret definition.
    /// The folderPath should point to a dynamic secret definition that has been created in
    /// BeyondTrust Workload Credentials (e.g., "production/aws-temp").
    /// For setup details, see: https://docs.beyondtrust.com/bt-docs/docs/secrets-api
    pub provider: BeyondtrustWorkloadCredentialsProvider,
    /// RetrySettings configures exponential backoff for failed API requests.
    /// If not specified, uses the default retry settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_settings: Option<SecretStoreRetrySettings>,
}
