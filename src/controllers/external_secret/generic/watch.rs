//! Drift detection for generic targets: one metadata-only watch per kind this controller has
//! written, started on the first write of that kind and limited to objects carrying our
//! managed label, so an edited or deleted target is restored promptly (upstream keeps a
//! dynamic informer per kind for the same reason). Events become reconcile requests of the
//! ExternalSecrets writing the object.

use std::collections::HashSet;
use std::sync::Mutex;

use super::super::cached_external_secret::CachedExternalSecret;
use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use kube::Api;
use kube::api::DynamicObject;
use kube::core::{ApiResource, GroupVersionKind, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};

use crate::controllers::external_secret::target::LABEL_MANAGED;

/// The drift watches of one controller.
pub struct DriftWatches {
    started: Mutex<HashSet<GroupVersionKind>>,
    requests: UnboundedSender<ObjectRef<CachedExternalSecret>>,
    external_secrets: Store<CachedExternalSecret>,
    namespace: Option<String>,
}

impl DriftWatches {
    /// Watches that map objects to the ExternalSecrets of `external_secrets` (scoped to
    /// `namespace` when the controller is); the receiver yields their reconcile requests.
    pub fn new(
        external_secrets: Store<CachedExternalSecret>,
        namespace: Option<String>,
    ) -> (Self, UnboundedReceiver<ObjectRef<CachedExternalSecret>>) {
        let (requests, receiver) = unbounded();
        let watches = Self {
            started: Mutex::default(),
            requests,
            external_secrets,
            namespace,
        };
        (watches, receiver)
    }

    /// Starts the watch of `resource`'s kind unless it runs already.
    pub fn ensure(&self, client: &kube::Client, resource: &ApiResource) {
        let gvk = GroupVersionKind::gvk(&resource.group, &resource.version, &resource.kind);
        let first = self
            .started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(gvk);
        if !first {
            return;
        }
        let api: Api<PartialObjectMeta<DynamicObject>> = match &self.namespace {
            Some(namespace) => Api::namespaced_with(client.clone(), namespace, resource),
            None => Api::all_with(client.clone(), resource),
        };
        let config = watcher::Config::default().labels(&format!("{LABEL_MANAGED}=true"));
        let events = watcher(api, config).default_backoff().touched_objects();
        let requests = self.requests.clone();
        let external_secrets = self.external_secrets.clone();
        let kind = resource.kind.clone();
        tracing::info!(%kind, "watching generic targets for drift");
        tokio::spawn(async move {
            let mut events = std::pin::pin!(events);
            while let Some(event) = events.next().await {
                let Ok(object) = event else { continue };
                for request in super::super::writers_of(&external_secrets, &object.metadata) {
                    if requests.unbounded_send(request).is_err() {
                        return;
                    }
                }
            }
        });
    }
}
