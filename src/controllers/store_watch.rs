//! One watch and one cache per store kind, shared by every controller that reads stores: the
//! store controllers reconcile from it, the ExternalSecret controller looks stores up in it and
//! is triggered by its changes (issue 24: before, each held a cache of its own, so every store
//! was held and listed twice).
//!
//! The watch reads stores through [`Guarded`]: a store that does not match the schema is
//! logged and left out instead of failing the list of every store. The cache keeps no
//! managedFields. A deleted store's provider clients, validation memory and metric series are
//! dropped here, whichever controllers run. Consumers subscribe before [`StoreWatch::drive`]
//! starts and must keep polling their feed (the watch waits for the slowest one); each still
//! waits for the cache's initial list before deciding anything from it
//! ([`crate::caches::is_synced`]).

use std::fmt::Debug;
use std::sync::Arc;

use external_secrets_crds::v1::{ClusterSecretStore, SecretStore};
use external_secrets_providers::StoreRef;
use futures::{Stream, StreamExt};
use kube::runtime::reflector::{self, store::Writer};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::caches::forget_managed_fields;
use crate::context::Context;
use crate::controllers::schema_guard::Guarded;

/// What the shared watch needs of a store kind: the store controllers build their own trait
/// on it (`secret_store::Store`), the ExternalSecret controller reads the cache through it.
pub trait WatchedStore:
    Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static
{
    /// The store controller's name (metrics label, logs), as controller-runtime derives it.
    const CONTROLLER: &'static str;
    /// Whether this is the cluster-scoped kind.
    const CLUSTER: bool;

    /// The store as the provider layer sees it.
    fn store_ref(&self) -> StoreRef<'_>;
    /// The API to watch through: one namespace (`--namespace`) or all.
    fn watch_api(client: Client, namespace: Option<&str>) -> Api<Guarded<Self>>;
}

impl WatchedStore for SecretStore {
    const CONTROLLER: &'static str = "secretstore";
    const CLUSTER: bool = false;

    fn store_ref(&self) -> StoreRef<'_> {
        StoreRef::from(self)
    }
    fn watch_api(client: Client, namespace: Option<&str>) -> Api<Guarded<Self>> {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl WatchedStore for ClusterSecretStore {
    const CONTROLLER: &'static str = "clustersecretstore";
    const CLUSTER: bool = true;

    fn store_ref(&self) -> StoreRef<'_> {
        StoreRef::from(self)
    }
    fn watch_api(client: Client, _: Option<&str>) -> Api<Guarded<Self>> {
        Api::all(client)
    }
}

/// How many changes a slow consumer may lag behind before the watch waits for it.
const BUFFER: usize = 1024;

/// The shared watch of the store kind `K`, until it is driven.
pub struct StoreWatch<K: WatchedStore> {
    reader: reflector::Store<K>,
    writer: Writer<K>,
}

/// What one consumer gets of a shared store watch.
pub struct StoreFeed<K: WatchedStore> {
    /// The cache (ready once the initial list is in).
    pub cache: reflector::Store<K>,
    /// Every store that was added or changed, and every store again after each (re)list.
    pub changes: futures::stream::BoxStream<'static, Arc<K>>,
}

impl<K: WatchedStore> Default for StoreWatch<K> {
    fn default() -> Self {
        let (reader, writer) = reflector::store_shared(BUFFER);
        Self { reader, writer }
    }
}

impl<K: WatchedStore> StoreWatch<K> {
    /// A feed for one consumer; take it before [`Self::drive`] starts, and poll its changes as
    /// long as the watch runs.
    pub fn subscribe(&self) -> StoreFeed<K> {
        // A writer made by `store_shared` always has subscribers; the empty stream is unreachable.
        let changes = futures::stream::iter(self.writer.subscribe()).flatten();
        StoreFeed {
            cache: self.reader.clone(),
            changes: changes.boxed(),
        }
    }

    /// Runs the watch, filling the cache and the feeds, until `shutdown` completes.
    pub async fn drive(self, context: Arc<Context>, shutdown: impl Future<Output = ()>) {
        let api = K::watch_api(
            context.client.clone(),
            context.settings.namespace.as_deref(),
        );
        let events = watcher(api, watcher::Config::default())
            .default_backoff()
            .take_until(shutdown);
        self.follow(events, |store| {
            let context = context.clone();
            async move { forget(&store, &context).await }
        })
        .await;
    }

    /// Feeds the cache and the subscribers from `events` (stores off the schema left out)
    /// until they end; `deleted` is told of every store that went.
    async fn follow<Deleted>(
        self,
        events: impl Stream<Item = Result<watcher::Event<Guarded<K>>, watcher::Error>>,
        deleted: impl Fn(K) -> Deleted,
    ) where
        Deleted: Future<Output = ()>,
    {
        events
            .filter_map(|event| std::future::ready(valid(event)))
            .modify(forget_managed_fields)
            .reflect_shared(self.writer)
            .for_each(|event| {
                let gone = match event {
                    Ok(watcher::Event::Delete(store)) => Some(deleted(store)),
                    _ => None,
                };
                async move {
                    if let Some(gone) = gone {
                        gone.await;
                    }
                }
            })
            .await;
    }
}

