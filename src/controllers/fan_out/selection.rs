//! Which namespaces a cluster template selects and which copies are its own, decided without
//! I/O.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::core::PartialObjectMeta;

use super::ClusterTemplate;

/// The namespaces `template` selects, sorted; terminating ones are left out so nothing is
/// created in a namespace on its way out.
pub fn target_namespaces<'a, T: ClusterTemplate>(
    template: &T,
    namespaces: impl IntoIterator<Item = &'a PartialObjectMeta<Namespace>>,
) -> Vec<String> {
    let mut selected: Vec<String> = namespaces
        .into_iter()
        .filter(|namespace| namespace.metadata.deletion_timestamp.is_none())
        .filter(|namespace| template.selects(&namespace.name_any(), namespace.labels()))
        .map(|namespace| namespace.name_any())
        .collect();
    selected.sort();
    selected.dedup();
    selected
}

/// Whether `metadata` belongs to an object controlled by the template of kind `T` named
/// `name` (any version of its group).
pub fn is_owned_by<T: ClusterTemplate>(metadata: &ObjectMeta, name: &str) -> bool {
    let group = format!("{}/", T::group(&()));
    metadata.owner_references.iter().flatten().any(|owner| {
        owner.controller == Some(true)
            && owner.kind == T::kind(&())
            && owner.api_version.starts_with(&group)
            && owner.name == name
    })
}
