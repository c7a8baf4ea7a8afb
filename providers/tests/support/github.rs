//! The `github` harness: one GitHub contract fake per test process (its own thread and runtime),
//! reached as a GitHub Enterprise Server `url` and trusted through `SSL_CERT_FILE` (the backend
//! has no CA field, as upstream), and one fresh repository scope per client.
//!
//! The backend is write-only: the suite's reads must be refused, and what a push wrote is read
//! back from the fake, which opened the sealed value with the repository's private key.

use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use contract_fakes::github::{GithubFake, Scope};
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{GithubAppAuth, GithubProvider, SecretStoreProvider};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::{Capabilities, ProviderError, SecretValue, SharedClient};

use super::{
    Features, Harness, NAMESPACE, client_for, secret_store, start_fake, trust_fakes_ca, unique_name,
};

/// The App id the fake knows.
pub const APP_ID: i64 = 4242;

/// The installation the fake issues tokens for.
pub const INSTALLATION_ID: i64 = 777;

/// The organization every harness scope lives in.
pub const ORG: &str = "acme";

/// The App's private key (PKCS#1, as GitHub issues them; a test key).
pub const APP_KEY: &str = include_str!("../data/github-app-key.pem");

/// The process's fake GitHub, started on first use.
pub fn fake() -> &'static GithubFake {
    static FAKE: OnceLock<GithubFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let fake = start_fake("GitHub", || {
            GithubFake::start(APP_ID, INSTALLATION_ID, APP_KEY)
        });
        trust_fakes_ca("github", &fake.server.ca_pem);
        fake
    })
}

/// A github store section on the fake, signing with the key in Secret `github-app`, key
/// `private-key`; `configure` sets organization, repository, environment and visibility.
pub fn store_provider(configure: impl FnOnce(&mut GithubProvider)) -> SecretStoreProvider {
    let mut github = GithubProvider {
        url: fake().server.url.clone(),
        app_id: APP_ID,
        installation_id: INSTALLATION_ID,
        organization: ORG.into(),
        auth: GithubAppAuth {
            private_key: SecretKeySelector {
                name: Some("github-app".into()),
                key: Some("private-key".into()),
                namespace: None,
            },
        },
        ..GithubProvider::default()
    };
    configure(&mut github);
    SecretStoreProvider {
        github: Some(Box::new(github)),
        ..SecretStoreProvider::default()
    }
}

/// A client of a store configured by `configure`, signing with `key_pem`.
pub async fn client(key_pem: &str, configure: impl FnOnce(&mut GithubProvider)) -> SharedClient {
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "github-app",
        &[],
        &[("private-key", key_pem)],
    );
    let store = secret_store(&unique_name("github"), store_provider(configure));
    client_for(&store, Arc::new(source)).await
}

/// The behaviour suite's view of the backend: each client writes to a fresh repository.
#[derive(Default)]
pub struct GithubHarness {
    /// The scope of the client made last (the suite reads back what that client pushed).
    scope: Mutex<Option<Scope>>,
}

#[async_trait]
impl Harness for GithubHarness {
    fn name(&self) -> &'static str {
        "github"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: false,
            delete_removes: true,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::WriteOnly
    }

    async fn read_back(
        &self,
        _client: &SharedClient,
        key: &str,
    ) -> Result<SecretValue, ProviderError> {
        let scope = self
            .scope
            .lock()
            .unwrap()
            .clone()
            .expect("a client was made");
        fake()
            .secret(&scope, key)
            .map(|stored| SecretValue::new(stored.value))
            .ok_or_else(|| ProviderError::not_found(format!("{key} is not in the fake")))
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let repository = unique_name("repo");
        let scope = Scope::Repository(ORG.into(), repository.clone());
        let fake = fake();
        fake.add_scope(&scope);
        for (key, value) in seed {
            fake.set_secret(&scope, key, value.as_bytes(), None);
        }
        *self.scope.lock().unwrap() = Some(scope);
        client(APP_KEY, |github| github.repository = Some(repository)).await
    }
}
