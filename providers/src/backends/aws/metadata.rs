//! PushSecret metadata (`PushSecretData.metadata`) for both AWS services: upstream's envelope
//! `apiVersion: kubernetes.external-secrets.io/v1alpha1`, `kind: PushSecretMetadata`, with a
//! service-specific `spec` (unknown fields are errors, as upstream), and the ownership tag every
//! pushed secret carries.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::{ProviderError, Result};

/// The ownership tag's key.
pub(super) const MANAGED_BY: &str = "managed-by";
/// The ownership tag's value.
pub(super) const MANAGER: &str = "external-secrets";

/// The `apiVersion` metadata must have.
const API_VERSION: &str = "kubernetes.external-secrets.io/v1alpha1";
/// The `kind` metadata must have.
const KIND: &str = "PushSecretMetadata";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<T> {
    kind: String,
    #[serde(rename = "apiVersion")]
    api_version: String,
    spec: Option<T>,
}

/// The `spec` of `metadata` (absent or `null`: the default spec).
pub(super) fn parse<T: DeserializeOwned + Default>(
    metadata: Option<&serde_json::Value>,
) -> Result<T> {
    let Some(value) = metadata.filter(|value| !value.is_null()) else {
        return Ok(T::default());
    };
    let fail = |detail: String| {
        ProviderError::invalid_request(format!("failed to parse metadata: {detail}"))
    };
    let envelope = Envelope::<T>::deserialize(value)
        .map_err(|error| fail(format!("failed to parse {API_VERSION} {KIND}: {error}")))?;
    if envelope.api_version != API_VERSION {
        return Err(fail(format!(
            "unexpected apiVersion {:?}, expected {API_VERSION:?}",
            envelope.api_version
        )));
    }
    if envelope.kind != KIND {
        return Err(fail(format!(
            "unexpected kind {:?}, expected {KIND:?}",
            envelope.kind
        )));
    }
    Ok(envelope.spec.unwrap_or_default())
}

/// The tags a pushed secret gets: the metadata's, which may not claim the ownership tag, plus
/// the ownership tag.
pub(super) fn owned_tags(tags: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>> {
    if tags.contains_key(MANAGED_BY) {
        return Err(ProviderError::invalid_request(format!(
            "error parsing tags in metadata: Cannot specify a '{MANAGED_BY}' tag"
        )));
    }
    let mut owned = tags.clone();
    owned.insert(MANAGED_BY.to_owned(), MANAGER.to_owned());
    Ok(owned)
}

/// Whether `tags` carry the ownership tag.
pub(super) fn is_managed(tags: &BTreeMap<String, String>) -> bool {
    tags.get(MANAGED_BY).map(String::as_str) == Some(MANAGER)
}

/// The default description of a pushed secret.
pub(super) fn default_description() -> String {
    format!("secret '{MANAGED_BY}:{MANAGER}'")
}

/// How the tags of an existing secret change to become `desired` (upstream's
/// `FindTagKeysToRemove` and `computeTagsToUpdate`): keys to remove, and the tags to set if any
/// tag other than the ownership tag is new or different.
pub(super) fn tag_changes(
    current: &BTreeMap<String, String>,
    desired: &BTreeMap<String, String>,
) -> (Vec<String>, Option<BTreeMap<String, String>>) {
    let remove = current
        .keys()
        .filter(|key| !desired.contains_key(*key))
        .cloned()
        .collect();
    let modified = desired
        .iter()
        .any(|(key, value)| key != MANAGED_BY && current.get(key) != Some(value));
    (remove, modified.then(|| desired.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Spec {
        #[serde(default)]
        description: String,
    }

    fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn the_envelope_is_checked_and_the_spec_defaults() {
        let parsed: Spec = parse(Some(&json!({
            "apiVersion": API_VERSION, "kind": KIND, "spec": {"description": "d"}})))
        .unwrap();
        assert_eq!(parsed.description, "d");
        assert_eq!(parse::<Spec>(None).unwrap(), Spec::default());
        assert_eq!(
            parse::<Spec>(Some(&json!({"apiVersion": API_VERSION, "kind": KIND}))).unwrap(),
            Spec::default()
        );
        let error = parse::<Spec>(Some(&json!({"apiVersion": "v1", "kind": KIND}))).unwrap_err();
        assert_eq!(
            error.message(),
            r#"failed to parse metadata: unexpected apiVersion "v1", expected "kubernetes.external-secrets.io/v1alpha1""#
        );
        let error = parse::<Spec>(Some(&json!({
            "apiVersion": API_VERSION, "kind": KIND, "spec": {"typo": 1}})))
        .unwrap_err();
        assert!(error.message().contains("unknown field `typo`"), "{error}");
    }

    #[test]
    fn the_ownership_tag_is_added_and_reserved() {
        assert_eq!(
            owned_tags(&tags(&[("team", "a")])).unwrap(),
            tags(&[("managed-by", "external-secrets"), ("team", "a")])
        );
        let error = owned_tags(&tags(&[("managed-by", "me")])).unwrap_err();
        assert_eq!(
            error.message(),
            "error parsing tags in metadata: Cannot specify a 'managed-by' tag"
        );
        assert!(is_managed(&tags(&[("managed-by", "external-secrets")])));
        assert!(!is_managed(&tags(&[("managed-by", "someone")])));
    }

    #[test]
    fn tag_changes_remove_extra_keys_and_set_changed_ones() {
        let current = tags(&[
            ("managed-by", "external-secrets"),
            ("old", "1"),
            ("team", "a"),
        ]);
        let desired = tags(&[("managed-by", "external-secrets"), ("team", "b")]);
        let (remove, set) = tag_changes(&current, &desired);
        assert_eq!(remove, ["old"]);
        assert_eq!(set, Some(desired.clone()));
        let (remove, set) = tag_changes(&desired, &desired);
        assert!(remove.is_empty());
        assert_eq!(set, None);
    }
}
