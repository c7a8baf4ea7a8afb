//! One sync of an ExternalSecret with a generic target, in upstream's order
//! (`reconcileGenericTarget`): validate -> read the target -> due? -> fetch -> deletion policy
//! -> build -> create or replace (only when it differs) -> status. Failures report upstream's
//! `ResourceSyncedError` and never touch the object already written.

use std::time::Duration;

use external_secrets_crds::v1::{
    ExternalSecret, ExternalSecretCreationPolicy, ExternalSecretDeletionPolicy, ManifestReference,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use super::{FINALIZER, render, validate};
use crate::controllers::external_secret::context::EsContext;
use crate::controllers::external_secret::error::Error;
use crate::controllers::external_secret::inputs::{read_provider_data, template_sources};
use crate::controllers::external_secret::outcome::{fail_as, finish, publish, requeue};
use crate::controllers::external_secret::refresh;
use crate::controllers::external_secret::status::{self, Ready, Synced};
use crate::controllers::external_secret::target::target_name;
use crate::controllers::template::SecretData;

/// How soon a write that lost a race is retried (upstream's).
const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// Why a sync stopped early: a failure to report (its condition), or an error to return as
/// it is (the status could not be written).
enum Stop {
    /// Report `Ready` and return the error.
    Failed(Error, Ready),
    /// Return the error.
    Error(Error),
}

impl From<Error> for Stop {
    fn from(error: Error) -> Self {
        Stop::Error(error)
    }
}

/// A failure of `step`, reported as upstream's `ResourceSyncedError`.
fn failed(step: &'static str) -> impl Fn(Error) -> Stop {
    move |error: Error| {
        let ready = Ready::failed_as(status::REASON_RESOURCE_SYNCED_ERROR, step, &error);
        Stop::Failed(error, ready)
    }
}

/// Syncs `es`, whose target is `manifest`; `interval` is its refresh interval.
pub async fn sync(
    es: &ExternalSecret,
    context: &EsContext,
    manifest: &ManifestReference,
    interval: Duration,
) -> Result<Action, Error> {
    match steps(es, context, manifest, interval).await {
        Ok(action) => Ok(action),
        Err(Stop::Failed(error, ready)) => fail_as(es, context, error, ready).await,
        Err(Stop::Error(error)) => Err(error),
    }
}

/// The sync as a flat sequence of steps.
async fn steps(
    es: &ExternalSecret,
    context: &EsContext,
    manifest: &ManifestReference,
    interval: Duration,
) -> Result<Action, Stop> {
    let gvk = validate(manifest, context.generic.allowed).map_err(|message| {
        let error = Error::GenericTarget(message);
        let ready = Ready::failed_as(
            status::REASON_SYNCED_ERROR,
            "invalid generic target",
            &error,
        );
        Stop::Failed(error, ready)
    })?;
    add_finalizer(es, context).await?;
    let (api, resource) = target_api(es, context, &gvk)
        .await
        .map_err(failed("could not get target resource"))?;
    let policy = es.spec.target.creation_policy;
    let existing = read_existing(es, &api, policy)
        .await
        .map_err(failed("could not get target resource"))?;
    let now = Timestamp::now();
    if is_current(es, existing.as_ref(), interval, now) {
        context
            .generic
            .watches
            .ensure(&context.shared.client, &resource);
        let refreshed = refresh::last_refresh(es).unwrap_or(now);
        return Ok(requeue(es, context, interval, refreshed, now));
    }
    let data = read_provider_data(es, context)
        .await
        .map_err(|(error, _)| failed(status::MESSAGE_GET_DATA_FAILED)(error))?;
    let synced = Synced {
        refresh_time: now,
        resource_version: crate::controllers::metadata::synced_resource_version(&es.metadata),
        binding: None,
    };
    let ready = if data.is_empty() {
        deletion_policy(es, context, &api, manifest, existing.is_some()).await?
    } else {
        None
    };
    let ready = match ready {
        Some(ready) => ready,
        None => {
            let written = write_desired(es, context, manifest, &api, existing.as_ref(), &data);
            match written.await? {
                Written::Conflict => return Ok(Action::requeue(CONFLICT_RETRY)),
                Written::TargetMissing => Ready::done(
                    status::REASON_RESOURCE_MISSING,
                    status::MESSAGE_RESOURCE_MISSING,
                ),
                Written::Done => {
                    if policy != ExternalSecretCreationPolicy::None {
                        context
                            .generic
                            .watches
                            .ensure(&context.shared.client, &resource);
                    }
                    Ready::done(status::REASON_RESOURCE_SYNCED, status::MESSAGE_SYNCED)
                }
            }
        }
    };
    Ok(finish(es, context, ready, Some(synced), interval, now).await?)
}

/// The target as it is now, unless `creationPolicy: None` (which never reads it).
async fn read_existing(
    es: &ExternalSecret,
    api: &Api<DynamicObject>,
    policy: ExternalSecretCreationPolicy,
) -> Result<Option<Value>, Error> {
    if policy == ExternalSecretCreationPolicy::None {
        return Ok(None);
    }
    let object = api.get_opt(&target_name(es)).await.map_err(Error::Kube)?;
    Ok(object.map(|object| serde_json::to_value(object).unwrap_or_default()))
}

/// Whether the last sync still holds: synced before, not due, target intact.
fn is_current(
    es: &ExternalSecret,
    existing: Option<&Value>,
    interval: Duration,
    now: Timestamp,
) -> bool {
    let synced_before = es.status.as_ref().is_some_and(|status| {
        status.conditions.iter().any(|c| {
            c.status == "True" && c.reason.as_deref() == Some(status::REASON_RESOURCE_SYNCED)
        })
    });
    synced_before && !refresh::should_refresh(es, interval, now) && render::is_valid(existing, es)
}

/// No provider data: `deletionPolicy` decides (`Some` ends the sync with that condition).
async fn deletion_policy(
    es: &ExternalSecret,
    context: &EsContext,
    api: &Api<DynamicObject>,
    manifest: &ManifestReference,
    exists: bool,
) -> Result<Option<Ready>, Stop> {
    let policy = es.spec.target.creation_policy;
    match es.spec.target.deletion_policy {
        ExternalSecretDeletionPolicy::Delete => {
            if policy != ExternalSecretCreationPolicy::Owner {
                let error = Error::DeleteNotOwner {
                    what: "resource".to_owned(),
                    policy,
                };
                return Err(failed("could not delete resource")(error));
            }
            if exists {
                delete_target(es, context, api, &manifest.kind)
                    .await
                    .map_err(failed("could not delete resource"))?;
            }
            Ok(Some(Ready::done(
                status::REASON_RESOURCE_DELETED,
                status::MESSAGE_DELETED,
            )))
        }
        ExternalSecretDeletionPolicy::Retain => Ok(Some(Ready::done(
            status::REASON_RESOURCE_SYNCED,
            status::MESSAGE_SYNCED_RETAIN,
        ))),
        ExternalSecretDeletionPolicy::Merge => Ok(None),
    }
}

/// What writing the target came to.
enum Written {
    /// Written, or already as desired, or not ours to write (`creationPolicy: None`).
    Done,
    /// `creationPolicy: Merge` and no target to merge into.
    TargetMissing,
    /// Another writer changed it first; retried shortly.
    Conflict,
}

/// Builds the desired target and writes it as `creationPolicy` says.
async fn write_desired(
    es: &ExternalSecret,
    context: &EsContext,
    manifest: &ManifestReference,
    api: &Api<DynamicObject>,
    existing: Option<&Value>,
    data: &SecretData,
) -> Result<Written, Stop> {
    let policy = es.spec.target.creation_policy;
    let merge = matches!(
        policy,
        ExternalSecretCreationPolicy::Merge | ExternalSecretCreationPolicy::CreateOrMerge
    );
    let base = existing.filter(|_| merge);
    let desired = desired(es, context, manifest, data, base)
        .await
        .map_err(failed("could not apply template to manifest"))?;
    let written = match (policy, existing) {
        (ExternalSecretCreationPolicy::None, _) => Ok(()),
        (ExternalSecretCreationPolicy::Merge, None) => return Ok(Written::TargetMissing),
        (_, existing) => write(es, context, api, existing, desired, merge).await,
    };
    match written {
        Ok(()) => Ok(Written::Done),
        Err(Error::Kube(kube::Error::Api(status))) if status.code == 409 => Ok(Written::Conflict),
        Err(error) => Err(failed(status::MESSAGE_UPDATE_FAILED)(error)),
    }
}

/// Cleans up a deleted ExternalSecret that carries our finalizer: with `deletionPolicy:
/// Delete` its generic target is deleted (whoever owns it, as upstream), then the finalizer
/// goes.
pub async fn cleanup(es: &ExternalSecret, context: &EsContext) -> Result<Action, Error> {
    if !es.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Action::await_change());
    }
    if let Some(manifest) = &es.spec.target.manifest
        && es.spec.target.deletion_policy == ExternalSecretDeletionPolicy::Delete
        && let Ok(gvk) = validate(manifest, context.generic.allowed)
    {
        match target_api(es, context, &gvk).await {
            Ok((api, _)) => delete_target(es, context, &api, &manifest.kind).await?,
            // The kind is not served (its CRD is gone): there is nothing left to delete.
            Err(Error::Kube(kube::Error::Api(status))) if status.code == 404 => {}
            Err(Error::Kube(kube::Error::Discovery(_))) => {}
            Err(error) => return Err(error),
        }
    }
    let remaining: Vec<&String> = es.finalizers().iter().filter(|f| *f != FINALIZER).collect();
    patch_finalizers(es, context, json!(remaining)).await?;
    Ok(Action::await_change())
}

