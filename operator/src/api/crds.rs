//! The operator's two CRDs, generated from the types the way `crds/` generates the operand's
//! (`external_secrets_crds::schema`), plus what only these CRDs have: the singleton rule and
//! `required: [metadata]` at the root, and the schemas of the embedded Kubernetes types.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, ValidationRule,
};
use kube::core::CustomResourceExt;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value, json};

use super::{ExternalSecretsConfig, ExternalSecretsManager};

/// Both CRDs, ExternalSecretsConfig first (the order of their file names).
pub fn all_crds() -> Vec<CustomResourceDefinition> {
    vec![
        singleton::<ExternalSecretsConfig>(),
        singleton::<ExternalSecretsManager>(),
    ]
}

/// One `(file name, YAML)` per CRD of [`all_crds`].
pub fn manifests() -> Vec<(String, String)> {
    all_crds()
        .iter()
        .map(external_secrets_crds::manifest_yaml)
        .collect()
}

/// The CRD of a singleton kind: its only object must be named `cluster`.
fn singleton<K: CustomResourceExt + JsonSchema>() -> CustomResourceDefinition {
    let mut crd = external_secrets_crds::schema::crd::<K>();
    let kind = crd.spec.names.kind.clone();
    for version in &mut crd.spec.versions {
        if let Some(root) = version
            .schema
            .as_mut()
            .and_then(|schema| schema.open_api_v3_schema.as_mut())
        {
            root.required = Some(vec!["metadata".into()]);
            root.x_kubernetes_validations = Some(vec![ValidationRule {
                message: Some(format!(
                    "{kind} is a singleton, .metadata.name must be '{}'",
                    super::SINGLETON
                )),
                rule: format!("self.metadata.name == '{}'", super::SINGLETON),
                ..ValidationRule::default()
            }]);
        }
    }
    crd
}

/// The CEL rules on `controllerConfig.annotations` keys: a valid annotation key, and none of
/// the domains the platform reserves.
pub(crate) fn annotation_rules() -> Value {
    json!([
        {
            "message": "Annotation keys must consist of alphanumeric characters, '-', '_' or '.', starting and ending with alphanumeric, with an optional lowercase DNS subdomain prefix and '/' (e.g., 'my-key' or 'example.com/my-key')",
            "rule": r"self.all(key, key.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'))"
        },
        {
            "message": "Annotation key prefix (DNS subdomain) must be no more than 253 characters",
            "rule": "self.all(key, !key.contains('/') || key.split('/')[0].size() <= 253)"
        },
        {
            "message": "Annotation key name part must be no more than 63 characters",
            "rule": "self.all(key, key.contains('/') ? key.split('/')[1].size() <= 63 : key.size() <= 63)"
        },
        {
            "message": "Annotation keys containing reserved domains 'kubernetes.io/', 'openshift.io/', 'k8s.io/' (including subdomains like '*.kubernetes.io/') are not allowed",
            "rule": r"self.all(key, !key.matches('^([^/]*\\.)?(kubernetes\\.io|k8s\\.io|openshift\\.io)/'))"
        },
        {
            "message": "Annotation keys containing reserved domain 'cert-manager.io/' are not allowed",
            "rule": r"self.all(key, !key.matches('^(cert-manager\\.io)/'))"
        }
    ])
}

/// The schema of an embedded Kubernetes type as controller-gen writes it: k8s-openapi's schema
/// (from the Kubernetes OpenAPI document), plus the list/map semantics and the quantity and
/// int-or-string forms that document leaves out (see [`kubernetes_markers`]).
fn kubernetes<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = generator.subschema_for::<T>().to_value();
    // Only NetworkPolicy ports are int-or-strings that are not quantities.
    let quantities = !std::any::type_name::<T>().contains("NetworkPolicy");
    kubernetes_markers(&mut schema, quantities);
    Schema::try_from(schema).unwrap_or_default()
}

/// Property sets of the Kubernetes structs marked `+structType=atomic` that these CRDs embed:
/// label selectors, node selectors and terms, and env var sources.
const ATOMIC_STRUCTS: &[&[&str]] = &[
    &["matchExpressions", "matchLabels"],
    &["nodeSelectorTerms"],
    &["matchExpressions", "matchFields"],
    &["key", "name", "optional"],
    &["apiVersion", "fieldPath"],
    &["containerName", "divisor", "resource"],
];

