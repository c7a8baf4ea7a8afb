//! Unit tests of `authz.rs`: request attributes as kube-apiserver derives them, and RBAC
//! decisions for ServiceAccount users from stored roles and bindings, including the cert
//! controller's Secret Role (CVE-2024-45041) and its negative controls.

use super::*;
use crate::state::WriteOptions;

fn resource(method: Method, path: &str, query: Option<&str>) -> (String, ResourceAttributes) {
    let attributes = attributes(&method, path, query);
    let resource = attributes
        .resource
        .unwrap_or_else(|| panic!("{path} is a resource request"));
    (attributes.verb, resource)
}

fn short(resource: &ResourceAttributes) -> [&str; 5] {
    [
        resource.group.as_str(),
        resource.namespace.as_str(),
        resource.resource.as_str(),
        resource.subresource.as_str(),
        resource.name.as_str(),
    ]
}

#[test]
fn verbs_follow_method_name_and_query() {
    let cases = [
        (Method::GET, "/api/v1/namespaces/n/secrets/s", None, "get"),
        (Method::GET, "/api/v1/namespaces/n/secrets", None, "list"),
        (
            Method::GET,
            "/api/v1/namespaces/n/secrets",
            Some("watch=true"),
            "watch",
        ),
        (
            Method::GET,
            "/api/v1/watch/namespaces/n/secrets",
            None,
            "watch",
        ),
        (Method::HEAD, "/api/v1/namespaces/n/secrets/s", None, "get"),
        (Method::POST, "/api/v1/namespaces/n/secrets", None, "create"),
        (
            Method::PUT,
            "/api/v1/namespaces/n/secrets/s",
            None,
            "update",
        ),
        (
            Method::PATCH,
            "/api/v1/namespaces/n/secrets/s",
            None,
            "patch",
        ),
        (
            Method::DELETE,
            "/api/v1/namespaces/n/secrets/s",
            None,
            "delete",
        ),
        (
            Method::DELETE,
            "/api/v1/namespaces/n/secrets",
            None,
            "deletecollection",
        ),
    ];
    for (method, path, query, verb) in cases {
        assert_eq!(resource(method, path, query).0, verb, "{path} {query:?}");
    }
}

#[test]
fn paths_map_to_group_namespace_resource_subresource_and_name() {
    let (_, secret) = resource(Method::GET, "/api/v1/namespaces/n/secrets/s", None);
    assert_eq!(short(&secret), ["", "n", "secrets", "", "s"]);
    assert_eq!(secret.version, "v1");
    let (_, status) = resource(
        Method::PUT,
        "/apis/external-secrets.io/v1/namespaces/n/externalsecrets/e/status",
        None,
    );
    assert_eq!(
        short(&status),
        ["external-secrets.io", "n", "externalsecrets", "status", "e"]
    );
    let (_, crds) = resource(
        Method::GET,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/c",
        None,
    );
    assert_eq!(
        short(&crds),
        [
            "apiextensions.k8s.io",
            "",
            "customresourcedefinitions",
            "",
            "c"
        ]
    );
    // A namespace is its own namespace; `finalize` and `status` are its subresources.
    let (_, namespace) = resource(Method::PUT, "/api/v1/namespaces/n/finalize", None);
    assert_eq!(short(&namespace), ["", "n", "namespaces", "finalize", "n"]);
    let (_, all) = resource(Method::GET, "/api/v1/secrets", None);
    assert_eq!(short(&all), ["", "", "secrets", "", ""]);
    let (_, encoded) = resource(
        Method::GET,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Adiscovery",
        None,
    );
    assert_eq!(encoded.name, "system:discovery");
    let (verb, watched) = resource(Method::GET, "/api/v1/watch/namespaces/n/secrets/s", None);
    assert_eq!(
        (verb.as_str(), short(&watched)),
        ("watch", ["", "n", "secrets", "", "s"])
    );
}

#[test]
fn a_name_field_selector_names_the_listed_object() {
    for selector in [
        "metadata.name%3Ds",
        "metadata.name%3D%3Ds",
        "a%3Db,metadata.name%3Ds",
    ] {
        let query = format!("watch=1&fieldSelector={selector}");
        let (verb, secret) = resource(Method::GET, "/api/v1/namespaces/n/secrets", Some(&query));
        assert_eq!(
            (verb.as_str(), secret.name.as_str()),
            ("watch", "s"),
            "{selector}"
        );
    }
    let (_, other) = resource(
        Method::GET,
        "/api/v1/namespaces/n/secrets",
        Some("fieldSelector=metadata.namespace%3Dn"),
    );
    assert_eq!(other.name, "");
}

