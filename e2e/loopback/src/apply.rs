//! managedFields and server-side apply, approximated.
//!
//! Ownership is tracked per manager as a set of leaf paths: every scalar, list or empty map
//! under the object (lists are atomic: no `k:`/`v:` keys), plus `metadata.labels.*`,
//! `metadata.annotations.*`, `metadata.ownerReferences` and `metadata.finalizers`.
//! Updates give the changed leaves to their manager (operation `Update`) and take them from
//! everyone else. Apply conflicts when another manager owns an applied leaf (or its ancestor
//! or descendant) whose value the apply would change; `force` takes such fields over. Leaves
//! a manager applied before and no longer applies are removed unless someone else owns them.
//! Differences from kube-apiserver: no associative lists (`x-kubernetes-list-type: map`
//! lists are replaced whole), no `.` entries for owned maps, and explicit `null`s in an
//! applied configuration delete the field.

use crate::errors::{ApiError, ApiResult};
use crate::meta;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

type Path = Vec<String>;
type FieldSet = BTreeSet<Path>;

/// Which part of an object a write may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The main resource; `status` excluded when the kind has a status subresource.
    Main { exclude_status: bool },
    /// The `/status` subresource.
    Status,
}

impl Scope {
    fn of(subresource: Option<&str>, status_subresource: bool) -> Self {
        if subresource == Some("status") {
            Self::Status
        } else {
            Self::Main {
                exclude_status: status_subresource,
            }
        }
    }
}

/// One managedFields entry.
#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: String,
    subresource: Option<String>,
    fields: FieldSet,
}

impl Entry {
    fn is(&self, manager: &str, operation: &str, subresource: Option<&str>) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
    }

    fn owns_related(&self, path: &Path) -> Option<Path> {
        for length in 1..=path.len() {
            if self.fields.contains(&path[..length]) {
                return Some(path[..length].to_vec());
            }
        }
        self.fields
            .range(path.clone()..)
            .take_while(|q| q.starts_with(path))
            .next()
            .cloned()
    }
}

fn leaves(object: &Value, scope: Scope) -> FieldSet {
    let mut set = FieldSet::new();
    let Some(map) = object.as_object() else {
        return set;
    };
    for (key, value) in map {
        match (key.as_str(), scope) {
            ("apiVersion" | "kind", _) => {}
            ("metadata", Scope::Main { .. }) => {
                for field in ["labels", "annotations"] {
                    for name in value[field].as_object().into_iter().flat_map(Map::keys) {
                        set.insert(vec!["metadata".into(), field.into(), name.clone()]);
                    }
                }
                for field in ["ownerReferences", "finalizers"] {
                    if value.get(field).is_some() {
                        set.insert(vec!["metadata".into(), field.into()]);
                    }
                }
            }
            ("status", Scope::Status)
            | (
                "status",
                Scope::Main {
                    exclude_status: false,
                },
            ) => {
                walk(value, vec![key.clone()], &mut set);
            }
            (_, Scope::Main { .. }) if key != "metadata" && key != "status" => {
                walk(value, vec![key.clone()], &mut set)
            }
            _ => {}
        }
    }
    set
}

fn walk(value: &Value, path: Path, set: &mut FieldSet) {
    match value.as_object() {
        Some(map) if !map.is_empty() => {
            for (key, child) in map {
                let mut child_path = path.clone();
                child_path.push(key.clone());
                walk(child, child_path, set);
            }
        }
        _ => {
            set.insert(path);
        }
    }
}

fn value_at<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(object, |node, key| node.get(key))
}

/// Removes the leaf at `path`, then every map above it that the removal left empty: without
/// `.` entries, a map nobody applies any more goes with its last owned leaf, as kube-apiserver
/// removes an owned map entry (what the apply still names is merged back afterwards).
fn remove_path(object: &mut Value, path: &[String]) {
    for depth in (1..=path.len()).rev() {
        let (last, parents) = path[..depth].split_last().expect("depth >= 1");
        let parent = parents
            .iter()
            .try_fold(&mut *object, |node, key| node.get_mut(key));
        let Some(Value::Object(map)) = parent else {
            return;
        };
        let emptied = depth == path.len()
            || map
                .get(last)
                .is_some_and(|child| child.as_object().is_some_and(Map::is_empty));
        if !emptied {
            return;
        }
        map.remove(last);
    }
}

