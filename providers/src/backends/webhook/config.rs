//! `spec.provider.webhook` parsed once: templates compiled, method, timeout and references
//! checked, so a broken store fails at construction (and in static validation) with a
//! configuration error instead of on every request.

use std::time::Duration;

use external_secrets_crds::v1::WebhookProvider;
use external_secrets_template::{MissingKey, Options, Template};

use super::http::{DEFAULT_TIMEOUT, MAX_TIMEOUT};
use crate::duration::parse_go_duration;
use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

/// A Secret exposed to the templates under `name`.
#[derive(Debug, Clone)]
pub struct TemplateSecret {
    /// The name the templates use (`{{ .<name>.<key> }}`).
    pub name: String,
    /// The Kubernetes Secret's name.
    pub secret_name: String,
    /// Its namespace, as written in the store.
    pub namespace: Option<String>,
}

/// The parsed webhook configuration.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// The URL as written (for the reachability check).
    pub raw_url: String,
    /// The URL template.
    pub url: Template,
    /// The configured method, if any (reads default to GET, pushes to POST).
    pub method: Option<reqwest::Method>,
    /// Header name and value template, sorted by name.
    pub headers: Vec<(String, Template)>,
    /// The body template, if any.
    pub body: Option<Template>,
    /// The `result.jsonPath` template, if any.
    pub json_path: Option<Template>,
    /// The request timeout.
    pub timeout: Duration,
    /// Secrets for the templates.
    pub secrets: Vec<TemplateSecret>,
}

impl WebhookConfig {
    /// Parses `spec`; `store` decides which secret namespaces are acceptable.
    pub fn parse(spec: &WebhookProvider, store: &StoreId) -> Result<Self> {
        if spec.url.is_empty() {
            return Err(ProviderError::invalid_config("url must be set"));
        }
        if spec.auth.as_ref().is_some_and(|auth| auth.ntlm.is_some()) {
            return Err(ProviderError::unsupported(
                "ntlm authentication of the webhook provider is not supported by this build",
            ));
        }
        // Upstream's webhook templates keep Go's default: a missing key prints `<no value>`.
        let options = Options {
            missing_key: MissingKey::Default,
            ..Options::default()
        };
        let template = |what: &str, source: &str| {
            Template::parse(what, source, &options).map_err(|error| {
                let message = error.message();
                ProviderError::invalid_config(format!("failed to parse {what}: {message}"))
            })
        };
        let method = match spec.method.as_deref().filter(|method| !method.is_empty()) {
            None => None,
            Some(method) => Some(reqwest::Method::from_bytes(method.as_bytes()).map_err(|_| {
                ProviderError::invalid_config(format!("invalid method {method:?}"))
            })?),
        };
        let timeout = match spec.timeout.as_deref() {
            None => DEFAULT_TIMEOUT,
            Some(timeout) => parse_go_duration(timeout)
                .map_err(|error| ProviderError::invalid_config(format!("timeout: {error}")))?
                .min(MAX_TIMEOUT),
        };
        let headers = spec
            .headers
            .iter()
            .map(|(name, value)| Ok((name.clone(), template(&format!("header {name}"), value)?)))
            .collect::<Result<_>>()?;
        let mut secrets = Vec::with_capacity(spec.secrets.len());
        for (position, secret) in spec.secrets.iter().enumerate() {
            let secret_name = secret
                .secret_ref
                .name
                .clone()
                .filter(|name| !name.is_empty())
                .ok_or_else(|| {
                    ProviderError::invalid_config(format!(
                        "secrets[{position}].secretRef.name must be set"
                    ))
                })?;
            check_secret_namespace(store, &secret_name, secret.secret_ref.namespace.as_deref())?;
            secrets.push(TemplateSecret {
                name: secret.name.clone(),
                secret_name,
                namespace: secret.secret_ref.namespace.clone(),
            });
        }
        Ok(Self {
            raw_url: spec.url.clone(),
            url: template("url", &spec.url)?,
            method,
            headers,
            body: spec
                .body
                .as_deref()
                .map(|body| template("body", body))
                .transpose()?,
            json_path: spec
                .result
                .as_ref()
                .and_then(|result| result.json_path.as_deref())
                .filter(|path| !path.is_empty())
                .map(|path| template("result.jsonPath", path))
                .transpose()?,
            timeout,
            secrets,
        })
    }
}

