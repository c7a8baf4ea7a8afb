//! What a sync reads before it writes: the provider data (through the shared store
//! resolution and the fetcher) and the ConfigMaps and Secrets the target template names.

use external_secrets_crds::v1::ExternalSecret;
use external_secrets_providers::credentials::KubeSecretSource;
use kube::runtime::events::EventType;
use kube::{Api, ResourceExt};

use super::context::EsContext;
use super::error::Error;
use super::outcome::publish;
use super::read::{ReadFailure, Reader};
use crate::controllers::template::{self, SecretData};
use crate::generators::KubeGenerators;
use crate::stores::NamespaceLabels;

/// The ConfigMaps and Secrets the target template of `es` names, from its namespace.
pub async fn template_sources(
    es: &ExternalSecret,
    context: &EsContext,
) -> Result<template::TemplateSources, Error> {
    let source = KubeSecretSource::new(context.shared.client.clone());
    let namespace = es.namespace().unwrap_or_default();
    template::sources(
        es.spec.target.template.as_ref(),
        template::TEMPLATE_FIELD,
        &namespace,
        &source,
    )
    .await
    .map_err(Error::TemplateSource)
}

/// Reads the provider data of `es` (a note event for each entry upstream reports missing);
/// an error comes with upstream's message for the failed step.
pub async fn read_provider_data(
    es: &ExternalSecret,
    context: &EsContext,
) -> Result<SecretData, ReadFailure> {
    let shared = &context.shared;
    let namespaces = NamespaceLabels::Cluster(Box::new(Api::all(shared.client.clone())));
    let generators = KubeGenerators::new(
        shared.client.clone(),
        shared.clients.registry().operator_identity(),
    );
    let reader = Reader {
        stores: &context.stores,
        clients: &shared.clients,
        metrics: &shared.metrics,
        namespaces: &namespaces,
        flood_gate: shared.settings.flood_gate,
        shared: &context.reads,
        generators: &generators,
    };
    let fetched = reader.read(es).await?;
    for note in &fetched.missing {
        publish(
            es,
            context,
            EventType::Normal,
            "MissingProviderSecret",
            note,
        )
        .await;
    }
    Ok(fetched.data)
}
