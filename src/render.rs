//! `external-secrets render`: the ExternalSecret pipeline without a cluster. Reads stores,
//! ExternalSecrets and the Secrets, ConfigMaps and Namespaces they refer to from one
//! multi-document YAML file, fetches from the providers, and prints the Secrets the controller
//! would write. Failures are reported as the `Ready` condition would word them.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use external_secrets_crds::v1::{
    ClusterSecretStore, ExternalSecret, ExternalSecretCreationPolicy, ExternalSecretDeletionPolicy,
    GeneratorRef, SecretStore,
};
use external_secrets_providers::credentials::{KubeSecret, MemorySecretSource, SecretSource};
use external_secrets_providers::{ClientManager, ManagerSettings, SecretValue};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::runtime::reflector;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::controllers::external_secret::fetch::SharedReads;
use crate::controllers::external_secret::read::Reader;
use crate::controllers::external_secret::status::{self, Ready};
use crate::controllers::external_secret::{generic, target};
use crate::controllers::template::{self, SecretData};
use crate::generators::{self, GeneratorSource};
use crate::metrics::Metrics;
use crate::stores::{NamespaceLabels, Stores};

/// The namespace of objects that name none, as `kubectl apply` would place them.
const DEFAULT_NAMESPACE: &str = "default";

/// The objects of the input file, by kind.
#[derive(Default)]
struct Inputs {
    external_secrets: Vec<ExternalSecret>,
    secret_stores: Vec<SecretStore>,
    cluster_secret_stores: Vec<ClusterSecretStore>,
    credentials: MemorySecretSource,
    namespaces: BTreeMap<String, BTreeMap<String, String>>,
    generators: FileGenerators,
}

/// The generator objects of the input file, by kind, namespace (empty for ClusterGenerators)
/// and name; the Secrets their specs refer to come from the file too.
#[derive(Default)]
struct FileGenerators(
    BTreeMap<(String, String, String), Value>,
    Arc<MemorySecretSource>,
);

#[async_trait::async_trait]
impl GeneratorSource for FileGenerators {
    async fn object(
        &self,
        namespace: &str,
        reference: &GeneratorRef,
    ) -> Result<Option<Value>, generators::Error> {
        let kind = serde_json::to_value(reference.kind).map_err(generators::Error::Object)?;
        let kind = kind.as_str().unwrap_or_default().to_owned();
        let namespace = if kind == "ClusterGenerator" {
            ""
        } else {
            namespace
        };
        let key = (kind, namespace.to_owned(), reference.name.clone());
        Ok(self.0.get(&key).cloned())
    }

    fn credentials(&self) -> Arc<dyn SecretSource> {
        self.1.clone()
    }
}

/// Renders every ExternalSecret of `path` into `out` (Secrets as YAML documents); writes one
/// line per ExternalSecret that produced no Secret to `notes`. Returns whether all synced.
pub async fn render(
    path: &Path,
    out: &mut impl Write,
    notes: &mut impl Write,
) -> anyhow::Result<bool> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let inputs = parse(&text).with_context(|| format!("parsing {}", path.display()))?;
    if inputs.external_secrets.is_empty() {
        anyhow::bail!("{}: no ExternalSecret to render", path.display());
    }
    let stores = stores(&inputs);
    let credentials = Arc::new(inputs.credentials);
    let generators = FileGenerators(inputs.generators.0, credentials.clone());
    let clients = ClientManager::new(credentials.clone(), ManagerSettings::default());
    let metrics = Metrics::default();
    let namespaces = NamespaceLabels::Known(inputs.namespaces);
    // One pass over the file: identical reads are made once.
    let shared = SharedReads::new(Duration::from_secs(3600));
    let reader = Reader {
        stores: &stores,
        clients: &clients,
        metrics: &metrics,
        namespaces: &namespaces,
        // Stores in a file carry no status (no store controller validated them): the flood
        // gate, which refuses stores without a True Ready condition, cannot apply offline.
        flood_gate: false,
        shared: &shared,
        generators: &generators,
    };
    let mut all_synced = true;
    for es in &inputs.external_secrets {
        let name = format!(
            "ExternalSecret {}/{}",
            es.namespace().unwrap_or_default(),
            es.name_any()
        );
        match reader.read(es).await {
            Ok(fetched) => match outcome(es, &fetched.data, credentials.as_ref()).await {
                Ok(Some(secret)) => {
                    writeln!(out, "---")?;
                    serde_yaml::to_writer(&mut *out, &secret)?;
                }
                Ok(None) => {}
                Err(ready) => {
                    all_synced &= ready.status == "True";
                    writeln!(
                        notes,
                        "{name}: Ready={} {}: {}",
                        ready.status, ready.reason, ready.message
                    )?;
                }
            },
            Err((error, step)) => {
                all_synced = false;
                let ready = match step {
                    Some(step) => Ready::failed(step, &error),
                    None => Ready::failed_plain(&error),
                };
                writeln!(
                    notes,
                    "{name}: Ready={} {}: {}",
                    ready.status, ready.reason, ready.message
                )?;
            }
        }
        clients.shutdown().await;
    }
    Ok(all_synced)
}

