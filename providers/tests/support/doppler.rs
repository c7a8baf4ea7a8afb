//! The `doppler` harness: one Doppler contract fake per test process (its own thread and
//! runtime, so it outlives each test's runtime), reached through `DOPPLER_BASE_URL` (upstream's
//! override of the API address) and trusted through `SSL_CERT_FILE` (the backend has no CA
//! field, as upstream), and one fresh project config with its own service token per client.
//!
//! Doppler names are upper snake case, so the suite's key `db-password` is the secret
//! `DB_PASSWORD`, and the store downloads with the `lower-kebab` name transformer so that find
//! returns the suite's keys.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::doppler::DopplerFake;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{
    DopplerAuth, DopplerAuthSecretRef, DopplerNameTransformer, DopplerProvider, SecretStoreProvider,
};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};

use super::{
    Features, Harness, NAMESPACE, client_for, secret_store, start_fake, trust_fakes_ca, unique_name,
};

/// The process's fake Doppler API, started on first use.
pub fn fake() -> &'static DopplerFake {
    static FAKE: OnceLock<DopplerFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let fake = start_fake("Doppler", DopplerFake::start);
        trust_fakes_ca("doppler", &fake.server.ca_pem);
        // SAFETY: set once, before the first Doppler client reads it (see `trust_fakes_ca`).
        unsafe { std::env::set_var("DOPPLER_BASE_URL", &fake.server.url) };
        fake
    })
}

/// The Doppler name of a suite key.
pub fn doppler_name(key: &str) -> String {
    key.to_uppercase().replace('-', "_")
}

/// A store authenticating with the token in Secret `doppler`, key `dopplerToken` (the default).
pub fn store_provider(
    project: Option<&str>,
    config: Option<&str>,
    transformer: Option<DopplerNameTransformer>,
) -> SecretStoreProvider {
    SecretStoreProvider {
        doppler: Some(Box::new(DopplerProvider {
            auth: DopplerAuth {
                secret_ref: Some(DopplerAuthSecretRef {
                    doppler_token: SecretKeySelector {
                        name: Some("doppler".into()),
                        key: None,
                        namespace: None,
                    },
                }),
                oidc_config: None,
            },
            project: project.map(str::to_owned),
            config: config.map(str::to_owned),
            name_transformer: transformer,
            format: None,
        })),
        ..SecretStoreProvider::default()
    }
}

/// A client of `provider` whose token Secret holds `token`.
pub async fn client(provider: SecretStoreProvider, token: &str) -> SharedClient {
    fake();
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "doppler",
        &[],
        &[("dopplerToken", token)],
    );
    let store = secret_store(&unique_name("doppler"), provider);
    client_for(&store, Arc::new(source)).await
}

/// The behaviour suite's view of the backend.
pub struct DopplerHarness;

#[async_trait]
impl Harness for DopplerHarness {
    fn name(&self) -> &'static str {
        "doppler"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(doppler_name(key))
    }

    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef::new(doppler_name(key))
    }

    fn json_ref(&self, key: &str, property: Option<&str>) -> RemoteRef {
        match property {
            Some(property) => self.value_ref(key).with_property(property),
            None => self.value_ref(key),
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let fake = fake();
        let project = unique_name("project");
        let token = format!("dp.st.{project}");
        fake.add_service_token(&token, &project, "prd");
        for (key, value) in seed {
            fake.set_secret(&project, "prd", &doppler_name(key), value);
        }
        let provider = store_provider(None, None, Some(DopplerNameTransformer::LowerKebab));
        client(provider, &token).await
    }
}
