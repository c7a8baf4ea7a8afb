//! One sync of a PushSecret, in upstream's order: finalizer for `deletionPolicy: Delete` ->
//! due? -> stores (by name or label, this controller's class, ClusterSecretStore conditions)
//! -> source Secrets (same namespace only), templated by `spec.template` -> push each
//! `spec.data` entry and the expanded `spec.dataTo` entries to each store
//! (`updatePolicy: IfNotExists` leaves existing ones) -> delete what is no longer pushed ->
//! status and events. A deleted PushSecret removes exactly what it pushed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use external_secrets_crds::v1::{GeneratorRef, SecretStoreRefKind};
use external_secrets_crds::v1alpha1::{
    PushSecret, PushSecretDeletionPolicy, PushSecretStatus, PushSecretStatusCondition,
    PushSecretUpdatePolicy,
};
use external_secrets_providers::convert::source_metadata;
use external_secrets_providers::credentials::KubeSecretSource;
use external_secrets_providers::duration::parse_go_duration;
use external_secrets_providers::request::{PushRemoteRef, PushRequest};
use external_secrets_providers::{SecretMap, SecretValue, SharedClient};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::plan::{self, Synced};
use super::{data_to, template};
use crate::context::{Context, FIELD_MANAGER};
use crate::controllers::metadata::synced_resource_version;
use crate::generators::{self, KubeGenerators};
use crate::labels::selector_query;
use crate::stores::admission::check_admitted;
use crate::stores::{FoundStore, NamespaceLabels, lookup};

/// The controller's name in metrics and logs.
pub const CONTROLLER: &str = "pushsecret";

/// What the reconciler shares.
pub struct PsContext {
    /// State shared with the other controllers.
    pub shared: Arc<Context>,
    /// Whether ClusterSecretStores may be used.
    pub cluster_stores_enabled: bool,
}

/// Why a sync failed (the status already says so).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The sync failed; the message is the condition's.
    #[error("{0}")]
    Failed(String),
    /// Talking to the Kubernetes API failed.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

/// Reconciles one PushSecret, recording upstream's per-object metrics around it.
pub async fn reconcile(
    push_secret: Arc<PushSecret>,
    context: Arc<PsContext>,
) -> Result<Action, Error> {
    let metrics = &context.shared.metrics;
    let _timer = metrics.reconcile_started(CONTROLLER);
    let result = sync(&push_secret, &context).await;
    metrics.reconcile_result(CONTROLLER, &result);
    if result.is_ok() {
        context.shared.backoff.forget(&*push_secret);
    }
    result
}

/// Retries failures with per-object exponential backoff (a Secret or store may appear).
pub fn error_policy(
    push_secret: Arc<PushSecret>,
    error: &Error,
    context: Arc<PsContext>,
) -> Action {
    tracing::debug!(controller = CONTROLLER, %error, "reconcile failed");
    Action::requeue(context.shared.backoff.failed(&*push_secret))
}

