//! The `delinea` harness: one DevOps Secrets Vault contract fake per test process (its own
//! thread and runtime, so it outlives each test's runtime), trusted through `SSL_CERT_FILE`
//! (the backend has no CA field, as upstream; every contract fake of the process shares one CA,
//! so this file also serves the other fakes), and one fresh path prefix per client.
//!
//! The suite's key `k` with a plain value is the secret `<prefix>/k` whose data is `{"k": v}`
//! (reads name the member as property); a JSON-object value is the data itself.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::delinea::DelineaFake;
use external_secrets_crds::meta::{SecretKeySelector, ValueOrSecretRef};
use external_secrets_crds::v1::{DelineaProvider, SecretStoreProvider};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};
use external_secrets_providers::{Capabilities, SharedClient};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The client id the fake accepts.
pub const CLIENT_ID: &str = "dsv-client";
/// The client secret the fake accepts.
pub const CLIENT_SECRET: &str = "dsv-client-secret";

/// The process's fake DSV tenant, started on first use.
pub fn fake() -> &'static DelineaFake {
    static FAKE: OnceLock<DelineaFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let fake = super::start_fake("DSV", || DelineaFake::start(CLIENT_ID, CLIENT_SECRET));
        super::trust_fakes_ca("delinea", &fake.server.ca_pem);
        fake
    })
}

/// The fake's URL as a `urlTemplate`: tenant `127.0.0` and TLD `1:PORT` make the host.
pub fn url_template() -> String {
    "https://%s.%s/v1/%s%s".to_owned()
}

/// A delinea store section on the fake: inline client id, client secret from Secret `dsv`.
pub fn store_provider() -> SecretStoreProvider {
    let url = &fake().server.url;
    let port = url.rsplit(':').next().unwrap_or_default();
    SecretStoreProvider {
        delinea: Some(Box::new(DelineaProvider {
            client_id: ValueOrSecretRef {
                value: Some(CLIENT_ID.into()),
                secret_ref: None,
            },
            client_secret: ValueOrSecretRef {
                value: None,
                secret_ref: Some(SecretKeySelector {
                    name: Some("dsv".into()),
                    key: Some("secret".into()),
                    namespace: None,
                }),
            },
            tenant: "127.0.0".into(),
            tld: Some(format!("1:{port}")),
            url_template: Some(url_template()),
        })),
        ..SecretStoreProvider::default()
    }
}

/// A client of a store on the fake whose client secret is `secret`.
pub async fn client(secret: &str) -> SharedClient {
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, "dsv", &[], &[("secret", secret)]);
    let store = secret_store(&unique_name("delinea"), store_provider());
    client_for(&store, Arc::new(source)).await
}

/// The behaviour suite's view of the backend.
pub struct DelineaHarness {
    prefix: String,
}

impl DelineaHarness {
    /// A harness whose secrets live under a path of their own.
    pub fn new() -> Self {
        Self {
            prefix: unique_name("suite"),
        }
    }

    fn path(&self, key: &str) -> String {
        format!("{}/{key}", self.prefix)
    }
}

#[async_trait]
impl Harness for DelineaHarness {
    fn name(&self) -> &'static str {
        "delinea"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: false,
            delete_removes: false,
        }
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(self.path(key)).with_property(key)
    }

    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef::new(self.path(key))
    }

    fn json_ref(&self, key: &str, property: Option<&str>) -> RemoteRef {
        let remote_ref = RemoteRef::new(self.path(key));
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
            let data = match serde_json::from_str::<serde_json::Value>(value) {
                Ok(object @ serde_json::Value::Object(_)) => object,
                _ => serde_json::json!({ *key: value }),
            };
            fake.set_secret(&self.path(key), data);
        }
        client(CLIENT_SECRET).await
    }
}
