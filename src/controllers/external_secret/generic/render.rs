//! The desired state of a generic target, built as upstream's `applyTemplateToManifest`
//! builds it: the existing object (Merge, CreateOrMerge) or a new one of the manifest's kind;
//! labels and annotations copied from `template.metadata` (else from the ExternalSecret);
//! without a template the data goes to a ConfigMap's `data` or another kind's `spec.data`;
//! with one, each `templateFrom` entry renders its literal, then its ConfigMap and Secret items,
//! into its target path, then `template.data` renders into `data`. The data-hash annotation
//! covers `spec` (else `data`), as upstream's does.
//!
//! One deliberate difference: upstream renders ConfigMap and Secret items into a scratch
//! Secret and then runs the results through the template engine a second time, which loses
//! every item whose target is not `Data` and re-interprets delimiters inside rendered values.
//! Here the rendered items go to their target once.

use external_secrets_crds::v1::{
    ExternalSecret, ExternalSecretCreationPolicy, ExternalSecretTemplate, ManifestReference,
};
use external_secrets_providers::request::DecodingStrategy;
use external_secrets_template::yaml_to_json;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Resource, ResourceExt};
use serde_json::{Map, Value, json};

use super::GenericError;
use super::candidate;
use super::path::{self, Step};
use crate::controllers::external_secret::target::{
    ANNOTATION_DATA_HASH, LABEL_MANAGED, LABEL_OWNER, other_external_secret_owner, target_name,
};
use crate::controllers::hash::{owner_label, value_hash};
use crate::controllers::template::{
    SecretData, TemplateSources, execute, render_map, source_items,
};

/// Where `templateFrom` entries without a target, and `template.data`, render to.
const DATA: &str = "Data";

/// The object to write for `es`: `base` (the existing object, for Merge and CreateOrMerge)
/// or a new one of `manifest`'s kind, with `data` applied.
pub fn desired(
    es: &ExternalSecret,
    manifest: &ManifestReference,
    data: &SecretData,
    base: Option<&Value>,
    sources: &TemplateSources,
) -> Result<Value, GenericError> {
    let mut object = match base {
        Some(base) => {
            let mut object = base.clone();
            if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("managedFields");
            }
            object
        }
        None => new_object(es, manifest),
    };
    let template = es.spec.target.template.as_ref();
    let (labels, annotations) = match template {
        Some(template) => template
            .metadata
            .as_ref()
            .map(|m| (m.labels.clone(), m.annotations.clone()))
            .unwrap_or_default(),
        None => (es.labels().clone(), es.annotations().clone()),
    };
    for (key, value) in labels {
        set_string(&mut object, &["metadata", "labels"], key, value)?;
    }
    for (key, value) in annotations {
        set_string(&mut object, &["metadata", "annotations"], key, value)?;
    }
    set_string(
        &mut object,
        &["metadata", "labels"],
        LABEL_MANAGED.to_owned(),
        "true".to_owned(),
    )?;
    match template {
        None => place_plain_data(&mut object, &manifest.kind, data),
        Some(template) => render_template(template, data, sources, &mut object)?,
    }
    let hash = value_hash(content(&object)?);
    set_string(
        &mut object,
        &["metadata", "annotations"],
        ANNOTATION_DATA_HASH.to_owned(),
        hash,
    )?;
    apply_ownership(es, &mut object)?;
    candidate::refuse_token_secret(&object)?;
    Ok(object)
}

/// Upstream's `isGenericTargetValid`: the existing target carries the managed label and its
/// content still hashes to the annotation we wrote. Orphaned targets are never repaired; a
/// target without content is rewritten (upstream retries forever on it).
pub fn is_valid(existing: Option<&Value>, es: &ExternalSecret) -> bool {
    if es.spec.target.creation_policy == ExternalSecretCreationPolicy::Orphan {
        return true;
    }
    let Some(existing) = existing else {
        return false;
    };
    let metadata = &existing["metadata"];
    let recorded = metadata["annotations"][ANNOTATION_DATA_HASH].as_str();
    metadata["labels"][LABEL_MANAGED].as_str() == Some("true")
        && content(existing).is_ok_and(|content| recorded == Some(value_hash(content).as_str()))
}