async fn sync(push_secret: &PushSecret, context: &PsContext) -> Result<Action, Error> {
    let previous: Synced = push_secret
        .status
        .as_ref()
        .map(|status| status.synced_push_secrets.clone())
        .unwrap_or_default();
    let has_finalizer = push_secret
        .finalizers()
        .iter()
        .any(|f| f == plan::FINALIZER);
    let delete_policy = push_secret.spec.deletion_policy == PushSecretDeletionPolicy::Delete;
    // Nothing due and nothing to finalize: done without looking the stores up (no side
    // effects, so this holds whichever class the stores belong to).
    if push_secret.meta().deletion_timestamp.is_none()
        && delete_policy == has_finalizer
        && let Ok(interval) = parse_go_duration(&push_secret.spec.refresh_interval)
        && let Some(next) = not_due(push_secret, interval, Timestamp::now())
    {
        return Ok(next);
    }
    // Stores of another controller class only: not ours to push, finalize or clean up (several
    // controllers may watch the same PushSecrets). Resolution errors are reported below.
    let stores = resolve_stores(push_secret, context).await;
    if stores.as_ref().is_ok_and(BTreeMap::is_empty) {
        return Ok(Action::await_change());
    }
    if push_secret.meta().deletion_timestamp.is_some() {
        if has_finalizer {
            if let Err(message) =
                delete_stale(push_secret, context, &previous, &Synced::new()).await
            {
                let message = format!("Failed to Delete Secrets from Provider: {message}");
                return fail(push_secret, context, message, None).await;
            }
            set_finalizer(push_secret, context, false).await?;
        }
        return Ok(Action::await_change());
    }
    if delete_policy != has_finalizer {
        // The change of the object brings the next reconcile.
        set_finalizer(push_secret, context, delete_policy).await?;
        return Ok(Action::await_change());
    }

    let interval = match parse_go_duration(&push_secret.spec.refresh_interval) {
        Ok(interval) => interval,
        Err(error) => {
            return fail(
                push_secret,
                context,
                format!("spec.refreshInterval: {error}"),
                None,
            )
            .await;
        }
    };
    let now = Timestamp::now();
    let spec = &push_secret.spec;
    if let Err(message) = data_to::validate_store_refs(&spec.data_to, &spec.secret_store_refs) {
        return fail(push_secret, context, message, None).await;
    }
    let stores = match stores {
        Ok(stores) => stores,
        Err(message) => return fail(push_secret, context, message, None).await,
    };
    let identities: Vec<_> = stores.values().map(FoundStore::identity).collect();
    if let Err(message) = data_to::validate_selectors_match(&spec.data_to, &identities) {
        return fail(push_secret, context, message, None).await;
    }
    let secrets = match source_secrets(push_secret, context).await {
        Ok(secrets) => secrets,
        // Upstream: a named source gone while something is pushed under `Delete` takes the
        // pushed values with it.
        Err(SourceError::Missing(_)) if delete_policy && !previous.is_empty() => {
            return source_deleted(push_secret, context, &previous).await;
        }
        Err(error) => return fail(push_secret, context, error.to_string(), None).await,
    };

    let started = Instant::now();
    let mut synced = Synced::new();
    for secret in &secrets {
        if let Err(message) = push(push_secret, context, &stores, secret, &mut synced).await {
            let mut merged = previous.clone();
            for (store, entries) in &synced {
                merged
                    .entry(store.clone())
                    .or_default()
                    .extend(entries.clone());
            }
            let message = format!("set secret failed: {message}");
            return fail(push_secret, context, message, Some(merged)).await;
        }
    }
    if delete_policy
        && let Err(message) = delete_stale(push_secret, context, &previous, &synced).await
    {
        let message = format!("Failed to Delete Secrets from Provider: {message}");
        return fail(push_secret, context, message, Some(previous)).await;
    }
    let mut message = plan::MESSAGE_SYNCED.to_owned();
    if push_secret.spec.update_policy == PushSecretUpdatePolicy::IfNotExists {
        message.push_str(". Existing secrets in providers unchanged.");
    }
    let status = PushSecretStatus {
        refresh_time: Some(Time(now)),
        synced_resource_version: Some(synced_resource_version(&push_secret.metadata)),
        synced_push_secrets: synced,
        conditions: vec![condition(
            push_secret,
            "True",
            plan::REASON_SYNCED,
            &message,
        )],
    };
    write_status(push_secret, context, status).await?;
    publish(
        push_secret,
        context,
        EventType::Normal,
        plan::REASON_SYNCED,
        &message,
    )
    .await;
    context.shared.metrics.set_push_secret(
        &push_secret.name_any(),
        &push_secret.namespace().unwrap_or_default(),
        "True",
        started.elapsed(),
    );
    Ok(if interval.is_zero() {
        Action::await_change()
    } else {
        Action::requeue(interval)
    })
}

