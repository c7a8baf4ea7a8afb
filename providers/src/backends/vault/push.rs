//! PushSecret and its deletion (upstream's `PushSecret` and `DeleteSecret`).
//!
//! * A pushed secret is marked as ours with `managed-by: external-secrets`: in the KV v2 custom
//!   metadata (written before the data), or for KV v1 under `custom_metadata` inside the data.
//!   An existing secret without the marker is never overwritten ("secret not managed by
//!   external-secrets", a permanent `AlreadyExists`) and never deleted (a silent no-op).
//! * Without a property the value must be a JSON object and replaces the whole secret; with
//!   one, the value is stored as a string under that key, the other keys kept. Nothing is
//!   written when the secret already holds the value.
//! * `checkAndSet.required` (KV v2): writes carry `cas`, 0 for a new secret, otherwise the
//!   current version, so a concurrent change fails the push (temporarily) instead of being
//!   overwritten. Unlike upstream, a property deletion that rewrites the secret carries it too.
//! * Deleting a property rewrites the secret without it; deleting the last one (or without a
//!   property) deletes the secret, for KV v2 with all its versions and metadata.

use serde_json::{Map, Value, json};

use super::kv::{Document, Engine, Metadata};
use crate::error::{ErrorKind, ProviderError, Result};
use crate::request::{PushRemoteRef, PushRequest};

/// The ownership marker's key.
pub(super) const MANAGED_BY: &str = "managed-by";
/// The ownership marker's value.
pub(super) const MANAGER: &str = "external-secrets";
/// Where KV v1 keeps the marker, inside the data.
const CUSTOM_METADATA: &str = "custom_metadata";

/// What a push does to the remote secret.
#[derive(Debug, PartialEq)]
enum PushPlan {
    /// It already holds the value.
    Unchanged,
    /// Its new data.
    Write(Map<String, Value>),
}

/// What deleting a pushed value does to the remote secret.
#[derive(Debug, PartialEq)]
enum Removal {
    /// Rewrite it with this data.
    Write(Map<String, Value>),
    /// Delete it.
    Delete,
}

/// Pushes `request` through `engine`.
pub(super) async fn push(
    engine: &Engine,
    request: &PushRequest,
    check_and_set: bool,
) -> Result<()> {
    let key = request.remote_ref.remote_key.as_str();
    if key.is_empty() {
        return Err(ProviderError::invalid_request("remote key must be defined"));
    }
    let value = request.value()?;
    let v2 = engine.kv.is_v2();
    let existing = match engine.read(key, None).await? {
        Some(document) => {
            let metadata = owned_metadata(engine, key).await?.ok_or_else(not_managed)?;
            let mut data = object(&document)?;
            if !v2 {
                data.remove(CUSTOM_METADATA);
            }
            Some((data, metadata))
        }
        None => None,
    };
    let plan = plan_push(
        existing.as_ref().map(|(data, _)| data),
        request.remote_ref.property.as_deref(),
        value.expose(),
    )?;
    let PushPlan::Write(mut data) = plan else {
        return Ok(());
    };
    let data_path = engine.kv.data_path(key);
    let action = format!("cannot push secret {key:?} to vault");
    if !v2 {
        data.insert(CUSTOM_METADATA.to_owned(), marker());
        return engine.write(&data_path, Value::Object(data), &action).await;
    }
    let metadata_path = engine.kv.metadata_path(key)?;
    let label = json!({ CUSTOM_METADATA: marker() });
    engine.write(&metadata_path, label, &action).await?;
    let version = existing.map(|(_, metadata)| metadata.current_version.unwrap_or(1));
    let body = versioned(data, check_and_set.then_some(version.unwrap_or(0)));
    engine.write(&data_path, body, &action).await
}

/// Deletes what was pushed to `remote_ref`; a missing or foreign secret is left alone.
pub(super) async fn delete(
    engine: &Engine,
    remote_ref: &PushRemoteRef,
    check_and_set: bool,
) -> Result<()> {
    let key = remote_ref.remote_key.as_str();
    let Some(document) = engine.read(key, None).await? else {
        return Ok(());
    };
    let Some(metadata) = owned_metadata(engine, key).await? else {
        return Ok(());
    };
    let v2 = engine.kv.is_v2();
    let data_path = engine.kv.data_path(key);
    let action = format!("could not delete secret {key}");
    match plan_delete(object(&document)?, remote_ref.property.as_deref(), v2) {
        Removal::Write(data) if v2 => {
            let cas = check_and_set.then(|| metadata.current_version.unwrap_or(1));
            engine
                .write(&data_path, versioned(data, cas), &action)
                .await
        }
        Removal::Write(data) => engine.write(&data_path, Value::Object(data), &action).await,
        Removal::Delete => {
            engine.delete(&data_path, &action).await?;
            if v2 {
                let metadata_path = engine.kv.metadata_path(key)?;
                let action = format!("could not delete secret metadata {key}");
                engine.delete(&metadata_path, &action).await?;
            }
            Ok(())
        }
    }
}

