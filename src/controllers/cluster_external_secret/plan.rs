//! What a ClusterExternalSecret asks for, decided without I/O: the ExternalSecret it wants in
//! each namespace, whether an existing one is up to date, and the status that results.

use std::collections::BTreeMap;

use external_secrets_crds::v1::{
    ClusterExternalSecret, ClusterExternalSecretNamespaceFailure, ClusterExternalSecretStatus,
    ClusterExternalSecretStatusCondition, ExternalSecret,
};
use kube::{Resource, ResourceExt};

use crate::context::FIELD_MANAGER;
use crate::controllers::metadata::owns_exactly;

/// Upstream's annotation forcing a sync, copied from the ClusterExternalSecret to its copies.
pub const ANNOTATION_FORCE_SYNC: &str = "external-secrets.io/force-sync";
/// Upstream's message when some namespaces could not be provisioned.
pub const MESSAGE_NAMESPACES_FAILED: &str = "one or more namespaces failed";
/// Upstream's reason for a namespace holding a foreign ExternalSecret of the same name.
pub const REASON_ALREADY_EXISTS: &str = "external secret already exists in namespace";

/// The name of the ExternalSecrets to create: `spec.externalSecretName`, else the
/// ClusterExternalSecret's own.
pub fn external_secret_name(ces: &ClusterExternalSecret) -> String {
    ces.spec
        .external_secret_name
        .clone()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| ces.name_any())
}

/// The ExternalSecret the ClusterExternalSecret wants in `namespace`: its spec, the metadata
/// of `spec.externalSecretMetadata`, the force-sync annotation, and a controller reference.
pub fn desired_external_secret(
    ces: &ClusterExternalSecret,
    namespace: &str,
    name: &str,
) -> ExternalSecret {
    let metadata = ces
        .spec
        .external_secret_metadata
        .clone()
        .unwrap_or_default();
    let mut annotations = metadata.annotations;
    if let Some(value) = ces.annotations().get(ANNOTATION_FORCE_SYNC) {
        annotations.insert(ANNOTATION_FORCE_SYNC.to_owned(), value.clone());
    }
    let mut es = ExternalSecret::new(name, ces.spec.external_secret_spec.clone());
    es.metadata.namespace = Some(namespace.to_owned());
    es.metadata.labels = Some(metadata.labels).filter(|labels| !labels.is_empty());
    es.metadata.annotations = Some(annotations).filter(|annotations| !annotations.is_empty());
    es.metadata.owner_references = ces.controller_owner_ref(&()).map(|owner| vec![owner]);
    es
}

/// Whether `existing` already is `desired` (spec, our labels and annotations, owner), with
/// none we applied before and dropped since (upstream replaces the copy's metadata).
pub fn is_up_to_date(existing: &ExternalSecret, desired: &ExternalSecret) -> bool {
    existing.spec == desired.spec
        && owns_exactly(&existing.metadata, &desired.metadata, FIELD_MANAGER)
}

