//! One reconcile of a store: class filter -> finalizer (while PushSecrets with
//! `deletionPolicy: Delete` use it) -> validation (when due) -> status patch (when changed) ->
//! metrics and events -> requeue at the refresh interval plus jitter.

use std::time::{Duration, Instant};

use external_secrets_crds::v1alpha1::PushSecret;
use external_secrets_providers::{ProviderError, StoreRef, ValidationResult};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::reflector;
use serde_json::json;

use super::error::Error;
use super::status::{self, CONDITION_READY, Outcome, Validated};
use super::{Store, push_users};
use crate::caches::{CACHE_WAIT, is_synced};
use crate::context::{Context, FIELD_MANAGER};
use crate::controllers::backoff;
use crate::controllers::finalizers;

/// Reconciles one store, recording the controller-runtime metrics around it; `push_secrets`
/// is the PushSecret cache when the PushSecret controller runs.
pub async fn reconcile<K: Store>(
    store: &K,
    context: &Context,
    push_secrets: Option<&reflector::Store<PushSecret>>,
) -> Result<Action, Error> {
    let _timer = context.metrics.reconcile_started(K::CONTROLLER);
    let started = Instant::now();
    let result = crate::controllers::deadline::within(async {
        let kept = match push_secrets {
            // Another controller class's store is left entirely alone, finalizer included.
            _ if !crate::stores::should_process(
                store.spec(),
                &context.settings.controller_class,
            ) =>
            {
                Ok(Some(Action::await_change()))
            }
            Some(push_secrets) => keep_for_push_secrets(store, context, push_secrets).await,
            None => Ok(None),
        };
        match kept {
            Ok(Some(waiting)) => Ok(waiting),
            Ok(None) => reconcile_store(store, context).await,
            Err(error) => Err(error),
        }
    })
    .await;
    context
        .metrics
        .set_store_duration(K::CLUSTER, store.meta(), started.elapsed());
    let label = if result.is_ok() {
        "requeue_after"
    } else {
        "error"
    };
    context.metrics.reconcile_finished(K::CONTROLLER, label);
    result
}

/// Temporary errors back off exponentially per store; permanent ones wait for a change.
pub fn error_policy<K: Store>(store: &K, error: &Error, context: &Context) -> Action {
    tracing::warn!(
        controller = K::CONTROLLER,
        store = %store.store_ref().id,
        reason = error.reason(),
        %error,
        "reconcile failed"
    );
    if error.is_temporary() {
        let failures = context
            .last_validation(&store.store_ref().id)
            .map_or(1, |validated| validated.failures);
        Action::requeue(backoff::delay(failures))
    } else {
        Action::await_change()
    }
}

/// Upstream's `handleFinalizer`: the store keeps its finalizer while a PushSecret with
/// `deletionPolicy: Delete` needs it; `Some(action)` when the reconcile ends here (cache not
/// synced yet, or a deleted store still in use). Nothing is removed from an unsynced cache.
async fn keep_for_push_secrets<K: Store>(
    store: &K,
    context: &Context,
    push_secrets: &reflector::Store<PushSecret>,
) -> Result<Option<Action>, Error> {
    if !is_synced(push_secrets) {
        return Ok(Some(Action::requeue(CACHE_WAIT)));
    }
    let identity = store.identity();
    let in_use = push_secrets
        .state()
        .iter()
        .any(|push_secret| push_users::needs_store(&identity, push_secret));
    finalizers::set(
        &store.api(context.client.clone()),
        store.meta(),
        push_users::FINALIZER,
        in_use,
    )
    .await
    .map_err(|source| Error::Finalizer {
        store: store.store_ref().id.clone(),
        source,
    })?;
    if in_use && store.meta().deletion_timestamp.is_some() {
        tracing::info!(
            controller = K::CONTROLLER,
            store = %store.store_ref().id,
            "deletion waits for PushSecrets with deletionPolicy Delete"
        );
        return Ok(Some(Action::await_change()));
    }
    Ok(None)
}