/// The metadata of `key` if it carries our marker.
async fn owned_metadata(engine: &Engine, key: &str) -> Result<Option<Metadata>> {
    Ok(engine
        .metadata(key)
        .await?
        .filter(|metadata| metadata.entries.get(MANAGED_BY).map(String::as_str) == Some(MANAGER)))
}

fn not_managed() -> ProviderError {
    ProviderError::new(
        ErrorKind::AlreadyExists,
        "secret not managed by external-secrets",
    )
}

fn marker() -> Value {
    json!({ MANAGED_BY: MANAGER })
}

/// A KV v2 write body, with a check-and-set version if required.
fn versioned(data: Map<String, Value>, cas: Option<u64>) -> Value {
    let mut body = json!({ "data": data });
    if let Some(cas) = cas {
        body["options"] = json!({ "cas": cas });
    }
    body
}

/// A document as a JSON object.
fn object(document: &Document) -> Result<Map<String, Value>> {
    serde_json::from_str(document.get())
        .map_err(|_| ProviderError::invalid_data("the vault secret is not a JSON object"))
}

/// Upstream's push decision, given the current data (marker removed) if the secret exists.
fn plan_push(
    existing: Option<&Map<String, Value>>,
    property: Option<&str>,
    value: &[u8],
) -> Result<PushPlan> {
    let Some(property) = property else {
        let incoming: Map<String, Value> = serde_json::from_slice(value).map_err(|_| {
            ProviderError::invalid_request(
                "error unmarshalling incoming secret value: invalid JSON format",
            )
        })?;
        return Ok(if existing == Some(&incoming) {
            PushPlan::Unchanged
        } else {
            PushPlan::Write(incoming)
        });
    };
    let text = String::from_utf8_lossy(value).into_owned();
    let mut data = existing.cloned().unwrap_or_default();
    match data.get(property) {
        Some(Value::String(current)) if *current == text => return Ok(PushPlan::Unchanged),
        Some(Value::String(_)) | None => {}
        Some(_) => {
            return Err(ProviderError::invalid_request(format!(
                "error converting {property} to string"
            )));
        }
    }
    data.insert(property.to_owned(), Value::String(text));
    Ok(PushPlan::Write(data))
}

/// Upstream's delete decision for an owned secret.
fn plan_delete(mut data: Map<String, Value>, property: Option<&str>, v2: bool) -> Removal {
    let Some(property) = property else {
        return Removal::Delete;
    };
    data.remove(property);
    if !v2 && data.len() == 1 {
        // Only the marker is left.
        data.remove(CUSTOM_METADATA);
    }
    if data.is_empty() {
        Removal::Delete
    } else {
        Removal::Write(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(json: Value) -> Map<String, Value> {
        match json {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn whole_secret_pushes_replace_unless_equal() {
        let existing = map(json!({"a": "1", "b": "2"}));
        let same = br#"{"b":"2","a":"1"}"#;
        assert_eq!(
            plan_push(Some(&existing), None, same).unwrap(),
            PushPlan::Unchanged
        );
        let new = br#"{"a":"3"}"#;
        assert_eq!(
            plan_push(Some(&existing), None, new).unwrap(),
            PushPlan::Write(map(json!({"a": "3"})))
        );
        let error = plan_push(None, None, b"not json: hunter2").unwrap_err();
        assert!(!error.message().contains("hunter2"));
    }

    #[test]
    fn property_pushes_merge_strings() {
        let existing = map(json!({"a": "1", "n": 5}));
        assert_eq!(
            plan_push(Some(&existing), Some("a"), b"1").unwrap(),
            PushPlan::Unchanged
        );
        assert_eq!(
            plan_push(Some(&existing), Some("b"), b"2").unwrap(),
            PushPlan::Write(map(json!({"a": "1", "n": 5, "b": "2"})))
        );
        assert_eq!(
            plan_push(Some(&existing), Some("n"), b"6")
                .unwrap_err()
                .message(),
            "error converting n to string"
        );
        assert_eq!(
            plan_push(None, Some("a"), b"x").unwrap(),
            PushPlan::Write(map(json!({"a": "x"})))
        );
    }

    #[test]
    fn deleting_the_last_property_deletes_the_secret() {
        let data = map(json!({"a": "1", "b": "2"}));
        assert_eq!(
            plan_delete(data.clone(), Some("a"), true),
            Removal::Write(map(json!({"b": "2"})))
        );
        assert_eq!(plan_delete(data, None, true), Removal::Delete);
        let v1 = map(json!({"a": "1", CUSTOM_METADATA: marker()}));
        assert_eq!(plan_delete(v1, Some("a"), false), Removal::Delete);
        let single = map(json!({"a": "1"}));
        assert_eq!(plan_delete(single, Some("a"), true), Removal::Delete);
    }
}