/// The event with its store, or nothing when the store does not match the schema (logged
/// without its content, which may quote field values).
fn valid<K: WatchedStore>(
    event: Result<watcher::Event<Guarded<K>>, watcher::Error>,
) -> Option<Result<watcher::Event<K>, watcher::Error>> {
    use watcher::Event;
    let event = match event {
        Ok(event) => event,
        Err(error) => return Some(Err(error)),
    };
    let store = |guard: Guarded<K>| match guard.0 {
        Ok(store) => Some(store),
        Err(invalid) => {
            tracing::warn!(
                controller = K::CONTROLLER,
                name = invalid.metadata.name.as_deref().unwrap_or_default(),
                namespace = invalid.metadata.namespace.as_deref().unwrap_or_default(),
                "ignoring a store that does not match the schema"
            );
            None
        }
    };
    Some(Ok(match event {
        Event::Apply(guard) => Event::Apply(store(guard)?),
        Event::Delete(guard) => Event::Delete(store(guard)?),
        Event::InitApply(guard) => Event::InitApply(store(guard)?),
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
    }))
}

/// Drops everything kept about a deleted store: its provider clients, validation memory and
/// metric series. Also called by a store reconcile that finds its store gone when it ends,
/// so what it recorded after the deletion was seen does not outlive the store.
pub async fn forget<K: WatchedStore>(store: &K, context: &Context) {
    let store_ref = store.store_ref();
    tracing::debug!(store = %store_ref.id, "store deleted, dropping its clients");
    context.clients.remove_store(&store_ref.id).await;
    context.forget(&store_ref.id);
    context.metrics.remove_store(
        K::CLUSTER,
        &store.name_any(),
        store.namespace().as_deref().unwrap_or_default(),
    );
}

/// Both store kinds' shared watches.
#[derive(Default)]
pub struct SharedStores {
    /// SecretStores (of `--namespace`, or all).
    pub secret_stores: StoreWatch<SecretStore>,
    /// ClusterSecretStores.
    pub cluster_secret_stores: StoreWatch<ClusterSecretStore>,
}

impl SharedStores {
    /// Runs both watches until the futures `shutdown` makes complete.
    pub async fn drive<S: Future<Output = ()>>(
        self,
        context: Arc<Context>,
        shutdown: impl Fn() -> S,
    ) {
        futures::join!(
            self.secret_stores.drive(context.clone(), shutdown()),
            self.cluster_secret_stores.drive(context, shutdown()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use watcher::Event;

    fn guard(name: &str, provider: serde_json::Value) -> Guarded<SecretStore> {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "SecretStore",
            "metadata": {
                "name": name,
                "namespace": "team-a",
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            },
            "spec": {"provider": provider},
        }))
        .unwrap()
    }

    fn good(name: &str) -> Guarded<SecretStore> {
        guard(name, serde_json::json!({"fake": {"data": []}}))
    }

    #[test]
    fn a_store_off_the_schema_is_left_out_and_the_rest_pass() {
        let passed = valid(Ok(Event::Apply(good("good"))));
        assert!(
            matches!(passed, Some(Ok(Event::Apply(s))) if s.metadata.name.as_deref() == Some("good"))
        );
        let invalid = guard("bad", serde_json::json!(42));
        assert!(invalid.0.is_err());
        assert!(valid(Ok(Event::InitApply(invalid))).is_none());
        assert!(matches!(
            valid::<SecretStore>(Ok(Event::InitDone)),
            Some(Ok(Event::InitDone))
        ));
        assert!(matches!(
            valid::<SecretStore>(Err(watcher::Error::NoResourceVersion)),
            Some(Err(_))
        ));
    }

    /// One cache, two consumers: both are told of every store, the cache is ready after the
    /// initial list, holds no managedFields, and a deletion reaches the delete hook.
    #[tokio::test]
    async fn every_consumer_sees_each_change_of_the_one_cache() {
        let watch = StoreWatch::<SecretStore>::default();
        let (first, second) = (watch.subscribe(), watch.subscribe());
        assert!(!crate::caches::is_synced(&first.cache));
        let events = futures::stream::iter([
            Ok(Event::Init),
            Ok(Event::InitApply(good("a"))),
            Ok(Event::InitApply(guard("bad", serde_json::json!(42)))),
            Ok(Event::InitDone),
            Ok(Event::Apply(good("b"))),
            Ok(Event::Delete(good("gone"))),
        ]);
        let deleted = Mutex::new(Vec::new());
        watch
            .follow(events, |store: SecretStore| {
                deleted.lock().unwrap().push(store.metadata.name.clone());
                std::future::ready(())
            })
            .await;
        assert_eq!(*deleted.lock().unwrap(), [Some("gone".to_owned())]);
        assert!(crate::caches::is_synced(&second.cache));
        let names = |feed: StoreFeed<SecretStore>| async move {
            feed.changes
                .map(|store| store.metadata.name.clone().unwrap_or_default())
                .collect::<Vec<_>>()
                .await
        };
        // The initial list is announced when it is complete, then each change.
        assert_eq!(names(first).await, ["a", "b"]);
        let cached = second.cache.state();
        assert_eq!(cached.len(), 2);
        assert!(
            cached
                .iter()
                .all(|store| store.metadata.managed_fields.is_none())
        );
        assert_eq!(names(second).await, ["a", "b"]);
    }
}
