//! One reconcile of a cluster template: (behind its cleanup finalizer, where it has one) create
//! or update its copy in every selected namespace, remove the ones it no longer selects (or
//! that carry an old name), and record provisioned and failed namespaces.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{self, Event};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::selection::{is_owned_by, target_namespaces};
use super::{ClusterTemplate, namespace_finalizers};
use crate::caches::{CACHE_WAIT, is_synced};
use crate::context::{Context, FIELD_MANAGER};

/// What the reconciler shares.
pub struct TemplateContext {
    /// State shared with the other controllers.
    pub shared: Arc<Context>,
    /// Every Namespace's metadata, for selection.
    pub namespaces: Store<PartialObjectMeta<Namespace>>,
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Talking to the Kubernetes API failed.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer failed.
    #[error("finalizer: {0}")]
    Finalizer(#[source] Box<finalizer::Error<Error>>),
    /// Some namespaces failed; the status names them. Retried with backoff.
    #[error("one or more namespaces failed")]
    NamespacesFailed,
    /// The namespace cache has not received its first list: nothing is released from it yet.
    #[error("namespace cache not synced yet")]
    CacheNotSynced,
    /// The reconcile ran past its deadline.
    #[error(transparent)]
    Deadline(#[from] crate::controllers::deadline::DeadlineExceeded),
}

/// Reconciles one template (behind its finalizer, if it has one).
pub async fn reconcile<T: ClusterTemplate>(
    template: Arc<T>,
    context: Arc<TemplateContext>,
) -> Result<Action, Error> {
    let metrics = &context.shared.metrics;
    let _timer = metrics.reconcile_started(T::CONTROLLER);
    let subject = Arc::clone(&template);
    let result = crate::controllers::deadline::within(async {
        match T::FINALIZER {
            Some(name) => {
                let api: Api<T> = Api::all(context.shared.client.clone());
                finalizer::finalizer(&api, name, template, |event| async {
                    match event {
                        Event::Apply(template) => apply(&*template, &context).await,
                        Event::Cleanup(template) => cleanup(&*template, &context).await,
                    }
                })
                .await
                .map_err(|error| match error {
                    finalizer::Error::ApplyFailed(error)
                    | finalizer::Error::CleanupFailed(error) => error,
                    other => Error::Finalizer(Box::new(other)),
                })
            }
            None => apply(&*template, &context).await,
        }
    })
    .await;
    metrics.reconcile_result(T::CONTROLLER, &result);
    if result.is_ok() {
        context.shared.backoff.forget(&*subject);
    }
    result
}

async fn apply<T: ClusterTemplate>(
    template: &T,
    context: &TemplateContext,
) -> Result<Action, Error> {
    // Which namespaces are selected (and which copies go) is decided from the namespace
    // cache only once it holds the full list: an empty cache after a restart would delete
    // every copy.
    if !is_synced(&context.namespaces) {
        tracing::debug!(controller = T::CONTROLLER, "namespace cache not synced yet");
        return Ok(Action::requeue(CACHE_WAIT));
    }
    let started = Instant::now();
    let client = &context.shared.client;
    let owner = template.name_any();
    let name = template.copy_name();
    let targets = target_namespaces(
        template,
        context.namespaces.state().iter().map(AsRef::as_ref),
    );
    tracing::debug!(
        controller = T::CONTROLLER,
        template = %owner,
        namespaces = targets.len(),
        "provisioning"
    );
    let mut failed: BTreeMap<String, String> = BTreeMap::new();
    let namespaces = context.namespaces.state();
    let finalizer = namespace_finalizers::of(template);

    // A renamed copy: the old name goes everywhere; otherwise only where no longer selected.
    let renamed = template
        .recorded_copy_name()
        .filter(|old| !old.is_empty() && *old != name);
    for namespace in template.provisioned_namespaces() {
        let stale = match renamed {
            Some(old) => Some(old),
            None => (!targets.contains(namespace)).then_some(name.as_str()),
        };
        if let Some(stale) = stale
            && let Err(error) = delete_owned::<T>(client, namespace, stale, &owner).await
        {
            failed.insert(namespace.clone(), error.to_string());
        }
    }

    if let Some(finalizer) = &finalizer {
        let released =
            namespace_finalizers::release_all_but(client, &namespaces, finalizer, &targets).await;
        for (namespace, error) in released {
            failed.insert(namespace, error.to_string());
        }
    }

    let mut provisioned = Vec::new();
    for namespace in &targets {
        if let Some(finalizer) = &finalizer
            && let Some(meta) = context.namespaces.get(&ObjectRef::new(namespace))
            && let Err(error) = namespace_finalizers::hold(client, &meta, finalizer).await
        {
            failed.insert(
                namespace.clone(),
                format!("could not add namespace finalizer: {error}"),
            );
            continue;
        }
        match provision(template, client, namespace, &name).await {
            Ok(()) => provisioned.push(namespace.clone()),
            Err(error) => {
                failed.insert(namespace.clone(), error.to_string());
            }
        }
    }

    if let Some(status) = template.status_update(&name, &provisioned, &failed) {
        let patch = json!({
            "apiVersion": T::api_version(&()),
            "kind": T::kind(&()),
            "status": status,
        });
        Api::<T>::all(client.clone())
            .patch_status(
                &owner,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&patch),
            )
            .await?;
    }
    let ready = if failed.is_empty() { "True" } else { "False" };
    template.record_metrics(&context.shared.metrics, ready, started.elapsed());
    if !failed.is_empty() {
        tracing::warn!(
            controller = T::CONTROLLER,
            template = %owner,
            failed = ?failed.keys().collect::<Vec<_>>(),
            "namespaces failed"
        );
        return Err(Error::NamespacesFailed);
    }
    Ok(Action::requeue(template.refresh_interval()))
}

/// Why one namespace's copy could not be provisioned; the message is the namespace's failure
/// reason in the status.
#[derive(Debug, thiserror::Error)]
enum ProvisionError {
    /// Reading the existing copy failed.
    #[error("{0}")]
    Read(#[source] kube::Error),
    /// A copy of that name exists and is not ours; `0` is the template kind's reason.
    #[error("{0}")]
    AlreadyExists(&'static str),
    /// Writing the copy failed; `reason` is the template kind's.
    #[error("{reason}: {source}")]
    Write {
        /// E.g. upstream's `Failed to create or update ExternalSecret`.
        reason: &'static str,
        /// The API error.
        source: kube::Error,
    },
}

/// Creates or updates the copy in `namespace`.
async fn provision<T: ClusterTemplate>(
    template: &T,
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<(), ProvisionError> {
    let api: Api<T::Copy> = Api::namespaced(client.clone(), namespace);
    let existing = api.get_opt(name).await.map_err(ProvisionError::Read)?;
    if let Some(existing) = &existing
        && !is_owned_by::<T>(existing.meta(), &template.name_any())
    {
        return Err(ProvisionError::AlreadyExists(T::REASON_ALREADY_EXISTS));
    }
    let desired = template.desired_copy(namespace, name);
    if existing
        .as_ref()
        .is_some_and(|existing| T::is_up_to_date(existing, &desired))
    {
        return Ok(());
    }
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&desired),
    )
    .await
    .map(|_| ())
    .map_err(|source| ProvisionError::Write {
        reason: T::REASON_WRITE_FAILED,
        source,
    })
}

/// Deletes `namespace/name` if the template `owner` controls it.
async fn delete_owned<T: ClusterTemplate>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    owner: &str,
) -> Result<(), kube::Error> {
    let api: Api<T::Copy> = Api::namespaced(client.clone(), namespace);
    match api.get_opt(name).await? {
        Some(existing) if is_owned_by::<T>(existing.meta(), owner) => {
            api.delete(name, &DeleteParams::default()).await?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Removes every copy before the template goes.
async fn cleanup<T: ClusterTemplate>(
    template: &T,
    context: &TemplateContext,
) -> Result<Action, Error> {
    let name = template
        .recorded_copy_name()
        .filter(|name| !name.is_empty())
        .map_or_else(|| template.name_any(), str::to_owned);
    for namespace in template.provisioned_namespaces() {
        delete_owned::<T>(
            &context.shared.client,
            namespace,
            &name,
            &template.name_any(),
        )
        .await?;
    }
    if let Some(finalizer) = namespace_finalizers::of(template) {
        // Releasing is decided from the cache: never from one still empty.
        if !is_synced(&context.namespaces) {
            return Err(Error::CacheNotSynced);
        }
        let namespaces = context.namespaces.state();
        let released = namespace_finalizers::release_all_but(
            &context.shared.client,
            &namespaces,
            &finalizer,
            &[],
        )
        .await;
        if let Some((_, error)) = released.into_iter().next() {
            return Err(Error::Kube(error));
        }
    }
    template.remove_metrics(&context.shared.metrics);
    Ok(Action::await_change())
}

/// Failed namespaces and API errors retry with per-object exponential backoff.
pub fn error_policy<T: ClusterTemplate>(
    template: Arc<T>,
    error: &Error,
    context: Arc<TemplateContext>,
) -> Action {
    tracing::debug!(controller = T::CONTROLLER, %error, "reconcile failed");
    Action::requeue(context.shared.backoff.failed(&*template))
}
