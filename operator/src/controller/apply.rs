//! Writing the desired objects (server-side apply, forced, under [`FIELD_MANAGER`]: fields
//! others own, such as the webhook Secret's data or a `caBundle`, are left alone, and fields the
//! operator stopped setting are removed), pruning the rest, and reading Deployment availability.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::status::Outcome;
use super::{Context, Error, FIELD_MANAGER, managed_selector};
use crate::api::{ExternalSecretsConfig, ExternalSecretsManager};
use crate::desired::{NAMESPACE, desired, kind, name};
use crate::kinds::{self, CERTIFICATE_CRD, ManagedKind};

/// (kind, namespace, name) of an object.
type Key = (String, String, String);

fn key(object: &Value) -> Key {
    (
        kind(object).to_owned(),
        object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        name(object).to_owned(),
    )
}

/// Whether cert-manager's Certificate kind is served.
async fn cert_manager_installed(client: &Client) -> Result<bool, Error> {
    Ok(Api::<CustomResourceDefinition>::all(client.clone())
        .get_opt(CERTIFICATE_CRD)
        .await?
        .is_some())
}

/// Whether an API error is about the object (reported as Degraded) rather than transient.
fn rejected(error: &kube::Error) -> Option<String> {
    match error {
        kube::Error::Api(status)
            if (400..500).contains(&status.code) && status.code != 409 && status.code != 429 =>
        {
            Some(format!("{} ({})", status.message, status.reason))
        }
        _ => None,
    }
}

/// Applies everything desired, prunes the rest; the outcome for the conditions.
pub async fn install(
    context: &Context,
    config: &ExternalSecretsConfig,
    manager: Option<&ExternalSecretsManager>,
) -> Result<Outcome, Error> {
    let client = &context.client;
    let objects = match desired(config, manager, &context.environment) {
        Ok(objects) => objects,
        Err(error) => {
            return Ok(Outcome::Failed {
                object: "operand manifests".into(),
                reason: error.to_string(),
            });
        }
    };
    let wants_certificates = objects.iter().any(|object| kind(object) == "Certificate");
    let cert_manager = cert_manager_installed(client).await?;
    if wants_certificates && !cert_manager {
        return Ok(Outcome::Failed {
            object: "spec.controllerConfig.certProvider.certManager.mode".into(),
            reason: "is set, but cert-manager is not installed".into(),
        });
    }
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for object in &objects {
        let Some(managed) = kinds::find(kind(object)) else {
            continue;
        };
        let api = dynamic_api(client, managed, object);
        if let Err(error) = api
            .patch(name(object), &params, &Patch::Apply(object))
            .await
        {
            return match rejected(&error) {
                Some(reason) => Ok(Outcome::Failed {
                    object: format!("{} {}", kind(object), name(object)),
                    reason,
                }),
                None => Err(error.into()),
            };
        }
    }
    prune_except(context, &objects, cert_manager).await?;
    let mut unavailable = Vec::new();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NAMESPACE);
    for object in objects.iter().filter(|object| kind(object) == "Deployment") {
        let live = deployments.get_opt(name(object)).await?;
        if !live.as_ref().is_some_and(available) {
            unavailable.push(name(object).to_owned());
        }
    }
    Ok(Outcome::Applied { unavailable })
}

fn dynamic_api(
    client: &Client,
    managed: &kinds::ManagedKind,
    object: &Value,
) -> Api<DynamicObject> {
    let resource = managed.resource();
    match object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
    {
        Some(namespace) if managed.namespaced => {
            Api::namespaced_with(client.clone(), namespace, &resource)
        }
        _ => Api::all_with(client.clone(), &resource),
    }
}

/// Whether a Deployment's current generation is rolled out and Available.
pub fn available(deployment: &Deployment) -> bool {
    let Some(status) = &deployment.status else {
        return false;
    };
    let observed = status.observed_generation >= deployment.metadata.generation;
    observed
        && status
            .conditions
            .iter()
            .flatten()
            .any(|condition| condition.type_ == "Available" && condition.status == "True")
}

/// Deletes every managed object (CRDs and the namespace excepted): the config is gone.
pub async fn prune(context: &Context, keep: &[Value]) -> Result<(), Error> {
    let cert_manager = cert_manager_installed(&context.client).await?;
    prune_except(context, keep, cert_manager).await
}

/// How long pruning waits for a cache's first listing before retrying the reconcile.
const CACHE_SYNC: Duration = Duration::from_secs(30);

/// The managed objects of one kind: from its cache once synced, or listed (Certificates).
async fn managed_objects(
    context: &Context,
    managed: &'static ManagedKind,
) -> Result<Vec<DynamicObject>, Error> {
    if let Some((_, store)) = context
        .caches
        .iter()
        .find(|(kind, _)| kind.kind == managed.kind)
    {
        tokio::time::timeout(CACHE_SYNC, store.wait_until_ready())
            .await
            .map_err(|_| Error::CacheNotSynced(managed.kind))?
            .map_err(|_| Error::CacheNotSynced(managed.kind))?;
        return Ok(store
            .state()
            .iter()
            .map(|object| (**object).clone())
            .collect());
    }
    let api: Api<DynamicObject> = Api::all_with(context.client.clone(), &managed.resource());
    let selector = ListParams::default().labels(&managed_selector());
    Ok(api.list(&selector).await?.items)
}

/// Deletes the managed objects (found by label) that are not in `keep`.
async fn prune_except(context: &Context, keep: &[Value], cert_manager: bool) -> Result<(), Error> {
    let wanted: BTreeSet<Key> = keep.iter().map(key).collect();
    for managed in kinds::KINDS.iter().filter(|managed| managed.pruned) {
        if !managed.cached() && !cert_manager {
            continue;
        }
        for object in managed_objects(context, managed).await? {
            let namespace = object.namespace().unwrap_or_default();
            let found = (
                managed.kind.to_owned(),
                namespace.clone(),
                object.name_any(),
            );
            if wanted.contains(&found) || object.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let scoped: Api<DynamicObject> = if managed.namespaced {
                Api::namespaced_with(context.client.clone(), &namespace, &managed.resource())
            } else {
                Api::all_with(context.client.clone(), &managed.resource())
            };
            tracing::info!(kind = managed.kind, name = %found.2, "deleting what is no longer desired");
            match scoped.delete(&found.2, &DeleteParams::background()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
    Ok(())
}
