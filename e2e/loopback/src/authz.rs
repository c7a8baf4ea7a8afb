//! Authorization of requests made with ServiceAccount tokens, as kube-apiserver's RBAC
//! authorizer decides them: the request's attributes come from its method, path and query the
//! way apiserver's `RequestInfoFactory` derives them (verb, API group, version, namespace,
//! resource, subresource, name; a list or watch with a `metadata.name` field selector names
//! its object), and the decision comes from the stored RBAC objects through the same matching
//! as SubjectAccessReview (`access.rs`). A denial is kube's 403 Forbidden with its message.
//!
//! The static bearer token stays the test's cluster-admin and is never checked. What every
//! authenticated user may do comes from the bootstrap policy stored at start (`bootstrap.rs`).

use http::Method;
use serde_json::{Value, json};

use crate::access::Request;
use crate::errors::{ApiError, ApiResult, qualified};
use crate::query::flag;
use crate::state::State;

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Identity {
    /// The static token (or no authentication): everything is allowed.
    Admin,
    /// An authenticated user, authorized by RBAC.
    User { name: String, groups: Vec<String> },
}

/// A resource request's attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ResourceAttributes {
    pub group: String,
    pub version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
}

/// What a request asks, for the authorizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attributes {
    /// `get`, `list`, `watch`, `create`, ... (for non-resource requests: the lowercase method).
    pub verb: String,
    /// The URL path.
    pub path: String,
    /// Set for requests under `/api/<version>/` and `/apis/<group>/<version>/`.
    pub resource: Option<ResourceAttributes>,
}

/// Derives the attributes of a request (apiserver's `RequestInfoFactory.NewRequestInfo`).
pub(crate) fn attributes(method: &Method, path: &str, query: Option<&str>) -> Attributes {
    let non_resource = Attributes {
        verb: method.as_str().to_lowercase(),
        path: path.to_owned(),
        resource: None,
    };
    // Go's `URL.Path`, which RequestInfoFactory reads, is percent-decoded.
    let decoded: Vec<String> = path
        .split('/')
        .filter(|part| !part.is_empty())
        .map(|part| {
            percent_encoding::percent_decode_str(part)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let parts: Vec<&str> = decoded.iter().map(String::as_str).collect();
    let (group, rest) = match parts.as_slice() {
        ["api", rest @ ..] if rest.len() >= 2 => ("", rest),
        ["apis", group, rest @ ..] if rest.len() >= 2 => (*group, rest),
        _ => return non_resource,
    };
    let Some((version, mut rest)) = rest.split_first() else {
        return non_resource;
    };
    let mut verb = match *method {
        Method::POST => "create",
        Method::GET | Method::HEAD => "get",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    };
    if let Some((&"watch", after)) = rest.split_first() {
        if after.is_empty() {
            return non_resource;
        }
        verb = "watch";
        rest = after;
    }
    let mut resource = ResourceAttributes {
        group: group.to_owned(),
        version: (*version).to_owned(),
        ..ResourceAttributes::default()
    };
    if let ["namespaces", namespace, after @ ..] = rest {
        resource.namespace = (*namespace).to_owned();
        if !after.is_empty() && !matches!(after[0], "status" | "finalize") {
            rest = after;
        }
    }
    let part = |index: usize| rest.get(index).map(|part| (*part).to_owned());
    resource.resource = part(0).unwrap_or_default();
    resource.name = part(1).unwrap_or_default();
    resource.subresource = part(2).unwrap_or_default();
    if resource.name.is_empty() && verb == "get" {
        let mut watch = false;
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            match key.as_ref() {
                "watch" => watch = flag(&value),
                "fieldSelector" => resource.name = selected_name(&value).unwrap_or_default(),
                _ => {}
            }
        }
        verb = if watch { "watch" } else { "list" };
    }
    if resource.name.is_empty() && verb == "delete" {
        verb = "deletecollection";
    }
    Attributes {
        verb: verb.to_owned(),
        path: path.to_owned(),
        resource: Some(resource),
    }
}

/// The name a field selector requires exactly (`metadata.name=x` or `==x` among its terms).
fn selected_name(selector: &str) -> Option<String> {
    selector.split(',').find_map(|term| {
        let value = term.trim().strip_prefix("metadata.name")?;
        let value = value
            .strip_prefix("==")
            .or_else(|| value.strip_prefix('='))?;
        Some(value.to_owned()).filter(|name| !name.is_empty())
    })
}

impl Attributes {
    /// The SubjectAccessReview form: `resourceAttributes` or `nonResourceAttributes`.
    fn review(&self) -> Value {
        match &self.resource {
            Some(resource) => json!({
                "verb": self.verb, "group": resource.group, "version": resource.version,
                "namespace": resource.namespace, "resource": resource.resource,
                "subresource": resource.subresource, "name": resource.name,
            }),
            None => json!({"path": self.path, "verb": self.verb}),
        }
    }

    /// kube-apiserver's 403 for `user` (`responsewriters.Forbidden` around
    /// `apierrors.NewForbidden`).
    fn forbidden(&self, user: &str) -> ApiError {
        let Some(resource) = &self.resource else {
            return ApiError::forbidden_resource(
                "",
                "",
                "",
                &format!("User {user:?} cannot {} path {:?}", self.verb, self.path),
            );
        };
        let full = match resource.subresource.as_str() {
            "" => resource.resource.clone(),
            subresource => format!("{}/{subresource}", resource.resource),
        };
        let scope = match resource.namespace.as_str() {
            "" => "at the cluster scope".to_owned(),
            namespace => format!("in the namespace {namespace:?}"),
        };
        ApiError::forbidden_resource(
            &resource.group,
            &resource.resource,
            &resource.name,
            &format!(
                "User {user:?} cannot {} resource {full:?} in API group {:?} {scope}",
                self.verb, resource.group
            ),
        )
    }
}

impl ApiError {
    /// 403 from the authorizer: apimachinery's `NewForbidden(resource, name, err)`.
    fn forbidden_resource(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let message = match (resource, name) {
            ("", _) => format!("forbidden: {why}"),
            (_, "") => format!("{} is forbidden: {why}", qualified(group, resource)),
            _ => format!(
                "{} {name:?} is forbidden: {why}",
                qualified(group, resource)
            ),
        };
        let mut error = Self::forbidden(message);
        // StatusDetails' fields are all omitempty.
        let details = [("name", name), ("group", group), ("kind", resource)]
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(key, value)| (key.to_owned(), json!(value)))
            .collect();
        error.details = Some(Value::Object(details));
        error
    }
}

impl State {
    /// Allows everything for the admin; for a user, what a stored binding grants.
    pub(crate) fn authorize(&self, identity: &Identity, attributes: &Attributes) -> ApiResult<()> {
        let Identity::User { name, groups } = identity else {
            return Ok(());
        };
        let review = attributes.review();
        let request = Request {
            user: name,
            groups: groups.iter().map(String::as_str).collect(),
            resource: attributes.resource.is_some().then_some(&review),
            non_resource: attributes.resource.is_none().then_some(&review),
        };
        if self.allows(&request) {
            Ok(())
        } else {
            Err(attributes.forbidden(name))
        }
    }
}

#[cfg(test)]
#[path = "authz_tests.rs"]
mod tests;
