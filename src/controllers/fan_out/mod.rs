//! Cluster-scoped templates stamped into selected namespaces: a ClusterExternalSecret's
//! ExternalSecrets and a ClusterPushSecret's PushSecrets, kept in step as namespaces come and
//! go or change labels, as upstream's two controllers do. One controller serves both through
//! [`ClusterTemplate`].
//!
//! Triggers: the template, the copies it controls (metadata only: an edited or deleted copy is
//! put back) and every Namespace change (namespaces are few and selection is decided from a
//! metadata-only watch cache, so no List per reconcile). A deleted template's metric series
//! and retry state are dropped from the watch's delete events.

pub mod namespace_finalizers;
pub mod reconcile;
pub mod selection;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::caches::forget_managed_fields;
use crate::context::Context;
use crate::controllers::queue_depth::QueueDepth;
use crate::metrics::Metrics;
use reconcile::TemplateContext;

/// A cluster-scoped object that asks for one namespaced copy per selected namespace.
pub trait ClusterTemplate:
    Resource<DynamicType = (), Scope = ClusterResourceScope>
    + Clone
    + Debug
    + DeserializeOwned
    + Serialize
    + Send
    + Sync
    + 'static
{
    /// The namespaced object stamped into each namespace.
    type Copy: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + DeserializeOwned
        + Serialize
        + Send
        + Sync
        + 'static;

    /// The controller's name in metrics and logs.
    const CONTROLLER: &'static str;
    /// The finalizer behind which the copies are deleted before the template goes; `None`
    /// leaves them to Kubernetes' garbage collection (they carry a controller reference).
    const FINALIZER: Option<&'static str>;
    /// The prefix of the finalizer each provisioned namespace carries (the template's name
    /// follows), so a namespace is not deleted under a copy being written; `None` for none.
    const NAMESPACE_FINALIZER_PREFIX: Option<&'static str>;
    /// Upstream's failure reason for a namespace holding a foreign copy of the same name.
    const REASON_ALREADY_EXISTS: &'static str;
    /// Upstream's prefix of the failure reason when a copy cannot be written.
    const REASON_WRITE_FAILED: &'static str;

    /// The name the copies get now.
    fn copy_name(&self) -> String;
    /// The name the status says the copies got (they are renamed when it differs).
    fn recorded_copy_name(&self) -> Option<&str>;
    /// The namespaces the status says hold a copy.
    fn provisioned_namespaces(&self) -> &[String];
    /// Whether the namespace `name` with `labels` should hold a copy.
    fn selects(&self, name: &str, labels: &BTreeMap<String, String>) -> bool;
    /// The copy wanted in `namespace` under `name`, with a controller reference to `self`.
    fn desired_copy(&self, namespace: &str, name: &str) -> Self::Copy;
    /// Whether `existing` already is `desired`, so nothing is written.
    fn is_up_to_date(existing: &Self::Copy, desired: &Self::Copy) -> bool;
    /// The status after provisioning (a JSON `status` object), `None` when the recorded one
    /// already says it.
    fn status_update(
        &self,
        copy_name: &str,
        provisioned: &[String],
        failed: &BTreeMap<String, String>,
    ) -> Option<serde_json::Value>;
    /// How long until namespaces are checked again.
    fn refresh_interval(&self) -> Duration;
    /// Sets the template's `Ready` gauge (`ready` is "True" or "False") and reconcile time.
    fn record_metrics(&self, metrics: &Metrics, ready: &str, took: Duration);
    /// Drops the series of a deleted template.
    fn remove_metrics(&self, metrics: &Metrics);
}

/// Runs the controller of templates `T` until `shutdown` completes.
pub async fn run<T: ClusterTemplate>(
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
    .modify(forget_managed_fields)
    .reflect(namespace_writer)
    .touched_objects();
    let copies = watcher(
        Api::<PartialObjectMeta<T::Copy>>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .touched_objects();
    let forget = Arc::clone(&context);
    let queue = Arc::new(QueueDepth::new(
        T::CONTROLLER,
        concurrency,
        context.metrics.clone(),
    ));
    let (followed, started, by_namespace) = (queue.clone(), queue.clone(), queue.clone());
    let (templates, template_writer) = reflector::store();
    let watched = watcher(Api::<T>::all(client), watcher::Config::default())
        .default_backoff()
        .modify(forget_managed_fields)
        .reflect(template_writer)
        .inspect(move |event| {
            if let Ok(watcher::Event::Delete(template)) = event {
                template.remove_metrics(&forget.metrics);
                forget.backoff.forget(template);
            }
            followed.follow(event);
        })
        .applied_objects();
    let controller = Controller::for_stream(watched, templates.clone());
    let template_context = Arc::new(TemplateContext {
        shared: context,
        namespaces: namespace_reader,
    });
    tracing::info!(controller = T::CONTROLLER, "starting controller");
    controller
        .with_config(controller::Config::default().concurrency(concurrency))
        .owns_stream(copies)
        .watches_stream(namespaces, move |_| {
            let every: Vec<_> = templates
                .state()
                .iter()
                .map(|template| ObjectRef::from_obj(template.as_ref()))
                .collect();
            by_namespace.triggered(&every);
            every
        })
        .graceful_shutdown_on(shutdown)
        .run(
            move |template: Arc<T>, context| {
                started.taken(&ObjectRef::from_obj(template.as_ref()));
                reconcile::reconcile::<T>(template, context)
            },
            reconcile::error_policy::<T>,
            template_context,
        )
        .for_each(|result| {
            queue.finished(&result);
            if let Err(error) = result {
                tracing::debug!(controller = T::CONTROLLER, %error, "reconcile failed");
            }
            async {}
        })
        .await;
    tracing::info!(controller = T::CONTROLLER, "controller stopped");
}

/// `refreshTime` as both templates read it: a Go duration, `default` when unset, zero or
/// unreadable (upstream: one hour).
pub fn refresh_interval_of(refresh_time: Option<&str>, default: Duration) -> Duration {
    refresh_time
        .and_then(|text| external_secrets_providers::duration::parse_go_duration(text).ok())
        .filter(|interval| !interval.is_zero())
        .unwrap_or(default)
}

/// `next` as a status to write, unless `current` already is it.
pub fn changed_status<S: PartialEq + Serialize>(
    current: Option<&S>,
    next: S,
) -> Option<serde_json::Value> {
    (current != Some(&next)).then(|| serde_json::to_value(next).unwrap_or_default())
}
