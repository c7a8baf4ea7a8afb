//! What the controller knows about target Secrets without reading them (issue 24): the
//! metadata-only watch of managed Secrets (label `reconcile.external-secrets.io/managed`) kept
//! as a cache, plus the metadata of Secrets this process wrote that the watch has not shown
//! yet. No Secret payload is held: only metadata in compact form (`cached_secret`), and of
//! managedFields only what the decisions read (`secret_meta`).
//!
//! A target found here is trusted to still hold the data its data-hash annotation covers when
//! no manager other than an ExternalSecret's applied any of its `data` (an edit by another
//! client takes the edited keys over in managedFields). A Secret missing here is treated as
//! absent only for writing, and that write does not force: a Secret someone else holds
//! conflicts, and the conflict is resolved by reading it (see `reconcile`). Deleting never
//! relies on a miss.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Secret;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use super::cached_secret::CachedSecret;
use super::secret_meta::SecretMeta;
use crate::caches::{give_back_burst, is_synced};

/// The managed-Secret cache and what this process wrote since the watch last showed it.
pub struct KnownSecrets {
    cache: Store<CachedSecret>,
    /// Keyed by namespace and name: the metadata our last apply returned, until the watch shows
    /// that version (or the Secret's deletion).
    written: Mutex<HashMap<(String, String), Arc<CachedSecret>>>,
}

/// What is known of one target Secret.
#[derive(Debug, Clone)]
pub enum Known {
    /// The cache has not received its first list yet: decide nothing.
    NotSynced,
    /// Not among the managed Secrets (absent, or not labelled managed).
    Missing,
    /// The metadata of the managed Secret.
    Managed(Arc<SecretMeta>),
}

impl KnownSecrets {
    /// Wraps the reflector store fed by the managed-Secret watch (see [`super::cached_secret::compact`]).
    pub fn new(cache: Store<CachedSecret>) -> Self {
        Self {
            cache,
            written: Mutex::new(HashMap::new()),
        }
    }

    /// The target `name` in `namespace`: our own newer write first, then the cache.
    pub fn lookup(&self, namespace: &str, name: &str) -> Known {
        if !is_synced(&self.cache) {
            return Known::NotSynced;
        }
        let key = (namespace.to_owned(), name.to_owned());
        let written = self.written().get(&key).cloned();
        let cached = written.or_else(|| self.cache.get(&ObjectRef::new(name).within(namespace)));
        // A buffer that does not decode counts as a miss: the write that follows does not
        // force, so a Secret that exists after all is read (see the module doc).
        match cached.and_then(|cached| cached.metadata()) {
            Some(meta) => Known::Managed(Arc::new(meta)),
            None => Known::Missing,
        }
    }

    /// Remembers the Secret an apply returned (its metadata only) until the watch shows it.
    /// Takes the Secret: its metadata moves into the compact form without a copy.
    pub fn wrote(&self, secret: Secret) {
        let written = CachedSecret::new(PartialObjectMeta {
            types: None,
            metadata: secret.metadata,
            _phantom: std::marker::PhantomData,
        });
        let (namespace, name) = written.key();
        if namespace.is_empty() || name.is_empty() {
            return;
        }
        let key = (namespace.to_owned(), name.to_owned());
        // The watch may have shown this version (or a later one) already.
        let cached = self.cache.get(&ObjectRef::new(name).within(namespace));
        if cached
            .is_some_and(|cached| !older(cached.resource_version(), written.resource_version()))
        {
            return;
        }
        self.written().insert(key, Arc::new(written));
    }

    /// Forgets our own write of a Secret, e.g. after deleting it.
    pub fn forget(&self, namespace: &str, name: &str) {
        self.written()
            .remove(&(namespace.to_owned(), name.to_owned()));
    }

