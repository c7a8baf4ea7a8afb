//! GHSA-fq7h through generic targets: a manifest that renders to a core Secret carrying a
//! service-account token binding is refused before it is written.
//!
//! The Kubernetes token controller fills a `kubernetes.io/service-account-token` Secret that
//! names a service account (annotation `kubernetes.io/service-account.name`) with that account's
//! token. An operator that writes such a Secret on a user's behalf hands the user the token of
//! any service account in the namespace. The plain Secret target refuses it in its template
//! validation (`template.type` with the annotation); a generic target can reach the same
//! object through `manifest: {apiVersion: v1, kind: Secret}` and a template that sets `type` or
//! the annotation, or by merging into an existing token Secret, so the rendered object itself
//! is checked here: a core Secret (`v1` in any spelling, such as `/v1`) whose type is a token
//! type, or which carries the annotation, is refused.

use serde_json::Value;

use crate::controllers::template::{BOOTSTRAP_TOKEN, SERVICE_ACCOUNT_NAME, SERVICE_ACCOUNT_TOKEN};

/// Why a rendered object is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenSecret {
    /// A core Secret of a token type (named).
    #[error("manifest target type={0:?} is not allowed")]
    Type(String),
    /// A core Secret with the service-account annotation.
    #[error("manifest target with annotation {SERVICE_ACCOUNT_NAME:?} is not allowed")]
    Annotation,
}

/// Refuses `object` when it is a core Secret of a token type or with the service-account
/// annotation; every other object passes.
pub fn refuse_token_secret(object: &Value) -> Result<(), TokenSecret> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default().trim();
    let core = api_version.trim_start_matches('/') == "v1";
    if !core || object["kind"].as_str().map(str::trim) != Some("Secret") {
        return Ok(());
    }
    let secret_type = object["type"].as_str().unwrap_or_default().trim();
    if secret_type == SERVICE_ACCOUNT_TOKEN || secret_type == BOOTSTRAP_TOKEN {
        return Err(TokenSecret::Type(secret_type.to_owned()));
    }
    if !object["metadata"]["annotations"][SERVICE_ACCOUNT_NAME].is_null() {
        return Err(TokenSecret::Annotation);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret(api_version: &str, kind: &str, extra: Value) -> Value {
        let mut object = json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": "t", "annotations": {}}});
        if let (Some(object), Value::Object(extra)) = (object.as_object_mut(), extra) {
            object.extend(extra);
        }
        object
    }

    #[test]
    fn token_secrets_are_refused_in_every_core_spelling() {
        for api_version in ["v1", "/v1", " v1 "] {
            let typed = secret(
                api_version,
                "Secret",
                json!({"type": SERVICE_ACCOUNT_TOKEN}),
            );
            assert_eq!(
                refuse_token_secret(&typed).unwrap_err().to_string(),
                "manifest target type=\"kubernetes.io/service-account-token\" is not allowed"
            );
            let bootstrap = secret(api_version, "Secret", json!({"type": BOOTSTRAP_TOKEN}));
            assert!(refuse_token_secret(&bootstrap).is_err());
            let annotated = secret(
                api_version,
                "Secret",
                json!({"metadata": {"annotations": {SERVICE_ACCOUNT_NAME: "default"}}}),
            );
            assert_eq!(
                refuse_token_secret(&annotated).unwrap_err().to_string(),
                "manifest target with annotation \"kubernetes.io/service-account.name\" is \
                 not allowed"
            );
        }
    }

    #[test]
    fn other_objects_pass() {
        let opaque = secret("v1", "Secret", json!({"type": "Opaque"}));
        assert!(refuse_token_secret(&opaque).is_ok());
        let config_map = secret(
            "v1",
            "ConfigMap",
            json!({"metadata": {"annotations": {SERVICE_ACCOUNT_NAME: "default"}}}),
        );
        assert!(refuse_token_secret(&config_map).is_ok());
        let custom = secret(
            "example.io/v1",
            "Secret",
            json!({"type": SERVICE_ACCOUNT_TOKEN}),
        );
        assert!(refuse_token_secret(&custom).is_ok());
    }
}
