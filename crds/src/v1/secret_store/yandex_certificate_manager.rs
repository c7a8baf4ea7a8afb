//! The Yandex Certificate Manager provider: `spec.provider.yandexcertificatemanager` of a SecretStore.

use crate::v1::secret_store::SecretCaProvider;
use crate::v1::secret_store::yandex::{FetchingPolicy, YandexAuth};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// YandexCertificateManagerProvider Configures a store to sync secrets using the Yandex Certificate Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct YandexCertificateManagerProvider {
    /// Yandex.Cloud API endpoint (e.g. 'api.cloud.yandex.net:443')
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_endpoint: Option<String>,
    /// Auth defines the information necessary to authenticate against Yandex.Cloud
    pub auth: YandexAuth,
    /// The provider for the CA bundle to use to validate Yandex.Cloud server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<SecretCaProvider>,
    /// FetchingPolicy configures the provider to interpret the `data.secretKey.remoteRef.key` field in ExternalSecret as certificate ID or certificate name
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetching: Option<FetchingPolicy>,
}
