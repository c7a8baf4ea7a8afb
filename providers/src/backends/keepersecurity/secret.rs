//! Upstream's view of a record as secret data: standard fields (keyed by label, else type),
//! custom fields (by label) and files (by title, with their contents).
//!
//! A whole record is the JSON `{"title","type","fields","custom","files"}` (files as
//! `{"type": title, "content": text}`, absent lists as `null`, as Go marshals them); a property
//! is the first standard field (not `fileRef` nor `oneTimeCode`), custom field or file with that
//! key and a value; a map holds every field and file with a value. A value of one string is
//! that string, anything else its JSON. Records with a key used twice are refused, as upstream.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::error::{ProviderError, Result};
use crate::value::{SecretMap, SecretValue};

/// Standard field types a property never selects (upstream's `fileRef` and `oneTimeCode`).
const SKIPPED_TYPES: [&str; 2] = ["fileRef", "oneTimeCode"];

/// A record as upstream reads it.
#[derive(Serialize)]
pub struct Secret {
    title: String,
    #[serde(rename = "type")]
    record_type: String,
    fields: Option<Vec<Field>>,
    custom: Option<Vec<Field>>,
    files: Option<Vec<File>>,
}

/// A standard or custom field.
#[derive(Serialize, serde::Deserialize)]
struct Field {
    #[serde(rename = "type", default)]
    field_type: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    label: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    value: Vec<Value>,
}

/// An attached file with its contents (bytes as downloaded: a property or map value is exact;
/// the whole-record JSON holds them as text, invalid UTF-8 replaced, as Go's encoder does).
#[derive(Serialize)]
struct File {
    #[serde(rename = "type")]
    title: String,
    #[serde(serialize_with = "as_text")]
    content: Vec<u8>,
}

fn as_text<S: serde::Serializer>(
    bytes: &[u8],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(&String::from_utf8_lossy(bytes))
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Vec<Value>, D::Error> {
    Ok(<Option<Vec<Value>> as serde::Deserialize>::deserialize(deserializer)?.unwrap_or_default())
}

impl Field {
    /// The key a standard field is known by.
    fn key(&self) -> &str {
        if self.label.is_empty() {
            &self.field_type
        } else {
            &self.label
        }
    }
}

impl Secret {
    /// Upstream's `getValidKeeperSecret`: the record's data with `files` (title, contents).
    pub fn new(data: &Value, files: Vec<(String, Vec<u8>)>) -> Result<Self> {
        // serde's message would quote the offending value (a secret): name the list instead.
        let list = |name: &str| -> Result<Option<Vec<Field>>> {
            match data.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => serde_json::from_value(value.clone()).map_err(|_| {
                    ProviderError::invalid_data(format!(
                        "invalid secret. Invalid format: {name} is not a list of fields"
                    ))
                }),
            }
        };
        let text = |name: &str| {
            data.get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let files: Vec<File> = files
            .into_iter()
            .map(|(title, content)| File { title, content })
            .collect();
        let secret = Self {
            title: text("title"),
            record_type: text("type"),
            fields: list("fields")?,
            custom: list("custom")?,
            files: (!files.is_empty()).then_some(files),
        };
        secret.check_unique_keys()?;
        Ok(secret)
    }

    fn fields(&self) -> &[Field] {
        self.fields.as_deref().unwrap_or_default()
    }

    fn custom(&self) -> &[Field] {
        self.custom.as_deref().unwrap_or_default()
    }

    fn files(&self) -> &[File] {
        self.files.as_deref().unwrap_or_default()
    }

    fn check_unique_keys(&self) -> Result<()> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let keys = self
            .fields()
            .iter()
            .map(Field::key)
            .chain(self.custom().iter().map(|field| field.label.as_str()))
            .chain(self.files().iter().map(|file| file.title.as_str()));
        for key in keys {
            *counts.entry(key).or_default() += 1;
        }
        let duplicated: Vec<&str> = counts
            .into_iter()
            .filter(|(_, count)| *count > 1)
            .map(|(key, _)| key)
            .collect();
        if duplicated.is_empty() {
            return Ok(());
        }
        Err(ProviderError::invalid_data(format!(
            "invalid Secret. Following keys are duplicated {}",
            duplicated.join(", ")
        )))
    }

    /// One value: a property, or the whole record as JSON.
    pub fn item(&self, property: Option<&str>) -> Result<SecretValue> {
        match property.filter(|property| !property.is_empty()) {
            Some(property) => self.property(property),
            None => serde_json::to_vec(self)
                .map(SecretValue::new)
                .map_err(|error| {
                    ProviderError::invalid_data(format!(
                        "invalid Secret. Secret {} can not be converted to JSON. {error}",
                        self.title
                    ))
                }),
        }
    }

    /// Key/value pairs: one property, or every field, custom field and file with a value.
    pub fn items(&self, property: Option<&str>) -> Result<SecretMap> {
        if let Some(property) = property.filter(|property| !property.is_empty()) {
            return Ok(SecretMap::from([(
                property.to_owned(),
                self.property(property)?,
            )]));
        }
        let mut map = SecretMap::new();
        for field in self.fields().iter().filter(|field| !field.value.is_empty()) {
            map.insert(field.key().to_owned(), field_value(&field.value));
        }
        for field in self.custom().iter().filter(|field| !field.value.is_empty()) {
            map.insert(field.label.clone(), field_value(&field.value));
        }
        for file in self.files() {
            map.insert(file.title.clone(), SecretValue::new(file.content.clone()));
        }
        if map.is_empty() {
            return Err(ProviderError::invalid_data(format!(
                "invalid Secret. Secret {} does not contain any valid field/file",
                self.title
            )));
        }
        Ok(map)
    }

    fn property(&self, key: &str) -> Result<SecretValue> {
        let standard = self.fields().iter().find(|field| {
            field.key() == key
                && !SKIPPED_TYPES.contains(&field.field_type.as_str())
                && !field.value.is_empty()
        });
        let custom = || {
            self.custom()
                .iter()
                .find(|field| field.label == key && !field.value.is_empty())
        };
        if let Some(field) = standard.or_else(custom) {
            return Ok(field_value(&field.value));
        }
        if let Some(file) = self.files().iter().find(|file| file.title == key) {
            return Ok(SecretValue::new(file.content.clone()));
        }
        Err(ProviderError::not_found(format!(
            "invalid Property. Secret {} does not have any key matching {key}",
            self.title
        )))
    }
}

