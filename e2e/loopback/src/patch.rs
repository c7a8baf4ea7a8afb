//! PATCH: JSON merge patch, JSON patch, strategic merge patch (handled as a merge patch with
//! its `$patch`/`$retainKeys`/`$setElementOrder` directives dropped, lists replaced whole)
//! and server-side apply (see `apply.rs`).

use crate::apply::{self, ApplyRequest};
use crate::errors::{ApiError, ApiResult};
use crate::meta;
use crate::resources::ResourceInfo;
use crate::state::{State, WriteOptions, Written};
use crate::write::Manage;
use serde_json::Value;

/// The patch formats, by Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchKind {
    /// The patch kind of a Content-Type header, if it is one.
    pub(crate) fn from_content_type(content_type: &str) -> Option<Self> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        Some(match media {
            "application/merge-patch+json" => Self::Merge,
            "application/json-patch+json" => Self::Json,
            "application/strategic-merge-patch+json" => Self::Strategic,
            "application/apply-patch+yaml"
            | "application/apply-patch+json"
            | "application/apply-patch+cbor" => Self::Apply,
            _ => return None,
        })
    }
}

/// A decoded patch body.
pub(crate) struct PatchRequest {
    pub kind: PatchKind,
    pub body: Value,
    pub force: bool,
}

impl State {
    /// Patches (or, for apply, creates) an object.
    pub(crate) fn patch(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        request: &PatchRequest,
        options: &WriteOptions,
    ) -> ApiResult<Written> {
        let live = self
            .store
            .get(&info.group_resource(), &State::key(info, namespace, name));
        if request.kind == PatchKind::Apply {
            let manager = options.field_manager.clone().ok_or_else(|| {
                ApiError::bad_request(
                    "PATCH, application/apply-patch+yaml requires fieldManager to be set",
                )
            })?;
            if let Some(given) = meta::meta_str(&request.body, "name")
                && given != name
            {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({given}) does not match the name on the URL ({name})"
                )));
            }
            let applied = apply::apply(
                live.as_deref(),
                &ApplyRequest {
                    applied: &request.body,
                    manager: &manager,
                    force: request.force,
                    api_version: &info.api_version(),
                    subresource: options.subresource.as_deref(),
                    status_subresource: info.status_subresource,
                },
            )?;
            return match live {
                Some(live) => self.commit(info, live, applied, options, Manage::Applied),
                None if options.subresource.is_some() => {
                    Err(ApiError::not_found(&info.group, &info.plural, name))
                }
                None => {
                    let mut object = applied;
                    meta::metadata_mut(&mut object).insert("name".into(), name.into());
                    self.create_managed(info, namespace, object, options, Manage::Applied)
                }
            };
        }
        let live = live.ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
        let mut patched = (*live).clone();
        match request.kind {
            PatchKind::Merge => json_patch::merge(&mut patched, &request.body),
            PatchKind::Strategic => {
                json_patch::merge(&mut patched, &strip_directives(&request.body))
            }
            PatchKind::Json => {
                let operations: json_patch::Patch = serde_json::from_value(request.body.clone())
                    .map_err(|error| {
                        ApiError::bad_request(format!("invalid JSON patch: {error}"))
                    })?;
                apply_json_patch(&mut patched, operations).map_err(|error| {
                    ApiError::invalid_patch(format!(
                        "the server rejected our request due to an error in our request: {error}"
                    ))
                })?;
            }
            PatchKind::Apply => unreachable!("handled above"),
        }
        if !patched.is_object() {
            return Err(ApiError::bad_request(
                "the patched object is not a JSON object",
            ));
        }
        if meta::meta_str(&patched, "name") != Some(name) {
            return Err(ApiError::bad_request(
                "metadata.name cannot be changed by a patch",
            ));
        }
        let options = WriteOptions {
            patched: Some(patched.to_string()),
            ..options.clone()
        };
        self.commit(info, live, patched, &options, Manage::Update)
    }
}

impl ApiError {
    /// 422 for a JSON patch that cannot be applied (a failed `test`, a missing path).
    fn invalid_patch(message: String) -> Self {
        let mut error = ApiError::bad_request(message);
        error.code = 422;
        error.reason = "Invalid";
        error
    }
}

/// Removes strategic-merge-patch directives, leaving a plain merge patch.
/// Applies a JSON patch as kube-apiserver's library does: a `test` for `null` at a path
/// that does not exist passes (kube-rs's finalizer helper relies on it to add the first
/// finalizer). Works on the caller's copy, so a failure leaves the stored object unchanged.
fn apply_json_patch(
    document: &mut Value,
    operations: json_patch::Patch,
) -> Result<(), json_patch::PatchError> {
    for operation in operations.0 {
        if let json_patch::PatchOperation::Test(test) = &operation
            && test.value.is_null()
            && document.pointer(test.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(document, std::slice::from_ref(&operation))?;
    }
    Ok(())
}

fn strip_directives(patch: &Value) -> Value {
    match patch {
        Value::Object(map) => {
            if map.get("$patch").and_then(Value::as_str) == Some("delete") {
                return Value::Null;
            }
            Value::Object(
                map.iter()
                    .filter(|(key, _)| !key.starts_with('$'))
                    .map(|(key, value)| (key.clone(), strip_directives(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|item| item.get("$patch").is_none())
                .map(strip_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_directives_are_dropped() {
        let patch = json!({"$retainKeys": ["a"], "data": {"a": "1", "$setElementOrder/x": []}, "gone": {"$patch": "delete"}});
        assert_eq!(
            strip_directives(&patch),
            json!({"data": {"a": "1"}, "gone": null})
        );
    }

    #[test]
    fn testing_a_missing_path_for_null_passes_as_in_kube_apiserver() {
        let mut object = json!({"metadata": {"name": "a"}});
        let add_first_finalizer: json_patch::Patch = serde_json::from_value(json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["f"]},
        ]))
        .unwrap();
        apply_json_patch(&mut object, add_first_finalizer).unwrap();
        assert_eq!(object["metadata"]["finalizers"], json!(["f"]));
        let stale: json_patch::Patch = serde_json::from_value(json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
        ]))
        .unwrap();
        assert!(apply_json_patch(&mut object, stale).is_err());
    }

    #[test]
    fn content_types_map_to_patch_kinds() {
        assert_eq!(
            PatchKind::from_content_type("application/apply-patch+yaml"),
            Some(PatchKind::Apply)
        );
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchKind::Merge)
        );
        assert_eq!(PatchKind::from_content_type("application/json"), None);
    }
}
