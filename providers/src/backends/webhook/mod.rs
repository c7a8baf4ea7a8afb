//! The `webhook` provider: secrets from any HTTP API, with templated requests.
//!
//! Behaviour follows upstream's generic webhook provider:
//!
//! * `url`, `headers`, `body` and `result.jsonPath` are Go templates with upstream's function
//!   map (the `external-secrets-template` engine), where a missing key prints `<no value>` as
//!   upstream's webhook templates do. Reads see `.remoteRef.key`, `.remoteRef.version`, `.remoteRef.property`
//!   (query-escaped in the URL, raw elsewhere) and `.remoteRef.namespace` (the namespace of the
//!   object using the store). Pushes see `.remoteRef.remoteKey`, `.remoteRef.secretKey` and the
//!   value itself under `.remoteRef.<remoteKey>`.
//! * Each entry of `secrets` exposes all keys of a Kubernetes Secret as `.<name>.<key>`.
//! * Reads use `method` (default GET); with a `result.jsonPath` the response is JSON and the path
//!   selects the value (see the `response` module), without one the body is the value. 404 means the
//!   secret does not exist. Maps (`dataFrom.extract`) parse the (selected) response as an object.
//! * Pushes use `method` (default POST); without a `body` the value itself is sent. A push
//!   answered with 304 counts as done.
//! * Deletes send DELETE to the URL rendered with `.remoteRef.remoteKey`; 404 counts as done.
//! * `secret_exists` reads `remoteKey` as a key: anything but 404 means it exists.
//! * Find (`get_all_secrets`) is not implemented, as upstream; NTLM auth is not supported.
//! * The `Webhook` generator is one map read (see the `generator` module).
//! * `validate` opens a TCP connection to the URL's host and port (Unknown if the host itself is
//!   templated).
//!
//! # Guarding against request forgery
//!
//! The webhook sends requests wherever its store's URL points, with Secret values rendered into
//! them, so whoever may write a store could otherwise exfiltrate any Secret the operator can
//! read. Upstream (and this module) guard the *Secrets*, not the URL:
//!
//! * every Secret read for templating must carry the label `external-secrets.io/type: webhook`
//!   (a missing label or another value is refused), so only Secrets their owners explicitly
//!   released to webhooks can leave the cluster;
//! * a SecretStore reads such Secrets from its own namespace only; a ClusterSecretStore must name
//!   the namespace of each one (no fallback to the caller's namespace);
//! * no URL, header or body is ever logged or put in an error message, since they may carry
//!   those values.
//!
//! Like upstream there is no allow- or deny-list of destinations: restricting where the
//! operator may connect (cluster-internal or metadata addresses) is left to NetworkPolicy.
//!
//! Differences from upstream: a request timeout of 30 s applies when none is set; the delete
//! request also sees `secrets` (upstream renders delete headers without them); the delete URL
//! query-escapes the remote key like the push URL; without a `body` a push sends the value
//! directly rather than through a template (same bytes, and any remote key works); the
//! reachability check uses the scheme's default port rather than always 443.

mod config;
mod generator;
mod http;
pub mod response;

use std::collections::BTreeMap;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::{CaProvider, WebhookCaProvider, WebhookProvider};
use external_secrets_template::{Data, Template, query_escape};
use reqwest::Method;

pub use self::generator::generate;

use self::config::WebhookConfig;
use self::http::{Outcome, Request};
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult, not_implemented};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ErrorKind, ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::StoreId;
use crate::value::{SecretMap, SecretValue};

/// The label every Secret used in webhook templates must carry, with value `webhook`.
pub const SECRET_TYPE_LABEL: &str = "external-secrets.io/type";

/// How long `validate` waits for a TCP connection.
const VALIDATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// Checks `spec.provider.webhook` statically: templates parse, method and timeout are valid,
/// secret references follow the store kind's namespace rules, no unsupported auth.
pub fn validate_store(spec: &WebhookProvider, store: &StoreId) -> Result<()> {
    WebhookConfig::parse(spec, store).map(|_| ())
}

/// The `webhook` backend.
#[derive(Debug, Clone, Copy)]
pub struct Webhook;

#[async_trait]
impl Provider for Webhook {
    type Spec = WebhookProvider;
    const NAME: &'static str = "webhook";

    fn validate_store(&self, spec: &WebhookProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &WebhookProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        Ok(Arc::new(
            WebhookClient::new(spec, context.credentials).await?,
        ))
    }
}

/// A client of one webhook store.
pub struct WebhookClient {
    config: WebhookConfig,
    http: reqwest::Client,
    credentials: CredentialResolver,
}

