//! What a ClusterPushSecret asks for, decided without I/O: the PushSecret it wants in each
//! namespace, whether an existing one is up to date, and the status that results.

use std::collections::BTreeMap;

use external_secrets_crds::v1alpha1::{
    ClusterPushSecret, ClusterPushSecretNamespaceFailure, ClusterPushSecretStatus, PushSecret,
    PushSecretStatusCondition,
};
use kube::{Resource, ResourceExt};

use crate::context::FIELD_MANAGER;
use crate::controllers::metadata::owns_exactly;

/// Upstream's message when some namespaces could not be provisioned.
pub const MESSAGE_NAMESPACES_FAILED: &str = "one or more namespaces failed";
/// Upstream's reason for a namespace holding a foreign PushSecret of the same name.
pub const REASON_ALREADY_EXISTS: &str = "push secret already exists in namespace";

/// The name of the PushSecrets to create: `spec.pushSecretName`, else the ClusterPushSecret's
/// own.
pub fn push_secret_name(cps: &ClusterPushSecret) -> String {
    cps.spec
        .push_secret_name
        .clone()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| cps.name_any())
}

/// The PushSecret the ClusterPushSecret wants in `namespace`: its spec, the metadata of
/// `spec.pushSecretMetadata`, and a controller reference.
pub fn desired_push_secret(cps: &ClusterPushSecret, namespace: &str, name: &str) -> PushSecret {
    let metadata = cps.spec.push_secret_metadata.clone().unwrap_or_default();
    let mut push_secret = PushSecret::new(name, cps.spec.push_secret_spec.clone());
    push_secret.metadata.namespace = Some(namespace.to_owned());
    push_secret.metadata.labels = Some(metadata.labels).filter(|labels| !labels.is_empty());
    push_secret.metadata.annotations =
        Some(metadata.annotations).filter(|annotations| !annotations.is_empty());
    push_secret.metadata.owner_references = cps.controller_owner_ref(&()).map(|owner| vec![owner]);
    push_secret
}

/// Whether `existing` already is `desired` (spec, our labels and annotations, owner), with
/// none we applied before and dropped since (upstream replaces the copy's metadata).
pub fn is_up_to_date(existing: &PushSecret, desired: &PushSecret) -> bool {
    existing.spec == desired.spec
        && owns_exactly(&existing.metadata, &desired.metadata, FIELD_MANAGER)
}

/// The status after provisioning: upstream's `Ready` condition (True, or False with its
/// message when any namespace failed), sorted namespaces and failures.
pub fn status(
    push_secret_name: &str,
    provisioned: &[String],
    failed: &BTreeMap<String, String>,
) -> ClusterPushSecretStatus {
    let condition = PushSecretStatusCondition {
        r#type: "Ready".to_owned(),
        status: if failed.is_empty() { "True" } else { "False" }.to_owned(),
        message: (!failed.is_empty()).then(|| MESSAGE_NAMESPACES_FAILED.to_owned()),
        ..PushSecretStatusCondition::default()
    };
    let mut provisioned = provisioned.to_vec();
    provisioned.sort();
    ClusterPushSecretStatus {
        push_secret_name: Some(push_secret_name.to_owned()),
        failed_namespaces: failed
            .iter()
            .map(|(namespace, reason)| ClusterPushSecretNamespaceFailure {
                namespace: namespace.clone(),
                reason: Some(reason.clone()),
            })
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

    fn cps(spec: serde_json::Value) -> ClusterPushSecret {
        let mut manifest = json!({
            "apiVersion": "external-secrets.io/v1alpha1",
            "kind": "ClusterPushSecret",
            "metadata": {"name": "shared", "uid": "cps-uid"},
            "spec": {"pushSecretSpec": {
                "secretStoreRefs": [{"name": "store", "kind": "ClusterSecretStore"}],
                "selector": {"secret": {"name": "source"}},
            }},
        });
        if let (Some(base), serde_json::Value::Object(extra)) =
            (manifest["spec"].as_object_mut(), spec)
        {
            base.extend(extra);
        }
        serde_json::from_value(manifest).unwrap()
    }

    fn namespace(name: &str, labels: &[(&str, &str)]) -> PartialObjectMeta<Namespace> {
        serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": labels.iter().copied().collect::<BTreeMap<_, _>>()},
        }))
        .unwrap()
    }

    #[test]
    fn namespaces_are_selected_by_any_selector_only() {
        let all = [
            namespace("team-a", &[("team", "a")]),
            namespace("team-b", &[("team", "b")]),
            namespace("other", &[]),
        ];
        let both = cps(json!({"namespaceSelectors": [
            {"matchLabels": {"team": "a"}},
            {"matchExpressions": [{"key": "team", "operator": "In", "values": ["b"]}]},
        ]}));
        assert_eq!(target_namespaces(&both, &all), ["team-a", "team-b"]);
        assert!(target_namespaces(&cps(json!({})), &all).is_empty());
    }

    #[test]
    fn the_desired_push_secret_carries_spec_metadata_and_owner() {
        let shared = cps(json!({
            "pushSecretName": "copy",
            "pushSecretMetadata": {"labels": {"app": "x"}, "annotations": {"note": "y"}},
        }));
        let name = shared.copy_name();
        assert_eq!(name, "copy");
        let desired = desired_push_secret(&shared, "team-a", &name);
        assert_eq!(desired.metadata.namespace.as_deref(), Some("team-a"));
        assert_eq!(desired.spec, shared.spec.push_secret_spec);
        assert_eq!(desired.labels()["app"], "x");
        assert_eq!(desired.annotations()["note"], "y");
        assert!(is_owned_by::<ClusterPushSecret>(
            &desired.metadata,
            "shared"
        ));
        assert!(!is_owned_by::<ClusterPushSecret>(
            &desired.metadata,
            "other"
        ));
        assert!(!is_owned_by::<
            external_secrets_crds::v1::ClusterExternalSecret,
        >(&desired.metadata, "shared"));
        assert!(is_up_to_date(&desired, &desired));
        let mut changed = desired.clone();
        changed.spec.refresh_interval = "5m".into();
        assert!(!is_up_to_date(&changed, &desired));
        assert_eq!(cps(json!({})).copy_name(), "shared");
    }

    #[test]
    fn status_reports_failures_with_upstreams_message_and_changes_only_when_needed() {
        let failed: BTreeMap<String, String> =
            [("c".to_owned(), REASON_ALREADY_EXISTS.to_owned())].into();
        let bad = status("copy", &["b".into(), "a".into()], &failed);
        assert_eq!(bad.provisioned_namespaces, ["a", "b"]);
        assert_eq!(bad.conditions[0].status, "False");
        assert_eq!(
            bad.conditions[0].message.as_deref(),
            Some(MESSAGE_NAMESPACES_FAILED)
        );
        assert_eq!(bad.failed_namespaces[0].namespace, "c");
        let mut template = cps(json!({}));
        let ok = BTreeMap::new();
        assert!(template.status_update("copy", &["a".into()], &ok).is_some());
        template.status = Some(status("copy", &["a".into()], &ok));
        assert!(template.status_update("copy", &["a".into()], &ok).is_none());
        assert_eq!(template.provisioned_namespaces(), ["a"]);
        assert_eq!(template.recorded_copy_name(), Some("copy"));
    }
}