/// Whether `existing` already is `desired`, so nothing is written. A merge (`desired` built
/// from `existing`) must match whole; a replacement must match in labels, annotations,
/// owner references and every top-level field it sets.
pub fn is_up_to_date(existing: &Value, desired: &Value, merge: bool) -> bool {
    let mut existing = existing.clone();
    if let Some(metadata) = existing["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    if merge {
        return existing == *desired;
    }
    let metadata_matches = ["labels", "annotations", "ownerReferences"]
        .iter()
        .all(|field| {
            let empty = |value: &Value| {
                value.is_null()
                    || value.as_object().is_some_and(Map::is_empty)
                    || value.as_array().is_some_and(Vec::is_empty)
            };
            let (ours, theirs) = (&desired["metadata"][field], &existing["metadata"][field]);
            ours == theirs || (empty(ours) && empty(theirs))
        });
    let content_matches = desired
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(field, _)| field.as_str() != "metadata")
        .all(|(field, value)| existing[field] == *value);
    metadata_matches && content_matches
}

/// What the data hash covers: `spec`, else `data`.
fn content(object: &Value) -> Result<&Value, GenericError> {
    [&object["spec"], &object["data"]]
        .into_iter()
        .find(|value| !value.is_null())
        .ok_or(GenericError::NoContent)
}

fn new_object(es: &ExternalSecret, manifest: &ManifestReference) -> Value {
    let mut object = json!({
        "apiVersion": manifest.api_version,
        "kind": manifest.kind,
        "metadata": {"name": target_name(es), "namespace": es.namespace()},
    });
    let content = match manifest.kind.as_str() {
        "ConfigMap" | "Secret" => "data",
        _ => "spec",
    };
    object[content] = json!({});
    object
}

/// Without a template: the data as strings in a ConfigMap's `data`, else in `spec.data`.
fn place_plain_data(object: &mut Value, kind: &str, data: &SecretData) {
    let strings: Map<String, Value> = data
        .iter()
        .map(|(key, value)| (key.clone(), Value::String(text(value))))
        .collect();
    if kind == "ConfigMap" {
        object["data"] = Value::Object(strings);
    } else {
        if !object["spec"].is_object() {
            object["spec"] = json!({});
        }
        object["spec"]["data"] = Value::Object(strings);
    }
}

fn render_template(
    template: &ExternalSecretTemplate,
    data: &SecretData,
    sources: &TemplateSources,
    object: &mut Value,
) -> Result<(), GenericError> {
    for (index, from) in template.template_from.iter().enumerate() {
        let target = if from.target.is_empty() {
            DATA
        } else {
            from.target.as_str()
        };
        let strategy = DecodingStrategy::from(from.values_decoding_strategy);
        if let Some(literal) = &from.literal {
            let name = format!("templateFrom[{index}].literal");
            apply_keys_and_values(&name, literal, data, target, strategy, object)?;
        }
        for (key, value) in source_items(from, data, sources, strategy)? {
            apply_to_target(&key, &value, target, object)?;
        }
    }
    for (key, source) in &template.data {
        apply_to_target(key, &execute(key, source, data)?, DATA, object)?;
    }
    Ok(())
}

/// A `KeysAndValues` template: for `data`, `labels` and `annotations` a YAML map of strings
/// whose entries are set one by one; for any other path the parsed YAML document, which
/// replaces a top-level field and is merged into a map at a nested path.
fn apply_keys_and_values(
    name: &str,
    source: &str,
    data: &SecretData,
    target: &str,
    strategy: DecodingStrategy,
    object: &mut Value,
) -> Result<(), GenericError> {
    if matches!(
        target.to_ascii_lowercase().as_str(),
        "data" | "labels" | "annotations"
    ) {
        for (key, value) in render_map(name, source, data, strategy)? {
            apply_to_target(&key, &value, target, object)?;
        }
        return Ok(());
    }
    let rendered = execute(name, source, data)?;
    let parsed = yaml_to_json(&text(&rendered)).map_err(GenericError::Yaml)?;
    let steps = path::parse(target)?;
    let whole_field = matches!(steps.as_slice(), [Step::Key(_)]);
    path::set(object, &steps, |existing| match (existing, parsed) {
        (Value::Object(mut existing), Value::Object(parsed)) if !whole_field => {
            existing.extend(parsed);
            Value::Object(existing)
        }
        (_, parsed) => parsed,
    })
    .map_err(|source| GenericError::SetPath {
        target: target.to_owned(),
        source,
    })
}

