//! Whether a watch cache has been filled by its first full list. A controller reading a cache
//! that is still empty after a restart would decide from nothing: a cluster template would
//! see no namespaces and delete every copy, an ExternalSecret would find no store. Reconciles
//! that read a cache come back shortly instead of deciding before it is synced.

use std::hash::Hash;
use std::time::Duration;

use futures::FutureExt;
use kube::Resource;
use kube::runtime::reflector::Store;

/// How soon a reconcile that found a cache not yet synced looks again.
pub const CACHE_WAIT: Duration = Duration::from_secs(1);

/// Whether `store` has received its watch's initial list (without waiting for it).
pub fn is_synced<K>(store: &Store<K>) -> bool
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    store
        .wait_until_ready()
        .now_or_never()
        .is_some_and(|ready| ready.is_ok())
}

/// Drops `metadata.managedFields` from an object before it is cached: it is a large share of
/// each object and no controller reads it from a cache (server-side apply decisions read the
/// managed Secrets' own watch, which keeps the entries they need).
pub fn forget_managed_fields<K: kube::Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Namespace;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    #[test]
    fn a_store_is_synced_only_after_its_initial_list() {
        let (reader, mut writer) = reflector::store::<Namespace>();
        assert!(!is_synced(&reader));
        writer.apply_watcher_event(&Event::Init);
        assert!(!is_synced(&reader));
        writer.apply_watcher_event(&Event::InitDone);
        assert!(is_synced(&reader));
    }
}
