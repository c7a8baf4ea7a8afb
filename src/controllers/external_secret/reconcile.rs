//! One sync of an ExternalSecret: class and store checks -> due? -> fetch -> deletion policy
//! -> write the target Secret (only when it differs) -> status, events, metrics -> requeue at
//! the next refresh. A failure never touches the Secret already synced.

use std::time::Instant;

use external_secrets_crds::v1::{
    ExternalSecret, ExternalSecretCreationPolicy, ExternalSecretDeletionPolicy, SecretStoreRef,
    SecretStoreRefKind,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, Resource, ResourceExt};

use super::context::{CONTROLLER, EsContext};
use super::error::Error;
use super::generic;
use super::inputs::read_provider_data;
use super::outcome::{fail, finish, publish, requeue};
use super::read::store_references;
use super::refresh;
use super::status::{self, Ready, Synced};
use super::target;
use super::write::{Target, write_target};
use crate::caches::CACHE_WAIT;
use crate::controllers::backoff::FailureBackoff;
use crate::controllers::deadline;
use crate::generators::{self, KubeGenerators};
use crate::stores::kind_and_name;

/// Why a reconcile ended in error (the status already says so).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReconcileError(#[from] pub Error);

/// Reconciles one ExternalSecret, recording upstream's per-object metrics around it.
pub async fn reconcile(es: &ExternalSecret, context: &EsContext) -> Result<Action, ReconcileError> {
    let metrics = &context.shared.metrics;
    let _timer = metrics.reconcile_started(CONTROLLER);
    let started = Instant::now();
    let result = deadline::within(sync(es, context)).await;
    metrics.record_sync(es.meta(), started.elapsed(), result.is_err());
    metrics.reconcile_result(CONTROLLER, &result);
    if result.is_ok() {
        context.shared.backoff.forget(es);
    }
    result.map_err(ReconcileError)
}

/// Temporary errors back off; permanent ones (bad spec) wait for a change of the object.
pub fn error_policy(
    es: &impl kube::Resource,
    error: &ReconcileError,
    backoff: &FailureBackoff,
) -> Action {
    let error = &error.0;
    tracing::debug!(
        controller = CONTROLLER,
        reason = error.reason(),
        temporary = error.is_temporary(),
        "sync failed"
    );
    if error.is_temporary() {
        Action::requeue(backoff.failed(es))
    } else {
        Action::await_change()
    }
}

async fn sync(es: &ExternalSecret, context: &EsContext) -> Result<Action, Error> {
    // Class checks and store lookups read the store caches: never before they are synced
    // (a store missing from an empty cache is not a store that does not exist).
    if !context.stores.synced() {
        return Ok(Action::requeue(CACHE_WAIT));
    }
    let references = store_references(es);
    if skip(es, &references, context).await {
        return Ok(Action::await_change());
    }
    if es.meta().deletion_timestamp.is_some() {
        return generic::sync::cleanup(es, context).await;
    }
    let interval = match refresh::interval(es) {
        Ok(interval) => interval,
        Err(error) => return fail(es, context, error, None).await,
    };
    if let Some(manifest) = &es.spec.target.manifest {
        return generic::sync::sync(es, context, manifest, interval).await;
    }
    let Some(mut target) = Target::locate(es, context) else {
        return Ok(Action::requeue(CACHE_WAIT));
    };
    if matches!(
        es.spec.target.creation_policy,
        ExternalSecretCreationPolicy::Merge | ExternalSecretCreationPolicy::CreateOrMerge
    ) {
        // Their decisions need the Secret's data (as upstream's).
        target.existing().await?;
    }
    let now = Timestamp::now();
    if let Some(next) = still_current(es, context, &mut target, interval, now).await? {
        return Ok(next);
    }
    let data = match read_provider_data(es, context).await {
        Ok(data) => data,
        Err((error, step)) => return fail(es, context, error, step).await,
    };
    let synced = |binding: Option<String>| Synced {
        refresh_time: now,
        resource_version: crate::controllers::metadata::synced_resource_version(&es.metadata),
        binding,
    };
    if data.is_empty() {
        match deletion_policy(es, context, &mut target).await? {
            NoData::Finish(ready) => {
                return finish(es, context, ready, Some(synced(None)), interval, now).await;
            }
            NoData::Fail(error) => {
                return fail(es, context, error, Some(status::MESSAGE_DELETE_FAILED)).await;
            }
            NoData::Write => {}
        }
    }
    let policy = es.spec.target.creation_policy;
    if policy == ExternalSecretCreationPolicy::Owner
        && renamed(es, &target.name)
        && let Err(error) = delete_orphaned(es, context, &target.api, &target.name).await
    {
        return fail(es, context, error, Some(MESSAGE_DELETE_ORPHANED_FAILED)).await;
    }
    match policy {
        ExternalSecretCreationPolicy::None => {
            let ready = Ready::done(status::REASON_SYNCED, status::MESSAGE_SYNCED);
            finish(es, context, ready, Some(synced(None)), interval, now).await
        }
        // Upstream's `markAsDone(SecretMissing)`: a successful outcome (refresh time and
        // synced version recorded, no event); the next refresh looks again.
        ExternalSecretCreationPolicy::Merge if !target.exists().await? => {
            let ready = Ready::done(status::REASON_MISSING, status::MESSAGE_MISSING);
            finish(es, context, ready, Some(synced(None)), interval, now).await
        }
        _ => match write_target(es, context, &mut target, &data).await {
            Ok(()) => {
                let ready = Ready::done(status::REASON_SYNCED, status::MESSAGE_SYNCED);
                let synced = synced(Some(target.name.clone()));
                finish(es, context, ready, Some(synced), interval, now).await
            }
            Err(error) => fail(es, context, error, Some(status::MESSAGE_UPDATE_FAILED)).await,
        },
    }
}

