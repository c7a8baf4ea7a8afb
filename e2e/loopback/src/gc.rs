//! Deletion: finalizers and deletionTimestamp, propagation policies (Orphan, Background,
//! Foreground with blockOwnerDeletion), garbage collection of dependents through
//! ownerReferences, and namespace termination. Collection runs synchronously at the end of
//! the write that caused it, so dependents are gone by the time the next request is served
//! (a real cluster takes a moment: portable tests poll).

use crate::errors::{ApiError, ApiResult};
use crate::meta;
use crate::resources::{GroupResource, ResourceInfo, Special};
use crate::state::{GcWork, State, WriteOptions};
use crate::store::object_key;
use crate::write::Manage;
use serde_json::Value;
use std::sync::Arc;

/// `propagationPolicy` of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Propagation {
    Orphan,
    Background,
    Foreground,
}

/// DeleteOptions, from the body or the query.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeleteOptions {
    pub propagation: Option<Propagation>,
    pub precondition_uid: Option<String>,
    pub precondition_resource_version: Option<String>,
    pub dry_run: bool,
}

impl DeleteOptions {
    /// Reads a `DeleteOptions` JSON body (fields absent from it keep their value).
    pub(crate) fn merge_body(&mut self, body: &Value) -> ApiResult<()> {
        if let Some(policy) = body["propagationPolicy"].as_str() {
            self.propagation = Some(parse_propagation(policy)?);
        }
        if let Some(orphan) = body["orphanDependents"].as_bool() {
            self.propagation = Some(if orphan {
                Propagation::Orphan
            } else {
                Propagation::Background
            });
        }
        if let Some(uid) = body["preconditions"]["uid"].as_str() {
            self.precondition_uid = Some(uid.to_owned());
        }
        if let Some(version) = body["preconditions"]["resourceVersion"].as_str() {
            self.precondition_resource_version = Some(version.to_owned());
        }
        if body["dryRun"]
            .as_array()
            .is_some_and(|modes| modes.iter().any(|m| m == "All"))
        {
            self.dry_run = true;
        }
        Ok(())
    }
}

/// Parses a propagation policy name.
pub(crate) fn parse_propagation(policy: &str) -> ApiResult<Propagation> {
    match policy {
        "Orphan" => Ok(Propagation::Orphan),
        "Background" => Ok(Propagation::Background),
        "Foreground" => Ok(Propagation::Foreground),
        other => Err(ApiError::bad_request(format!(
            "unsupported propagation policy {other:?}"
        ))),
    }
}

