//! The configured resource on the API server: discovered once (its plural and scope), access
//! checked with SelfSubjectAccessReviews, and objects turned into secret values as upstream does.

use external_secrets_crds::v1::CrdProviderResource;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{ApiResource, GroupVersionKind, PostParams};
use kube::discovery::{Scope, pinned_kind};
use kube::{Api, core::DynamicObject};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::backends::kubernetes::error::map_error;
use crate::error::{ErrorKind, ProviderError, Result};
use crate::property::{json_property, raw_to_bytes};
use crate::value::{SecretMap, SecretValue};

/// The resource as the API server serves it.
#[derive(Clone)]
pub(super) struct Target {
    /// Group, version, kind and plural, for `Api<DynamicObject>`.
    pub api_resource: ApiResource,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
}

/// Resolves the configured kind through discovery; a kind the server does not serve is a
/// configuration error (upstream: "is not registered in the cluster"), never `NotFound`.
pub(super) async fn discover(
    client: &kube::Client,
    resource: &CrdProviderResource,
) -> Result<Target> {
    let gvk = GroupVersionKind::gvk(&resource.group, &resource.version, &resource.kind);
    let unregistered = |detail: String| {
        ProviderError::invalid_config(format!(
            "crd: group {:?} version {:?} kind {:?} is not registered in the cluster: {detail}",
            resource.group, resource.version, resource.kind
        ))
    };
    match pinned_kind(client, &gvk).await {
        Ok((api_resource, capabilities)) => Ok(Target {
            api_resource,
            namespaced: capabilities.scope == Scope::Namespaced,
        }),
        Err(kube::Error::Discovery(error)) => Err(unregistered(error.to_string())),
        Err(error) => {
            let mapped = map_error(error, "crd: discovery failed");
            match mapped.kind() {
                ErrorKind::NotFound => Err(unregistered(mapped.message().to_owned())),
                _ => Err(mapped),
            }
        }
    }
}

/// Asks the API server whether the client may `verb` the resource in `namespace` (empty: across
/// all namespaces), as upstream's preflight. A denial is `PermissionDenied`. An API server that
/// does not serve access reviews (404) is not asked again: the reads themselves are authorized.
pub(super) async fn check_access(
    client: &kube::Client,
    target: &Target,
    namespace: &str,
    verb: &str,
) -> Result<()> {
    let resource = &target.api_resource;
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                group: Some(resource.group.clone()),
                version: Some(resource.version.clone()),
                resource: Some(resource.plural.clone()),
                verb: Some(verb.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ResourceAttributes::default()
            }),
            non_resource_attributes: None,
        },
        ..SelfSubjectAccessReview::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let answer = match api.create(&PostParams::default(), &review).await {
        Ok(answer) => answer,
        Err(error) => {
            let action = format!(
                "crd: failed to verify {verb:?} permission for resource {:?}",
                resource.plural
            );
            let mapped = map_error(error, &action);
            if mapped.kind() == ErrorKind::NotFound {
                tracing::debug!("access reviews are not served; relying on the reads");
                return Ok(());
            }
            return Err(mapped);
        }
    };
    if answer.status.is_some_and(|status| status.allowed) {
        return Ok(());
    }
    Err(ProviderError::permission_denied(format!(
        "crd: serviceaccount is not allowed to {verb:?} resource {:?} in apiGroup {:?}",
        resource.plural, resource.group
    )))
}

/// The object as JSON (keys sorted, as upstream's Go marshalling).
pub(super) fn object_json(object: &DynamicObject) -> Result<Vec<u8>> {
    let value: Value = serde_json::to_value(object)
        .map_err(|_| ProviderError::invalid_data("crd: failed to marshal object"))?;
    serde_json::to_vec(&value)
        .map_err(|_| ProviderError::invalid_data("crd: failed to marshal object"))
}

/// The whole object, or the value at the gjson `property` path (a string unquoted, anything
/// else as raw JSON). A path with nothing there is `NotFound`.
pub(super) fn value(object: &DynamicObject, property: Option<&str>) -> Result<SecretValue> {
    let json = object_json(object)?;
    let Some(property) = property else {
        return Ok(SecretValue::new(json));
    };
    json_property(&json, property)
        .map(SecretValue::new)
        .ok_or_else(|| {
            ProviderError::not_found(format!(
                "crd: property {property:?} not found in object {:?}",
                object.metadata.name.as_deref().unwrap_or_default()
            ))
        })
}

/// A value as key/value pairs: a JSON object's members (strings unquoted, others raw JSON);
/// anything else under the single key `value`, as upstream.
pub(super) fn value_map(value: SecretValue) -> SecretMap {
    let members: Option<std::collections::BTreeMap<String, &RawValue>> =
        serde_json::from_slice(value.expose()).ok();
    match members {
        Some(members) => members
            .into_iter()
            .map(|(key, raw)| (key, SecretValue::new(raw_to_bytes(raw))))
            .collect(),
        None => SecretMap::from([("value".to_owned(), value)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "example.io/v1",
            "kind": "Thing",
            "metadata": {"name": "db"},
            "spec": {"user": "admin", "port": 5432, "tags": ["a"]}
        }))
        .unwrap()
    }

    fn text(value: SecretValue) -> String {
        String::from_utf8(value.into_bytes()).unwrap()
    }

    #[test]
    fn properties_select_strings_unquoted_and_the_rest_as_json() {
        let object = object();
        assert_eq!(text(value(&object, Some("spec.user")).unwrap()), "admin");
        assert_eq!(text(value(&object, Some("spec.port")).unwrap()), "5432");
        assert_eq!(text(value(&object, Some("spec.tags")).unwrap()), r#"["a"]"#);
        let missing = value(&object, Some("spec.nothing")).unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        let whole: Value = serde_json::from_slice(value(&object, None).unwrap().expose()).unwrap();
        assert_eq!(whole["spec"]["port"], 5432);
        assert_eq!(whole["kind"], "Thing");
    }

    #[test]
    fn maps_are_object_members_or_a_single_value() {
        let spec = value(&object(), Some("spec")).unwrap();
        let map: Vec<(String, String)> = value_map(spec)
            .into_iter()
            .map(|(key, value)| (key, text(value)))
            .collect();
        assert_eq!(
            map,
            [
                ("port".to_owned(), "5432".to_owned()),
                ("tags".to_owned(), r#"["a"]"#.to_owned()),
                ("user".to_owned(), "admin".to_owned())
            ]
        );
        let single = value_map(SecretValue::new(b"plain".to_vec()));
        assert_eq!(text(single["value"].clone()), "plain");
    }
}
