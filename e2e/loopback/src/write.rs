//! The write pipeline shared by create, update, patch and apply: system metadata, status
//! subresource rules, kind rules, schema pruning/defaulting/validation, generation,
//! managedFields, no-op detection, storage, and the hooks that follow a write.

use crate::apply;
use crate::errors::{ApiError, ApiResult, FieldError};
use crate::meta::{self, SYSTEM_FIELDS, metadata_mut};
use crate::resources::{ResourceInfo, Special};
use crate::state::{FieldValidation, GcWork, State, WriteOptions, Written};
use serde_json::{Value, json};
use std::sync::Arc;

/// How managedFields are maintained by a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Manage {
    /// Fields changed by the write become the manager's (operation `Update`).
    Update,
    /// Server-side apply already computed managedFields.
    Applied,
}

impl State {
    /// Creates an object (POST, or apply/patch of an absent object).
    pub(crate) fn create(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        object: Value,
        options: &WriteOptions,
    ) -> ApiResult<Written> {
        self.create_managed(info, namespace, object, options, Manage::Update)
    }

    pub(crate) fn create_managed(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        mut object: Value,
        options: &WriteOptions,
        manage: Manage,
    ) -> ApiResult<Written> {
        check_envelope(info, &mut object)?;
        let metadata = metadata_mut(&mut object);
        if info.namespaced {
            let namespace =
                namespace.ok_or_else(|| ApiError::bad_request("a namespace is required"))?;
            match metadata.get("namespace").and_then(Value::as_str) {
                Some(given) if !given.is_empty() && given != namespace => {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                _ => {
                    metadata.insert("namespace".into(), namespace.into());
                }
            }
        } else {
            metadata.remove("namespace");
        }
        let generate = metadata
            .get("generateName")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut name = metadata
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if name.is_empty() {
            match &generate {
                Some(prefix) => name = meta::generate_name(prefix),
                None => {
                    return Err(ApiError::invalid(
                        &info.group,
                        &info.kind,
                        "",
                        &[FieldError {
                            path: "metadata.name".into(),
                            kind: crate::errors::FieldErrorKind::Required,
                        }],
                    )
                    .with_message_suffix(": name or generateName is required"));
                }
            }
        }
        metadata.insert("name".into(), name.clone().into());
        let version = metadata
            .get("resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if manage == Manage::Update && !version.is_empty() {
            return Err(ApiError::internal(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        for field in SYSTEM_FIELDS.iter().chain(&["resourceVersion"]) {
            metadata.remove(*field);
        }
        metadata.insert("uid".into(), meta::new_uid().into());
        metadata.insert("creationTimestamp".into(), meta::now().into());
        if info.generation {
            metadata.insert("generation".into(), 1.into());
        }
        if info.namespaced {
            self.check_namespace_open(namespace.unwrap_or_default())?;
        }
        if info.status_subresource && info.custom {
            object.as_object_mut().map(|map| map.remove("status"));
        }
        let mut warnings = Vec::new();
        self.prepare(info, None, &mut object, options, &mut warnings)?;
        let key = State::key(info, namespace, &name);
        let resource = info.group_resource();
        if self.store.get(&resource, &key).is_some() {
            return Err(ApiError::already_exists(&info.group, &info.plural, &name));
        }
        if manage == Manage::Update {
            apply::record_update(
                None,
                &mut object,
                &options.manager(),
                &info.api_version(),
                options.subresource.as_deref(),
            );
        }
        if options.dry_run {
            return Ok(Written {
                object: Arc::new(object),
                warnings,
                created: true,
            });
        }
        let stored = self.store.put(&resource, info.namespaced, &key, object);
        self.after_write(info, None, &stored);
        self.drain_gc();
        Ok(Written {
            object: stored,
            warnings,
            created: true,
        })
    }

    /// Replaces an object (PUT), checking the resourceVersion precondition.
    pub(crate) fn update(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        options: &WriteOptions,
    ) -> ApiResult<Written> {
        let old = self.get(info, namespace, name)?;
        if let Some(given) = meta::meta_str(&object, "name")
            && given != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({given}) does not match the name on the URL ({name})"
            )));
        }
        self.commit(info, old, object, options, Manage::Update)
    }

