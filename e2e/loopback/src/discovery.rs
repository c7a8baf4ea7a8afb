//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>` and
//! `/apis/<group>/<version>`, built from the registry, plus aggregated discovery
//! (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList` at `/api` and `/apis`) for clients that
//! ask for it in `Accept`.

use crate::resources::{Registry, ResourceInfo, Special};
use serde_json::{Value, json};

/// The Kubernetes version the server claims to be (that of the API types it mirrors).
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "gitVersion": "v1.33.0-loopback",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`.
pub(crate) fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_document(name: &str, versions: &[String]) -> Value {
    let entries: Vec<Value> = versions
        .iter()
        .map(|version| json!({"groupVersion": format!("{name}/{version}"), "version": version}))
        .collect();
    json!({
        "name": name,
        "versions": entries,
        "preferredVersion": entries.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis`.
pub(crate) fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, versions)| group_document(name, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`, if served.
pub(crate) fn group(registry: &Registry, name: &str) -> Option<Value> {
    let versions = registry.groups().get(name).filter(|_| !name.is_empty())?;
    let mut document = group_document(name, versions);
    document["kind"] = "APIGroup".into();
    document["apiVersion"] = "v1".into();
    Some(document)
}

/// `/api/v1` or `/apis/<group>/<version>`, if served.
pub(crate) fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    if !registry.has_group_version(group, version) {
        return None;
    }
    let mut resources = Vec::new();
    for info in registry.resources_of(group, version) {
        resources.push(resource(&info));
        if info.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", info.plural),
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        match info.special {
            Special::ServiceAccount => resources.push(json!({
                "name": "serviceaccounts/token",
                "singularName": "",
                "namespaced": true,
                "group": "authentication.k8s.io",
                "version": "v1",
                "kind": "TokenRequest",
                "verbs": ["create"],
            })),
            Special::Namespace => resources.push(json!({
                "name": "namespaces/finalize",
                "singularName": "",
                "namespaced": false,
                "kind": "Namespace",
                "verbs": ["update"],
            })),
            _ => {}
        }
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

/// The media type of aggregated discovery responses.
pub(crate) const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an `Accept` header prefers aggregated discovery.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=APIGroupDiscoveryList"))
}

/// Aggregated discovery of the core group (`/api`) or of all other groups (`/apis`).
pub(crate) fn aggregated(registry: &Registry, core: bool) -> Value {
    let mut items = Vec::new();
    for (group, versions) in registry.groups() {
        if group.is_empty() != core {
            continue;
        }
        let versions: Vec<Value> = versions
            .iter()
            .map(|version| {
                let resources: Vec<Value> = registry
                    .resources_of(group, version)
                    .iter()
                    .map(|info| aggregated_resource(info))
                    .collect();
                json!({"version": version, "resources": resources, "freshness": "Current"})
            })
            .collect();
        let metadata = if core {
            json!({"creationTimestamp": null})
        } else {
            json!({"name": group, "creationTimestamp": null})
        };
        items.push(json!({"metadata": metadata, "versions": versions}));
    }
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}

fn aggregated_resource(info: &ResourceInfo) -> Value {
    let kind = |group: &str, version: &str, kind: &str| json!({"group": group, "version": version, "kind": kind});
    let own_kind = kind(&info.group, &info.version, &info.kind);
    let mut subresources = Vec::new();
    if info.status_subresource {
        subresources.push(json!({"subresource": "status", "responseKind": own_kind, "verbs": ["get", "patch", "update"]}));
    }
    match info.special {
        Special::ServiceAccount => subresources.push(json!({
            "subresource": "token",
            "responseKind": kind("authentication.k8s.io", "v1", "TokenRequest"),
            "verbs": ["create"],
        })),
        Special::Namespace => {
            subresources.push(
                json!({"subresource": "finalize", "responseKind": own_kind, "verbs": ["update"]}),
            );
        }
        _ => {}
    }
    let mut document = json!({
        "resource": info.plural,
        "responseKind": own_kind,
        "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": info.singular,
        "verbs": info.verbs(),
    });
    if !info.short_names.is_empty() {
        document["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        document["categories"] = json!(info.categories);
    }
    if !subresources.is_empty() {
        document["subresources"] = json!(subresources);
    }
    document
}

fn resource(info: &ResourceInfo) -> Value {
    let mut document = json!({
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": info.verbs(),
    });
    if !info.short_names.is_empty() {
        document["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        document["categories"] = json!(info.categories);
    }
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_resources_include_subresources() {
        let registry = Registry::with_builtins();
        let list = resource_list(&registry, "", "v1").unwrap();
        let names: Vec<&str> = list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"secrets"));
        assert!(names.contains(&"serviceaccounts/token"));
        assert!(names.contains(&"namespaces/status"));
        assert!(resource_list(&registry, "", "v2").is_none());
        let groups = group_list(&registry);
        assert!(
            groups["groups"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g["name"] == "coordination.k8s.io")
        );
    }
}
