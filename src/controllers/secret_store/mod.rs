//! The SecretStore and ClusterSecretStore controllers: one generic implementation over the
//! [`Store`] trait, run once per kind.
//!
//! Each store is validated (statically, then by the provider's own check) when its spec changes
//! or its refresh interval passes; the result lands in `status.conditions[Ready]` and
//! `status.capabilities`, with an Event on every transition. While the PushSecret controller
//! runs, a store carries upstream's finalizer as long as PushSecrets with `deletionPolicy:
//! Delete` use it (`push_users`), decided from a PushSecret watch cache once it is synced. The
//! stores come from the watch shared with the ExternalSecret controller (`store_watch`), which also
//! drops a deleted store's clients when it reports the deletion.

pub mod error;
pub mod push_users;
pub mod reconcile;
pub mod status;

use std::sync::Arc;

use external_secrets_crds::v1::{
    ClusterSecretStore, SecretStore, SecretStoreRefKind, SecretStoreSpec, SecretStoreStatus,
};
use external_secrets_crds::v1alpha1::PushSecret;
use futures::StreamExt;
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, ResourceExt};
use serde::Serialize;

use crate::caches::{forget_managed_fields, still_cached};
use crate::context::Context;
use crate::controllers::queue_depth::QueueDepth;
use crate::controllers::store_watch::{StoreFeed, WatchedStore, forget};
use error::Error;
use push_users::StoreIdentity;

/// What a store reconcile reads besides the shared state.
pub struct StoreContext<K: Store> {
    /// State shared with the other controllers.
    pub shared: Arc<Context>,
    /// The stores of this kind, as the shared watch has them.
    pub stores: reflector::Store<K>,
    /// Every PushSecret, when the PushSecret controller runs (the store finalizer is only
    /// managed then, as upstream's `isPushSecretEnabled`).
    pub push_secrets: Option<reflector::Store<PushSecret>>,
}

/// What the controller needs of a store kind.
pub trait Store: WatchedStore + Serialize {
    /// The component Events are reported as (upstream's `GetEventRecorderFor` name).
    const EVENT_REPORTER: &'static str;

    /// The spec.
    fn spec(&self) -> &SecretStoreSpec;
    /// The status, if any.
    fn status(&self) -> Option<&SecretStoreStatus>;
    /// The API to patch this object through.
    fn api(&self, client: Client) -> Api<Self>;

    /// The store as a PushSecret names it.
    fn identity(&self) -> StoreIdentity<'_> {
        StoreIdentity {
            kind: if Self::CLUSTER {
                SecretStoreRefKind::ClusterSecretStore
            } else {
                SecretStoreRefKind::SecretStore
            },
            name: self.meta().name.as_deref().unwrap_or_default(),
            namespace: if Self::CLUSTER {
                None
            } else {
                self.meta().namespace.as_deref()
            },
            labels: self.labels(),
        }
    }
}

impl Store for SecretStore {
    const EVENT_REPORTER: &'static str = "secret-store";

    fn spec(&self) -> &SecretStoreSpec {
        &self.spec
    }
    fn status(&self) -> Option<&SecretStoreStatus> {
        self.status.as_ref()
    }
    fn api(&self, client: Client) -> Api<Self> {
        Api::namespaced(
            client,
            self.metadata.namespace.as_deref().unwrap_or_default(),
        )
    }
}

impl Store for ClusterSecretStore {
    const EVENT_REPORTER: &'static str = "cluster-secret-store";

    fn spec(&self) -> &SecretStoreSpec {
        &self.spec.0
    }
    fn status(&self) -> Option<&SecretStoreStatus> {
        self.status.as_ref()
    }
    fn api(&self, client: Client) -> Api<Self> {
        Api::all(client)
    }
}

/// Runs the controller of store kind `K` on its feed of the shared store watch until
/// `shutdown` completes; `push_secrets` says whether the PushSecret controller runs (then
/// stores keep a finalizer while PushSecrets with `deletionPolicy: Delete` use them).
pub async fn run<K: Store>(
    context: Arc<Context>,
    concurrency: u16,
    stores: StoreFeed<K>,
    push_secrets: bool,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let queue = Arc::new(QueueDepth::new(
        K::CONTROLLER,
        concurrency,
        context.metrics.clone(),
    ));
    let (followed, started) = (queue.clone(), queue.clone());
    // Each change raises a request (a deleted store's leaves when its reconcile finds it gone).
    let changes = stores
        .changes
        .inspect(move |store| followed.triggered([&ObjectRef::from_obj(store.as_ref())]));
    let reader = stores.cache;
    let cache = reader.clone();
    let mut controller = Controller::for_shared_stream(changes, reader.clone())
        .with_config(controller::Config::default().concurrency(concurrency));
    let mut push_secret_cache = None;
    if push_secrets {
        let (push_reader, push_writer) = reflector::store();
        let changes = watcher(
            context
                .settings
                .scoped_api::<PushSecret>(context.client.clone()),
            watcher::Config::default(),
        )
        .default_backoff()
        .modify(forget_managed_fields)
        .reflect(push_writer)
        .touched_objects();
        controller = controller.watches_stream(changes, move |push_secret| {
            stores_mentioned_by::<K>(&reader, &push_secret)
        });
        push_secret_cache = Some(push_reader);
    }
    let context = Arc::new(StoreContext {
        shared: context,
        stores: cache,
        push_secrets: push_secret_cache,
    });
    tracing::info!(controller = K::CONTROLLER, "starting controller");
    controller
        .graceful_shutdown_on(shutdown)
        .run(
            move |store: Arc<K>, context: Arc<StoreContext<K>>| {
                started.taken(&ObjectRef::from_obj(store.as_ref()));
                async move {
                    let push_secrets = context.push_secrets.as_ref();
                    let result =
                        reconcile::reconcile(store.as_ref(), &context.shared, push_secrets).await;
                    // Deleted while this reconcile ran: its metrics, clients and validation
                    // memory were recorded after the watch forgot them.
                    if !still_cached(&context.stores, store.as_ref()) {
                        forget(store.as_ref(), &context.shared).await;
                    }
                    result
                }
            },
            |store: Arc<K>, error: &Error, context: Arc<StoreContext<K>>| {
                reconcile::error_policy(store.as_ref(), error, &context.shared)
            },
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

/// The stores of kind `K` a PushSecret change may concern.
fn stores_mentioned_by<K: Store>(
    stores: &reflector::Store<K>,
    push_secret: &PushSecret,
) -> Vec<ObjectRef<K>> {
    stores
        .state()
        .iter()
        .filter(|store| push_users::mentions_store(&store.identity(), push_secret))
        .map(|store| ObjectRef::from_obj(store.as_ref()))
        .collect()
}
