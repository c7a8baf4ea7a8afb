//! Requests served, counted by client (User-Agent), Kubernetes verb and resource, so a
//! benchmark running the server in its own process can see what a controller asked of it.

use http::Method;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::query::{Route, route};

/// What one counter counts: requests of one client, verb and resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestKey {
    /// The request's `User-Agent` header, empty when it sent none.
    pub user_agent: String,
    /// The Kubernetes verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`), or the lowercase HTTP method for paths that are not resources
    /// (discovery, OpenAPI, health).
    pub verb: String,
    /// `plural` for the core group, `plural.group` otherwise, with `/subresource` when one is
    /// addressed; empty for paths that are not resources.
    pub resource: String,
}

impl RequestKey {
    /// Whether the verb changes state (create, update, patch, delete, deletecollection).
    pub fn is_write(&self) -> bool {
        matches!(
            self.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
    }
}

/// Counters of every request the server answered, read with [`RequestCounters::snapshot`].
#[derive(Debug, Default)]
pub(crate) struct RequestCounters {
    counts: Mutex<HashMap<RequestKey, u64>>,
}

impl RequestCounters {
    /// Counts one request.
    pub(crate) fn count(&self, method: &Method, path: &str, query: Option<&str>, agent: &str) {
        let (verb, resource) = classify(method, path, query);
        let key = RequestKey {
            user_agent: agent.to_owned(),
            verb,
            resource,
        };
        *self
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(key)
            .or_default() += 1;
    }

    /// The counts so far.
    pub(crate) fn snapshot(&self) -> BTreeMap<RequestKey, u64> {
        self.counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(key, count)| (key.clone(), *count))
            .collect()
    }
}

/// The verb and resource of a request, as kube-apiserver's audit log names them.
fn classify(method: &Method, path: &str, query: Option<&str>) -> (String, String) {
    let Route::Resource(resource) = route(path) else {
        return (method.as_str().to_ascii_lowercase(), String::new());
    };
    let watch = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .any(|(key, value)| key == "watch" && matches!(value.as_ref(), "true" | "1" | "True"));
    let named = resource.name.is_some();
    let verb = match *method {
        Method::GET if named => "get",
        Method::GET if watch => "watch",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => return (method.as_str().to_ascii_lowercase(), String::new()),
    };
    let mut name = resource.plural;
    if !resource.group.is_empty() {
        name = format!("{name}.{}", resource.group);
    }
    if let Some(subresource) = resource.subresource {
        name = format!("{name}/{subresource}");
    }
    (verb.to_owned(), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verb(method: Method, path: &str, query: Option<&str>) -> (String, String) {
        classify(&method, path, query)
    }

    #[test]
    fn requests_are_named_as_the_audit_log_names_them() {
        let pairs = [
            (
                verb(Method::GET, "/api/v1/namespaces/n/secrets/s", None),
                ("get", "secrets"),
            ),
            (
                verb(Method::GET, "/api/v1/namespaces/n/secrets", None),
                ("list", "secrets"),
            ),
            (
                verb(
                    Method::GET,
                    "/api/v1/secrets",
                    Some("labelSelector=a&watch=true"),
                ),
                ("watch", "secrets"),
            ),
            (
                verb(
                    Method::PATCH,
                    "/apis/external-secrets.io/v1/namespaces/n/externalsecrets/e/status",
                    None,
                ),
                ("patch", "externalsecrets.external-secrets.io/status"),
            ),
            (
                verb(Method::POST, "/api/v1/namespaces/n/events", None),
                ("create", "events"),
            ),
            (
                verb(Method::PUT, "/api/v1/namespaces/n/secrets/s", None),
                ("update", "secrets"),
            ),
            (
                verb(Method::DELETE, "/api/v1/namespaces/n/secrets/s", None),
                ("delete", "secrets"),
            ),
            (
                verb(Method::DELETE, "/api/v1/namespaces/n/secrets", None),
                ("deletecollection", "secrets"),
            ),
            (verb(Method::GET, "/apis", None), ("get", "")),
        ];
        for ((verb, resource), (expected_verb, expected_resource)) in pairs {
            assert_eq!(
                (verb.as_str(), resource.as_str()),
                (expected_verb, expected_resource)
            );
        }
    }

    #[test]
    fn counts_add_up_per_client_and_writes_are_told_apart() {
        let counters = RequestCounters::default();
        let secret = "/api/v1/namespaces/n/secrets/s";
        counters.count(&Method::GET, secret, None, "");
        counters.count(&Method::GET, secret, None, "");
        counters.count(&Method::PATCH, secret, None, "bench");
        let snapshot = counters.snapshot();
        let key = |agent: &str, verb: &str| RequestKey {
            user_agent: agent.into(),
            verb: verb.into(),
            resource: "secrets".into(),
        };
        assert_eq!(snapshot[&key("", "get")], 2);
        assert_eq!(snapshot[&key("bench", "patch")], 1);
        assert_eq!(snapshot.len(), 2);
        assert!(key("bench", "patch").is_write() && !key("", "get").is_write());
    }
}
