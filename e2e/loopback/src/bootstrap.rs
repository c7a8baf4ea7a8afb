//! The part of kube-apiserver's bootstrap RBAC policy (`kubernetes.io/bootstrapping:
//! rbac-defaults`) that ServiceAccount requests meet in tests, stored at start as a cluster
//! stores it: `system:discovery` and `system:basic-user` bound to every authenticated user
//! (discovery and OpenAPI documents; self reviews), and the unbound `system:auth-delegator`
//! that token reviewers are given. Everything else is granted only by what tests create.

use serde_json::{Value, json};

use crate::state::{State, WriteOptions};

const RBAC: &str = "rbac.authorization.k8s.io";

/// Non-resource URLs `system:discovery` grants `get` on.
const DISCOVERY_URLS: &[&str] = &[
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
];

/// One `create` rule on `resources` of `group`.
fn create(group: &str, resources: &[&str]) -> Value {
    json!({"apiGroups": [group], "resources": resources, "verbs": ["create"]})
}

impl State {
    /// Stores the bootstrap ClusterRoles and ClusterRoleBindings this server models.
    pub(crate) fn store_bootstrap_policy(&mut self) {
        let everyone = Some("system:authenticated");
        let policy = [
            (
                "system:discovery",
                vec![json!({"nonResourceURLs": DISCOVERY_URLS, "verbs": ["get"]})],
                everyone,
            ),
            (
                "system:basic-user",
                vec![
                    create(
                        "authorization.k8s.io",
                        &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    ),
                    create("authentication.k8s.io", &["selfsubjectreviews"]),
                ],
                everyone,
            ),
            (
                "system:auth-delegator",
                vec![
                    create("authentication.k8s.io", &["tokenreviews"]),
                    create("authorization.k8s.io", &["subjectaccessreviews"]),
                ],
                None,
            ),
        ];
        for (name, rules, group) in policy {
            self.store_bootstrap(
                "clusterroles",
                json!({"metadata": {"name": name}, "rules": rules}),
            );
            if let Some(group) = group {
                self.store_bootstrap(
                    "clusterrolebindings",
                    json!({"metadata": {"name": name},
                        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
                        "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": group}]}),
                );
            }
        }
    }

    fn store_bootstrap(&mut self, plural: &str, mut object: Value) {
        let info = self
            .registry
            .get(RBAC, "v1", plural)
            .expect("RBAC kinds are built in");
        object["apiVersion"] = json!(format!("{RBAC}/v1"));
        object["kind"] = json!(info.kind);
        object["metadata"]["labels"] = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
        self.create(&info, None, object, &WriteOptions::internal())
            .expect("storing the bootstrap RBAC policy");
    }
}