/// Upstream's `shouldRefresh`: `None` when a push is due now, else when to look again.
fn not_due(push_secret: &PushSecret, interval: Duration, now: Timestamp) -> Option<Action> {
    let status = push_secret.status.as_ref()?;
    if status.synced_resource_version.as_deref()
        != Some(&synced_resource_version(&push_secret.metadata))
    {
        return None;
    }
    let synced_before = status.synced_resource_version.is_some();
    // Upstream leaves a PushSecret whose source was deleted alone until it changes.
    let source_deleted = status.conditions.iter().any(|condition| {
        condition.r#type == "Ready"
            && condition.reason.as_deref() == Some(plan::REASON_SOURCE_DELETED)
    });
    if (interval.is_zero() && synced_before) || source_deleted {
        return Some(Action::await_change());
    }
    let refreshed = status.refresh_time.as_ref()?.0;
    let elapsed =
        Duration::from_secs(u64::try_from(now.as_second() - refreshed.as_second()).unwrap_or(0));
    (elapsed < interval).then(|| Action::requeue(interval - elapsed + Duration::from_secs(5)))
}

/// The stores to push to, keyed as upstream keys them (`Kind/name`), this controller's only.
async fn resolve_stores(
    push_secret: &PushSecret,
    context: &PsContext,
) -> Result<BTreeMap<String, FoundStore>, String> {
    let client = &context.shared.client;
    let namespace = push_secret.namespace().unwrap_or_default();
    let class = &context.shared.settings.controller_class;
    let namespaces = NamespaceLabels::Cluster(Box::new(Api::all(client.clone())));
    let mut found = Vec::new();
    for (index, reference) in push_secret.spec.secret_store_refs.iter().enumerate() {
        let kind = reference.kind;
        if kind == SecretStoreRefKind::ClusterSecretStore && !context.cluster_stores_enabled {
            continue;
        }
        match (&reference.name, &reference.label_selector) {
            (Some(name), _) => {
                let store = lookup::get(client, kind, name, &namespace)
                    .await
                    .map_err(|e| e.to_string())?;
                let store =
                    store.ok_or_else(|| format!("could not get {kind:?} {name:?}, not found"))?;
                found.push(store);
            }
            (None, Some(selector)) => found.extend(
                lookup::list(client, kind, selector, &namespace)
                    .await
                    .map_err(|e| e.to_string())?,
            ),
            (None, None) => {
                return Err(format!(
                    "spec.secretStoreRefs[{index}]: name or labelSelector is required"
                ));
            }
        }
    }
    let mut stores = BTreeMap::new();
    for store in found {
        if !store.is_processed_by(class) {
            continue;
        }
        check_admitted(&store, &namespace, &namespaces)
            .await
            .map_err(|e| e.to_string())?;
        let id = store.store_ref().id;
        stores.insert(format!("{}/{}", id.kind, id.name), store);
    }
    Ok(stores)
}

/// Why the source Secrets could not be read.
#[derive(Debug, thiserror::Error)]
enum SourceError {
    /// The Secret named by `selector.secret.name` does not exist.
    #[error("could not get source secret: secret {0:?} not found")]
    Missing(String),
    /// Anything else, described.
    #[error("{0}")]
    Other(String),
}

/// The Secrets to push: by name or label selector, always in the PushSecret's own namespace.
async fn source_secrets(
    push_secret: &PushSecret,
    context: &PsContext,
) -> Result<Vec<Secret>, SourceError> {
    let namespace = push_secret.namespace().unwrap_or_default();
    if let Some(reference) = &push_secret.spec.selector.generator_ref {
        return generated_source(context, &namespace, reference).await;
    }
    let api: Api<Secret> = Api::namespaced(context.shared.client.clone(), &namespace);
    let selector = push_secret.spec.selector.secret.as_ref();
    let failed =
        |error: kube::Error| SourceError::Other(format!("could not get source secret: {error}"));
    match (
        selector.and_then(|s| s.name.as_deref()),
        selector.and_then(|s| s.selector.as_ref()),
    ) {
        (Some(name), _) => match api.get_opt(name).await {
            Ok(Some(secret)) => Ok(vec![secret]),
            Ok(None) => Err(SourceError::Missing(name.to_owned())),
            Err(error) => Err(failed(error)),
        },
        (None, Some(selector)) => api
            .list(&ListParams::default().labels(&selector_query(selector)))
            .await
            .map(|list| list.items)
            .map_err(failed),
        (None, None) => Err(SourceError::Other(
            "spec.selector.secret: name or selector is required".into(),
        )),
    }
}

