//! What a PushSecret sync leaves behind: the `Ready` condition (written only when it
//! changed), its event and metric, and upstream's finalizer.

use std::time::Duration;

use external_secrets_crds::v1alpha1::{PushSecret, PushSecretStatus, PushSecretStatusCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::context::{CONTROLLER, PsContext};
use super::error::Error;
use super::plan::{self, Synced};
use crate::context::FIELD_MANAGER;
use crate::controllers::finalizers;

/// A `Ready=False` outcome: its event type, reason and message.
pub struct NotReady<'a> {
    /// Normal or Warning.
    pub kind: EventType,
    /// The condition's and event's reason.
    pub reason: &'a str,
    /// The condition's and event's message.
    pub message: &'a str,
}

/// Records `Ready=False` (status, with `synced` replacing the pushed entries when given),
/// its event and the metric.
pub async fn report_not_ready(
    push_secret: &PushSecret,
    context: &PsContext,
    synced: Option<Synced>,
    outcome: NotReady<'_>,
) -> Result<(), Error> {
    let mut status = push_secret.status.clone().unwrap_or_default();
    if let Some(synced) = synced {
        status.synced_push_secrets = synced;
    }
    status.conditions = vec![condition(
        push_secret,
        "False",
        outcome.reason,
        outcome.message,
    )];
    write_status(push_secret, context, status).await?;
    publish(
        push_secret,
        context,
        outcome.kind,
        outcome.reason,
        outcome.message,
    )
    .await;
    context
        .shared
        .metrics
        .set_push_secret(push_secret.meta(), "False", Duration::ZERO);
    Ok(())
}

/// Records a failure: condition, Warning event, metrics; keeps `synced` (or the previous
/// record) so a later cleanup still knows what was pushed.
pub async fn fail(
    push_secret: &PushSecret,
    context: &PsContext,
    error: Error,
    synced: Option<Synced>,
) -> Result<Action, Error> {
    let message = error.to_string();
    let not_ready = NotReady {
        kind: EventType::Warning,
        reason: plan::REASON_ERRORED,
        message: &message,
    };
    report_not_ready(push_secret, context, synced, not_ready).await?;
    Err(error)
}

/// The Ready condition, keeping the transition time while the status stays the same.
pub fn condition(
    push_secret: &PushSecret,
    status: &str,
    reason: &str,
    message: &str,
) -> PushSecretStatusCondition {
    let previous = push_secret
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.r#type == "Ready"))
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone());
    PushSecretStatusCondition {
        r#type: "Ready".to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_transition_time: previous.or_else(|| Some(Time(Timestamp::now()))),
    }
}

/// Writes the status (server-side apply) when it changed.
pub async fn write_status(
    push_secret: &PushSecret,
    context: &PsContext,
    status: PushSecretStatus,
) -> Result<(), Error> {
    if push_secret.status.as_ref() == Some(&status) {
        return Ok(());
    }
    let patch = json!({
        "apiVersion": PushSecret::api_version(&()),
        "kind": PushSecret::kind(&()),
        "status": status,
    });
    Api::<PushSecret>::namespaced(
        context.shared.client.clone(),
        &push_secret.namespace().unwrap_or_default(),
    )
    .patch_status(
        &push_secret.name_any(),
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}

/// Adds or removes upstream's finalizer, guarded by the resourceVersion seen.
pub async fn set_finalizer(
    push_secret: &PushSecret,
    context: &PsContext,
    present: bool,
) -> Result<(), Error> {
    let api = Api::<PushSecret>::namespaced(
        context.shared.client.clone(),
        &push_secret.namespace().unwrap_or_default(),
    );
    finalizers::set(&api, push_secret.meta(), plan::FINALIZER, present).await?;
    Ok(())
}

/// Publishes an event about the PushSecret.
pub async fn publish(
    push_secret: &PushSecret,
    context: &PsContext,
    kind: EventType,
    reason: &str,
    note: &str,
) {
    let object = push_secret.object_ref(&());
    context
        .shared
        .publish(CONTROLLER, &object, kind, reason, note, "Push")
        .await;
}
