//! The target Secret an ExternalSecret produces: its desired content (server-side applied by
//! the ExternalSecret's own field manager) and whether an existing Secret already is that.

use std::collections::BTreeSet;

use external_secrets_crds::v1::{ExternalSecret, ExternalSecretCreationPolicy};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{Resource, ResourceExt};

use crate::controllers::hash::{data_hash, owner_label};
use crate::controllers::metadata::{applied_keys, owns_exactly};
use crate::controllers::template::{self, SecretData, TemplateSources};

/// Upstream's label marking Secrets an ExternalSecret manages.
pub const LABEL_MANAGED: &str = "reconcile.external-secrets.io/managed";
/// Upstream's annotation holding the hash of the data the controller wrote.
pub const ANNOTATION_DATA_HASH: &str = "reconcile.external-secrets.io/data-hash";

/// Upstream's label on targets an ExternalSecret owns (`creationPolicy: Owner`), holding
/// [`owner_label`](crate::controllers::hash::owner_label) of the ExternalSecret.
pub const LABEL_OWNER: &str = "reconcile.external-secrets.io/created-by";

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
    /// `spec.target.template` failed (upstream's `could not execute template` prefix).
    #[error("could not execute template: {0}")]
    Template(#[from] template::Error),
}

/// The Secret to apply: our keys, type, labels and annotations, the owner reference for
/// `creationPolicy: Owner`. Everything else in an existing Secret belongs to other managers
/// and is left alone by the apply; the data-hash annotation covers the data the Secret will
/// hold after the apply (theirs and ours), as upstream's does.
pub fn desired_secret(
    es: &ExternalSecret,
    data: &SecretData,
    existing: Option<&Secret>,
    sources: &TemplateSources,
) -> Result<Secret, RenderError> {
    let template = es.spec.target.template.as_ref();
    let rendered = match template {
        Some(template) => template::apply(template, data, sources)?,
        None => template::Rendered {
            data: data.clone(),
            ..Default::default()
        },
    };
    let data = &rendered.data;
    // Upstream's `setMetadata`: without a template the ExternalSecret's own labels and
    // annotations are copied to the Secret; with one, the template's (rendered) instead.
    let (mut labels, mut annotations) = match template {
        Some(_) => (rendered.labels.clone(), rendered.annotations.clone()),
        None => (es.labels().clone(), es.annotations().clone()),
    };
    labels.insert(LABEL_MANAGED.to_owned(), "true".to_owned());
    if es.spec.target.creation_policy == ExternalSecretCreationPolicy::Owner {
        let namespace = es.namespace().unwrap_or_default();
        labels.insert(
            LABEL_OWNER.to_owned(),
            owner_label(&namespace, &es.name_any()),
        );
    }
    let resulting = resulting_data(es, data, existing);
    annotations.insert(
        ANNOTATION_DATA_HASH.to_owned(),
        data_hash(resulting.iter().map(|(k, v)| (k, v.as_slice()))),
    );
    let owner_references = matches!(
        es.spec.target.creation_policy,
        ExternalSecretCreationPolicy::Owner
    )
    .then(|| owner_reference(es))
    .flatten()
    .map(|owner| vec![owner]);
    // CreateOrMerge merges into a Secret that exists and creates one (like Orphan) otherwise.
    let merge = match es.spec.target.creation_policy {
        ExternalSecretCreationPolicy::Merge => true,
        ExternalSecretCreationPolicy::CreateOrMerge => existing.is_some(),
        _ => false,
    };
    Ok(Secret {
        metadata: ObjectMeta {
            name: Some(target_name(es)),
            namespace: es.namespace(),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references,
            finalizers: template_finalizers(es, existing),
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

/// `template.metadata.finalizers`, added as upstream's `setMetadata` adds them: not to a
/// Secret that is being deleted.
fn template_finalizers(es: &ExternalSecret, existing: Option<&Secret>) -> Option<Vec<String>> {
    if existing.is_some_and(|secret| secret.metadata.deletion_timestamp.is_some()) {
        return None;
    }
    let finalizers = &es
        .spec
        .target
        .template
        .as_ref()?
        .metadata
        .as_ref()?
        .finalizers;
    (!finalizers.is_empty()).then(|| finalizers.clone())
}

/// The data `existing` will hold once we applied `data`: its keys owned by other managers,
/// plus ours (keys we applied before and no longer send are dropped by the apply).
fn resulting_data(es: &ExternalSecret, data: &SecretData, existing: Option<&Secret>) -> SecretData {
    let Some(existing) = existing else {
        return data.clone();
    };
    let ours = owned_data_keys(existing, &field_manager(es));
    let mut resulting: SecretData = existing
        .data
        .iter()
        .flatten()
        .filter(|(key, _)| !ours.contains(*key))
        .map(|(key, value)| (key.clone(), value.0.clone()))
        .collect();
    resulting.extend(data.iter().map(|(key, value)| (key.clone(), value.clone())));
    resulting
}

/// The `data` keys `manager` owns by server-side apply, from the Secret's managedFields.
fn owned_data_keys(secret: &Secret, manager: &str) -> BTreeSet<String> {
    applied_keys(&secret.metadata, manager, &["f:data"])
}

/// The name of another ExternalSecret controlling a target with `references`, if any
/// (upstream refuses to fight over a target).
pub fn other_external_secret_owner(
    references: &[OwnerReference],
    es: &ExternalSecret,
) -> Option<String> {
    references
        .iter()
        .find(|owner| {
            owner.controller == Some(true)
                && owner.kind == "ExternalSecret"
                && owner.api_version.starts_with("external-secrets.io/")
                && owner.name != es.name_any()
        })
        .map(|owner| owner.name.clone())
}

fn owner_reference(es: &ExternalSecret) -> Option<OwnerReference> {
    let mut owner = es.controller_owner_ref(&())?;
    owner.block_owner_deletion = Some(true);
    Some(owner)
}

/// Whether `existing` already holds what `desired` would write as `es`'s field manager: our
/// keys with our values, our labels, annotations, finalizers, owner and type, and nothing we
/// applied before and no longer send (see [`owns_exactly`]). Then nothing is written.
pub fn is_up_to_date(existing: &Secret, desired: &Secret, es: &ExternalSecret) -> bool {
    let manager = field_manager(es);
    let existing_data = existing.data.clone().unwrap_or_default();
    let desired_data = desired.data.clone().unwrap_or_default();
    let data_matches = desired_data
        .iter()
        .all(|(key, value)| existing_data.get(key) == Some(value))
        && owned_data_keys(existing, &manager)
            .iter()
            .all(|key| desired_data.contains_key(key));
    let type_matches = desired.type_.is_none() || desired.type_ == existing.type_;
    data_matches && owns_exactly(&existing.metadata, &desired.metadata, &manager) && type_matches
}

/// Upstream's `isSecretValid`: the target exists, carries the managed label, and its data
/// still hashes to the annotation we wrote (nobody edited it since).
pub fn is_valid(existing: Option<&Secret>, es: &ExternalSecret) -> bool {
    // Orphaned targets are not repaired, as upstream; None never writes one.
    if matches!(
        es.spec.target.creation_policy,
        ExternalSecretCreationPolicy::None | ExternalSecretCreationPolicy::Orphan
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
        let secret =
            desired_secret(&es("Owner"), &data(), None, &TemplateSources::default()).unwrap();
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
        assert!(is_up_to_date(&secret, &secret, &es("Owner")));
        assert!(is_valid(Some(&secret), &es("Owner")));
    }

    #[test]
    fn an_edited_secret_is_neither_valid_nor_up_to_date() {
        let desired =
            desired_secret(&es("Owner"), &data(), None, &TemplateSources::default()).unwrap();
        let mut edited = desired.clone();
        edited
            .data
            .as_mut()
            .unwrap()
            .insert("password".into(), ByteString(b"tampered".to_vec()));
        assert!(!is_valid(Some(&edited), &es("Owner")));
        assert!(!is_up_to_date(&edited, &desired, &es("Owner")));
        assert!(!is_valid(None, &es("Owner")));
        assert!(is_valid(None, &es("None")));
        assert!(
            is_valid(Some(&edited), &es("Orphan")),
            "Orphan targets are not repaired"
        );
    }

    #[test]
    fn merge_and_orphan_do_not_own_and_merge_keeps_the_type() {
        let merged =
            desired_secret(&es("Merge"), &data(), None, &TemplateSources::default()).unwrap();
        assert_eq!(merged.metadata.owner_references, None);
        assert_eq!(merged.type_, None);
        let orphan =
            desired_secret(&es("Orphan"), &data(), None, &TemplateSources::default()).unwrap();
        assert_eq!(orphan.metadata.owner_references, None);
        assert!(orphan.type_.is_some());
    }

    #[test]
    fn create_or_merge_creates_like_orphan_and_merges_like_merge() {
        let none = TemplateSources::default();
        let created = desired_secret(&es("CreateOrMerge"), &data(), None, &none).unwrap();
        assert_eq!(created.metadata.owner_references, None);
        assert_eq!(created.type_.as_deref(), Some("kubernetes.io/basic-auth"));
        let existing: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "db"}, "type": "kubernetes.io/tls",
            "data": {"tls.crt": "Y2VydA=="},
        }))
        .unwrap();
        let merged = desired_secret(&es("CreateOrMerge"), &data(), Some(&existing), &none).unwrap();
        assert_eq!(merged.metadata.owner_references, None);
        assert_eq!(merged.type_, None, "the existing Secret keeps its type");
        assert!(
            !is_valid(None, &es("CreateOrMerge")),
            "a deleted target is recreated"
        );
    }

    #[test]
    fn templates_render_into_the_secret_and_the_hash() {
        let mut es = es("Owner");
        es.spec.target.template.as_mut().unwrap().data =
            [("url".to_owned(), "https://u:{{ .password }}@h".to_owned())].into();
        let secret = desired_secret(&es, &data(), None, &TemplateSources::default()).unwrap();
        let written = secret.data.clone().unwrap();
        assert_eq!(written["url"].0, b"https://u:s3cret@h");
        assert!(!written.contains_key("password"));
        assert!(is_valid(Some(&secret), &es));
        es.spec.target.template.as_mut().unwrap().data =
            [("url".to_owned(), "{{ .missing }}".to_owned())].into();
        let error = desired_secret(&es, &data(), None, &TemplateSources::default())
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("could not execute template: unable to execute template at key url"),
            "{error}"
        );
    }

    #[test]
    fn merged_secret_hash_covers_other_managers_keys_but_not_our_dropped_ones() {
        let es = es("Merge");
        let existing: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "db", "managedFields": [{
                "manager": field_manager(&es),
                "operation": "Apply",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:old": {}, "f:password": {}}},
            }]},
            "data": {"theirs": "a2VwdA==", "old": "Z29uZQ==", "password": "b2xk"},
        }))
        .unwrap();
        let desired =
            desired_secret(&es, &data(), Some(&existing), &TemplateSources::default()).unwrap();
        let expected: SecretData = [
            ("password".to_owned(), b"s3cret".to_vec()),
            ("theirs".to_owned(), b"kept".to_vec()),
        ]
        .into();
        assert_eq!(
            desired.metadata.annotations.unwrap()[ANNOTATION_DATA_HASH],
            data_hash(expected.iter().map(|(k, v)| (k, v.as_slice())))
        );
    }

    /// Upstream `setMetadata` (externalsecret_controller_template.go) and the tests
    /// "syncLabelsAnnotations" / "removeOutdatedLabelsAnnotations"
    /// (externalsecret_controller_test.go): without a template the ExternalSecret's labels and
    /// annotations go to the Secret; with one, only the template's, and its finalizers.
    #[test]
    fn metadata_comes_from_the_external_secret_without_a_template() {
        let mut plain = es("Owner");
        plain.spec.target.template = None;
        plain.metadata.labels = Some([("labelKey".into(), "labelValue".into())].into());
        plain.metadata.annotations =
            Some([("annotationKey".into(), "annotationValue".into())].into());
        let none = TemplateSources::default();
        let secret = desired_secret(&plain, &data(), None, &none).unwrap();
        let labels = secret.metadata.labels.clone().unwrap();
        let annotations = secret.metadata.annotations.clone().unwrap();
        assert_eq!(labels["labelKey"], "labelValue");
        assert_eq!(labels[LABEL_MANAGED], "true");
        assert_eq!(annotations["annotationKey"], "annotationValue");
        assert!(annotations.contains_key(ANNOTATION_DATA_HASH));
        assert_eq!(secret.metadata.finalizers, None);

        // With a template the ExternalSecret's own metadata is not copied.
        let mut templated = es("Owner");
        templated.metadata.labels = plain.metadata.labels.clone();
        let metadata = templated.spec.target.template.as_mut().unwrap();
        metadata.metadata.as_mut().unwrap().finalizers = vec!["example.com/hold".into()];
        let secret = desired_secret(&templated, &data(), None, &none).unwrap();
        let labels = secret.metadata.labels.clone().unwrap();
        assert!(!labels.contains_key("labelKey"));
        assert_eq!(labels["team"], "a");
        assert_eq!(
            secret.metadata.finalizers,
            Some(vec!["example.com/hold".to_owned()])
        );
        // Not added to a Secret being deleted.
        let mut deleting = secret.clone();
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ));
        let again = desired_secret(&templated, &data(), Some(&deleting), &none).unwrap();
        assert_eq!(again.metadata.finalizers, None);
    }

    /// A label this ExternalSecret applied and no longer wants makes the target stale, so the
    /// next apply removes it (upstream "removeOutdatedLabelsAnnotations").
    #[test]
    fn a_label_we_applied_and_dropped_makes_the_target_stale() {
        let es = es("Owner");
        let none = TemplateSources::default();
        let desired = desired_secret(&es, &data(), None, &none).unwrap();
        let mut existing = desired.clone();
        existing
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("old".into(), "1".into());
        assert!(
            is_up_to_date(&existing, &desired, &es),
            "someone else's label"
        );
        existing.metadata.managed_fields = Some(vec![
            serde_json::from_value(serde_json::json!({
                "manager": field_manager(&es),
                "operation": "Apply",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {"f:old": {}, "f:team": {}}}},
            }))
            .unwrap(),
        ]);
        assert!(
            !is_up_to_date(&existing, &desired, &es),
            "ours, no longer wanted"
        );
    }
}
