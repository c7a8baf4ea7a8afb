//! The `conjur` harness: a Conjur contract fake of account [`ACCOUNT`] per client (started on
//! the test's runtime; every fake of the process shares one CA, trusted through the store's
//! `caBundle`, base64 as upstream's docs write it), holding the suite's secrets as variables named by the suite's keys. Clients
//! authenticate with the API key of [`LOGIN`].

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use contract_fakes::conjur::ConjurFake;
use external_secrets_crds::v1::{ConjurProvider, SecretStoreProvider};
use external_secrets_providers::backends::conjur::Conjur;
use external_secrets_providers::credentials::{
    CredentialResolver, MemorySecretSource, SecretSource,
};
use external_secrets_providers::provider::{BackendStates, ClientContext, Provider as _};
use external_secrets_providers::{Capabilities, ProviderError, SharedClient, StoreId};
use serde_json::{Value, json};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The account of every fake.
pub const ACCOUNT: &str = "acme";
/// The host whose API key the fake accepts.
pub const LOGIN: &str = "host/eso/reader";
/// Its API key.
pub const API_KEY: &str = "api-key-for-tests";
/// The Secret holding every credential of the tests.
pub const CREDENTIALS: &str = "conjur-credentials";

/// A new fake of [`ACCOUNT`] accepting [`LOGIN`]'s API key.
pub async fn start() -> ConjurFake {
    let fake = ConjurFake::start(ACCOUNT)
        .await
        .expect("starting the Conjur fake");
    fake.add_api_key(LOGIN, API_KEY);
    fake
}

/// A store spec on `fake` with `auth` as `spec.auth`.
pub fn spec(fake: &ConjurFake, auth: Value) -> ConjurProvider {
    let ca = base64::engine::general_purpose::STANDARD.encode(&fake.server.ca_pem);
    serde_json::from_value(json!({
        "url": fake.server.url,
        "caBundle": ca,
        "auth": auth,
    }))
    .expect("a valid conjur spec")
}

/// API key auth reading [`CREDENTIALS`] keys `user` and `apikey`.
pub fn api_key_auth() -> Value {
    json!({"apikey": {
        "account": ACCOUNT,
        "userRef": {"name": CREDENTIALS, "key": "user"},
        "apiKeyRef": {"name": CREDENTIALS, "key": "apikey"},
    }})
}

/// The Secret [`CREDENTIALS`] holding `data`, in [`NAMESPACE`].
pub fn credentials(data: &[(&str, &str)]) -> Arc<dyn SecretSource> {
    Arc::new(MemorySecretSource::default().with_secret(NAMESPACE, CREDENTIALS, &[], data))
}

/// The credentials of [`api_key_auth`].
pub const API_KEY_CREDENTIALS: &[(&str, &str)] = &[("user", LOGIN), ("apikey", API_KEY)];

/// A client of `spec` in a SecretStore of [`NAMESPACE`] reading credentials from `source`,
/// straight from the backend (so that refused credentials are returned, not a panic).
pub async fn try_client(
    spec: &ConjurProvider,
    source: Arc<dyn SecretSource>,
) -> Result<SharedClient, ProviderError> {
    let store = StoreId::secret_store(NAMESPACE, unique_name("conjur"));
    Conjur.validate_store(spec, &store)?;
    let states = BackendStates::default();
    let context = ClientContext {
        store: &store,
        credentials: CredentialResolver::new(source, store.clone(), Some(NAMESPACE.into())),
        states: &states,
    };
    Conjur.new_client(spec, context).await
}

/// The behaviour suite's view of the backend.
pub struct ConjurHarness;

#[async_trait]
impl Harness for ConjurHarness {
    fn name(&self) -> &'static str {
        "conjur"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: false,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let fake = start().await;
        for (key, value) in seed {
            fake.set_variable(key, Some(value), &[]);
        }
        let provider = SecretStoreProvider {
            conjur: Some(Box::new(spec(&fake, api_key_auth()))),
            ..SecretStoreProvider::default()
        };
        let source = MemorySecretSource::default().with_secret(
            NAMESPACE,
            CREDENTIALS,
            &[],
            API_KEY_CREDENTIALS,
        );
        client_for(
            &secret_store(&unique_name("conjur"), provider),
            Arc::new(source),
        )
        .await
    }
}
