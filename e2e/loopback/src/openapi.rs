//! A minimal OpenAPI v3 (`/openapi/v3` and `/openapi/v3/<group-version>`): one PATCH
//! operation per resource, tagged with its group/version/kind and the `fieldValidation`
//! parameter. That is what kubectl checks before relying on server-side field validation;
//! no schemas are published (`kubectl explain` finds nothing).

use crate::resources::Registry;
use serde_json::{Map, Value, json};
use std::hash::{Hash, Hasher};

/// `/openapi/v3`: where each group-version's document is.
pub(crate) fn index(registry: &Registry) -> Value {
    let mut paths = Map::new();
    for (group, versions) in registry.groups() {
        for version in versions {
            let path = group_version_path(group, version);
            let hash = document_hash(&document(registry, group, version).unwrap_or_default());
            paths.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}),
            );
        }
    }
    json!({"paths": paths})
}

fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn document_hash(document: &Value) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    document.to_string().hash(&mut hasher);
    format!("{:016X}", hasher.finish())
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>`, if served.
pub(crate) fn document(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    if !registry.has_group_version(group, version) {
        return None;
    }
    let prefix = format!("/{}", group_version_path(group, version));
    let mut paths = Map::new();
    for info in registry.resources_of(group, version) {
        let path = if info.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", info.plural)
        } else {
            format!("{prefix}/{}/{{name}}", info.plural)
        };
        let parameter = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        paths.insert(
            path,
            json!({"patch": {
                "operationId": format!("patch{}", info.kind),
                "parameters": [parameter("dryRun"), parameter("fieldManager"), parameter("fieldValidation"), parameter("force")],
                "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": {"group": info.group, "version": info.version, "kind": info.kind},
            }}),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0-loopback"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
