//! The ClusterExternalSecret controller: one ExternalSecret per selected namespace, kept in
//! step as namespaces come and go or change labels, as upstream's controller does.
//!
//! Triggers: the ClusterExternalSecret, the ExternalSecrets it controls (metadata only: an
//! edited or deleted copy is put back) and every Namespace change (namespaces are few and
//! selection is decided from a metadata-only watch cache, so no List per reconcile).

pub mod plan;
pub mod reconcile;

use std::sync::Arc;

use external_secrets_crds::v1::{ClusterExternalSecret, ExternalSecret};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};

use crate::context::Context;
use reconcile::{CONTROLLER, CesContext};

/// Runs the ClusterExternalSecret controller until `shutdown` completes.
pub async fn run(
    context: Arc<Context>,
    concurrency: u16,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let client = context.client.clone();
    let (namespace_reader, namespace_writer) = reflector::store();
    let namespaces = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(namespace_writer)
    .touched_objects();
    let copies = watcher(
        Api::<PartialObjectMeta<ExternalSecret>>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .touched_objects();
    let controller = Controller::new(
        Api::<ClusterExternalSecret>::all(client),
        watcher::Config::default(),
    );
    let all = controller.store();
    let ces_context = Arc::new(CesContext {
        shared: context,
        namespaces: namespace_reader,
    });
    tracing::info!(controller = CONTROLLER, "starting controller");
    controller
        .with_config(controller::Config::default().concurrency(concurrency))
        .owns_stream(copies)
        .watches_stream(namespaces, move |_| {
            all.state()
                .iter()
                .map(|ces| ObjectRef::from_obj(ces.as_ref()))
                .collect::<Vec<_>>()
        })
        .graceful_shutdown_on(shutdown)
        .run(reconcile::reconcile, reconcile::error_policy, ces_context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(controller = CONTROLLER, %error, "reconcile failed");
            }
        })
        .await;
    tracing::info!(controller = CONTROLLER, "controller stopped");
}
