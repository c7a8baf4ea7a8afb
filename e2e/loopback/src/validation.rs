//! Validation of custom resources against their compiled schema, with kube-apiserver's
//! (go-openapi's) error messages: types, required, enum, pattern, minimum/maximum,
//! minLength/maxLength, minItems/maxItems, minProperties/maxProperties, uniqueItems and the
//! value-only combinators anyOf/allOf/oneOf/not.

use crate::errors::{FieldError, FieldErrorKind};
use crate::schema::{Additional, JsonType, Schema};
use serde_json::Value;

/// Validates `value` (found at `path`) and everything below it, appending errors.
pub(crate) fn validate(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if value.is_null() {
        if !schema.nullable && (schema.types.is_some() || schema.int_or_string) {
            let expected = schema.types.map_or("string", JsonType::name);
            errors.push(type_error(path, value, expected));
        }
        return;
    }
    if !check_type(schema, value, path, errors) {
        return;
    }
    if !schema.enumeration.is_empty() && !schema.enumeration.contains(value) {
        errors.push(FieldError {
            path: path.to_owned(),
            kind: FieldErrorKind::NotSupported {
                value: value.clone(),
                supported: schema.enumeration.clone(),
            },
        });
    }
    match value {
        Value::String(text) => validate_string(schema, text, value, path, errors),
        Value::Number(_) => validate_number(schema, value, path, errors),
        Value::Array(items) => {
            let length = items.len() as u64;
            if let Some(min) = schema.min_items
                && length < min
            {
                errors.push(FieldError::invalid(
                    path,
                    Value::from(length),
                    format!("{path} in body should have at least {min} items"),
                ));
            }
            if let Some(max) = schema.max_items
                && length > max
            {
                errors.push(FieldError {
                    path: path.to_owned(),
                    kind: FieldErrorKind::TooMany {
                        detail: format!("{length}: must have at most {max} items"),
                    },
                });
            }
            if schema.unique_items {
                for (index, item) in items.iter().enumerate() {
                    if items[..index].contains(item) {
                        errors.push(FieldError::invalid(
                            format!("{path}[{index}]"),
                            item.clone(),
                            format!("{path} in body shouldn't contain duplicates"),
                        ));
                    }
                }
            }
            if let Some(item_schema) = &schema.items {
                for (index, item) in items.iter().enumerate() {
                    validate(item_schema, item, &format!("{path}[{index}]"), errors);
                }
            }
        }
        Value::Object(map) => {
            for name in &schema.required {
                if !map.contains_key(name) {
                    errors.push(FieldError::required(join(path, name)));
                }
            }
            let count = map.len() as u64;
            if let Some(min) = schema.min_properties
                && count < min
            {
                errors.push(FieldError::invalid(
                    path,
                    Value::from(count),
                    format!("{path} in body should have at least {min} properties"),
                ));
            }
            if let Some(max) = schema.max_properties
                && count > max
            {
                errors.push(FieldError {
                    path: path.to_owned(),
                    kind: FieldErrorKind::TooMany {
                        detail: format!("{count}: must have at most {max} items"),
                    },
                });
            }
            for (key, child) in map {
                if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let child_schema = schema.properties.as_ref().and_then(|p| p.get(key)).or(
                    match &schema.additional {
                        Additional::Schema(schema) => Some(schema.as_ref()),
                        _ => None,
                    },
                );
                if let Some(child_schema) = child_schema {
                    validate(child_schema, child, &join(path, key), errors);
                }
            }
        }
        _ => {}
    }
    validate_combinators(schema, value, path, errors);
}

fn validate_combinators(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let passes = |sub: &Schema| {
        let mut scratch = Vec::new();
        validate(sub, value, path, &mut scratch);
        scratch.is_empty()
    };
    for sub in &schema.all_of {
        validate(sub, value, path, errors);
    }
    if !schema.any_of.is_empty() && !schema.any_of.iter().any(passes) {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            "must validate at least one schema (anyOf)",
        ));
    }
    if !schema.one_of.is_empty() && schema.one_of.iter().filter(|sub| passes(sub)).count() != 1 {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            "must validate one and only one schema (oneOf)",
        ));
    }
    if let Some(not) = &schema.not
        && passes(not)
    {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            "must not validate the schema (not)",
        ));
    }
}