/// Sets one rendered value: as a string under `data`, `spec`, `labels` or `annotations`
/// (any case), or parsed as YAML (a string if it is not YAML) at a nested path.
fn apply_to_target(
    key: &str,
    value: &[u8],
    target: &str,
    object: &mut Value,
) -> Result<(), GenericError> {
    let value = text(value);
    let field: &[&str] = match target.to_ascii_lowercase().as_str() {
        "annotations" => &["metadata", "annotations"],
        "labels" => &["metadata", "labels"],
        "data" => &["data"],
        "spec" => &["spec"],
        _ => {
            let steps = path::parse(target)?;
            let parsed = yaml_to_json(&value).unwrap_or(Value::String(value));
            return path::set(object, &steps, |_| parsed).map_err(|source| GenericError::SetPath {
                target: target.to_owned(),
                source,
            });
        }
    };
    set_string(object, field, key.to_owned(), value).map_err(|source| GenericError::SetField {
        field: field.join("."),
        source: Box::new(source),
    })
}

/// Sets `key` to `value` in the map at `field`, creating the map if absent; a template may
/// have put something else there (`templateFrom` target `metadata`), which fails.
fn set_string(
    object: &mut Value,
    field: &[&str],
    key: String,
    value: String,
) -> Result<(), GenericError> {
    let not_a_map = || GenericError::NotAMap(field.join("."));
    let mut map = object.as_object_mut().ok_or_else(not_a_map)?;
    for name in field {
        let entry = map.entry(*name).or_insert(Value::Null);
        if entry.is_null() {
            *entry = json!({});
        }
        map = entry.as_object_mut().ok_or_else(not_a_map)?;
    }
    map.insert(key, Value::String(value));
    Ok(())
}

/// Upstream's `applyOwnership`: never take over another ExternalSecret's target; Owner sets
/// our controller reference and the `created-by` label, other policies drop both.
fn apply_ownership(es: &ExternalSecret, object: &mut Value) -> Result<(), GenericError> {
    let metadata = object
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| GenericError::NotAMap("metadata".to_owned()))?;
    let mut references: Vec<OwnerReference> = metadata
        .remove("ownerReferences")
        .and_then(|references| serde_json::from_value(references).ok())
        .unwrap_or_default();
    if let Some(owner) = other_external_secret_owner(&references, es) {
        return Err(GenericError::OwnedByAnother(owner));
    }
    let ours = |reference: &OwnerReference| {
        reference.kind == "ExternalSecret"
            && reference.api_version.starts_with("external-secrets.io/")
            && reference.name == es.name_any()
    };
    references.retain(|reference| !ours(reference));
    let owner = es.spec.target.creation_policy == ExternalSecretCreationPolicy::Owner;
    if owner {
        if let Some(other) = references.iter().find(|r| r.controller == Some(true)) {
            return Err(GenericError::OwnedByController {
                namespace: es.namespace().unwrap_or_default(),
                name: target_name(es),
                kind: other.kind.clone(),
                owner: other.name.clone(),
            });
        }
        // Without a uid (only when rendering offline) there is nothing to refer to.
        if let Some(mut reference) = es.controller_owner_ref(&()) {
            reference.block_owner_deletion = Some(true);
            references.push(reference);
        }
    }
    if !references.is_empty() {
        metadata.insert(
            "ownerReferences".to_owned(),
            serde_json::to_value(references).map_err(GenericError::Encode)?,
        );
    }
    if owner {
        let namespace = es.namespace().unwrap_or_default();
        let label = owner_label(&namespace, &es.name_any());
        set_string(
            object,
            &["metadata", "labels"],
            LABEL_OWNER.to_owned(),
            label,
        )?;
    } else if let Some(labels) = metadata.get_mut("labels").and_then(Value::as_object_mut) {
        labels.remove(LABEL_OWNER);
    }
    Ok(())
}

fn text(value: &[u8]) -> String {
    String::from_utf8_lossy(value).into_owned()
}

#[cfg(test)]
mod tests;
