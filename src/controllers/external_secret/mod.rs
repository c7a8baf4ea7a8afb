//! The ExternalSecret controller: syncs provider data into the target Secret of every
//! ExternalSecret whose stores belong to this controller's class.
//!
//! Triggers: the ExternalSecret itself (changes of its spec, labels, annotations, finalizers
//! or deletion, not of its status: `watch_filter`), its managed target Secrets (metadata only, so Secret
//! payloads are never cached: a deleted or edited target is restored promptly, found by its
//! owner reference or, for targets without one, by name) and the stores
//! it reads from (an ExternalSecret waiting on a store syncs when the store becomes Ready).
//! Whether a sync is due is decided from the ExternalSecret's status, so a restart calls no
//! provider and writes no Secret for ExternalSecrets that are not due.

pub mod cached_external_secret;
pub mod cached_secret;
pub mod context;
pub mod dedup;
pub mod error;
pub mod fetch;
pub mod generic;
pub mod inputs;
pub mod known;
pub mod outcome;
pub mod packed_json;

pub mod read;
pub mod recent;
pub mod reconcile;
pub mod refresh;
pub mod refresh_timers;
pub mod status;

pub mod secret_meta;
pub mod sync_window;
pub mod target;
pub mod write;

use std::sync::Arc;

use external_secrets_crds::v1::{ClusterSecretStore, SecretStore, SecretStoreRefKind};
use futures::{StreamExt, TryStreamExt, future};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};

use crate::caches::still_cached;
use crate::context::Context;
use crate::controllers::queue_depth::QueueDepth;
use crate::controllers::store_watch::StoreFeed;
use crate::controllers::template;
use crate::controllers::watch_filter;
use crate::stores::{Stores, kind_and_name};
use cached_external_secret::CachedExternalSecret;
use cached_secret::CachedSecret;
use context::{CONTROLLER, EsContext};
use fetch::SharedReads;
use known::KnownSecrets;
use recent::RecentStatuses;
use reconcile::ReconcileError;
use refresh_timers::RefreshTimers;