async fn add_finalizer(es: &ExternalSecret, context: &EsContext) -> Result<(), Error> {
    if es.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(());
    }
    let mut finalizers = es.finalizers().to_vec();
    finalizers.push(FINALIZER.to_owned());
    patch_finalizers(es, context, json!(finalizers)).await
}

/// A merge patch of the finalizer list only, so no spec field changes manager.
async fn patch_finalizers(
    es: &ExternalSecret,
    context: &EsContext,
    finalizers: Value,
) -> Result<(), Error> {
    let api: Api<ExternalSecret> = Api::namespaced(
        context.shared.client.clone(),
        &es.namespace().unwrap_or_default(),
    );
    let patch = json!({"metadata": {"finalizers": finalizers}});
    api.patch(
        &es.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map_err(Error::Kube)?;
    Ok(())
}

/// The API of the target's kind in the ExternalSecret's namespace, and the kind's resource.
async fn target_api(
    es: &ExternalSecret,
    context: &EsContext,
    gvk: &GroupVersionKind,
) -> Result<(Api<DynamicObject>, ApiResource), Error> {
    let client = context.shared.client.clone();
    let resource = context
        .generic
        .resource(&client, gvk)
        .await
        .map_err(Error::Kube)?;
    let namespace = es.namespace().unwrap_or_default();
    Ok((
        Api::namespaced_with(client, &namespace, &resource),
        resource,
    ))
}

async fn desired(
    es: &ExternalSecret,
    context: &EsContext,
    manifest: &ManifestReference,
    data: &SecretData,
    base: Option<&Value>,
) -> Result<Value, Error> {
    let sources = template_sources(es, context).await?;
    render::desired(es, manifest, data, base, &sources).map_err(Error::GenericTarget)
}

/// Creates the target, or replaces `existing` with `desired` unless it already is that.
async fn write(
    es: &ExternalSecret,
    context: &EsContext,
    api: &Api<DynamicObject>,
    existing: Option<&Value>,
    mut desired: Value,
    merge: bool,
) -> Result<(), Error> {
    let kind = desired["kind"].as_str().unwrap_or_default().to_owned();
    let name = target_name(es);
    let reason = match existing {
        Some(existing) => {
            if render::is_up_to_date(existing, &desired, merge) {
                return Ok(());
            }
            for field in ["resourceVersion", "uid"] {
                desired["metadata"][field] = existing["metadata"][field].clone();
            }
            let object: DynamicObject = serde_json::from_value(desired).map_err(Error::Encode)?;
            api.replace(&name, &PostParams::default(), &object)
                .await
                .map_err(Error::Kube)?;
            "Updated"
        }
        None => {
            let object: DynamicObject = serde_json::from_value(desired).map_err(Error::Encode)?;
            api.create(&PostParams::default(), &object)
                .await
                .map_err(Error::Kube)?;
            "Created"
        }
    };
    let note = format!("{reason} {kind} {name}");
    publish(es, context, EventType::Normal, reason, &note).await;
    Ok(())
}

async fn delete_target(
    es: &ExternalSecret,
    context: &EsContext,
    api: &Api<DynamicObject>,
    kind: &str,
) -> Result<(), Error> {
    let name = target_name(es);
    match api.delete(&name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
        Err(error) => return Err(Error::Kube(error)),
    }
    let note = format!("Deleted {kind} {name}");
    publish(es, context, EventType::Normal, "Deleted", &note).await;
    Ok(())
}