/// The Secret to print, or the condition explaining why there is none; `templateFrom`
/// ConfigMaps and Secrets come from the file, through `credentials`.
async fn outcome(
    es: &ExternalSecret,
    data: &SecretData,
    credentials: &MemorySecretSource,
) -> Result<Option<Value>, Ready> {
    if data.is_empty() {
        match es.spec.target.deletion_policy {
            ExternalSecretDeletionPolicy::Delete => {
                return Err(Ready::done(status::REASON_DELETED, status::MESSAGE_DELETED));
            }
            ExternalSecretDeletionPolicy::Retain => {
                return Err(Ready::done(
                    status::REASON_SYNCED,
                    status::MESSAGE_SYNCED_RETAIN,
                ));
            }
            ExternalSecretDeletionPolicy::Merge => {}
        }
    }
    if es.spec.target.creation_policy == ExternalSecretCreationPolicy::None {
        return Ok(None);
    }
    let namespace = es.namespace().unwrap_or_default();
    let sources = template::sources(
        es.spec.target.template.as_ref(),
        template::TEMPLATE_FIELD,
        &namespace,
        credentials,
    )
    .await
    .map_err(|error| Ready::failed(status::MESSAGE_UPDATE_FAILED, &error))?;
    // A generic target prints as the object the controller would write (run with
    // --unsafe-allow-generic-targets: rendering writes nothing).
    if let Some(manifest) = &es.spec.target.manifest {
        let failed = |error: generic::GenericError| {
            Ready::failed_as(
                status::REASON_RESOURCE_SYNCED_ERROR,
                "could not apply template to manifest",
                &error,
            )
        };
        generic::validate(manifest, true).map_err(failed)?;
        return generic::render::desired(es, manifest, data, None, &sources)
            .map(Some)
            .map_err(failed);
    }
    let secret = target::desired_secret(es, data, None, &sources)
        .map_err(|error| Ready::failed(status::MESSAGE_UPDATE_FAILED, &error))?;
    let mut value = serde_json::to_value(&secret).map_err(|error| Ready::failed_plain(&error))?;
    value["apiVersion"] = Value::from("v1");
    value["kind"] = Value::from("Secret");
    Ok(Some(value))
}

/// Both store kinds as the controller's watch caches would hold them.
fn stores(inputs: &Inputs) -> Stores {
    let (secret_stores, mut secret_store_writer) = reflector::store();
    for store in &inputs.secret_stores {
        secret_store_writer.apply_watcher_event(&watcher::Event::Apply(store.clone()));
    }
    let (cluster_secret_stores, mut cluster_store_writer) = reflector::store();
    for store in &inputs.cluster_secret_stores {
        cluster_store_writer.apply_watcher_event(&watcher::Event::Apply(store.clone()));
    }
    Stores {
        secret_stores,
        cluster_secret_stores,
    }
}

/// Splits the file into objects by kind; unrelated kinds are ignored.
fn parse(text: &str) -> anyhow::Result<Inputs> {
    let mut inputs = Inputs::default();
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value: Value = serde::Deserialize::deserialize(document)
            .with_context(|| format!("document {}", index + 1))?;
        if value.is_null() {
            continue;
        }
        let kind = value["kind"].as_str().unwrap_or_default().to_owned();
        let document = || format!("document {} ({kind})", index + 1);
        match kind.as_str() {
            "ExternalSecret" => inputs
                .external_secrets
                .push(namespaced(value).with_context(document)?),
            "SecretStore" => inputs
                .secret_stores
                .push(namespaced(value).with_context(document)?),
            "ClusterSecretStore" => inputs
                .cluster_secret_stores
                .push(serde_json::from_value(value).with_context(document)?),
            "Secret" => {
                let secret: Secret = namespaced(value).with_context(document)?;
                let namespace = secret.namespace().unwrap_or_default();
                let name = secret.name_any();
                inputs.credentials =
                    inputs
                        .credentials
                        .with_kube_secret(&namespace, &name, kube_secret(secret));
            }
            "ConfigMap" => {
                let config_map: ConfigMap = namespaced(value).with_context(document)?;
                let data: Vec<(String, String)> = config_map
                    .data
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                let pairs: Vec<(&str, &str)> =
                    data.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                inputs.credentials = inputs.credentials.with_config_map(
                    &config_map.namespace().unwrap_or_default(),
                    &config_map.name_any(),
                    &pairs,
                );
            }
            _ if value["apiVersion"]
                .as_str()
                .is_some_and(|api| api.starts_with("generators.external-secrets.io/")) =>
            {
                let name = value["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let namespace = match kind.as_str() {
                    "ClusterGenerator" => String::new(),
                    _ => value["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or(DEFAULT_NAMESPACE)
                        .to_owned(),
                };
                inputs
                    .generators
                    .0
                    .insert((kind.clone(), namespace, name), value);
            }
            "Namespace" => {
                let namespace: Namespace = serde_json::from_value(value).with_context(document)?;
                inputs
                    .namespaces
                    .insert(namespace.name_any(), namespace.labels().clone());
            }
            _ => {}
        }
    }
    Ok(inputs)
}

/// Deserializes a namespaced object, placing it in the default namespace when it names none.
fn namespaced<K: Resource + DeserializeOwned>(value: Value) -> anyhow::Result<K> {
    let mut object: K = serde_json::from_value(value)?;
    if object
        .meta()
        .namespace
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        object.meta_mut().namespace = Some(DEFAULT_NAMESPACE.to_owned());
    }
    if object.meta().name.as_deref().unwrap_or_default().is_empty() {
        anyhow::bail!("metadata.name: required");
    }
    Ok(object)
}

/// A Secret's labels and data, `stringData` over `data` as the API server merges them.
fn kube_secret(secret: Secret) -> KubeSecret {
    let mut data: BTreeMap<String, SecretValue> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, SecretValue::from(value)))
        .collect();
    for (key, value) in secret.string_data.unwrap_or_default() {
        data.insert(key, SecretValue::from(value));
    }
    KubeSecret {
        labels: secret.metadata.labels.unwrap_or_default(),
        data,
    }
}