/// `selector.generatorRef`: freshly generated values, pushed as if they were a Secret named
/// after the generator (in memory only).
async fn generated_source(
    context: &PsContext,
    namespace: &str,
    reference: &GeneratorRef,
) -> Result<Vec<Secret>, SourceError> {
    let source = KubeGenerators::new(context.shared.client.clone());
    let generated = generators::generate(&source, namespace, reference)
        .await
        .map_err(|error| SourceError::Other(format!("spec.selector.generatorRef: {error}")))?;
    let mut secret = Secret::default();
    secret.metadata.name = Some(reference.name.clone());
    secret.metadata.namespace = Some(namespace.to_owned());
    secret.data = Some(
        generated
            .into_iter()
            .map(|(key, value)| (key, k8s_openapi::ByteString(value)))
            .collect(),
    );
    Ok(vec![secret])
}

/// The named source Secret is gone under `deletionPolicy: Delete`: removes what was pushed
/// and says so (upstream's `SourceDeleted`), then waits for a change of the PushSecret (a
/// recreated source is not noticed before, as upstream).
async fn source_deleted(
    push_secret: &PushSecret,
    context: &PsContext,
    previous: &Synced,
) -> Result<Action, Error> {
    if let Err(message) = delete_stale(push_secret, context, previous, &Synced::new()).await {
        let message = format!("failed to cleanup provider secrets: {message}");
        return fail(push_secret, context, message, Some(previous.clone())).await;
    }
    let not_ready = NotReady {
        kind: EventType::Normal,
        reason: plan::REASON_SOURCE_DELETED,
        message: plan::MESSAGE_SOURCE_DELETED,
    };
    report_not_ready(push_secret, context, Some(Synced::new()), not_ready).await?;
    Ok(Action::await_change())
}

/// A `Ready=False` outcome: its event type, reason and message.
struct NotReady<'a> {
    kind: EventType,
    reason: &'a str,
    message: &'a str,
}

/// Records `Ready=False` (status, with `synced` replacing the pushed entries when given),
/// its event and the metric.
async fn report_not_ready(
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
    context.shared.metrics.set_push_secret(
        &push_secret.name_any(),
        &push_secret.namespace().unwrap_or_default(),
        "False",
        Duration::ZERO,
    );
    Ok(())
}

/// Pushes every `spec.data` and expanded `spec.dataTo` entry of `secret` (templated by
/// `spec.template`) to every store, recording what was pushed.
async fn push(
    push_secret: &PushSecret,
    context: &PsContext,
    stores: &BTreeMap<String, FoundStore>,
    secret: &Secret,
    synced: &mut Synced,
) -> Result<(), String> {
    let namespace = push_secret.namespace().unwrap_or_default();
    let raw: data_to::Data = secret
        .data
        .iter()
        .flatten()
        .map(|(key, value)| (key.clone(), value.0.clone()))
        .collect();
    let (raw, metadata) = match &push_secret.spec.template {
        Some(template) => {
            let source = KubeSecretSource::new(context.shared.client.clone());
            let sources = crate::controllers::template::sources(
                Some(template),
                "spec.template",
                &namespace,
                &source,
            )
            .await?;
            template::render(template, raw, source_metadata(secret), &sources)?
        }
        None => (raw, source_metadata(secret)),
    };
    for (store_key, store) in stores {
        let expanded = data_to::expand(
            &push_secret.spec.data_to,
            &push_secret.spec.data,
            &store.identity(),
            &raw,
        )?;
        let client = client(context, store, &namespace).await?;
        let entries = synced.entry(store_key.clone()).or_default();
        for data in &expanded.entries {
            let source = expanded
                .bundles
                .get(&plan::status_ref(data))
                .unwrap_or(&raw);
            let converted = plan::reverse_keys(data.conversion_strategy, source.clone())
                .map_err(|error| format!("could not apply conversion strategy to keys: {error}"))?;
            let key = data
                .r#match
                .secret_key
                .as_deref()
                .filter(|key| !key.is_empty());
            if let Some(key) = key
                && !converted.contains_key(key)
            {
                return Err(format!("secret key {key} does not exist"));
            }
            let secret_data: SecretMap = converted
                .into_iter()
                .map(|(key, value)| (key, SecretValue::new(value)))
                .collect();
            let request = PushRequest::from_push_data(data, secret_data)
                .with_source_metadata(metadata.clone());
            if push_secret.spec.update_policy == PushSecretUpdatePolicy::IfNotExists {
                let exists = client
                    .secret_exists(&request.remote_ref)
                    .await
                    .map_err(|error| {
                        format!("could not verify if secret exists in store: {error}")
                    })?;
                if exists {
                    entries.insert(plan::status_ref(data), data.clone());
                    continue;
                }
            }
            let result = client.push_secret(&request).await;
            count(context, store, "PushSecret", result.is_ok());
            result.map_err(|error| {
                format!(
                    "could not write remote ref {} to target secretstore {}: {error}",
                    key.unwrap_or_default(),
                    store.store_ref().id.name
                )
            })?;
            entries.insert(plan::status_ref(data), data.clone());
        }
    }
    Ok(())
}

