//! PushSecret admission checks (upstream has no PushSecret webhook): the static parts of what
//! upstream's PushSecret controller rejects at sync time, so mistakes fail at `kubectl apply`.
//! Store references need a name or a label selector, the source is one Secret (by name or
//! selector) or one generator, `dataTo` entries reference listed stores, no two `data` entries
//! push to the same remote key and property, and expressions and templates compile.

use std::collections::BTreeMap;

use external_secrets_crds::v1alpha1::{PushSecretDataTo, PushSecretSpec, PushSecretStoreRef};

use super::common::{self, Problems};
use crate::stores::is_listed;

/// Checks a PushSecret's `spec`.
pub fn check_spec(spec: &PushSecretSpec, problems: &mut Problems) {
    common::go_duration("spec.refreshInterval", &spec.refresh_interval, problems);
    for (index, store_ref) in spec.secret_store_refs.iter().enumerate() {
        store_reference(
            &format!("spec.secretStoreRefs[{index}]"),
            store_ref,
            problems,
        );
    }
    selector(spec, problems);
    remote_key_uniqueness(spec, problems);
    for (index, data_to) in spec.data_to.iter().enumerate() {
        check_data_to(&format!("spec.dataTo[{index}]"), data_to, spec, problems);
    }
    if let Some(template) = &spec.template {
        common::template_sources("spec.template", template, problems);
    }
}

/// A store reference names a store or selects stores by label.
fn store_reference(field: &str, store_ref: &PushSecretStoreRef, problems: &mut Problems) {
    match (&store_ref.name, &store_ref.label_selector) {
        (None, None) => problems.add(field, "name or labelSelector is required"),
        (_, Some(selector)) => {
            common::label_selector(&format!("{field}.labelSelector"), selector, problems);
        }
        (Some(_), None) => {}
    }
}

/// The source: one Secret (by name or label selector) or one generator.
fn selector(spec: &PushSecretSpec, problems: &mut Problems) {
    let selector = &spec.selector;
    match (&selector.secret, &selector.generator_ref) {
        (Some(_), Some(_)) | (None, None) => problems.add(
            "spec.selector",
            "exactly one of secret or generatorRef must be set",
        ),
        (Some(secret), None) => match (&secret.name, &secret.selector) {
            (None, None) => problems.add("spec.selector.secret", "name or selector is required"),
            (_, Some(labels)) => {
                common::label_selector("spec.selector.secret.selector", labels, problems);
            }
            (Some(_), None) => {}
        },
        (None, Some(_)) => {}
    }
}

/// Two `data` entries may not push to the same remote key and property (upstream's
/// `validateRemoteKeyUniqueness`).
fn remote_key_uniqueness(spec: &PushSecretSpec, problems: &mut Problems) {
    let mut seen: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for (index, data) in spec.data.iter().enumerate() {
        let remote = &data.r#match.remote_ref;
        let property = remote.property.as_deref().unwrap_or_default();
        let source = data.r#match.secret_key.as_deref().unwrap_or_default();
        let location = (remote.remote_key.as_str(), property);
        if let Some(first) = seen.insert(location, source) {
            let destination = if property.is_empty() {
                format!("duplicate remote key {:?}", remote.remote_key)
            } else {
                format!(
                    "duplicate remote key {:?} with property {property:?}",
                    remote.remote_key
                )
            };
            problems.add(
                format!("spec.data[{index}].match.remoteRef"),
                format!(
                    "{destination}: source keys {first:?} and {source:?} both map to the same \
                     destination"
                ),
            );
        }
    }
}

/// A `dataTo` entry: a store reference from `secretStoreRefs`, and expressions that compile.
fn check_data_to(
    field: &str,
    data_to: &PushSecretDataTo,
    spec: &PushSecretSpec,
    problems: &mut Problems,
) {
    match &data_to.store_ref {
        None => problems.add(format!("{field}.storeRef"), "storeRef is required"),
        Some(store_ref) => {
            let store_field = format!("{field}.storeRef");
            store_reference(&store_field, store_ref, problems);
            if let Some(name) = &store_ref.name
                && !is_listed(name, store_ref.kind, &spec.secret_store_refs)
            {
                problems.add(
                    store_field,
                    format!("storeRef {name:?} not found in secretStoreRefs"),
                );
            }
        }
    }
    if let Some(pattern) = data_to.r#match.as_ref().and_then(|m| m.regexp.as_deref()) {
        common::regex(&format!("{field}.match.regexp"), pattern, problems);
    }
    for (index, rewrite) in data_to.rewrite.iter().enumerate() {
        let field = format!("{field}.rewrite[{index}]");
        if let Some(regexp) = &rewrite.regexp {
            common::regex(&format!("{field}.regexp.source"), &regexp.source, problems);
        }
        if let Some(transform) = &rewrite.transform {
            common::template(
                &format!("{field}.transform.template"),
                &transform.template,
                problems,
            );
        }
    }
}
