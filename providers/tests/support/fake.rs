//! The fake provider: seed data goes into the store spec.

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::{FakeProvider, FakeProviderData, SecretStoreProvider};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;

use super::{Features, Harness, client_for, secret_store, unique_name};

/// Serves seeds from `spec.provider.fake.data`.
pub struct FakeHarness;

#[async_trait]
impl Harness for FakeHarness {
    fn name(&self) -> &'static str {
        "fake"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let provider = SecretStoreProvider {
            fake: Some(Box::new(FakeProvider {
                data: seed
                    .iter()
                    .map(|(key, value)| FakeProviderData {
                        key: (*key).to_owned(),
                        value: (*value).to_owned(),
                        version: None,
                    })
                    .collect(),
                validation_result: None,
            })),
            ..SecretStoreProvider::default()
        };
        let store = secret_store(&unique_name("fake"), provider);
        client_for(&store, Arc::new(MemorySecretSource::default())).await
    }
}