    /// Follows the watch (after its cache applied `event`): a Secret shown at the version we
    /// wrote, or deleted, no longer needs our own copy.
    pub fn observe(&self, event: &watcher::Event<CachedSecret>) {
        let (seen, deleted) = match event {
            watcher::Event::Apply(seen) | watcher::Event::InitApply(seen) => (seen, false),
            watcher::Event::Delete(seen) => (seen, true),
            watcher::Event::Init | watcher::Event::InitDone => return,
        };
        let (namespace, name) = seen.key();
        let key = (namespace.to_owned(), name.to_owned());
        let mut written = self.written();
        let caught_up = written.get(&key).is_some_and(|ours| {
            deleted || !older(seen.resource_version(), ours.resource_version())
        });
        if caught_up {
            written.remove(&key);
            give_back_burst(&mut written);
        }
    }

    fn written(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Arc<CachedSecret>>> {
        // A poisoned lock only means another reconcile panicked mid-insert; the map is intact.
        self.written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether the watch's version `seen` is older than `ours`, the version our apply returned, so
/// the cache has not caught up yet. Versions are compared as the etcd revisions they are when
/// both are numbers; otherwise any version counts as caught up, so our copy never hides a later
/// change (the worst case is one more read).
fn older(seen: &str, ours: &str) -> bool {
    let number = |version: &str| version.parse::<u64>().ok();
    match (number(seen), number(ours)) {
        (Some(seen), Some(ours)) => seen < ours,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::runtime::reflector;
    use serde_json::json;

    use crate::controllers::external_secret::cached_secret::compact;
    use crate::controllers::external_secret::secret_meta::tests::meta;

    #[test]
    fn lookups_wait_for_the_first_list_then_prefer_our_newer_write() {
        let (reader, mut writer) = reflector::store::<CachedSecret>();
        let known = KnownSecrets::new(reader);
        assert!(matches!(known.lookup("team", "db"), Known::NotSynced));
        writer.apply_watcher_event(&watcher::Event::Init);
        writer.apply_watcher_event(&watcher::Event::InitDone);
        assert!(matches!(known.lookup("team", "db"), Known::Missing));

        // Our apply returned version 5: known before the watch shows it.
        let written: Secret = serde_json::from_value(json!({
            "metadata": {"name": "db", "namespace": "team", "resourceVersion": "5"},
            "data": {"password": "czNjcmV0"},
        }))
        .unwrap();
        known.wrote(written.clone());
        let Known::Managed(ours) = known.lookup("team", "db") else {
            panic!("our write is known")
        };
        assert_eq!(ours.metadata.resource_version.as_deref(), Some("5"));

        // The watch shows an older version: ours is still the newer one.
        let older = compact(watcher::Event::Apply(meta("4", &[])));
        writer.apply_watcher_event(&older);
        known.observe(&older);
        let Known::Managed(seen) = known.lookup("team", "db") else {
            panic!("known")
        };
        assert_eq!(seen.metadata.resource_version.as_deref(), Some("5"));

        // It shows ours: the cache answers from now on.
        let caught_up = compact(watcher::Event::Apply(meta("5", &[])));
        writer.apply_watcher_event(&caught_up);
        known.observe(&caught_up);
        assert!(known.written().is_empty());

        // The watch showed our version before the apply returned: nothing to remember, and a
        // later edit wins.
        known.wrote(written.clone());
        assert!(known.written().is_empty());
        let edited = compact(watcher::Event::Apply(meta("7", &[])));
        writer.apply_watcher_event(&edited);
        known.observe(&edited);
        let Known::Managed(seen) = known.lookup("team", "db") else {
            panic!("known")
        };
        assert_eq!(seen.metadata.resource_version.as_deref(), Some("7"));

        // A deletion seen by the watch leaves nothing behind.
        known.wrote(written.clone());
        let deleted = compact(watcher::Event::Delete(meta("6", &[])));
        writer.apply_watcher_event(&deleted);
        known.observe(&deleted);
        assert!(matches!(known.lookup("team", "db"), Known::Missing));
    }
}
