//! Object metadata helpers: uids, timestamps, generated names, name validation and the set of
//! `ObjectMeta` fields (unknown ones are pruned like any unknown field).

use crate::errors::FieldError;
use serde_json::{Map, Value};

/// Fields of `ObjectMeta`.
pub(crate) const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Metadata fields only the server sets; updates keep the stored values.
pub(crate) const SYSTEM_FIELDS: &[&str] = &[
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
];

/// The current time as RFC 3339 with second precision, like `metav1.Time`.
pub(crate) fn now() -> String {
    timestamp_after(0)
}

/// The time `seconds` from now, RFC 3339 with second precision.
pub(crate) fn timestamp_after(seconds: i64) -> String {
    let now = jiff::Timestamp::now().as_second() + seconds;
    jiff::Timestamp::from_second(now)
        .map(|timestamp| timestamp.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// A random version-4 UUID.
pub(crate) fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `generateName` plus five random characters from kube's alphabet.
pub(crate) fn generate_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let suffix: String = (0..5)
        .map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())] as char)
        .collect();
    let prefix = if prefix.len() > 58 {
        &prefix[..58]
    } else {
        prefix
    };
    format!("{prefix}{suffix}")
}

fn is_dns_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// Validates `metadata.name` as a DNS-1123 label (namespaces) or subdomain (everything else).
pub(crate) fn validate_name(name: &str, label: bool) -> Option<FieldError> {
    let value = Value::String(name.to_owned());
    if label {
        if is_dns_label(name) {
            return None;
        }
        return Some(FieldError::invalid(
            "metadata.name",
            value,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ));
    }
    if name.len() <= 253 && name.split('.').all(is_dns_label) {
        return None;
    }
    Some(FieldError::invalid(
        "metadata.name",
        value,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ))
}

/// Validates an RBAC object's `metadata.name` as kube-apiserver does (`ValidateRBACName`, a
/// URL path segment): bootstrap names such as `system:discovery` are valid.
pub(crate) fn validate_path_segment_name(name: &str) -> Option<FieldError> {
    let problem = match name {
        "" => return validate_name(name, false),
        "." | ".." => format!("may not be '{name}'"),
        _ if name.contains('/') => "may not contain '/'".to_owned(),
        _ if name.contains('%') => "may not contain '%'".to_owned(),
        _ => return None,
    };
    Some(FieldError::invalid(
        "metadata.name",
        Value::String(name.to_owned()),
        problem,
    ))
}

/// The `metadata` map of an object, created when missing.
pub(crate) fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object["metadata"].is_object() {
        object["metadata"] = Value::Object(Map::new());
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

/// A string field of `metadata`.
pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// The finalizers of an object.
pub(crate) fn finalizers(object: &Value) -> Vec<String> {
    object["metadata"]["finalizers"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces the finalizers of an object (removing the field when empty).
pub(crate) fn set_finalizers(object: &mut Value, finalizers: &[String]) {
    let metadata = metadata_mut(object);
    if finalizers.is_empty() {
        metadata.remove("finalizers");
    } else {
        metadata.insert(
            "finalizers".into(),
            finalizers.iter().cloned().map(Value::String).collect(),
        );
    }
}

/// Whether the object has a deletionTimestamp.
pub(crate) fn is_deleting(object: &Value) -> bool {
    object["metadata"]["deletionTimestamp"].is_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_look_like_uuids() {
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
        assert_ne!(uid, new_uid());
    }

    #[test]
    fn names_are_validated_like_kubernetes() {
        assert!(validate_name("my-ns", true).is_none());
        assert!(validate_name("a.b", true).is_some());
        assert!(validate_name("a.b-c", false).is_none());
        assert!(validate_name("Upper", false).is_some());
        assert!(validate_name("", false).is_some());
        assert!(validate_path_segment_name("system:auth-delegator").is_none());
        assert!(validate_path_segment_name("a/b").is_some());
        assert!(validate_path_segment_name("..").is_some());
    }

    #[test]
    fn timestamps_have_second_precision() {
        let text = now();
        assert_eq!(text.len(), 20, "{text}");
        assert!(text.ends_with('Z'));
    }
}