    /// The common tail of update, patch and apply: `new` replaces `old`.
    pub(crate) fn commit(
        &mut self,
        info: &ResourceInfo,
        old: Arc<Value>,
        mut new: Value,
        options: &WriteOptions,
        manage: Manage,
    ) -> ApiResult<Written> {
        let name = meta::meta_str(&old, "name").unwrap_or_default().to_owned();
        check_envelope(info, &mut new)?;
        let old_version = meta::meta_str(&old, "resourceVersion").unwrap_or_default();
        match meta::meta_str(&new, "resourceVersion") {
            Some(given) if !given.is_empty() && given != old_version => {
                return Err(ApiError::stale(&info.group, &info.plural, &name));
            }
            _ => {}
        }
        if options.subresource.as_deref() == Some("status") {
            let status = new.get("status").cloned();
            let managed = new["metadata"]["managedFields"].clone();
            new = (*old).clone();
            new["metadata"]["managedFields"] = managed;
            set_or_remove(&mut new, "status", status);
        } else if info.status_subresource {
            set_or_remove(&mut new, "status", old.get("status").cloned());
        }
        let metadata = metadata_mut(&mut new);
        for field in SYSTEM_FIELDS
            .iter()
            .chain(&["name", "namespace", "resourceVersion"])
        {
            match old["metadata"].get(*field) {
                Some(value) => metadata.insert((*field).to_owned(), value.clone()),
                None => metadata.remove(*field),
            };
        }
        metadata.remove("generateName");
        if let Some(generate) = old["metadata"].get("generateName") {
            metadata.insert("generateName".into(), generate.clone());
        }
        if meta::is_deleting(&old) {
            let before = meta::finalizers(&old);
            let added: Vec<String> = meta::finalizers(&new)
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !added.is_empty() {
                return Err(ApiError::invalid(
                    &info.group,
                    &info.kind,
                    &name,
                    &[FieldError::forbidden(
                        "metadata.finalizers",
                        format!(
                            "no new finalizers can be added if the object is being deleted, found new finalizers {added:?}"
                        ),
                    )],
                ));
            }
        }
        let mut warnings = Vec::new();
        self.prepare(info, Some(&old), &mut new, options, &mut warnings)?;
        if info.generation && spec_changed(info, &old, &new) {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            new["metadata"]["generation"] = generation.into();
        }
        if manage == Manage::Update {
            apply::record_update(
                Some(&old),
                &mut new,
                &options.manager(),
                &info.api_version(),
                options.subresource.as_deref(),
            );
        }
        if unchanged(&old, &new) {
            return Ok(Written {
                object: old,
                warnings,
                created: false,
            });
        }
        if options.dry_run {
            return Ok(Written {
                object: Arc::new(new),
                warnings,
                created: false,
            });
        }
        let resource = info.group_resource();
        let key = State::key(info, meta::meta_str(&old, "namespace"), &name);
        if meta::is_deleting(&new) && meta::finalizers(&new).is_empty() {
            let last = self
                .remove_object(info, &key, Some(new))
                .expect("the object exists");
            self.drain_gc();
            return Ok(Written {
                object: last,
                warnings,
                created: false,
            });
        }
        let stored = self.store.put(&resource, info.namespaced, &key, new);
        self.after_write(info, Some(&old), &stored);
        self.drain_gc();
        Ok(Written {
            object: stored,
            warnings,
            created: false,
        })
    }

