//! The client cache shared by all controllers: one authenticated client per store and identity.
//!
//! Upstream builds (and so logs in) a fresh client on every reconcile. Here a client is built once
//! per [`ClientKey`] — the store (kind, namespace, name) and the auth identity it acts as (the
//! referent namespace of a ClusterSecretStore using referent auth) — and reused for as long as the
//! store's version (its uid and `metadata.generation`, supplied by the caller) stays the same.
//!
//! * A call with a new version builds a new client, closes the old one and also closes every
//!   other client of the same store still on an older version.
//! * [`ClientCache::remove_store`] closes all clients of a deleted store.
//! * [`ClientCache::invalidate`] drops one client, for callers that learn its credentials went
//!   stale (a `PermissionDenied` after a rotation of a referenced Secret, which does not change
//!   the store's generation); an optional maximum age does the same on a timer.
//!
//! Concurrent callers for the same key wait for one build instead of each logging in. A failed
//! build is not cached: the next call tries again (the controllers' backoff paces it). A retired
//! client is closed at once; a call still running on it may fail, as a temporary error would.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::client::SharedClient;
use crate::error::Result;
use crate::store::StoreId;

/// Which client: a store, and the identity it authenticates as.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientKey {
    /// The store.
    pub store: StoreId,
    /// The namespace whose credentials the client uses when it differs per caller (referent
    /// auth of a ClusterSecretStore); `None` when the store's own credentials are used.
    pub auth_namespace: Option<String>,
}

struct Entry {
    version: String,
    built_at: Instant,
    client: SharedClient,
}

type Slot = Arc<tokio::sync::Mutex<Option<Entry>>>;

/// Authenticated clients by store and identity.
#[derive(Default)]
pub struct ClientCache {
    slots: Mutex<HashMap<ClientKey, Slot>>,
    max_age: Option<Duration>,
}

impl ClientCache {
    /// An empty cache whose clients live as long as their store version.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache that also rebuilds clients older than `max_age`.
    pub fn with_max_age(max_age: Duration) -> Self {
        Self {
            slots: Mutex::default(),
            max_age: Some(max_age),
        }
    }

    /// The client for `key` at store `version`, built by `build` if there is none yet, or if the
    /// cached one belongs to another version or is too old (the old one is then closed).
    pub async fn get_or_create<Build, Building>(
        &self,
        key: &ClientKey,
        version: &str,
        build: Build,
    ) -> Result<SharedClient>
    where
        Build: FnOnce() -> Building,
        Building: Future<Output = Result<SharedClient>>,
    {
        let slot = self.slot(key);
        let mut entry = slot.lock().await;
        if let Some(current) = entry.as_ref()
            && current.version == version
            && !self.expired(current)
        {
            return Ok(current.client.clone());
        }
        let client = build().await?;
        let retired = entry.replace(Entry {
            version: version.to_owned(),
            built_at: Instant::now(),
            client: client.clone(),
        });
        drop(entry);
        if let Some(retired) = retired {
            close(key, retired.client).await;
        }
        self.retire_other_versions(key, version).await;
        Ok(client)
    }

    /// Closes and forgets the client of `key`, if any.
    pub async fn invalidate(&self, key: &ClientKey) {
        let slot = self.slots.lock().expect("cache lock").remove(key);
        if let Some(slot) = slot
            && let Some(entry) = slot.lock().await.take()
        {
            close(key, entry.client).await;
        }
    }

    /// Closes and forgets every client of a store (it was deleted).
    pub async fn remove_store(&self, store: &StoreId) {
        let removed: Vec<(ClientKey, Slot)> = {
            let mut slots = self.slots.lock().expect("cache lock");
            let keys: Vec<ClientKey> = slots
                .keys()
                .filter(|key| &key.store == store)
                .cloned()
                .collect();
            keys.into_iter()
                .filter_map(|key| slots.remove(&key).map(|slot| (key, slot)))
                .collect()
        };
        for (key, slot) in removed {
            if let Some(entry) = slot.lock().await.take() {
                close(&key, entry.client).await;
            }
        }
    }

    /// Closes and forgets every client (shutdown).
    pub async fn clear(&self) {
        let all: Vec<(ClientKey, Slot)> = self.slots.lock().expect("cache lock").drain().collect();
        for (key, slot) in all {
            if let Some(entry) = slot.lock().await.take() {
                close(&key, entry.client).await;
            }
        }
    }

