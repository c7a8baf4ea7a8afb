//! The `fake` provider: static secrets from the store spec, and an in-memory push target.
//!
//! Behaviour follows upstream's fake provider:
//!
//! * `spec.provider.fake.data` entries (`key`, `value`, optional `version`) are served as they
//!   are; a read asks for a key and a version (none = the entry without version) and anything
//!   else is `NotFound`. A `property` selects from a JSON value (see [`crate::property`]).
//! * `get_secret_map` parses the (property-selected) value as a JSON object: string members are
//!   returned unquoted, others as raw JSON.
//! * `get_all_secrets` supports only `find.name.regexp` (unanchored), returns each matching key's
//!   highest version (compared as strings), and applies the find's conversion strategy.
//! * Pushed values live in memory per store, survive client rebuilds (store edits), and may not
//!   overwrite a value defined in the spec ("key already exists"). When the spec changes, its
//!   entries are replaced while pushed values stay.
//! * `validate` is `Ready` unless `validationResult` says otherwise (1 = Unknown, 2 = Error),
//!   both with upstream's "unable to validate".
//!
//! Two deliberate differences: upstream shares pushed values between all stores of the same
//! name, here memory is per store (kind, namespace, name); and upstream's `delete_secret` does
//! nothing, while here it removes a value that was pushed (values from the spec stay), so
//! PushSecret's `deletionPolicy: Delete` can be observed in tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use external_secrets_crds::v1::FakeProvider;

use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::{json_property, raw_to_bytes};
use crate::provider::{BackendState, ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef, convert_keys};
use crate::store::StoreId;
use crate::value::{SecretMap, SecretValue};

/// Where an entry came from: the spec (read-only for push) or a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Spec,
    Pushed,
}

#[derive(Debug, Clone)]
struct Entry {
    value: SecretValue,
    version: String,
    origin: Origin,
}

/// Entries of one store, by key followed by version (upstream's `mapKey`).
type Entries = HashMap<String, Entry>;

/// The fake provider's memory across clients: one set of entries per store.
#[derive(Default)]
pub struct FakeBackend {
    stores: Mutex<HashMap<StoreId, Arc<Mutex<Entries>>>>,
}

impl FakeBackend {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// A client for `store` serving `spec`: the store's spec entries are replaced by the spec's,
    /// values pushed earlier are kept.
    pub fn new_client(&self, store: &StoreId, spec: &FakeProvider) -> Result<FakeClient> {
        let validation = match spec.validation_result {
            None | Some(0) => Validation::Ready,
            Some(1) => Validation::Unknown,
            Some(_) => Validation::Error,
        };
        let entries = self
            .stores
            .lock()
            .expect("fake memory lock")
            .entry(store.clone())
            .or_default()
            .clone();
        {
            let mut entries = entries.lock().expect("fake store lock");
            entries.retain(|_, entry| entry.origin == Origin::Pushed);
            for data in &spec.data {
                let version = data.version.clone().unwrap_or_default();
                entries.insert(
                    format!("{}{version}", data.key),
                    Entry {
                        value: SecretValue::from(data.value.as_str()),
                        version,
                        origin: Origin::Spec,
                    },
                );
            }
        }
        Ok(FakeClient {
            entries,
            validation,
        })
    }

    /// Forgets a deleted store's memory.
    pub fn remove_store(&self, store: &StoreId) {
        self.stores.lock().expect("fake memory lock").remove(store);
    }
}

impl BackendState for FakeBackend {
    fn remove_store(&self, store: &StoreId) {
        FakeBackend::remove_store(self, store);
    }
}

/// The `fake` backend: clients serve the spec's data and the registry's [`FakeBackend`] memory.
#[derive(Debug, Clone, Copy)]
pub struct Fake;

#[async_trait]
impl Provider for Fake {
    type Spec = FakeProvider;
    const NAME: &'static str = "fake";

    /// Clients ignore who uses them: one per ClusterSecretStore.
    fn depends_on_caller(&self, _: &FakeProvider) -> bool {
        false
    }

    /// Upstream's fake `MaintenanceStatus()` is `MaintenanceStatusNotMaintained`.
    fn maintained(&self) -> bool {
        false
    }

    fn validate_store(&self, spec: &FakeProvider, _: &StoreId) -> Result<()> {
        validate_store(spec)
    }

    async fn new_client(
        &self,
        spec: &FakeProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let memory = context.states.get::<FakeBackend>();
        Ok(Arc::new(memory.new_client(context.store, spec)?))
    }
}

