//! One sync of a PushSecret, in upstream's order: finalizer for `deletionPolicy: Delete` ->
//! due? -> stores (by name or label, this controller's class, ClusterSecretStore conditions)
//! -> source Secrets (same namespace only), templated by `spec.template` -> push each
//! `spec.data` entry and the expanded `spec.dataTo` entries to each store
//! (`updatePolicy: IfNotExists` leaves existing ones) -> delete what is no longer pushed ->
//! status and events. A deleted PushSecret removes exactly what it pushed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use external_secrets_crds::v1alpha1::{
    PushSecret, PushSecretDeletionPolicy, PushSecretStatus, PushSecretUpdatePolicy,
};
use external_secrets_providers::duration::parse_go_duration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Resource, ResourceExt};

use super::context::{CONTROLLER, PsContext};
use super::error::{Error, SourceError};
use super::plan::{self, Synced};
use super::status::{NotReady, condition, fail, publish, report_not_ready, set_finalizer};
use super::{data_to, push, source, status, stores};
use crate::controllers::metadata::synced_resource_version;
use crate::stores::FoundStore;

/// Reconciles one PushSecret, recording upstream's per-object metrics around it.
pub async fn reconcile(
    push_secret: Arc<PushSecret>,
    context: Arc<PsContext>,
) -> Result<Action, Error> {
    let metrics = &context.shared.metrics;
    let _timer = metrics.reconcile_started(CONTROLLER);
    let result = crate::controllers::deadline::within(sync(&push_secret, &context)).await;
    metrics.reconcile_result(CONTROLLER, &result);
    if result.is_ok() {
        context.shared.backoff.forget(&*push_secret);
    }
    result
}

/// Retries temporary failures with per-object exponential backoff (a Secret, store or
/// provider may come back); a permanently invalid spec waits for a change of the PushSecret.
pub fn error_policy(
    push_secret: Arc<PushSecret>,
    error: &Error,
    context: Arc<PsContext>,
) -> Action {
    tracing::debug!(
        controller = CONTROLLER,
        reason = error.reason(),
        %error,
        "reconcile failed"
    );
    retry(error, || context.shared.backoff.failed(&*push_secret))
}

/// The error policy's decision: back off (`backoff` gives the delay) or wait for a change.
fn retry(error: &Error, backoff: impl FnOnce() -> Duration) -> Action {
    if error.is_temporary() {
        Action::requeue(backoff())
    } else {
        Action::await_change()
    }
}

/// What pushing ended in, short of an error.
enum Pushed {
    /// Everything was pushed (and what is no longer pushed deleted).
    Synced {
        /// What is pushed now, per store.
        synced: Synced,
        /// `spec.refreshInterval`.
        interval: Duration,
        /// When the push started.
        now: Timestamp,
        /// When pushing started (the metric counts from here to the written status).
        started: Instant,
    },
    /// The named source Secret is gone under `deletionPolicy: Delete`.
    SourceDeleted,
}

/// A failed push: the error and the record of pushed entries to keep, if it changes.
type Failure = (Error, Option<Synced>);

async fn sync(push_secret: &PushSecret, context: &PsContext) -> Result<Action, Error> {
    let previous = previous_synced(push_secret);
    let has_finalizer = push_secret
        .finalizers()
        .iter()
        .any(|f| f == plan::FINALIZER);
    let delete_policy = push_secret.spec.deletion_policy == PushSecretDeletionPolicy::Delete;
    // Nothing due and nothing to finalize: done without looking the stores up (no side
    // effects, so this holds whichever class the stores belong to).
    if let Some(next) = nothing_to_do(push_secret, delete_policy, has_finalizer) {
        return Ok(next);
    }
    // Stores of another controller class only: not ours to push, finalize or clean up (several
    // controllers may watch the same PushSecrets). Resolution errors are reported below.
    let stores = stores::resolve(push_secret, context).await;
    if stores.as_ref().is_ok_and(BTreeMap::is_empty) {
        return Ok(Action::await_change());
    }
    if push_secret.meta().deletion_timestamp.is_some() {
        return finalize(push_secret, context, &previous, has_finalizer).await;
    }
    if delete_policy != has_finalizer {
        // The change of the object brings the next reconcile.
        set_finalizer(push_secret, context, delete_policy).await?;
        return Ok(Action::await_change());
    }
    match push_all(push_secret, context, stores, &previous, delete_policy).await {
        Ok(Pushed::Synced {
            synced,
            interval,
            now,
            started,
        }) => report_synced(push_secret, context, synced, now, started)
            .await
            .map(|()| {
                if interval.is_zero() {
                    Action::await_change()
                } else {
                    Action::requeue(interval)
                }
            }),
        Ok(Pushed::SourceDeleted) => source_deleted(push_secret, context, &previous).await,
        Err((error, synced)) => fail(push_secret, context, error, synced).await,
    }
}

