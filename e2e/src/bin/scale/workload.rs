//! What the benchmark syncs: one `fake` SecretStore holding a few shared keys and one key per
//! ExternalSecret, N ExternalSecrets of three entries (two shared keys, their own), and the
//! floor: a plain client doing only the unavoidable part of that work.

use std::time::{Duration, Instant};

use external_secrets_crds::v1::{ExternalSecret, FakeProvider, SecretStore};
use external_secrets_providers::backends::fake::FakeBackend;
use external_secrets_providers::request::RemoteRef;
use external_secrets_providers::{SecretsClient, StoreId};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

/// Remote keys every ExternalSecret shares with others: entries `a` and `b` read two of them.
pub const SHARED_KEYS: usize = 10;
/// The store's name.
const STORE: &str = "store";
/// How many creations the benchmark keeps in flight while setting up.
const CREATE_CONCURRENCY: usize = 32;

/// `spec.provider.fake`: the shared keys, and one own key for each of `count + 1`
/// ExternalSecrets (the last one is the newcomer's).
fn fake_provider(count: usize) -> Value {
    let shared = (0..SHARED_KEYS).map(
        |index| json!({"key": format!("shared/{index}"), "value": format!("shared-value-{index}")}),
    );
    let own = (0..=count)
        .map(|index| json!({"key": format!("own/{index}"), "value": format!("own-value-{index}")}));
    json!({"data": shared.chain(own).collect::<Vec<_>>()})
}

/// Creates the store, served by the controller of `class`.
pub async fn create_store(
    client: &Client,
    namespace: &str,
    class: &str,
    count: usize,
) -> anyhow::Result<()> {
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": STORE},
        "spec": {"controller": class, "provider": {"fake": fake_provider(count)}},
    }))?;
    Api::<SecretStore>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

/// The name of ExternalSecret number `index`; `count` is the newcomer's.
pub fn name(index: usize) -> String {
    format!("es-{index}")
}

/// ExternalSecret number `index`: two shared keys and its own.
pub fn external_secret(index: usize, refresh: Duration) -> anyhow::Result<ExternalSecret> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": name(index)},
        "spec": {
            "refreshInterval": format!("{}s", refresh.as_secs()),
            "secretStoreRef": {"name": STORE, "kind": "SecretStore"},
            "data": [
                {"secretKey": "a", "remoteRef": {"key": format!("shared/{}", index % SHARED_KEYS)}},
                {"secretKey": "b", "remoteRef": {"key": format!("shared/{}", (index + 1) % SHARED_KEYS)}},
                {"secretKey": "c", "remoteRef": {"key": format!("own/{index}")}},
            ],
        },
    }))?)
}

