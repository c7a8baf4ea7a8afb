//! Structural OpenAPI v3 schemas of CustomResourceDefinitions, compiled once per CRD version:
//! pruning of unknown fields and defaulting. Validation lives in `validation.rs`.
//!
//! `x-kubernetes-validations` (CEL rules) are accepted and ignored, as are `format`s and
//! `x-kubernetes-list-type`/`x-kubernetes-map-type` (list items are not checked for uniqueness).

use regex::Regex;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// JSON types a schema can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonType {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl JsonType {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "object" => Self::Object,
            "array" => Self::Array,
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            _ => return None,
        })
    }

    /// The name used in error messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Array => "array",
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }
}

/// What a schema says about keys not listed in `properties`.
#[derive(Debug, Default)]
pub(crate) enum Additional {
    /// Not specified: unknown keys are pruned (unless preserved).
    #[default]
    Unspecified,
    /// `additionalProperties: true`.
    Any,
    /// `additionalProperties: {schema}`.
    Schema(Box<Schema>),
}

/// One compiled schema node.
#[derive(Debug, Default)]
pub(crate) struct Schema {
    pub types: Option<JsonType>,
    pub nullable: bool,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub embedded_resource: bool,
    pub properties: Option<BTreeMap<String, Schema>>,
    pub additional: Additional,
    pub items: Option<Box<Schema>>,
    pub required: Vec<String>,
    pub enumeration: Vec<Value>,
    pub pattern: Option<(String, Arc<Regex>)>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: bool,
    pub exclusive_maximum: bool,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub unique_items: bool,
    pub default: Option<Value>,
    pub any_of: Vec<Schema>,
    pub all_of: Vec<Schema>,
    pub one_of: Vec<Schema>,
    pub not: Option<Box<Schema>>,
}

/// Compiled regular expressions shared by all schemas, keyed by their source: the upstream
/// CRDs repeat a handful of patterns thousands of times.
#[derive(Default)]
pub(crate) struct RegexCache {
    compiled: HashMap<String, Option<Arc<Regex>>>,
}

impl RegexCache {
    fn get(&mut self, pattern: &str) -> Option<Arc<Regex>> {
        self.compiled
            .entry(pattern.to_owned())
            .or_insert_with(|| match Regex::new(pattern) {
                Ok(regex) => Some(Arc::new(regex)),
                Err(error) => {
                    tracing::warn!(pattern, %error, "schema pattern not supported, ignored");
                    None
                }
            })
            .clone()
    }
}

