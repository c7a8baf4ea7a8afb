//! What the controller knows about target Secrets without reading them (issue 24): the
//! metadata-only watch of managed Secrets (label `reconcile.external-secrets.io/managed`) kept
//! as a cache, plus the metadata of Secrets this process wrote that the watch has not shown
//! yet. No Secret payload is held: only metadata, and of managedFields only what the decisions
//! below read.
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
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use serde_json::Value;

use super::cached_secret::CachedSecret;
use crate::caches::{give_back_burst, is_synced};
use crate::controllers::metadata::{compact_fields, field_names};

/// The prefix of every ExternalSecret's field manager on its target (see
/// [`super::target::field_manager`]).
pub const MANAGER_PREFIX: &str = "externalsecrets.external-secrets.io/";

/// The metadata of one managed Secret, as the decisions read it.
pub type SecretMeta = PartialObjectMeta<Secret>;

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
    pub fn wrote(&self, secret: &Secret) {
        let written = CachedSecret::new(PartialObjectMeta {
            types: None,
            metadata: secret.metadata.clone(),
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

/// Whether the Secret with metadata `meta` still holds the data its data-hash annotation
/// covers: every manager owning any `data` key is an ExternalSecret's server-side apply (each
/// writes the annotation for the data it leaves). Another client's edit takes the edited keys
/// over (an `Update` owns what it changed), so the Secret must be read to be judged.
pub fn data_untouched(meta: &SecretMeta) -> bool {
    meta.metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|entry| owns_data(entry))
        .all(|entry| {
            entry.operation.as_deref() == Some("Apply")
                && entry
                    .manager
                    .as_deref()
                    .is_some_and(|manager| manager.starts_with(MANAGER_PREFIX))
        })
}

/// Whether a manager other than `manager` owns any `data` key (their values are needed to
/// compute the data-hash of the Secret after our apply, so it must be read).
pub fn others_own_data(meta: &SecretMeta, manager: &str) -> bool {
    meta.metadata
        .managed_fields
        .iter()
        .flatten()
        .any(|entry| owns_data(entry) && entry.manager.as_deref() != Some(manager))
}

fn owns_data(entry: &ManagedFieldsEntry) -> bool {
    entry
        .fields_v1
        .as_ref()
        .is_some_and(|fields| !field_names(&fields.0, &["f:data"]).is_empty())
}

/// The fields of an ExternalSecret's manager its later applies are compared with.
const APPLIED_METADATA: [&[&str]; 3] = [
    &["f:metadata", "f:labels"],
    &["f:metadata", "f:annotations"],
    &["f:metadata", "f:finalizers"],
];

/// Trims managedFields to what the decisions read, in the compact form
/// ([`compact_fields`]): an ExternalSecret manager's metadata fields (labels, annotations and
/// finalizers it applied), and for every manager whether it owns `data` (one marker key
/// instead of the key list). Everything else is dropped.
pub fn trim_managed_fields(entries: Vec<ManagedFieldsEntry>) -> Vec<ManagedFieldsEntry> {
    entries
        .into_iter()
        .filter_map(|entry| {
            let ours = entry
                .manager
                .as_deref()
                .is_some_and(|manager| manager.starts_with(MANAGER_PREFIX));
            let data = owns_data(&entry);
            let mut kept = match (&entry.fields_v1, ours) {
                (Some(fields), true) => compact_fields(&fields.0, &APPLIED_METADATA),
                _ => Value::Array(Vec::new()),
            };
            let Value::Array(paths) = &mut kept else {
                return None;
            };
            if data {
                paths.push(Value::String(DATA_MARKER.to_owned()));
            }
            if paths.is_empty() {
                return None;
            }
            Some(ManagedFieldsEntry {
                manager: entry.manager,
                operation: entry.operation,
                fields_v1: Some(FieldsV1(kept)),
                ..ManagedFieldsEntry::default()
            })
        })
        .collect()
}

/// Stands for every `data` key a manager owns (which keys does not matter here).
const DATA_MARKER: &str = "f:data\nf:*";

/// Trims a watched Secret's metadata before it enters the cache (see
/// [`trim_managed_fields`]), dropping what no decision reads.
pub fn trim(meta: &mut SecretMeta) {
    let fields = meta.metadata.managed_fields.take();
    meta.metadata.managed_fields = fields.map(trim_managed_fields);
    // Nothing decides by these; each is a few more allocations per cached Secret.
    meta.types = None;
    meta.metadata.uid = None;
    meta.metadata.creation_timestamp = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::runtime::reflector;
    use serde_json::json;

    use crate::controllers::external_secret::cached_secret::compact;

    /// A managed Secret's metadata with managedFields `(manager, operation, fieldsV1)`.
    fn meta(version: &str, fields: &[(&str, &str, serde_json::Value)]) -> SecretMeta {
        let entries: Vec<_> = fields
            .iter()
            .map(|(manager, operation, fields)| {
                json!({"manager": manager, "operation": operation, "fieldsType": "FieldsV1",
                       "fieldsV1": fields})
            })
            .collect();
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "namespace": "team", "resourceVersion": version,
                         "managedFields": entries},
        }))
        .unwrap()
    }

    const OURS: &str = "externalsecrets.external-secrets.io/db";

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
        known.wrote(&written);
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
        known.wrote(&written);
        assert!(known.written().is_empty());
        let edited = compact(watcher::Event::Apply(meta("7", &[])));
        writer.apply_watcher_event(&edited);
        known.observe(&edited);
        let Known::Managed(seen) = known.lookup("team", "db") else {
            panic!("known")
        };
        assert_eq!(seen.metadata.resource_version.as_deref(), Some("7"));

        // A deletion seen by the watch leaves nothing behind.
        known.wrote(&written);
        let deleted = compact(watcher::Event::Delete(meta("6", &[])));
        writer.apply_watcher_event(&deleted);
        known.observe(&deleted);
        assert!(matches!(known.lookup("team", "db"), Known::Missing));
    }

    #[test]
    fn data_edited_by_another_client_is_not_trusted() {
        let applied = (OURS, "Apply", json!({"f:data": {"f:password": {}}}));
        assert!(data_untouched(&meta("1", std::slice::from_ref(&applied))));
        let edited = (
            "kubectl-edit",
            "Update",
            json!({"f:data": {"f:password": {}}}),
        );
        assert!(!data_untouched(&meta("2", &[applied.clone(), edited])));
        // Another manager's labels do not touch the data.
        let labelled = (
            "kubectl-label",
            "Update",
            json!({"f:metadata": {"f:labels": {}}}),
        );
        assert!(data_untouched(&meta("3", &[applied.clone(), labelled])));
        // Another ExternalSecret merging keys keeps the hash right but owns data.
        let merged = (
            "externalsecrets.external-secrets.io/other",
            "Apply",
            json!({"f:data": {"f:extra": {}}}),
        );
        let both = meta("4", &[applied, merged]);
        assert!(data_untouched(&both));
        assert!(others_own_data(&both, OURS));
    }

    #[test]
    fn trimming_keeps_what_the_decisions_read() {
        let entries = meta(
            "1",
            &[
                (
                    OURS,
                    "Apply",
                    json!({"f:data": {"f:a": {}, "f:b": {}}, "f:type": {},
                           "f:metadata": {"f:labels": {"f:x": {}}}}),
                ),
                (
                    "kubectl",
                    "Update",
                    json!({"f:data": {"f:c": {}}, "f:metadata": {"f:labels": {}}}),
                ),
                (
                    "other",
                    "Update",
                    json!({"f:metadata": {"f:labels": {"f:y": {}}}}),
                ),
            ],
        );
        let before_untouched = data_untouched(&entries);
        let before_others = others_own_data(&entries, OURS);
        let mut trimmed = entries.clone();
        trim(&mut trimmed);
        let fields = trimmed.metadata.managed_fields.clone().unwrap();
        assert_eq!(
            fields.len(),
            2,
            "the manager owning neither data nor ours is dropped"
        );
        assert_eq!(
            fields[0].fields_v1.as_ref().unwrap().0,
            json!(["f:metadata\nf:labels\nf:x", "f:data\nf:*"])
        );
        assert_eq!(
            fields[1].fields_v1.as_ref().unwrap().0,
            json!(["f:data\nf:*"]),
            "another manager's metadata is dropped"
        );
        let labels = ["f:metadata", "f:labels"];
        assert_eq!(
            crate::controllers::metadata::applied_keys(&trimmed.metadata, OURS, &labels),
            crate::controllers::metadata::applied_keys(&entries.metadata, OURS, &labels)
        );
        assert_eq!(data_untouched(&trimmed), before_untouched);
        assert_eq!(others_own_data(&trimmed, OURS), before_others);
    }
}
