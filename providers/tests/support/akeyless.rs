//! The `akeyless` harness: a fresh Akeyless gateway contract fake per client (on the test's
//! runtime, trusted through the store's `caBundle`), access-key auth.
//!
//! Akeyless items hold JSON objects when pushed to (upstream merges members), so the suite's
//! key `k` with a plain value is a static secret `k` holding `{"k": value}`, read and pushed
//! as member `k`; a JSON-object value is stored as it is.

use std::sync::Arc;

use async_trait::async_trait;
use contract_fakes::akeyless::AkeylessFake;
use external_secrets_crds::v1::{AkeylessProvider, SecretStoreProvider};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};
use k8s_openapi::ByteString;
use serde_json::{Value, json};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The access id the harness's fakes accept.
pub const ACCESS_ID: &str = "p-behaviour";
/// Its access key.
pub const ACCESS_KEY: &str = "access-key-for-tests";
/// The Secret holding the credentials.
pub const CREDENTIALS: &str = "akeyless-credentials";

/// A store spec on `fake` with `auth` as `authSecretRef`.
pub fn spec(fake: &AkeylessFake, auth: Value) -> AkeylessProvider {
    let mut spec: AkeylessProvider = serde_json::from_value(json!({
        "akeylessGWApiURL": fake.server.url,
        "authSecretRef": auth,
    }))
    .expect("a valid akeyless spec");
    spec.ca_bundle = Some(ByteString(fake.server.ca_pem.clone().into_bytes()));
    spec
}

/// Access-key auth reading the Secret [`CREDENTIALS`].
pub fn access_key_auth() -> Value {
    json!({"secretRef": {
        "accessID": {"name": CREDENTIALS, "key": "id"},
        "accessType": {"name": CREDENTIALS, "key": "type"},
        "accessTypeParam": {"name": CREDENTIALS, "key": "key"},
    }})
}

/// The credentials of [`access_key_auth`].
pub const ACCESS: &[(&str, &str)] = &[
    ("id", ACCESS_ID),
    ("type", "access_key"),
    ("key", ACCESS_KEY),
];

/// A client of `spec` through the whole client stack, its Secret holding `credentials`.
pub async fn client(spec: AkeylessProvider, credentials: &[(&str, &str)]) -> SharedClient {
    let provider = SecretStoreProvider {
        akeyless: Some(Box::new(spec)),
        ..SecretStoreProvider::default()
    };
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, CREDENTIALS, &[], credentials);
    client_for(
        &secret_store(&unique_name("akeyless"), provider),
        Arc::new(source),
    )
    .await
}

/// A fake accepting [`ACCESS_ID`].
pub async fn fake() -> AkeylessFake {
    let fake = AkeylessFake::start()
        .await
        .expect("starting the Akeyless fake");
    fake.accept_access_key(ACCESS_ID, ACCESS_KEY);
    fake
}

/// The behaviour suite's view of the backend.
pub struct AkeylessHarness;

#[async_trait]
impl Harness for AkeylessHarness {
    fn name(&self) -> &'static str {
        "akeyless"
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

    fn seed_of_found(&self, found: &str) -> String {
        let object: serde_json::Map<String, Value> =
            serde_json::from_str(found).unwrap_or_default();
        object
            .values()
            .next()
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let fake = fake().await;
        for (key, value) in seed {
            let stored = match serde_json::from_str::<serde_json::Map<String, Value>>(value) {
                Ok(_) => (*value).to_owned(),
                Err(_) => json!({ *key: value }).to_string(),
            };
            fake.set_static(key, &stored, &[]);
        }
        client(spec(&fake, access_key_auth()), ACCESS).await
    }
}
