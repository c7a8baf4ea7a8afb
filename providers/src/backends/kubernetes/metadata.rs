//! PushSecret metadata for the kubernetes provider (`PushSecretData.metadata`): upstream's
//! `kind: PushSecretMetadata`, `apiVersion: kubernetes.external-secrets.io/v1alpha1`, with labels
//! and annotations for the remote Secret, how they merge, and a remote namespace override.
//!
//! Merging happens in two steps, as upstream:
//!
//! 1. source: the source Secret's labels and annotations, with the metadata's on top (`Merge`,
//!    the default) or the metadata's alone (`Replace`);
//! 2. target: the result merged into the remote Secret's own (`Merge`, the default), replacing
//!    them (`Replace`), or left out (`Ignore`: the remote metadata stays as it is).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{ProviderError, Result};
use crate::request::SourceMetadata;

/// The `apiVersion` metadata must have.
const API_VERSION: &str = "kubernetes.external-secrets.io/v1alpha1";
/// The `kind` metadata must have.
const KIND: &str = "PushSecretMetadata";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    kind: String,
    #[serde(rename = "apiVersion")]
    api_version: String,
    #[serde(default)]
    spec: PushMetadata,
}

/// The `spec` of a PushSecretMetadata.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct PushMetadata {
    #[serde(default)]
    target_merge_policy: String,
    #[serde(default)]
    source_merge_policy: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    /// Where to push instead of the store's `remoteNamespace` (ClusterSecretStore only).
    #[serde(default)]
    pub remote_namespace: String,
}

/// Labels and annotations, as they will be written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Metadata {
    /// The labels.
    pub labels: BTreeMap<String, String>,
    /// The annotations.
    pub annotations: BTreeMap<String, String>,
}

/// Parses `PushSecretData.metadata` (absent or `null`: none).
pub(super) fn parse(metadata: Option<&serde_json::Value>) -> Result<Option<PushMetadata>> {
    let Some(value) = metadata.filter(|value| !value.is_null()) else {
        return Ok(None);
    };
    let fail = |detail: String| {
        ProviderError::invalid_request(format!("unable to parse metadata parameters: {detail}"))
    };
    let document = Document::deserialize(value)
        .map_err(|error| fail(format!("failed to parse {API_VERSION} {KIND}: {error}")))?;
    if document.api_version != API_VERSION {
        return Err(fail(format!(
            "unexpected apiVersion {:?}, expected {API_VERSION:?}",
            document.api_version
        )));
    }
    if document.kind != KIND {
        return Err(fail(format!(
            "unexpected kind {:?}, expected {KIND:?}",
            document.kind
        )));
    }
    Ok(Some(document.spec))
}

/// The labels and annotations the remote Secret gets, from its current ones (`remote`), the
/// source Secret's and the push metadata.
pub(super) fn merge(
    remote: Metadata,
    source: &SourceMetadata,
    push: Option<&PushMetadata>,
) -> Result<Metadata> {
    let mut from_source = Metadata {
        labels: source.labels.clone(),
        annotations: source.annotations.clone(),
    };
    if let Some(push) = push {
        match push.source_merge_policy.as_str() {
            "" | "Merge" => {
                from_source.labels.extend(push.labels.clone());
                from_source.annotations.extend(push.annotations.clone());
            }
            "Replace" => {
                from_source = Metadata {
                    labels: push.labels.clone(),
                    annotations: push.annotations.clone(),
                };
            }
            other => {
                return Err(ProviderError::invalid_request(format!(
                    "failed to merge source metadata: unexpected source merge policy {other:?}"
                )));
            }
        }
    }
    let policy = push.map_or("", |push| push.target_merge_policy.as_str());
    match policy {
        "" | "Merge" => {
            let mut merged = remote;
            merged.labels.extend(from_source.labels);
            merged.annotations.extend(from_source.annotations);
            Ok(merged)
        }
        "Replace" => Ok(from_source),
        "Ignore" => Ok(remote),
        other => Err(ProviderError::invalid_request(format!(
            "failed to merge target metadata: unexpected target merge policy {other:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    fn push(source_policy: &str, target_policy: &str) -> PushMetadata {
        parse(Some(&json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "spec": {
                "sourceMergePolicy": source_policy,
                "targetMergePolicy": target_policy,
                "labels": {"color": "red"},
                "annotations": {"yes": "please"},
            }
        })))
        .unwrap()
        .unwrap()
    }

    fn remote() -> Metadata {
        Metadata {
            labels: map(&[("existing", "1"), ("color", "blue")]),
            annotations: map(&[("kept", "a")]),
        }
    }

    fn source() -> SourceMetadata {
        SourceMetadata {
            labels: map(&[("from-source", "s")]),
            annotations: BTreeMap::new(),
            secret_type: None,
        }
    }

    #[test]
    fn metadata_must_be_a_push_secret_metadata() {
        assert_eq!(parse(None).unwrap(), None);
        assert_eq!(parse(Some(&serde_json::Value::Null)).unwrap(), None);
        let wrong_kind = json!({"apiVersion": API_VERSION, "kind": "Other"});
        assert!(
            parse(Some(&wrong_kind))
                .unwrap_err()
                .message()
                .contains("unexpected kind")
        );
        let wrong_version = json!({"apiVersion": "v1", "kind": KIND});
        assert!(
            parse(Some(&wrong_version))
                .unwrap_err()
                .message()
                .contains("unexpected apiVersion")
        );
        let unknown = json!({"apiVersion": API_VERSION, "kind": KIND, "spec": {"colour": "red"}});
        let error = parse(Some(&unknown)).unwrap_err();
        assert!(error.message().contains("unknown field"), "{error}");
        assert_eq!(error.reason(), "InvalidRequest");
    }

    #[test]
    fn without_metadata_source_labels_merge_into_the_remote() {
        let merged = merge(remote(), &source(), None).unwrap();
        assert_eq!(
            merged.labels,
            map(&[("color", "blue"), ("existing", "1"), ("from-source", "s")])
        );
        assert_eq!(merged.annotations, map(&[("kept", "a")]));
    }

    #[test]
    fn merge_policies() {
        let merged = merge(remote(), &source(), Some(&push("", ""))).unwrap();
        assert_eq!(
            merged.labels,
            map(&[("color", "red"), ("existing", "1"), ("from-source", "s")])
        );
        assert_eq!(merged.annotations, map(&[("kept", "a"), ("yes", "please")]));

        let replaced = merge(remote(), &source(), Some(&push("Replace", "Replace"))).unwrap();
        assert_eq!(replaced.labels, map(&[("color", "red")]));
        assert_eq!(replaced.annotations, map(&[("yes", "please")]));

        let ignored = merge(remote(), &source(), Some(&push("Merge", "Ignore"))).unwrap();
        assert_eq!(ignored, remote());

        let error = merge(remote(), &source(), Some(&push("Sometimes", ""))).unwrap_err();
        assert!(error.message().contains("unexpected source merge policy"));
        let error = merge(remote(), &source(), Some(&push("", "Sometimes"))).unwrap_err();
        assert!(error.message().contains("unexpected target merge policy"));
    }
}
