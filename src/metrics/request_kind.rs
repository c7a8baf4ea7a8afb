//! The Kubernetes verb and resource of an API request, read from its method, path, query and
//! content type, for `rest_client_requests_by_resource_total` (issue 24: the scale benchmark
//! prints requests per ExternalSecret by verb and resource against any cluster, from the
//! controller's own metrics). client-go's `rest_client_requests_total` keeps its own labels.

use prometheus_client::encoding::EncodeLabelSet;

/// Labels of `rest_client_requests_by_resource_total` (not an upstream metric).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResourceRequestLabels {
    /// The API verb: get, list, watch, create, apply, patch, update, delete, deletecollection.
    pub verb: String,
    /// The resource, with its subresource as `externalsecrets/status`; `-` for paths that name
    /// none (discovery, `/version`).
    pub resource: String,
    /// The HTTP status code, or `<error>` when no response came.
    pub code: String,
}

/// The verb and resource of a request with `method`, `path`, `query` (without `?`) and
/// `content_type`, as the API server's request-info resolver derives them.
pub fn classify(
    method: &str,
    path: &str,
    query: Option<&str>,
    content_type: Option<&str>,
) -> (&'static str, String) {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    // /api/v1/... or /apis/<group>/<version>/...
    let rest = match segments.as_slice() {
        ["api", _version, rest @ ..] => rest,
        ["apis", _group, _version, rest @ ..] => rest,
        _ => return (verb(method, true, query, content_type), "-".to_owned()),
    };
    let rest = match rest {
        ["namespaces", _namespace, tail @ ..] if !tail.is_empty() => tail,
        other => other,
    };
    let (resource, named) = match rest {
        [] => ("-".to_owned(), false),
        [resource] => ((*resource).to_owned(), false),
        [resource, _name] => ((*resource).to_owned(), true),
        [resource, _name, subresource, ..] => (format!("{resource}/{subresource}"), true),
    };
    (verb(method, !named, query, content_type), resource)
}

fn verb(
    method: &str,
    collection: bool,
    query: Option<&str>,
    content_type: Option<&str>,
) -> &'static str {
    let watching = query.is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    });
    match method {
        "GET" if watching => "watch",
        "GET" if collection => "list",
        "GET" => "get",
        "POST" => "create",
        "PUT" => "update",
        "PATCH" if content_type.is_some_and(|t| t.starts_with("application/apply-patch")) => {
            "apply"
        }
        "PATCH" => "patch",
        "DELETE" if collection => "deletecollection",
        "DELETE" => "delete",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::classify;

    #[test]
    fn verbs_and_resources_as_the_api_server_names_them() {
        let apply = Some("application/apply-patch+yaml");
        let cases = [
            (
                "GET",
                "/api/v1/namespaces/a/secrets/db",
                None,
                None,
                "get",
                "secrets",
            ),
            (
                "GET",
                "/api/v1/secrets",
                Some("labelSelector=x&limit=500"),
                None,
                "list",
                "secrets",
            ),
            (
                "GET",
                "/api/v1/secrets",
                Some("watch=true&resourceVersion=5"),
                None,
                "watch",
                "secrets",
            ),
            (
                "PATCH",
                "/api/v1/namespaces/a/secrets/db",
                None,
                apply,
                "apply",
                "secrets",
            ),
            (
                "PATCH",
                "/apis/external-secrets.io/v1/namespaces/a/externalsecrets/db/status",
                None,
                apply,
                "apply",
                "externalsecrets/status",
            ),
            (
                "PATCH",
                "/api/v1/namespaces/a/secrets/db",
                None,
                Some("application/merge-patch+json"),
                "patch",
                "secrets",
            ),
            (
                "POST",
                "/apis/events.k8s.io/v1/namespaces/a/events",
                None,
                None,
                "create",
                "events",
            ),
            (
                "PUT",
                "/apis/coordination.k8s.io/v1/namespaces/a/leases/l",
                None,
                None,
                "update",
                "leases",
            ),
            (
                "DELETE",
                "/api/v1/namespaces/a/secrets/db",
                None,
                None,
                "delete",
                "secrets",
            ),
            (
                "GET",
                "/api/v1/namespaces/a",
                None,
                None,
                "get",
                "namespaces",
            ),
            (
                "GET",
                "/api/v1/namespaces",
                None,
                None,
                "list",
                "namespaces",
            ),
            ("GET", "/version", None, None, "list", "-"),
        ];
        for (method, path, query, content_type, verb, resource) in cases {
            assert_eq!(
                classify(method, path, query, content_type),
                (verb, resource.to_owned()),
                "{method} {path}"
            );
        }
    }
}
