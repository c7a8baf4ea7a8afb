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

/// How soon a write that lost a race is retried (upstream's).
const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// Syncs `es`, whose target is `manifest`; `interval` is its refresh interval.
pub async fn sync(
    es: &ExternalSecret,
    context: &EsContext,
    manifest: &ManifestReference,
    interval: Duration,
) -> Result<Action, Error> {
    let failed = |step: &'static str| {
        move |error: Error| {
            let ready = Ready::failed_as(status::REASON_RESOURCE_SYNCED_ERROR, step, &error);
            (error, ready)
        }
    };
    let gvk = match validate(manifest, context.generic.allowed) {
        Ok(gvk) => gvk,
        Err(message) => {
            let error = Error::InvalidSpec(message);
            let ready = Ready::failed_as(
                status::REASON_SYNCED_ERROR,
                "invalid generic target",
                &error,
            );
            return fail_as(es, context, error, ready).await;
        }
    };
    add_finalizer(es, context).await?;
    let (api, resource) = match target_api(es, context, &gvk).await {
        Ok(found) => found,
        Err(error) => {
            let (error, ready) = failed("could not get target resource")(error);
            return fail_as(es, context, error, ready).await;
        }
    };
    let name = target_name(es);
    let policy = es.spec.target.creation_policy;
    let existing = match policy {
        ExternalSecretCreationPolicy::None => None,
        _ => match api.get_opt(&name).await {
            Ok(object) => object.map(|object| serde_json::to_value(object).unwrap_or_default()),
            Err(error) => {
                let (error, ready) = failed("could not get target resource")(Error::Kube(error));
                return fail_as(es, context, error, ready).await;
            }
        },
    };
    let now = Timestamp::now();
    let synced_before = es.status.as_ref().is_some_and(|status| {
        status.conditions.iter().any(|c| {
            c.status == "True" && c.reason.as_deref() == Some(status::REASON_RESOURCE_SYNCED)
        })
    });
    if synced_before
        && !refresh::should_refresh(es, interval, now)
        && render::is_valid(existing.as_ref(), es)
    {
        context
            .generic
            .watches
            .ensure(&context.shared.client, &resource);
        let refreshed = refresh::last_refresh(es).unwrap_or(now);
        return Ok(requeue(es, interval, refreshed, now));
    }
    let data = match read_provider_data(es, context).await {
        Ok(data) => data,
        Err((error, _)) => {
            let (error, ready) = failed(status::MESSAGE_GET_DATA_FAILED)(error);
            return fail_as(es, context, error, ready).await;
        }
    };
    let synced = Synced {
        refresh_time: now,
        resource_version: crate::controllers::metadata::synced_resource_version(&es.metadata),
        binding: None,
    };
    if data.is_empty() {
        match es.spec.target.deletion_policy {
            ExternalSecretDeletionPolicy::Delete => {
                if policy != ExternalSecretCreationPolicy::Owner {
                    let error = Error::InvalidSpec(format!(
                        "unable to delete resource: creationPolicy={policy:?} is not Owner"
                    ));
                    let (error, ready) = failed("could not delete resource")(error);
                    return fail_as(es, context, error, ready).await;
                }
                if existing.is_some()
                    && let Err(error) = delete_target(es, context, &api, &manifest.kind).await
                {
                    let (error, ready) = failed("could not delete resource")(error);
                    return fail_as(es, context, error, ready).await;
                }
                let ready = Ready::done(status::REASON_RESOURCE_DELETED, status::MESSAGE_DELETED);
                return finish(es, context, ready, Some(synced), interval, now).await;
            }
            ExternalSecretDeletionPolicy::Retain => {
                let ready = Ready::done(
                    status::REASON_RESOURCE_SYNCED,
                    status::MESSAGE_SYNCED_RETAIN,
                );
                return finish(es, context, ready, Some(synced), interval, now).await;
            }
            ExternalSecretDeletionPolicy::Merge => {}
        }
    }
    let merge = matches!(
        policy,
        ExternalSecretCreationPolicy::Merge | ExternalSecretCreationPolicy::CreateOrMerge
    );
    let base = existing.as_ref().filter(|_| merge);
    let desired = match desired(es, context, manifest, &data, base).await {
        Ok(desired) => desired,
        Err(error) => {
            let (error, ready) = failed("could not apply template to manifest")(error);
            return fail_as(es, context, error, ready).await;
        }
    };
    let written = match (policy, &existing) {
        (ExternalSecretCreationPolicy::None, _) => Ok(()),
        (ExternalSecretCreationPolicy::Merge, None) => {
            let ready = Ready::done(
                status::REASON_RESOURCE_MISSING,
                status::MESSAGE_RESOURCE_MISSING,
            );
            return finish(es, context, ready, Some(synced), interval, now).await;
        }
        (_, existing) => write(es, context, &api, existing.as_ref(), desired, merge).await,
    };
    match written {
        Ok(()) => {}
        Err(Error::Kube(kube::Error::Api(status))) if status.code == 409 => {
            return Ok(Action::requeue(CONFLICT_RETRY));
        }
        Err(error) => {
            let (error, ready) = failed(status::MESSAGE_UPDATE_FAILED)(error);
            return fail_as(es, context, error, ready).await;
        }
    }
    if policy != ExternalSecretCreationPolicy::None {
        context
            .generic
            .watches
            .ensure(&context.shared.client, &resource);
    }
    let ready = Ready::done(status::REASON_RESOURCE_SYNCED, status::MESSAGE_SYNCED);
    finish(es, context, ready, Some(synced), interval, now).await
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
    data: &crate::controllers::template::SecretData,
    base: Option<&Value>,
) -> Result<Value, Error> {
    let sources = template_sources(es, context).await?;
    render::desired(es, manifest, data, base, &sources).map_err(Error::InvalidSpec)
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
            let object: DynamicObject = serde_json::from_value(desired)
                .map_err(|error| Error::InvalidSpec(error.to_string()))?;
            api.replace(&name, &PostParams::default(), &object)
                .await
                .map_err(Error::Kube)?;
            "Updated"
        }
        None => {
            let object: DynamicObject = serde_json::from_value(desired)
                .map_err(|error| Error::InvalidSpec(error.to_string()))?;
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