/// Adds what controller-gen writes for Kubernetes' own markers: every list is atomic unless it
/// says otherwise, the structs of [`ATOMIC_STRUCTS`] are atomic maps, a key selector's `name`
/// defaults to "" and only `key` is required, a quantity is an integer or a string of the
/// quantity pattern, and an int-or-string is `anyOf` integer or string.
fn kubernetes_markers(schema: &mut Value, quantities: bool) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if object.get("type") == Some(&json!("array")) && !object.contains_key("x-kubernetes-list-type")
    {
        object.insert("x-kubernetes-list-type".into(), json!("atomic"));
    }
    let properties: Vec<String> = object
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    if ATOMIC_STRUCTS
        .iter()
        .any(|set| set.iter().eq(properties.iter()))
    {
        object.insert("x-kubernetes-map-type".into(), json!("atomic"));
    }
    if properties.iter().eq(["key", "name", "optional"].iter()) {
        object.insert("required".into(), json!(["key"]));
        if let Some(name) = object
            .get_mut("properties")
            .and_then(|properties| properties.get_mut("name"))
            .and_then(Value::as_object_mut)
        {
            name.insert("default".into(), json!(""));
        }
    }
    if object.get("x-kubernetes-int-or-string") == Some(&json!(true)) {
        object.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
        if quantities {
            object.insert("pattern".into(), json!(QUANTITY_PATTERN));
        }
    }
    for value in object.values_mut() {
        match value {
            Value::Object(_) => kubernetes_markers(value, quantities),
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| kubernetes_markers(item, quantities)),
            _ => {}
        }
    }
}

/// `resource.Quantity`'s pattern.
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// `corev1.ResourceRequirements`; `claims` is a list keyed by `name`.
pub(crate) fn resources(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = kubernetes::<k8s_openapi::api::core::v1::ResourceRequirements>(generator);
    if let Some(claims) = schema
        .as_object_mut()
        .and_then(|object| object.get_mut("properties"))
        .and_then(|properties| properties.get_mut("claims"))
        .and_then(Value::as_object_mut)
    {
        claims.insert("x-kubernetes-list-map-keys".into(), json!(["name"]));
        claims.insert("x-kubernetes-list-type".into(), json!("map"));
    }
    schema
}

/// `corev1.Affinity`.
pub(crate) fn affinity(generator: &mut SchemaGenerator) -> Schema {
    kubernetes::<k8s_openapi::api::core::v1::Affinity>(generator)
}

/// `[]corev1.Toleration`.
pub(crate) fn tolerations(generator: &mut SchemaGenerator) -> Schema {
    kubernetes::<Vec<k8s_openapi::api::core::v1::Toleration>>(generator)
}

/// `[]corev1.EnvVar` (its list semantics are set on the field).
pub(crate) fn env(generator: &mut SchemaGenerator) -> Schema {
    kubernetes::<Vec<k8s_openapi::api::core::v1::EnvVar>>(generator)
}

/// `[]networkingv1.NetworkPolicyEgressRule`.
pub(crate) fn egress(generator: &mut SchemaGenerator) -> Schema {
    kubernetes::<Vec<k8s_openapi::api::networking::v1::NetworkPolicyEgressRule>>(generator)
}

/// `[]metav1.Condition`: a list keyed by `type`, with metav1.Condition's validation.
pub(crate) fn conditions(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "array",
        "x-kubernetes-list-map-keys": ["type"],
        "x-kubernetes-list-type": "map",
        "items": {
            "type": "object",
            "description": "Condition contains details for one aspect of the current state of this API Resource.",
            "required": ["lastTransitionTime", "message", "reason", "status", "type"],
            "properties": {
                "lastTransitionTime": {"type": "string", "format": "date-time",
                    "description": "lastTransitionTime is the last time the condition transitioned from one status to another."},
                "message": {"type": "string", "maxLength": 32768,
                    "description": "message is a human readable message indicating details about the transition."},
                "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0,
                    "description": "observedGeneration is the .metadata.generation that the condition was set based upon."},
                "reason": {"type": "string", "maxLength": 1024, "minLength": 1,
                    "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
                    "description": "reason is a programmatic identifier for the condition's last transition."},
                "status": {"type": "string", "enum": ["True", "False", "Unknown"],
                    "description": "status of the condition, one of True, False, Unknown."},
                "type": {"type": "string", "maxLength": 316,
                    "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
                    "description": "type of condition in CamelCase or in foo.example.com/CamelCase."}
            }
        }
    })
}
