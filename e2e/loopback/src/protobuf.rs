//! Decoding of the Kubernetes protobuf request bodies `kubectl create` sends for a few
//! built-in kinds (ConfigMap, Secret, Namespace, ServiceAccount, TokenRequest): the
//! `k8s\0` + `runtime.Unknown` envelope and just enough of each message, into JSON.
//! Responses are always JSON, which protobuf clients accept. Other kinds get 415.

use crate::errors::{ApiError, ApiResult};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

/// How one protobuf field maps to JSON.
#[derive(Clone, Copy)]
enum Field {
    String,
    Bytes,
    Int64,
    Bool,
    Time,
    Message(&'static [(u64, &'static str, Field)]),
    RepeatedString,
    RepeatedMessage(&'static [(u64, &'static str, Field)]),
    MapStringString,
    MapStringBytes,
}

type Schema = &'static [(u64, &'static str, Field)];

const MAP_STRING_ENTRY: Schema = &[(1, "key", Field::String), (2, "value", Field::String)];
const MAP_BYTES_ENTRY: Schema = &[(1, "key", Field::String), (2, "value", Field::Bytes)];
const TIME: Schema = &[(1, "seconds", Field::Int64)];

const OWNER_REFERENCE: Schema = &[
    (1, "kind", Field::String),
    (3, "name", Field::String),
    (4, "uid", Field::String),
    (5, "apiVersion", Field::String),
    (6, "controller", Field::Bool),
    (7, "blockOwnerDeletion", Field::Bool),
];

const OBJECT_META: Schema = &[
    (1, "name", Field::String),
    (2, "generateName", Field::String),
    (3, "namespace", Field::String),
    (5, "uid", Field::String),
    (6, "resourceVersion", Field::String),
    (7, "generation", Field::Int64),
    (8, "creationTimestamp", Field::Time),
    (11, "labels", Field::MapStringString),
    (12, "annotations", Field::MapStringString),
    (
        13,
        "ownerReferences",
        Field::RepeatedMessage(OWNER_REFERENCE),
    ),
    (14, "finalizers", Field::RepeatedString),
];

const OBJECT_REFERENCE: Schema = &[
    (1, "kind", Field::String),
    (2, "namespace", Field::String),
    (3, "name", Field::String),
];
const LOCAL_REFERENCE: Schema = &[(1, "name", Field::String)];

const CONFIG_MAP: Schema = &[
    (1, "metadata", Field::Message(OBJECT_META)),
    (2, "data", Field::MapStringString),
    (3, "binaryData", Field::MapStringBytes),
    (4, "immutable", Field::Bool),
];

const SECRET: Schema = &[
    (1, "metadata", Field::Message(OBJECT_META)),
    (2, "data", Field::MapStringBytes),
    (3, "type", Field::String),
    (4, "stringData", Field::MapStringString),
    (5, "immutable", Field::Bool),
];

const NAMESPACE: Schema = &[
    (1, "metadata", Field::Message(OBJECT_META)),
    (
        2,
        "spec",
        Field::Message(&[(1, "finalizers", Field::RepeatedString)]),
    ),
];

const SERVICE_ACCOUNT: Schema = &[
    (1, "metadata", Field::Message(OBJECT_META)),
    (2, "secrets", Field::RepeatedMessage(OBJECT_REFERENCE)),
    (3, "automountServiceAccountToken", Field::Bool),
    (
        4,
        "imagePullSecrets",
        Field::RepeatedMessage(LOCAL_REFERENCE),
    ),
];

const BOUND_OBJECT_REFERENCE: Schema = &[
    (1, "kind", Field::String),
    (2, "apiVersion", Field::String),
    (3, "name", Field::String),
    (4, "uid", Field::String),
];

const TOKEN_REQUEST: Schema = &[
    (1, "metadata", Field::Message(OBJECT_META)),
    (
        2,
        "spec",
        Field::Message(&[
            (1, "audiences", Field::RepeatedString),
            (3, "boundObjectRef", Field::Message(BOUND_OBJECT_REFERENCE)),
            (4, "expirationSeconds", Field::Int64),
        ]),
    ),
];

/// Whether a Content-Type is Kubernetes protobuf.
pub(crate) fn is_protobuf(content_type: &str) -> bool {
    content_type.starts_with("application/vnd.kubernetes.protobuf")
}

