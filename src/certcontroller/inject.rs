//! Putting the CA bundle and the webhook Service into the objects the API server calls the
//! webhook through, without any I/O: upstream's `webhookconfig.inject` and the CRD
//! controller's `injectService`/`injectCert`.
//!
//! In a ValidatingWebhookConfiguration only the webhooks named `*external-secrets.io` are
//! touched (a configuration may hold others). A CRD is touched only when its conversion
//! strategy is `Webhook`.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Webhooks whose name ends with this are ours.
const WEBHOOK_NAME_SUFFIX: &str = "external-secrets.io";

/// The webhook Service clients are pointed at.
#[derive(Debug, Clone)]
pub struct Service {
    /// Its name (`--service-name`).
    pub name: String,
    /// Its namespace (`--service-namespace`).
    pub namespace: String,
}

/// Points our webhooks in `config` at `service` with `ca_bundle`; returns whether anything
/// changed. Webhooks reached by URL keep their URL and get the bundle.
pub fn webhook_configuration(
    config: &mut ValidatingWebhookConfiguration,
    service: &Service,
    ca_bundle: &[u8],
) -> bool {
    let before = config.clone();
    for webhook in config.webhooks.iter_mut().flatten() {
        if !webhook.name.ends_with(WEBHOOK_NAME_SUFFIX) {
            continue;
        }
        if let Some(reference) = webhook.client_config.service.as_mut() {
            reference.name.clone_from(&service.name);
            reference.namespace.clone_from(&service.namespace);
        }
        webhook.client_config.ca_bundle = Some(ByteString(ca_bundle.to_vec()));
    }
    *config != before
}

/// Why a CRD's conversion webhook cannot be injected.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("unexpected crd conversion webhook config: {0}")]
pub struct UnexpectedConversion(&'static str);

/// Points the conversion webhook of `crd` at `service` with `ca_bundle` when its strategy is
/// `Webhook`; returns whether anything changed.
pub fn crd(
    crd: &mut CustomResourceDefinition,
    service: &Service,
    ca_bundle: &[u8],
) -> Result<bool, UnexpectedConversion> {
    let Some(conversion) = crd.spec.conversion.as_mut() else {
        return Ok(false);
    };
    if conversion.strategy != "Webhook" {
        return Ok(false);
    }
    let client_config = conversion
        .webhook
        .as_mut()
        .and_then(|webhook| webhook.client_config.as_mut())
        .ok_or(UnexpectedConversion(
            "spec.conversion.webhook.clientConfig is missing",
        ))?;
    let before = client_config.clone();
    if let Some(reference) = client_config.service.as_mut() {
        reference.name.clone_from(&service.name);
        reference.namespace.clone_from(&service.namespace);
    }
    client_config.ca_bundle = Some(ByteString(ca_bundle.to_vec()));
    Ok(*client_config != before)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn service() -> Service {
        Service {
            name: "eso-webhook".into(),
            namespace: "eso".into(),
        }
    }

    #[test]
    fn injects_our_webhooks_only() {
        let mut config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "externalsecret-validate"},
            "webhooks": [
                {
                    "name": "validate.externalsecret.external-secrets.io",
                    "clientConfig": {"service": {"name": "old", "namespace": "default", "path": "/validate-external-secrets-io-v1-externalsecret"}},
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                },
                {
                    "name": "validate.example.com",
                    "clientConfig": {"service": {"name": "other", "namespace": "x"}},
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                },
            ],
        }))
        .unwrap();
        assert!(webhook_configuration(&mut config, &service(), b"CA"));
        let webhooks = config.webhooks.as_ref().unwrap();
        let ours = &webhooks[0].client_config;
        let reference = ours.service.as_ref().unwrap();
        assert_eq!(
            (reference.name.as_str(), reference.namespace.as_str()),
            ("eso-webhook", "eso")
        );
        assert_eq!(
            reference.path.as_deref(),
            Some("/validate-external-secrets-io-v1-externalsecret")
        );
        assert_eq!(ours.ca_bundle, Some(ByteString(b"CA".to_vec())));
        let theirs = &webhooks[1].client_config;
        assert_eq!(theirs.service.as_ref().unwrap().name, "other");
        assert_eq!(theirs.ca_bundle, None);
        // Idempotent.
        assert!(!webhook_configuration(&mut config, &service(), b"CA"));
        assert!(webhook_configuration(&mut config, &service(), b"NEW CA"));
    }

    fn crd_with(conversion: serde_json::Value) -> CustomResourceDefinition {
        serde_json::from_value(json!({
            "metadata": {"name": "externalsecrets.external-secrets.io"},
            "spec": {
                "group": "external-secrets.io",
                "names": {"kind": "ExternalSecret", "plural": "externalsecrets"},
                "scope": "Namespaced",
                "versions": [],
                "conversion": conversion,
            },
        }))
        .unwrap()
    }

    #[test]
    fn injects_conversion_webhooks_only() {
        let mut none = crd_with(json!({"strategy": "None"}));
        assert_eq!(crd(&mut none, &service(), b"CA"), Ok(false));
        let mut webhook = crd_with(json!({
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": "old", "namespace": "default", "path": "/convert"}},
            },
        }));
        assert_eq!(crd(&mut webhook, &service(), b"CA"), Ok(true));
        let client_config = webhook
            .spec
            .conversion
            .as_ref()
            .and_then(|conversion| conversion.webhook.as_ref())
            .and_then(|webhook| webhook.client_config.as_ref())
            .unwrap();
        assert_eq!(client_config.service.as_ref().unwrap().name, "eso-webhook");
        assert_eq!(client_config.service.as_ref().unwrap().namespace, "eso");
        assert_eq!(client_config.ca_bundle, Some(ByteString(b"CA".to_vec())));
        assert_eq!(crd(&mut webhook, &service(), b"CA"), Ok(false));
        let mut broken = crd_with(json!({"strategy": "Webhook"}));
        assert!(crd(&mut broken, &service(), b"CA").is_err());
    }
}