/// Creates ExternalSecrets `0..count`.
pub async fn create_external_secrets(
    api: &Api<ExternalSecret>,
    count: usize,
    refresh: Duration,
) -> anyhow::Result<()> {
    futures::stream::iter(0..count)
        .map(|index| async move {
            api.create(&PostParams::default(), &external_secret(index, refresh)?)
                .await
                .map_err(anyhow::Error::from)
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

/// What the floor did and how long it took.
pub struct Floor {
    /// Wall time of the distinct reads and the N Secret applies.
    pub elapsed: Duration,
    /// Wall time of those plus N ExternalSecret status applies: the two writes a sync needs.
    pub with_status: Duration,
    /// Provider reads: each distinct remote key once.
    pub provider_reads: usize,
    /// Secret applies.
    pub applies: usize,
}

/// The label of the floor's own ExternalSecrets (deleted before the controller starts).
const FLOOR_LABEL: &str = "eso-scale/floor";

/// The unavoidable work of syncing the N ExternalSecrets, done by a plain client with
/// `concurrency` requests in flight: every distinct remote key read once from the same fake
/// provider (in this process) and one server-side apply per Secret; then (the second floor)
/// one status apply per ExternalSecret, as a sync's `Ready` status. Secrets and ExternalSecrets
/// are named `floor-<i>`; the ExternalSecrets are created before and deleted after the timed
/// part, before the controller starts.
pub async fn floor(
    client: &Client,
    namespace: &str,
    count: usize,
    concurrency: u16,
) -> anyhow::Result<Floor> {
    let external_secrets: Api<ExternalSecret> = Api::namespaced(client.clone(), namespace);
    create_floor_external_secrets(&external_secrets, count).await?;
    let floor = floor_writes(client, &external_secrets, namespace, count, concurrency).await;
    external_secrets
        .delete_collection(
            &kube::api::DeleteParams::default(),
            &kube::api::ListParams::default().labels(&format!("{FLOOR_LABEL}=true")),
        )
        .await?;
    floor
}

/// The floor's ExternalSecrets (named after a store that does not exist: nothing syncs them).
async fn create_floor_external_secrets(
    api: &Api<ExternalSecret>,
    count: usize,
) -> anyhow::Result<()> {
    futures::stream::iter(0..count)
        .map(|index| async move {
            let es: ExternalSecret = serde_json::from_value(json!({
                "apiVersion": "external-secrets.io/v1",
                "kind": "ExternalSecret",
                "metadata": {"name": format!("floor-{index}"), "labels": {FLOOR_LABEL: "true"}},
                "spec": {"secretStoreRef": {"name": "floor-store", "kind": "SecretStore"}},
            }))?;
            api.create(&PostParams::default(), &es).await?;
            anyhow::Ok(())
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

/// The timed part of [`floor`].
async fn floor_writes(
    client: &Client,
    external_secrets: &Api<ExternalSecret>,
    namespace: &str,
    count: usize,
    concurrency: u16,
) -> anyhow::Result<Floor> {
    let spec: FakeProvider = serde_json::from_value(fake_provider(count))?;
    let backend = FakeBackend::new();
    let provider = backend.new_client(&StoreId::secret_store(namespace, STORE), &spec)?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let params = PatchParams::apply("eso-scale-floor").force();
    let started = Instant::now();
    let mut shared = Vec::with_capacity(SHARED_KEYS);
    for index in 0..SHARED_KEYS {
        let value = provider
            .get_secret(&RemoteRef::new(format!("shared/{index}")))
            .await?;
        shared.push(value.into_bytes());
    }
    let (provider, shared, params) = (&provider, &shared, &params);
    futures::stream::iter(0..count)
        .map(|index| {
            let secrets = secrets.clone();
            async move {
                let own = provider
                    .get_secret(&RemoteRef::new(format!("own/{index}")))
                    .await?;
                let name = format!("floor-{index}");
                let mut secret = Secret::default();
                secret.metadata.name = Some(name.clone());
                secret.data = Some(
                    [
                        ("a", shared[index % SHARED_KEYS].clone()),
                        ("b", shared[(index + 1) % SHARED_KEYS].clone()),
                        ("c", own.into_bytes()),
                    ]
                    .into_iter()
                    .map(|(key, value)| (key.to_owned(), ByteString(value)))
                    .collect(),
                );
                let mut body = serde_json::to_value(&secret)?;
                body["apiVersion"] = json!("v1");
                body["kind"] = json!("Secret");
                secrets.patch(&name, params, &Patch::Apply(&body)).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(usize::from(concurrency.max(1)))
        .try_collect::<Vec<_>>()
        .await?;
    let elapsed = started.elapsed();
    futures::stream::iter(0..count)
        .map(|index| async move {
            let name = format!("floor-{index}");
            let status = json!({
                "apiVersion": "external-secrets.io/v1",
                "kind": "ExternalSecret",
                "status": {
                    "refreshTime": k8s_openapi::jiff::Timestamp::now().to_string(),
                    "syncedResourceVersion": "1-floor",
                    "binding": {"name": name},
                    "conditions": [{
                        "type": "Ready", "status": "True", "reason": "SecretSynced",
                        "message": "secret synced",
                        "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().to_string(),
                    }],
                },
            });
            external_secrets
                .patch_status(&name, params, &Patch::Apply(&status))
                .await?;
            anyhow::Ok(())
        })
        .buffer_unordered(usize::from(concurrency.max(1)))
        .try_collect::<Vec<_>>()
        .await?;
    Ok(Floor {
        elapsed,
        with_status: started.elapsed(),
        provider_reads: SHARED_KEYS + count,
        applies: count,
    })
}
