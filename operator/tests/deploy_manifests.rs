//! The operator's own manifests (`manifests/deploy/operator.yaml`) grant what the controller
//! needs and no more: every kind it writes with apply (`create`, `patch`) and watches
//! (`get`, `list`, `watch`), `delete` exactly on the kinds it prunes, nothing on anything else.

use std::collections::BTreeSet;

use external_secrets_operator::kinds::KINDS;
use serde::Deserialize;
use serde_json::Value;

fn cluster_role() -> Value {
    let text = include_str!("../manifests/deploy/operator.yaml");
    serde_yaml::Deserializer::from_str(text)
        .map(|document| Value::deserialize(document).expect("YAML"))
        .find(|object| object["kind"] == "ClusterRole")
        .expect("a ClusterRole")
}

/// The verbs granted on `group`/`resource`.
fn verbs(role: &Value, group: &str, resource: &str) -> BTreeSet<String> {
    let list = |rule: &Value, key: &str| -> Vec<String> {
        serde_json::from_value(rule[key].clone()).unwrap_or_default()
    };
    role["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter(|rule| {
            list(rule, "apiGroups").iter().any(|g| g == group)
                && list(rule, "resources").iter().any(|r| r == resource)
        })
        .flat_map(|rule| list(rule, "verbs"))
        .collect()
}

#[test]
fn cluster_role_covers_the_managed_kinds_least_privilege() {
    let role = cluster_role();
    for kind in KINDS {
        let granted = verbs(&role, kind.group, kind.plural);
        for verb in ["get", "list", "watch", "create", "patch"] {
            assert!(granted.contains(verb), "{verb} on {}", kind.plural);
        }
        assert_eq!(
            granted.contains("delete"),
            kind.pruned,
            "delete on {} exactly when pruned",
            kind.plural
        );
        assert!(
            !granted.contains("*") && !granted.contains("update"),
            "no wildcard and no full update on {}",
            kind.plural
        );
    }
    // Nothing beyond the managed kinds and its own API.
    let known: BTreeSet<&str> = KINDS.iter().map(|kind| kind.plural).collect();
    for rule in role["rules"].as_array().expect("rules") {
        for resource in rule["resources"].as_array().expect("resources") {
            let resource = resource.as_str().unwrap_or("");
            assert!(
                known.contains(resource) || rule["apiGroups"][0] == "operator.openshift.io",
                "unexpected grant on {resource}"
            );
        }
    }
}