/// The status after provisioning: upstream's `Ready` condition (True, or False with its
/// message when any namespace failed), sorted namespaces and failures.
pub fn status(
    external_secret_name: &str,
    provisioned: &[String],
    failed: &BTreeMap<String, String>,
) -> ClusterExternalSecretStatus {
    let condition = if failed.is_empty() {
        ClusterExternalSecretStatusCondition {
            r#type: "Ready".to_owned(),
            status: "True".to_owned(),
            message: None,
        }
    } else {
        ClusterExternalSecretStatusCondition {
            r#type: "Ready".to_owned(),
            status: "False".to_owned(),
            message: Some(MESSAGE_NAMESPACES_FAILED.to_owned()),
        }
    };
    let mut provisioned = provisioned.to_vec();
    provisioned.sort();
    ClusterExternalSecretStatus {
        external_secret_name: Some(external_secret_name.to_owned()),
        failed_namespaces: failed
            .iter()
            .map(
                |(namespace, reason)| ClusterExternalSecretNamespaceFailure {
                    namespace: namespace.clone(),
                    reason: Some(reason.clone()),
                },
            )
            .collect(),
        provisioned_namespaces: provisioned,
        conditions: vec![condition],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::fan_out::ClusterTemplate;
    use crate::controllers::fan_out::selection::{is_owned_by, target_namespaces};
    use k8s_openapi::api::core::v1::Namespace;
    use kube::core::PartialObjectMeta;
    use serde_json::json;

    fn ces(spec: serde_json::Value) -> ClusterExternalSecret {
        let mut manifest = json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ClusterExternalSecret",
            "metadata": {"name": "shared", "uid": "ces-uid"},
            "spec": {"externalSecretSpec": {"secretStoreRef": {"name": "store"}}},
        });
        if let (Some(base), serde_json::Value::Object(extra)) =
            (manifest["spec"].as_object_mut(), spec)
        {
            base.extend(extra);
        }
        serde_json::from_value(manifest).unwrap()
    }

    fn namespace(
        name: &str,
        labels: &[(&str, &str)],
        terminating: bool,
    ) -> PartialObjectMeta<Namespace> {
        let mut meta: PartialObjectMeta<Namespace> = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": labels.iter().copied().collect::<BTreeMap<_, _>>()},
        }))
        .unwrap();
        if terminating {
            meta.metadata.deletion_timestamp =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                ));
        }
        meta
    }

    #[test]
    fn namespaces_are_selected_by_name_or_any_selector_but_not_while_terminating() {
        let all = [
            namespace("team-a", &[("team", "a")], false),
            namespace("team-b", &[("team", "b")], false),
            namespace("listed", &[], false),
            namespace("leaving", &[("team", "a")], true),
            namespace("other", &[], false),
        ];
        let by_both = ces(json!({
            "namespaces": ["listed"],
            "namespaceSelectors": [{"matchLabels": {"team": "b"}}],
            "namespaceSelector": {"matchLabels": {"team": "a"}},
        }));
        assert_eq!(
            target_namespaces(&by_both, &all),
            ["listed", "team-a", "team-b"]
        );
        assert!(target_namespaces(&ces(json!({})), &all).is_empty());
    }

    #[test]
    fn the_desired_external_secret_carries_spec_metadata_owner_and_force_sync() {
        let mut shared = ces(json!({
            "externalSecretName": "copy",
            "externalSecretMetadata": {"labels": {"app": "x"}, "annotations": {"note": "y"}},
        }));
        shared
            .metadata
            .annotations
            .get_or_insert_default()
            .insert(ANNOTATION_FORCE_SYNC.into(), "3".into());
        let name = external_secret_name(&shared);
        assert_eq!(name, "copy");
        let desired = desired_external_secret(&shared, "team-a", &name);
        assert_eq!(desired.metadata.namespace.as_deref(), Some("team-a"));
        assert_eq!(desired.labels()["app"], "x");
        assert_eq!(desired.annotations()["note"], "y");
        assert_eq!(desired.annotations()[ANNOTATION_FORCE_SYNC], "3");
        assert!(is_owned_by::<ClusterExternalSecret>(
            &desired.metadata,
            "shared"
        ));
        assert!(!is_owned_by::<ClusterExternalSecret>(
            &desired.metadata,
            "another"
        ));
        assert!(is_up_to_date(&desired, &desired));
        let mut changed = desired.clone();
        changed.spec.refresh_interval = "5m".into();
        assert!(!is_up_to_date(&changed, &desired));
        // Upstream "Should prune the force-sync annotation"
        // (clusterexternalsecret_controller_test.go): an annotation we applied and the
        // ClusterExternalSecret no longer has makes the copy stale.
        let mut applied = desired.clone();
        applied.metadata.managed_fields = Some(vec![
            serde_json::from_value(json!({
                "manager": FIELD_MANAGER,
                "operation": "Apply",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:annotations": {
                    "f:note": {}, "f:external-secrets.io/force-sync": {},
                }}},
            }))
            .unwrap(),
        ]);
        assert!(is_up_to_date(&applied, &desired));
        shared.metadata.annotations = None;
        let pruned = desired_external_secret(&shared, "team-a", &name);
        assert!(!pruned.annotations().contains_key(ANNOTATION_FORCE_SYNC));
        assert!(!is_up_to_date(&applied, &pruned));
        assert_eq!(external_secret_name(&ces(json!({}))), "shared");
    }

    #[test]
    fn status_reports_failures_with_upstreams_message() {
        let ok = status("copy", &["b".into(), "a".into()], &BTreeMap::new());
        assert_eq!(ok.provisioned_namespaces, ["a", "b"]);
        assert_eq!(ok.conditions[0].status, "True");
        let mut template = ces(json!({}));
        assert!(
            template
                .status_update("copy", &["b".into(), "a".into()], &BTreeMap::new())
                .is_some()
        );
        template.status = Some(ok.clone());
        assert!(
            template
                .status_update("copy", &["a".into(), "b".into()], &BTreeMap::new())
                .is_none()
        );
        let failed: BTreeMap<String, String> =
            [("c".to_owned(), REASON_ALREADY_EXISTS.to_owned())].into();
        let bad = status("copy", &["a".into()], &failed);
        assert_eq!(bad.conditions[0].status, "False");
        assert_eq!(
            bad.conditions[0].message.as_deref(),
            Some(MESSAGE_NAMESPACES_FAILED)
        );
        assert_eq!(bad.failed_namespaces[0].namespace, "c");
    }
}