impl WebhookClient {
    /// Builds the client: parses the spec and sets up TLS (reading `caProvider` if set).
    pub async fn new(spec: &WebhookProvider, credentials: CredentialResolver) -> Result<Self> {
        let config = WebhookConfig::parse(spec, credentials.store())?;
        let ca = crate::ca::ca_bundle(
            spec.ca_bundle.as_ref(),
            spec.ca_provider.as_ref().map(ca_provider).as_ref(),
            &credentials,
        )
        .await?;
        let http = http::build_client(config.timeout, ca.as_deref())?;
        Ok(Self {
            config,
            http,
            credentials,
        })
    }

    /// The `secrets` of the store as template values, label-checked.
    async fn template_secrets(&self) -> Result<BTreeMap<String, Data>> {
        let mut values: BTreeMap<String, Data> = BTreeMap::new();
        for secret in &self.config.secrets {
            let found = self
                .credentials
                .secret(
                    &secret.secret_name,
                    secret.namespace.as_deref(),
                    Referent::Forbidden,
                )
                .await?;
            match found.labels.get(SECRET_TYPE_LABEL).map(String::as_str) {
                Some("webhook") => {}
                Some(_) => return Err(label_error("secret type is not 'webhook'")),
                None => {
                    return Err(label_error(
                        "secret does not contain needed label 'external-secrets.io/type: \
                         webhook'. Update secret label to use it with webhook",
                    ));
                }
            }
            let entry = values
                .entry(secret.name.clone())
                .or_insert_with(|| Data::Map(BTreeMap::new()));
            if let Data::Map(entries) = entry {
                for (key, value) in found.data {
                    entries.insert(key, Data::String(value.expose().to_vec()));
                }
            }
        }
        Ok(values)
    }

    /// Template data for a read: `(escaped for the URL, raw)`.
    async fn read_data(&self, remote_ref: &RemoteRef) -> Result<(Data, Data)> {
        let secrets = self.template_secrets().await?;
        let namespace = self
            .credentials
            .caller_namespace()
            .unwrap_or_default()
            .to_owned();
        let fields = |escape: fn(&[u8]) -> Vec<u8>| {
            Data::strings([
                ("key", escape(remote_ref.key.as_bytes())),
                (
                    "version",
                    escape(remote_ref.version.as_deref().unwrap_or_default().as_bytes()),
                ),
                (
                    "property",
                    escape(
                        remote_ref
                            .property
                            .as_deref()
                            .unwrap_or_default()
                            .as_bytes(),
                    ),
                ),
                ("namespace", namespace.clone().into_bytes()),
            ])
        };
        Ok((
            with_secrets(fields(escaped), &secrets),
            with_secrets(fields(<[u8]>::to_vec), &secrets),
        ))
    }

    /// Renders and sends a read, returning the body of a 2xx answer.
    async fn fetch(&self, remote_ref: &RemoteRef) -> Result<(Vec<u8>, Data)> {
        let (escaped, raw) = self.read_data(remote_ref).await?;
        let body = match &self.config.body {
            Some(body) => render(body, &raw)?,
            None => Vec::new(),
        };
        let method = self.config.method.clone().unwrap_or(Method::GET);
        let request = self.request(method, &escaped, &raw, body)?;
        match http::send(&self.http, request).await? {
            Outcome::Body(body) => Ok((body, raw)),
            Outcome::Status(status) => Err(http::status_error("endpoint", status)),
        }
    }

    fn request(
        &self,
        method: Method,
        escaped: &Data,
        raw: &Data,
        body: Vec<u8>,
    ) -> Result<Request> {
        let url = render_text(&self.config.url, escaped)?;
        let headers = self
            .config
            .headers
            .iter()
            .map(|(name, value)| Ok((name.clone(), render_text(value, raw)?)))
            .collect::<Result<_>>()?;
        Ok(Request {
            method,
            url,
            headers,
            body,
        })
    }

    fn json_path(&self, raw: &Data) -> Result<Option<String>> {
        match &self.config.json_path {
            Some(path) => Ok(Some(render_text(path, raw)?).filter(|p| !p.is_empty())),
            None => Ok(None),
        }
    }
}

fn label_error(message: &str) -> ProviderError {
    // The label may be added later; nothing watches the Secret, so let the caller retry.
    ProviderError::permission_denied(message).with_temporary(true)
}

