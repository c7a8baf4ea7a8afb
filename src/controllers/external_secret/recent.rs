//! The statuses this process wrote that the ExternalSecret watch has not shown yet (issue 24).
//!
//! A sync writes the target Secret and then the status; the Secret's watch event triggers the
//! ExternalSecret again, often before its own status write reached the cache. Judged from the
//! stale copy (no `Ready`, no `refreshTime`) it would be synced again and its status written a
//! second time: the extra ~0.8 status apply per ExternalSecret the issue measured. A reconcile
//! whose cached copy is still the version our status write replaced uses the status we wrote
//! instead. Entries leave when the watch shows any other version (ours or a later one) or the
//! deletion, so the map holds only writes in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use external_secrets_crds::v1::{ExternalSecret, ExternalSecretStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};

use crate::caches::give_back_burst;

/// One status write: the version it replaced and the status it set.
struct Written {
    replaced: Option<String>,
    status: ExternalSecretStatus,
}

/// Statuses written and not yet seen by the watch, by ExternalSecret.
#[derive(Default)]
pub struct RecentStatuses {
    written: Mutex<HashMap<ObjectRef<ExternalSecret>, Written>>,
}

impl RecentStatuses {
    /// Remembers that `status` replaced the version of `es` the reconcile started from.
    pub fn wrote(&self, es: &ExternalSecret, status: ExternalSecretStatus) {
        let entry = Written {
            replaced: es.resource_version(),
            status,
        };
        self.written().insert(key(es.meta()), entry);
    }

    /// `es` as of our last status write: when the cache still holds the version that write
    /// replaced, a copy with our status; otherwise `es` itself.
    pub fn current(&self, es: Arc<ExternalSecret>) -> Arc<ExternalSecret> {
        let key = key(es.meta());
        let mut written = self.written();
        let Some(ours) = written.get(&key) else {
            return es;
        };
        if ours.replaced.is_some() && ours.replaced == es.resource_version() {
            let mut newer = es.as_ref().clone();
            newer.status = Some(ours.status.clone());
            return Arc::new(newer);
        }
        written.remove(&key);
        give_back_burst(&mut written);
        es
    }

    /// Follows the ExternalSecret watch: a version other than the one a write replaced (ours,
    /// or later), or a deletion, ends the entry.
    /// Generic over the type the cache holds (`CachedExternalSecret`), tests use
    /// `ExternalSecret`: only the metadata matters.
    pub fn observe<K: Resource>(&self, event: &watcher::Event<K>) {
        let (es, deleted) = match event {
            watcher::Event::Apply(es) | watcher::Event::InitApply(es) => (es, false),
            watcher::Event::Delete(es) => (es, true),
            watcher::Event::Init | watcher::Event::InitDone => return,
        };
        let key = key(es.meta());
        let mut written = self.written();
        let done = written
            .get(&key)
            .is_some_and(|ours| deleted || ours.replaced != es.meta().resource_version);
        if done {
            written.remove(&key);
            give_back_burst(&mut written);
        }
    }

    fn written(&self) -> std::sync::MutexGuard<'_, HashMap<ObjectRef<ExternalSecret>, Written>> {
        // A poisoned lock only means another reconcile panicked mid-insert; the map is intact.
        self.written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The map's key of the ExternalSecret with metadata `meta`.
fn key(meta: &ObjectMeta) -> ObjectRef<ExternalSecret> {
    ObjectRef::new(meta.name.as_deref().unwrap_or_default())
        .within(meta.namespace.as_deref().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn es(version: &str) -> ExternalSecret {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {"name": "db", "namespace": "team", "resourceVersion": version},
            "spec": {},
        }))
        .unwrap()
    }

    fn status(refresh: &str) -> ExternalSecretStatus {
        serde_json::from_value(serde_json::json!({"refreshTime": refresh})).unwrap()
    }

    #[test]
    fn a_stale_copy_gets_the_status_we_wrote_until_the_watch_moves_on() {
        let recent = RecentStatuses::default();
        recent.wrote(&es("1"), status("2026-01-01T00:00:00Z"));
        let seen = recent.current(Arc::new(es("1")));
        assert_eq!(seen.status, Some(status("2026-01-01T00:00:00Z")));
        // Still stale: the watch showed nothing newer.
        recent.observe(&watcher::Event::Apply(es("1")));
        assert!(recent.current(Arc::new(es("1"))).status.is_some());
        // The watch shows our write (or any later version): the cache is the truth again.
        recent.observe(&watcher::Event::Apply(es("2")));
        assert_eq!(recent.current(Arc::new(es("1"))).status, None);
    }

    #[test]
    fn a_newer_copy_wins_and_ends_the_entry() {
        let recent = RecentStatuses::default();
        recent.wrote(&es("1"), status("2026-01-01T00:00:00Z"));
        assert_eq!(recent.current(Arc::new(es("3"))).status, None);
        assert_eq!(recent.current(Arc::new(es("1"))).status, None, "entry gone");
        recent.wrote(&es("4"), status("2026-01-01T00:00:00Z"));
        recent.observe(&watcher::Event::Delete(es("4")));
        assert_eq!(recent.current(Arc::new(es("4"))).status, None);
    }
}
