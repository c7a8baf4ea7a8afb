//! The controller: reconciles `ExternalSecretsConfig/cluster` into the operand with server-side
//! apply under the operator's own field manager, prunes what it manages that is no longer
//! desired, removes the operand through a finalizer when the config is deleted (CRDs and user
//! data stay), and reports Ready/Progressing/Degraded.
//!
//! Triggers: the config, the `ExternalSecretsManager` (any change), every managed object (by
//! the managed-by label), and cert-manager's Certificate CRD appearing or going.

pub mod apply;
pub mod status;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event, finalizer};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{ObjectRef, Store, reflector};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::api::{
    ControllerStatus, ExternalSecretsConfig, ExternalSecretsConfigStatus, ExternalSecretsManager,
    ManagerCondition, SINGLETON,
};
use crate::desired::{Environment, MANAGED_BY};
use crate::kinds::{self, CERTIFICATE_CRD};
use status::Outcome;

/// The field manager of every write.
pub const FIELD_MANAGER: &str = "external-secrets-operator";
/// The config's finalizer (upstream's name).
pub const FINALIZER: &str =
    "externalsecretsconfigs.operator.openshift.io/external-secrets-controller";
/// The name under which the manager's status mirrors this controller.
const CONTROLLER_NAME: &str = "externalsecretsconfigs.operator.openshift.io/v1alpha1";

/// A watch stream feeding one cache, consumed by the controller (which also reconciles on it).
type CacheStream = futures::stream::BoxStream<'static, Result<DynamicObject, watcher::Error>>;

/// What reconciles share.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// The operator's images and proxy.
    pub environment: Environment,
    /// Reconcile counts.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Per pruned kind, the managed objects (by label) as last seen: what pruning reads.
    pub caches: Vec<(&'static kinds::ManagedKind, Store<DynamicObject>)>,
    streams: std::sync::Mutex<Vec<(kube::core::ApiResource, CacheStream)>>,
}

impl Context {
    /// A context whose caches fill once [`run`] consumes their watch streams. cert-manager's
    /// Certificates are not cached (their kind may come and go); they are listed when needed.
    pub fn new(
        client: Client,
        environment: Environment,
        metrics: Arc<crate::metrics::Metrics>,
    ) -> Self {
        let managed = watcher::Config::default().labels(&managed_selector());
        let mut caches = Vec::new();
        let mut streams = Vec::new();
        for kind in kinds::KINDS
            .iter()
            .filter(|kind| kind.pruned && kind.cached())
        {
            let resource = kind.resource();
            let writer = Writer::new(resource.clone());
            caches.push((kind, writer.as_reader()));
            let api = Api::<DynamicObject>::all_with(client.clone(), &resource);
            let stream = reflector(writer, watcher(api, managed.clone()))
                .touched_objects()
                .boxed();
            streams.push((resource, stream));
        }
        Self {
            client,
            environment,
            metrics,
            caches,
            streams: std::sync::Mutex::new(streams),
        }
    }
}

/// Errors of a reconcile (retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// A cache did not finish its first listing in time.
    #[error("the cache of {0} is not synced yet")]
    CacheNotSynced(&'static str),
    /// The finalizer helper failed.
    #[error("finalizer: {0}")]
    Finalizer(String),
}

/// The label selector of every managed object.
pub fn managed_selector() -> String {
    format!("{}={}", MANAGED_BY.0, MANAGED_BY.1)
}

/// Runs the controller until the stream ends (shutdown).
pub async fn run(context: Arc<Context>) {
    let client = context.client.clone();
    let configs: Api<ExternalSecretsConfig> = Api::all(client.clone());
    let cluster = || Some(ObjectRef::<ExternalSecretsConfig>::new(SINGLETON));
    let mut controller = Controller::new(configs, watcher::Config::default())
        .watches(
            Api::<ExternalSecretsManager>::all(client.clone()),
            watcher::Config::default(),
            move |_| cluster(),
        )
        .watches(
            Api::<CustomResourceDefinition>::all(client.clone()),
            watcher::Config::default().fields(&format!("metadata.name={CERTIFICATE_CRD}")),
            move |_| cluster(),
        );
    let streams = context
        .streams
        .lock()
        .map(|mut streams| std::mem::take(&mut *streams))
        .unwrap_or_default();
    for (resource, stream) in streams {
        controller = controller.watches_stream_with(stream, move |_| cluster(), resource);
    }
    let metrics = context.metrics.clone();
    controller
        .shutdown_on_signal()
        .run(reconcile, error_policy, context)
        .for_each(|result| {
            match &result {
                // A trigger (the manager, a managed object) before the config exists.
                Err(kube::runtime::controller::Error::ObjectNotFound(_)) => {}
                Err(error) => {
                    metrics.count(false);
                    tracing::warn!(%error, "reconcile failed");
                }
                Ok(_) => metrics.count(true),
            }
            futures::future::ready(())
        })
        .await;
}