#[test]
fn other_paths_are_non_resource_requests() {
    for path in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/g/v1",
        "/version",
        "/openapi/v3",
        "/metrics",
    ] {
        let attributes = attributes(&Method::GET, path, None);
        assert_eq!(attributes.resource, None, "{path}");
        assert_eq!(
            (attributes.verb.as_str(), attributes.path.as_str()),
            ("get", path)
        );
    }
}

const ACCOUNT: &str = "system:serviceaccount:certs:cert-controller";

fn user(name: &str, namespace: &str) -> Identity {
    Identity::User {
        name: name.to_owned(),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".into(),
        ],
    }
}

fn state() -> State {
    let mut state = State::new(100, String::new());
    for name in ["certs", "other"] {
        store(
            &mut state,
            "",
            "namespaces",
            None,
            json!({"metadata": {"name": name}}),
        );
    }
    state
}

fn store(state: &mut State, group: &str, plural: &str, namespace: Option<&str>, object: Value) {
    let info = state.registry.get(group, "v1", plural).expect("built in");
    let mut object = object;
    object["apiVersion"] = json!(if group.is_empty() {
        "v1".to_owned()
    } else {
        format!("{group}/v1")
    });
    object["kind"] = json!(info.kind);
    state
        .create(&info, namespace, object, &WriteOptions::internal())
        .expect("stored");
}

