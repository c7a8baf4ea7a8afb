//! Turning a webhook response body into a value or a map, with upstream's conversions.
//!
//! `result.jsonPath` is evaluated with RFC 9535 JSONPath (`serde_json_path`), which accepts the
//! paths upstream's documentation uses (`$.args.parameter`, `$.data[0].value`,
//! `$[?(@.name=='x')].value`). A path matching one node yields that node; several nodes yield an
//! array of them (upstream returns an array for wildcard and filter paths).
//!
//! Single values (`get_secret`) follow upstream's `extractSecretData`: strings unquoted, booleans
//! as `true`/`false`, `null` as empty, numbers rounded to an integer (Go's `%.0f`), arrays by
//! their first element, objects as JSON with sorted keys. Map members (`get_secret_map`) follow
//! `GetByteValue`: numbers in their shortest form instead.

use serde_json::Value as Json;
use serde_json_path::JsonPath;

use crate::error::{ProviderError, Result};
use crate::value::{SecretMap, SecretValue};

/// Parses a response body as JSON.
pub fn parse(body: &[u8]) -> Result<Json> {
    serde_json::from_slice(body).map_err(|error| {
        ProviderError::invalid_data(format!(
            "failed to parse response json: {}",
            crate::redact::json_error(&error)
        ))
    })
}

/// How deeply brackets and parentheses may nest in a JSONPath: `serde_json_path`'s parser
/// backtracks through every nested filter level, so a path of a few hundred `(` (found by the
/// `webhook_response` fuzz target) kept it busy for minutes; real paths nest two or three deep.
const MAX_PATH_NESTING: usize = 16;

