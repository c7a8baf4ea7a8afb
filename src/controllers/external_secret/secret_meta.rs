//! What the decisions of a sync read of a managed Secret's metadata (issue 24): which field
//! managers own its `data` and which labels, annotations and finalizers an ExternalSecret's
//! manager applied. Everything else of managedFields is trimmed before the metadata is cached.

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use kube::core::PartialObjectMeta;
use serde_json::Value;

use crate::controllers::metadata::{compact_fields, field_names};

/// The prefix of every ExternalSecret's field manager on its target (see
/// [`super::target::field_manager`]).
pub const MANAGER_PREFIX: &str = "externalsecrets.external-secrets.io/";

/// The metadata of one managed Secret, as the decisions read it.
pub type SecretMeta = PartialObjectMeta<Secret>;

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
pub mod tests {
    use super::*;
    use serde_json::json;

    /// A managed Secret's metadata with managedFields `(manager, operation, fieldsV1)`; the
    /// known-Secrets tests build theirs with it too.
    pub fn meta(version: &str, fields: &[(&str, &str, serde_json::Value)]) -> SecretMeta {
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
