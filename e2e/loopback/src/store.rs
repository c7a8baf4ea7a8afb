//! The object store: every object as JSON in a `BTreeMap` per resource, one global
//! monotonically increasing resourceVersion, a bounded history of watch events per resource,
//! and the uid and owner indexes garbage collection needs (so nothing scans all objects).

use crate::resources::GroupResource;
use bytes::Bytes;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, OnceLock};

/// A watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    Added,
    Modified,
    Deleted,
}

impl EventKind {
    /// The wire name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One recorded change.
#[derive(Debug)]
pub(crate) struct Event {
    /// The resourceVersion of the change.
    pub resource_version: u64,
    pub kind: EventKind,
    /// The object after the change (the last state for deletions).
    pub object: Arc<Value>,
    /// The object before the change, so selector-filtered watches can turn a change that
    /// leaves (enters) their selection into DELETED (ADDED).
    pub previous: Option<Arc<Value>>,
    /// `{"type":..,"object":..}\n` for the stored apiVersion, encoded on first use and shared
    /// by every watcher.
    pub encoded: OnceLock<Bytes>,
    /// The same as PartialObjectMetadata, for metadata-only watchers.
    pub encoded_metadata: OnceLock<Bytes>,
}

/// The objects and history of one resource (all versions share them).
pub(crate) struct KindStore {
    pub namespaced: bool,
    pub objects: BTreeMap<String, Arc<Value>>,
    pub history: VecDeque<Arc<Event>>,
    /// Watches from a resourceVersion below this are expired (410).
    pub floor: u64,
    /// Carries the latest resourceVersion written to this resource; watchers wait on it.
    pub notify: tokio::sync::watch::Sender<u64>,
}

impl KindStore {
    /// Objects of one namespace (all objects when `None`), in key order, starting after
    /// `after` when given.
    pub(crate) fn range<'a>(
        &'a self,
        namespace: Option<&str>,
        after: Option<&str>,
    ) -> impl Iterator<Item = (&'a String, &'a Arc<Value>)> + 'a {
        let (start, end) = match namespace {
            Some(namespace) => (format!("{namespace}/"), Some(format!("{namespace}0"))),
            None => (String::new(), None),
        };
        let lower = match after {
            Some(after) if after >= start.as_str() => Bound::Excluded(after.to_owned()),
            _ => Bound::Included(start),
        };
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        self.objects.range::<String, _>((lower, upper))
    }

    /// Events with a resourceVersion above `since`.
    pub(crate) fn events_after(&self, since: u64, max: usize) -> Vec<Arc<Event>> {
        let start = self
            .history
            .partition_point(|event| event.resource_version <= since);
        self.history.range(start..).take(max).cloned().collect()
    }
}

/// The storage key of an object: `namespace/name`, with an empty namespace for
/// cluster-scoped objects.
pub(crate) fn object_key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Where an object lives: its resource and key.
pub(crate) type ObjectRef = (GroupResource, String);

/// All objects.
pub(crate) struct Store {
    resource_version: u64,
    kinds: HashMap<GroupResource, KindStore>,
    uids: HashMap<String, ObjectRef>,
    dependents: HashMap<String, BTreeSet<ObjectRef>>,
    history_limit: usize,
}

impl Store {
    /// An empty store keeping `history_limit` watch events per resource.
    pub(crate) fn new(history_limit: usize) -> Self {
        Self {
            resource_version: 0,
            kinds: HashMap::new(),
            uids: HashMap::new(),
            dependents: HashMap::new(),
            history_limit: history_limit.max(1),
        }
    }

    /// The latest resourceVersion.
    pub(crate) fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// The store of one resource, created on first use.
    pub(crate) fn kind_mut(
        &mut self,
        resource: &GroupResource,
        namespaced: bool,
    ) -> &mut KindStore {
        let floor = self.resource_version;
        self.kinds
            .entry(resource.clone())
            .or_insert_with(|| KindStore {
                namespaced,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                floor,
                notify: tokio::sync::watch::channel(floor).0,
            })
    }

    /// The store of one resource, if it was ever used.
    pub(crate) fn kind(&self, resource: &GroupResource) -> Option<&KindStore> {
        self.kinds.get(resource)
    }

    /// Every resource that has a store, with its namespaced flag.
    pub(crate) fn resources(&self) -> Vec<(GroupResource, bool)> {
        self.kinds
            .iter()
            .map(|(resource, kind)| (resource.clone(), kind.namespaced))
            .collect()
    }

    /// Marks all history so far as compacted: watches from older versions get 410.
    pub(crate) fn compact_all(&mut self) {
        let floor = self.resource_version;
        for kind in self.kinds.values_mut() {
            kind.history.clear();
            kind.floor = floor;
        }
    }

    /// One object.
    pub(crate) fn get(&self, resource: &GroupResource, key: &str) -> Option<Arc<Value>> {
        self.kinds.get(resource)?.objects.get(key).cloned()
    }

    /// Where the object with this uid is, if it exists.
    pub(crate) fn locate_uid(&self, uid: &str) -> Option<&ObjectRef> {
        self.uids.get(uid)
    }

