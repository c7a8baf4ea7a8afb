//! API errors as kube-apiserver reports them: an HTTP code plus a `Status` object whose
//! `reason`, `message` and `details` match what apimachinery's `errors` package builds.

use serde_json::{Value, json};

/// One field-level validation error, formatted like apimachinery's `field.Error`.
#[derive(Debug, Clone)]
pub(crate) struct FieldError {
    /// Field path without a leading dot, e.g. `spec.provider.aws.region` or `data[0].key`.
    pub path: String,
    /// What is wrong with the field.
    pub kind: FieldErrorKind,
}

/// The kinds of field errors this server produces.
#[derive(Debug, Clone)]
pub(crate) enum FieldErrorKind {
    /// A required field is missing.
    Required,
    /// The value is not valid; `value` is rendered like Go's `%#v`, `detail` explains why.
    Invalid { value: Value, detail: String },
    /// The value is not one of the allowed ones.
    NotSupported { value: Value, supported: Vec<Value> },
    /// The field may not be set or changed.
    Forbidden { detail: String },
    /// A list or map has too many entries.
    TooMany { detail: String },
    /// A string is longer than allowed.
    TooLong { detail: String },
}

impl FieldError {
    pub(crate) fn required(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            kind: FieldErrorKind::Required,
        }
    }

    pub(crate) fn invalid(
        path: impl Into<String>,
        value: Value,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            path: path.into(),
            kind: FieldErrorKind::Invalid {
                value,
                detail: detail.into(),
            },
        }
    }

    pub(crate) fn forbidden(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            kind: FieldErrorKind::Forbidden {
                detail: detail.into(),
            },
        }
    }

    /// The message without the field path (apimachinery's `ErrorBody`).
    pub(crate) fn body(&self) -> String {
        match &self.kind {
            FieldErrorKind::Required => "Required value".to_owned(),
            FieldErrorKind::Invalid { value, detail } => {
                format!("Invalid value: {}: {detail}", go_value(value))
            }
            FieldErrorKind::NotSupported { value, supported } => {
                let list: Vec<String> = supported.iter().map(go_value).collect();
                format!(
                    "Unsupported value: {}: supported values: {}",
                    go_value(value),
                    list.join(", ")
                )
            }
            FieldErrorKind::Forbidden { detail } => format!("Forbidden: {detail}"),
            FieldErrorKind::TooMany { detail } => format!("Too many: {detail}"),
            FieldErrorKind::TooLong { detail } => format!("Too long: {detail}"),
        }
    }

    fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid { .. } => "FieldValueInvalid",
            FieldErrorKind::NotSupported { .. } => "FieldValueNotSupported",
            FieldErrorKind::Forbidden { .. } => "FieldValueForbidden",
            FieldErrorKind::TooMany { .. } => "FieldValueTooMany",
            FieldErrorKind::TooLong { .. } => "FieldValueTooLong",
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.path, self.body())
    }
}

/// Renders a JSON value the way Go's `%#v` renders the decoded value in field errors.
fn go_value(value: &Value) -> String {
    match value {
        Value::String(text) => format!("{text:?}"),
        Value::Null => "null".to_owned(),
        Value::Object(_) => "\"object\"".to_owned(),
        Value::Array(_) => "\"array\"".to_owned(),
        other => other.to_string(),
    }
}

/// An error answered to the client as a `Status` object.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    /// HTTP status code, also `Status.code`.
    pub code: u16,
    /// `Status.reason`, e.g. `NotFound`.
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
    /// `Status.details`, when the error concerns one object.
    pub details: Option<Value>,
}

/// Shorthand for results of request handling.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

/// `plural.group`, or `plural` for the core group: apimachinery's `GroupResource.String()`.
pub(crate) fn qualified(group: &str, name: &str) -> String {
    if group.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{group}")
    }
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 404 for a named object that does not exist.
    pub(crate) fn not_found(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} {name:?} not found", qualified(group, plural)),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }

    /// 404 for a path the server does not serve.
    pub(crate) fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    /// 409 when creating an object whose name is taken.
    pub(crate) fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} {name:?} already exists", qualified(group, plural)),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }

    /// 409 for a write against a stale resourceVersion (or another precondition).
    pub(crate) fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} {name:?}: {why}",
                qualified(group, plural)
            ),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }

    /// The stale-resourceVersion conflict.
    pub(crate) fn stale(group: &str, plural: &str, name: &str) -> Self {
        Self::conflict(
            group,
            plural,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 with a free message and causes (server-side apply conflicts).
    pub(crate) fn apply_conflict(message: String, causes: Vec<Value>) -> Self {
        Self::new(409, "Conflict", message).with_details(json!({"causes": causes}))
    }

    /// 422 with field errors: `Kind.group "name" is invalid: path: message`.
    pub(crate) fn invalid(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let aggregate = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|error| json!({"reason": error.reason(), "message": error.body(), "field": error.path}))
            .collect();
        Self::new(
            422,
            "Invalid",
            format!(
                "{} {name:?} is invalid: {aggregate}",
                qualified(group, kind)
            ),
        )
        .with_details(json!({"name": name, "group": group, "kind": kind, "causes": causes}))
    }

    /// 422 for a patch whose result kube-apiserver's `patch.go` refuses after applying it
    /// (strict decoding errors): an `Invalid` status without group, kind or name whose one
    /// cause is the field `patch`, quoting the patched object.
    pub(crate) fn invalid_patch_value(patched: &str, detail: String) -> Self {
        let error = FieldError {
            path: "patch".into(),
            kind: FieldErrorKind::Invalid {
                value: Value::String(patched.to_owned()),
                detail,
            },
        };
        let mut invalid = Self::invalid("", "", "", std::slice::from_ref(&error));
        invalid.details = Some(json!({"causes": [
            {"reason": error.reason(), "message": error.body(), "field": error.path}
        ]}));
        invalid
    }

    /// 400 for a malformed request.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 403 for a forbidden operation.
    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 401 when the bearer token is missing or wrong.
    pub(crate) fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 405 for a verb the resource does not support.
    pub(crate) fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 410 for a watch or continue token older than the kept history.
    pub(crate) fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 415 for a body content type the verb does not accept.
    pub(crate) fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got {content_type:?})"
            ),
        )
    }

    /// 500, as kube-apiserver answers some storage-level refusals.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// The `Status` object sent to the client.
    pub(crate) fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_message_matches_kube_apiserver() {
        let error = ApiError::invalid(
            "external-secrets.io",
            "SecretStore",
            "x",
            &[FieldError::required("spec.provider.aws.region")],
        );
        assert_eq!(
            error.message,
            "SecretStore.external-secrets.io \"x\" is invalid: spec.provider.aws.region: Required value"
        );
        assert_eq!(error.code, 422);
    }

    #[test]
    fn not_found_uses_the_qualified_resource() {
        assert_eq!(
            ApiError::not_found("", "secrets", "a").message,
            "secrets \"a\" not found"
        );
        assert_eq!(
            ApiError::not_found("coordination.k8s.io", "leases", "a").message,
            "leases.coordination.k8s.io \"a\" not found"
        );
    }
}