/// Checks a (rendered) JSONPath expression.
pub fn compile(path: &str) -> Result<JsonPath> {
    let mut depth = 0usize;
    for character in path.chars() {
        match character {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_PATH_NESTING {
            return Err(ProviderError::invalid_config(format!(
                "failed to get response path: brackets nest deeper than {MAX_PATH_NESTING}"
            )));
        }
    }
    // `serde_json_path` 0.7 panics (`unreachable!`) on a `\u` escape cut short at the end of
    // the path (found by the `webhook_response` fuzz target): refuse it first.
    if short_unicode_escape(path) {
        return Err(ProviderError::invalid_config(
            "failed to get response path: a \\u escape needs four hex digits",
        ));
    }
    JsonPath::parse(path).map_err(|error| {
        ProviderError::invalid_config(format!("failed to get response path {path}: {error}"))
    })
}

/// Whether a `\u` escape in `path` is followed by fewer than four hex digits.
fn short_unicode_escape(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.windows(2).enumerate().any(|(at, pair)| {
        pair == b"\\u"
            && !bytes
                .get(at + 2..at + 6)
                .is_some_and(|digits| digits.iter().all(u8::is_ascii_hexdigit))
    })
}

/// The part of `document` that `path` selects.
pub fn select(document: &Json, path: &str) -> Result<Json> {
    let nodes = compile(path)?.query(document).all();
    match nodes.as_slice() {
        [] => Err(ProviderError::invalid_data(format!(
            "failed to get response path {path}: no match"
        ))),
        [single] => Ok((*single).clone()),
        many => Ok(Json::Array(
            many.iter().map(|node| (*node).clone()).collect(),
        )),
    }
}

/// One secret value out of a selected JSON value (upstream's `extractSecretData`).
pub fn single_value(value: &Json) -> Result<SecretValue> {
    Ok(SecretValue::new(match value {
        Json::Bool(flag) => flag.to_string().into_bytes(),
        Json::Null => Vec::new(),
        Json::Number(number) => match number
            .as_i64()
            .map(|n| n.to_string())
            .or_else(|| number.as_u64().map(|n| n.to_string()))
        {
            Some(integer) => integer.into_bytes(),
            None => format!("{:.0}", number.as_f64().unwrap_or_default()).into_bytes(),
        },
        Json::String(text) => text.clone().into_bytes(),
        Json::Array(items) => {
            let first = items.first().ok_or_else(|| {
                ProviderError::invalid_data("filter worked but didn't get any result")
            })?;
            return single_value(first);
        }
        Json::Object(_) => sorted_json(value),
    }))
}

/// A key/value map out of a response (upstream's `GetSecretMap`).
pub fn value_map(body: &[u8], path: Option<&str>) -> Result<SecretMap> {
    let mut document = parse(body)?;
    if let Some(path) = path.filter(|path| !path.is_empty()) {
        document = select(&document, path)?;
    }
    if let Json::String(text) = &document {
        document = serde_json::from_str(text).map_err(|error| {
            ProviderError::invalid_data(format!(
                "failed to parse response json from jsonpath: {}",
                crate::redact::json_error(&error)
            ))
        })?;
    }
    let Json::Object(members) = &document else {
        return Err(ProviderError::invalid_data(format!(
            "failed to get response (wrong type: {})",
            type_name(&document)
        )));
    };
    Ok(members
        .iter()
        .map(|(key, member)| (key.clone(), SecretValue::new(member_bytes(member))))
        .collect())
}

/// One member of a map (upstream's `GetByteValue`).
fn member_bytes(value: &Json) -> Vec<u8> {
    match value {
        Json::String(text) => text.clone().into_bytes(),
        Json::Null => Vec::new(),
        Json::Bool(flag) => flag.to_string().into_bytes(),
        Json::Number(number) => number.to_string().into_bytes(),
        Json::Array(_) | Json::Object(_) => sorted_json(value),
    }
}

/// JSON text with object keys sorted, as Go's `json.Marshal` writes maps.
fn sorted_json(value: &Json) -> Vec<u8> {
    fn sort(value: &Json) -> Json {
        match value {
            Json::Object(members) => {
                let mut keys: Vec<&String> = members.keys().collect();
                keys.sort();
                Json::Object(
                    keys.into_iter()
                        .map(|key| (key.clone(), sort(&members[key])))
                        .collect(),
                )
            }
            Json::Array(items) => Json::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_vec(&sort(value)).unwrap_or_default()
}

fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(body: &str, path: &str) -> Result<String> {
        let selected = select(&parse(body.as_bytes())?, path)?;
        Ok(String::from_utf8(single_value(&selected)?.into_bytes()).unwrap())
    }

    /// The `webhook_response` fuzz target's timeout input: hundreds of nested `(` in a filter.
    #[test]
    fn deeply_nested_paths_are_refused_before_parsing() {
        let path = format!("$.data[?({}", "( ((   ".repeat(60));
        let error = compile(&path).unwrap_err().to_string();
        assert!(error.contains("nest deeper than 16"), "{error}");
        let nested = format!("$.a{}", "[?(@.b".repeat(5));
        assert!(
            !compile(&nested)
                .unwrap_err()
                .to_string()
                .contains("nest deeper")
        );
        assert!(compile("$.items[?(@.name=='a')].value").is_ok());
    }

    /// The fuzz target's crash input: a `\u` escape cut short at the end of a filter string.
    #[test]
    fn short_unicode_escapes_are_refused_instead_of_panicking() {
        let error = compile("$.a[?(@.name=='x\\u").unwrap_err().to_string();
        assert!(error.contains("four hex digits"), "{error}");
        assert!(compile("$.a[?(@.name=='x\\u00e9')]").is_ok());
    }

    #[test]
    fn single_values_follow_upstream_conversions() {
        let body = r#"{"args":{"parameter":"secret"},"n":2.5,"i":42,"f":true,"z":null,
            "list":["first","second"],"empty":[],"obj":{"b":1,"a":"x"},
            "items":[{"name":"a","value":"va"},{"name":"b","value":"vb"}]}"#;
        assert_eq!(one(body, "$.args.parameter").unwrap(), "secret");
        assert_eq!(one(body, "$.n").unwrap(), "2");
        assert_eq!(one(body, "$.i").unwrap(), "42");
        assert_eq!(one(body, "$.f").unwrap(), "true");
        assert_eq!(one(body, "$.z").unwrap(), "");
        assert_eq!(one(body, "$.list").unwrap(), "first");
        assert_eq!(one(body, "$.list[1]").unwrap(), "second");
        assert_eq!(one(body, "$.obj").unwrap(), r#"{"a":"x","b":1}"#);
        assert_eq!(one(body, "$.items[?(@.name=='b')].value").unwrap(), "vb");
        assert_eq!(one(body, "$.items[*].value").unwrap(), "va");
        let error = one(body, "$.empty").unwrap_err();
        assert_eq!(error.message(), "filter worked but didn't get any result");
        let error = one(body, "$.missing").unwrap_err();
        assert_eq!(
            error.message(),
            "failed to get response path $.missing: no match"
        );
        assert_eq!(one(body, "$[").unwrap_err().reason(), "InvalidConfig");
        assert_eq!(
            parse(b"not json").unwrap_err().message(),
            "failed to parse response json: invalid JSON syntax at line 1 column 2"
        );
        let quoted = map(r#"{"data":"\"hunter2-s3cr3t\""}"#, Some("$.data")).unwrap_err();
        assert!(
            quoted
                .message()
                .starts_with("failed to get response (wrong type")
                && !quoted.message().contains("hunter2"),
            "{quoted}"
        );
        let errors = [
            parse(br#"{"k": hunter2-s3cr3t}"#).unwrap_err(),
            map(r#"{"data":"{\"k\": hunter2}"}"#, Some("$.data")).unwrap_err(),
        ];
        for error in errors {
            assert!(!error.message().contains("hunter2"), "{error}");
        }
    }

    fn map(body: &str, path: Option<&str>) -> Result<Vec<(String, String)>> {
        Ok(value_map(body.as_bytes(), path)?
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8(v.into_bytes()).unwrap()))
            .collect())
    }

    #[test]
    fn maps_follow_upstream_conversions() {
        let body = r#"{"data":{"s":"x","n":1.5,"i":3,"b":false,"o":{"k":"v"},"l":[1],"z":null},
            "encoded":"{\"inner\":\"v\"}","list":[1]}"#;
        assert_eq!(
            map(body, Some("$.data")).unwrap(),
            [
                ("b".into(), "false".into()),
                ("i".into(), "3".into()),
                ("l".into(), "[1]".into()),
                ("n".into(), "1.5".into()),
                ("o".into(), r#"{"k":"v"}"#.into()),
                ("s".into(), "x".into()),
                ("z".into(), String::new()),
            ]
        );
        assert_eq!(
            map(body, Some("$.encoded")).unwrap(),
            [("inner".into(), "v".into())]
        );
        assert_eq!(
            map(r#"{"a":"b"}"#, None).unwrap(),
            [("a".into(), "b".into())]
        );
        assert_eq!(
            map(r#"{"a":"b"}"#, Some("")).unwrap(),
            [("a".into(), "b".into())]
        );
        let error = map(body, Some("$.list")).unwrap_err();
        assert_eq!(
            error.message(),
            "failed to get response (wrong type: []interface {})"
        );
    }
}