/// Decodes a protobuf request body into the JSON object it stands for.
pub(crate) fn decode(body: &[u8]) -> ApiResult<Value> {
    let unsupported = || ApiError::unsupported_media_type("application/vnd.kubernetes.protobuf");
    let envelope = body.strip_prefix(b"k8s\0").ok_or_else(unsupported)?;
    let mut reader = Reader(envelope);
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    while let Some((number, wire)) = reader.key()? {
        match (number, wire) {
            (1, Wire::Bytes(type_meta)) => {
                let mut inner = Reader(type_meta);
                while let Some((number, wire)) = inner.key()? {
                    match (number, wire) {
                        (1, Wire::Bytes(text)) => api_version = text_of(text)?,
                        (2, Wire::Bytes(text)) => kind = text_of(text)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(bytes)) => raw = bytes,
            _ => {}
        }
    }
    let schema = match (api_version.as_str(), kind.as_str()) {
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("authentication.k8s.io/v1", "TokenRequest") => TOKEN_REQUEST,
        _ => return Err(unsupported()),
    };
    let mut object = message(raw, schema)?;
    object["apiVersion"] = api_version.into();
    object["kind"] = kind.into();
    Ok(object)
}

fn message(bytes: &[u8], schema: Schema) -> ApiResult<Value> {
    let mut object = Map::new();
    let mut reader = Reader(bytes);
    while let Some((number, wire)) = reader.key()? {
        let Some((_, name, field)) = schema.iter().find(|(n, _, _)| *n == number) else {
            continue;
        };
        let name = (*name).to_owned();
        match (*field, wire) {
            (Field::String, Wire::Bytes(text)) if !text.is_empty() => {
                object.insert(name, text_of(text)?.into());
            }
            (Field::Bytes, Wire::Bytes(bytes)) => {
                object.insert(name, STANDARD.encode(bytes).into());
            }
            (Field::Int64, Wire::Varint(number)) if number != 0 => {
                object.insert(name, (number as i64).into());
            }
            (Field::Bool, Wire::Varint(number)) if number != 0 => {
                object.insert(name, (number != 0).into());
            }
            (Field::Time, Wire::Bytes(time)) => {
                let seconds = message(time, TIME)?["seconds"].as_i64().unwrap_or(0);
                if seconds == 0 {
                    continue;
                }
                let text = jiff::Timestamp::from_second(seconds)
                    .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_default();
                object.insert(name, text.into());
            }
            (Field::Message(inner), Wire::Bytes(bytes)) => {
                object.insert(name, message(bytes, inner)?);
            }
            (Field::RepeatedString, Wire::Bytes(text)) => {
                push(&mut object, name, text_of(text)?.into())
            }
            (Field::RepeatedMessage(inner), Wire::Bytes(bytes)) => {
                push(&mut object, name, message(bytes, inner)?)
            }
            (Field::MapStringString | Field::MapStringBytes, Wire::Bytes(entry)) => {
                let entry_schema = if matches!(field, Field::MapStringBytes) {
                    MAP_BYTES_ENTRY
                } else {
                    MAP_STRING_ENTRY
                };
                let entry = message(entry, entry_schema)?;
                let key = entry["key"].as_str().unwrap_or_default().to_owned();
                let value = entry.get("value").cloned().unwrap_or_else(|| json!(""));
                let map = object.entry(name).or_insert_with(|| json!({}));
                map[key] = value;
            }
            (Field::String | Field::Int64 | Field::Bool, _) => {}
            _ => {
                return Err(ApiError::bad_request(format!(
                    "unexpected protobuf wire type for field {number}"
                )));
            }
        }
    }
    Ok(Value::Object(object))
}

fn push(object: &mut Map<String, Value>, name: String, value: Value) {
    if let Value::Array(items) = object
        .entry(name)
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        items.push(value);
    }
}

fn text_of(bytes: &[u8]) -> ApiResult<String> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| ApiError::bad_request("protobuf string is not UTF-8"))
}

enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn varint(&mut self) -> ApiResult<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.0.split_first().ok_or_else(truncated)?;
            self.0 = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(truncated())
    }

    fn key(&mut self) -> ApiResult<Option<(u64, Wire<'a>)>> {
        if self.0.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            2 => {
                let length = usize::try_from(self.varint()?).map_err(|_| truncated())?;
                if length > self.0.len() {
                    return Err(truncated());
                }
                let (bytes, rest) = self.0.split_at(length);
                self.0 = rest;
                Wire::Bytes(bytes)
            }
            1 | 5 => {
                let size = if key & 7 == 1 { 8 } else { 4 };
                self.0 = self.0.get(size..).ok_or_else(truncated)?;
                Wire::Fixed
            }
            _ => return Err(truncated()),
        };
        Ok(Some((key >> 3, wire)))
    }
}

fn truncated() -> ApiError {
    ApiError::bad_request("malformed protobuf body")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u64, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![((number << 3) | 2) as u8, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn decodes_a_config_map() {
        let metadata = [field(1, b"c"), field(3, b"n")].concat();
        let entry = [field(1, b"k"), field(2, b"v")].concat();
        let config_map = [field(1, &metadata), field(2, &entry)].concat();
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let body = [
            b"k8s\0".to_vec(),
            field(1, &type_meta),
            field(2, &config_map),
        ]
        .concat();
        assert_eq!(
            decode(&body).unwrap(),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "data": {"k": "v"}})
        );
    }
}