fn encode(fields: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in fields {
        let mut node = &mut root;
        for key in path {
            node = node
                .entry(format!("f:{key}"))
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("fieldsV1 nodes are objects");
        }
    }
    Value::Object(root)
}

fn decode(value: &Value, path: Path, set: &mut FieldSet) {
    let Some(map) = value.as_object() else {
        return;
    };
    if (map.is_empty() || map.keys().any(|key| !key.starts_with("f:"))) && !path.is_empty() {
        set.insert(path.clone());
    }
    for (key, child) in map {
        if let Some(name) = key.strip_prefix("f:") {
            let mut child_path = path.clone();
            child_path.push(name.to_owned());
            decode(child, child_path, set);
        }
    }
}

fn read_entries(object: &Value) -> Vec<Entry> {
    let text = |entry: &Value, key: &str| entry[key].as_str().unwrap_or_default().to_owned();
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| {
            let mut fields = FieldSet::new();
            decode(&entry["fieldsV1"], Vec::new(), &mut fields);
            Entry {
                manager: text(entry, "manager"),
                operation: text(entry, "operation"),
                api_version: text(entry, "apiVersion"),
                time: text(entry, "time"),
                subresource: entry["subresource"].as_str().map(str::to_owned),
                fields,
            }
        })
        .collect()
}

fn write_entries(object: &mut Value, entries: Vec<Entry>) {
    let list: Vec<Value> = entries
        .into_iter()
        .filter(|entry| !entry.fields.is_empty())
        .map(|entry| {
            let mut value = json!({
                "manager": entry.manager,
                "operation": entry.operation,
                "apiVersion": entry.api_version,
                "time": entry.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": encode(&entry.fields),
            });
            if let Some(subresource) = entry.subresource {
                value["subresource"] = subresource.into();
            }
            value
        })
        .collect();
    let metadata = meta::metadata_mut(object);
    if list.is_empty() {
        metadata.remove("managedFields");
    } else {
        metadata.insert("managedFields".into(), Value::Array(list));
    }
}

/// Gives the leaves an update changed to `manager` (operation `Update`).
pub(crate) fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
) {
    let reset = new["metadata"]["managedFields"]
        .as_array()
        .is_some_and(Vec::is_empty);
    let mut entries = match old {
        Some(old) if !reset => read_entries(old),
        _ => Vec::new(),
    };
    let scope = Scope::Main {
        exclude_status: false,
    };
    let new_leaves = leaves(new, scope);
    let changed: FieldSet = new_leaves
        .iter()
        .filter(|path| old.and_then(|old| value_at(old, path)) != value_at(new, path))
        .cloned()
        .collect();
    for entry in &mut entries {
        entry
            .fields
            .retain(|path| new_leaves.contains(path) && !changed.contains(path));
    }
    if !changed.is_empty() {
        match entries
            .iter_mut()
            .find(|entry| entry.is(manager, "Update", subresource))
        {
            Some(entry) => {
                entry.fields.extend(changed);
                entry.time = meta::now();
                entry.api_version = api_version.to_owned();
            }
            None => entries.push(Entry {
                manager: manager.to_owned(),
                operation: "Update".into(),
                api_version: api_version.to_owned(),
                time: meta::now(),
                subresource: subresource.map(str::to_owned),
                fields: changed,
            }),
        }
    }
    write_entries(new, entries);
}

/// A server-side apply request.
pub(crate) struct ApplyRequest<'a> {
    pub applied: &'a Value,
    pub manager: &'a str,
    pub force: bool,
    pub api_version: &'a str,
    pub subresource: Option<&'a str>,
    pub status_subresource: bool,
}

