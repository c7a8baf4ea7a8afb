//! The `onepassword` harness: one 1Password Connect contract fake per test process (its own
//! thread and runtime, so it outlives each test's runtime), trusted through `SSL_CERT_FILE`
//! (the backend has no CA field, as upstream; the system roots honour that variable), and one
//! fresh vault per client.
//!
//! The suite's key `k` with a plain value is an item titled `k` with one field labelled `k`;
//! a JSON-object value is an item whose fields are the object's members. Reads and pushes name
//! the field by label (`property = k`), so find by name (which matches field labels, as
//! upstream) returns the suite's keys.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::onepassword::OnePasswordFake;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{
    OnePasswordAuth, OnePasswordAuthSecretRef, OnePasswordProvider, SecretStoreProvider,
};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The connect token the fake accepts.
pub const TOKEN: &str = "connect-token-for-tests";

/// The process's fake Connect server, started on first use.
pub fn fake() -> &'static OnePasswordFake {
    static FAKE: OnceLock<OnePasswordFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let fake = super::fake_on_own_runtime("1Password", || OnePasswordFake::start(TOKEN, &[]));
        let ca =
            std::env::temp_dir().join(format!("onepassword-fake-ca-{}.pem", std::process::id()));
        std::fs::write(&ca, &fake.server.ca_pem).expect("writing the fake's CA");
        // SAFETY: set once, before the first 1Password client loads the trust roots; other
        // tests of the process read no environment variable while a harness starts.
        unsafe { std::env::set_var("SSL_CERT_FILE", &ca) };
        fake
    })
}

/// A store of `vaults` (name, order) on the fake, with `token` as connect token.
pub fn store_provider(vaults: &[(&str, i64)]) -> SecretStoreProvider {
    SecretStoreProvider {
        onepassword: Some(Box::new(OnePasswordProvider {
            auth: OnePasswordAuth {
                secret_ref: OnePasswordAuthSecretRef {
                    connect_token_secret_ref: SecretKeySelector {
                        name: Some("connect".into()),
                        key: Some("token".into()),
                        namespace: None,
                    },
                },
            },
            connect_host: fake().server.url.clone(),
            vaults: vaults
                .iter()
                .map(|(name, order)| ((*name).to_owned(), *order))
                .collect(),
        })),
        ..SecretStoreProvider::default()
    }
}

/// A client of a store over `vaults`, authenticating with `token`.
pub async fn client(vaults: &[(&str, i64)], token: &str) -> SharedClient {
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, "connect", &[], &[("token", token)]);
    let store = secret_store(&unique_name("onepassword"), store_provider(vaults));
    client_for(&store, Arc::new(source)).await
}

/// The behaviour suite's view of the backend.
pub struct OnePasswordHarness;

#[async_trait]
impl Harness for OnePasswordHarness {
    fn name(&self) -> &'static str {
        "onepassword"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(key).with_property(key)
    }

    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef {
            property: Some(key.to_owned()),
            ..PushRemoteRef::new(key)
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let vault = unique_name("vault");
        let fake = fake();
        fake.add_vault(&vault);
        for (key, value) in seed {
            let fields: Vec<(String, String)> = match serde_json::from_str::<
                serde_json::Map<String, serde_json::Value>,
            >(value)
            {
                Ok(object) => object
                    .into_iter()
                    .map(|(label, value)| (label, value.as_str().unwrap_or_default().to_owned()))
                    .collect(),
                Err(_) => vec![((*key).to_owned(), (*value).to_owned())],
            };
            let fields: Vec<(&str, &str)> = fields
                .iter()
                .map(|(label, value)| (label.as_str(), value.as_str()))
                .collect();
            fake.add_item(&vault, key, "LOGIN", &fields, &[], &[]);
        }
        client(&[(&vault, 1)], TOKEN).await
    }
}