/// Runs the ExternalSecret controller until `shutdown` completes, reading stores from the
/// shared store watches (`secret_stores`, `cluster_secret_stores`).
pub async fn run(
    context: Arc<Context>,
    concurrency: u16,
    (secret_stores, cluster_stores): (StoreFeed<SecretStore>, StoreFeed<ClusterSecretStore>),
    cluster_stores_enabled: bool,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let client = context.client.clone();
    let settings = context.settings.clone();
    let forget = Arc::clone(&context);
    let queue = Arc::new(QueueDepth::new(
        CONTROLLER,
        concurrency,
        context.metrics.clone(),
    ));
    let started = queue.clone();
    // Managed target Secrets, metadata only: what reconciles know of them without a GET.
    let (managed_reader, managed_writer) = reflector::store();
    let known = Arc::new(KnownSecrets::new(managed_reader));
    let observed = Arc::clone(&known);
    let managed_watch = watcher(
        settings.scoped_api::<PartialObjectMeta<Secret>>(client.clone()),
        watcher::Config::default().labels(&format!("{}=true", target::LABEL_MANAGED)),
    )
    .default_backoff()
    .map_ok(cached_secret::compact);
    // `reflector` rather than `.reflect`: the cache holds our own compact type, not a resource.
    let managed_secrets = reflector::reflector(managed_writer, managed_watch)
        .inspect(move |event| {
            if let Ok(event) = event {
                observed.observe(event);
            }
        })
        .touched_objects()
        .filter_map(|secret| {
            if let Err(error) = &secret {
                tracing::debug!(controller = CONTROLLER, %error, "managed Secret watch failed");
            }
            future::ready(secret.ok())
        });

    // The watch cache holds every ExternalSecret compacted (`CachedExternalSecret`), without
    // managedFields, which nothing reads. `kubectl.kubernetes.io/last-applied-configuration`
    // stays: upstream copies an ExternalSecret's annotations to its Secret and hashes them into
    // `syncedResourceVersion`.
    let (external_secrets, external_secret_writer) = reflector::store();
    let (drift_watches, drift_requests) =
        generic::watch::DriftWatches::new(external_secrets.clone(), settings.namespace.clone());
    let recent = Arc::new(RecentStatuses::default());
    let refresh_timers = Arc::new(RefreshTimers::default());
    let es_context = Arc::new(EsContext {
        shared: context,
        stores: Stores {
            secret_stores: secret_stores.cache,
            cluster_secret_stores: cluster_stores.cache,
        },
        cluster_stores_enabled,
        reads: SharedReads::new(settings.provider_read_dedup_window),
        generic: generic::GenericTargets::new(settings.allow_generic_targets, drift_watches),
        known,
        recent: Arc::clone(&recent),
        refresh_timers: Arc::clone(&refresh_timers),
    });
    let watched = watcher(
        settings.scoped_api::<CachedExternalSecret>(client),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(external_secret_writer)
    .inspect(track_events(
        queue.clone(),
        forget,
        recent,
        Arc::clone(&refresh_timers),
    ));
    // Only changes upstream reconciles on (not the status our own writes set) are triggers.
    let own_queue = queue.clone();
    let triggers = watch_filter::triggering(watched, watch_filter::desired_state, CONTROLLER)
        .inspect(move |es| own_queue.triggered([es]));
    // Every trigger comes through `reconcile_on`, the own objects' (`triggers`) too.
    let controller = Controller::for_stream(futures::stream::pending(), external_secrets.clone());
    let drift_queue = queue.clone();
    let drift_requests = drift_requests.inspect(move |request| {
        drift_queue.triggered([request]);
    });
    // Every trigger counts toward workqueue_depth until its reconcile starts.
    let related = Related {
        external_secrets: external_secrets.clone(),
        queue: queue.clone(),
    };
    let (by_target, by_store, by_cluster_store) = (related.clone(), related.clone(), related);
    let cached = external_secrets.clone();
    tracing::info!(controller = CONTROLLER, "starting controller");
    controller
        .with_config(controller::Config::default().concurrency(concurrency))
        .reconcile_on(
            managed_secrets
                .flat_map(move |secret| futures::stream::iter(by_target.of_target(&secret))),
        )
        .watches_shared_stream(secret_stores.changes, move |store: Arc<SecretStore>| {
            by_store.of_store(&store)
        })
        .watches_shared_stream(
            cluster_stores.changes,
            move |store: Arc<ClusterSecretStore>| by_cluster_store.of_cluster_store(&store),
        )
        .reconcile_on(drift_requests)
        .reconcile_on(triggers)
        .reconcile_on(refresh_timers.due())
        .graceful_shutdown_on(shutdown)
        .run(
            move |entry: Arc<CachedExternalSecret>, context: Arc<EsContext>| {
                started.taken(&watch_filter::reference_of(entry.as_ref()));
                // A copy older than our last status write is judged with that status. This
                // must happen now, with the copy the controller picked: by the time the future
                // first runs, the watch may have shown our write and ended the entry.
                let es = entry
                    .external_secret()
                    .map(|es| context.recent.current(Arc::new(es)));
                let cached = cached.clone();
                async move {
                    let es = es.map_err(|error| ReconcileError(error::Error::Decode(error)))?;
                    let result = template::budgeted(reconcile::reconcile(&es, &context)).await;
                    if !still_cached(&cached, entry.as_ref()) {
                        forget_deleted(entry.as_ref(), &context.shared, &context.refresh_timers);
                    }
                    result
                }
            },
            error_policy,
            es_context,
        )
        .for_each(|result| {
            finished(&queue, &result);
            async {}
        })
        .await;
    tracing::info!(controller = CONTROLLER, "controller stopped");
}

/// Follows the ExternalSecret watch: a deleted one is forgotten (metrics, retry state) and
/// leaves the queue-depth count (a changed one enters it once past the trigger filter).
fn track_events(
    queue: Arc<QueueDepth<CachedExternalSecret>>,
    context: Arc<Context>,
    recent: Arc<RecentStatuses>,
    refresh_timers: Arc<RefreshTimers>,
) -> impl Fn(&Result<watcher::Event<CachedExternalSecret>, watcher::Error>) {
    move |event| {
        if let Ok(event) = event {
            if let watcher::Event::Delete(es) = event {
                forget_deleted(es, &context, &refresh_timers);
            }
            recent.observe(event);
        }
        queue.follow_deletions(event);
    }
}

/// Maps changes of related objects (targets, stores) to the ExternalSecrets they concern,
/// counting each request toward the queue depth.
#[derive(Clone)]
struct Related {
    external_secrets: reflector::Store<CachedExternalSecret>,
    queue: Arc<QueueDepth<CachedExternalSecret>>,
}

impl Related {
    fn queued(
        &self,
        requests: Vec<ObjectRef<CachedExternalSecret>>,
    ) -> Vec<ObjectRef<CachedExternalSecret>> {
        self.queue.triggered(&requests);
        requests
    }

    fn of_target(&self, target: &CachedSecret) -> Vec<ObjectRef<CachedExternalSecret>> {
        match target.metadata() {
            Some(target) => self.queued(writers_of(&self.external_secrets, &target.metadata)),
            None => Vec::new(),
        }
    }

    fn of_store(&self, store: &SecretStore) -> Vec<ObjectRef<CachedExternalSecret>> {
        let namespace = store.namespace();
        self.queued(users_of(
            &self.external_secrets,
            SecretStoreRefKind::SecretStore,
            &store.name_any(),
            namespace.as_deref(),
        ))
    }

    fn of_cluster_store(&self, store: &ClusterSecretStore) -> Vec<ObjectRef<CachedExternalSecret>> {
        self.queued(users_of(
            &self.external_secrets,
            SecretStoreRefKind::ClusterSecretStore,
            &store.name_any(),
            None,
        ))
    }
}

/// After a reconcile: a vanished object leaves the queue-depth count; failures are logged
/// (the status already says why).
fn finished<T>(
    queue: &QueueDepth<CachedExternalSecret>,
    result: &Result<T, controller::Error<ReconcileError, watcher::Error>>,
) {
    queue.finished(result);
    if let Err(error) = result {
        tracing::debug!(controller = CONTROLLER, %error, "reconcile failed");
    }
}

/// Drops the metric series, retry state and pending refresh of a deleted ExternalSecret.
fn forget_deleted(es: &CachedExternalSecret, context: &Context, refresh_timers: &RefreshTimers) {
    let (name, namespace) = (es.name_any(), es.namespace().unwrap_or_default());
    context.metrics.remove_external_secret(&name, &namespace);
    context.backoff.forget(es);
    refresh_timers.forget(&namespace, &name);
}

/// Backs off 5 s for temporary errors (kube's controller retries per object); permanent ones
/// wait for a change.
fn error_policy(
    es: Arc<CachedExternalSecret>,
    error: &ReconcileError,
    context: Arc<EsContext>,
) -> Action {
    reconcile::error_policy(es.as_ref(), error, &context.shared.backoff)
}

/// The ExternalSecrets writing the managed target with metadata `target` (a Secret or a
/// generic target): its controlling ExternalSecret, or (for targets without one: Orphan,
/// Merge, CreateOrMerge) those of its namespace naming it as their target, so a deleted or
/// edited target of any policy is looked at again.
fn writers_of(
    external_secrets: &reflector::Store<CachedExternalSecret>,
    target: &ObjectMeta,
) -> Vec<ObjectRef<CachedExternalSecret>> {
    let namespace = target.namespace.clone();
    let owner = target
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true) && owner.kind == "ExternalSecret");
    if let Some(owner) = owner {
        let reference = ObjectRef::new(&owner.name);
        return vec![match &namespace {
            Some(namespace) => reference.within(namespace),
            None => reference,
        }];
    }
    let name = target.name.clone().unwrap_or_default();
    external_secrets
        .state()
        .iter()
        .filter(|es| es.namespace() == namespace && es.target_name() == name)
        .map(|es| watch_filter::reference_of(es.as_ref()))
        .collect()
}

/// The ExternalSecrets reading from the store `kind`/`name` (in `namespace` for a
/// SecretStore), through their default store or any entry's `sourceRef`.
fn users_of(
    external_secrets: &reflector::Store<CachedExternalSecret>,
    kind: SecretStoreRefKind,
    name: &str,
    namespace: Option<&str>,
) -> Vec<ObjectRef<CachedExternalSecret>> {
    external_secrets
        .state()
        .iter()
        .filter(|es| namespace.is_none_or(|namespace| es.namespace().as_deref() == Some(namespace)))
        .filter(|es| {
            es.store_refs()
                .iter()
                .any(|reference| kind_and_name(reference) == (kind, name))
        })
        .map(|es| watch_filter::reference_of(es.as_ref()))
        .collect()
}
