//! One pass of the cert controller against the API: make sure the Secret holds valid
//! certificates, then inject its `ca.crt` into every labelled ValidatingWebhookConfiguration
//! and every named CRD with a conversion webhook.
//!
//! The Secret is only ever read and written by name: the controller never lists or watches
//! Secrets (upstream advisory CVE-2024-45041 was its cert controller caching every Secret of
//! the cluster). Objects are written with `update` (upstream's verb, and the only one its
//! Helm chart grants), so a concurrent change makes the pass fail and retry rather than
//! overwrite it.

use std::collections::BTreeMap;
use std::time::SystemTime;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{ListParams, PostParams};

use super::bundle::{self, Decision};
use super::inject::{self, Service};

/// What the pass works on (from the command line).
#[derive(Debug, Clone)]
pub struct Settings {
    /// The webhook Service.
    pub service: Service,
    /// The Secret's name.
    pub secret_name: String,
    /// The Secret's namespace.
    pub secret_namespace: String,
    /// The label selector of the webhook configurations to inject.
    pub webhook_selector: String,
    /// The CRDs whose conversion webhook is injected.
    pub crd_names: Vec<String>,
}

/// Why a pass failed; each names the object concerned.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// Reading or writing the Secret failed.
    #[error("secret {namespace}/{name}: {source}")]
    Secret {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The API error.
        source: kube::Error,
    },
    /// Certificates could not be generated.
    #[error(transparent)]
    Generate(#[from] bundle::GenerateError),
    /// Listing or updating webhook configurations failed.
    #[error("validatingwebhookconfiguration {name}: {source}")]
    WebhookConfiguration {
        /// The configuration's name (empty when listing).
        name: String,
        /// The API error.
        source: kube::Error,
    },
    /// Reading or updating a CRD failed.
    #[error("customresourcedefinition {name}: {source}")]
    Crd {
        /// The CRD's name.
        name: String,
        /// The API error.
        source: kube::Error,
    },
    /// A CRD's conversion webhook cannot be injected.
    #[error("customresourcedefinition {name}: {source}")]
    Conversion {
        /// The CRD's name.
        name: String,
        /// What is wrong with it.
        source: inject::UnexpectedConversion,
    },
}

/// Runs one pass.
pub async fn sync(client: &kube::Client, settings: &Settings) -> Result<(), SyncError> {
    let ca_bundle = ensure_certificates(client, settings).await?;
    inject_webhook_configurations(client, settings, &ca_bundle).await?;
    inject_crds(client, settings, &ca_bundle).await
}

/// Renews the Secret's certificates when due; returns the CA bundle (`ca.crt`).
async fn ensure_certificates(
    client: &kube::Client,
    settings: &Settings,
) -> Result<Vec<u8>, SyncError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), &settings.secret_namespace);
    let name = &settings.secret_name;
    let failed = |source| SyncError::Secret {
        namespace: settings.secret_namespace.clone(),
        name: name.clone(),
        source,
    };
    let existing = api.get_opt(name).await.map_err(failed)?;
    let stored: BTreeMap<String, Vec<u8>> = existing
        .as_ref()
        .and_then(|secret| secret.data.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.0))
        .collect();
    let dns_names = bundle::service_dns_names(&settings.service.name, &settings.service.namespace);
    let (bundle, new_ca) = match bundle::decide(&stored, &dns_names, SystemTime::now())? {
        Decision::Keep => {
            return Ok(stored.get(bundle::CA_CERT).cloned().unwrap_or_default());
        }
        Decision::Write { bundle, new_ca } => (bundle, new_ca),
    };
    let entries = bundle
        .entries()
        .map(|(key, value)| (key.to_owned(), ByteString(value.as_bytes().to_vec())));
    match existing {
        Some(mut secret) => {
            secret.data.get_or_insert_default().extend(entries);
            api.replace(name, &PostParams::default(), &secret)
                .await
                .map_err(failed)?;
        }
        None => {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(settings.secret_namespace.clone()),
                    labels: Some(BTreeMap::from([(
                        "external-secrets.io/component".to_owned(),
                        "webhook".to_owned(),
                    )])),
                    ..ObjectMeta::default()
                },
                data: Some(entries.into_iter().collect()),
                ..Secret::default()
            };
            api.create(&PostParams::default(), &secret)
                .await
                .map_err(failed)?;
        }
    }
    tracing::info!(
        secret = %format!("{}/{name}", settings.secret_namespace),
        dns_name = %dns_names[0],
        new_ca,
        "webhook certificates written"
    );
    Ok(bundle.ca_cert.into_bytes())
}

/// Injects the bundle into every selected ValidatingWebhookConfiguration.
async fn inject_webhook_configurations(
    client: &kube::Client,
    settings: &Settings,
    ca_bundle: &[u8],
) -> Result<(), SyncError> {
    let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let configurations = api
        .list(&ListParams::default().labels(&settings.webhook_selector))
        .await
        .map_err(|source| SyncError::WebhookConfiguration {
            name: String::new(),
            source,
        })?;
    for mut configuration in configurations {
        let name = configuration.metadata.name.clone().unwrap_or_default();
        if !inject::webhook_configuration(&mut configuration, &settings.service, ca_bundle) {
            continue;
        }
        api.replace(&name, &PostParams::default(), &configuration)
            .await
            .map_err(|source| SyncError::WebhookConfiguration {
                name: name.clone(),
                source,
            })?;
        tracing::info!(%name, "updated webhook config");
    }
    Ok(())
}

/// Injects the bundle into the named CRDs that exist and convert through a webhook.
async fn inject_crds(
    client: &kube::Client,
    settings: &Settings,
    ca_bundle: &[u8],
) -> Result<(), SyncError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for name in &settings.crd_names {
        let failed = |source| SyncError::Crd {
            name: name.clone(),
            source,
        };
        let Some(mut crd) = api.get_opt(name).await.map_err(failed)? else {
            tracing::debug!(%name, "crd not installed, nothing to inject");
            continue;
        };
        let changed = inject::crd(&mut crd, &settings.service, ca_bundle).map_err(|source| {
            SyncError::Conversion {
                name: name.clone(),
                source,
            }
        })?;
        if changed {
            api.replace(name, &PostParams::default(), &crd)
                .await
                .map_err(failed)?;
            tracing::info!(%name, "updated crd");
        }
    }
    Ok(())
}