fn with_secrets(remote_ref: Data, secrets: &BTreeMap<String, Data>) -> Data {
    let mut data = BTreeMap::from([("remoteRef".to_owned(), remote_ref)]);
    for (name, value) in secrets {
        match (data.get_mut(name), value) {
            (Some(Data::Map(existing)), Data::Map(entries)) => {
                existing.extend(entries.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => {
                data.insert(name.clone(), value.clone());
            }
        }
    }
    Data::Map(data)
}

/// Go's `url.QueryEscape`, which upstream applies to the values the URL sees.
fn escaped(value: &[u8]) -> Vec<u8> {
    query_escape(value).into_bytes()
}

/// Runs a template; the error names the template (`url`, `body`, ...) and never the data.
fn render(template: &Template, data: &Data) -> Result<Vec<u8>> {
    template.execute(data).map_err(|error| {
        ProviderError::invalid_config(format!("failed to render {}: {error}", template.name()))
    })
}

/// [`render`] for the URL, headers and JSONPath, which are text.
fn render_text(template: &Template, data: &Data) -> Result<String> {
    render(template, data).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

#[async_trait]
impl SecretsClient for WebhookClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let (body, raw) = self.fetch(remote_ref).await?;
        match self.json_path(&raw)? {
            Some(path) => {
                let document = response::parse(&body)?;
                response::single_value(&response::select(&document, &path)?)
            }
            None => Ok(SecretValue::new(body)),
        }
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let (body, raw) = self.fetch(remote_ref).await?;
        let path = self.json_path(&raw)?;
        response::value_map(&body, path.as_deref())
    }

    async fn get_all_secrets(&self, _find: &Find) -> Result<SecretMap> {
        Err(not_implemented("webhook", "find"))
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let remote_key = &request.remote_ref.remote_key;
        if remote_key.is_empty() {
            return Err(ProviderError::invalid_request("remote key must be defined"));
        }
        let value = request.value()?;
        let secrets = self.template_secrets().await?;
        let fields = |escape: fn(&[u8]) -> Vec<u8>| {
            let mut fields = vec![("remoteKey", escape(remote_key.as_bytes()))];
            if let Some(secret_key) = request.secret_key.as_deref().filter(|key| !key.is_empty()) {
                fields.push(("secretKey", escape(secret_key.as_bytes())));
            }
            fields.push((remote_key.as_str(), escape(value.expose())));
            Data::strings(fields)
        };
        let escaped_data = with_secrets(fields(escaped), &secrets);
        let raw = with_secrets(fields(<[u8]>::to_vec), &secrets);
        let body = match &self.config.body {
            Some(body) => render(body, &raw)?,
            None => value.into_bytes(),
        };
        let method = self.config.method.clone().unwrap_or(Method::POST);
        let http_request = self.request(method, &escaped_data, &raw, body)?;
        match http::send(&self.http, http_request).await {
            Ok(Outcome::Body(_)) => Ok(()),
            Ok(Outcome::Status(status)) if status == reqwest::StatusCode::NOT_MODIFIED => Ok(()),
            Ok(Outcome::Status(status)) => Err(http::status_error("endpoint", status)),
            Err(error) => Err(error),
        }
        .map_err(|error| error.context("failed to push webhook data"))
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let secrets = self.template_secrets().await?;
        let key = remote_ref.remote_key.as_bytes();
        let escaped_data = with_secrets(Data::strings([("remoteKey", escaped(key))]), &secrets);
        let raw = with_secrets(Data::strings([("remoteKey", key)]), &secrets);
        let request = self.request(Method::DELETE, &escaped_data, &raw, Vec::new())?;
        match http::send(&self.http, request).await? {
            Outcome::Body(_) => Ok(()),
            Outcome::Status(status) if status == reqwest::StatusCode::NOT_FOUND => Ok(()),
            Outcome::Status(status) => Err(http::status_error("delete endpoint", status)),
        }
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self
            .fetch(&RemoteRef::new(remote_ref.remote_key.clone()))
            .await
        {
            Ok(_) => Ok(true),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        match http::reachable(&self.config.raw_url, VALIDATE_TIMEOUT).await {
            None => Ok(ValidationResult::Unknown),
            Some(Ok(())) => Ok(ValidationResult::Ready),
            Some(Err(error)) => Err(error),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// The webhook spec's own CA provider type, as the shape every other provider uses (upstream
/// declares the same four fields twice).
fn ca_provider(provider: &WebhookCaProvider) -> CaProvider {
    CaProvider {
        r#type: provider.r#type,
        name: provider.name.clone(),
        key: provider.key.clone(),
        namespace: provider.namespace.clone(),
    }
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
