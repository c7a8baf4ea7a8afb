//! ExternalSecret admission checks: upstream's `validateExternalSecret` (policies, data or
//! dataFrom, dataFrom sources, privileged templates, templateFrom targets, duplicate keys),
//! plus what the controller would otherwise only find at the next sync: the refresh interval,
//! regular expressions and templates.

use std::collections::BTreeSet;

use external_secrets_crds::v1::{
    ExternalSecretCreationPolicy as Creation, ExternalSecretDataFromRemoteRef,
    ExternalSecretDeletionPolicy as Deletion, ExternalSecretSpec, ExternalSecretTarget,
    ExternalSecretTemplate,
};

use super::common::{self, Problems};

/// The Secret type of service account tokens, which the API server fills in.
const SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
/// The annotation naming the service account a token Secret is for.
const SERVICE_ACCOUNT_NAME: &str = "kubernetes.io/service-account.name";
/// The Secret type of bootstrap tokens.
const BOOTSTRAP_TOKEN: &str = "bootstrap.kubernetes.io/token";

/// Checks an ExternalSecret's `spec`, reporting fields under `path` (`spec`, or
/// `spec.externalSecretSpec` for a ClusterExternalSecret).
pub fn check_spec(path: &str, spec: &ExternalSecretSpec, problems: &mut Problems) {
    policies(&format!("{path}.target"), &spec.target, problems);
    if spec.data.is_empty() && spec.data_from.is_empty() {
        problems.add(path, "either data or dataFrom should be specified");
    }
    common::go_duration(
        &format!("{path}.refreshInterval"),
        &spec.refresh_interval,
        problems,
    );
    if let Some(template) = &spec.target.template {
        let field = format!("{path}.target.template");
        privileged_template(&field, template, problems);
        if targets_secret(&spec.target) {
            template_from_targets(&field, template, problems);
        }
        common::template_sources(&field, template, problems);
    }
    for (index, data_from) in spec.data_from.iter().enumerate() {
        check_data_from(&format!("{path}.dataFrom[{index}]"), data_from, problems);
    }
    duplicate_keys(path, spec, problems);
}

/// deletionPolicy=Delete needs a Secret the controller owns; Merge needs a Secret at all.
fn policies(field: &str, target: &ExternalSecretTarget, problems: &mut Problems) {
    match (target.deletion_policy, target.creation_policy) {
        (Deletion::Delete, Creation::Merge | Creation::None | Creation::CreateOrMerge) => {
            problems.add(
                field,
                "deletionPolicy=Delete must not be used when the controller doesn't own the \
                 secret. Please set creationPolicy=Owner",
            );
        }
        (Deletion::Merge, Creation::None) => problems.add(
            field,
            "deletionPolicy=Merge must not be used with creationPolicy=None. There is no Secret \
             to merge with",
        ),
        _ => {}
    }
}

/// Templates must not make the API server mint tokens beyond the author's RBAC: no service
/// account token Secret naming its account, no bootstrap token.
pub fn privileged_template(
    field: &str,
    template: &ExternalSecretTemplate,
    problems: &mut Problems,
) {
    match template.r#type.as_deref() {
        Some(SERVICE_ACCOUNT_TOKEN) => {
            let named = template
                .metadata
                .as_ref()
                .is_some_and(|metadata| metadata.annotations.contains_key(SERVICE_ACCOUNT_NAME));
            if named {
                problems.add(
                    format!("{field}.metadata.annotations"),
                    format!(
                        "template.type={SERVICE_ACCOUNT_TOKEN:?} with annotation \
                         {SERVICE_ACCOUNT_NAME:?} is not allowed"
                    ),
                );
            }
            for (index, from) in template.template_from.iter().enumerate() {
                if from.target.eq_ignore_ascii_case("Annotations") {
                    problems.add(
                        format!("{field}.templateFrom[{index}].target"),
                        format!(
                            "template.type={SERVICE_ACCOUNT_TOKEN:?} with templateFrom \
                             target=\"Annotations\" is not allowed"
                        ),
                    );
                }
            }
        }
        Some(BOOTSTRAP_TOKEN) => problems.add(
            format!("{field}.type"),
            format!("template.type={BOOTSTRAP_TOKEN:?} is not allowed"),
        ),
        _ => {}
    }
}

/// Whether the ExternalSecret renders into a core/v1 Secret (the default target).
fn targets_secret(target: &ExternalSecretTarget) -> bool {
    target
        .manifest
        .as_ref()
        .is_none_or(|manifest| manifest.api_version == "v1" && manifest.kind == "Secret")
}

/// For Secrets, templateFrom may only write data, labels and annotations: any other target is
/// a path into the Secret (`type`, `immutable`, ownerReferences...) that would sidestep the
/// privileged-template rules.
fn template_from_targets(field: &str, template: &ExternalSecretTemplate, problems: &mut Problems) {
    for (index, from) in template.template_from.iter().enumerate() {
        let allowed = from.target.is_empty()
            || ["Data", "Annotations", "Labels"]
                .iter()
                .any(|known| from.target.eq_ignore_ascii_case(known));
        if !allowed {
            problems.add(
                format!("{field}.templateFrom[{index}].target"),
                format!(
                    "templateFrom target={:?} is not allowed when targeting a Secret, must be \
                     one of \"Data\", \"Annotations\" or \"Labels\"",
                    from.target
                ),
            );
        }
    }
}

/// One dataFrom entry: exactly one source, and its expressions must compile.
fn check_data_from(
    field: &str,
    data_from: &ExternalSecretDataFromRemoteRef,
    problems: &mut Problems,
) {
    let generator = data_from
        .source_ref
        .as_ref()
        .is_some_and(|source| source.generator_ref.is_some());
    let sources = [
        data_from.extract.is_some(),
        data_from.find.is_some(),
        generator,
    ];
    if sources.into_iter().filter(|set| *set).count() > 1 {
        problems.add(
            field,
            "extract, find, or generatorRef cannot be set at the same time",
        );
    }
    if data_from.extract.is_none() && data_from.find.is_none() && data_from.source_ref.is_none() {
        problems.add(
            field,
            "either extract, find, or sourceRef must be set to dataFrom",
        );
    }
    if let Some(source) = &data_from.source_ref
        && source.generator_ref.is_none()
        && source.store_ref.is_none()
    {
        problems.add(
            format!("{field}.sourceRef"),
            "generatorRef or storeRef must be set when using sourceRef in dataFrom",
        );
    }
    if let Some(pattern) = data_from
        .find
        .as_ref()
        .and_then(|find| find.name.as_ref())
        .and_then(|name| name.regexp.as_deref())
    {
        common::regex(&format!("{field}.find.name.regexp"), pattern, problems);
    }
    for (index, rewrite) in data_from.rewrite.iter().enumerate() {
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

/// With deletionPolicy=Retain, two `data` entries may not write the same key (upstream checks
/// this for Retain only).
fn duplicate_keys(path: &str, spec: &ExternalSecretSpec, problems: &mut Problems) {
    if spec.target.deletion_policy != Deletion::Retain {
        return;
    }
    let mut seen = BTreeSet::new();
    for (index, data) in spec.data.iter().enumerate() {
        if !seen.insert(data.secret_key.as_str()) {
            problems.add(
                format!("{path}.data[{index}].secretKey"),
                format!("duplicate secretKey found: {}", data.secret_key),
            );
        }
    }
}