/// `Some(next)` when the last sync still holds: Ready, not due, target intact.
async fn still_current(
    es: &ExternalSecret,
    context: &EsContext,
    target: &mut Target,
    interval: std::time::Duration,
    now: Timestamp,
) -> Result<Option<Action>, Error> {
    let ready = es.status.as_ref().is_some_and(|status| {
        status
            .conditions
            .iter()
            .any(|c| c.status == "True" && c.reason.as_deref() == Some(status::REASON_SYNCED))
    });
    if !ready || refresh::should_refresh(es, interval, now) || !target.is_valid(es).await? {
        return Ok(None);
    }
    // Nothing to do, but dashboards still need the condition after a restart.
    context
        .shared
        .metrics
        .set_external_secret_condition(es.meta(), "True");
    let refreshed = refresh::last_refresh(es).unwrap_or(now);
    Ok(Some(requeue(es, context, interval, refreshed, now)))
}

/// What `deletionPolicy` makes of a sync without provider data.
enum NoData {
    /// The sync ends with this condition.
    Finish(Ready),
    /// The policy cannot be applied (upstream's "could not delete secret").
    Fail(Error),
    /// `Merge`: write the target as usual.
    Write,
}

/// No provider data: `deletionPolicy` decides.
async fn deletion_policy(
    es: &ExternalSecret,
    context: &EsContext,
    target: &mut Target,
) -> Result<NoData, Error> {
    let policy = es.spec.target.creation_policy;
    match es.spec.target.deletion_policy {
        ExternalSecretDeletionPolicy::Delete => {
            if policy != ExternalSecretCreationPolicy::Owner {
                let error = Error::DeleteNotOwner {
                    what: format!("secret {}", target.name),
                    policy,
                };
                return Ok(NoData::Fail(error));
            }
            if target.exists().await? {
                target
                    .api
                    .delete(&target.name, &DeleteParams::default())
                    .await
                    .map_err(Error::Kube)?;
                target.deleted(context);
                publish(
                    es,
                    context,
                    EventType::Normal,
                    "Deleted",
                    status::MESSAGE_DELETED,
                )
                .await;
            }
            Ok(NoData::Finish(Ready::done(
                status::REASON_DELETED,
                status::MESSAGE_DELETED,
            )))
        }
        ExternalSecretDeletionPolicy::Retain => Ok(NoData::Finish(Ready::done(
            status::REASON_SYNCED,
            status::MESSAGE_SYNCED_RETAIN,
        ))),
        ExternalSecretDeletionPolicy::Merge => Ok(NoData::Write),
    }
}

/// Upstream's `msgErrorDeleteOrphaned`.
const MESSAGE_DELETE_ORPHANED_FAILED: &str = "could not delete orphaned secrets";

/// Whether the target was renamed since the last sync (`status.binding` names the old one).
fn renamed(es: &ExternalSecret, target_name: &str) -> bool {
    es.status
        .as_ref()
        .and_then(|status| status.binding.as_ref())
        .is_some_and(|binding| !binding.name.is_empty() && binding.name != target_name)
}

/// Upstream's `deleteOrphanedSecrets`: Secrets this ExternalSecret created under an old
/// target name (found by the `created-by` label) are deleted.
async fn delete_orphaned(
    es: &ExternalSecret,
    context: &EsContext,
    secrets: &Api<Secret>,
    target_name: &str,
) -> Result<(), Error> {
    let namespace = es.namespace().unwrap_or_default();
    let selector = format!(
        "{}={}",
        target::LABEL_OWNER,
        crate::controllers::hash::owner_label(&namespace, &es.name_any())
    );
    let owned = secrets
        .list_metadata(&ListParams::default().labels(&selector))
        .await
        .map_err(Error::Kube)?;
    for orphan in owned.items.iter().filter(|s| s.name_any() != target_name) {
        match secrets
            .delete(&orphan.name_any(), &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => continue,
            Err(error) => return Err(Error::Kube(error)),
        }
        publish(
            es,
            context,
            EventType::Normal,
            "Deleted",
            "secret deleted because it was orphaned",
        )
        .await;
    }
    Ok(())
}

/// Upstream skips (without any status) ExternalSecrets using a store or a `dataFrom`
/// generator of another controller class (`shouldSkipUnmanagedStore`, `shouldSkipGenerator`),
/// or a ClusterSecretStore while that reconciler is disabled.
async fn skip(es: &ExternalSecret, references: &[SecretStoreRef], context: &EsContext) -> bool {
    let namespace = es.namespace().unwrap_or_default();
    let class = &context.shared.settings.controller_class;
    let foreign_store = references.iter().any(|reference| {
        if kind_and_name(reference).0 == SecretStoreRefKind::ClusterSecretStore
            && !context.cluster_stores_enabled
        {
            return true;
        }
        context
            .stores
            .find(reference, &namespace)
            .ok()
            .is_some_and(|store| !store.is_processed_by(class))
    });
    if foreign_store {
        return true;
    }
    let source = KubeGenerators::new(
        context.shared.client.clone(),
        context.shared.clients.registry().operator_identity(),
    );
    let generators = es
        .spec
        .data_from
        .iter()
        .filter_map(|entry| entry.source_ref.as_ref()?.generator_ref.as_ref());
    for reference in generators {
        let declared = generators::controller_class(&source, &namespace, reference).await;
        if declared.is_some_and(|declared| declared != *class) {
            return true;
        }
    }
    false
}
