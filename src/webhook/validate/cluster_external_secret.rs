//! ClusterExternalSecret admission checks (upstream has no ClusterExternalSecret webhook): the
//! ExternalSecret it stamps out must pass the ExternalSecret checks, its refresh time must be a
//! Go duration and its namespace selectors valid, so one bad spec is not copied into every
//! namespace before anything complains.

use external_secrets_crds::v1::ClusterExternalSecretSpec;

use super::common::{self, Problems};
use super::external_secret;

/// Checks a ClusterExternalSecret's `spec`.
pub fn check_spec(spec: &ClusterExternalSecretSpec, problems: &mut Problems) {
    external_secret::check_spec(
        "spec.externalSecretSpec",
        &spec.external_secret_spec,
        problems,
    );
    if let Some(refresh_time) = &spec.refresh_time {
        common::go_duration("spec.refreshTime", refresh_time, problems);
    }
    if let Some(selector) = &spec.namespace_selector {
        common::label_selector("spec.namespaceSelector", selector, problems);
    }
    for (index, selector) in spec.namespace_selectors.iter().enumerate() {
        common::label_selector(
            &format!("spec.namespaceSelectors[{index}]"),
            selector,
            problems,
        );
    }
}
