//! Talking to the providers: pushing a source Secret's entries (`spec.data` and the expanded
//! `spec.dataTo`) to every store, and deleting what is no longer pushed.

use std::collections::BTreeMap;

use external_secrets_crds::v1::SecretStoreRefKind;
use external_secrets_crds::v1alpha1::{PushSecret, PushSecretData, PushSecretUpdatePolicy};
use external_secrets_providers::convert::source_metadata;
use external_secrets_providers::credentials::KubeSecretSource;
use external_secrets_providers::request::{PushRemoteRef, PushRequest, SourceMetadata};
use external_secrets_providers::{SecretMap, SecretValue, SharedClient};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use super::context::PsContext;
use super::data_to::{self, Data};
use super::error::{ClientError, DeleteError, PushError};
use super::plan::{self, Synced};
use super::template;
use crate::stores::api_calls::Operation;
use crate::stores::{FoundStore, lookup};

/// Pushes every `spec.data` and expanded `spec.dataTo` entry of `secret` (templated by
/// `spec.template`) to every store, recording what was pushed in `synced`.
pub async fn push(
    push_secret: &PushSecret,
    context: &PsContext,
    stores: &BTreeMap<String, FoundStore>,
    secret: &Secret,
    synced: &mut Synced,
) -> Result<(), PushError> {
    let namespace = push_secret.namespace().unwrap_or_default();
    let (raw, metadata) = templated(push_secret, context, &namespace, secret).await?;
    for (store_key, store) in stores {
        let expanded = data_to::expand(
            &push_secret.spec.data_to,
            &push_secret.spec.data,
            &store.identity(),
            &raw,
        )
        .map_err(PushError::DataTo)?;
        let client = client(context, store, &namespace).await?;
        let entries = synced.entry(store_key.clone()).or_default();
        for data in &expanded.entries {
            let source = expanded
                .bundles
                .get(&plan::status_ref(data))
                .unwrap_or(&raw);
            let request = request(data, source, &metadata)?;
            let target = Target {
                push_secret,
                context,
                store,
                client: &client,
            };
            target.push_entry(data, &request).await?;
            entries.insert(plan::status_ref(data), data.clone());
        }
    }
    Ok(())
}

/// The source data and metadata, templated by `spec.template` when there is one.
async fn templated(
    push_secret: &PushSecret,
    context: &PsContext,
    namespace: &str,
    secret: &Secret,
) -> Result<(Data, SourceMetadata), PushError> {
    let raw: Data = secret
        .data
        .iter()
        .flatten()
        .map(|(key, value)| (key.clone(), value.0.clone()))
        .collect();
    let Some(spec) = &push_secret.spec.template else {
        return Ok((raw, source_metadata(secret)));
    };
    let source = KubeSecretSource::new(context.shared.client.clone());
    let sources =
        crate::controllers::template::sources(Some(spec), "spec.template", namespace, &source)
            .await
            .map_err(PushError::TemplateSource)?;
    template::render(spec, raw, source_metadata(secret), &sources)
}

/// The push request of one entry: its keys converted back, its `secretKey` checked.
fn request(
    data: &PushSecretData,
    source: &Data,
    metadata: &SourceMetadata,
) -> Result<PushRequest, PushError> {
    let converted = plan::reverse_keys(data.conversion_strategy, source.clone())
        .map_err(PushError::Conversion)?;
    if let Some(key) = secret_key(data)
        && !converted.contains_key(key)
    {
        return Err(PushError::MissingKey(key.to_owned()));
    }
    let secret_data: SecretMap = converted
        .into_iter()
        .map(|(key, value)| (key, SecretValue::new(value)))
        .collect();
    Ok(PushRequest::from_push_data(data, secret_data).with_source_metadata(metadata.clone()))
}

fn secret_key(data: &PushSecretData) -> Option<&str> {
    data.r#match
        .secret_key
        .as_deref()
        .filter(|key| !key.is_empty())
}

/// One store being pushed to.
struct Target<'a> {
    push_secret: &'a PushSecret,
    context: &'a PsContext,
    store: &'a FoundStore,
    client: &'a SharedClient,
}

impl Target<'_> {
    /// Pushes one entry (`updatePolicy: IfNotExists` leaves an existing secret alone).
    async fn push_entry(
        &self,
        data: &PushSecretData,
        request: &PushRequest,
    ) -> Result<(), PushError> {
        if self.push_secret.spec.update_policy == PushSecretUpdatePolicy::IfNotExists {
            let exists = self
                .client
                .secret_exists(&request.remote_ref)
                .await
                .map_err(PushError::Exists)?;
            if exists {
                return Ok(());
            }
        }
        let result = self.client.push_secret(request).await;
        count(
            self.context,
            self.store,
            Operation::PushSecret(&request.remote_ref.remote_key),
            result.is_ok(),
        );
        result.map_err(|source| PushError::Write {
            key: secret_key(data).unwrap_or_default().to_owned(),
            store: self.store.store_ref().id.name.to_owned(),
            source,
        })
    }
}

/// Deletes from the providers what `previous` pushed and `current` does not.
pub async fn delete_stale(
    push_secret: &PushSecret,
    context: &PsContext,
    previous: &Synced,
    current: &Synced,
) -> Result<(), DeleteError> {
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
            .map_err(DeleteError::Lookup)?;
        let Some(store) = store else {
            // The store is gone, and with it what was pushed through it.
            continue;
        };
        let client = client(context, &store, &namespace).await?;
        let remote_ref = PushRemoteRef::from(&data.r#match.remote_ref);
        let result = client.delete_secret(&remote_ref).await;
        count(
            context,
            &store,
            Operation::DeleteSecret(&remote_ref.remote_key),
            result.is_ok(),
        );
        result.map_err(DeleteError::Provider)?;
    }
    Ok(())
}

async fn client(
    context: &PsContext,
    store: &FoundStore,
    namespace: &str,
) -> Result<SharedClient, ClientError> {
    store
        .client(&context.shared.clients, namespace)
        .await
        .map_err(|source| ClientError {
            store: store.store_ref().id.name.to_owned(),
            source,
        })
}

fn count(context: &PsContext, store: &FoundStore, operation: Operation<'_>, ok: bool) {
    let (provider, call) = store.api_call(operation);
    context
        .shared
        .metrics
        .count_provider_call(provider, call, ok);
}
