//! The PushSecret controller: writes Kubernetes Secrets of the PushSecret's namespace to the
//! stores it names, and (with `deletionPolicy: Delete`) removes exactly what it pushed.
//!
//! Triggers: the PushSecret itself and its refresh interval. Source Secrets are not watched
//! (that would mean a watch over every Secret); a changed source is pushed at the next refresh
//! or on any change of the PushSecret.

pub mod context;
pub mod data_to;
pub mod error;
pub mod plan;
pub mod push;
pub mod reconcile;
pub mod source;
pub mod status;
pub mod stores;
pub mod template;

use std::sync::Arc;

use external_secrets_crds::v1alpha1::PushSecret;
use futures::StreamExt;
use kube::runtime::controller::{self, Controller};
use kube::runtime::watcher;

use crate::context::Context;
use context::{CONTROLLER, PsContext};

/// Runs the PushSecret controller until `shutdown` completes.
pub async fn run(
    context: Arc<Context>,
    concurrency: u16,
    cluster_stores_enabled: bool,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let api = context
        .settings
        .scoped_api::<PushSecret>(context.client.clone());
    let ps_context = Arc::new(PsContext {
        shared: context,
        cluster_stores_enabled,
    });
    tracing::info!(controller = CONTROLLER, "starting controller");
    Controller::new(api, watcher::Config::default())
        .with_config(controller::Config::default().concurrency(concurrency))
        .graceful_shutdown_on(shutdown)
        .run(reconcile::reconcile, reconcile::error_policy, ps_context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(controller = CONTROLLER, %error, "reconcile failed");
            }
        })
        .await;
    tracing::info!(controller = CONTROLLER, "controller stopped");
}