/// What the status records as pushed.
fn previous_synced(push_secret: &PushSecret) -> Synced {
    push_secret
        .status
        .as_ref()
        .map(|status| status.synced_push_secrets.clone())
        .unwrap_or_default()
}

/// `Some(next)` when nothing is due and the finalizer is as the policy wants it.
fn nothing_to_do(
    push_secret: &PushSecret,
    delete_policy: bool,
    has_finalizer: bool,
) -> Option<Action> {
    if push_secret.meta().deletion_timestamp.is_some() || delete_policy != has_finalizer {
        return None;
    }
    let interval = parse_go_duration(&push_secret.spec.refresh_interval).ok()?;
    not_due(push_secret, interval, Timestamp::now())
}

/// A deleted PushSecret: removes what it pushed (under its finalizer), then lets it go.
async fn finalize(
    push_secret: &PushSecret,
    context: &PsContext,
    previous: &Synced,
    has_finalizer: bool,
) -> Result<Action, Error> {
    if has_finalizer {
        if let Err(error) = push::delete_stale(push_secret, context, previous, &Synced::new()).await
        {
            return fail(push_secret, context, Error::DeleteStale(error), None).await;
        }
        set_finalizer(push_secret, context, false).await?;
    }
    Ok(Action::await_change())
}

/// Validates, reads the sources and pushes them to every store, then deletes what is no
/// longer pushed.
async fn push_all(
    push_secret: &PushSecret,
    context: &PsContext,
    stores: Result<BTreeMap<String, FoundStore>, Error>,
    previous: &Synced,
    delete_policy: bool,
) -> Result<Pushed, Failure> {
    let spec = &push_secret.spec;
    let interval = parse_go_duration(&spec.refresh_interval)
        .map_err(|error| (Error::RefreshInterval(error), None))?;
    let now = Timestamp::now();
    data_to::validate_store_refs(&spec.data_to, &spec.secret_store_refs)
        .map_err(|message| (Error::DataToStoreRef(message), None))?;
    let stores = stores.map_err(|error| (error, None))?;
    let identities: Vec<_> = stores.values().map(FoundStore::identity).collect();
    data_to::validate_selectors_match(&spec.data_to, &identities)
        .map_err(|message| (Error::DataToSelector(message), None))?;
    let secrets = match source::secrets(push_secret, context).await {
        Ok(secrets) => secrets,
        // Upstream: a named source gone while something is pushed under `Delete` takes the
        // pushed values with it.
        Err(SourceError::Missing(_)) if delete_policy && !previous.is_empty() => {
            return Ok(Pushed::SourceDeleted);
        }
        Err(error) => return Err((error.into(), None)),
    };
    let started = Instant::now();
    let mut synced = Synced::new();
    for secret in &secrets {
        if let Err(error) = push::push(push_secret, context, &stores, secret, &mut synced).await {
            let mut merged = previous.clone();
            for (store, entries) in &synced {
                merged
                    .entry(store.clone())
                    .or_default()
                    .extend(entries.clone());
            }
            return Err((Error::Push(error), Some(merged)));
        }
    }
    if delete_policy {
        push::delete_stale(push_secret, context, previous, &synced)
            .await
            .map_err(|error| (Error::DeleteStale(error), Some(previous.clone())))?;
    }
    Ok(Pushed::Synced {
        synced,
        interval,
        now,
        started,
    })
}

/// Records `Ready=True`: status, Normal event, metric.
async fn report_synced(
    push_secret: &PushSecret,
    context: &PsContext,
    synced: Synced,
    now: Timestamp,
    started: Instant,
) -> Result<(), Error> {
    let mut message = plan::MESSAGE_SYNCED.to_owned();
    if push_secret.spec.update_policy == PushSecretUpdatePolicy::IfNotExists {
        message.push_str(". Existing secrets in providers unchanged.");
    }
    let next = PushSecretStatus {
        refresh_time: Some(Time(now)),
        synced_resource_version: Some(synced_resource_version(&push_secret.metadata)),
        synced_push_secrets: synced,
        conditions: vec![condition(
            push_secret,
            "True",
            plan::REASON_SYNCED,
            &message,
        )],
    };
    status::write_status(push_secret, context, next).await?;
    publish(
        push_secret,
        context,
        EventType::Normal,
        plan::REASON_SYNCED,
        &message,
    )
    .await;
    context
        .shared
        .metrics
        .set_push_secret(push_secret.meta(), "True", started.elapsed());
    Ok(())
}

