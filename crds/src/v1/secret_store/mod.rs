//! SecretStore and ClusterSecretStore: where and how to reach a secret backend.
//!
//! `SecretStoreProvider` holds one optional block per backend; each backend's types live in
//! a submodule of its own.

pub mod akeyless;
pub mod aws;
pub mod azure_key_vault;
pub mod barbican;
pub mod beyondtrust;
pub mod beyondtrust_workload_credentials;
pub mod bitwarden;
pub mod chef;
pub mod cloudru;
pub mod conjur;
pub mod delinea;
pub mod doppler;
pub mod dvls;
pub mod fake;
pub mod fortanix;
pub mod gcp;
pub mod github;
pub mod gitlab;
pub mod ibm;
pub mod infisical;
pub mod keeper_security;
pub mod kubernetes;
pub mod kubernetes_crd;
pub mod nebius;
pub mod ngrok;
pub mod onboardbase;
pub mod onepassword;
pub mod onepassword_sdk;
pub mod openbao;
pub mod oracle;
pub mod ovh;
pub mod passbolt;
pub mod password_depot;
pub mod previder;
pub mod pulumi;
pub mod scaleway;
pub mod secret_server;
pub mod senhasegura;
pub mod vault;
pub mod volcengine;
pub mod webhook;
pub mod yandex;
pub mod yandex_certificate_manager;
pub mod yandex_lockbox;

pub use akeyless::*;
pub use aws::*;
pub use azure_key_vault::*;
pub use barbican::*;
pub use beyondtrust::*;
pub use beyondtrust_workload_credentials::*;
pub use bitwarden::*;
pub use chef::*;
pub use cloudru::*;
pub use conjur::*;
pub use delinea::*;
pub use doppler::*;
pub use dvls::*;
pub use fake::*;
pub use fortanix::*;
pub use gcp::*;
pub use github::*;
pub use gitlab::*;
pub use ibm::*;
pub use infisical::*;
pub use keeper_security::*;
pub use kubernetes::*;
pub use kubernetes_crd::*;
pub use nebius::*;
pub use ngrok::*;
pub use onboardbase::*;
pub use onepassword::*;
pub use onepassword_sdk::*;
pub use openbao::*;
pub use oracle::*;
pub use ovh::*;
pub use passbolt::*;
pub use password_depot::*;
pub use previder::*;
pub use pulumi::*;
pub use scaleway::*;
pub use secret_server::*;
pub use senhasegura::*;
pub use vault::*;
pub use volcengine::*;
pub use webhook::*;
pub use yandex::*;
pub use yandex_certificate_manager::*;
pub use yandex_lockbox::*;

use crate::meta::{LabelSelector, SecretKeySelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SecretStoreSpec defines the desired state of SecretStore.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "external-secrets.io",
    version = "v1",
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
    /// Used to configure store refresh interval. Accepts either an integer number
    /// of seconds (legacy) or a Go duration string such as "1h" or "5m". Empty or
    /// 0 will default to the controller config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::int_or_string")]
    pub refresh_interval: Option<IntOrString>,
    /// Used to constrain a ClusterSecretStore to specific namespaces. Relevant only to ClusterSecretStore.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ClusterSecretStoreCondition>,
}

/// SecretStoreSpec defines the desired state of SecretStore.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "external-secrets.io",
    version = "v1",
    kind = "ClusterSecretStore",
    plural = "clustersecretstores",
    status = "SecretStoreStatus",
    shortname = "css",
    category = "external-secrets",
    printcolumn = r#"{"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name": "Status", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    printcolumn = r#"{"name": "Capabilities", "type": "string", "jsonPath": ".status.capabilities"}"#,
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}"#,
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

