//! Parsing of request paths and query parameters into what the handlers need.

use crate::errors::{ApiError, ApiResult};
use crate::state::FieldValidation;

/// A request for a resource: `/api/v1/...` or `/apis/<group>/<version>/...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub plural: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// What a path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Version,
    Health,
    OpenIdConfiguration,
    Jwks,
    CoreVersions,
    GroupList,
    Group(String),
    ResourceList(String, String),
    Resource(ResourcePath),
    OpenApiIndex,
    OpenApi(String, String),
    Unknown,
}

/// Parses a request path (already percent-decoded per segment).
pub(crate) fn route(path: &str) -> Route {
    let segments: Vec<String> = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            percent_encoding::percent_decode_str(segment)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    match parts.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        [".well-known", "openid-configuration"] => Route::OpenIdConfiguration,
        ["openid", "v1", "jwks"] => Route::Jwks,
        ["api"] => Route::CoreVersions,
        ["api", version] => Route::ResourceList(String::new(), (*version).to_owned()),
        ["api", version, rest @ ..] => resource("", version, rest),
        ["apis"] => Route::GroupList,
        ["apis", group] => Route::Group((*group).to_owned()),
        ["apis", group, version] => Route::ResourceList((*group).to_owned(), (*version).to_owned()),
        ["apis", group, version, rest @ ..] => resource(group, version, rest),
        ["openapi", "v3"] => Route::OpenApiIndex,
        ["openapi", "v3", "api", version] => Route::OpenApi(String::new(), (*version).to_owned()),
        ["openapi", "v3", "apis", group, version] => {
            Route::OpenApi((*group).to_owned(), (*version).to_owned())
        }
        _ => Route::Unknown,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let mut namespace = None;
    let mut parts = rest;
    if parts.first() == Some(&"namespaces")
        && parts.len() > 2
        && !matches!(parts[2], "status" | "finalize")
    {
        namespace = Some(parts[1].to_owned());
        parts = &parts[2..];
    }
    let (plural, name, subresource) = match parts {
        [plural] => (plural, None, None),
        [plural, name] => (plural, Some(name), None),
        [plural, name, subresource] => (plural, Some(name), Some(subresource)),
        _ => return Route::Unknown,
    };
    Route::Resource(ResourcePath {
        group: group.to_owned(),
        version: version.to_owned(),
        namespace,
        plural: (*plural).to_owned(),
        name: name.map(|name| (*name).to_owned()),
        subresource: subresource.map(|sub| (*sub).to_owned()),
    })
}

/// The query parameters the server understands.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    pub label_selector: String,
    pub field_selector: String,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub watch: bool,
    pub allow_watch_bookmarks: bool,
    pub timeout_seconds: Option<u64>,
    pub send_initial_events: bool,
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub field_validation: FieldValidation,
    pub force: bool,
    pub propagation_policy: Option<String>,
}

/// A boolean query parameter as apiserver reads it.
pub(crate) fn flag(value: &str) -> bool {
    matches!(value, "true" | "1" | "True")
}

impl Query {
    /// Parses a raw query string.
    pub(crate) fn parse(raw: Option<&str>) -> ApiResult<Self> {
        let mut query = Self::default();
        for (key, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            let value = value.into_owned();
            match key.as_ref() {
                "labelSelector" => query.label_selector = value,
                "fieldSelector" => query.field_selector = value,
                "limit" => {
                    query.limit =
                        Some(value.parse().map_err(|_| {
                            ApiError::bad_request(format!("invalid limit {value:?}"))
                        })?)
                        .filter(|limit| *limit > 0);
                }
                "continue" if !value.is_empty() => query.continue_token = Some(value),
                "resourceVersion" => query.resource_version = Some(value),
                "watch" => query.watch = flag(&value),
                "allowWatchBookmarks" => query.allow_watch_bookmarks = flag(&value),
                "timeoutSeconds" => query.timeout_seconds = value.parse().ok(),
                "sendInitialEvents" => query.send_initial_events = flag(&value),
                "dryRun" => query.dry_run = value == "All",
                "fieldManager" if !value.is_empty() => query.field_manager = Some(value),
                "fieldValidation" => {
                    query.field_validation = match value.as_str() {
                        "Ignore" => FieldValidation::Ignore,
                        "Warn" | "" => FieldValidation::Warn,
                        "Strict" => FieldValidation::Strict,
                        other => {
                            return Err(ApiError::bad_request(format!(
                                "fieldValidation parameter unsupported: {other:?}"
                            )));
                        }
                    };
                }
                "force" => query.force = flag(&value),
                "propagationPolicy" => query.propagation_policy = Some(value),
                _ => {}
            }
        }
        Ok(query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource_path(path: &str) -> ResourcePath {
        match route(path) {
            Route::Resource(resource) => resource,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn parses_resource_paths() {
        let secret = resource_path("/api/v1/namespaces/n/secrets/s");
        assert_eq!(
            (
                secret.namespace.as_deref(),
                secret.plural.as_str(),
                secret.name.as_deref()
            ),
            (Some("n"), "secrets", Some("s"))
        );
        let namespace_status = resource_path("/api/v1/namespaces/n/status");
        assert_eq!(
            (
                namespace_status.plural.as_str(),
                namespace_status.subresource.as_deref()
            ),
            ("namespaces", Some("status"))
        );
        let all = resource_path("/apis/external-secrets.io/v1/externalsecrets");
        assert_eq!(
            (all.namespace, all.group.as_str()),
            (None, "external-secrets.io")
        );
        let token = resource_path("/api/v1/namespaces/n/serviceaccounts/default/token");
        assert_eq!(token.subresource.as_deref(), Some("token"));
        assert_eq!(
            route("/apis/g/v1"),
            Route::ResourceList("g".into(), "v1".into())
        );
        assert_eq!(route("/nope"), Route::Unknown);
    }

    #[test]
    fn parses_queries() {
        let query = Query::parse(Some(
            "labelSelector=a%3Db&limit=5&watch=1&fieldValidation=Strict&dryRun=All",
        ))
        .unwrap();
        assert_eq!(query.label_selector, "a=b");
        assert_eq!(query.limit, Some(5));
        assert!(query.watch && query.dry_run);
        assert_eq!(query.field_validation, FieldValidation::Strict);
        assert!(Query::parse(Some("fieldValidation=Loud")).is_err());
    }
}
