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
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::context::{CONTROLLER, EsContext};
use super::error::Error;
use super::generic;
use super::inputs::{read_provider_data, template_sources};
use super::outcome::{fail, finish, publish, requeue};
use super::read::store_references;
use super::refresh;
use super::status::{self, Ready, Synced};
use super::target;
use crate::controllers::backoff::FailureBackoff;
use crate::controllers::template::SecretData;
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
    let result = sync(es, context).await;
    let namespace = es.namespace().unwrap_or_default();
    metrics.record_sync(
        &es.name_any(),
        &namespace,
        started.elapsed(),
        result.is_err(),
    );
    metrics.reconcile_result(CONTROLLER, &result);
    if result.is_ok() {
        context.shared.backoff.forget(es);
    }
    result.map_err(ReconcileError)
}

/// Temporary errors back off; permanent ones (bad spec) wait for a change of the object.
pub fn error_policy(
    es: &ExternalSecret,
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
    let shared = &context.shared;
    let namespace = es.namespace().unwrap_or_default();
    let references = store_references(es);
    if skip(es, &references, context) {
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
    let secrets: Api<Secret> = Api::namespaced(shared.client.clone(), &namespace);
    let target_name = target::target_name(es);
    let existing = secrets.get_opt(&target_name).await.map_err(Error::Kube)?;
    let now = Timestamp::now();
    let ready = es.status.as_ref().is_some_and(|status| {
        status
            .conditions
            .iter()
            .any(|c| c.status == "True" && c.reason.as_deref() == Some(status::REASON_SYNCED))
    });
    if ready
        && !refresh::should_refresh(es, interval, now)
        && target::is_valid(existing.as_ref(), es)
    {
        // Nothing to do, but dashboards still need the condition after a restart.
        shared
            .metrics
            .set_external_secret_condition(&es.name_any(), &namespace, "True");
        let refreshed = refresh::last_refresh(es).unwrap_or(now);
        return Ok(requeue(es, interval, refreshed, now));
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
    let policy = es.spec.target.creation_policy;
    if data.is_empty() {
        match es.spec.target.deletion_policy {
            ExternalSecretDeletionPolicy::Delete => {
                if policy != ExternalSecretCreationPolicy::Owner {
                    let error = Error::DeleteNotOwner {
                        what: format!("secret {target_name}"),
                        policy,
                    };
                    return fail(es, context, error, Some(status::MESSAGE_DELETE_FAILED)).await;
                }
                if existing.is_some() {
                    secrets
                        .delete(&target_name, &DeleteParams::default())
                        .await
                        .map_err(Error::Kube)?;
                    publish(
                        es,
                        context,
                        EventType::Normal,
                        "Deleted",
                        status::MESSAGE_DELETED,
                    )
                    .await;
                }
                let ready = Ready::done(status::REASON_DELETED, status::MESSAGE_DELETED);
                return finish(es, context, ready, Some(synced(None)), interval, now).await;
            }
            ExternalSecretDeletionPolicy::Retain => {
                let ready = Ready::done(status::REASON_SYNCED, status::MESSAGE_SYNCED_RETAIN);
                return finish(es, context, ready, Some(synced(None)), interval, now).await;
            }
            ExternalSecretDeletionPolicy::Merge => {}
        }
    }
    if policy == ExternalSecretCreationPolicy::Owner
        && renamed(es, &target_name)
        && let Err(error) = delete_orphaned(es, context, &secrets, &target_name).await
    {
        return fail(es, context, error, Some(MESSAGE_DELETE_ORPHANED_FAILED)).await;
    }
    match policy {
        ExternalSecretCreationPolicy::None => {
            let ready = Ready::done(status::REASON_SYNCED, status::MESSAGE_SYNCED);
            finish(es, context, ready, Some(synced(None)), interval, now).await
        }
        ExternalSecretCreationPolicy::Merge if existing.is_none() => {
            let ready = Ready {
                status: "False",
                reason: status::REASON_MISSING,
                message: status::MESSAGE_MISSING.to_owned(),
            };
            publish(
                es,
                context,
                EventType::Warning,
                "UpdateFailed",
                status::MESSAGE_MISSING,
            )
            .await;
            finish(es, context, ready, None, interval, now).await
        }
        _ => match write_target(es, context, &secrets, existing.as_ref(), &data).await {
            Ok(()) => {
                let ready = Ready::done(status::REASON_SYNCED, status::MESSAGE_SYNCED);
                finish(
                    es,
                    context,
                    ready,
                    Some(synced(Some(target_name))),
                    interval,
                    now,
                )
                .await
            }
            Err(error) => fail(es, context, error, Some(status::MESSAGE_UPDATE_FAILED)).await,
        },
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

/// Upstream skips (without any status) ExternalSecrets using a store of another controller
/// class, or a ClusterSecretStore while that reconciler is disabled.
fn skip(es: &ExternalSecret, references: &[SecretStoreRef], context: &EsContext) -> bool {
    let namespace = es.namespace().unwrap_or_default();
    references.iter().any(|reference| {
        if kind_and_name(reference).0 == SecretStoreRefKind::ClusterSecretStore
            && !context.cluster_stores_enabled
        {
            return true;
        }
        context
            .stores
            .find(reference, &namespace)
            .ok()
            .is_some_and(|store| !store.is_processed_by(&context.shared.settings.controller_class))
    })
}

/// Server-side applies our part of the target Secret, unless it already holds it.
async fn write_target(
    es: &ExternalSecret,
    context: &EsContext,
    secrets: &Api<Secret>,
    existing: Option<&Secret>,
    data: &SecretData,
) -> Result<(), Error> {
    let sources = template_sources(es, context).await?;
    let desired = target::desired_secret(es, data, existing, &sources)?;
    if let Some(existing) = existing {
        if let Some(owner) = target::other_external_secret_owner(
            existing
                .metadata
                .owner_references
                .as_deref()
                .unwrap_or_default(),
            es,
        ) {
            return Err(Error::OwnedByAnother(owner));
        }
        if target::is_up_to_date(existing, &desired) {
            return Ok(());
        }
        if existing.immutable == Some(true) {
            return Err(Error::ImmutableTarget);
        }
    }
    let mut body = serde_json::to_value(&desired).map_err(Error::Encode)?;
    body["apiVersion"] = json!("v1");
    body["kind"] = json!("Secret");
    let name = target::target_name(es);
    secrets
        .patch(
            &name,
            &PatchParams::apply(&target::field_manager(es)).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(Error::Kube)?;
    let (reason, note) = if existing.is_some() {
        ("Updated", "secret updated")
    } else {
        ("Created", "secret created")
    };
    publish(es, context, EventType::Normal, reason, note).await;
    Ok(())
}
