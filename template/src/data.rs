//! The data a template runs on, as the caller hands it over: Go strings (any bytes) and maps of
//! them, which is all upstream ever passes (`map[string]string` of secret values for target
//! templates, `map[string]map[string]string` for webhook requests). Owned and `Send`, unlike the
//! evaluator's shared values, so callers can build it anywhere and keep it across `.await`s.

use std::collections::BTreeMap;

use crate::value::{Map, MapKind, Value};

/// Template input data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// A Go `string`: any bytes.
    String(Vec<u8>),
    /// A Go map with string keys; `map[string]string` when every value is a string (a missing
    /// key then indexes as `""`), `map[string]interface{}` otherwise.
    Map(BTreeMap<String, Data>),
}

impl Data {
    /// A map of strings (`map[string]string`) from key/value pairs.
    pub fn strings<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Data
    where
        K: Into<String>,
        V: Into<Vec<u8>>,
    {
        Data::Map(
            pairs
                .into_iter()
                .map(|(key, value)| (key.into(), Data::String(value.into())))
                .collect(),
        )
    }

    /// The evaluator's value, registering every map with `arena` (emptied after the render).
    pub(crate) fn to_value(&self, arena: &mut Vec<Map>) -> Value {
        match self {
            Data::String(bytes) => Value::str(bytes),
            Data::Map(entries) => {
                let kind = if entries
                    .values()
                    .all(|value| matches!(value, Data::String(_)))
                {
                    MapKind::Strings
                } else {
                    MapKind::Any
                };
                let entries = entries
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_value(arena)))
                    .collect();
                let map = Value::new_map(entries, kind);
                arena.push(map.clone());
                Value::Map(map)
            }
        }
    }
}

impl From<&BTreeMap<String, Vec<u8>>> for Data {
    /// Secret data as upstream hands it to target templates: `map[string]string`.
    fn from(data: &BTreeMap<String, Vec<u8>>) -> Self {
        Data::strings(data.iter().map(|(key, value)| (key.clone(), value.clone())))
    }
}
