//! The target Secret an ExternalSecret produces: its desired content (server-side applied by
//! the ExternalSecret's own field manager) and whether an existing Secret already is that.

use std::collections::BTreeMap;

use external_secrets_crds::v1::{ExternalSecret, ExternalSecretCreationPolicy};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{Resource, ResourceExt};

/// Upstream's label marking Secrets an ExternalSecret manages.
pub const LABEL_MANAGED: &str = "reconcile.external-secrets.io/managed";
/// Upstream's annotation holding the hash of the data the controller wrote.
pub const ANNOTATION_DATA_HASH: &str = "reconcile.external-secrets.io/data-hash";

/// The fetched (and decoded) data, key to bytes.
pub type SecretData = BTreeMap<String, Vec<u8>>;

/// 64-bit FNV-1a: a stable content hash (the same across builds, unlike `DefaultHasher`) for
/// the data-hash annotation and the synced resource version. Not a security boundary.
#[derive(Debug)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Feeds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// The data-hash annotation value for `data` (keys and values, length-prefixed).
pub fn data_hash<'a>(data: impl IntoIterator<Item = (&'a String, &'a [u8])>) -> String {
    let mut digest = Fnv::default();
    for (key, value) in data {
        digest.write(&(key.len() as u64).to_le_bytes());
        digest.write(key.as_bytes());
        digest.write(&(value.len() as u64).to_le_bytes());
        digest.write(value);
    }
    format!("{:016x}", digest.finish())
}

/// The target Secret's name: `spec.target.name`, else the ExternalSecret's.
pub fn target_name(es: &ExternalSecret) -> String {
    es.spec
        .target
        .name
        .clone()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| es.name_any())
}

/// Upstream's field owner for the target Secret, one per ExternalSecret, so several
/// ExternalSecrets merging into one Secret own their own keys.
pub fn field_manager(es: &ExternalSecret) -> String {
    format!("externalsecrets.external-secrets.io/{}", es.name_any())
}

/// Why the target cannot be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A template feature this build does not have yet.
    #[error("{0}")]
    Unsupported(String),
}

