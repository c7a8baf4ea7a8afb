//! How a sync ends: the status condition (written only when it changed), the event, the
//! condition metric, and when to look again. Shared by Secret and generic targets.

use std::time::Duration;

use external_secrets_crds::v1::ExternalSecret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::context::{EVENT_REPORTER, EsContext};
use super::error::Error;
use super::refresh;
use super::status::{self, Ready, Synced};
use crate::context::FIELD_MANAGER;

/// Records a failure: condition (upstream's step message + error), Warning event, metrics.
pub async fn fail(
    es: &ExternalSecret,
    context: &EsContext,
    error: Error,
    step: Option<&str>,
) -> Result<Action, Error> {
    let ready = match step {
        Some(step) => Ready::failed(step, &error),
        None => Ready::failed_plain(&error),
    };
    fail_as(es, context, error, ready).await
}

/// Records a failure whose condition is `ready`: Warning event, status, metrics.
pub async fn fail_as(
    es: &ExternalSecret,
    context: &EsContext,
    error: Error,
    ready: Ready,
) -> Result<Action, Error> {
    tracing::warn!(
        externalsecret = %es.name_any(),
        namespace = %es.namespace().unwrap_or_default(),
        %error,
        "sync failed"
    );
    publish(
        es,
        context,
        EventType::Warning,
        "UpdateFailed",
        &error.to_string(),
    )
    .await;
    write_status(es, context, &ready, None).await?;
    Err(error)
}

/// Records an outcome that is not an error and schedules the next refresh.
pub async fn finish(
    es: &ExternalSecret,
    context: &EsContext,
    ready: Ready,
    synced: Option<Synced>,
    interval: Duration,
    now: Timestamp,
) -> Result<Action, Error> {
    write_status(es, context, &ready, synced.as_ref()).await?;
    Ok(requeue(es, context, interval, now, now))
}

/// Sets the next refresh counted from `refreshed` ([`super::refresh_timers`]), or none when
/// the ExternalSecret waits for a change; kube's scheduler is left nothing to hold.
pub fn requeue(
    es: &ExternalSecret,
    context: &EsContext,
    interval: Duration,
    refreshed: Timestamp,
    now: Timestamp,
) -> Action {
    let namespace = es.namespace().unwrap_or_default();
    let name = es.name_any();
    match refresh::next_refresh(es, interval, refreshed, now, fastrand::f64()) {
        Some(after) => context.refresh_timers.schedule(&namespace, &name, after),
        None => context.refresh_timers.forget(&namespace, &name),
    }
    Action::await_change()
}

/// Writes the status (server-side apply on the status subresource) when it changed.
async fn write_status(
    es: &ExternalSecret,
    context: &EsContext,
    ready: &Ready,
    synced: Option<&Synced>,
) -> Result<(), Error> {
    let previous = es.status.as_ref();
    let next = status::next_status(previous, ready, synced, Timestamp::now());
    context
        .shared
        .metrics
        .set_external_secret_condition(es.meta(), ready.status);
    if previous == Some(&next) {
        return Ok(());
    }
    let patch = json!({
        "apiVersion": ExternalSecret::api_version(&()),
        "kind": ExternalSecret::kind(&()),
        "status": next,
    });
    Api::<ExternalSecret>::namespaced(
        context.shared.client.clone(),
        &es.namespace().unwrap_or_default(),
    )
    .patch_status(
        &es.name_any(),
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map_err(Error::Kube)?;
    context.recent.wrote(es, next);
    Ok(())
}

/// Publishes an event about `es` under upstream's reporter name.
pub async fn publish(
    es: &ExternalSecret,
    context: &EsContext,
    kind: EventType,
    reason: &str,
    note: &str,
) {
    let object = es.object_ref(&());
    context
        .shared
        .publish(EVENT_REPORTER, &object, kind, reason, note, "Sync")
        .await;
}
