//! Comparing the metadata we apply with what an object already has, so controllers write
//! only when something of ours is missing, different or no longer wanted (what a field manager
//! applied before is read from managedFields); and the version of an object's spec and
//! metadata a sync was made from.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

/// Whether `existing` already carries every label, annotation and controller owner reference
/// of `desired` (other managers' extra entries do not matter).
pub fn includes(existing: &ObjectMeta, desired: &ObjectMeta) -> bool {
    let contains = |have: &Option<BTreeMap<String, String>>,
                    want: &Option<BTreeMap<String, String>>| {
        want.iter()
            .flatten()
            .all(|(key, value)| have.as_ref().and_then(|h| h.get(key)) == Some(value))
    };
    let owners = desired.owner_references.iter().flatten().all(|want| {
        existing
            .owner_references
            .iter()
            .flatten()
            .any(|have| have.uid == want.uid && have.controller == Some(true))
    });
    contains(&existing.labels, &desired.labels)
        && contains(&existing.annotations, &desired.annotations)
        && owners
}

/// The entries under `path` of `meta`'s managedFields (e.g. `["f:metadata", "f:labels"]`)
/// that `manager` owns by server-side apply: map keys (`f:key`) and set values (`v:"value"`,
/// as finalizers are listed). Fields of `Update` operations are left out: an apply never
/// removes them. Reads fieldsV1 as the API server sends it and in [`compact_fields`] form.
pub fn applied_keys(meta: &ObjectMeta, manager: &str, path: &[&str]) -> BTreeSet<String> {
    meta.managed_fields
        .iter()
        .flatten()
        .filter(|entry| {
            entry.manager.as_deref() == Some(manager) && entry.operation.as_deref() == Some("Apply")
        })
        .filter_map(|entry| entry.fields_v1.as_ref())
        .flat_map(|fields| field_names(&fields.0, path))
        .filter_map(|field| match field.split_once(':') {
            Some(("f", key)) => Some(key.to_owned()),
            Some(("v", value)) => serde_json::from_str::<String>(value).ok(),
            _ => None,
        })
        .collect()
}

/// Separates the steps of a path in [`compact_fields`] form: no field name of the paths kept
/// (label and annotation keys, finalizers, `f:data`) can hold a newline.
const STEP: char = '\n';