/// ClusterSecretStoreCondition describes a condition by which to choose namespaces to process ExternalSecrets in
/// for a ClusterSecretStore instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSecretStoreCondition {
    /// Choose namespace using a labelSelector
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Choose namespaces by name
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(
        regex(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    ))]
    pub namespaces: Vec<String>,
    /// Choose namespaces by using regex matching
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespace_regexes: Vec<String>,
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
    /// OVHcloud configures this store to sync secrets using the OVHcloud provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ovh: Option<Box<OvhProvider>>,
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
    /// Note: This provider only supports write operations (PushSecret) and cannot fetch secrets from GitHub
    #[serde(skip_serializing_if = "Option::is_none")]
    pub github: Option<Box<GithubProvider>>,
    /// GitLab configures this store to sync secrets using GitLab Variables provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gitlab: Option<Box<GitlabProvider>>,
    /// OnePassword configures this store to sync secrets using the 1Password Cloud provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub onepassword: Option<Box<OnePasswordProvider>>,
    /// OnePasswordSDK configures this store to use 1Password's new Go SDK to sync secrets.
    #[serde(rename = "onepasswordSDK", skip_serializing_if = "Option::is_none")]
    pub onepassword_sdk: Option<Box<OnePasswordSdkProvider>>,
    /// Webhook configures this store to sync secrets using a generic templated webhook
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Box<WebhookProvider>>,
    /// Kubernetes configures this store to sync secrets using a Kubernetes cluster provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<Box<KubernetesProvider>>,
    /// CRD configures this store to sync secrets from arbitrary Kubernetes resources,
    /// including both custom resources (CRDs) and core API resources. Resources are
    /// selected by API group, version and kind, where group can be "" (empty string)
    /// for core resources such as ConfigMap. Reading the core v1 Secret is
    /// intentionally blocked — use the Kubernetes provider for that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crd: Option<Box<CrdProvider>>,
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
    /// PassboltProvider provides access to Passbolt secrets manager.
    /// See: https://www.passbolt.com.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passbolt: Option<Box<PassboltProvider>>,
    /// DVLS configures this store to sync secrets using Devolutions Server provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dvls: Option<Box<DvlsProvider>>,
    /// Infisical configures this store to sync secrets using the Infisical provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infisical: Option<Box<InfisicalProvider>>,
    /// Beyondtrust configures this store to sync secrets using Password Safe provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beyondtrust: Option<Box<BeyondtrustProvider>>,
    /// BeyondtrustWorkloadCredentials configures this store to sync secrets using the BeyondTrust Workload Credentials provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beyondtrustworkloadcredentials: Option<Box<BeyondtrustWorkloadCredentialsProvider>>,
    /// CloudruSM configures this store to sync secrets using the Cloud.ru Secret Manager provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloudrusm: Option<Box<CloudruSmProvider>>,
    /// Volcengine configures this store to sync secrets using the Volcengine provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volcengine: Option<Box<VolcengineProvider>>,
    /// Ngrok configures this store to sync secrets using the ngrok provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ngrok: Option<Box<NgrokProvider>>,
    /// Barbican configures this store to sync secrets using the OpenStack Barbican provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub barbican: Option<Box<BarbicanProvider>>,
    /// NebiusMysterybox configures this store to sync secrets using NebiusMysterybox provider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nebiusmysterybox: Option<Box<NebiusMysteryboxProvider>>,
    /// OpenBao configures this store to sync secrets using the OpenBao provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_bao: Option<Box<OpenBaoProvider>>,
}

/// CAProvider provides a custom certificate authority for accessing the provider's store.
/// The CAProvider points to a Secret or ConfigMap resource that contains a PEM-encoded certificate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaProvider {
    /// The type of provider to use such as "Secret", or "ConfigMap".
    pub r#type: CaProviderType,
    /// The name of the object located at the provider type.
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: String,
    /// The key where the CA certificate can be found in the Secret or ConfigMap.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub key: Option<String>,
    /// The namespace the Provider type is in.
    /// Can only be defined when used in a ClusterSecretStore.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    )]
    pub namespace: Option<String>,
}

/// CAProviderType defines the type of provider for certificate authority.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum CaProviderType {
    Secret,
    ConfigMap,
}

/// A CA certificate read from a key of a Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretCaProvider {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert_secret_ref: Option<SecretKeySelector>,
}

/// SecretStoreRetrySettings defines the retry settings for accessing external secrets manager stores.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreRetrySettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<i32>,
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

/// SecretStoreStatusCondition contains condition information for a SecretStore.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreStatusCondition {
    /// SecretStoreConditionType represents the condition of the SecretStore.
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
