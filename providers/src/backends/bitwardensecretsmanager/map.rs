//! A secret's value read as a map (`dataFrom.extract`), as upstream's `GetSecretMap`: a YAML
//! mapping first (JSON objects are YAML too), strings as they are, nested mappings as YAML,
//! other values as Go's `%v` prints them; failing that a JSON object, strings unquoted and
//! other members as their JSON text.
//!
//! Difference from upstream: nested mappings are written with two-space indentation (Go's
//! yaml.v3 indents by four).

use serde_yaml::Value as Yaml;

use crate::error::{ProviderError, Result};
use crate::property::raw_to_bytes;
use crate::value::{SecretMap, SecretValue};

/// The members of `value`, a YAML mapping or a JSON object.
pub fn secret_map(value: &[u8]) -> Result<SecretMap> {
    match serde_yaml::from_slice::<Yaml>(value) {
        Ok(Yaml::Mapping(mapping)) => mapping
            .iter()
            .map(|(key, member)| Ok((go_text(key), SecretValue::new(member_bytes(member)?))))
            .collect(),
        // An empty document is an empty mapping.
        Ok(Yaml::Null) => Ok(SecretMap::new()),
        _ => json_map(value),
    }
}

/// The JSON-object reading upstream falls back to.
fn json_map(value: &[u8]) -> Result<SecretMap> {
    let members: std::collections::BTreeMap<String, &serde_json::value::RawValue> =
        serde_json::from_slice(value).map_err(|failure| {
            ProviderError::invalid_data(format!("error unmarshalling secret: {failure}"))
        })?;
    Ok(members
        .into_iter()
        .map(|(key, raw)| (key, SecretValue::new(raw_to_bytes(raw))))
        .collect())
}

/// One member's bytes: strings as they are, mappings as YAML, the rest as Go prints them.
fn member_bytes(member: &Yaml) -> Result<Vec<u8>> {
    match member {
        Yaml::Mapping(_) => {
            let yaml = serde_yaml::to_string(member).map_err(|failure| {
                ProviderError::invalid_data(format!("error marshaling secret: {failure}"))
            })?;
            Ok(yaml.trim().as_bytes().to_vec())
        }
        Yaml::Tagged(tagged) => member_bytes(&tagged.value),
        other => Ok(go_text(other).into_bytes()),
    }
}

/// A YAML value as Go's `fmt` `%v` prints what yaml.v3 decodes it to.
fn go_text(value: &Yaml) -> String {
    match value {
        Yaml::Null => "<nil>".to_owned(),
        Yaml::Bool(flag) => flag.to_string(),
        Yaml::Number(number) => match number.as_f64() {
            Some(float) if number.is_f64() && float.fract() == 0.0 && float.abs() < 1e21 => {
                format!("{float:.0}")
            }
            _ => number.to_string(),
        },
        Yaml::String(text) => text.clone(),
        Yaml::Sequence(items) => {
            let items: Vec<String> = items.iter().map(go_text).collect();
            format!("[{}]", items.join(" "))
        }
        Yaml::Mapping(mapping) => {
            let mut members: Vec<String> = mapping
                .iter()
                .map(|(key, member)| format!("{}:{}", go_text(key), go_text(member)))
                .collect();
            members.sort();
            format!("map[{}]", members.join(" "))
        }
        Yaml::Tagged(tagged) => go_text(&tagged.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(value: &str) -> Vec<(String, String)> {
        secret_map(value.as_bytes())
            .unwrap()
            .into_iter()
            .map(|(key, value)| (key, String::from_utf8(value.into_bytes()).unwrap()))
            .collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn json_and_yaml_objects_become_maps_as_upstream() {
        assert_eq!(
            texts(r#"{"user":"admin","port":5432,"ok":true,"ratio":1.5,"none":null}"#),
            pairs(&[
                ("none", "<nil>"),
                ("ok", "true"),
                ("port", "5432"),
                ("ratio", "1.5"),
                ("user", "admin")
            ])
        );
        assert_eq!(
            texts("user: admin\nlist: [a, 2]\nnested:\n  k: v\n"),
            pairs(&[("list", "[a 2]"), ("nested", "k: v"), ("user", "admin")])
        );
        assert!(texts("").is_empty());
    }

    #[test]
    fn values_that_are_no_mapping_are_refused() {
        for value in ["hunter2", "[1, 2]", "{"] {
            let error = secret_map(value.as_bytes()).unwrap_err();
            assert!(
                error.message().starts_with("error unmarshalling secret"),
                "{error}"
            );
        }
    }
}