    /// Field pruning, kind rules, defaulting and validation of a create or update.
    fn prepare(
        &mut self,
        info: &ResourceInfo,
        old: Option<&Value>,
        object: &mut Value,
        options: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let mut unknown = Vec::new();
        if let Some(metadata) = object["metadata"].as_object_mut() {
            let extra: Vec<String> = metadata
                .keys()
                .filter(|key| !meta::OBJECT_META_FIELDS.contains(&key.as_str()))
                .cloned()
                .collect();
            for key in extra {
                metadata.remove(&key);
                unknown.push(format!("metadata.{key}"));
            }
        }
        if let Some(schema) = &info.schema {
            schema.prune(object, "", &mut unknown);
        } else if let Some(fields) = crate::resources::builtin_fields(info)
            && let Some(map) = object.as_object_mut()
        {
            let extra: Vec<String> = map
                .keys()
                .filter(|key| !fields.contains(&key.as_str()))
                .cloned()
                .collect();
            for key in extra {
                map.remove(&key);
                unknown.push(key);
            }
        }
        unknown.sort();
        match options.field_validation {
            FieldValidation::Strict if !unknown.is_empty() => {
                let list: Vec<String> = unknown
                    .iter()
                    .map(|path| format!("unknown field {path:?}"))
                    .collect();
                let strict = format!("strict decoding error: {}", list.join(", "));
                return Err(match &options.patched {
                    Some(patched) => ApiError::invalid_patch_value(patched, strict),
                    None => ApiError::bad_request(format!(
                        "{kind} in version {version:?} cannot be handled as a {kind}: {strict}",
                        kind = info.kind,
                        version = info.version
                    )),
                });
            }
            FieldValidation::Warn => {
                warnings.extend(unknown.iter().map(|path| format!("unknown field {path:?}")))
            }
            _ => {}
        }
        let mut errors = Vec::new();
        let name = meta::meta_str(object, "name")
            .unwrap_or_default()
            .to_owned();
        let invalid_name = if info.group == "rbac.authorization.k8s.io" {
            meta::validate_path_segment_name(&name)
        } else {
            meta::validate_name(&name, info.special == Special::Namespace)
        };
        if old.is_none()
            && let Some(error) = invalid_name
        {
            errors.push(error);
        }
        self.kind_rules(info, old, object, &mut errors)?;
        if let Some(schema) = &info.schema {
            schema.apply_defaults(object);
            crate::validation::validate(schema, object, "", &mut errors);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(&info.group, &info.kind, &name, &errors))
        }
    }

    /// Hooks after an object was stored.
    fn after_write(&mut self, info: &ResourceInfo, old: Option<&Value>, stored: &Arc<Value>) {
        match info.special {
            Special::Namespace if old.is_none() => self.populate_namespace(stored),
            Special::CustomResourceDefinition => self.establish(stored),
            _ => {}
        }
        let uid = meta::meta_str(stored, "uid").unwrap_or_default().to_owned();
        if meta::is_deleting(stored) {
            self.gc_queue.push(GcWork::Owner(uid));
            if info.special == Special::Namespace {
                let name = meta::meta_str(stored, "name")
                    .unwrap_or_default()
                    .to_owned();
                self.gc_queue.push(GcWork::Namespace(name));
            }
        }
        let owners =
            |object: Option<&Value>| object.map(|o| o["metadata"]["ownerReferences"].clone());
        if stored["metadata"]["ownerReferences"].is_array() && owners(old) != owners(Some(stored)) {
            let key = State::key(
                info,
                meta::meta_str(stored, "namespace"),
                meta::meta_str(stored, "name").unwrap_or_default(),
            );
            self.gc_queue
                .push(GcWork::Dependent(info.group_resource(), key));
        }
    }
}

/// Checks `apiVersion`/`kind` of a request body against the URL, and fills them in.
fn check_envelope(info: &ResourceInfo, object: &mut Value) -> ApiResult<()> {
    let Some(map) = object.as_object_mut() else {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    };
    let api_version = info.api_version();
    if let Some(kind) = map.get("kind").and_then(Value::as_str)
        && !kind.is_empty()
        && kind != info.kind
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({}) does not match the expected API version ({api_version}) or kind {kind:?} is not {:?}",
            map.get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            info.kind
        )));
    }
    if let Some(given) = map.get("apiVersion").and_then(Value::as_str)
        && !given.is_empty()
        && given.split('/').next() != api_version.split('/').next()
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({given}) does not match the expected API version ({api_version})"
        )));
    }
    map.insert("apiVersion".into(), api_version.into());
    map.insert("kind".into(), info.kind.clone().into());
    Ok(())
}

fn set_or_remove(object: &mut Value, field: &str, value: Option<Value>) {
    if let Some(map) = object.as_object_mut() {
        match value {
            Some(value) => map.insert(field.to_owned(), value),
            None => map.remove(field),
        };
    }
}

/// Whether anything outside metadata (and status, with a status subresource) changed.
fn spec_changed(info: &ResourceInfo, old: &Value, new: &Value) -> bool {
    let strip = |object: &Value| {
        let mut object = object.clone();
        if let Some(map) = object.as_object_mut() {
            map.remove("metadata");
            map.remove("apiVersion");
            map.remove("kind");
            if info.status_subresource {
                map.remove("status");
            }
        }
        object
    };
    strip(old) != strip(new) || (meta::is_deleting(new) && !meta::is_deleting(old))
}

/// Whether a write changes nothing but resourceVersion and managedFields timestamps.
fn unchanged(old: &Value, new: &Value) -> bool {
    let strip = |object: &Value| {
        let mut object = object.clone();
        if let Some(metadata) = object["metadata"].as_object_mut() {
            metadata.remove("resourceVersion");
            if let Some(entries) = metadata
                .get_mut("managedFields")
                .and_then(Value::as_array_mut)
            {
                for entry in entries {
                    entry.as_object_mut().map(|entry| entry.remove("time"));
                }
            }
        }
        object
    };
    strip(old) == strip(new)
}

impl ApiError {
    fn with_message_suffix(mut self, suffix: &str) -> Self {
        self.message.push_str(suffix);
        if let Some(cause) = self.details.as_mut().and_then(|d| d["causes"].get_mut(0)) {
            cause["message"] = json!(format!("Required value{suffix}"));
        }
        self
    }
}
