//! `authorization.k8s.io/v1` SubjectAccessReview, answered from the stored RBAC objects the
//! way kube-apiserver's RBAC authorizer does: a request is allowed when a ClusterRoleBinding
//! (or, for a namespaced resource request, a RoleBinding in that namespace) binds the user, one
//! of its groups or its ServiceAccount to a role with a matching rule. Resource rules match
//! API group, resource (with subresource), verb and resource name; non-resource rules match the
//! URL (exactly, or a `prefix*`) and verb. Aggregated ClusterRoles and the bootstrap policy
//! are not modelled: only what tests create grants anything.

use serde_json::{Value, json};

use crate::errors::{ApiError, ApiResult, FieldError};
use crate::resources::GroupResource;
use crate::state::State;

const RBAC: &str = "rbac.authorization.k8s.io";

/// What is asked: a review's `spec`, or a request's attributes in that form (`authz.rs`).
pub(crate) struct Request<'a> {
    pub user: &'a str,
    pub groups: Vec<&'a str>,
    /// `resourceAttributes`.
    pub resource: Option<&'a Value>,
    /// `nonResourceAttributes`.
    pub non_resource: Option<&'a Value>,
}

impl State {
    /// POST `subjectaccessreviews`.
    pub(crate) fn subject_access_review(&self, body: &Value) -> ApiResult<Value> {
        let spec = &body["spec"];
        let request = Request {
            user: spec["user"].as_str().unwrap_or_default(),
            groups: spec["groups"]
                .as_array()
                .map(|groups| groups.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default(),
            resource: spec.get("resourceAttributes").filter(|v| v.is_object()),
            non_resource: spec.get("nonResourceAttributes").filter(|v| v.is_object()),
        };
        if request.resource.is_some() == request.non_resource.is_some() {
            return Err(ApiError::invalid(
                "authorization.k8s.io",
                "SubjectAccessReview",
                "",
                &[FieldError::invalid(
                    "spec.resourceAttributes",
                    Value::Null,
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )],
            ));
        }
        if request.user.is_empty() && request.groups.is_empty() {
            return Err(ApiError::invalid(
                "authorization.k8s.io",
                "SubjectAccessReview",
                "",
                &[FieldError::invalid(
                    "spec.user",
                    Value::Null,
                    "at least one of user or group must be specified",
                )],
            ));
        }
        let allowed = self.allows(&request);
        let mut status = json!({"allowed": allowed});
        if allowed {
            status["reason"] = json!("allowed by the loopback server's RBAC evaluation");
        }
        Ok(json!({
            "kind": "SubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": status,
        }))
    }

    /// Whether a stored binding grants the request (kube's RBAC authorizer).
    pub(crate) fn allows(&self, request: &Request<'_>) -> bool {
        let namespace = request
            .resource
            .and_then(|attributes| attributes["namespace"].as_str())
            .filter(|namespace| !namespace.is_empty());
        let bindings = self.objects(RBAC, "clusterrolebindings").into_iter().chain(
            self.objects(RBAC, "rolebindings")
                .into_iter()
                .filter(|binding| {
                    namespace.is_some() && binding["metadata"]["namespace"].as_str() == namespace
                }),
        );
        bindings
            .filter(|binding| binds(binding, request))
            .filter_map(|binding| self.role_of(&binding))
            .any(|role| {
                role["rules"]
                    .as_array()
                    .is_some_and(|rules| rules.iter().any(|rule| rule_matches(rule, request)))
            })
    }

    /// Every stored object of `group`/`resource`.
    fn objects(&self, group: &str, resource: &str) -> Vec<Value> {
        let resource = GroupResource {
            group: group.to_owned(),
            resource: resource.to_owned(),
        };
        self.store
            .kind(&resource)
            .map(|kind| {
                kind.objects
                    .values()
                    .map(|object| (**object).clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The (Cluster)Role a binding refers to.
    fn role_of(&self, binding: &Value) -> Option<Value> {
        let reference = &binding["roleRef"];
        let name = reference["name"].as_str()?;
        let (plural, namespace) = match reference["kind"].as_str()? {
            "ClusterRole" => ("clusterroles", None),
            "Role" => ("roles", binding["metadata"]["namespace"].as_str()),
            _ => return None,
        };
        self.objects(RBAC, plural).into_iter().find(|role| {
            role["metadata"]["name"].as_str() == Some(name)
                && role["metadata"]["namespace"].as_str() == namespace
        })
    }
}

/// Whether `binding` names the requester among its subjects.
fn binds(binding: &Value, request: &Request<'_>) -> bool {
    let Some(subjects) = binding["subjects"].as_array() else {
        return false;
    };
    subjects.iter().any(|subject| {
        let name = subject["name"].as_str().unwrap_or_default();
        match subject["kind"].as_str() {
            Some("User") => name == request.user,
            Some("Group") => request.groups.contains(&name),
            Some("ServiceAccount") => {
                let namespace = subject["namespace"].as_str().unwrap_or_default();
                request.user == format!("system:serviceaccount:{namespace}:{name}")
            }
            _ => false,
        }
    })
}

/// Whether one policy rule grants the request.
fn rule_matches(rule: &Value, request: &Request<'_>) -> bool {
    let has = |field: &str, wanted: &str| {
        rule[field].as_array().is_some_and(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .any(|value| value == "*" || value == wanted)
        })
    };
    if let Some(attributes) = request.non_resource {
        let path = attributes["path"].as_str().unwrap_or_default();
        let verb = attributes["verb"].as_str().unwrap_or_default();
        let url_matches = rule["nonResourceURLs"].as_array().is_some_and(|urls| {
            urls.iter()
                .filter_map(Value::as_str)
                .any(|url| match url.strip_suffix('*') {
                    Some(prefix) => path.starts_with(prefix),
                    None => url == path,
                })
        });
        return url_matches && has("verbs", verb);
    }
    let Some(attributes) = request.resource else {
        return false;
    };
    let field = |name: &str| attributes[name].as_str().unwrap_or_default();
    let resource = match field("subresource") {
        "" => field("resource").to_owned(),
        subresource => format!("{}/{subresource}", field("resource")),
    };
    // No wildcard here: kube's ResourceNameMatches compares names exactly.
    let names_match = rule["resourceNames"].as_array().is_none_or(|names| {
        names.is_empty()
            || names
                .iter()
                .any(|name| name.as_str() == Some(field("name")))
    });
    has("apiGroups", field("group"))
        && has("resources", &resource)
        && has("verbs", field("verb"))
        && names_match
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(user: &'a str, non_resource: &'a Value) -> Request<'a> {
        Request {
            user,
            groups: vec!["system:authenticated"],
            resource: None,
            non_resource: Some(non_resource),
        }
    }

    #[test]
    fn non_resource_rules_match_urls_and_prefixes() {
        let metrics = json!({"path": "/metrics", "verb": "get"});
        let exact = json!({"nonResourceURLs": ["/metrics"], "verbs": ["get"]});
        let prefix = json!({"nonResourceURLs": ["/met*"], "verbs": ["*"]});
        let other = json!({"nonResourceURLs": ["/healthz"], "verbs": ["get"]});
        let wrong_verb = json!({"nonResourceURLs": ["/metrics"], "verbs": ["post"]});
        assert!(rule_matches(&exact, &request("u", &metrics)));
        assert!(rule_matches(&prefix, &request("u", &metrics)));
        assert!(!rule_matches(&other, &request("u", &metrics)));
        assert!(!rule_matches(&wrong_verb, &request("u", &metrics)));
    }

    #[test]
    fn subjects_bind_users_groups_and_service_accounts() {
        let metrics = json!({"path": "/metrics", "verb": "get"});
        let binding = json!({"subjects": [
            {"kind": "ServiceAccount", "name": "prom", "namespace": "monitoring"},
            {"kind": "Group", "name": "readers"},
        ]});
        assert!(binds(
            &binding,
            &request("system:serviceaccount:monitoring:prom", &metrics)
        ));
        assert!(!binds(
            &binding,
            &request("system:serviceaccount:other:prom", &metrics)
        ));
        let mut grouped = request("someone", &metrics);
        grouped.groups.push("readers");
        assert!(binds(&binding, &grouped));
    }
}
