//! The SecretStore and ClusterSecretStore controllers: one generic implementation over the
//! [`Store`] trait, run once per kind.
//!
//! Each store is validated (statically, then by the provider's own check) when its spec changes
//! or its refresh interval passes; the result lands in `status.conditions[Ready]` and
//! `status.capabilities`, with an Event on every transition. Upstream adds a finalizer to a
//! store only while PushSecrets with `deletionPolicy: Delete` use it; PushSecrets are not built
//! yet, so there is none: a deleted store's clients are dropped when the watch reports the
//! deletion.

pub mod error;
pub mod reconcile;
pub mod status;

use std::fmt::Debug;
use std::sync::Arc;

use external_secrets_crds::v1::{
    ClusterSecretStore, SecretStore, SecretStoreSpec, SecretStoreStatus,
};
use external_secrets_providers::StoreRef;
use futures::StreamExt;
use kube::core::DeserializeGuard;
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::Context;
use crate::controllers::queue_depth::QueueDepth;
use error::Error;

/// What the controller needs of a store kind.
pub trait Store:
    Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Serialize + Send + Sync + 'static
{
    /// The controller's name (metrics label, logs), as controller-runtime derives it upstream.
    const CONTROLLER: &'static str;
    /// Whether this is the cluster-scoped kind.
    const CLUSTER: bool;
    /// The component Events are reported as (upstream's `GetEventRecorderFor` name).
    const EVENT_REPORTER: &'static str;

    /// The spec.
    fn spec(&self) -> &SecretStoreSpec;
    /// The status, if any.
    fn status(&self) -> Option<&SecretStoreStatus>;
    /// The store as the provider layer sees it.
    fn store_ref(&self) -> StoreRef<'_>;
    /// The API to patch this object through.
    fn api(&self, client: Client) -> Api<Self>;
    /// The API to watch through: one namespace (`--namespace`) or all.
    fn watch_api(client: Client, namespace: Option<&str>) -> Api<DeserializeGuard<Self>>;
}

impl Store for SecretStore {
    const CONTROLLER: &'static str = "secretstore";
    const CLUSTER: bool = false;
    const EVENT_REPORTER: &'static str = "secret-store";

    fn spec(&self) -> &SecretStoreSpec {
        &self.spec
    }
    fn status(&self) -> Option<&SecretStoreStatus> {
        self.status.as_ref()
    }
    fn store_ref(&self) -> StoreRef<'_> {
        StoreRef::from(self)
    }
    fn api(&self, client: Client) -> Api<Self> {
        Api::namespaced(
            client,
            self.metadata.namespace.as_deref().unwrap_or_default(),
        )
    }
    fn watch_api(client: Client, namespace: Option<&str>) -> Api<DeserializeGuard<Self>> {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl Store for ClusterSecretStore {
    const CONTROLLER: &'static str = "clustersecretstore";
    const CLUSTER: bool = true;
    const EVENT_REPORTER: &'static str = "cluster-secret-store";

    fn spec(&self) -> &SecretStoreSpec {
        &self.spec.0
    }
    fn status(&self) -> Option<&SecretStoreStatus> {
        self.status.as_ref()
    }
    fn store_ref(&self) -> StoreRef<'_> {
        StoreRef::from(self)
    }
    fn api(&self, client: Client) -> Api<Self> {
        Api::all(client)
    }
    fn watch_api(client: Client, _: Option<&str>) -> Api<DeserializeGuard<Self>> {
        Api::all(client)
    }
}

/// Runs the controller of store kind `K` until `shutdown` completes.
pub async fn run<K: Store>(
    context: Arc<Context>,
    concurrency: u16,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    // Through `DeserializeGuard`, one malformed store cannot stall the watch.
    let api = K::watch_api(
        context.client.clone(),
        context.settings.namespace.as_deref(),
    );
    let (reader, writer) = reflector::store();
    let on_delete = context.clone();
    let queue = Arc::new(QueueDepth::new(
        K::CONTROLLER,
        concurrency,
        context.metrics.clone(),
    ));
    let (followed, started) = (queue.clone(), queue.clone());
    let objects = watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .inspect(move |event| followed.follow(event))
        .then(move |event| {
            let context = on_delete.clone();
            async move {
                if let Ok(watcher::Event::Delete(DeserializeGuard(Ok(store)))) = &event {
                    reconcile::forget(store, &context).await;
                }
                event
            }
        })
        .applied_objects();
    tracing::info!(controller = K::CONTROLLER, "starting controller");
    Controller::for_stream(objects, reader)
        .with_config(controller::Config::default().concurrency(concurrency))
        .graceful_shutdown_on(shutdown)
        .run(
            move |object, context| {
                started.taken(&ObjectRef::from_obj(object.as_ref()));
                reconcile_object::<K>(object, context)
            },
            error_policy_object::<K>,
            context,
        )
        .for_each(|result| {
            queue.finished(&result);
            async move {
                match result {
                    Ok((object, _)) => {
                        tracing::debug!(controller = K::CONTROLLER, %object, "reconciled")
                    }
                    Err(error) => {
                        tracing::debug!(controller = K::CONTROLLER, %error, "reconcile failed")
                    }
                }
            }
        })
        .await;
    tracing::info!(controller = K::CONTROLLER, "controller stopped");
}

/// Reconciles a store that deserialized; logs and skips one that did not (the deserialization
/// error is not logged: it may quote field values).
async fn reconcile_object<K: Store>(
    object: Arc<DeserializeGuard<K>>,
    context: Arc<Context>,
) -> Result<controller::Action, Error> {
    match &object.0 {
        Ok(store) => reconcile::reconcile(store, &context).await,
        Err(invalid) => {
            tracing::warn!(
                controller = K::CONTROLLER,
                name = invalid.metadata.name.as_deref().unwrap_or_default(),
                namespace = invalid.metadata.namespace.as_deref().unwrap_or_default(),
                "ignoring a store that does not match the schema"
            );
            Ok(controller::Action::await_change())
        }
    }
}

fn error_policy_object<K: Store>(
    object: Arc<DeserializeGuard<K>>,
    error: &Error,
    context: Arc<Context>,
) -> controller::Action {
    match &object.0 {
        Ok(store) => reconcile::error_policy(store, error, &context),
        Err(_) => controller::Action::await_change(),
    }
}