/// Upstream's `getFieldValue`: one string as itself, anything else as JSON.
fn field_value(values: &[Value]) -> SecretValue {
    match values {
        [Value::String(text)] => SecretValue::new(text.clone()),
        [single] => SecretValue::new(single.to_string()),
        many => SecretValue::new(Value::from(many.to_vec()).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(value: SecretValue) -> String {
        String::from_utf8(value.into_bytes()).unwrap()
    }

    fn record() -> Value {
        json!({
            "title": "db", "type": "login",
            "fields": [
                {"type": "login", "value": ["admin"]},
                {"type": "password", "value": ["hunter2"]},
                {"type": "url", "label": "endpoint", "value": ["https://db"]},
                {"type": "oneTimeCode", "value": ["otpauth://x"]},
                {"type": "host", "value": [{"hostName": "db", "port": "5432"}]},
                {"type": "notes", "value": []},
            ],
            "custom": [{"type": "text", "label": "region", "value": ["eu", "us"]}],
        })
    }

    #[test]
    fn properties_read_fields_custom_fields_and_files() {
        let files = vec![
            ("cert.pem".to_owned(), b"PEM".to_vec()),
            ("store.p12".to_owned(), vec![0x30, 0x82, 0xff]),
        ];
        let secret = Secret::new(&record(), files).unwrap();
        assert_eq!(text(secret.item(Some("password")).unwrap()), "hunter2");
        assert_eq!(text(secret.item(Some("endpoint")).unwrap()), "https://db");
        assert_eq!(
            text(secret.item(Some("host")).unwrap()),
            r#"{"hostName":"db","port":"5432"}"#
        );
        assert_eq!(text(secret.item(Some("region")).unwrap()), r#"["eu","us"]"#);
        assert_eq!(text(secret.item(Some("cert.pem")).unwrap()), "PEM");
        let binary = secret.item(Some("store.p12")).unwrap();
        assert_eq!(binary.expose(), [0x30, 0x82, 0xff]);
        let missing = secret.item(Some("oneTimeCode")).unwrap_err();
        assert!(missing.is_not_found());
        assert_eq!(
            missing.to_string(),
            "invalid Property. Secret db does not have any key matching oneTimeCode"
        );
        let map = secret.items(None).unwrap();
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "cert.pem",
                "endpoint",
                "host",
                "login",
                "oneTimeCode",
                "password",
                "region",
                "store.p12"
            ]
        );
        let one = secret.items(Some("login")).unwrap();
        assert_eq!(text(one["login"].clone()), "admin");
    }

    #[test]
    fn the_whole_record_is_upstreams_json() {
        let data = json!({"title": "t", "type": "login", "fields": [{"type": "password", "value": ["p"]}]});
        let secret = Secret::new(&data, Vec::new()).unwrap();
        assert_eq!(
            text(secret.item(None).unwrap()),
            r#"{"title":"t","type":"login","fields":[{"type":"password","value":["p"]}],"custom":null,"files":null}"#
        );
        let empty = Secret::new(&json!({"title": "e", "fields": []}), Vec::new()).unwrap();
        assert!(!empty.items(None).unwrap_err().is_not_found());
    }

    #[test]
    fn duplicated_keys_are_refused() {
        let data = json!({"title": "t", "fields": [{"type": "password", "value": ["a"]}],
            "custom": [{"type": "text", "label": "password", "value": ["b"]}]});
        let error = Secret::new(&data, Vec::new()).err().unwrap();
        assert_eq!(
            error.to_string(),
            "invalid Secret. Following keys are duplicated password"
        );
        let error = Secret::new(&json!({"fields": "hunter2"}), Vec::new())
            .err()
            .unwrap();
        assert_eq!(
            error.to_string(),
            "invalid secret. Invalid format: fields is not a list of fields"
        );
    }
}
