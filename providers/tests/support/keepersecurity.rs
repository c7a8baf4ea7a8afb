//! The `keepersecurity` harness: one Keeper Secrets Manager contract fake per test process (its
//! own thread and runtime, so it outlives each test's runtime), trusted through `SSL_CERT_FILE`
//! (the backend has no CA field, as upstream), and one fresh application with its own shared
//! folder per client.
//!
//! The suite's key `k` with a plain value is an `externalSecrets` record titled `k` whose
//! `password` field holds it; a JSON-object value is a record with one custom field per member.
//! Stores set `getByTitleFallback`, so the suite's keys (titles) read records; reads name the
//! `password` field and pushes go to `k/password`. Find returns whole records (upstream's JSON),
//! whose `password` field is the seeded value.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::keeper::KeeperFake;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{KeeperSecurityProvider, SecretStoreProvider};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};
use serde_json::{Value, json};

use super::{
    Features, Harness, NAMESPACE, client_for, secret_store, start_fake, trust_fakes_ca, unique_name,
};

/// The process's fake KSM API, started on first use.
pub fn fake() -> &'static KeeperFake {
    static FAKE: OnceLock<KeeperFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let fake = start_fake("Keeper", KeeperFake::start);
        trust_fakes_ca("keeper", &fake.server.ca_pem);
        fake
    })
}

/// A store pushing into `folder`, its configuration in Secret `keeper`, key `config`.
pub fn store_provider(folder: &str, title_fallback: bool) -> SecretStoreProvider {
    SecretStoreProvider {
        keepersecurity: Some(Box::new(KeeperSecurityProvider {
            auth_ref: SecretKeySelector {
                name: Some("keeper".into()),
                key: Some("config".into()),
                namespace: None,
            },
            folder_id: folder.to_owned(),
            get_by_title_fallback: title_fallback.then_some(true),
        })),
        ..SecretStoreProvider::default()
    }
}

/// A client of `provider` whose configuration Secret holds `config`.
pub async fn client(provider: SecretStoreProvider, config: &str) -> SharedClient {
    fake();
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, "keeper", &[], &[("config", config)]);
    let store = secret_store(&unique_name("keeper"), provider);
    client_for(&store, Arc::new(source)).await
}

/// A record of type `externalSecrets` titled `title` holding `value` as the harness seeds it.
pub fn seed_record(title: &str, value: &str) -> Value {
    match serde_json::from_str::<Value>(value) {
        Ok(Value::Object(members)) => {
            let custom: Vec<Value> = members
                .iter()
                .map(|(label, value)| json!({"type": "text", "label": label, "value": [value]}))
                .collect();
            json!({"type": "externalSecrets", "title": title, "fields": [], "custom": custom})
        }
        _ => json!({
            "type": "externalSecrets",
            "title": title,
            "fields": [{"type": "password", "value": [value]}],
        }),
    }
}

/// The behaviour suite's view of the backend.
pub struct KeeperHarness;

#[async_trait]
impl Harness for KeeperHarness {
    fn name(&self) -> &'static str {
        "keepersecurity"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(key).with_property("password")
    }

    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef::new(format!("{key}/password"))
    }

    fn seed_of_found(&self, found: &str) -> String {
        let record: Value = serde_json::from_str(found).expect("a found record is JSON");
        record["fields"]
            .as_array()
            .and_then(|fields| fields.iter().find(|field| field["type"] == "password"))
            .and_then(|field| field["value"][0].as_str())
            .expect("a found record has a password field")
            .to_owned()
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let fake = fake();
        let folder = unique_name("folder");
        let config = fake.add_application(&folder);
        for (key, value) in seed {
            fake.add_record(&folder, seed_record(key, value));
        }
        client(store_provider(&folder, true), &config).await
    }
}