    /// Objects whose ownerReferences name this uid.
    pub(crate) fn dependents_of(&self, uid: &str) -> Vec<ObjectRef> {
        self.dependents
            .get(uid)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Stores an object under a new resourceVersion (written into it) and records the event.
    pub(crate) fn put(
        &mut self,
        resource: &GroupResource,
        namespaced: bool,
        key: &str,
        mut object: Value,
    ) -> Arc<Value> {
        self.resource_version += 1;
        let resource_version = self.resource_version;
        object["metadata"]["resourceVersion"] = Value::String(resource_version.to_string());
        let object = Arc::new(object);
        let previous = self
            .kind_mut(resource, namespaced)
            .objects
            .insert(key.to_owned(), object.clone());
        self.reindex(resource, key, previous.as_deref(), Some(&object));
        let kind = if previous.is_some() {
            EventKind::Modified
        } else {
            EventKind::Added
        };
        self.record(resource, namespaced, kind, object.clone(), previous);
        object
    }

    /// Removes an object; the DELETED event carries its last state (`last`, or the stored
    /// one) with a new resourceVersion.
    pub(crate) fn remove(
        &mut self,
        resource: &GroupResource,
        key: &str,
        last: Option<Value>,
    ) -> Option<Arc<Value>> {
        let kind = self.kinds.get_mut(resource)?;
        let namespaced = kind.namespaced;
        let previous = kind.objects.remove(key)?;
        self.reindex(resource, key, Some(&previous), None);
        self.resource_version += 1;
        let mut last = last.unwrap_or_else(|| (*previous).clone());
        last["metadata"]["resourceVersion"] = Value::String(self.resource_version.to_string());
        let last = Arc::new(last);
        self.record(
            resource,
            namespaced,
            EventKind::Deleted,
            last.clone(),
            Some(previous),
        );
        Some(last)
    }

    fn record(
        &mut self,
        resource: &GroupResource,
        namespaced: bool,
        kind: EventKind,
        object: Arc<Value>,
        previous: Option<Arc<Value>>,
    ) {
        let resource_version = self.resource_version;
        let limit = self.history_limit;
        let store = self.kind_mut(resource, namespaced);
        store.history.push_back(Arc::new(Event {
            resource_version,
            kind,
            object,
            previous,
            encoded: OnceLock::new(),
            encoded_metadata: OnceLock::new(),
        }));
        while store.history.len() > limit {
            if let Some(dropped) = store.history.pop_front() {
                store.floor = dropped.resource_version;
            }
        }
        store.notify.send_replace(resource_version);
    }

    fn reindex(
        &mut self,
        resource: &GroupResource,
        key: &str,
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        let uid = |object: Option<&Value>| {
            object
                .and_then(|o| o["metadata"]["uid"].as_str())
                .map(str::to_owned)
        };
        let owners = |object: Option<&Value>| -> BTreeSet<String> {
            object
                .and_then(|o| o["metadata"]["ownerReferences"].as_array())
                .map(|refs| {
                    refs.iter()
                        .filter_map(|r| r["uid"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let this: ObjectRef = (resource.clone(), key.to_owned());
        if let Some(old_uid) = uid(old)
            && uid(new).as_ref() != Some(&old_uid)
        {
            self.uids.remove(&old_uid);
        }
        if let Some(new_uid) = uid(new) {
            self.uids.insert(new_uid, this.clone());
        }
        let (old_owners, new_owners) = (owners(old), owners(new));
        for owner in old_owners.difference(&new_owners) {
            if let Some(set) = self.dependents.get_mut(owner) {
                set.remove(&this);
                if set.is_empty() {
                    self.dependents.remove(owner);
                }
            }
        }
        for owner in new_owners.difference(&old_owners) {
            self.dependents
                .entry(owner.clone())
                .or_default()
                .insert(this.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secrets() -> GroupResource {
        GroupResource {
            group: String::new(),
            resource: "secrets".into(),
        }
    }

    #[test]
    fn history_is_bounded_and_raises_the_floor() {
        let mut store = Store::new(2);
        for index in 0..5 {
            let key = object_key("n", &format!("s{index}"));
            store.put(
                &secrets(),
                true,
                &key,
                json!({"metadata": {"name": format!("s{index}")}}),
            );
        }
        let kind = store.kind(&secrets()).unwrap();
        assert_eq!(kind.history.len(), 2);
        assert_eq!(kind.floor, 3);
        assert_eq!(kind.events_after(3, 10).len(), 2);
        assert_eq!(kind.events_after(4, 10).len(), 1);
    }

    #[test]
    fn namespace_ranges_do_not_leak() {
        let mut store = Store::new(10);
        for (namespace, name) in [("a", "x"), ("ab", "y"), ("b", "z")] {
            store.put(
                &secrets(),
                true,
                &object_key(namespace, name),
                json!({"metadata": {}}),
            );
        }
        let kind = store.kind(&secrets()).unwrap();
        let keys: Vec<&String> = kind.range(Some("a"), None).map(|(key, _)| key).collect();
        assert_eq!(keys, vec!["a/x"]);
        assert_eq!(kind.range(None, Some("a/x")).count(), 2);
    }

    #[test]
    fn owner_index_follows_owner_references() {
        let mut store = Store::new(10);
        let key = object_key("n", "child");
        store.put(
            &secrets(),
            true,
            &key,
            json!({"metadata": {"uid": "c", "ownerReferences": [{"uid": "p"}]}}),
        );
        assert_eq!(store.dependents_of("p").len(), 1);
        store.put(&secrets(), true, &key, json!({"metadata": {"uid": "c"}}));
        assert!(store.dependents_of("p").is_empty());
        assert!(store.locate_uid("c").is_some());
        store.remove(&secrets(), &key, None);
        assert!(store.locate_uid("c").is_none());
    }
}
