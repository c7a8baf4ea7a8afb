//! Objects the cert controller tests share: webhook configurations and a CRD converting through
//! a webhook for it to inject its CA into, and readers of what it wrote.

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde_json::{Value, json};

/// A configuration of two webhooks matching no request, labelled `e2e-run: run_label` (and as
/// the cert controller selects by default when `labelled`).
pub fn webhook_configuration(
    name: &str,
    run_label: &str,
    labelled: bool,
) -> anyhow::Result<ValidatingWebhookConfiguration> {
    let mut labels = json!({"e2e-run": run_label});
    if labelled {
        labels["external-secrets.io/component"] = "webhook".into();
    }
    let webhook = |name: &str| {
        json!({
            "name": name,
            "clientConfig": {"service": {
                "name": "placeholder",
                "namespace": "default",
                "path": "/validate-external-secrets-io-v1-externalsecret",
            }},
            "rules": [],
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Ignore",
        })
    };
    Ok(serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name, "labels": labels},
        "webhooks": [
            webhook("validate.externalsecret.external-secrets.io"),
            webhook("validate.other.example.com"),
        ],
    }))?)
}

/// A CRD (named by `TestCrd`) that converts through a webhook, so its CA bundle is injected.
pub fn conversion_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "placeholder"},
        "spec": {
            "group": "e2e.external-secrets.io",
            "names": {"kind": "Converted", "plural": "converteds", "singular": "converted", "listKind": "ConvertedList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"name": "placeholder", "namespace": "default", "path": "/convert"}},
                },
            },
        },
    })
}

/// The Secret's data, once it holds the three files the webhook needs.
pub async fn certificates(
    secrets: &Api<Secret>,
    name: &str,
) -> anyhow::Result<Option<BTreeMap<String, Vec<u8>>>> {
    let Some(secret) = secrets.get_opt(name).await? else {
        return Ok(None);
    };
    let data: BTreeMap<String, Vec<u8>> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.0))
        .collect();
    let complete = ["ca.crt", "ca.key", "tls.crt", "tls.key"]
        .iter()
        .all(|key| data.get(*key).is_some_and(|value| !value.is_empty()));
    Ok(complete.then_some(data))
}

/// Each webhook's `clientConfig.caBundle`.
pub fn ca_bundles(config: &ValidatingWebhookConfiguration) -> Vec<Option<Vec<u8>>> {
    config
        .webhooks
        .iter()
        .flatten()
        .map(|webhook| {
            webhook
                .client_config
                .ca_bundle
                .clone()
                .map(|bundle| bundle.0)
        })
        .collect()
}
