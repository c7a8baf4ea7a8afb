//! Harnesses for the behaviour suite: one per compiled provider, each serving its client from a
//! real server (in-process for `fake`, a local HTTP server for `webhook`, a loopback Kubernetes
//! API server for `kubernetes`, an OpenBao dev server for `vault`, moto's server for `aws`, cloudbox for `gcpsm`).
//!
//! Adding a provider: implement [`Harness`] (build a store whose backend holds the seed data,
//! say which optional operations the backend offers and, where the provider addresses values
//! differently, how the suite's keys map to its references) and add it to [`harnesses`].

#![allow(dead_code)]

#[cfg(feature = "akeyless")]
pub mod akeyless;
#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "azurekv")]
pub mod azurekv;
#[cfg(feature = "vault")]
pub mod bao_process;
#[cfg(feature = "bitwardensecretsmanager")]
pub mod bitwardensecretsmanager;
#[cfg(feature = "conjur")]
pub mod conjur;
#[cfg(feature = "crd")]
pub mod crd;
#[cfg(feature = "delinea")]
pub mod delinea;
#[cfg(feature = "doppler")]
pub mod doppler;
#[cfg(feature = "fake")]
mod fake;
#[cfg(feature = "gcpsm")]
pub mod gcp;
#[cfg(feature = "github")]
pub mod github;
#[cfg(feature = "gitlab")]
pub mod gitlab;
#[cfg(feature = "ibm")]
pub mod ibm;
#[cfg(feature = "infisical")]
pub mod infisical;
#[cfg(feature = "keepersecurity")]
pub mod keepersecurity;
#[cfg(feature = "kubernetes")]
pub mod kubernetes;
#[cfg(feature = "onepassword")]
pub mod onepassword;
#[cfg(feature = "oracle")]
pub mod oracle;
#[cfg(feature = "secretserver")]
pub mod secretserver;
#[cfg(feature = "vault")]
pub mod vault;
#[cfg(feature = "webhook")]
mod webhook_server;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::{SecretStore, SecretStoreProvider, SecretStoreSpec};
use external_secrets_providers::credentials::{MemorySecretSource, SecretSource};
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};
use external_secrets_providers::{
    Capabilities, ClientManager, ManagerSettings, ProviderError, SecretValue, SharedClient,
    StoreRef,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The namespace test stores live in.
pub const NAMESPACE: &str = "behaviour";

/// Which optional operations a backend offers (upstream's providers differ here).
#[derive(Debug, Clone, Copy)]
pub struct Features {
    /// `get_all_secrets` by name regexp.
    pub find_by_name: bool,
    /// `delete_secret` removes what `push_secret` wrote.
    pub delete_removes: bool,
}

/// One provider under test.
#[async_trait]
pub trait Harness: Send + Sync {
    /// The provider's name, for assertion messages.
    fn name(&self) -> &'static str;

    /// What the backend offers beyond the mandatory operations.
    fn features(&self) -> Features;

    /// Where the provider reads the suite's secret `key` as one value (most: the key itself).
    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(key)
    }

    /// Where the provider pushes the suite's secret `key` (most: the key itself).
    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef::new(key)
    }

    /// How the backend spells a name (a key, or a find's name expression) the suite uses (most:
    /// unchanged; GitLab variable keys have `_` where the suite has `-`).
    fn remote_name(&self, name: &str) -> String {
        name.to_owned()
    }

    /// The key a find returns for the secret the suite names `name` (most: the backend's
    /// spelling of the name; Bitwarden keys found secrets by id).
    fn found_key(&self, name: &str) -> String {
        self.remote_name(name)
    }

    /// How a seeded `value` comes back from a find (most: unchanged).
    fn found_value(&self, value: &str) -> String {
        value.to_owned()
    }

    /// The part of a found value [`Self::found_value`] describes (most: all of it; backends
    /// that return whole objects with server-set fields pick the seeded part).
    fn seed_of_found(&self, found: &str) -> String {
        found.to_owned()
    }

    /// Where the provider reads the suite's JSON-object secret `key`, whole (`None`, as a map)
    /// or one member (most: the key, with the member as property).
    fn json_ref(&self, key: &str, property: Option<&str>) -> RemoteRef {
        match property {
            Some(property) => RemoteRef::new(key).with_property(property),
            None => RemoteRef::new(key),
        }
    }

    /// The PushSecret metadata the suite's pushes carry (most: none; Secret Server needs a
    /// folder and a template to create a secret).
    fn push_metadata(&self) -> Option<serde_json::Value> {
        None
    }

    /// What the backend's stores can do (most: read and write); a backend that cannot write
    /// must refuse pushes as `Unsupported`.
    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    /// The value the backend holds at the suite's key `key` (`NotFound` when none), as the
    /// suite checks pushes and deletes: most read it through `client`; write-only backends ask
    /// their server.
    async fn read_back(
        &self,
        client: &SharedClient,
        key: &str,
    ) -> Result<SecretValue, ProviderError> {
        client.get_secret(&self.value_ref(key)).await
    }

    /// A client whose backend holds `seed` (key, value) and nothing else.
    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient;
}

