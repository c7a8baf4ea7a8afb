//! The ETag download cache (upstream's `--doppler-etag-cache-size`): the last answer of each
//! download a client made, with the `ETag` Doppler sent, so the next identical download asks
//! with `If-None-Match` and a `304 Not Modified` is served from memory.
//!
//! It is a [`BackendState`] of the registry: shared by every client, bounded by its capacity
//! (the oldest entry makes room; 0 turns caching off), and emptied for a store when that store
//! pushes or deletes (upstream invalidates the same way) or is deleted.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use crate::provider::BackendState;
use crate::store::StoreId;
use crate::value::SecretValue;

/// Upstream's default capacity (`1 << 14` downloads).
pub const DEFAULT_CAPACITY: usize = 1 << 14;

/// What a download is cached under: the store, the namespace the client acts for, and the
/// request's query (project, config, secrets, name transformer, format).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The store whose client downloaded.
    pub store: StoreId,
    /// The namespace the client acts for (ClusterSecretStores have one client per namespace).
    pub caller: Option<String>,
    /// The download's query string.
    pub query: String,
}

/// One cached download.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The `ETag` Doppler sent with it.
    pub etag: String,
    /// The body.
    pub body: SecretValue,
}

/// The registry's Doppler download cache.
#[derive(Debug)]
pub struct EtagCache {
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<CacheKey, Cached>,
    /// The keys of `map`, oldest first.
    order: VecDeque<CacheKey>,
}

impl Default for EtagCache {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl EtagCache {
    /// A cache of at most `capacity` downloads (0: nothing is cached).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::default(),
        }
    }

    /// The cached download under `key`.
    pub fn get(&self, key: &CacheKey) -> Option<Cached> {
        self.lock().map.get(key).cloned()
    }

    /// Keeps `cached` under `key`, dropping the oldest entries beyond the capacity.
    pub fn set(&self, key: CacheKey, cached: Cached) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.lock();
        if entries.map.insert(key.clone(), cached).is_none() {
            entries.order.push_back(key);
        }
        while entries.map.len() > self.capacity {
            let Some(oldest) = entries.order.pop_front() else {
                break;
            };
            entries.map.remove(&oldest);
        }
    }

    /// Forgets every download of `store` (after a write, or when it is deleted).
    pub fn invalidate(&self, store: &StoreId) {
        let mut entries = self.lock();
        entries.map.retain(|key, _| key.store != *store);
        entries.order.retain(|key| key.store != *store);
    }

    /// How many downloads are cached.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl BackendState for EtagCache {
    fn remove_store(&self, store: &StoreId) {
        self.invalidate(store);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(store: &str, query: &str) -> CacheKey {
        CacheKey {
            store: StoreId::secret_store("team", store),
            caller: Some("team".into()),
            query: query.into(),
        }
    }

    fn cached(etag: &str) -> Cached {
        Cached {
            etag: etag.into(),
            body: SecretValue::from("{}"),
        }
    }

    #[test]
    fn keeps_at_most_capacity_entries_dropping_the_oldest() {
        let cache = EtagCache::with_capacity(2);
        cache.set(key("a", "1"), cached("e1"));
        cache.set(key("a", "2"), cached("e2"));
        cache.set(key("a", "1"), cached("e1b"));
        cache.set(key("a", "3"), cached("e3"));
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&key("a", "1")).is_none());
        assert_eq!(cache.get(&key("a", "2")).unwrap().etag, "e2");
        assert_eq!(cache.get(&key("a", "3")).unwrap().etag, "e3");
    }

    #[test]
    fn zero_capacity_caches_nothing() {
        let cache = EtagCache::with_capacity(0);
        cache.set(key("a", "1"), cached("e1"));
        assert!(cache.is_empty());
    }

    #[test]
    fn invalidation_forgets_one_store_only() {
        let cache = EtagCache::default();
        cache.set(key("a", "1"), cached("e1"));
        cache.set(key("b", "1"), cached("e2"));
        cache.remove_store(&StoreId::secret_store("team", "a"));
        assert!(cache.get(&key("a", "1")).is_none());
        assert_eq!(cache.get(&key("b", "1")).unwrap().etag, "e2");
        assert_eq!(cache.lock().order.len(), 1);
    }
}
