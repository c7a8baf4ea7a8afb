//! The v1beta1 SecretStore and ClusterSecretStore, where they differ from v1.

pub mod akeyless;
pub mod alibaba;
pub mod aws;
pub mod azure_key_vault;
pub mod conjur;
pub mod device42;
pub mod doppler;
pub mod fake;
pub mod gcp;
pub mod github;
pub mod gitlab;
pub mod ibm;
pub mod infisical;
pub mod keeper_security;
pub mod kubernetes;
pub mod passbolt;
pub mod password_depot;
pub mod pulumi;
pub mod secret_server;
pub mod vault;
pub mod webhook;
pub mod yandex_certificate_manager;
pub mod yandex_lockbox;

pub use akeyless::*;
pub use alibaba::*;
pub use aws::*;
pub use azure_key_vault::*;
pub use conjur::*;
pub use device42::*;
pub use doppler::*;
pub use fake::*;
pub use gcp::*;
pub use github::*;
pub use gitlab::*;
pub use ibm::*;
pub use infisical::*;
pub use keeper_security::*;
pub use kubernetes::*;
pub use passbolt::*;
pub use password_depot::*;
pub use pulumi::*;
pub use secret_server::*;
pub use vault::*;
pub use webhook::*;
pub use yandex_certificate_manager::*;
pub use yandex_lockbox::*;

use crate::v1::secret_store::ClusterSecretStoreCondition;
use crate::v1::secret_store::beyondtrust::BeyondtrustProvider;
use crate::v1::secret_store::bitwarden::BitwardenSecretsManagerProvider;
use crate::v1::secret_store::chef::ChefProvider;
use crate::v1::secret_store::cloudru::CloudruSmProvider;
use crate::v1::secret_store::delinea::DelineaProvider;
use crate::v1::secret_store::fortanix::FortanixProvider;
use crate::v1::secret_store::onboardbase::OnboardbaseProvider;
use crate::v1::secret_store::onepassword::OnePasswordProvider;
use crate::v1::secret_store::oracle::OracleProvider;
use crate::v1::secret_store::previder::PreviderProvider;
use crate::v1::secret_store::scaleway::ScalewayProvider;
use crate::v1::secret_store::senhasegura::SenhaseguraProvider;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SecretStoreSpec defines the desired state of SecretStore.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "external-secrets.io",
    version = "v1beta1",
    kind = "SecretStore",
    plural = "secretstores",
    namespaced,
    status = "SecretStoreStatus",
    shortname = "ss",
    category = "external-secrets",
    printcolumn = r#"{"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name": "Status", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    printcolumn = r#"{"name": "Capabilities", "type": "string", "jsonPath": ".status.capabilities"}"#,
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}"#,
    served = false,
    storage = false,
    deprecated,
    derive = "PartialEq",
    derive = "Default",
    doc = "SecretStore represents a secure external location for storing secrets, which can be referenced as part of `storeRef` fields."
)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreSpec {
    /// Used to select the correct ESO controller (think: ingress.ingressClassName)
    /// The ESO controller is instantiated with a specific controller name and filters ES based on this property
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Used to configure the provider. Only one provider may be set
    pub provider: SecretStoreProvider,
    /// Used to configure HTTP retries on failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_settings: Option<SecretStoreRetrySettings>,
    /// Used to configure store refresh interval in seconds. Empty or 0 will default to the controller config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub refresh_interval: Option<i64>,
    /// Used to constrain a ClusterSecretStore to specific namespaces. Relevant only to ClusterSecretStore.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ClusterSecretStoreCondition>,
}

/// SecretStoreSpec defines the desired state of SecretStore.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "external-secrets.io",
    version = "v1beta1",
    kind = "ClusterSecretStore",
    plural = "clustersecretstores",
    status = "SecretStoreStatus",
    shortname = "css",
    category = "external-secrets",
    printcolumn = r#"{"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name": "Status", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    printcolumn = r#"{"name": "Capabilities", "type": "string", "jsonPath": ".status.capabilities"}"#,
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}"#,
    served = false,
    storage = false,
    deprecated,
    derive = "PartialEq",
    derive = "Default",
    doc = "ClusterSecretStore represents a secure external location for storing secrets, which can be referenced as part of `storeRef` fields."
)]
pub struct ClusterSecretStoreSpec(pub SecretStoreSpec);