impl Schema {
    /// Compiles an `openAPIV3Schema` (or any node of it).
    pub(crate) fn compile(value: &Value, regexes: &mut RegexCache) -> Self {
        let Some(node) = value.as_object() else {
            return Self::default();
        };
        let text = |key: &str| node.get(key).and_then(Value::as_str);
        let flag = |key: &str| node.get(key).and_then(Value::as_bool).unwrap_or(false);
        let number = |key: &str| node.get(key).and_then(Value::as_f64);
        let count = |key: &str| node.get(key).and_then(Value::as_u64);
        let list = |key: &str, regexes: &mut RegexCache| -> Vec<Schema> {
            node.get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .map(|item| Schema::compile(item, regexes))
                        .collect()
                })
                .unwrap_or_default()
        };
        let properties = node
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, schema)| (name.clone(), Schema::compile(schema, regexes)))
                    .collect()
            });
        let additional = match node.get("additionalProperties") {
            Some(Value::Bool(true)) => Additional::Any,
            Some(schema @ Value::Object(_)) => {
                Additional::Schema(Box::new(Schema::compile(schema, regexes)))
            }
            _ => Additional::Unspecified,
        };
        let pattern = text("pattern")
            .and_then(|source| regexes.get(source).map(|regex| (source.to_owned(), regex)));
        Self {
            types: text("type").and_then(JsonType::parse),
            nullable: flag("nullable"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields"),
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            properties,
            additional,
            items: node
                .get("items")
                .map(|items| Box::new(Schema::compile(items, regexes))),
            required: node
                .get("required")
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            enumeration: node
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            pattern,
            minimum: number("minimum"),
            maximum: number("maximum"),
            exclusive_minimum: flag("exclusiveMinimum"),
            exclusive_maximum: flag("exclusiveMaximum"),
            min_length: count("minLength"),
            max_length: count("maxLength"),
            min_items: count("minItems"),
            max_items: count("maxItems"),
            min_properties: count("minProperties"),
            max_properties: count("maxProperties"),
            unique_items: flag("uniqueItems"),
            default: node.get("default").cloned(),
            any_of: list("anyOf", regexes),
            all_of: list("allOf", regexes),
            one_of: list("oneOf", regexes),
            not: node
                .get("not")
                .map(|not| Box::new(Schema::compile(not, regexes))),
        }
    }

    /// Removes fields the schema does not know (collecting their paths for strict field
    /// validation) and `null`s of non-nullable fields, in place. `path` is the node's field
    /// path, empty at the root, where `apiVersion`, `kind` and `metadata` are always kept.
    pub(crate) fn prune(&self, value: &mut Value, path: &str, unknown: &mut Vec<String>) {
        match value {
            Value::Object(map) => self.prune_object(map, path, unknown),
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for (index, item) in items.iter_mut().enumerate() {
                        schema.prune(item, &format!("{path}[{index}]"), unknown);
                    }
                }
            }
            _ => {}
        }
    }

    fn prune_object(&self, map: &mut Map<String, Value>, path: &str, unknown: &mut Vec<String>) {
        let keeps_envelope = path.is_empty() || self.embedded_resource;
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            let child_path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            if keeps_envelope && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            let schema = match self
                .properties
                .as_ref()
                .and_then(|properties| properties.get(&key))
            {
                Some(schema) => Some(schema),
                None => match &self.additional {
                    Additional::Schema(schema) => Some(schema.as_ref()),
                    Additional::Any => continue,
                    Additional::Unspecified if self.preserve_unknown => continue,
                    Additional::Unspecified => None,
                },
            };
            let Some(schema) = schema else {
                map.remove(&key);
                unknown.push(child_path);
                continue;
            };
            if map[&key].is_null() && !schema.nullable {
                map.remove(&key);
                continue;
            }
            if let Some(child) = map.get_mut(&key) {
                schema.prune(child, &child_path, unknown);
            }
        }
    }

    /// Applies `default`s of absent properties, recursing into present (and just defaulted)
    /// values, in place.
    pub(crate) fn apply_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                if let Some(properties) = &self.properties {
                    for (key, schema) in properties {
                        if !map.contains_key(key)
                            && let Some(default) = &schema.default
                        {
                            map.insert(key.clone(), default.clone());
                        }
                        if let Some(child) = map.get_mut(key) {
                            schema.apply_defaults(child);
                        }
                    }
                }
                if let Additional::Schema(schema) = &self.additional {
                    for (key, child) in map.iter_mut() {
                        let known = self
                            .properties
                            .as_ref()
                            .is_some_and(|p| p.contains_key(key));
                        if !known {
                            schema.apply_defaults(child);
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    items
                        .iter_mut()
                        .for_each(|item| schema.apply_defaults(item));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::compile(
            &json!({
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "properties": {
                            "size": {"type": "integer", "default": 3},
                            "nested": {
                                "type": "object",
                                "default": {},
                                "properties": {"mode": {"type": "string", "default": "auto"}}
                            },
                            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                            "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                        }
                    }
                }
            }),
            &mut RegexCache::default(),
        )
    }

    #[test]
    fn prunes_unknown_fields_and_reports_their_paths() {
        let mut object = json!({
            "apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
            "spec": {"size": 1, "bogus": true, "free": {"any": 1}, "labels": {"a": "b"}},
            "other": 1
        });
        let mut unknown = Vec::new();
        schema().prune(&mut object, "", &mut unknown);
        assert_eq!(unknown, vec!["other".to_owned(), "spec.bogus".to_owned()]);
        assert_eq!(object["spec"]["free"]["any"], 1);
        assert_eq!(object["spec"]["labels"]["a"], "b");
        assert_eq!(object["metadata"]["name"], "a");
    }

    #[test]
    fn applies_nested_defaults() {
        let mut object = json!({"spec": {}});
        schema().apply_defaults(&mut object);
        assert_eq!(
            object["spec"],
            json!({"size": 3, "nested": {"mode": "auto"}})
        );
    }
}
