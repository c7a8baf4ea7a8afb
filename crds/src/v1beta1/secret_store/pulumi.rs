//! The v1beta1 Pulumi ESC provider (`spec.provider.pulumi`), where it differs from v1.

use crate::v1::secret_store::pulumi::PulumiProviderSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PulumiProvider defines configuration for the Pulumi provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PulumiProvider {
    /// APIURL is the URL of the Pulumi API.
    #[serde(default = "default_api_url")]
    pub api_url: String,
    /// AccessToken is the access tokens to sign in to the Pulumi Cloud Console.
    pub access_token: PulumiProviderSecretRef,
    /// Organization are a space to collaborate on shared projects and stacks.
    /// To create a new organization, visit https://app.pulumi.com/ and click "New Organization".
    pub organization: String,
    /// Project is the name of the Pulumi ESC project the environment belongs to.
    pub project: String,
    /// Environment are YAML documents composed of static key-value pairs, programmatic expressions,
    /// dynamically retrieved values from supported providers including all major clouds,
    /// and other Pulumi ESC environments.
    /// To create a new environment, visit https://www.pulumi.com/docs/esc/environments/ for more information.
    pub environment: String,
}

impl Default for PulumiProvider {
    fn default() -> Self {
        Self {
            access_token: Default::default(),
            api_url: default_api_url(),
            environment: Default::default(),
            organization: Default::default(),
            project: Default::default(),
        }
    }
}

fn default_api_url() -> String {
    "https://api.pulumi.com/api/esc".to_owned()
}