/// Upstream's `shouldRefresh`: `None` when a push is due now, else when to look again.
fn not_due(push_secret: &PushSecret, interval: Duration, now: Timestamp) -> Option<Action> {
    let status = push_secret.status.as_ref()?;
    if status.synced_resource_version.as_deref()
        != Some(&synced_resource_version(&push_secret.metadata))
    {
        return None;
    }
    let synced_before = status.synced_resource_version.is_some();
    // Upstream leaves a PushSecret whose source was deleted alone until it changes.
    let source_deleted = status.conditions.iter().any(|condition| {
        condition.r#type == "Ready"
            && condition.reason.as_deref() == Some(plan::REASON_SOURCE_DELETED)
    });
    if (interval.is_zero() && synced_before) || source_deleted {
        return Some(Action::await_change());
    }
    let refreshed = status.refresh_time.as_ref()?.0;
    let elapsed =
        Duration::from_secs(u64::try_from(now.as_second() - refreshed.as_second()).unwrap_or(0));
    (elapsed < interval).then(|| Action::requeue(interval - elapsed + Duration::from_secs(5)))
}

/// The named source Secret is gone under `deletionPolicy: Delete`: removes what was pushed
/// and says so (upstream's `SourceDeleted`), then waits for a change of the PushSecret (a
/// recreated source is not noticed before, as upstream).
async fn source_deleted(
    push_secret: &PushSecret,
    context: &PsContext,
    previous: &Synced,
) -> Result<Action, Error> {
    if let Err(error) = push::delete_stale(push_secret, context, previous, &Synced::new()).await {
        return fail(
            push_secret,
            context,
            Error::Cleanup(error),
            Some(previous.clone()),
        )
        .await;
    }
    let not_ready = NotReady {
        kind: EventType::Normal,
        reason: plan::REASON_SOURCE_DELETED,
        message: plan::MESSAGE_SOURCE_DELETED,
    };
    report_not_ready(push_secret, context, Some(Synced::new()), not_ready).await?;
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::push_secret::error::DataToError;
    use external_secrets_providers::duration::DurationError;

    #[test]
    fn a_permanently_invalid_spec_waits_for_a_change_instead_of_backing_off() {
        let backoff = || Duration::from_secs(7);
        let invalid = [
            Error::RefreshInterval(DurationError::Invalid("soon".into())),
            Error::DataToStoreRef(DataToError::StoreRefEmpty {
                field: "spec.dataTo[0]".into(),
            }),
            Error::StoreRef { index: 0 },
            Error::Source(SourceError::NoSelector),
        ];
        for error in invalid {
            assert!(!error.is_temporary(), "{error}");
            assert_eq!(retry(&error, backoff), Action::await_change(), "{error}");
        }
    }

    #[test]
    fn outages_and_missing_objects_back_off() {
        let backoff = || Duration::from_secs(7);
        let unavailable = external_secrets_providers::ProviderError::new(
            external_secrets_providers::ErrorKind::Unavailable,
            "connection refused",
        );
        let temporary = [
            Error::Source(SourceError::Missing("source".into())),
            Error::StoreNotFound {
                kind: external_secrets_crds::v1::SecretStoreRefKind::SecretStore,
                name: "store".into(),
            },
            Error::Push(super::super::error::PushError::Exists(unavailable)),
            // A provider refusing today (a revoked token) may accept tomorrow.
            Error::Push(super::super::error::PushError::Write {
                key: "password".into(),
                store: "vault".into(),
                source: external_secrets_providers::ProviderError::new(
                    external_secrets_providers::ErrorKind::PermissionDenied,
                    "permission denied",
                ),
            }),
        ];
        for error in temporary {
            assert!(error.is_temporary(), "{error}");
            assert_eq!(
                retry(&error, backoff),
                Action::requeue(Duration::from_secs(7)),
                "{error}"
            );
        }
    }
}
