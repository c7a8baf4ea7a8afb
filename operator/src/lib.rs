//! The installer operator: reconciles `ExternalSecretsConfig`/`ExternalSecretsManager`
//! (`operator.openshift.io/v1alpha1`, OpenShift's external-secrets-operator API) into an install
//! of the external-secrets operand, built from our Helm chart's rendered manifests.

pub mod api;
pub mod controller;
pub mod desired;
pub mod kinds;
pub mod metrics;
pub mod operand;