fn error_policy(_: Arc<ExternalSecretsConfig>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(%error, "retrying");
    Action::requeue(Duration::from_secs(30))
}

async fn reconcile(
    config: Arc<ExternalSecretsConfig>,
    context: Arc<Context>,
) -> Result<Action, Error> {
    if config.name_any() != SINGLETON {
        return Ok(Action::await_change());
    }
    let configs: Api<ExternalSecretsConfig> = Api::all(context.client.clone());
    finalizer(&configs, FINALIZER, config, |event| async {
        match event {
            Event::Apply(config) => install(&config, &context).await,
            Event::Cleanup(_) => {
                apply::prune(&context, &[]).await?;
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|error| match error {
        kube::runtime::finalizer::Error::ApplyFailed(error)
        | kube::runtime::finalizer::Error::CleanupFailed(error) => error,
        other => Error::Finalizer(other.to_string()),
    })
}

/// Applies the desired objects, prunes the rest and records the outcome.
async fn install(config: &ExternalSecretsConfig, context: &Context) -> Result<Action, Error> {
    let client = &context.client;
    let manager = Api::<ExternalSecretsManager>::all(client.clone())
        .get_opt(SINGLETON)
        .await?;
    let outcome = apply::install(context, config, manager.as_ref()).await?;
    write_status(
        client,
        &context.environment,
        config,
        manager.as_ref(),
        &outcome,
    )
    .await?;
    Ok(match outcome {
        Outcome::Applied { unavailable } if unavailable.is_empty() => Action::await_change(),
        // Deployment status changes trigger a reconcile; this is a safety net.
        _ => Action::requeue(Duration::from_secs(60)),
    })
}

/// Writes the config's conditions and images, and the manager's mirror of the conditions, only
/// when they changed.
async fn write_status(
    client: &Client,
    environment: &Environment,
    config: &ExternalSecretsConfig,
    manager: Option<&ExternalSecretsManager>,
    outcome: &Outcome,
) -> Result<(), Error> {
    let previous = config
        .status
        .as_ref()
        .map(|status| status.conditions.clone())
        .unwrap_or_default();
    let now =
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now());
    let conditions = status::conditions(outcome, config.metadata.generation, &previous, &now);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let images = ExternalSecretsConfigStatus {
        conditions: Vec::new(),
        external_secrets_image: environment.image.clone(),
        bitwarden_sdk_server_image: Some(environment.bitwarden_image.clone()),
    };
    let current = config.status.clone().unwrap_or_default();
    let images_changed = current.external_secrets_image != images.external_secrets_image
        || current.bitwarden_sdk_server_image != images.bitwarden_sdk_server_image;
    if status::changed(&previous, &conditions) || images_changed {
        let patch = json!({
            "apiVersion": "operator.openshift.io/v1alpha1",
            "kind": "ExternalSecretsConfig",
            "status": ExternalSecretsConfigStatus { conditions: conditions.clone(), ..images },
        });
        Api::<ExternalSecretsConfig>::all(client.clone())
            .patch_status(SINGLETON, &params, &Patch::Apply(&patch))
            .await?;
    }
    if let Some(manager) = manager {
        let mirror = ControllerStatus {
            name: CONTROLLER_NAME.into(),
            conditions: conditions
                .iter()
                .map(|condition| ManagerCondition {
                    type_: condition.type_.clone(),
                    status: Some(condition.status.clone()),
                    message: Some(condition.message.clone()).filter(|text| !text.is_empty()),
                })
                .collect(),
            observed_generation: config.metadata.generation,
        };
        let current = manager.status.as_ref().and_then(|status| {
            status
                .controller_statuses
                .iter()
                .find(|entry| entry.name == CONTROLLER_NAME)
        });
        if current != Some(&mirror) {
            let patch = json!({
                "apiVersion": "operator.openshift.io/v1alpha1",
                "kind": "ExternalSecretsManager",
                "status": {"controllerStatuses": [mirror], "lastTransitionTime": now},
            });
            Api::<ExternalSecretsManager>::all(client.clone())
                .patch_status(SINGLETON, &params, &Patch::Apply(&patch))
                .await?;
        }
    }
    Ok(())
}