/// Checks the JSON type; false when it is wrong (and nothing below should be checked).
fn check_type(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) -> bool {
    if schema.int_or_string {
        if value.is_string() || is_integer(value) {
            return true;
        }
        errors.push(type_error(path, value, "integer,string"));
        return false;
    }
    let Some(expected) = schema.types else {
        return true;
    };
    let matches = match expected {
        JsonType::Object => value.is_object(),
        JsonType::Array => value.is_array(),
        JsonType::String => value.is_string(),
        JsonType::Integer => is_integer(value),
        JsonType::Number => value.is_number(),
        JsonType::Boolean => value.is_boolean(),
    };
    if !matches {
        errors.push(type_error(path, value, expected.name()));
    }
    matches
}

fn is_integer(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|number| number.fract() == 0.0)
}

fn type_error(path: &str, value: &Value, expected: &str) -> FieldError {
    let actual = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_integer(value) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    FieldError::invalid(
        path,
        Value::String(actual.to_owned()),
        format!("{path} in body must be of type {expected}: {actual:?}"),
    )
}

fn validate_string(
    schema: &Schema,
    text: &str,
    value: &Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let length = text.chars().count() as u64;
    if let Some(min) = schema.min_length
        && length < min
    {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            format!("{path} in body should be at least {min} chars long"),
        ));
    }
    if let Some(max) = schema.max_length
        && length > max
    {
        errors.push(FieldError {
            path: path.to_owned(),
            kind: FieldErrorKind::TooLong {
                detail: format!("may not be more than {max} bytes"),
            },
        });
    }
    if let Some((source, regex)) = &schema.pattern
        && !regex.is_match(text)
    {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            format!("{path} in body should match '{source}'"),
        ));
    }
}

fn validate_number(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(number) = value.as_f64() else {
        return;
    };
    let render = |bound: f64| {
        if bound.fract() == 0.0 {
            format!("{}", bound as i64)
        } else {
            bound.to_string()
        }
    };
    if let Some(min) = schema.minimum {
        let (fails, relation) = if schema.exclusive_minimum {
            (number <= min, "greater than")
        } else {
            (number < min, "greater than or equal to")
        };
        if fails {
            errors.push(FieldError::invalid(
                path,
                value.clone(),
                format!("{path} in body should be {relation} {}", render(min)),
            ));
        }
    }
    if let Some(max) = schema.maximum {
        let (fails, relation) = if schema.exclusive_maximum {
            (number >= max, "less than")
        } else {
            (number > max, "less than or equal to")
        };
        if fails {
            errors.push(FieldError::invalid(
                path,
                value.clone(),
                format!("{path} in body should be {relation} {}", render(max)),
            ));
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::RegexCache;
    use serde_json::json;

    fn errors_for(schema: Value, value: Value) -> Vec<String> {
        let schema = Schema::compile(&schema, &mut RegexCache::default());
        let mut errors = Vec::new();
        validate(&schema, &value, "", &mut errors);
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn reports_required_fields_with_their_path() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"aws": {"type": "object", "required": ["region"],
                "properties": {"region": {"type": "string"}}}}}}});
        let errors = errors_for(schema, json!({"spec": {"aws": {}}}));
        assert_eq!(errors, vec!["spec.aws.region: Required value"]);
    }

    #[test]
    fn reports_types_enums_patterns_and_bounds() {
        let schema = json!({"type": "object", "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 5},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2},
            "list": {"type": "array", "maxItems": 1, "items": {"type": "string"}}
        }});
        let errors = errors_for(
            schema.clone(),
            json!({"size": 9, "mode": "c", "name": "A", "list": ["x", 1]}),
        );
        assert_eq!(
            errors,
            vec![
                "list: Too many: 2: must have at most 1 items",
                "list[1]: Invalid value: \"integer\": list[1] in body must be of type string: \"integer\"",
                "mode: Unsupported value: \"c\": supported values: \"a\", \"b\"",
                "name: Invalid value: \"A\": name in body should be at least 2 chars long",
                "name: Invalid value: \"A\": name in body should match '^[a-z]+$'",
                "size: Invalid value: 9: size in body should be less than or equal to 5",
            ]
        );
        assert!(errors_for(schema, json!({"size": 2, "mode": "a", "name": "ab"})).is_empty());
    }

    #[test]
    fn int_or_string_accepts_both() {
        let schema = json!({"type": "object", "properties": {"interval": {"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}]}}});
        assert!(errors_for(schema.clone(), json!({"interval": 5})).is_empty());
        assert!(errors_for(schema.clone(), json!({"interval": "1h"})).is_empty());
        assert_eq!(errors_for(schema, json!({"interval": true})).len(), 1);
    }
}
