//! Adding or removing one finalizer on an object: PushSecrets, stores kept while PushSecrets
//! still have to delete through them, and the namespaces a ClusterExternalSecret provisions.
//! The whole list is written with the resourceVersion seen, so a finalizer another
//! controller added in between is never lost: the write conflicts and the reconcile retries.

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde_json::json;

/// The finalizer list `meta` should have for `name` to be `present`; `None` when it already
/// has it (nothing to write).
pub fn updated(meta: &ObjectMeta, name: &str, present: bool) -> Option<Vec<String>> {
    let current = meta.finalizers.as_deref().unwrap_or_default();
    if current.iter().any(|finalizer| finalizer == name) == present {
        return None;
    }
    let mut next: Vec<String> = current
        .iter()
        .filter(|finalizer| *finalizer != name)
        .cloned()
        .collect();
    if present {
        next.push(name.to_owned());
    }
    Some(next)
}

/// Makes finalizer `name` `present` (or absent) on the object `meta` describes, through `api`;
/// no request when it already is. A namespace or object gone meanwhile is not an error.
pub async fn set<K>(
    api: &Api<K>,
    meta: &ObjectMeta,
    name: &str,
    present: bool,
) -> Result<(), kube::Error>
where
    K: Clone + DeserializeOwned + Debug,
{
    let Some(finalizers) = updated(meta, name, present) else {
        return Ok(());
    };
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": meta.resource_version,
    }});
    let object = meta.name.as_deref().unwrap_or_default();
    match api
        .patch(object, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Err(kube::Error::Api(status)) if status.code == 404 && !present => Ok(()),
        result => result.map(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(finalizers: &[&str]) -> ObjectMeta {
        ObjectMeta {
            finalizers: Some(finalizers.iter().map(|f| (*f).to_owned()).collect()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn adding_keeps_the_other_finalizers_and_appends_ours() {
        assert_eq!(
            updated(&meta(&["kubernetes"]), "ours", true),
            Some(vec!["kubernetes".to_owned(), "ours".to_owned()])
        );
    }

    #[test]
    fn removing_keeps_the_other_finalizers() {
        assert_eq!(
            updated(&meta(&["a", "ours", "b"]), "ours", false),
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
    }

    #[test]
    fn nothing_is_written_when_the_list_already_says_it() {
        assert_eq!(updated(&meta(&["ours"]), "ours", true), None);
        assert_eq!(updated(&meta(&["other"]), "ours", false), None);
        assert_eq!(updated(&ObjectMeta::default(), "ours", false), None);
    }
}
