//! Whether a watch cache has been filled by its first full list. A controller reading a cache
//! that is still empty after a restart would decide from nothing: a cluster template would
//! see no namespaces and delete every copy, an ExternalSecret would find no store. Reconciles
//! that read a cache come back shortly instead of deciding before it is synced.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use futures::FutureExt;
use kube::Resource;
use kube::runtime::reflector::{Lookup, ObjectRef, Store};

/// How soon a reconcile that found a cache not yet synced looks again.
pub const CACHE_WAIT: Duration = Duration::from_secs(1);

/// Whether `store` has received its watch's initial list (without waiting for it).
pub fn is_synced<K>(store: &Store<K>) -> bool
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    store
        .wait_until_ready()
        .now_or_never()
        .is_some_and(|ready| ready.is_ok())
}

/// Whether `object` (this very object, by uid) is still in `cache`. A reconcile that finds
/// its object gone when it ends records after the watch's deletion cleanup ran (metric
/// series, retry state), and must clean up again.
pub fn still_cached<K>(cache: &Store<K>, object: &K) -> bool
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    cache
        .get(&ObjectRef::from_obj(object))
        .is_some_and(|cached| cached.meta().uid == object.meta().uid)
}

/// Drops `metadata.managedFields` from an object before it is cached: it is a large share of
/// each object and no controller reads it from a cache (server-side apply decisions read the
/// managed Secrets' own watch, which keeps the entries they need).
pub fn forget_managed_fields<K: kube::Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

/// Room kept by a bookkeeping map that has drained (see [`give_back_burst`]).
pub const RETAINED_CAPACITY: usize = 64;

/// Shrinks a map of in-flight entries once it is empty: a burst (every object queued or
/// written at start) grows it to the object count, and a `HashMap` keeps that capacity
/// for good otherwise (issue 24's steady memory).
pub fn give_back_burst<K: Eq + Hash, V>(map: &mut HashMap<K, V>) {
    if map.is_empty() && map.capacity() > RETAINED_CAPACITY {
        map.shrink_to(RETAINED_CAPACITY);
    }
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

    #[test]
    fn an_object_is_still_cached_only_as_the_same_object() {
        let namespace = |uid: &str| Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some("team".into()),
                uid: Some(uid.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let (cache, mut writer) = reflector::store::<Namespace>();
        writer.apply_watcher_event(&Event::Apply(namespace("1")));
        assert!(still_cached(&cache, &namespace("1")));
        assert!(
            !still_cached(&cache, &namespace("2")),
            "deleted and made again"
        );
        writer.apply_watcher_event(&Event::Delete(namespace("1")));
        assert!(!still_cached(&cache, &namespace("1")), "deleted");
    }

    #[test]
    fn a_drained_map_gives_its_burst_capacity_back() {
        let mut map: HashMap<usize, usize> = (0..5000).map(|key| (key, key)).collect();
        give_back_burst(&mut map);
        assert!(map.capacity() >= 5000, "not while entries remain");
        map.clear();
        give_back_burst(&mut map);
        assert!(
            map.capacity() <= 2 * RETAINED_CAPACITY,
            "{}",
            map.capacity()
        );
    }
}
