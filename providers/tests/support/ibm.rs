//! The `ibm` harness: a fresh IBM contract fake (IAM and Secrets Manager on one server, on a
//! runtime of its own) per client, trusted through `SSL_CERT_FILE` (the provider has no CA
//! field, as upstream), and API key auth.
//!
//! The suite's key `k` is the `arbitrary` secret `k` of group `suite` (`suite/arbitrary/k`); a
//! seeded JSON object is also the `kv` secret `k` (`suite/kv/k`), read for properties and maps.

use std::sync::{Arc, Once};

use async_trait::async_trait;
use contract_fakes::ibm::IbmFake;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{IbmAuth, IbmAuthSecretRef, IbmProvider, SecretStoreProvider};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};
use external_secrets_providers::{Capabilities, SharedClient};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The API key the fakes' IAM accepts.
pub const API_KEY: &str = "ibm-api-key-for-tests";

/// The secret group the harness seeds.
pub const GROUP: &str = "suite";

/// A new fake (trusted by this process), with no secrets.
pub fn fake() -> IbmFake {
    static TRUST: Once = Once::new();
    let fake = super::start_fake("IBM", || IbmFake::start(API_KEY));
    TRUST.call_once(|| super::trust_fakes_ca("ibm", &fake.server.ca_pem));
    fake
}

/// An ibm store section on `fake` with API key auth, `configure` applied.
pub fn store_provider(
    fake: &IbmFake,
    configure: impl FnOnce(&mut IbmProvider),
) -> SecretStoreProvider {
    let mut ibm = IbmProvider {
        service_url: Some(fake.server.url.clone()),
        auth: IbmAuth {
            secret_ref: Some(IbmAuthSecretRef {
                secret_api_key_secret_ref: Some(SecretKeySelector {
                    name: Some("ibm".into()),
                    key: Some("apikey".into()),
                    namespace: None,
                }),
                iam_endpoint: Some(fake.server.url.clone()),
            }),
            container_auth: None,
        },
    };
    configure(&mut ibm);
    SecretStoreProvider {
        ibm: Some(Box::new(ibm)),
        ..SecretStoreProvider::default()
    }
}

/// A client of a store on `fake` configured by `configure`, whose Secret holds `api_key`.
pub async fn client(
    fake: &IbmFake,
    api_key: &str,
    configure: impl FnOnce(&mut IbmProvider),
) -> SharedClient {
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, "ibm", &[], &[("apikey", api_key)]);
    let store = secret_store(&unique_name("ibm"), store_provider(fake, configure));
    client_for(&store, Arc::new(source)).await
}

/// The behaviour suite's view of the backend.
pub struct IbmHarness;

#[async_trait]
impl Harness for IbmHarness {
    fn name(&self) -> &'static str {
        "ibm"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: false,
            delete_removes: false,
        }
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(format!("{GROUP}/arbitrary/{key}"))
    }

    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef::new(format!("{GROUP}/arbitrary/{key}"))
    }

    fn json_ref(&self, key: &str, property: Option<&str>) -> RemoteRef {
        let remote_ref = RemoteRef::new(format!("{GROUP}/kv/{key}"));
        match property {
            Some(property) => remote_ref.with_property(property),
            None => remote_ref,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let fake = fake();
        for (key, value) in seed {
            fake.put_secret(
                GROUP,
                "arbitrary",
                key,
                serde_json::json!({"payload": value}),
            );
            if let Ok(data @ serde_json::Value::Object(_)) = serde_json::from_str(value) {
                fake.put_secret(GROUP, "kv", key, serde_json::json!({"data": data}));
            }
        }
        client(&fake, API_KEY, |_| {}).await
    }
}
