//! JSON members of a secret's value, as upstream's pushes edit them with sjson: `property` is a
//! dotted path (`a.b`), and missing or non-object steps become objects when a member is set.
//! A value that is not JSON cannot hold a member.

use serde_json::{Map, Value};

use crate::error::{ProviderError, Result};

/// What removing a member left.
pub enum Removed {
    /// The member was not there: nothing to write.
    Absent,
    /// The document without it.
    Rest(String),
    /// Nothing: the whole secret can go.
    Empty,
}

/// `document` (a JSON object, or empty) with the string `value` at `property`.
pub fn set(document: &str, property: &str, value: &str) -> Result<String> {
    let mut root = parse(document, property, "set")?;
    let mut current = &mut root;
    for step in property.split('.') {
        if !current.is_object() {
            *current = Value::Object(Map::new());
        }
        let Value::Object(members) = current else {
            return Err(ProviderError::invalid_data("expected a JSON object"));
        };
        current = members.entry(step).or_insert(Value::Null);
    }
    *current = Value::String(value.to_owned());
    Ok(root.to_string())
}

/// `document` without the member at `property`.
pub fn remove(document: &str, property: &str) -> Result<Removed> {
    let mut root = parse(document, property, "delete")?;
    let steps: Vec<&str> = property.split('.').collect();
    let Some((last, parents)) = steps.split_last() else {
        return Ok(Removed::Absent);
    };
    let mut current = &mut root;
    for step in parents {
        match current.get_mut(*step) {
            Some(next) => current = next,
            None => return Ok(Removed::Absent),
        }
    }
    let removed = current
        .as_object_mut()
        .and_then(|members| members.remove(*last));
    if removed.is_none() {
        return Ok(Removed::Absent);
    }
    match root.as_object() {
        Some(members) if members.is_empty() => Ok(Removed::Empty),
        _ => Ok(Removed::Rest(root.to_string())),
    }
}

/// Whether `document` has a member at `property`.
pub fn contains(document: &str, property: &str) -> Result<bool> {
    let root = parse(document, property, "check")?;
    let mut current = &root;
    for step in property.split('.') {
        match current.get(step) {
            Some(next) => current = next,
            None => return Ok(false),
        }
    }
    Ok(true)
}

/// The document as a JSON object (`{}` when empty); upstream's error otherwise.
fn parse(document: &str, property: &str, verb: &str) -> Result<Value> {
    if document.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(document) {
        Ok(value) if value.is_object() => Ok(value),
        _ => Err(ProviderError::invalid_request(format!(
            "value is not a JSON object; cannot {verb} property {property:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_set_in_objects_made_on_the_way() {
        assert_eq!(set("", "a", "1").unwrap(), r#"{"a":"1"}"#);
        assert_eq!(
            set(r#"{"b":"2"}"#, "a.c", "1").unwrap(),
            r#"{"a":{"c":"1"},"b":"2"}"#
        );
        assert_eq!(
            set(r#"{"a":"x"}"#, "a.c", "1").unwrap(),
            r#"{"a":{"c":"1"}}"#
        );
        assert!(set("plain", "a", "1").is_err());
    }

    #[test]
    fn removal_says_what_is_left() {
        assert!(matches!(
            remove(r#"{"a":"1"}"#, "b").unwrap(),
            Removed::Absent
        ));
        assert!(matches!(
            remove(r#"{"a":"1"}"#, "a").unwrap(),
            Removed::Empty
        ));
        match remove(r#"{"a":"1","b":"2"}"#, "a").unwrap() {
            Removed::Rest(rest) => assert_eq!(rest, r#"{"b":"2"}"#),
            _ => panic!("expected the rest"),
        }
        assert!(contains(r#"{"a":{"b":"1"}}"#, "a.b").unwrap());
        assert!(!contains(r#"{"a":"1"}"#, "b").unwrap());
        assert!(contains("[1]", "0").is_err());
    }
}