/// Checks `spec.provider.fake` statically, with upstream's messages.
pub fn validate_store(spec: &FakeProvider) -> Result<()> {
    for (position, data) in spec.data.iter().enumerate() {
        if data.key.is_empty() {
            return Err(ProviderError::invalid_config(format!(
                "key must be set in data {position}"
            )));
        }
        if data.value.is_empty() {
            return Err(ProviderError::invalid_config(format!(
                "at least one value must be set in data {position}"
            )));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Validation {
    Ready,
    Unknown,
    Error,
}

/// A client of one fake store.
pub struct FakeClient {
    entries: Arc<Mutex<Entries>>,
    validation: Validation,
}

impl FakeClient {
    fn lookup(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let version = remote_ref.version.as_deref().unwrap_or_default();
        let entries = self.entries.lock().expect("fake store lock");
        let entry = entries
            .get(&format!("{}{version}", remote_ref.key))
            .filter(|entry| entry.version == version)
            .ok_or_else(|| not_found(&remote_ref.key))?;
        match &remote_ref.property {
            Some(property) if !property.is_empty() => json_property(entry.value.expose(), property)
                .map(SecretValue::new)
                .ok_or_else(|| not_found(&remote_ref.key)),
            _ => Ok(entry.value.clone()),
        }
    }
}

fn not_found(key: &str) -> ProviderError {
    ProviderError::not_found(format!("secret {key:?} does not exist"))
}

#[async_trait]
impl SecretsClient for FakeClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        self.lookup(remote_ref)
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.lookup(remote_ref)?;
        let members: HashMap<String, Box<serde_json::value::RawValue>> =
            serde_json::from_slice(value.expose()).map_err(|error| {
                ProviderError::invalid_data(format!(
                    "unable to unmarshal secret: {}",
                    crate::redact::json_error(&error)
                ))
            })?;
        Ok(members
            .into_iter()
            .map(|(key, raw)| (key, SecretValue::new(raw_to_bytes(&raw))))
            .collect())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let Some(name) = &find.name else {
            return Err(ProviderError::invalid_request(
                "unsupported find operator: only find.name is supported by the fake provider",
            ));
        };
        let matcher = name.matcher()?;
        let mut newest: HashMap<String, (String, SecretValue)> = HashMap::new();
        for (stored_key, entry) in self.entries.lock().expect("fake store lock").iter() {
            let key = stored_key
                .strip_suffix(entry.version.as_str())
                .unwrap_or(stored_key);
            if !matcher.is_match(key) {
                continue;
            }
            let is_newer = newest
                .get(key)
                .is_none_or(|(version, _)| version < &entry.version);
            if is_newer {
                newest.insert(key.to_owned(), (entry.version.clone(), entry.value.clone()));
            }
        }
        let found = newest
            .into_iter()
            .map(|(key, (_, value))| (key, value))
            .collect();
        convert_keys(find.conversion_strategy, found)
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let value = request.value()?;
        let mut entries = self.entries.lock().expect("fake store lock");
        let remote_key = &request.remote_ref.remote_key;
        match entries.get_mut(remote_key) {
            Some(entry) if entry.origin != Origin::Pushed => Err(ProviderError::new(
                crate::error::ErrorKind::AlreadyExists,
                "key already exists",
            )),
            Some(entry) => {
                entry.value = value;
                Ok(())
            }
            None => {
                entries.insert(
                    remote_key.clone(),
                    Entry {
                        value,
                        version: String::new(),
                        origin: Origin::Pushed,
                    },
                );
                Ok(())
            }
        }
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let mut entries = self.entries.lock().expect("fake store lock");
        if entries
            .get(&remote_ref.remote_key)
            .is_some_and(|entry| entry.origin == Origin::Pushed)
        {
            entries.remove(&remote_ref.remote_key);
        }
        Ok(())
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let entries = self.entries.lock().expect("fake store lock");
        Ok(entries.contains_key(&remote_ref.remote_key))
    }

    async fn validate(&self) -> Result<ValidationResult> {
        match self.validation {
            Validation::Ready => Ok(ValidationResult::Ready),
            // Upstream's fake returns the configured result with "unable to validate".
            Validation::Unknown => Ok(ValidationResult::Undetermined(
                "unable to validate".to_owned(),
            )),
            Validation::Error => Err(ProviderError::invalid_config("unable to validate")),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
