//! Comparing the metadata we apply with what an object already has, so controllers write
//! only when something of ours is missing or different; and the version of an object's
//! spec and metadata a sync was made from.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

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
}
