//! One reconcile of a ClusterExternalSecret: behind upstream's cleanup finalizer, create or
//! update its ExternalSecret in every selected namespace, remove the ones it no longer
//! selects (or that carry an old name), and record provisioned and failed namespaces.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use external_secrets_crds::v1::{ClusterExternalSecret, ExternalSecret};
use external_secrets_providers::duration::parse_go_duration;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{self, Event};
use kube::runtime::reflector::Store;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::plan;
use crate::context::{Context, FIELD_MANAGER};

/// The controller's name in metrics and logs.
pub const CONTROLLER: &str = "clusterexternalsecret";
/// Upstream's finalizer: the ExternalSecrets are removed before the ClusterExternalSecret.
pub const FINALIZER: &str = "externalsecrets.external-secrets.io/clusterexternalsecret-cleanup";
/// How often namespaces are re-checked when `spec.refreshTime` is unset (upstream: 1h).
const DEFAULT_REFRESH: Duration = Duration::from_secs(3600);

/// What the reconciler shares.
pub struct CesContext {
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
}

/// Reconciles one ClusterExternalSecret behind the cleanup finalizer.
pub async fn reconcile(
    ces: Arc<ClusterExternalSecret>,
    context: Arc<CesContext>,
) -> Result<Action, Error> {
    let metrics = &context.shared.metrics;
    let _timer = metrics.reconcile_started(CONTROLLER);
    let api: Api<ClusterExternalSecret> = Api::all(context.shared.client.clone());
    let subject = Arc::clone(&ces);
    let result = finalizer::finalizer(&api, FINALIZER, ces, |event| async {
        match event {
            Event::Apply(ces) => apply(&ces, &context).await,
            Event::Cleanup(ces) => cleanup(&ces, &context).await,
        }
    })
    .await
    .map_err(|error| match error {
        finalizer::Error::ApplyFailed(error) | finalizer::Error::CleanupFailed(error) => error,
        other => Error::Finalizer(Box::new(other)),
    });
    metrics.reconcile_result(CONTROLLER, &result);
    if result.is_ok() {
        context.shared.backoff.forget(&*subject);
    }
    result
}

async fn apply(ces: &ClusterExternalSecret, context: &CesContext) -> Result<Action, Error> {
    let started = Instant::now();
    let client = &context.shared.client;
    let name = plan::external_secret_name(ces);
    let previous = ces.status.clone().unwrap_or_default();
    let targets =
        plan::target_namespaces(ces, context.namespaces.state().iter().map(AsRef::as_ref));
    tracing::debug!(
        clusterexternalsecret = %ces.name_any(),
        namespaces = targets.len(),
        known = context.namespaces.state().len(),
        "provisioning"
    );
    let mut failed: BTreeMap<String, String> = BTreeMap::new();

    // A renamed copy: the old name goes everywhere; otherwise only where no longer selected.
    let renamed = previous
        .external_secret_name
        .as_deref()
        .filter(|old| !old.is_empty() && *old != name);
    for namespace in &previous.provisioned_namespaces {
        let stale = match renamed {
            Some(old) => Some(old),
            None => (!targets.contains(namespace)).then_some(name.as_str()),
        };
        if let Some(stale) = stale
            && let Err(error) = delete_owned(client, namespace, stale, &ces.name_any()).await
        {
            failed.insert(namespace.clone(), error.to_string());
        }
    }

    let mut provisioned = Vec::new();
    for namespace in &targets {
        match provision(ces, client, namespace, &name).await {
            Ok(()) => provisioned.push(namespace.clone()),
            Err(reason) => {
                failed.insert(namespace.clone(), reason);
            }
        }
    }

    let status = plan::status(&name, &provisioned, &failed);
    if ces.status.as_ref() != Some(&status) {
        let patch = json!({
            "apiVersion": ClusterExternalSecret::api_version(&()),
            "kind": ClusterExternalSecret::kind(&()),
            "status": status,
        });
        Api::<ClusterExternalSecret>::all(client.clone())
            .patch_status(
                &ces.name_any(),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&patch),
            )
            .await?;
    }
    let ready = if failed.is_empty() { "True" } else { "False" };
    context
        .shared
        .metrics
        .set_cluster_external_secret(&ces.name_any(), ready, started.elapsed());
    if !failed.is_empty() {
        tracing::warn!(clusterexternalsecret = %ces.name_any(), failed = ?failed.keys().collect::<Vec<_>>(), "namespaces failed");
        return Err(Error::NamespacesFailed);
    }
    let refresh = ces
        .spec
        .refresh_time
        .as_deref()
        .and_then(|text| parse_go_duration(text).ok())
        .filter(|interval| !interval.is_zero())
        .unwrap_or(DEFAULT_REFRESH);
    Ok(Action::requeue(refresh))
}

/// Creates or updates the copy in `namespace`; the error is the namespace's failure reason.
async fn provision(
    ces: &ClusterExternalSecret,
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<(), String> {
    let api: Api<ExternalSecret> = Api::namespaced(client.clone(), namespace);
    let existing = api.get_opt(name).await.map_err(|error| error.to_string())?;
    if let Some(existing) = &existing
        && !plan::is_owned_by(&existing.metadata, &ces.name_any())
    {
        return Err(plan::REASON_ALREADY_EXISTS.to_owned());
    }
    let desired = plan::desired_external_secret(ces, namespace, name);
    if existing
        .as_ref()
        .is_some_and(|existing| plan::is_up_to_date(existing, &desired))
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
    .map_err(|error| format!("could not create or update ExternalSecret: {error}"))
}

/// Deletes `namespace/name` if this ClusterExternalSecret controls it.
async fn delete_owned(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    owner: &str,
) -> Result<(), kube::Error> {
    let api: Api<ExternalSecret> = Api::namespaced(client.clone(), namespace);
    match api.get_opt(name).await? {
        Some(existing) if plan::is_owned_by(&existing.metadata, owner) => {
            api.delete(name, &DeleteParams::default()).await?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Removes every copy before the ClusterExternalSecret goes.
async fn cleanup(ces: &ClusterExternalSecret, context: &CesContext) -> Result<Action, Error> {
    let status = ces.status.clone().unwrap_or_default();
    let name = status
        .external_secret_name
        .clone()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| ces.name_any());
    for namespace in &status.provisioned_namespaces {
        delete_owned(&context.shared.client, namespace, &name, &ces.name_any()).await?;
    }
    context
        .shared
        .metrics
        .remove_cluster_external_secret(&ces.name_any());
    Ok(Action::await_change())
}

/// Failed namespaces and API errors retry with per-object exponential backoff.
pub fn error_policy(
    ces: Arc<ClusterExternalSecret>,
    error: &Error,
    context: Arc<CesContext>,
) -> Action {
    tracing::debug!(controller = CONTROLLER, %error, "reconcile failed");
    Action::requeue(context.shared.backoff.failed(&*ces))
}