/// Role `name` in `namespace` with `rules`, bound to the cert controller's account.
fn bound_role(state: &mut State, namespace: &str, name: &str, rules: Value) {
    let rbac = "rbac.authorization.k8s.io";
    store(
        state,
        rbac,
        "roles",
        Some(namespace),
        json!({"metadata": {"name": name}, "rules": rules}),
    );
    store(
        state,
        rbac,
        "rolebindings",
        Some(namespace),
        json!({"metadata": {"name": name},
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": "cert-controller", "namespace": "certs"}]}),
    );
}

/// The chart's cert controller Secret rule: its own Secret, by name.
fn own_secret_rule() -> Value {
    json!([{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["webhook-certs"],
        "verbs": ["get", "list", "watch", "update", "patch"]}])
}

fn decide(
    state: &State,
    identity: &Identity,
    method: Method,
    path: &str,
    query: Option<&str>,
) -> ApiResult<()> {
    state.authorize(identity, &attributes(&method, path, query))
}

fn allowed(state: &State, identity: &Identity, method: Method, path: &str) -> bool {
    decide(state, identity, method, path, None).is_ok()
}

#[test]
fn resource_names_limit_the_role_to_its_secret() {
    let mut state = state();
    bound_role(&mut state, "certs", "cert-controller", own_secret_rule());
    let account = user(ACCOUNT, "certs");
    let own = "/api/v1/namespaces/certs/secrets/webhook-certs";
    assert!(allowed(&state, &account, Method::GET, own));
    assert!(allowed(&state, &account, Method::PUT, own));
    let named = Some("watch=true&fieldSelector=metadata.name%3Dwebhook-certs");
    assert!(
        decide(
            &state,
            &account,
            Method::GET,
            "/api/v1/namespaces/certs/secrets",
            named
        )
        .is_ok()
    );

    let denied = decide(
        &state,
        &account,
        Method::GET,
        "/api/v1/namespaces/certs/secrets/other",
        None,
    )
    .unwrap_err();
    assert_eq!((denied.code, denied.reason), (403, "Forbidden"));
    assert_eq!(
        denied.message,
        r#"secrets "other" is forbidden: User "system:serviceaccount:certs:cert-controller" cannot get resource "secrets" in API group "" in the namespace "certs""#
    );
    assert_eq!(
        denied.details,
        Some(json!({"name": "other", "kind": "secrets"}))
    );
    let list = decide(
        &state,
        &account,
        Method::GET,
        "/api/v1/namespaces/certs/secrets",
        None,
    )
    .unwrap_err();
    assert_eq!(
        list.message,
        r#"secrets is forbidden: User "system:serviceaccount:certs:cert-controller" cannot list resource "secrets" in API group "" in the namespace "certs""#
    );
    // Creating names no object, so a rule with resourceNames never allows it.
    assert!(!allowed(
        &state,
        &account,
        Method::POST,
        "/api/v1/namespaces/certs/secrets"
    ));
    // The Role binds in its namespace only; another account gets nothing from it.
    assert!(!allowed(
        &state,
        &account,
        Method::GET,
        "/api/v1/namespaces/other/secrets/webhook-certs"
    ));
    let stranger = user("system:serviceaccount:certs:stranger", "certs");
    assert!(!allowed(&state, &stranger, Method::GET, own));
    assert!(
        decide(
            &state,
            &Identity::Admin,
            Method::GET,
            "/api/v1/secrets",
            None
        )
        .is_ok()
    );
}

/// The negative controls: without the binding even the own Secret is refused, and a Role
/// without resourceNames (upstream's before CVE-2024-45041) reaches every Secret.
#[test]
fn the_resource_names_are_what_keeps_other_secrets_out() {
    let account = user(ACCOUNT, "certs");
    let own = "/api/v1/namespaces/certs/secrets/webhook-certs";
    let other = "/api/v1/namespaces/certs/secrets/other";
    let unbound = state();
    assert!(!allowed(&unbound, &account, Method::GET, own));

    let mut every_secret = state();
    let mut rules = own_secret_rule();
    rules[0]
        .as_object_mut()
        .expect("a rule")
        .remove("resourceNames");
    bound_role(&mut every_secret, "certs", "cert-controller", rules);
    assert!(allowed(&every_secret, &account, Method::GET, other));
    assert!(allowed(
        &every_secret,
        &account,
        Method::GET,
        "/api/v1/namespaces/certs/secrets"
    ));
}

#[test]
fn cluster_bindings_reach_every_namespace_and_cluster_scope() {
    let mut state = state();
    let rbac = "rbac.authorization.k8s.io";
    store(
        &mut state,
        rbac,
        "clusterroles",
        None,
        json!({"metadata": {"name": "crd-reader"},
        "rules": [{"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list", "watch"]},
                  {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]}),
    );
    let account = user(ACCOUNT, "certs");
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let denied = decide(&state, &account, Method::GET, crds, None).unwrap_err();
    assert_eq!(
        denied.message,
        r#"customresourcedefinitions.apiextensions.k8s.io is forbidden: User "system:serviceaccount:certs:cert-controller" cannot list resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope"#
    );
    // A RoleBinding to the ClusterRole grants it in its namespace only, never cluster-wide.
    store(
        &mut state,
        rbac,
        "rolebindings",
        Some("other"),
        json!({"metadata": {"name": "events"},
        "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "crd-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "cert-controller", "namespace": "certs"}]}),
    );
    assert!(allowed(
        &state,
        &account,
        Method::POST,
        "/api/v1/namespaces/other/events"
    ));
    assert!(!allowed(
        &state,
        &account,
        Method::POST,
        "/api/v1/namespaces/certs/events"
    ));
    assert!(!allowed(&state, &account, Method::GET, crds));
    // A ClusterRoleBinding grants it everywhere, also to the account's groups.
    store(
        &mut state,
        rbac,
        "clusterrolebindings",
        None,
        json!({"metadata": {"name": "crd-reader"},
        "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "crd-reader"},
        "subjects": [{"kind": "Group", "name": "system:serviceaccounts:certs"}]}),
    );
    assert!(decide(&state, &account, Method::GET, crds, Some("watch=1")).is_ok());
    assert!(allowed(
        &state,
        &account,
        Method::POST,
        "/api/v1/namespaces/certs/events"
    ));
    let elsewhere = user("system:serviceaccount:other:cert-controller", "other");
    assert!(!allowed(&state, &elsewhere, Method::GET, crds));
}

#[test]
fn bootstrap_policy_opens_discovery_and_self_reviews_only() {
    let state = state();
    let account = user(ACCOUNT, "certs");
    for path in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps/v1",
        "/openapi/v3",
        "/version",
    ] {
        assert!(allowed(&state, &account, Method::GET, path), "{path}");
    }
    let denied = decide(&state, &account, Method::GET, "/metrics", None).unwrap_err();
    assert_eq!(
        denied.message,
        r#"forbidden: User "system:serviceaccount:certs:cert-controller" cannot get path "/metrics""#
    );
    assert_eq!(denied.details, Some(json!({})));
    assert!(!allowed(&state, &account, Method::POST, "/api"));
    // system:basic-user: every authenticated user may review itself, not others.
    let reviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    assert!(allowed(&state, &account, Method::POST, reviews));
    let others = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    assert!(!allowed(&state, &account, Method::POST, others));
}