impl State {
    /// Deletes an object; returns its state and whether it is gone (false while finalizers
    /// hold it).
    pub(crate) fn delete(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> ApiResult<(Arc<Value>, bool)> {
        let object = self.get(info, namespace, name)?;
        let uid = meta::meta_str(&object, "uid")
            .unwrap_or_default()
            .to_owned();
        if let Some(expected) = &options.precondition_uid
            && *expected != uid
        {
            return Err(ApiError::conflict(
                &info.group,
                &info.plural,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {expected}, UID in object meta: {uid}"
                ),
            ));
        }
        let version = meta::meta_str(&object, "resourceVersion").unwrap_or_default();
        if let Some(expected) = &options.precondition_resource_version
            && expected != version
        {
            return Err(ApiError::conflict(
                &info.group,
                &info.plural,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {expected}, ResourceVersion in object meta: {version}"
                ),
            ));
        }
        if options.dry_run {
            return Ok((object, false));
        }
        let key = State::key(info, namespace, name);
        let result = self.delete_key(info, &key, options.propagation);
        self.drain_gc();
        let gone = self.store.get(&info.group_resource(), &key).is_none();
        Ok((result, gone))
    }

    /// Deletes every object of a list request's selection.
    pub(crate) fn delete_collection(
        &mut self,
        info: &ResourceInfo,
        keys: Vec<String>,
        options: &DeleteOptions,
    ) -> Vec<Arc<Value>> {
        let mut deleted = Vec::new();
        for key in keys {
            if options.dry_run {
                deleted.extend(self.store.get(&info.group_resource(), &key));
            } else if self.store.get(&info.group_resource(), &key).is_some() {
                deleted.push(self.delete_key(info, &key, options.propagation));
            }
        }
        self.drain_gc();
        deleted
    }

    /// Deletes one stored object without draining the collector.
    fn delete_key(
        &mut self,
        info: &ResourceInfo,
        key: &str,
        propagation: Option<Propagation>,
    ) -> Arc<Value> {
        let resource = info.group_resource();
        let object = self
            .store
            .get(&resource, key)
            .expect("caller checked the object exists");
        if meta::is_deleting(&object) {
            return object;
        }
        let mut finalizers = meta::finalizers(&object);
        let extra = match propagation {
            Some(Propagation::Orphan) => Some("orphan"),
            Some(Propagation::Foreground) => Some("foregroundDeletion"),
            _ => None,
        };
        if let Some(extra) = extra
            && !finalizers.iter().any(|f| f == extra)
        {
            finalizers.push(extra.to_owned());
        }
        if finalizers.is_empty() && info.special != Special::Namespace {
            return self
                .remove_object(info, key, None)
                .expect("the object exists");
        }
        let mut deleting = (*object).clone();
        meta::set_finalizers(&mut deleting, &finalizers);
        let metadata = meta::metadata_mut(&mut deleting);
        metadata.insert("deletionTimestamp".into(), meta::now().into());
        metadata.insert("deletionGracePeriodSeconds".into(), 0.into());
        if info.generation {
            let generation = object["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            metadata.insert("generation".into(), generation.into());
        }
        if info.special == Special::Namespace {
            deleting["status"]["phase"] = "Terminating".into();
        }
        let stored = self.store.put(&resource, info.namespaced, key, deleting);
        let uid = meta::meta_str(&stored, "uid")
            .unwrap_or_default()
            .to_owned();
        self.gc_queue.push(GcWork::Owner(uid));
        if info.special == Special::Namespace {
            let name = meta::meta_str(&stored, "name")
                .unwrap_or_default()
                .to_owned();
            self.gc_queue.push(GcWork::Namespace(name));
        }
        stored
    }

    /// Removes a stored object now and queues what depends on it.
    pub(crate) fn remove_object(
        &mut self,
        info: &ResourceInfo,
        key: &str,
        last: Option<Value>,
    ) -> Option<Arc<Value>> {
        let removed = self.store.remove(&info.group_resource(), key, last)?;
        if info.special == Special::CustomResourceDefinition {
            self.retire(&removed);
        }
        if let Some(uid) = meta::meta_str(&removed, "uid") {
            self.gc_queue.push(GcWork::Owner(uid.to_owned()));
        }
        for reference in removed["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(owner) = reference["uid"].as_str() {
                self.gc_queue.push(GcWork::Owner(owner.to_owned()));
            }
        }
        if info.namespaced
            && let Some(namespace) = meta::meta_str(&removed, "namespace")
        {
            self.gc_queue.push(GcWork::Namespace(namespace.to_owned()));
        }
        Some(removed)
    }

    /// Performs one unit of garbage-collection work.
    pub(crate) fn collect(&mut self, work: GcWork) {
        match work {
            GcWork::Owner(uid) => self.collect_owner(&uid),
            GcWork::Dependent(resource, key) => self.collect_dependent(&resource, &key),
            GcWork::Namespace(name) => self.finish_namespace(&name),
        }
    }

    fn collect_owner(&mut self, uid: &str) {
        let Some((resource, key)) = self.store.locate_uid(uid).cloned() else {
            for (resource, key) in self.store.dependents_of(uid) {
                self.gc_queue.push(GcWork::Dependent(resource, key));
            }
            return;
        };
        let (Some(object), Some(info)) = (
            self.store.get(&resource, &key),
            self.registry.any_version(&resource),
        ) else {
            return;
        };
        if !meta::is_deleting(&object) {
            return;
        }
        let mut finalizers = meta::finalizers(&object);
        if finalizers.iter().any(|f| f == "orphan") {
            for dependent in self.store.dependents_of(uid) {
                self.edit_owner_references(&dependent, |reference| reference["uid"] != uid);
            }
            finalizers.retain(|f| f != "orphan");
        }
        if finalizers.iter().any(|f| f == "foregroundDeletion") {
            let mut blocking = 0;
            for (dependent_resource, dependent_key) in self.store.dependents_of(uid) {
                let (Some(dependent), Some(dependent_info)) = (
                    self.store.get(&dependent_resource, &dependent_key),
                    self.registry.any_version(&dependent_resource),
                ) else {
                    continue;
                };
                let blocks = dependent["metadata"]["ownerReferences"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true);
                if !meta::is_deleting(&dependent) {
                    self.delete_key(
                        &dependent_info,
                        &dependent_key,
                        Some(Propagation::Foreground),
                    );
                }
                if blocks
                    && self
                        .store
                        .get(&dependent_resource, &dependent_key)
                        .is_some()
                {
                    blocking += 1;
                }
            }
            if blocking == 0 {
                finalizers.retain(|f| f != "foregroundDeletion");
            }
        }
        if finalizers != meta::finalizers(&object) {
            let mut updated = (*object).clone();
            meta::set_finalizers(&mut updated, &finalizers);
            if let Err(error) = self.commit(
                &info,
                object,
                updated,
                &WriteOptions::internal(),
                Manage::Update,
            ) {
                tracing::warn!(%error.message, "garbage collector could not update finalizers");
            }
        }
    }

    fn collect_dependent(&mut self, resource: &GroupResource, key: &str) {
        let (Some(object), Some(info)) = (
            self.store.get(resource, key),
            self.registry.any_version(resource),
        ) else {
            return;
        };
        let references = object["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if references.is_empty() || meta::is_deleting(&object) {
            return;
        }
        let absent: Vec<&Value> = references
            .iter()
            .filter(|reference| {
                let served = self
                    .find_kind(
                        reference["apiVersion"].as_str().unwrap_or_default(),
                        reference["kind"].as_str().unwrap_or_default(),
                    )
                    .is_some();
                served
                    && self
                        .store
                        .locate_uid(reference["uid"].as_str().unwrap_or_default())
                        .is_none()
            })
            .collect();
        if absent.is_empty() {
            return;
        }
        if absent.len() == references.len() {
            self.delete_key(&info, key, Some(Propagation::Background));
        } else {
            let absent: Vec<Value> = absent.into_iter().map(|r| r["uid"].clone()).collect();
            self.edit_owner_references(&(resource.clone(), key.to_owned()), |r| {
                !absent.contains(&r["uid"])
            });
        }
    }

    fn edit_owner_references(
        &mut self,
        (resource, key): &(GroupResource, String),
        keep: impl Fn(&Value) -> bool,
    ) {
        let (Some(object), Some(info)) = (
            self.store.get(resource, key),
            self.registry.any_version(resource),
        ) else {
            return;
        };
        let mut updated = (*object).clone();
        let metadata = meta::metadata_mut(&mut updated);
        let kept: Vec<Value> = metadata
            .get("ownerReferences")
            .and_then(Value::as_array)
            .map(|refs| refs.iter().filter(|r| keep(r)).cloned().collect())
            .unwrap_or_default();
        if kept.is_empty() {
            metadata.remove("ownerReferences");
        } else {
            metadata.insert("ownerReferences".into(), Value::Array(kept));
        }
        if let Err(error) = self.commit(
            &info,
            object,
            updated,
            &WriteOptions::internal(),
            Manage::Update,
        ) {
            tracing::warn!(%error.message, "garbage collector could not update ownerReferences");
        }
    }

    /// Deletes the contents of a terminating namespace, and the namespace once empty.
    fn finish_namespace(&mut self, name: &str) {
        let namespaces = GroupResource {
            group: String::new(),
            resource: "namespaces".into(),
        };
        let namespace_key = object_key("", name);
        let Some(namespace) = self.store.get(&namespaces, &namespace_key) else {
            return;
        };
        if !meta::is_deleting(&namespace) {
            return;
        }
        let mut remaining = 0usize;
        for (resource, namespaced) in self.store.resources() {
            if !namespaced {
                continue;
            }
            let Some(info) = self.registry.any_version(&resource) else {
                continue;
            };
            let keys: Vec<(String, bool)> = self
                .store
                .kind(&resource)
                .map(|kind| {
                    kind.range(Some(name), None)
                        .map(|(k, o)| (k.clone(), meta::is_deleting(o)))
                        .collect()
                })
                .unwrap_or_default();
            for (key, deleting) in keys {
                if !deleting {
                    self.delete_key(&info, &key, Some(Propagation::Background));
                }
                if self.store.get(&resource, &key).is_some() {
                    remaining += 1;
                }
            }
        }
        if remaining > 0 {
            return;
        }
        let mut finished = (*namespace).clone();
        finished["spec"]["finalizers"] = Value::Array(Vec::new());
        if meta::finalizers(&finished).is_empty() {
            if let Some(info) = self.registry.get("", "v1", "namespaces") {
                self.remove_object(&info, &namespace_key, Some(finished));
            }
        } else if finished != *namespace {
            self.store.put(&namespaces, false, &namespace_key, finished);
        }
    }
}

impl State {
    /// PUT `namespaces/<name>/finalize`: replaces `spec.finalizers`.
    pub(crate) fn finalize_namespace(
        &mut self,
        info: &ResourceInfo,
        name: &str,
        body: &Value,
    ) -> ApiResult<crate::state::Written> {
        let old = self.get(info, None, name)?;
        let mut finalized = (*old).clone();
        finalized["spec"]["finalizers"] = body["spec"]["finalizers"]
            .as_array()
            .cloned()
            .map_or(Value::Array(Vec::new()), Value::Array);
        let key = object_key("", name);
        let stored = self
            .store
            .put(&info.group_resource(), false, &key, finalized);
        if meta::is_deleting(&stored) {
            self.gc_queue.push(GcWork::Namespace(name.to_owned()));
            self.drain_gc();
        }
        let object = self
            .store
            .get(&info.group_resource(), &key)
            .unwrap_or(stored);
        Ok(crate::state::Written {
            object,
            warnings: Vec::new(),
            created: false,
        })
    }
}
