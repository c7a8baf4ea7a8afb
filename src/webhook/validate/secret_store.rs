//! SecretStore and ClusterSecretStore admission checks, as upstream's `validateStore`: the
//! namespace regular expressions of `spec.conditions` compile, `spec.refreshInterval` is a
//! non-negative number of seconds or Go duration, and `spec.provider` names exactly one
//! provider this build serves, configured as that provider requires (the provider's own
//! static validation, through the providers' registry).

use external_secrets_crds::v1::SecretStoreSpec;
use external_secrets_providers::registry::Backend;
use external_secrets_providers::store::StoreId;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::common::{self, Problems};

/// Checks a store's `spec`; `store` says which kind it is (some provider rules differ).
pub fn check_spec(store: &StoreId, spec: &SecretStoreSpec, problems: &mut Problems) {
    for (index, condition) in spec.conditions.iter().enumerate() {
        let field = format!("spec.conditions[{index}]");
        for (position, pattern) in condition.namespace_regexes.iter().enumerate() {
            common::regex(
                &format!("{field}.namespaceRegexes[{position}]"),
                pattern,
                problems,
            );
        }
        if let Some(selector) = &condition.namespace_selector {
            common::label_selector(&format!("{field}.namespaceSelector"), selector, problems);
        }
    }
    refresh_interval(spec.refresh_interval.as_ref(), problems);
    match Backend::of(&spec.provider) {
        Ok(backend) => {
            if let Err(error) = backend.validate(store) {
                problems.add(format!("spec.provider.{}", backend.name()), error);
            }
        }
        Err(error) => problems.add("spec.provider", error),
    }
}

/// The admission warnings for the store `name`, in upstream's order (`validateStore` in
/// secretstore_validator.go): the provider's own (its `ValidateStore` warnings), then
/// `warnStoreUnmaintained` when upstream marks the provider unmaintained (the ignore
/// annotation only silences the controller's event, not this warning, as upstream).
pub fn warnings(name: &str, spec: &SecretStoreSpec) -> Vec<String> {
    let Ok(backend) = Backend::of(&spec.provider) else {
        return Vec::new();
    };
    let mut warnings = backend.admission_warnings();
    if !backend.maintained() {
        warnings.push(format!(
            "store {name} isn't currently maintained. Please plan and prepare accordingly."
        ));
    }
    warnings
}

/// Seconds (legacy integer form) or a Go duration, never negative.
fn refresh_interval(interval: Option<&IntOrString>, problems: &mut Problems) {
    const FIELD: &str = "spec.refreshInterval";
    match interval {
        Some(IntOrString::Int(seconds)) if *seconds < 0 => problems.add(
            FIELD,
            format!("invalid refreshInterval {seconds}: must not be negative"),
        ),
        Some(IntOrString::String(text)) => common::go_duration(FIELD, text, problems),
        _ => {}
    }
}