/// The names of the fields directly under `path` of a fieldsV1 set (`f:app`, `v:"x"`, ...),
/// in either form.
pub fn field_names<'a>(fields: &'a Value, path: &[&str]) -> Vec<&'a str> {
    if let Value::Array(paths) = fields {
        let prefix = path_prefix(path);
        return paths
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|kept| kept.strip_prefix(prefix.as_str()))
            .filter(|name| !name.contains(STEP))
            .collect();
    }
    path.iter()
        .try_fold(fields, |value, step| value.get(step))
        .and_then(Value::as_object)
        .map(|names| names.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The steps of `path` in [`compact_fields`] form, each followed by [`STEP`]: what every kept
/// path under `path` starts with.
fn path_prefix(path: &[&str]) -> String {
    path.iter().flat_map(|step| [*step, "\n"]).collect()
}

/// A fieldsV1 set reduced to the fields directly under each of `parents`, as one flat list of
/// newline-joined paths (`["f:metadata\nf:labels\nf:app"]`) instead of nested objects: each
/// non-empty JSON object costs a B-tree node of about 600 bytes, so the few fields a cache
/// keeps of a Secret took 4 KiB nested (issue 24). Only caches hold this form; readers go
/// through [`field_names`].
pub fn compact_fields(fields: &Value, parents: &[&[&str]]) -> Value {
    let kept = parents.iter().flat_map(|parent| {
        field_names(fields, parent)
            .into_iter()
            .filter(|name| name.contains(':'))
            .map(move |name| Value::String(path_prefix(parent) + name))
    });
    Value::Array(kept.collect())
}

/// Whether `existing` holds exactly the labels, annotations and finalizers `manager` applies
/// as `desired`: each desired entry present (see [`includes`]), and no entry `manager` applied
/// before and no longer sends (the next apply removes it, as upstream removes labels and
/// annotations dropped from a template or from `externalSecretMetadata`). Entries of other
/// managers do not matter.
pub fn owns_exactly(existing: &ObjectMeta, desired: &ObjectMeta, manager: &str) -> bool {
    let stale = |path: &[&str], wanted: Option<&BTreeMap<String, String>>| {
        applied_keys(existing, manager, path)
            .iter()
            .any(|key| !wanted.is_some_and(|wanted| wanted.contains_key(key)))
    };
    let finalizers = desired.finalizers.as_deref().unwrap_or_default();
    let have_finalizers = existing.finalizers.as_deref().unwrap_or_default();
    includes(existing, desired)
        && finalizers.iter().all(|f| have_finalizers.contains(f))
        && !stale(&["f:metadata", "f:labels"], desired.labels.as_ref())
        && !stale(
            &["f:metadata", "f:annotations"],
            desired.annotations.as_ref(),
        )
        && applied_keys(existing, manager, &["f:metadata", "f:finalizers"])
            .iter()
            .all(|owned| finalizers.contains(owned))
}

/// Upstream's `syncedResourceVersion`: the generation plus a hash of labels and annotations,
/// so metadata changes (e.g. the `force-sync` annotation) trigger a refresh too.
pub fn synced_resource_version(metadata: &ObjectMeta) -> String {
    format!(
        "{}-{}",
        metadata.generation.unwrap_or_default(),
        super::hash::meta_hash(metadata.annotations.as_ref(), metadata.labels.as_ref())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn meta(labels: &[(&str, &str)], owner: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            owner_references: owner.map(|uid| {
                vec![OwnerReference {
                    uid: uid.to_owned(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]
            }),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn extra_entries_are_fine_missing_or_different_ones_are_not() {
        let desired = meta(&[("a", "1")], Some("u"));
        assert!(includes(
            &meta(&[("a", "1"), ("b", "2")], Some("u")),
            &desired
        ));
        assert!(!includes(&meta(&[("a", "2")], Some("u")), &desired));
        assert!(!includes(&meta(&[("a", "1")], None), &desired));
        assert!(!includes(&meta(&[("a", "1")], Some("other")), &desired));
    }

    fn applied(manager: &str, operation: &str, fields: serde_json::Value) -> ObjectMeta {
        serde_json::from_value(serde_json::json!({
            "labels": {"kept": "1", "dropped": "1", "foreign": "1"},
            "annotations": {"note": "x"},
            "finalizers": ["example.com/hold"],
            "managedFields": [
                {"manager": manager, "operation": operation, "fieldsType": "FieldsV1",
                 "fieldsV1": fields},
                {"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:foreign": {}}}}},
            ],
        }))
        .unwrap()
    }

    /// What upstream leaves after a label or annotation it wrote is no longer wanted: gone
    /// (externalsecret_controller_test.go "should removed outdated labels and annotations":
    /// entries the ExternalSecret's field owner wrote are removed, while "mergeLabelsAnnotations"
    /// keeps another manager's; clusterexternalsecret_controller_test.go "Should prune the
    /// force-sync annotation").
    #[test]
    fn entries_we_applied_and_no_longer_send_make_the_object_stale() {
        let fields = serde_json::json!({"f:metadata": {
            "f:labels": {".": {}, "f:kept": {}, "f:dropped": {}},
            "f:annotations": {"f:note": {}},
            "f:finalizers": {".": {}, "v:\"example.com/hold\"": {}},
        }});
        let existing = applied("es", "Apply", fields);
        assert_eq!(
            applied_keys(&existing, "es", &["f:metadata", "f:labels"]),
            ["dropped".to_owned(), "kept".to_owned()].into()
        );
        assert_eq!(
            applied_keys(&existing, "es", &["f:metadata", "f:finalizers"]),
            ["example.com/hold".to_owned()].into()
        );
        let mut desired: ObjectMeta = serde_json::from_value(serde_json::json!({
            "labels": {"kept": "1", "dropped": "1"},
            "annotations": {"note": "x"},
            "finalizers": ["example.com/hold"],
        }))
        .unwrap();
        assert!(owns_exactly(&existing, &desired, "es"));
        desired.labels.as_mut().unwrap().remove("dropped");
        assert!(!owns_exactly(&existing, &desired, "es"), "label dropped");
        desired
            .labels
            .as_mut()
            .unwrap()
            .insert("dropped".into(), "1".into());
        desired.annotations = None;
        assert!(
            !owns_exactly(&existing, &desired, "es"),
            "annotation dropped"
        );
        desired.annotations = Some([("note".into(), "x".into())].into());
        desired.finalizers = None;
        assert!(
            !owns_exactly(&existing, &desired, "es"),
            "finalizer dropped"
        );
        // Only our own Apply entries count: an Update never gets pruned by an apply.
        let updated = applied(
            "es",
            "Update",
            serde_json::json!({"f:metadata": {
            "f:labels": {"f:dropped": {}}}}),
        );
        let minimal = ObjectMeta::default();
        assert!(owns_exactly(&updated, &minimal, "es"));
        assert!(owns_exactly(&existing, &minimal, "kubectl-other"));
    }

    #[test]
    fn compact_fields_answer_as_the_nested_form() {
        let nested = serde_json::json!({"f:metadata": {
            "f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:tier": {}},
            "f:annotations": {"f:note": {}},
            "f:finalizers": {".": {}, "v:\"example.com/hold\"": {}},
            "f:ownerReferences": {"k:{\"uid\":\"u\"}": {".": {}, "f:kind": {}}},
        }, "f:data": {"f:password": {}}});
        let parents: [&[&str]; 3] = [
            &["f:metadata", "f:labels"],
            &["f:metadata", "f:annotations"],
            &["f:metadata", "f:finalizers"],
        ];
        let compact = compact_fields(&nested, &parents);
        assert_eq!(
            compact,
            serde_json::json!([
                "f:metadata\nf:labels\nf:app.kubernetes.io/name",
                "f:metadata\nf:labels\nf:tier",
                "f:metadata\nf:annotations\nf:note",
                "f:metadata\nf:finalizers\nv:\"example.com/hold\"",
            ])
        );
        let (nested, compact) = (
            applied("es", "Apply", nested),
            applied("es", "Apply", compact),
        );
        for path in parents {
            assert_eq!(
                applied_keys(&compact, "es", path),
                applied_keys(&nested, "es", path),
                "{path:?}"
            );
        }
        assert!(applied_keys(&compact, "es", &["f:metadata"]).is_empty());
        assert!(applied_keys(&compact, "es", &["f:data"]).is_empty());
    }
}
