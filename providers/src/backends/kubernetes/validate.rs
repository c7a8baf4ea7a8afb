//! `validate`: may the store's identity read Secrets of the remote namespace?
//!
//! As upstream, a SelfSubjectRulesReview for the namespace is asked first (a rule granting
//! `get` on `secrets` in the core group, wildcards included, means Ready), then a
//! SelfSubjectAccessReview for `get secrets` (denied: a `PermissionDenied` error).
//!
//! Where upstream reports `Unknown` because a review failed (the API server does not serve it,
//! or the identity may not create reviews), this module reads instead: it gets a Secret by an
//! improbable name. Found or 404 means `get` is allowed (authorization is checked before
//! existence), 401/403 mean it is not, anything else is that error. So a store is judged by
//! what it can do, not by the review APIs it may use.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, ResourceRule, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
    SelfSubjectRulesReview, SelfSubjectRulesReviewSpec,
};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::PostParams;

use super::error::map_error;
use crate::client::ValidationResult;
use crate::error::{ErrorKind, ProviderError, Result};

/// The Secret name the read check asks for; it need not exist.
const PROBE_NAME: &str = "external-secrets-validation-probe";

/// Checks that `client` may get Secrets in `namespace`.
pub(super) async fn validate(client: kube::Client, namespace: &str) -> Result<ValidationResult> {
    match rules_allow_get(client.clone(), namespace).await {
        Ok(true) => return Ok(ValidationResult::Ready),
        Ok(false) => match access_review_allows_get(client.clone(), namespace).await {
            Ok(true) => return Ok(ValidationResult::Ready),
            Ok(false) => {
                return Err(ProviderError::permission_denied(
                    "client is not allowed to get secrets",
                ));
            }
            Err(error) => {
                tracing::debug!(
                    reason = error.reason(),
                    "SelfSubjectAccessReview failed, reading instead"
                );
            }
        },
        Err(error) => {
            tracing::debug!(
                reason = error.reason(),
                "SelfSubjectRulesReview failed, reading instead"
            );
        }
    }
    probe(client, namespace).await
}

/// Whether the rules review grants `get secrets` in `namespace`.
async fn rules_allow_get(client: kube::Client, namespace: &str) -> Result<bool> {
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec {
            namespace: Some(namespace.to_owned()),
        },
        ..SelfSubjectRulesReview::default()
    };
    let api: Api<SelfSubjectRulesReview> = Api::all(client);
    let answer = api
        .create(&PostParams::default(), &review)
        .await
        .map_err(|error| map_error(error, "could not verify if client is valid"))?;
    Ok(answer
        .status
        .is_some_and(|status| status.resource_rules.iter().any(grants_get_secrets)))
}

/// Whether one rule grants `get` on core `secrets`.
fn grants_get_secrets(rule: &ResourceRule) -> bool {
    let contains =
        |list: &[String], wanted: &str| list.iter().any(|entry| entry == wanted || entry == "*");
    let resources = rule.resources.as_deref().unwrap_or_default();
    let groups = rule.api_groups.as_deref().unwrap_or_default();
    contains(resources, "secrets")
        && contains(&rule.verbs, "get")
        && (groups.is_empty() || contains(groups, ""))
}

/// Whether the access review allows `get secrets` in `namespace`.
async fn access_review_allows_get(client: kube::Client, namespace: &str) -> Result<bool> {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                resource: Some("secrets".into()),
                namespace: Some(namespace.to_owned()),
                verb: Some("get".into()),
                ..ResourceAttributes::default()
            }),
            non_resource_attributes: None,
        },
        ..SelfSubjectAccessReview::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(client);
    let answer = api
        .create(&PostParams::default(), &review)
        .await
        .map_err(|error| map_error(error, "could not verify if client is valid"))?;
    Ok(answer.status.is_some_and(|status| status.allowed))
}

/// Reads a Secret by an improbable name: found or missing both prove `get` is allowed.
async fn probe(client: kube::Client, namespace: &str) -> Result<ValidationResult> {
    let api: Api<Secret> = Api::namespaced(client, namespace);
    match api.get_opt(PROBE_NAME).await {
        Ok(_) => Ok(ValidationResult::Ready),
        Err(error) => {
            let error = map_error(
                error,
                &format!(
                    "could not verify if client is valid: cannot get secrets in namespace {namespace:?}"
                ),
            );
            Err(match error.kind() {
                ErrorKind::NotFound => ProviderError::invalid_config(format!(
                    "{}: the remote namespace or the secrets API does not exist",
                    error.message()
                )),
                _ => error,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(groups: Option<&[&str]>, resources: &[&str], verbs: &[&str]) -> ResourceRule {
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        ResourceRule {
            api_groups: groups.map(strings),
            resources: Some(strings(resources)),
            verbs: strings(verbs),
            resource_names: None,
        }
    }

    #[test]
    fn rules_granting_get_on_core_secrets() {
        assert!(grants_get_secrets(&rule(
            Some(&[""]),
            &["secrets"],
            &["get", "list"]
        )));
        assert!(grants_get_secrets(&rule(None, &["*"], &["*"])));
        assert!(grants_get_secrets(&rule(
            Some(&["*"]),
            &["secrets"],
            &["get"]
        )));
        assert!(!grants_get_secrets(&rule(
            Some(&["apps"]),
            &["secrets"],
            &["get"]
        )));
        assert!(!grants_get_secrets(&rule(
            Some(&[""]),
            &["configmaps"],
            &["get"]
        )));
        assert!(!grants_get_secrets(&rule(
            Some(&[""]),
            &["secrets"],
            &["list"]
        )));
    }
}
