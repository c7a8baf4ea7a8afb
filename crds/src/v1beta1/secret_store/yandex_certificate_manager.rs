//! The v1beta1 Yandex Certificate Manager provider (`spec.provider.yandexcertificatemanager`), where it differs from v1.

use crate::v1::secret_store::SecretCaProvider;
use crate::v1::secret_store::yandex::YandexAuth;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// YandexCertificateManagerProvider configures a store to sync secrets using the Yandex Certificate Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct YandexCertificateManagerProvider {
    /// Yandex.Cloud API endpoint (e.g. 'api.cloud.yandex.net:443')
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_endpoint: Option<String>,
    /// Auth defines the information necessary to authenticate against Yandex Certificate Manager
    pub auth: YandexAuth,
    /// The provider for the CA bundle to use to validate Yandex.Cloud server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<SecretCaProvider>,
}
