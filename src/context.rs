//! What every reconcile shares: the Kubernetes client, the provider client manager, metrics,
//! the event queue, the controller class and the per-store memory of validations.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use external_secrets_providers::{ClientManager, StoreId};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType};

use crate::controllers::backoff::FailureBackoff;
use crate::controllers::secret_store::status::Validated;
use crate::event_queue::EventQueue;
use crate::metrics::Metrics;

/// Upstream's field manager for everything the controller writes.
pub const FIELD_MANAGER: &str = "external-secrets";

/// Settings of the controllers, from the command line.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Only stores whose `spec.controller` is this (or empty) are processed.
    pub controller_class: String,
    /// The default store refresh interval (`--store-requeue-interval`).
    pub store_requeue_interval: Duration,
    /// Watch only this namespace's namespaced objects (`--namespace`).
    pub namespace: Option<String>,
    /// Sync ExternalSecrets only from stores whose Ready condition is True; a store not
    /// validated yet is refused too, as upstream (`--enable-flood-gate`).
    pub flood_gate: bool,
    /// Identical provider reads starting within this window share one call
    /// (`--provider-read-dedup-window`).
    pub provider_read_dedup_window: Duration,
    /// Whether ExternalSecrets may write ConfigMaps and custom resources
    /// (`--unsafe-allow-generic-targets`).
    pub allow_generic_targets: bool,
}

impl Settings {
    /// The API of a namespaced kind, scoped to `--namespace` when given.
    pub fn scoped_api<K>(&self, client: kube::Client) -> kube::Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        match &self.namespace {
            Some(namespace) => kube::Api::namespaced(client, namespace),
            None => kube::Api::all(client),
        }
    }
}

/// Shared state of all reconciles.
pub struct Context {
    /// The Kubernetes client.
    pub client: kube::Client,
    /// Cached provider clients of every store.
    pub clients: Arc<ClientManager>,
    /// The exported metrics.
    pub metrics: Arc<Metrics>,
    events: EventQueue,
    /// Command-line settings.
    pub settings: Settings,
    validations: Mutex<HashMap<StoreId, Validated>>,
    /// Retry delays of ExternalSecrets, PushSecrets and ClusterExternalSecrets that keep failing.
    pub backoff: FailureBackoff,
}

impl Context {
    /// A new context.
    pub fn new(
        client: kube::Client,
        clients: Arc<ClientManager>,
        metrics: Arc<Metrics>,
        settings: Settings,
    ) -> Self {
        Self {
            events: EventQueue::new(client.clone()),
            client,
            clients,
            metrics,
            settings,
            validations: Mutex::default(),
            backoff: FailureBackoff::default(),
        }
    }

    /// Queues an Event about `object` as `component` (upstream's recorder names, e.g.
    /// `secret-store`; the instance is the `POD_NAME` variable). The reconcile does not wait
    /// for it: events are informative, never a reason to delay or fail a sync; a full queue
    /// drops the event and counts it.
    pub async fn publish(
        &self,
        component: &'static str,
        object: &ObjectReference,
        kind: EventType,
        reason: &str,
        note: &str,
        action: &str,
    ) {
        let event = Event {
            type_: kind,
            reason: reason.to_owned(),
            note: Some(note.to_owned()),
            action: action.to_owned(),
            secondary: None,
        };
        if !self.events.send(component, object.clone(), event) {
            self.metrics.event_dropped();
        }
    }

    /// The last validation of `store`, if any.
    pub fn last_validation(&self, store: &StoreId) -> Option<Validated> {
        self.validations
            .lock()
            .expect("validation lock")
            .get(store)
            .cloned()
    }

    /// Remembers the last validation of `store`.
    pub fn set_validation(&self, store: &StoreId, validated: Validated) {
        self.validations
            .lock()
            .expect("validation lock")
            .insert(store.clone(), validated);
    }

    /// Forgets a deleted store.
    pub fn forget(&self, store: &StoreId) {
        self.validations
            .lock()
            .expect("validation lock")
            .remove(store);
    }
}