/// Every provider compiled into this build.
#[allow(clippy::vec_init_then_push)] // the pushes depend on features
pub async fn harnesses() -> Vec<Box<dyn Harness>> {
    #[allow(unused_mut)]
    let mut all: Vec<Box<dyn Harness>> = Vec::new();
    #[cfg(feature = "fake")]
    all.push(Box::new(fake::FakeHarness));
    #[cfg(feature = "webhook")]
    all.push(Box::new(webhook_server::WebhookHarness::start().await));
    #[cfg(feature = "kubernetes")]
    all.push(Box::new(kubernetes::KubernetesHarness::start().await));
    #[cfg(feature = "vault")]
    all.push(Box::new(vault::VaultHarness::start()));
    #[cfg(feature = "aws")]
    all.push(Box::new(aws::SecretsManagerHarness));
    #[cfg(feature = "aws")]
    all.push(Box::new(aws::ParameterStoreHarness));
    #[cfg(feature = "crd")]
    all.push(Box::new(crd::CrdHarness::start().await));
    #[cfg(feature = "gcpsm")]
    all.push(Box::new(gcp::GcpsmHarness));
    #[cfg(feature = "azurekv")]
    all.push(Box::new(azurekv::AzureKvHarness));
    #[cfg(feature = "onepassword")]
    all.push(Box::new(onepassword::OnePasswordHarness));
    #[cfg(feature = "infisical")]
    all.push(Box::new(infisical::InfisicalHarness));
    #[cfg(feature = "akeyless")]
    all.push(Box::new(akeyless::AkeylessHarness));
    #[cfg(feature = "doppler")]
    all.push(Box::new(doppler::DopplerHarness));
    #[cfg(feature = "gitlab")]
    all.push(Box::new(gitlab::GitlabHarness));
    #[cfg(feature = "github")]
    all.push(Box::new(github::GithubHarness::default()));
    #[cfg(feature = "delinea")]
    all.push(Box::new(delinea::DelineaHarness::new()));
    #[cfg(feature = "bitwardensecretsmanager")]
    all.push(Box::new(
        bitwardensecretsmanager::BitwardenHarness::default(),
    ));
    #[cfg(feature = "ibm")]
    all.push(Box::new(ibm::IbmHarness));
    #[cfg(feature = "oracle")]
    all.push(Box::new(oracle::OracleHarness));
    #[cfg(feature = "keepersecurity")]
    all.push(Box::new(keepersecurity::KeeperHarness));
    #[cfg(feature = "secretserver")]
    all.push(Box::new(secretserver::SecretServerHarness::new()));
    #[cfg(feature = "conjur")]
    all.push(Box::new(conjur::ConjurHarness));
    all
}

/// A SecretStore in [`NAMESPACE`] named `name` with `provider`.
pub fn secret_store(name: &str, provider: SecretStoreProvider) -> SecretStore {
    SecretStore {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NAMESPACE.to_owned()),
            uid: Some(format!("uid-{name}")),
            generation: Some(1),
            ..ObjectMeta::default()
        },
        spec: SecretStoreSpec {
            provider,
            ..SecretStoreSpec::default()
        },
        status: None,
    }
}

/// A client of `store` through the whole stack controllers use (registry, cache, limits).
pub async fn client_for(store: &SecretStore, source: Arc<MemorySecretSource>) -> SharedClient {
    client_with_source(store, source).await
}

/// Like [`client_for`], with any credential source.
pub async fn client_with_source(
    store: &SecretStore,
    source: Arc<dyn SecretSource>,
) -> SharedClient {
    let manager = ClientManager::new(source, ManagerSettings::default());
    manager
        .client(&StoreRef::from(store), Some(NAMESPACE))
        .await
        .expect("client builds")
}

/// Starts a contract fake on a thread and runtime of its own, so that it outlives the runtime
/// of the test that first needed it (each `#[tokio::test]` has its own).
pub fn start_fake<Fake, Start, Started>(what: &'static str, start: Start) -> Fake
where
    Fake: Send + 'static,
    Start: FnOnce() -> Started + Send + 'static,
    Started: std::future::Future<Output = std::io::Result<Fake>>,
{
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|error| panic!("runtime for the {what} fake: {error}"));
        runtime.block_on(async move {
            let fake = start()
                .await
                .unwrap_or_else(|error| panic!("starting the {what} fake: {error}"));
            let _ = sender.send(fake);
            std::future::pending::<()>().await;
        });
    });
    receiver
        .recv()
        .unwrap_or_else(|_| panic!("the {what} fake did not start"))
}

/// Makes the system trust roots of this process include the contract fakes' CA `pem`, for
/// backends without a CA field (as upstream's): writes it to a file `SSL_CERT_FILE` names.
/// Every fake of a process shares that CA, so harnesses calling this name the same one.
pub fn trust_fakes_ca(what: &str, pem: &str) {
    let ca = std::env::temp_dir().join(format!("{what}-fake-ca-{}.pem", std::process::id()));
    std::fs::write(&ca, pem).expect("writing the fakes' CA");
    // SAFETY: called while a harness starts, before its backend's first client loads the
    // trust roots; other tests of the process read no environment variable meanwhile.
    unsafe { std::env::set_var("SSL_CERT_FILE", &ca) };
}

/// A store name no other test uses.
pub fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::SeqCst))
}

/// A loopback API server with [`NAMESPACE`] and ServiceAccount `account` (carrying
/// `annotations`) in it, and its admin client: for auth methods built on ServiceAccounts.
pub async fn cluster_with_service_account(
    account: &str,
    annotations: &[(&str, &str)],
) -> (loopback_apiserver::LoopbackServer, kube::Client) {
    use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
    use kube::api::{Api, PostParams};
    let options = loopback_apiserver::Options::default();
    let loopback = loopback_apiserver::LoopbackServer::start(options)
        .await
        .expect("starting the loopback API server");
    let admin = loopback.client().await.expect("loopback client");
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(admin.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("creating the namespace");
    let annotations = annotations
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    let account = ServiceAccount {
        metadata: ObjectMeta {
            name: Some(account.to_owned()),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    };
    Api::<ServiceAccount>::namespaced(admin.clone(), NAMESPACE)
        .create(&PostParams::default(), &account)
        .await
        .expect("creating the service account");
    (loopback, admin)
}