/// Upstream's rules for template secrets: a ClusterSecretStore must name the namespace, a
/// SecretStore may only name its own.
fn check_secret_namespace(
    store: &StoreId,
    secret_name: &str,
    namespace: Option<&str>,
) -> Result<()> {
    match (store.kind, namespace) {
        (StoreKind::ClusterSecretStore, None) => Err(ProviderError::invalid_config(format!(
            "no namespace on ClusterScoped webhook secret {secret_name}"
        ))),
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(ProviderError::invalid_config(
                "namespace should either be empty or match the namespace of the SecretStore for \
                 a namespaced SecretStore",
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::meta::SecretKeySelector;
    use external_secrets_crds::v1::{AuthorizationProtocol, NtlmProtocol, WebhookSecret};

    fn spec(url: &str) -> WebhookProvider {
        WebhookProvider {
            url: url.to_owned(),
            ..WebhookProvider::default()
        }
    }

    fn namespaced() -> StoreId {
        StoreId::secret_store("ns", "store")
    }

    #[test]
    fn a_valid_spec_parses() {
        let mut provider = spec("http://host/{{ .remoteRef.key }}");
        provider.method = Some("PUT".into());
        provider.timeout = Some("2s".into());
        provider
            .headers
            .insert("X-Token".into(), "{{ .auth.token }}".into());
        let config = WebhookConfig::parse(&provider, &namespaced()).unwrap();
        assert_eq!(config.method, Some(reqwest::Method::PUT));
        assert_eq!(config.timeout, Duration::from_secs(2));
        assert_eq!(config.headers.len(), 1);
        assert!(config.body.is_none() && config.json_path.is_none());
        // Issue 23: one call cannot hold a reconcile worker for hours.
        provider.timeout = Some("100000h".into());
        let config = WebhookConfig::parse(&provider, &namespaced()).unwrap();
        assert_eq!(config.timeout, MAX_TIMEOUT);
    }

    #[test]
    fn broken_specs_are_configuration_errors() {
        let cases: Vec<(WebhookProvider, &str)> = vec![
            (spec(""), "url must be set"),
            (spec("http://{{ .x"), "failed to parse url: unclosed action"),
            (
                WebhookProvider {
                    body: Some("{{ nope }}".into()),
                    ..spec("http://x")
                },
                "failed to parse body: function \"nope\" not defined",
            ),
            (
                WebhookProvider {
                    method: Some("GE T".into()),
                    ..spec("http://x")
                },
                "invalid method \"GE T\"",
            ),
            (
                WebhookProvider {
                    timeout: Some("soon".into()),
                    ..spec("http://x")
                },
                "timeout: invalid duration \"soon\"",
            ),
        ];
        for (provider, expected) in cases {
            let error = WebhookConfig::parse(&provider, &namespaced()).unwrap_err();
            assert_eq!(error.message(), expected);
            assert_eq!(error.reason(), "InvalidConfig");
        }
        let ntlm = WebhookProvider {
            auth: Some(AuthorizationProtocol {
                ntlm: Some(NtlmProtocol::default()),
            }),
            ..spec("http://x")
        };
        let error = WebhookConfig::parse(&ntlm, &namespaced()).unwrap_err();
        assert_eq!(error.reason(), "Unsupported");
    }

    #[test]
    fn secret_namespaces_follow_the_store_kind() {
        let with_secret = |namespace: Option<&str>| WebhookProvider {
            secrets: vec![WebhookSecret {
                name: "auth".into(),
                secret_ref: SecretKeySelector {
                    name: Some("creds".into()),
                    namespace: namespace.map(Into::into),
                    key: None,
                },
            }],
            ..spec("http://x")
        };
        let cluster = StoreId::cluster_secret_store("store");
        let error = WebhookConfig::parse(&with_secret(None), &cluster).unwrap_err();
        assert_eq!(
            error.message(),
            "no namespace on ClusterScoped webhook secret creds"
        );
        assert!(WebhookConfig::parse(&with_secret(Some("any")), &cluster).is_ok());
        assert!(WebhookConfig::parse(&with_secret(None), &namespaced()).is_ok());
        assert!(WebhookConfig::parse(&with_secret(Some("ns")), &namespaced()).is_ok());
        assert!(WebhookConfig::parse(&with_secret(Some("other")), &namespaced()).is_err());
    }
}