/// Deletes from the providers what `previous` pushed and `current` does not.
async fn delete_stale(
    push_secret: &PushSecret,
    context: &PsContext,
    previous: &Synced,
    current: &Synced,
) -> Result<(), String> {
    let namespace = push_secret.namespace().unwrap_or_default();
    for (store_key, data) in plan::stale_entries(previous, current) {
        let Some((kind, name)) = store_key.split_once('/') else {
            continue;
        };
        let kind = match kind {
            "ClusterSecretStore" => SecretStoreRefKind::ClusterSecretStore,
            _ => SecretStoreRefKind::SecretStore,
        };
        let store = lookup::get(&context.shared.client, kind, name, &namespace)
            .await
            .map_err(|e| e.to_string())?;
        let Some(store) = store else {
            // The store is gone, and with it what was pushed through it.
            continue;
        };
        let client = client(context, &store, &namespace).await?;
        let result = client
            .delete_secret(&PushRemoteRef::from(&data.r#match.remote_ref))
            .await;
        count(context, &store, "DeleteSecret", result.is_ok());
        result.map_err(|error| error.to_string())?;
    }
    Ok(())
}

async fn client(
    context: &PsContext,
    store: &FoundStore,
    namespace: &str,
) -> Result<SharedClient, String> {
    store
        .client(&context.shared.clients, namespace)
        .await
        .map_err(|error| {
            format!(
                "could not get secrets client for store {}: {error}",
                store.store_ref().id.name
            )
        })
}

fn count(context: &PsContext, store: &FoundStore, call: &str, ok: bool) {
    context
        .shared
        .metrics
        .count_provider_call(store.provider_name(), call, ok);
}

/// Records a failure: condition, Warning event, metrics; keeps `synced` (or the previous
/// record) so a later cleanup still knows what was pushed.
async fn fail(
    push_secret: &PushSecret,
    context: &PsContext,
    message: String,
    synced: Option<Synced>,
) -> Result<Action, Error> {
    let not_ready = NotReady {
        kind: EventType::Warning,
        reason: plan::REASON_ERRORED,
        message: &message,
    };
    report_not_ready(push_secret, context, synced, not_ready).await?;
    Err(Error::Failed(message))
}

/// The Ready condition, keeping the transition time while the status stays the same.
fn condition(
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

async fn write_status(
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
async fn set_finalizer(
    push_secret: &PushSecret,
    context: &PsContext,
    present: bool,
) -> Result<(), Error> {
    let mut finalizers: Vec<String> = push_secret
        .finalizers()
        .iter()
        .filter(|f| *f != plan::FINALIZER)
        .cloned()
        .collect();
    if present {
        finalizers.push(plan::FINALIZER.to_owned());
    }
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": push_secret.resource_version(),
    }});
    Api::<PushSecret>::namespaced(
        context.shared.client.clone(),
        &push_secret.namespace().unwrap_or_default(),
    )
    .patch(
        &push_secret.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await?;
    Ok(())
}

async fn publish(
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