impl std::ops::Deref for ClusterSecretStoreSpec {
    type Target = SecretStoreSpec;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for ClusterSecretStoreSpec {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

// Every backend is boxed: inline, the 40-odd configurations made each store ~17 KB, on the
// stack in every (de)serialization and future holding one, and in every cached store.
/// SecretStoreProvider contains the provider-specific configuration.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct SecretStoreProvider {
    /// AWS configures this store to sync secrets using AWS Secret Manager provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws: Option<Box<AwsProvider>>,
    /// AzureKV configures this store to sync secrets using Azure Key Vault provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azurekv: Option<Box<AzureKvProvider>>,
    /// Akeyless configures this store to sync secrets using Akeyless Vault provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub akeyless: Option<Box<AkeylessProvider>>,
    /// BitwardenSecretsManager configures this store to sync secrets using BitwardenSecretsManager provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitwardensecretsmanager: Option<Box<BitwardenSecretsManagerProvider>>,
    /// Vault configures this store to sync secrets using the HashiCorp Vault provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vault: Option<Box<VaultProvider>>,
    /// GCPSM configures this store to sync secrets using Google Cloud Platform Secret Manager provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcpsm: Option<Box<GcpsmProvider>>,
    /// Oracle configures this store to sync secrets using Oracle Vault provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracle: Option<Box<OracleProvider>>,
    /// IBM configures this store to sync secrets using IBM Cloud provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ibm: Option<Box<IbmProvider>>,
    /// YandexCertificateManager configures this store to sync secrets using Yandex Certificate Manager provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yandexcertificatemanager: Option<Box<YandexCertificateManagerProvider>>,
    /// YandexLockbox configures this store to sync secrets using Yandex Lockbox provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yandexlockbox: Option<Box<YandexLockboxProvider>>,
    /// Github configures this store to push GitHub Actions secrets using the GitHub API provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub github: Option<Box<GithubProvider>>,
    /// GitLab configures this store to sync secrets using GitLab Variables provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gitlab: Option<Box<GitlabProvider>>,
    /// Alibaba configures this store to sync secrets using Alibaba Cloud provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alibaba: Option<Box<AlibabaProvider>>,
    /// OnePassword configures this store to sync secrets using the 1Password Cloud provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub onepassword: Option<Box<OnePasswordProvider>>,
    /// Webhook configures this store to sync secrets using a generic templated webhook
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Box<WebhookProvider>>,
    /// Kubernetes configures this store to sync secrets using a Kubernetes cluster provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<Box<KubernetesProvider>>,
    /// Fake configures a store with static key/value pairs
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fake: Option<Box<FakeProvider>>,
    /// Senhasegura configures this store to sync secrets using senhasegura provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senhasegura: Option<Box<SenhaseguraProvider>>,
    /// Scaleway configures this store to sync secrets using the Scaleway provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaleway: Option<Box<ScalewayProvider>>,
    /// Doppler configures this store to sync secrets using the Doppler provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doppler: Option<Box<DopplerProvider>>,
    /// Previder configures this store to sync secrets using the Previder provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previder: Option<Box<PreviderProvider>>,
    /// Onboardbase configures this store to sync secrets using the Onboardbase provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub onboardbase: Option<Box<OnboardbaseProvider>>,
    /// KeeperSecurity configures this store to sync secrets using the KeeperSecurity provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keepersecurity: Option<Box<KeeperSecurityProvider>>,
    /// Conjur configures this store to sync secrets using conjur provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conjur: Option<Box<ConjurProvider>>,
    /// Delinea DevOps Secrets Vault
    /// https://docs.delinea.com/online-help/products/devops-secrets-vault/current
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delinea: Option<Box<DelineaProvider>>,
    /// SecretServer configures this store to sync secrets using SecretServer provider
    /// https://docs.delinea.com/online-help/secret-server/start.htm
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secretserver: Option<Box<SecretServerProvider>>,
    /// Chef configures this store to sync secrets with chef server
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chef: Option<Box<ChefProvider>>,
    /// Pulumi configures this store to sync secrets using the Pulumi provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pulumi: Option<Box<PulumiProvider>>,
    /// Fortanix configures this store to sync secrets using the Fortanix provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fortanix: Option<Box<FortanixProvider>>,
    /// PasswordDepotProvider configures a store to sync secrets with a Password Depot instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passworddepot: Option<Box<PasswordDepotProvider>>,
    /// PassboltProvider defines configuration for the Passbolt provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passbolt: Option<Box<PassboltProvider>>,
    /// Device42 configures this store to sync secrets using the Device42 provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device42: Option<Box<Device42Provider>>,
    /// Infisical configures this store to sync secrets using the Infisical provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infisical: Option<Box<InfisicalProvider>>,
    /// Beyondtrust configures this store to sync secrets using Password Safe provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beyondtrust: Option<Box<BeyondtrustProvider>>,
    /// CloudruSM configures this store to sync secrets using the Cloud.ru Secret Manager provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloudrusm: Option<Box<CloudruSmProvider>>,
}

/// SecretStoreRetrySettings defines configuration for retrying failed requests to the provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreRetrySettings {
    /// MaxRetries is the maximum number of retry attempts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<i32>,
    /// RetryInterval is the interval between retry attempts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
}

/// SecretStoreStatus defines the observed state of the SecretStore.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<SecretStoreStatusCondition>,
    /// SecretStoreCapabilities defines the possible operations a SecretStore can do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<String>,
}

/// SecretStoreStatusCondition defines the observed condition of the SecretStore.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreStatusCondition {
    /// SecretStoreConditionType represents the condition type of the SecretStore.
    pub r#type: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub last_transition_time: Option<Time>,
}