    /// Number of keys with a slot (cached or being built).
    pub fn len(&self) -> usize {
        self.slots.lock().expect("cache lock").len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn slot(&self, key: &ClientKey) -> Slot {
        self.slots
            .lock()
            .expect("cache lock")
            .entry(key.clone())
            .or_default()
            .clone()
    }

    fn expired(&self, entry: &Entry) -> bool {
        self.max_age
            .is_some_and(|max_age| entry.built_at.elapsed() >= max_age)
    }

    /// Closes the clients of the same store, other identities, built from another version.
    async fn retire_other_versions(&self, key: &ClientKey, version: &str) {
        let siblings: Vec<(ClientKey, Slot)> = self
            .slots
            .lock()
            .expect("cache lock")
            .iter()
            .filter(|(other, _)| other.store == key.store && *other != key)
            .map(|(other, slot)| (other.clone(), slot.clone()))
            .collect();
        for (other, slot) in siblings {
            // A sibling being built right now holds its lock; it will be checked on its next use.
            let Ok(mut entry) = slot.try_lock() else {
                continue;
            };
            if entry.as_ref().is_some_and(|entry| entry.version != version)
                && let Some(stale) = entry.take()
            {
                drop(entry);
                close(&other, stale.client).await;
            }
        }
    }
}

async fn close(key: &ClientKey, client: SharedClient) {
    if let Err(error) = client.close().await {
        tracing::warn!(
            store_kind = key.store.kind.as_str(),
            store_namespace = key.store.namespace.as_deref(),
            store = %key.store.name,
            reason = error.reason(),
            error = %error,
            "closing a retired provider client failed"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ProviderError;
    use crate::store::StoreKind;
    use crate::test_support::ScriptedClient;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn key(name: &str, auth_namespace: Option<&str>) -> ClientKey {
        ClientKey {
            store: StoreId {
                kind: StoreKind::SecretStore,
                namespace: Some("default".into()),
                name: name.into(),
            },
            auth_namespace: auth_namespace.map(Into::into),
        }
    }

    /// Builds counting clients and remembers them so closes can be checked.
    #[derive(Default)]
    struct Builder {
        builds: AtomicU32,
        built: Mutex<Vec<Arc<ScriptedClient>>>,
    }

    impl Builder {
        async fn build(&self) -> Result<SharedClient> {
            self.builds.fetch_add(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            let client = Arc::new(ScriptedClient::healthy());
            self.built.lock().unwrap().push(client.clone());
            Ok(client)
        }

        fn builds(&self) -> u32 {
            self.builds.load(Ordering::SeqCst)
        }

        fn closes(&self) -> Vec<u32> {
            self.built
                .lock()
                .unwrap()
                .iter()
                .map(|c| c.closes())
                .collect()
        }
    }

    #[tokio::test]
    async fn a_client_is_built_once_per_key_and_version() {
        let cache = ClientCache::new();
        let builder = Builder::default();
        for _ in 0..3 {
            cache
                .get_or_create(&key("a", None), "uid/1", || builder.build())
                .await
                .unwrap();
        }
        assert_eq!(builder.builds(), 1);
        cache
            .get_or_create(&key("b", None), "uid/1", || builder.build())
            .await
            .unwrap();
        cache
            .get_or_create(&key("a", Some("team")), "uid/1", || builder.build())
            .await
            .unwrap();
        assert_eq!(builder.builds(), 3);
        assert_eq!(builder.closes(), [0, 0, 0]);
        assert_eq!(cache.len(), 3);
    }

    #[tokio::test]
    async fn concurrent_callers_share_one_build() {
        let cache = Arc::new(ClientCache::new());
        let builder = Arc::new(Builder::default());
        let calls = (0..8).map(|_| {
            let (cache, builder) = (cache.clone(), builder.clone());
            tokio::spawn(async move {
                cache
                    .get_or_create(&key("a", None), "uid/1", || builder.build())
                    .await
                    .map(|_| ())
            })
        });
        for call in calls {
            call.await.unwrap().unwrap();
        }
        assert_eq!(builder.builds(), 1);
    }

    #[tokio::test]
    async fn a_new_version_replaces_and_closes_every_old_client_of_the_store() {
        let cache = ClientCache::new();
        let builder = Builder::default();
        let get = |k: ClientKey, version: &'static str| {
            let (cache, builder) = (&cache, &builder);
            async move { cache.get_or_create(&k, version, || builder.build()).await }
        };
        get(key("a", None), "uid/1").await.unwrap();
        get(key("a", Some("team")), "uid/1").await.unwrap();
        get(key("b", None), "uid/1").await.unwrap();
        get(key("a", None), "uid/2").await.unwrap();
        // Old "a" closed, "a"/team (same store, old version) closed, "b" untouched, new "a" open.
        assert_eq!(builder.closes(), [1, 1, 0, 0]);
        get(key("a", Some("team")), "uid/2").await.unwrap();
        assert_eq!(builder.builds(), 5);
    }

    #[tokio::test]
    async fn removing_a_store_closes_its_clients_only() {
        let cache = ClientCache::new();
        let builder = Builder::default();
        for k in [key("a", None), key("a", Some("team")), key("b", None)] {
            cache
                .get_or_create(&k, "1", || builder.build())
                .await
                .unwrap();
        }
        cache.remove_store(&key("a", None).store).await;
        assert_eq!(builder.closes(), [1, 1, 0]);
        assert_eq!(cache.len(), 1);
        cache.invalidate(&key("b", None)).await;
        assert_eq!(builder.closes(), [1, 1, 1]);
        assert!(cache.is_empty());
        cache
            .get_or_create(&key("b", None), "1", || builder.build())
            .await
            .unwrap();
        cache.clear().await;
        assert_eq!(builder.closes(), [1, 1, 1, 1]);
    }

    #[tokio::test]
    async fn failed_builds_are_not_cached() {
        let cache = ClientCache::new();
        let builder = Builder::default();
        let error = cache
            .get_or_create(&key("a", None), "1", || async {
                Err(ProviderError::unavailable("login failed"))
            })
            .await
            .err()
            .unwrap();
        assert_eq!(error.message(), "login failed");
        cache
            .get_or_create(&key("a", None), "1", || builder.build())
            .await
            .unwrap();
        assert_eq!(builder.builds(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn clients_older_than_the_maximum_age_are_rebuilt() {
        let cache = ClientCache::with_max_age(Duration::from_secs(600));
        let builder = Builder::default();
        cache
            .get_or_create(&key("a", None), "1", || builder.build())
            .await
            .unwrap();
        tokio::time::advance(Duration::from_secs(599)).await;
        cache
            .get_or_create(&key("a", None), "1", || builder.build())
            .await
            .unwrap();
        assert_eq!(builder.builds(), 1);
        tokio::time::advance(Duration::from_secs(1)).await;
        cache
            .get_or_create(&key("a", None), "1", || builder.build())
            .await
            .unwrap();
        assert_eq!(builder.builds(), 2);
        assert_eq!(builder.closes(), [1, 0]);
    }
}