/// Computes the object after applying `request.applied` to `live` (absent for a create),
/// with its managedFields, or the conflict error.
pub(crate) fn apply(live: Option<&Value>, request: &ApplyRequest<'_>) -> ApiResult<Value> {
    let scope = Scope::of(request.subresource, request.status_subresource);
    let applied_leaves = leaves(request.applied, scope);
    let mut entries = live.map(read_entries).unwrap_or_default();
    let empty = json!({});
    let live_object = live.unwrap_or(&empty);
    let mut conflicts: Vec<(usize, Path)> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if entry.manager == request.manager {
            continue;
        }
        for path in &applied_leaves {
            if let Some(owned) = entry.owns_related(path)
                && value_at(live_object, path) != value_at(request.applied, path)
                && !conflicts.contains(&(index, owned.clone()))
            {
                conflicts.push((index, owned));
            }
        }
    }
    if !conflicts.is_empty() && !request.force {
        return Err(conflict_error(&entries, &conflicts));
    }
    for (index, path) in &conflicts {
        entries[*index].fields.remove(path);
    }
    let mut result = live.cloned().unwrap_or_else(|| json!({"metadata": {}}));
    let previous = entries
        .iter()
        .find(|entry| entry.is(request.manager, "Apply", request.subresource))
        .map(|entry| entry.fields.clone())
        .unwrap_or_default();
    for path in previous.difference(&applied_leaves) {
        let shared = entries.iter().any(|entry| {
            !entry.is(request.manager, "Apply", request.subresource)
                && entry.owns_related(path).is_some()
        });
        if !shared {
            remove_path(&mut result, path);
        }
    }
    merge_applied(&mut result, request.applied, scope);
    entries.retain(|entry| !entry.is(request.manager, "Apply", request.subresource));
    entries.push(Entry {
        manager: request.manager.to_owned(),
        operation: "Apply".into(),
        api_version: request.api_version.to_owned(),
        time: meta::now(),
        subresource: request.subresource.map(str::to_owned),
        fields: applied_leaves,
    });
    write_entries(&mut result, entries);
    Ok(result)
}

fn conflict_error(entries: &[Entry], conflicts: &[(usize, Path)]) -> ApiError {
    let manager = |index: usize| {
        let entry = &entries[index];
        let mut text = format!("{:?}", entry.manager);
        if let Some(subresource) = &entry.subresource {
            text.push_str(&format!(" with subresource {subresource:?}"));
        }
        if entry.operation == "Update" {
            text.push_str(&format!(" using {}", entry.api_version));
            if !entry.time.is_empty() {
                text.push_str(&format!(" at {}", entry.time));
            }
        }
        text
    };
    let render = |path: &Path| path.iter().map(|key| format!(".{key}")).collect::<String>();
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(index, path)| {
            json!({"type": "FieldManagerConflict", "message": format!("conflict with {}", manager(*index)), "field": render(path)})
        })
        .collect();
    let message = if let [(index, path)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            manager(*index),
            render(path)
        )
    } else {
        let mut by_manager: Vec<(String, Vec<String>)> = Vec::new();
        for (index, path) in conflicts {
            let name = manager(*index);
            match by_manager.iter_mut().find(|(n, _)| *n == name) {
                Some((_, paths)) => paths.push(render(path)),
                None => by_manager.push((name, vec![render(path)])),
            }
        }
        by_manager.sort();
        let lines: Vec<String> = by_manager
            .into_iter()
            .flat_map(|(name, paths)| {
                std::iter::once(format!("conflicts with {name}:"))
                    .chain(paths.into_iter().map(|p| format!("- {p}")))
            })
            .collect();
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError::apply_conflict(message, causes)
}