/// The Secret to apply: our keys, type, labels and annotations, the owner reference for
/// `creationPolicy: Owner`. Everything else in an existing Secret belongs to other managers
/// and is left alone by the apply.
pub fn desired_secret(es: &ExternalSecret, data: &SecretData) -> Result<Secret, RenderError> {
    let template = es.spec.target.template.as_ref();
    if let Some(template) = template {
        if !template.data.is_empty() {
            return Err(RenderError::Unsupported(
                "spec.target.template.data: templating is not supported by this build yet".into(),
            ));
        }
        if !template.template_from.is_empty() {
            return Err(RenderError::Unsupported(
                "spec.target.template.templateFrom: templating is not supported by this build yet"
                    .into(),
            ));
        }
    }
    let metadata = template.and_then(|t| t.metadata.as_ref());
    let mut labels: BTreeMap<String, String> =
        metadata.map(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(LABEL_MANAGED.to_owned(), "true".to_owned());
    let mut annotations: BTreeMap<String, String> =
        metadata.map(|m| m.annotations.clone()).unwrap_or_default();
    annotations.insert(
        ANNOTATION_DATA_HASH.to_owned(),
        data_hash(data.iter().map(|(k, v)| (k, v.as_slice()))),
    );
    let owner_references = matches!(
        es.spec.target.creation_policy,
        ExternalSecretCreationPolicy::Owner
    )
    .then(|| owner_reference(es))
    .flatten()
    .map(|owner| vec![owner]);
    let merge = matches!(
        es.spec.target.creation_policy,
        ExternalSecretCreationPolicy::Merge
    );
    Ok(Secret {
        metadata: ObjectMeta {
            name: Some(target_name(es)),
            namespace: es.namespace(),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references,
            ..ObjectMeta::default()
        },
        // Merging into someone else's Secret must not claim its type.
        type_: (!merge).then(|| {
            template
                .and_then(|t| t.r#type.clone())
                .unwrap_or_else(|| "Opaque".to_owned())
        }),
        immutable: es.spec.target.immutable.filter(|immutable| *immutable),
        data: Some(
            data.iter()
                .map(|(key, value)| (key.clone(), ByteString(value.clone())))
                .collect(),
        ),
        ..Secret::default()
    })
}

fn owner_reference(es: &ExternalSecret) -> Option<OwnerReference> {
    let mut owner = es.controller_owner_ref(&())?;
    owner.block_owner_deletion = Some(true);
    Some(owner)
}

/// Whether `existing` already holds what `desired` would write: our keys with our values,
/// our labels, annotations, owner and type. Then nothing is written.
pub fn is_up_to_date(existing: &Secret, desired: &Secret) -> bool {
    let existing_data = existing.data.clone().unwrap_or_default();
    let data_matches = desired
        .data
        .iter()
        .flatten()
        .all(|(key, value)| existing_data.get(key) == Some(value));
    let contains = |have: &Option<BTreeMap<String, String>>,
                    want: &Option<BTreeMap<String, String>>| {
        want.iter()
            .flatten()
            .all(|(key, value)| have.as_ref().and_then(|h| h.get(key)) == Some(value))
    };
    let owners_match = desired
        .metadata
        .owner_references
        .iter()
        .flatten()
        .all(|want| {
            existing
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|have| have.uid == want.uid && have.controller == Some(true))
        });
    let type_matches = desired.type_.is_none() || desired.type_ == existing.type_;
    data_matches
        && contains(&existing.metadata.labels, &desired.metadata.labels)
        && contains(
            &existing.metadata.annotations,
            &desired.metadata.annotations,
        )
        && owners_match
        && type_matches
}

/// Upstream's `isSecretValid`: the target exists, carries the managed label, and its data
/// still hashes to the annotation we wrote (nobody edited it since).
pub fn is_valid(existing: Option<&Secret>, es: &ExternalSecret) -> bool {
    if matches!(
        es.spec.target.creation_policy,
        ExternalSecretCreationPolicy::None
    ) {
        return true;
    }
    let Some(existing) = existing else {
        return false;
    };
    let labels = existing.metadata.labels.as_ref();
    if labels
        .and_then(|l| l.get(LABEL_MANAGED))
        .map(String::as_str)
        != Some("true")
    {
        return false;
    }
    let Some(recorded) = existing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANNOTATION_DATA_HASH))
    else {
        return false;
    };
    // With Merge, other managers' keys are in the Secret too: only ours were hashed, and we
    // cannot tell them apart without the provider data; the annotation's presence suffices.
    if matches!(
        es.spec.target.creation_policy,
        ExternalSecretCreationPolicy::Merge
    ) {
        return true;
    }
    let data = existing.data.clone().unwrap_or_default();
    *recorded == data_hash(data.iter().map(|(k, v)| (k, v.0.as_slice())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn es(policy: &str) -> ExternalSecret {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {"name": "db", "namespace": "team", "uid": "u-1"},
            "spec": {
                "secretStoreRef": {"name": "s"},
                "target": {"creationPolicy": policy, "template": {
                    "type": "kubernetes.io/basic-auth",
                    "metadata": {"labels": {"team": "a"}},
                }},
            },
        }))
        .unwrap()
    }

    fn data() -> SecretData {
        [("password".to_owned(), b"s3cret".to_vec())].into()
    }

    #[test]
    fn owner_policy_renders_an_owned_managed_secret() {
        let secret = desired_secret(&es("Owner"), &data()).unwrap();
        assert_eq!(secret.metadata.name.as_deref(), Some("db"));
        assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/basic-auth"));
        let labels = secret.metadata.labels.clone().unwrap();
        assert_eq!(labels[LABEL_MANAGED], "true");
        assert_eq!(labels["team"], "a");
        let owner = &secret.metadata.owner_references.clone().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.controller),
            ("ExternalSecret", "db", Some(true))
        );
        assert!(is_up_to_date(&secret, &secret));
        assert!(is_valid(Some(&secret), &es("Owner")));
    }

    #[test]
    fn an_edited_secret_is_neither_valid_nor_up_to_date() {
        let desired = desired_secret(&es("Owner"), &data()).unwrap();
        let mut edited = desired.clone();
        edited
            .data
            .as_mut()
            .unwrap()
            .insert("password".into(), ByteString(b"tampered".to_vec()));
        assert!(!is_valid(Some(&edited), &es("Owner")));
        assert!(!is_up_to_date(&edited, &desired));
        assert!(!is_valid(None, &es("Owner")));
        assert!(is_valid(None, &es("None")));
    }

    #[test]
    fn merge_and_orphan_do_not_own_and_merge_keeps_the_type() {
        let merged = desired_secret(&es("Merge"), &data()).unwrap();
        assert_eq!(merged.metadata.owner_references, None);
        assert_eq!(merged.type_, None);
        let orphan = desired_secret(&es("Orphan"), &data()).unwrap();
        assert_eq!(orphan.metadata.owner_references, None);
        assert!(orphan.type_.is_some());
    }

    #[test]
    fn templates_with_data_are_refused_with_the_field_named() {
        let mut es = es("Owner");
        es.spec.target.template.as_mut().unwrap().data =
            [("url".to_owned(), "{{ .password }}".to_owned())].into();
        let error = desired_secret(&es, &data()).unwrap_err().to_string();
        assert!(error.starts_with("spec.target.template.data:"), "{error}");
    }

    #[test]
    fn hash_depends_on_keys_and_values() {
        let a = data_hash([(&"k".to_owned(), b"v".as_slice())]);
        let b = data_hash([(&"k".to_owned(), b"w".as_slice())]);
        let c = data_hash([(&"kv".to_owned(), b"".as_slice())]);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, data_hash([(&"k".to_owned(), b"v".as_slice())]));
    }
}
