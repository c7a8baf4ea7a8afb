//! CustomResourceDefinitions: validating and defaulting their spec, serving every served
//! version of their kind once stored (schemas compiled once per version), reporting
//! `NamesAccepted`/`Established`, and removing their objects when they are deleted.
//!
//! Conversion is `None` only: every version shares the stored objects and differs in
//! `apiVersion` alone. CEL rules (`x-kubernetes-validations`) are not evaluated.

use crate::errors::FieldError;
use crate::meta;
use crate::resources::{ResourceInfo, Special};
use crate::schema::Schema;
use crate::state::State;
use serde_json::{Value, json};
use std::sync::Arc;

/// Defaults and validates a CRD being written.
pub(crate) fn prepare_definition(
    old: Option<&Value>,
    object: &mut Value,
    errors: &mut Vec<FieldError>,
) {
    let spec = &mut object["spec"];
    if !spec.is_object() {
        errors.push(FieldError::required("spec"));
        return;
    }
    let kind = spec["names"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if kind.is_empty() {
        errors.push(FieldError::required("spec.names.kind"));
    }
    let plural = spec["names"]["plural"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if plural.is_empty() {
        errors.push(FieldError::required("spec.names.plural"));
    }
    if spec["names"]["singular"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        spec["names"]["singular"] = Value::String(kind.to_lowercase());
    }
    if spec["names"]["listKind"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
        && !kind.is_empty()
    {
        spec["names"]["listKind"] = Value::String(format!("{kind}List"));
    }
    if !spec["conversion"].is_object() {
        spec["conversion"] = json!({"strategy": "None"});
    }
    let group = spec["group"].as_str().unwrap_or_default().to_owned();
    if group.is_empty() {
        errors.push(FieldError::required("spec.group"));
    } else if !group.contains('.') {
        errors.push(FieldError::invalid(
            "spec.group",
            Value::String(group.clone()),
            "should be a domain with at least one dot",
        ));
    }
    match spec["scope"].as_str() {
        Some("Namespaced" | "Cluster") => {}
        other => errors.push(FieldError {
            path: "spec.scope".into(),
            kind: crate::errors::FieldErrorKind::NotSupported {
                value: other.map_or(Value::Null, |s| Value::String(s.to_owned())),
                supported: vec!["Cluster".into(), "Namespaced".into()],
            },
        }),
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        errors.push(FieldError::invalid(
            "spec.versions",
            json!([]),
            "must have exactly one version marked as storage version",
        ));
    } else if versions
        .iter()
        .filter(|v| v["storage"] == json!(true))
        .count()
        != 1
    {
        errors.push(FieldError::invalid(
            "spec.versions",
            Value::Array(versions.clone()),
            "must have exactly one version marked as storage version",
        ));
    }
    for (index, version) in versions.iter().enumerate() {
        if version["name"].as_str().unwrap_or_default().is_empty() {
            errors.push(FieldError::required(format!("spec.versions[{index}].name")));
        }
        if !version["schema"]["openAPIV3Schema"].is_object() {
            errors.push(FieldError::required(format!(
                "spec.versions[{index}].schema.openAPIV3Schema"
            )));
        }
    }
    let name = meta::meta_str(object, "name")
        .unwrap_or_default()
        .to_owned();
    if name != format!("{plural}.{group}") {
        errors.push(FieldError::invalid(
            "metadata.name",
            Value::String(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if let Some(old) = old {
        for field in ["group", "scope"] {
            if old["spec"][field] != object["spec"][field] && field == "group" {
                errors.push(FieldError::invalid(
                    format!("spec.{field}"),
                    object["spec"][field].clone(),
                    "field is immutable",
                ));
            }
        }
    }
}

impl State {
    /// Serves the CRD's served versions and marks it established (a separate status write,
    /// as kube-apiserver's controllers do).
    pub(crate) fn establish(&mut self, definition: &Arc<Value>) {
        if meta::is_deleting(definition) {
            return;
        }
        let spec = &definition["spec"];
        let group = spec["group"].as_str().unwrap_or_default().to_owned();
        let names = &spec["names"];
        let plural = names["plural"].as_str().unwrap_or_default().to_owned();
        let strings = |value: &Value| -> Vec<String> {
            value
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        self.registry.remove_resource(&group, &plural);
        let mut storage = None;
        for version in spec["versions"].as_array().into_iter().flatten() {
            let version_name = version["name"].as_str().unwrap_or_default().to_owned();
            if version["storage"] == json!(true) {
                storage = Some(version_name.clone());
            }
            if version["served"] != json!(true) {
                continue;
            }
            let schema = Schema::compile(&version["schema"]["openAPIV3Schema"], &mut self.regexes);
            self.registry.insert(ResourceInfo {
                group: group.clone(),
                version: version_name,
                kind: names["kind"].as_str().unwrap_or_default().to_owned(),
                plural: plural.clone(),
                singular: names["singular"].as_str().unwrap_or_default().to_owned(),
                short_names: strings(&names["shortNames"]),
                categories: strings(&names["categories"]),
                namespaced: spec["scope"] == json!("Namespaced"),
                status_subresource: version["subresources"]["status"].is_object(),
                generation: true,
                custom: true,
                schema: Some(Arc::new(schema)),
                special: Special::None,
            });
        }
        let namespaced = spec["scope"] == json!("Namespaced");
        self.store.kind_mut(
            &crate::resources::GroupResource {
                group,
                resource: plural,
            },
            namespaced,
        );
        let mut status = definition
            .get("status")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut stored_versions = strings(&status["storedVersions"]);
        if let Some(storage) = storage
            && !stored_versions.contains(&storage)
        {
            stored_versions.push(storage);
        }
        let now = meta::now();
        let condition = |kind: &str, reason: &str, message: &str| json!({"type": kind, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message});
        let conditions = vec![
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition(
                "Established",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            ),
        ];
        let keep_times = status["conditions"]
            .as_array()
            .is_some_and(|old| old.len() == 2 && old.iter().all(|c| c["status"] == "True"));
        if !keep_times {
            status["conditions"] = Value::Array(conditions);
        }
        status["acceptedNames"] = names.clone();
        status["storedVersions"] = json!(stored_versions);
        if definition.get("status") == Some(&status) {
            return;
        }
        let mut updated = (**definition).clone();
        updated["status"] = status;
        let name = meta::meta_str(definition, "name")
            .unwrap_or_default()
            .to_owned();
        let resource = crate::resources::GroupResource {
            group: "apiextensions.k8s.io".into(),
            resource: "customresourcedefinitions".into(),
        };
        self.store.put(
            &resource,
            false,
            &crate::store::object_key("", &name),
            updated,
        );
    }

    /// Stops serving a deleted CRD's kind and deletes all its objects.
    pub(crate) fn retire(&mut self, definition: &Value) {
        let spec = &definition["spec"];
        let group = spec["group"].as_str().unwrap_or_default().to_owned();
        let plural = spec["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let resource = crate::resources::GroupResource {
            group: group.clone(),
            resource: plural.clone(),
        };
        let keys: Vec<String> = self
            .store
            .kind(&resource)
            .map(|kind| kind.objects.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(info) = self.registry.any_version(&resource) {
            for key in keys {
                self.remove_object(&info, &key, None);
            }
        }
        self.registry.remove_resource(&group, &plural);
    }
}
