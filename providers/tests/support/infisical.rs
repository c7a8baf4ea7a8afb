//! The `infisical` harness: one Infisical contract fake per test process (its own thread and
//! runtime, so it outlives each test's runtime), trusted through the store's `caBundle`, with
//! one project (`behaviour`, environment `dev`) and one fresh folder per client, which is the
//! store's `secretsPath`. Clients log in with universal auth.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::infisical::InfisicalFake;
use external_secrets_crds::v1::{InfisicalProvider, SecretStoreProvider};
use external_secrets_providers::backends::infisical::Infisical;
use external_secrets_providers::credentials::{CredentialResolver, MemorySecretSource};
use external_secrets_providers::provider::{BackendStates, ClientContext, Provider as _};
use external_secrets_providers::{ProviderError, SharedClient, StoreId};
use k8s_openapi::ByteString;
use serde_json::{Value, json};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The project slug of the fake.
pub const PROJECT: &str = "behaviour";
/// Its environment.
pub const ENVIRONMENT: &str = "dev";
/// The universal-auth client id the fake accepts.
pub const CLIENT_ID: &str = "machine-identity-client";
/// Its client secret.
pub const CLIENT_SECRET: &str = "client-secret-for-tests";
/// The Secret holding every credential of the tests.
pub const CREDENTIALS: &str = "infisical-credentials";

/// The process's fake Infisical, started on first use, accepting [`CLIENT_ID`].
pub fn fake() -> &'static InfisicalFake {
    static FAKE: OnceLock<InfisicalFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime for the Infisical fake");
            runtime.block_on(async move {
                let fake = start().await;
                sender.send(fake).expect("handing the fake over");
                std::future::pending::<()>().await;
            });
        });
        receiver.recv().expect("the Infisical fake started")
    })
}

/// A new fake with project [`PROJECT`] (environments `dev`, `prod`), accepting [`CLIENT_ID`].
pub async fn start() -> InfisicalFake {
    let fake = InfisicalFake::start(PROJECT, &[ENVIRONMENT, "prod"])
        .await
        .expect("starting the Infisical fake");
    fake.accept_login(
        "universal-auth",
        json!({"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET}),
    );
    fake
}

/// A store spec on the fake over folder `path`; `auth` is `spec.auth`, `extra` is merged into
/// `secretsScope`.
pub fn spec(path: &str, auth: Value, scope: Value) -> InfisicalProvider {
    spec_on(fake(), path, auth, scope)
}

/// [`spec`] on another fake.
pub fn spec_on(server: &InfisicalFake, path: &str, auth: Value, scope: Value) -> InfisicalProvider {
    let mut secrets_scope = json!({
        "projectSlug": PROJECT, "environmentSlug": ENVIRONMENT, "secretsPath": path,
    });
    if let (Some(base), Some(extra)) = (secrets_scope.as_object_mut(), scope.as_object()) {
        base.extend(extra.clone());
    }
    let mut spec: InfisicalProvider = serde_json::from_value(json!({
        "hostAPI": format!("{}/api", server.server.url),
        "auth": auth,
        "secretsScope": secrets_scope,
    }))
    .expect("a valid infisical spec");
    spec.ca_bundle = Some(ByteString(server.server.ca_pem.clone().into_bytes()));
    spec
}

/// Universal auth reading the Secret [`CREDENTIALS`].
pub fn universal_auth() -> Value {
    json!({"universalAuthCredentials": {
        "clientId": {"name": CREDENTIALS, "key": "clientId"},
        "clientSecret": {"name": CREDENTIALS, "key": "clientSecret"},
    }})
}

/// A client of `spec` in a SecretStore of [`NAMESPACE`] whose Secret [`CREDENTIALS`] holds
/// `credentials`.
pub async fn try_client(
    spec: &InfisicalProvider,
    credentials: &[(&str, &str)],
) -> Result<SharedClient, ProviderError> {
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, CREDENTIALS, &[], credentials);
    let store = StoreId::secret_store(NAMESPACE, unique_name("infisical"));
    Infisical.validate_store(spec, &store)?;
    let states = BackendStates::default();
    let context = ClientContext {
        store: &store,
        credentials: CredentialResolver::new(
            Arc::new(source),
            store.clone(),
            Some(NAMESPACE.into()),
        ),
        states: &states,
    };
    Infisical.new_client(spec, context).await
}

/// The credentials of [`universal_auth`].
pub const UNIVERSAL: &[(&str, &str)] = &[("clientId", CLIENT_ID), ("clientSecret", CLIENT_SECRET)];

/// A fresh folder of the fake's `dev` environment.
pub fn folder() -> String {
    format!("/{}", unique_name("suite"))
}

/// The behaviour suite's view of the backend.
pub struct InfisicalHarness;

#[async_trait]
impl Harness for InfisicalHarness {
    fn name(&self) -> &'static str {
        "infisical"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let path = folder();
        for (key, value) in seed {
            fake().set_secret(ENVIRONMENT, &path, key, value);
        }
        let provider = SecretStoreProvider {
            infisical: Some(Box::new(spec(&path, universal_auth(), json!({})))),
            ..SecretStoreProvider::default()
        };
        let source =
            MemorySecretSource::default().with_secret(NAMESPACE, CREDENTIALS, &[], UNIVERSAL);
        client_for(
            &secret_store(&unique_name("infisical"), provider),
            Arc::new(source),
        )
        .await
    }
}
