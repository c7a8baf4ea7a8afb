//! The cache-or-read decisions of a sync (issue 24): a hit decides without reading, a miss
//! writes without force, anything the cache cannot vouch for is read.

use std::sync::Arc;

use kube::core::PartialObjectMeta;
use serde_json::json;

use super::*;
use crate::controllers::hash::data_hash;

const OURS: &str = "externalsecrets.external-secrets.io/db";

fn es(policy: &str, synced: bool) -> ExternalSecret {
    let mut es: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db", "namespace": "team", "uid": "u-1", "generation": 1},
        "spec": {"secretStoreRef": {"name": "s"}, "target": {"creationPolicy": policy}},
    }))
    .unwrap();
    if synced {
        let version = synced_resource_version(&es.metadata);
        es.status =
            Some(serde_json::from_value(json!({"syncedResourceVersion": version})).unwrap());
    }
    es
}

fn data() -> SecretData {
    [("password".to_owned(), b"s3cret".to_vec())].into()
}

/// The metadata our apply of `data()` leaves, plus managedFields `(manager, operation, data
/// keys)`.
fn cached(es: &ExternalSecret, managers: &[(&str, &str)]) -> Arc<SecretMeta> {
    let desired = target::desired_secret(es, &data(), None, &TemplateSources::default()).unwrap();
    let mut metadata = desired.metadata;
    metadata.managed_fields = Some(
        managers
            .iter()
            .map(|(manager, operation)| {
                serde_json::from_value(json!({
                    "manager": manager, "operation": operation, "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:password": {}},
                                 "f:metadata": {"f:labels": {"f:reconcile.external-secrets.io/managed": {}}}},
                }))
                .unwrap()
            })
            .collect(),
    );
    Arc::new(PartialObjectMeta {
        types: None,
        metadata,
        _phantom: std::marker::PhantomData,
    })
}

#[test]
fn a_miss_is_written_without_force_and_a_trusted_hit_from_the_cache() {
    let es = es("Owner", true);
    assert_eq!(basis_for_write(&es, &Known::Missing), Basis::Absent);
    let hit = Known::Managed(cached(&es, &[(OURS, "Apply")]));
    assert_eq!(basis_for_write(&es, &hit), Basis::Cached);
    assert_eq!(basis_for_validity(&es, &hit), Some(true));
    assert_eq!(basis_for_validity(&es, &Known::Missing), Some(false));
}

#[test]
fn anything_the_cache_cannot_vouch_for_is_read() {
    let synced = es("Owner", true);
    // Another client edited the data.
    let edited = Known::Managed(cached(
        &synced,
        &[(OURS, "Apply"), ("kubectl-edit", "Update")],
    ));
    assert_eq!(basis_for_write(&synced, &edited), Basis::Read);
    assert_eq!(basis_for_validity(&synced, &edited), None);
    // Another ExternalSecret merged keys: their values are needed for the hash.
    let merged = Known::Managed(cached(
        &synced,
        &[
            (OURS, "Apply"),
            ("externalsecrets.external-secrets.io/other", "Apply"),
        ],
    ));
    assert_eq!(basis_for_write(&synced, &merged), Basis::Read);
    // The spec changed since the last sync (the Secret's type may have to change).
    let changed = es("Owner", false);
    let hit = Known::Managed(cached(&changed, &[(OURS, "Apply")]));
    assert_eq!(basis_for_write(&changed, &hit), Basis::Read);
    // Merge and CreateOrMerge need the data, as upstream.
    for policy in ["Merge", "CreateOrMerge"] {
        let es = es(policy, true);
        assert_eq!(basis_for_write(&es, &Known::Missing), Basis::Read);
        assert_eq!(basis_for_validity(&es, &Known::Missing), None);
    }
    // Orphan and None targets are never repaired: valid without looking.
    assert_eq!(
        basis_for_validity(&es("Orphan", true), &Known::Missing),
        Some(true)
    );
}

#[test]
fn a_cached_target_holding_our_data_is_not_written_again() {
    let es = es("Owner", true);
    let none = TemplateSources::default();
    let meta = cached(&es, &[(OURS, "Apply")]);
    assert!(cached_write(&es, &meta, &data(), &none).unwrap().is_none());
    // New provider data: a new hash, so an apply.
    let newer: SecretData = [("password".to_owned(), b"rotated".to_vec())].into();
    let desired = cached_write(&es, &meta, &newer, &none)
        .unwrap()
        .expect("an apply");
    assert_eq!(
        desired.metadata.annotations.unwrap()[target::ANNOTATION_DATA_HASH],
        data_hash(newer.iter().map(|(k, v)| (k, v.as_slice())))
    );
    // A label we applied and no longer send: an apply removes it.
    let mut stale = (*meta).clone();
    stale.metadata.managed_fields.as_mut().unwrap()[0]
        .fields_v1
        .as_mut()
        .unwrap()
        .0["f:metadata"]["f:labels"]["f:gone"] = json!({});
    assert!(cached_write(&es, &stale, &data(), &none).unwrap().is_some());
}

#[test]
fn a_cached_target_controlled_by_another_external_secret_is_refused() {
    let es = es("Owner", true);
    let mut meta = (*cached(&es, &[(OURS, "Apply")])).clone();
    meta.metadata.owner_references = Some(vec![
        serde_json::from_value(json!({
            "apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
            "name": "other", "uid": "u-2", "controller": true,
        }))
        .unwrap(),
    ]);
    let error = cached_write(&es, &meta, &data(), &TemplateSources::default()).unwrap_err();
    assert!(matches!(error, Error::OwnedByAnother(owner) if owner == "other"));
}