async fn reconcile_store<K: Store>(store: &K, context: &Context) -> Result<Action, Error> {
    if store.meta().deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let store_ref = store.store_ref();
    let interval = status::refresh_interval(store.spec(), context.settings.store_requeue_interval);
    let last = context.last_validation(&store_ref.id);
    let now = Instant::now();
    let has_ready = status::ready(store.status()).is_some();
    if !status::needs_validation(last.as_ref(), &store_ref.version, has_ready, now) {
        let due = last.map_or(interval, |last| last.due.saturating_duration_since(now));
        return Ok(Action::requeue(due.max(Duration::from_secs(1))));
    }

    let (outcome, error) = validate(&store_ref, context).await;
    let failures = match &error {
        Some(error) if error.is_temporary() => last.map_or(0, |last| last.failures) + 1,
        _ => 0,
    };
    let due = match &error {
        Some(error) if error.is_temporary() => now + backoff::delay(failures),
        _ => now + interval,
    };
    let previous = store.status();
    let next = status::next_status(previous, &outcome, Timestamp::now());
    if previous != Some(&next) {
        patch_status(store, &next, context)
            .await
            .map_err(|source| Error::PatchStatus {
                store: store_ref.id.clone(),
                source,
            })?;
    }
    // Remembered only once the status is written, so a failed patch validates again.
    context.set_validation(
        &store_ref.id,
        Validated {
            version: store_ref.version.clone(),
            due,
            failures,
        },
    );

    record(
        store,
        &outcome,
        status::ready(previous),
        status::ready(Some(&next)),
        context,
    )
    .await;
    if matches!(outcome, Outcome::Valid(_)) && status::warn_unmaintained(store.spec(), store.meta())
    {
        publish(
            store,
            context,
            EventType::Warning,
            status::unmaintained_event(),
        )
        .await;
    }

    match error {
        Some(error) => Err(error),
        None => Ok(Action::requeue(status::with_jitter(
            interval,
            fastrand::f64(),
        ))),
    }
}

/// Static validation, then the provider's own check; the outcome for the status and the error
/// for the error policy.
async fn validate(store_ref: &StoreRef<'_>, context: &Context) -> (Outcome, Option<Error>) {
    let client_error = |source: ProviderError| {
        let outcome = Outcome::InvalidProviderConfig(source.to_string());
        let error = Error::Client {
            store: store_ref.id.clone(),
            source,
        };
        (outcome, Some(error))
    };
    if let Err(source) = context.clients.registry().validate_store(store_ref) {
        return client_error(source);
    }
    let client = match context.clients.client(store_ref, None).await {
        Ok(client) => client,
        Err(source) => return client_error(source),
    };
    match client.validate().await {
        Ok(ValidationResult::Ready | ValidationResult::Unknown) => {
            (Outcome::Valid(client.capabilities()), None)
        }
        // Upstream requeues at the refresh interval without an error.
        Ok(ValidationResult::Undetermined(message)) => (Outcome::ValidationUnknown(message), None),
        Err(source) => {
            let outcome = Outcome::ValidationFailed(source.to_string());
            let error = Error::Validation {
                store: store_ref.id.clone(),
                source,
            };
            (outcome, Some(error))
        }
    }
}

/// Writes the status by server-side apply on the status subresource.
async fn patch_status<K: Store>(
    store: &K,
    next: &external_secrets_crds::v1::SecretStoreStatus,
    context: &Context,
) -> Result<(), kube::Error> {
    let patch = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": next,
    });
    store
        .api(context.client.clone())
        .patch_status(
            &store.name_any(),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&patch),
        )
        .await
        .map(drop)
}

/// Updates the condition gauge and publishes an Event when the `Ready` condition changed.
async fn record<K: Store>(
    store: &K,
    outcome: &Outcome,
    before: Option<(&str, Option<&str>)>,
    after: Option<(&str, Option<&str>)>,
    context: &Context,
) {
    if let Some((ready, _)) = after {
        context
            .metrics
            .set_store_condition(K::CLUSTER, store.meta(), CONDITION_READY, ready);
    }
    if before == after {
        return;
    }
    let (warning, reason, message) = outcome.event();
    let kind = if warning {
        EventType::Warning
    } else {
        EventType::Normal
    };
    publish(store, context, kind, (reason, &message)).await;
}

/// Publishes an event about `store`: `(reason, note)`.
async fn publish<K: Store>(
    store: &K,
    context: &Context,
    kind: EventType,
    (reason, note): (&str, &str),
) {
    let object = store.object_ref(&());
    context
        .publish(K::EVENT_REPORTER, &object, kind, reason, note, "Validate")
        .await;
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
