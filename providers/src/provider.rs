//! The trait one backend implements to be served: upstream's `esv1.Provider` (name,
//! capabilities, `ValidateStore`, `NewClient`).
//!
//! A backend module exports one value implementing [`Provider`]; the registry's one exhaustive
//! `match` over `spec.provider` (see [`crate::registry::Backend::of`]) pairs that value with the
//! store's section of the spec, and everything else dispatches through the trait. Nothing here
//! knows any backend by name.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::client::{Capabilities, SharedClient};
use crate::credentials::CredentialResolver;
use crate::error::Result;
use crate::store::StoreId;

/// One backend, as upstream's provider interface.
///
/// Implementors are small `Copy` values (usually unit structs): what a backend keeps between
/// clients lives in [`BackendStates`], owned by the registry, so that two registries (two
/// processes' worth of state in one test binary) never share it.
#[async_trait]
pub trait Provider: Copy + Send + Sync + 'static {
    /// This backend's section of `spec.provider` (a CRD type).
    type Spec: Send + Sync + 'static;

    /// The backend's field name in `spec.provider`: a bounded label for errors and metrics.
    const NAME: &'static str;

    /// What stores of this backend can do (upstream's `Capabilities`); most read and write.
    fn capabilities(&self, spec: &Self::Spec) -> Capabilities {
        let _ = spec;
        Capabilities::ReadWrite
    }

    /// Whether a ClusterSecretStore's client depends on the namespace of the object using it
    /// (referent auth, templated requests), so the cache keeps one client per such namespace.
    /// Only backends whose clients ignore the caller can say `false`.
    fn depends_on_caller(&self, spec: &Self::Spec) -> bool {
        let _ = spec;
        true
    }

    /// Whether upstream marks this provider maintained (its `MaintenanceStatus`): stores of an
    /// unmaintained one get upstream's warnings (store controller event, admission warning).
    fn maintained(&self) -> bool {
        true
    }

    /// Admission warnings about an acceptable configuration (the warnings upstream's
    /// `ValidateStore` returns beside a nil error): the admission webhook returns them with the
    /// verdict; the store controller does not surface them, as upstream. Most have none.
    fn admission_warnings(&self, spec: &Self::Spec) -> Vec<String> {
        let _ = spec;
        Vec::new()
    }

    /// Static checks of the configuration, with upstream's `ValidateStore` messages: run by the
    /// admission webhook and before every client is built.
    fn validate_store(&self, spec: &Self::Spec, store: &StoreId) -> Result<()>;

    /// A new authenticated client (upstream's `NewClient`). Not cached nor rate limited: the
    /// client manager wraps it.
    async fn new_client(
        &self,
        spec: &Self::Spec,
        context: ClientContext<'_>,
    ) -> Result<SharedClient>;
}

/// What a backend gets to build a client besides its spec.
pub struct ClientContext<'a> {
    /// The store the client serves.
    pub store: &'a StoreId,
    /// Reads the Kubernetes Secrets the spec refers to, under the store kind's namespace rules.
    pub credentials: CredentialResolver,
    /// What backends keep between clients of this registry.
    pub states: &'a BackendStates,
}

/// State a backend keeps between clients (for example the fake provider's pushed values), one
/// value per backend type, created on first use.
pub trait BackendState: Any + Send + Sync {
    /// Forgets what was kept for a deleted store.
    fn remove_store(&self, store: &StoreId);
}

/// Every backend's [`BackendState`] of one registry, keyed by type.
#[derive(Default)]
pub struct BackendStates {
    states: Mutex<HashMap<TypeId, Arc<dyn BackendState>>>,
}

impl BackendStates {
    /// The registry's value of `State`, created empty on first use.
    pub fn get<State: BackendState + Default>(&self) -> Arc<State> {
        let entry: Arc<dyn Any + Send + Sync> = self
            .lock()
            .entry(TypeId::of::<State>())
            .or_insert_with(|| Arc::new(State::default()))
            .clone();
        // The entry was stored under `State`'s own type id, so the downcast cannot fail.
        entry
            .downcast::<State>()
            .unwrap_or_else(|_| Arc::new(State::default()))
    }

    /// Replaces the registry's value of `State` (a backend's state configured at startup, such
    /// as a cache size from the command line).
    pub fn insert<State: BackendState>(&self, state: State) {
        self.lock().insert(TypeId::of::<State>(), Arc::new(state));
    }

    /// Forgets a deleted store in every backend's state.
    pub fn remove_store(&self, store: &StoreId) {
        let states: Vec<_> = self.lock().values().cloned().collect();
        for state in states {
            state.remove_store(store);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TypeId, Arc<dyn BackendState>>> {
        self.states
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Counted(Mutex<Vec<StoreId>>);

    impl BackendState for Counted {
        fn remove_store(&self, store: &StoreId) {
            self.0.lock().unwrap().push(store.clone());
        }
    }

    #[test]
    fn states_are_one_per_type_and_hear_of_removed_stores() {
        let states = BackendStates::default();
        let first = states.get::<Counted>();
        let second = states.get::<Counted>();
        assert!(Arc::ptr_eq(&first, &second));
        let store = StoreId::secret_store("team", "store");
        states.remove_store(&store);
        assert_eq!(*first.0.lock().unwrap(), vec![store]);
    }

    #[test]
    fn an_inserted_state_replaces_the_default_one() {
        let states = BackendStates::default();
        let default = states.get::<Counted>();
        states.insert(Counted(Mutex::new(vec![StoreId::cluster_secret_store(
            "seed",
        )])));
        let inserted = states.get::<Counted>();
        assert!(!Arc::ptr_eq(&default, &inserted));
        assert_eq!(inserted.0.lock().unwrap().len(), 1);
    }
}