fn merge_applied(result: &mut Value, applied: &Value, scope: Scope) {
    let Some(map) = applied.as_object() else {
        return;
    };
    for (key, value) in map {
        match (key.as_str(), scope) {
            ("apiVersion" | "kind", _) => {
                result[key.as_str()] = value.clone();
            }
            ("metadata", Scope::Main { .. }) => {
                let metadata = meta::metadata_mut(result);
                for field in ["labels", "annotations"] {
                    if let Some(source) = value.get(field) {
                        deep_merge(metadata.entry(field).or_insert_with(|| json!({})), source);
                    }
                }
                for field in [
                    "ownerReferences",
                    "finalizers",
                    "resourceVersion",
                    "name",
                    "namespace",
                    "generateName",
                ] {
                    if let Some(source) = value.get(field) {
                        metadata.insert(field.into(), source.clone());
                    }
                }
            }
            ("status", Scope::Status)
            | (
                "status",
                Scope::Main {
                    exclude_status: false,
                },
            ) => {
                deep_merge(&mut result[key.as_str()], value);
            }
            (_, Scope::Main { .. }) if key != "metadata" && key != "status" => {
                deep_merge(&mut result[key.as_str()], value)
            }
            _ => {}
        }
    }
}

fn deep_merge(target: &mut Value, source: &Value) {
    match (target.as_object_mut(), source.as_object()) {
        (Some(target), Some(source)) => {
            for (key, value) in source {
                if value.is_null() {
                    target.remove(key);
                } else {
                    deep_merge(target.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        _ => *target = source.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(applied: &'a Value, manager: &'a str, force: bool) -> ApplyRequest<'a> {
        ApplyRequest {
            applied,
            manager,
            force,
            api_version: "v1",
            subresource: None,
            status_subresource: false,
        }
    }

    #[test]
    fn apply_conflicts_with_another_owner_unless_forced() {
        let first = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "1"}});
        let live = apply(None, &request(&first, "one", false)).unwrap();
        let second = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "2"}});
        let error = apply(Some(&live), &request(&second, "two", false)).unwrap_err();
        assert_eq!(error.code, 409);
        assert_eq!(
            error.message,
            "Apply failed with 1 conflict: conflict with \"one\": .data.k"
        );
        let forced = apply(Some(&live), &request(&second, "two", true)).unwrap();
        assert_eq!(forced["data"]["k"], "2");
        let managers: Vec<&str> = forced["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, vec!["two"]);
    }

    #[test]
    fn maps_emptied_by_dropped_fields_go_with_them() {
        let first = json!({"status": {"synced": {"store": {"/key": {"match": {"remoteRef": {"remoteKey": "/key"}}}}}, "other": "kept"}});
        let live = apply(None, &request(&first, "m", false)).unwrap();
        let second = json!({"status": {"synced": {}, "other": "kept"}});
        let result = apply(Some(&live), &request(&second, "m", false)).unwrap();
        assert_eq!(result["status"]["synced"], json!({}));
        assert_eq!(result["status"]["other"], "kept");
    }

    #[test]
    fn fields_dropped_from_an_apply_are_removed() {
        let first = json!({"data": {"a": "1", "b": "2"}});
        let live = apply(None, &request(&first, "one", false)).unwrap();
        let second = json!({"data": {"a": "1"}});
        let after = apply(Some(&live), &request(&second, "one", false)).unwrap();
        assert_eq!(after["data"], json!({"a": "1"}));
    }

    #[test]
    fn updates_take_ownership_of_changed_fields() {
        let first = json!({"data": {"a": "1"}});
        let live = apply(None, &request(&first, "one", false)).unwrap();
        let mut updated = live.clone();
        updated["data"]["a"] = "9".into();
        record_update(Some(&live), &mut updated, "editor", "v1", None);
        let entries = read_entries(&updated);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].manager, "editor");
        let same_value = json!({"data": {"a": "9"}});
        assert!(apply(Some(&updated), &request(&same_value, "one", false)).is_ok());
        let error = apply(Some(&updated), &request(&first, "one", false)).unwrap_err();
        assert!(
            error
                .message
                .starts_with("Apply failed with 1 conflict: conflict with \"editor\" using v1 at "),
            "{}",
            error.message
        );
    }
}
