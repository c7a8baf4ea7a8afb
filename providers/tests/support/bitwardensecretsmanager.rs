//! The `bitwardensecretsmanager` harness: one `bitwarden-sdk-server` contract fake per test
//! process (on a runtime of its own), trusted through the store's `caBundle`, and a fresh
//! machine account, organization and project per client (find lists a whole organization).
//!
//! The suite's key `k` is the secret named `k` in the store's project; found secrets are keyed
//! by their ids, which the harness remembers from seeding.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use contract_fakes::bitwarden::{Account, BitwardenFake};
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{
    BitwardenSecretsManagerAuth, BitwardenSecretsManagerProvider, BitwardenSecretsManagerSecretRef,
    SecretStoreProvider,
};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The process's fake SDK server, started on first use.
pub fn fake() -> &'static BitwardenFake {
    static FAKE: OnceLock<BitwardenFake> = OnceLock::new();
    FAKE.get_or_init(|| super::start_fake("Bitwarden SDK server", BitwardenFake::start))
}

/// A UUID no other test uses.
pub fn unique_uuid() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let next = NEXT.fetch_add(1, Ordering::SeqCst);
    format!("0f3c6a9e-2b1d-4e7a-8c5f-{next:012x}")
}

/// A machine account of its own organization with one writable project.
pub struct Tenant {
    /// The access token.
    pub token: String,
    /// The organization id.
    pub organization: String,
    /// The project id.
    pub project: String,
}

impl Tenant {
    /// A new account on the fake, logging in with `api_url` and `identity_url` (empty: none).
    pub fn new(api_url: &str, identity_url: &str) -> Self {
        let tenant = Self {
            token: format!("0.{}.machine-secret:a2V5", unique_uuid()),
            organization: unique_uuid(),
            project: unique_uuid(),
        };
        fake().add_account(Account {
            token: &tenant.token,
            api_url,
            identity_url,
            organization: &tenant.organization,
        });
        fake().add_project(&tenant.organization, &tenant.project);
        tenant
    }

    /// Stores `value` as a secret named `key` in the tenant's project, returning its id.
    pub fn seed(&self, key: &str, value: &str) -> String {
        fake().add_secret(&self.organization, &self.project, key, value, "")
    }

    /// The store section for this tenant on the fake (caBundle: the fake's CA).
    pub fn provider(&self) -> BitwardenSecretsManagerProvider {
        BitwardenSecretsManagerProvider {
            bitwarden_server_sdkurl: Some(fake().server.url.clone()),
            ca_bundle: Some(fake().server.ca_pem.clone()),
            organization_id: self.organization.clone(),
            project_id: self.project.clone(),
            auth: BitwardenSecretsManagerAuth {
                secret_ref: BitwardenSecretsManagerSecretRef {
                    credentials: SecretKeySelector {
                        name: Some("bitwarden".into()),
                        key: Some("token".into()),
                        namespace: None,
                    },
                },
            },
            ..BitwardenSecretsManagerProvider::default()
        }
    }

    /// A client of `provider`, whose Secret holds `token`.
    pub async fn client_of(provider: BitwardenSecretsManagerProvider, token: &str) -> SharedClient {
        let source = MemorySecretSource::default().with_secret(
            NAMESPACE,
            "bitwarden",
            &[],
            &[("token", token)],
        );
        let provider = SecretStoreProvider {
            bitwardensecretsmanager: Some(Box::new(provider)),
            ..SecretStoreProvider::default()
        };
        let store = secret_store(&unique_name("bitwarden"), provider);
        client_for(&store, Arc::new(source)).await
    }

    /// A client of this tenant's store.
    pub async fn client(&self) -> SharedClient {
        Self::client_of(self.provider(), &self.token).await
    }
}

/// The behaviour suite's view of the backend.
#[derive(Default)]
pub struct BitwardenHarness {
    /// Ids of the secrets last seeded, by name.
    ids: Mutex<HashMap<String, String>>,
}

#[async_trait]
impl Harness for BitwardenHarness {
    fn name(&self) -> &'static str {
        "bitwardensecretsmanager"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    fn found_key(&self, name: &str) -> String {
        let ids = self.ids.lock().unwrap_or_else(|poison| poison.into_inner());
        ids.get(name).cloned().unwrap_or_else(|| name.to_owned())
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let tenant = Tenant::new("", "");
        let mut ids = HashMap::new();
        for (key, value) in seed {
            ids.insert((*key).to_owned(), tenant.seed(key, value));
        }
        *self.ids.lock().unwrap_or_else(|poison| poison.into_inner()) = ids;
        tenant.client().await
    }
}
