//! Validates documents against a set of CRDs the way `kubectl apply` (strict field
//! validation) and kube-apiserver would: the kind must be served at the document's version,
//! and the body must satisfy that version's openAPIV3Schema with unknown fields rejected.
//! CEL rules (`x-kubernetes-validations`) and `format`s are not evaluated; both sides of the
//! comparison are judged by this same validator, so that gap cannot make them disagree.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Map, Value};
use std::{cell::RefCell, collections::HashMap, path::Path, rc::Rc};

/// CRDs indexed by group and kind, with validators compiled on first use.
pub struct CrdSet {
    crds: Vec<Value>,
    validators: RefCell<HashMap<(String, String), Rc<jsonschema::Validator>>>,
}

impl CrdSet {
    /// Loads every `*.yaml` CRD file of `directory`.
    pub fn from_directory(directory: &Path) -> Self {
        let mut crds = Vec::new();
        for entry in std::fs::read_dir(directory).expect("CRD directory exists") {
            let path = entry.expect("directory entry").path();
            if path
                .extension()
                .is_some_and(|extension| extension == "yaml")
            {
                let text = std::fs::read_to_string(&path).expect("CRD file is readable");
                crds.push(serde_yaml::from_str(&text).expect("CRD file is YAML"));
            }
        }
        Self::new(crds)
    }

    /// Indexes CRDs generated from our Rust types.
    pub fn from_crds(crds: Vec<CustomResourceDefinition>) -> Self {
        Self::new(
            crds.iter()
                .map(|crd| serde_json::to_value(crd).expect("CRD serializes"))
                .collect(),
        )
    }

    fn new(crds: Vec<Value>) -> Self {
        Self {
            crds,
            validators: RefCell::default(),
        }
    }

    /// `Ok` when an API server with these CRDs would accept `document`; otherwise why not.
    pub fn validate(&self, document: &Value) -> Result<(), String> {
        let api_version = document["apiVersion"]
            .as_str()
            .ok_or("apiVersion missing")?;
        let kind = document["kind"].as_str().ok_or("kind missing")?;
        let (group, version) = api_version
            .split_once('/')
            .ok_or("apiVersion has no group")?;
        let crd = self
            .crds
            .iter()
            .find(|crd| crd["spec"]["group"] == group && crd["spec"]["names"]["kind"] == kind)
            .ok_or_else(|| format!("no CRD serves kind {kind} in group {group}"))?;
        let served_version = crd["spec"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|entry| entry["name"] == version && entry["served"] == true)
            .ok_or_else(|| format!("{kind} is not served at {api_version}"))?;
        object_meta_errors(&document["metadata"])?;
        let validator = self.validator(
            crd["metadata"]["name"].as_str().unwrap_or(kind),
            served_version,
        );
        let errors: Vec<String> = validator
            .iter_errors(document)
            .map(|error| format!("{}: {error}", error.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    fn validator(&self, crd_name: &str, version: &Value) -> Rc<jsonschema::Validator> {
        let key = (
            crd_name.to_owned(),
            version["name"].as_str().unwrap_or_default().to_owned(),
        );
        self.validators
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| {
                let schema = strict_json_schema(&version["schema"]["openAPIV3Schema"]);
                let validator = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft4)
                    .build(&schema)
                    .unwrap_or_else(|error| {
                        panic!("schema of {crd_name} does not compile: {error}")
                    });
                Rc::new(validator)
            })
            .clone()
    }
}

/// CRD schemas leave `metadata` open, but the API server decodes it as ObjectMeta: a name,
/// and labels and annotations whose values are strings.
fn object_meta_errors(metadata: &Value) -> Result<(), String> {
    for field in ["labels", "annotations"] {
        match &metadata[field] {
            Value::Null => {}
            Value::Object(entries) => {
                if let Some((key, _)) = entries.iter().find(|(_, value)| !value.is_string()) {
                    return Err(format!("metadata.{field}.{key}: must be a string"));
                }
            }
            _ => return Err(format!("metadata.{field}: must be a map of strings")),
        }
    }
    Ok(())
}

/// Turns a structural OpenAPI v3 schema into an equivalent JSON Schema (draft 4) that also
/// rejects unknown fields, as strict field validation does.
fn strict_json_schema(schema: &Value) -> Value {
    let Value::Object(node) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (keyword, value) in node {
        let converted = match keyword.as_str() {
            "format" => continue,
            keyword if keyword.starts_with("x-kubernetes-") => continue,
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| (name.clone(), strict_json_schema(property)))
                    .collect(),
            ),
            "items" | "additionalProperties" | "not" => strict_json_schema(value),
            "anyOf" | "oneOf" | "allOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(strict_json_schema)
                    .collect(),
            ),
            _ => value.clone(),
        };
        out.insert(keyword.clone(), converted);
    }
    let preserves_unknown =
        node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if node.contains_key("properties")
        && !preserves_unknown
        && !node.contains_key("additionalProperties")
    {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    if node.get("nullable") == Some(&Value::Bool(true))
        && let Some(Value::String(single)) = out.get("type").cloned()
    {
        out.insert(
            "type".into(),
            Value::Array(vec![Value::String(single), Value::String("null".into())]),
        );
    }
    out.remove("nullable");
    Value::Object(out)
}
