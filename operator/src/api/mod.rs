//! The operator's API, `operator.openshift.io/v1alpha1`: `ExternalSecretsConfig` (how the operand
//! is installed) and `ExternalSecretsManager` (settings shared by every operand), field for field
//! as OpenShift's external-secrets-operator serves it, and the CRDs generated from the types.

mod common;
mod config;
mod crds;
mod manager;

pub use common::*;
pub use config::*;
pub use crds::{all_crds, manifests};
pub use manager::*;

/// The name both singletons must have (a CEL rule on each CRD says so).
pub const SINGLETON: &str = "cluster";
