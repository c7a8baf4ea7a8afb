//! Rules of the built-in kinds applied on every write: Secrets (`stringData` merged into
//! base64 `data`, type-specific required keys, immutability), ConfigMaps (immutability),
//! Namespaces (finalizer, phase, name label, and their `default` ServiceAccount and
//! `kube-root-ca.crt` ConfigMap holding the server's CA under `ca.crt`) and
//! CustomResourceDefinitions (see `crd.rs`).

use crate::errors::{ApiError, ApiResult, FieldError};
use crate::meta;
use crate::resources::{ResourceInfo, Special};
use crate::state::{State, WriteOptions};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The largest Secret or ConfigMap payload kube-apiserver accepts.
const MAX_PAYLOAD: usize = 1024 * 1024;

impl State {
    /// Applies the rules of built-in kinds, appending field errors; request-level problems
    /// (undecodable base64) are returned as errors directly.
    pub(crate) fn kind_rules(
        &mut self,
        info: &ResourceInfo,
        old: Option<&Value>,
        object: &mut Value,
        errors: &mut Vec<FieldError>,
    ) -> ApiResult<()> {
        match info.special {
            Special::Secret => secret_rules(old, object, errors),
            Special::ConfigMap => {
                validate_keys(object, "data", errors);
                validate_keys(object, "binaryData", errors);
                immutable_rules(old, object, &["data", "binaryData"], errors);
                Ok(())
            }
            Special::Namespace => {
                namespace_rules(old, object);
                Ok(())
            }
            Special::CustomResourceDefinition => {
                crate::crd::prepare_definition(old, object, errors);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Creates what the control plane puts in every new namespace.
    pub(crate) fn populate_namespace(&mut self, namespace: &Arc<Value>) {
        let Some(name) = meta::meta_str(namespace, "name").map(str::to_owned) else {
            return;
        };
        let children = [
            ("serviceaccounts", json!({"metadata": {"name": "default"}})),
            (
                "configmaps",
                json!({"metadata": {"name": "kube-root-ca.crt", "annotations": {
                    "kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
                }}, "data": {"ca.crt": self.root_ca}}),
            ),
        ];
        for (plural, object) in children {
            if let Some(info) = self.registry.get("", "v1", plural) {
                let _ = self.create(&info, Some(&name), object, &WriteOptions::internal());
            }
        }
    }
}

fn secret_rules(
    old: Option<&Value>,
    object: &mut Value,
    errors: &mut Vec<FieldError>,
) -> ApiResult<()> {
    let map = object.as_object_mut().expect("checked to be an object");
    if let Some(Value::Object(string_data)) = map.remove("stringData") {
        let data = map
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if !data.is_object() {
            *data = Value::Object(Map::new());
        }
        for (key, value) in string_data {
            let text = value.as_str().unwrap_or_default();
            data[key.as_str()] = Value::String(STANDARD.encode(text));
        }
    }
    let secret_type = map.entry("type").or_insert_with(|| "Opaque".into()).clone();
    let mut size = 0;
    if let Some(data) = map.get("data").and_then(Value::as_object) {
        for (key, value) in data {
            let decoded = value.as_str().map(|text| STANDARD.decode(text));
            match decoded {
                Some(Ok(bytes)) => size += key.len() + bytes.len(),
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data in data[{key}]"
                    )));
                }
            }
        }
    }
    if size > MAX_PAYLOAD {
        errors.push(FieldError {
            path: "data".into(),
            kind: crate::errors::FieldErrorKind::TooLong {
                detail: format!("must have at most {MAX_PAYLOAD} bytes"),
            },
        });
    }
    validate_keys(object, "data", errors);
    let has = |key: &str| object["data"].get(key).is_some();
    let required: &[&str] = match secret_type.as_str().unwrap_or_default() {
        "kubernetes.io/dockercfg" => &[".dockercfg"],
        "kubernetes.io/dockerconfigjson" => &[".dockerconfigjson"],
        "kubernetes.io/ssh-auth" => &["ssh-privatekey"],
        "kubernetes.io/tls" => &["tls.crt", "tls.key"],
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            &["username", "password"]
        }
        _ => &[],
    };
    for key in required {
        if !has(key) {
            errors.push(FieldError::required(format!("data[{key}]")));
        }
    }
    if let Some(old) = old
        && old.get("type") != object.get("type")
    {
        errors.push(FieldError::invalid(
            "type",
            object["type"].clone(),
            "field is immutable",
        ));
    }
    immutable_rules(old, object, &["data"], errors);
    Ok(())
}

/// Keys of Secret and ConfigMap data must be valid config keys.
fn validate_keys(object: &Value, field: &str, errors: &mut Vec<FieldError>) {
    let Some(data) = object.get(field).and_then(Value::as_object) else {
        return;
    };
    for key in data.keys() {
        let valid = !key.is_empty()
            && key.len() <= 253
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
            && key != "."
            && key != ".."
            && !key.starts_with("..");
        if !valid {
            errors.push(FieldError::invalid(
                format!("{field}[{key}]"),
                Value::String(key.clone()),
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            ));
        }
    }
}

/// With `immutable: true`, the payload fields and the flag itself cannot change.
fn immutable_rules(
    old: Option<&Value>,
    object: &Value,
    fields: &[&str],
    errors: &mut Vec<FieldError>,
) {
    let Some(old) = old else {
        return;
    };
    if old.get("immutable") != Some(&Value::Bool(true)) {
        return;
    }
    let detail = "field is immutable when `immutable` is set";
    for field in fields {
        if old.get(*field) != object.get(*field) {
            errors.push(FieldError::forbidden(*field, detail));
        }
    }
    if object.get("immutable") != Some(&Value::Bool(true)) {
        errors.push(FieldError::forbidden("immutable", detail));
    }
}

fn namespace_rules(old: Option<&Value>, object: &mut Value) {
    let name = meta::meta_str(object, "name")
        .unwrap_or_default()
        .to_owned();
    let metadata = meta::metadata_mut(object);
    let labels = metadata
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    if labels.is_object() {
        labels["kubernetes.io/metadata.name"] = Value::String(name);
    }
    match old {
        None => {
            object["spec"] = json!({"finalizers": ["kubernetes"]});
            object["status"] = json!({"phase": "Active"});
        }
        Some(old) => {
            object["spec"] = old.get("spec").cloned().unwrap_or_else(|| json!({}));
        }
    }
}
