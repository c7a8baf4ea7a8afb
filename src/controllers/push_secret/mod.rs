//! The PushSecret controller: writes Kubernetes Secrets of the PushSecret's namespace to the
//! stores it names, and (with `deletionPolicy: Delete`) removes exactly what it pushed.
//!
//! Triggers: the PushSecret itself (changes of its spec, labels, annotations, finalizers or
//! deletion, not of its status: `watch_filter`) and its refresh interval. Source Secrets are
//! not watched (that would mean a watch over every Secret); a changed source is pushed at the
//! next refresh or on any change of the PushSecret.

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
use kube::ResourceExt;
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector;
use kube::runtime::{WatchStreamExt, watcher};

use crate::caches::{forget_managed_fields, still_cached};
use crate::context::Context;
use crate::controllers::queue_depth::QueueDepth;
use crate::controllers::watch_filter;
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
    let queue = Arc::new(QueueDepth::new(
        CONTROLLER,
        concurrency,
        ps_context.shared.metrics.clone(),
    ));
    let (followed, started) = (queue.clone(), queue.clone());
    let forget = ps_context.shared.clone();
    let (reader, writer) = reflector::store();
    let objects = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(forget_managed_fields)
        .reflect(writer)
        .inspect(move |event| {
            if let Ok(watcher::Event::Delete(push_secret)) = event {
                forget_deleted(push_secret, &forget);
            }
            followed.follow_deletions(event);
        });
    // Only changes upstream reconciles on (not the status our own writes set) are triggers.
    let triggered = queue.clone();
    let triggers = watch_filter::triggering(objects, watch_filter::desired_state, CONTROLLER)
        .inspect(move |push_secret| triggered.triggered([push_secret]));
    let cached = reader.clone();
    tracing::info!(controller = CONTROLLER, "starting controller");
    // Every trigger comes through `reconcile_on`, the own objects' (`triggers`) too.
    Controller::for_stream(futures::stream::pending(), reader)
        .with_config(controller::Config::default().concurrency(concurrency))
        .reconcile_on(triggers)
        .graceful_shutdown_on(shutdown)
        .run(
            move |push_secret: Arc<PushSecret>, context: Arc<PsContext>| {
                started.taken(&watch_filter::reference_of(push_secret.as_ref()));
                let cached = cached.clone();
                async move {
                    let reconcile = reconcile::reconcile(push_secret.clone(), context.clone());
                    let result = crate::controllers::template::budgeted(reconcile).await;
                    // Deleted while this reconcile ran: its series were recorded after the
                    // watch forgot them.
                    if !still_cached(&cached, &push_secret) {
                        forget_deleted(&push_secret, &context.shared);
                    }
                    result
                }
            },
            reconcile::error_policy,
            ps_context,
        )
        .for_each(|result| {
            queue.finished(&result);
            if let Err(error) = result {
                tracing::debug!(controller = CONTROLLER, %error, "reconcile failed");
            }
            async {}
        })
        .await;
    tracing::info!(controller = CONTROLLER, "controller stopped");
}

/// Drops the metric series (and remembered labels) and retry state of a deleted PushSecret.
fn forget_deleted(push_secret: &PushSecret, context: &Context) {
    context.metrics.remove_push_secret(
        &push_secret.name_any(),
        &push_secret.namespace().unwrap_or_default(),
    );
    context.backoff.forget(push_secret);
}
