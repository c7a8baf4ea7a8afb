//! The pure function at the heart of the operator: the objects the operand needs, from an
//! `ExternalSecretsConfig` and the `ExternalSecretsManager`'s global settings. The controller
//! applies exactly these (server-side apply) and deletes what it manages that is not among them.

mod deployment;
mod extra;
mod settings;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::{ExternalSecretsConfig, ExternalSecretsManager, InjectAnnotations, Mode};
pub use settings::{Effective, Environment, log_level};

/// The operand's namespace (fixed, as upstream's operator has it).
pub const NAMESPACE: &str = "external-secrets";

/// The label on every object the operator manages; objects are found (and pruned) by it.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "external-secrets-operator");

/// Labels the operator always sets; they win over users' labels.
const OPERATOR_LABELS: &[(&str, &str)] = &[
    ("app", "external-secrets"),
    MANAGED_BY,
    ("app.kubernetes.io/part-of", "external-secrets-operator"),
];

/// The cert-manager annotation that has the CA injector fill a `caBundle`.
pub const INJECT_CA_FROM: &str = "cert-manager.io/inject-ca-from";

/// Why no desired state could be computed.
#[derive(Debug, thiserror::Error)]
pub enum DesiredError {
    /// The embedded chart manifests do not parse (a broken build, caught by tests).
    #[error("the embedded operand manifests do not parse: {0}")]
    Manifests(#[from] serde_yaml::Error),
    /// An object did not convert between JSON and its Kubernetes type.
    #[error("building {object}: {source}")]
    Object {
        /// Kind and name.
        object: String,
        /// The conversion error.
        source: serde_json::Error,
    },
}

/// Every object the operand needs, in apply order (namespace first, webhook configurations last).
pub fn desired(
    config: &ExternalSecretsConfig,
    manager: Option<&ExternalSecretsManager>,
    environment: &Environment,
) -> Result<Vec<Value>, DesiredError> {
    let effective = Effective::new(config, manager, environment);
    let mut objects = vec![extra::namespace()];
    objects.extend(crate::operand::chart_objects(effective.cert_manager)?);
    objects.push(extra::deny_all());
    objects.extend(extra::custom_network_policies(&effective));
    objects.extend(extra::proxy_network_policy(&effective));
    objects.extend(extra::trusted_ca_bundle(&effective));
    objects.extend(extra::bitwarden(&effective, environment));
    for object in &mut objects {
        edit(object, &effective, environment)?;
    }
    objects.extend(crds(&effective));
    let labels = labels(&effective);
    for object in &mut objects {
        set_metadata(object, &labels, &effective.annotations);
    }
    objects.sort_by_key(|object| apply_rank(kind(object)));
    Ok(objects)
}

/// Per-kind edits of the chart's objects.
fn edit(
    object: &mut Value,
    effective: &Effective,
    environment: &Environment,
) -> Result<(), DesiredError> {
    match kind(object) {
        "Deployment" => deployment::edit(object, effective, environment)?,
        "Certificate" if name(object) == "external-secrets-webhook" => {
            extra::webhook_certificate(object, effective)
        }
        _ => {}
    }
    Ok(())
}

/// The operand's CRDs; with cert-manager and `injectAnnotations: "true"`, annotated for the CA
/// injector. Applied, never deleted.
fn crds(effective: &Effective) -> Vec<Value> {
    // Generating the schemas takes a while: once per process.
    static CRDS: std::sync::LazyLock<Vec<Value>> = std::sync::LazyLock::new(|| {
        external_secrets_crds::all_crds()
            .into_iter()
            .filter_map(|crd| serde_json::to_value(crd).ok())
            .collect()
    });
    CRDS.iter()
        .cloned()
        .map(|mut crd| {
            crd["apiVersion"] = json!("apiextensions.k8s.io/v1");
            crd["kind"] = json!("CustomResourceDefinition");
            if effective.cert_manager && effective.inject_annotations == InjectAnnotations::True {
                crd["metadata"]["annotations"] = json!({
                    INJECT_CA_FROM: format!("{NAMESPACE}/external-secrets-webhook")
                });
            }
            crd
        })
        .collect()
}

/// Labels of every object: the manager's, then the config's (both without reserved keys), then
/// the operator's own.
fn labels(effective: &Effective) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = effective
        .manager_labels
        .iter()
        .chain(&effective.labels)
        .filter(|(key, _)| !reserved_label(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    for (key, value) in OPERATOR_LABELS {
        labels.insert((*key).into(), (*value).into());
    }
    labels
}

/// Label keys users may not set (upstream skips the same keys).
fn reserved_label(key: &str) -> bool {
    key == "app"
        || key == "servicebinding.io/controller"
        || [
            "app.kubernetes.io/",
            "external-secrets.io/",
            "rbac.authorization.k8s.io/",
        ]
        .iter()
        .any(|prefix| key.starts_with(prefix))
}

/// Adds `labels` and `annotations` to an object and its pod template, and drops Helm's own.
fn set_metadata(
    object: &mut Value,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) {
    let is_crd = kind(object) == "CustomResourceDefinition";
    let mut targets = vec!["/metadata"];
    if object.pointer("/spec/template/metadata").is_some() {
        targets.push("/spec/template/metadata");
    }
    for pointer in targets {
        let Some(metadata) = object.pointer_mut(pointer).and_then(Value::as_object_mut) else {
            continue;
        };
        let existing = metadata.entry("labels").or_insert_with(|| json!({}));
        if let Some(existing) = existing.as_object_mut() {
            existing.remove("helm.sh/chart");
            for (key, value) in labels {
                existing.insert(key.clone(), json!(value));
            }
        }
        if !annotations.is_empty() && !is_crd {
            let existing = metadata.entry("annotations").or_insert_with(|| json!({}));
            if let Some(existing) = existing.as_object_mut() {
                for (key, value) in annotations {
                    existing.insert(key.clone(), json!(value));
                }
            }
        }
    }
}

/// Apply order: what others depend on first.
fn apply_rank(kind: &str) -> usize {
    const ORDER: &[&str] = &[
        "Namespace",
        "CustomResourceDefinition",
        "NetworkPolicy",
        "ServiceAccount",
        "Certificate",
        "Secret",
        "ConfigMap",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Service",
        "Deployment",
        "ValidatingWebhookConfiguration",
    ];
    ORDER
        .iter()
        .position(|known| *known == kind)
        .unwrap_or(ORDER.len())
}

/// An object's kind ("" when absent).
pub fn kind(object: &Value) -> &str {
    object.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// An object's name ("" when absent).
pub fn name(object: &Value) -> &str {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Whether a plugin/feature mode is on.
fn enabled(mode: Option<Mode>) -> bool {
    mode == Some(Mode::Enabled)
}
