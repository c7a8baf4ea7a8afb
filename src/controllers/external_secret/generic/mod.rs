//! Generic targets (`spec.target.manifest`): ConfigMaps and custom resources written instead
//! of a Secret, only with upstream's `--unsafe-allow-generic-targets` flag. The object is
//! built as upstream builds it ([`render`]), written with create/replace as upstream writes
//! it ([`sync`]), and watched (metadata only, our label only) for drift ([`watch`]). A
//! rendered object that would be a service-account token Secret is refused ([`candidate`]).

pub mod candidate;
mod error;
pub mod path;
pub mod render;
pub mod sync;
pub mod watch;

use std::collections::HashMap;
use std::sync::Mutex;

use external_secrets_crds::v1::ManifestReference;
use kube::core::{ApiResource, GroupVersionKind};

pub use error::GenericError;

/// The finalizer upstream puts on ExternalSecrets; here only those with a generic target
/// carry it, because only their cleanup (`deletionPolicy: Delete`) is not done by the
/// garbage collector.
pub const FINALIZER: &str = "externalsecrets.external-secrets.io/externalsecret-cleanup";

/// Generic-target state shared by the ExternalSecret reconciles.
pub struct GenericTargets {
    /// Whether `--unsafe-allow-generic-targets` is set.
    pub allowed: bool,
    /// API resources of the kinds seen so far (one discovery call per kind).
    resources: Mutex<HashMap<GroupVersionKind, ApiResource>>,
    /// Drift watches, one per kind written.
    pub watches: watch::DriftWatches,
}

impl GenericTargets {
    /// State for a controller; `watches` feeds drift events back to it.
    pub fn new(allowed: bool, watches: watch::DriftWatches) -> Self {
        Self {
            allowed,
            resources: Mutex::default(),
            watches,
        }
    }

    /// The API resource of `gvk`, discovered once and then remembered.
    pub async fn resource(
        &self,
        client: &kube::Client,
        gvk: &GroupVersionKind,
    ) -> Result<ApiResource, kube::Error> {
        if let Some(resource) = self.lock().get(gvk) {
            return Ok(resource.clone());
        }
        let (resource, _) = kube::discovery::pinned_kind(client, gvk).await?;
        self.lock().insert(gvk.clone(), resource.clone());
        Ok(resource)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<GroupVersionKind, ApiResource>> {
        self.resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Upstream's `validateGenericTarget`: the flag must be on and the manifest name a kind.
pub fn validate(
    manifest: &ManifestReference,
    allowed: bool,
) -> Result<GroupVersionKind, GenericError> {
    if !allowed {
        return Err(GenericError::Disabled);
    }
    if manifest.api_version.is_empty() {
        return Err(GenericError::Required("apiVersion"));
    }
    if manifest.kind.is_empty() {
        return Err(GenericError::Required("kind"));
    }
    let (group, version) = manifest
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", &manifest.api_version));
    Ok(GroupVersionKind::gvk(group, version, &manifest.kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(api_version: &str, kind: &str) -> ManifestReference {
        ManifestReference {
            api_version: api_version.into(),
            kind: kind.into(),
        }
    }

    #[test]
    fn validation_follows_upstream() {
        assert_eq!(
            validate(&manifest("v1", "ConfigMap"), false)
                .unwrap_err()
                .to_string(),
            "generic targets are disabled. Enable with --unsafe-allow-generic-targets flag"
        );
        assert_eq!(
            validate(&manifest("", "ConfigMap"), true)
                .unwrap_err()
                .to_string(),
            "target.manifest.apiVersion is required"
        );
        assert_eq!(
            validate(&manifest("v1", ""), true).unwrap_err().to_string(),
            "target.manifest.kind is required"
        );
        let core = validate(&manifest("v1", "ConfigMap"), true).unwrap();
        assert_eq!((core.group.as_str(), core.version.as_str()), ("", "v1"));
        let custom = validate(&manifest("argoproj.io/v1alpha1", "Application"), true).unwrap();
        assert_eq!(
            (
                custom.group.as_str(),
                custom.version.as_str(),
                custom.kind.as_str()
            ),
            ("argoproj.io", "v1alpha1", "Application")
        );
    }
}
