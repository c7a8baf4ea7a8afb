//! The one entry point controllers use: a cached, rate-limited, retrying client per store.
//!
//! [`ClientManager::client`] ties the pieces together: the [`Registry`] builds a backend client,
//! [`ResilientClient`] adds the store's rate limiter (one bucket per store, kept across client
//! rebuilds) and its `retrySettings`, and the [`ClientCache`] keeps the result until the store
//! changes. Controllers call [`ClientManager::remove_store`] when a store is deleted and
//! [`ClientManager::invalidate`] after an authentication failure that fresh credentials may fix.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cache::{ClientCache, ClientKey};
use crate::client::SharedClient;
use crate::credentials::{OperatorIdentity, SecretSource};
use crate::error::Result;
use crate::rate_limit::{RateLimit, StoreRateLimiter};
use crate::registry::{Backend, Registry, StoreRef};
use crate::resilient::ResilientClient;
use crate::retry::RetryPolicy;
use crate::store::{StoreId, StoreKind};

/// Settings of the client manager.
#[derive(Debug, Clone, Copy, Default)]
pub struct ManagerSettings {
    /// Calls per second and burst toward each store.
    pub rate_limit: RateLimit,
    /// Rebuild clients older than this even if their store did not change (picks up rotated
    /// credentials in referenced Secrets); `None` keeps them as long as the store version.
    pub max_client_age: Option<Duration>,
    /// Whether SecretStores may authenticate as the operator itself (upstream: yes).
    pub operator_identity: OperatorIdentity,
}

/// Cached clients for all stores, shared by all controllers.
pub struct ClientManager {
    registry: Registry,
    cache: ClientCache,
    limiters: Mutex<HashMap<StoreId, StoreRateLimiter>>,
    settings: ManagerSettings,
}

impl ClientManager {
    /// A manager reading referenced Secrets through `source`.
    pub fn new(source: Arc<dyn SecretSource>, settings: ManagerSettings) -> Self {
        Self {
            registry: Registry::new(source).with_operator_identity(settings.operator_identity),
            cache: match settings.max_client_age {
                Some(max_age) => ClientCache::with_max_age(max_age),
                None => ClientCache::new(),
            },
            limiters: Mutex::default(),
            settings,
        }
    }

    /// The registry, for static validation.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The client of `store` for an object in `caller_namespace`, built on first use.
    pub async fn client(
        &self,
        store: &StoreRef<'_>,
        caller_namespace: Option<&str>,
    ) -> Result<SharedClient> {
        let key = self.key(store, caller_namespace)?;
        self.cache
            .get_or_create(&key, &store.version, || self.build(store, caller_namespace))
            .await
    }

    /// Drops the cached client of `store` for `caller_namespace` (its credentials went stale).
    pub async fn invalidate(&self, store: &StoreRef<'_>, caller_namespace: Option<&str>) {
        if let Ok(key) = self.key(store, caller_namespace) {
            self.cache.invalidate(&key).await;
        }
    }

    /// Closes and forgets everything about a deleted store.
    pub async fn remove_store(&self, store: &StoreId) {
        self.cache.remove_store(store).await;
        self.registry.remove_store(store);
        self.limiters.lock().expect("limiter lock").remove(store);
    }

    /// Closes every client (shutdown).
    pub async fn shutdown(&self) {
        self.cache.clear().await;
    }

    fn key(&self, store: &StoreRef<'_>, caller_namespace: Option<&str>) -> Result<ClientKey> {
        let backend = Backend::of(&store.spec.provider)?;
        let auth_namespace = match store.id.kind {
            StoreKind::ClusterSecretStore if backend.depends_on_caller() => {
                caller_namespace.map(str::to_owned)
            }
            _ => None,
        };
        Ok(ClientKey {
            store: store.id.clone(),
            auth_namespace,
        })
    }

    async fn build(
        &self,
        store: &StoreRef<'_>,
        caller_namespace: Option<&str>,
    ) -> Result<SharedClient> {
        let settings = store.spec.retry_settings.as_ref();
        let retry = RetryPolicy::from_settings(
            settings.and_then(|settings| settings.max_retries),
            settings.and_then(|settings| settings.retry_interval.as_deref()),
        )?;
        let inner = self.registry.new_client(store, caller_namespace).await?;
        let limiter = self
            .limiters
            .lock()
            .expect("limiter lock")
            .entry(store.id.clone())
            .or_insert_with(|| StoreRateLimiter::new(self.settings.rate_limit))
            .clone();
        tracing::debug!(store = %store.id, version = %store.version, "built provider client");
        Ok(Arc::new(ResilientClient::new(inner, limiter, retry)))
    }
}

#[cfg(all(test, feature = "fake"))]
mod tests {
    use super::*;
    use crate::credentials::MemorySecretSource;
    use crate::request::{PushRequest, RemoteRef};
    use crate::value::SecretValue;
    use external_secrets_crds::v1::{
        FakeProvider, FakeProviderData, SecretStore, SecretStoreProvider, SecretStoreRetrySettings,
        SecretStoreSpec,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn store(generation: i64, value: &str) -> SecretStore {
        SecretStore {
            metadata: ObjectMeta {
                name: Some("fake".into()),
                namespace: Some("team".into()),
                uid: Some("uid".into()),
                generation: Some(generation),
                ..ObjectMeta::default()
            },
            spec: SecretStoreSpec {
                provider: SecretStoreProvider {
                    fake: Some(Box::new(FakeProvider {
                        data: vec![FakeProviderData {
                            key: "k".into(),
                            value: value.into(),
                            version: None,
                        }],
                        validation_result: None,
                    })),
                    ..SecretStoreProvider::default()
                },
                ..SecretStoreSpec::default()
            },
            status: None,
        }
    }

    fn manager() -> ClientManager {
        ClientManager::new(
            Arc::new(MemorySecretSource::default()),
            ManagerSettings::default(),
        )
    }

    #[tokio::test]
    async fn clients_are_reused_until_the_store_changes() {
        let manager = manager();
        let first = store(1, "one");
        let a = manager
            .client(&StoreRef::from(&first), Some("team"))
            .await
            .unwrap();
        let b = manager
            .client(&StoreRef::from(&first), Some("team"))
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        a.push_secret(&PushRequest::single(
            [("s".to_owned(), SecretValue::from("pushed"))].into(),
            "s",
            "remote",
        ))
        .await
        .unwrap();

        let second = store(2, "two");
        let c = manager
            .client(&StoreRef::from(&second), Some("team"))
            .await
            .unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(
            c.get_secret(&RemoteRef::new("k")).await.unwrap().expose(),
            b"two"
        );
        assert_eq!(
            c.get_secret(&RemoteRef::new("remote"))
                .await
                .unwrap()
                .expose(),
            b"pushed"
        );

        manager.remove_store(&StoreRef::from(&second).id).await;
        let d = manager
            .client(&StoreRef::from(&second), Some("team"))
            .await
            .unwrap();
        assert!(
            d.get_secret(&RemoteRef::new("remote"))
                .await
                .unwrap_err()
                .is_not_found()
        );
    }

    #[tokio::test]
    async fn invalid_retry_settings_fail_the_client() {
        let mut broken = store(1, "v");
        broken.spec.retry_settings = Some(SecretStoreRetrySettings {
            max_retries: Some(2),
            retry_interval: Some("often".into()),
        });
        let error = manager()
            .client(&StoreRef::from(&broken), None)
            .await
            .err()
            .unwrap();
        assert_eq!(
            error.message(),
            "retrySettings.retryInterval: invalid duration \"often\""
        );
    }
}
