//! The v1beta1 Yandex Lockbox provider (`spec.provider.yandexlockbox`), where it differs from v1.

use crate::v1::secret_store::SecretCaProvider;
use crate::v1::secret_store::yandex::YandexAuth;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// YandexLockboxProvider configures a store to sync secrets using the Yandex Lockbox provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct YandexLockboxProvider {
    /// Yandex.Cloud API endpoint (e.g. 'api.cloud.yandex.net:443')
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_endpoint: Option<String>,
    /// Auth defines the information necessary to authenticate against Yandex Lockbox
    pub auth: YandexAuth,
    /// The provider for the CA bundle to use to validate Yandex.Cloud server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<SecretCaProvider>,
}
