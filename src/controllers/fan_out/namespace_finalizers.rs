//! The finalizer a template puts on every namespace it provisions (upstream's ClusterExternalSecret
//! `ces-<name>` finalizer), so the namespace is not deleted while its copy is being written, and
//! its removal: from terminating namespaces (their deletion proceeds), from namespaces no longer
//! selected (upstream leaves it there, which blocks a later deletion of that namespace for as
//! long as the template exists), and from all of them when the template goes. Decided from the
//! namespace watch cache, which the callers only read once it is synced.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kube::core::PartialObjectMeta;
use kube::{Api, ResourceExt};

use super::ClusterTemplate;
use crate::controllers::finalizers;

/// The finalizer `template` puts on its namespaces, if its kind uses one.
pub fn of<T: ClusterTemplate>(template: &T) -> Option<String> {
    T::NAMESPACE_FINALIZER_PREFIX.map(|prefix| format!("{prefix}{}", template.name_any()))
}

/// Adds `finalizer` to `namespace` unless it is there already (then no request).
pub async fn hold(
    client: &kube::Client,
    namespace: &PartialObjectMeta<Namespace>,
    finalizer: &str,
) -> Result<(), kube::Error> {
    let api: Api<Namespace> = Api::all(client.clone());
    finalizers::set(&api, &namespace.metadata, finalizer, true).await
}

/// Removes `finalizer` from every namespace carrying it whose name is not in `keep` (sorted);
/// the namespaces where removing failed, with the error.
pub async fn release_all_but(
    client: &kube::Client,
    namespaces: &[Arc<PartialObjectMeta<Namespace>>],
    finalizer: &str,
    keep: &[String],
) -> Vec<(String, kube::Error)> {
    let api: Api<Namespace> = Api::all(client.clone());
    let mut failed = Vec::new();
    for namespace in namespaces {
        let name = namespace.name_any();
        if keep.binary_search(&name).is_ok() {
            continue;
        }
        if let Err(error) = finalizers::set(&api, &namespace.metadata, finalizer, false).await {
            failed.push((name, error));
        }
    }
    failed
}
