//! The `kubernetes` provider: Secrets of a namespace of a (possibly other) Kubernetes cluster.
//!
//! Behaviour follows upstream's kubernetes provider:
//!
//! * The store points at one namespace (`remoteNamespace`, default `default`) of the API server
//!   at `server.url`, whose certificate is checked against `server.caBundle` / `caProvider`
//!   (system roots when neither is set). Authentication: `auth.token`, `auth.serviceAccount`
//!   (TokenRequest in the operator's cluster), `auth.cert`, or `authRef` (a kubeconfig); see
//!   the `connect` module. A ClusterSecretStore resolves credentials without a namespace in the
//!   namespace of the object using it (referent auth); validating such a store without that
//!   namespace is `Unknown`, as upstream.
//! * Reads: the key is the Secret's name, the property a data key (see the `read` module for
//!   JSON paths, metadata and maps). A missing Secret is `NotFound`.
//! * Find: by tags (labels) or by name regular expression; see the `find` module.
//! * Push and delete: see the `push` and `metadata` modules. A PushSecretMetadata may override
//!   the namespace pushed to, for ClusterSecretStores only. Updates carry the read
//!   resourceVersion, so a concurrent change fails (temporarily) instead of being overwritten.
//! * `secret_exists`: the Secret exists and, with a property, has that key.
//! * `validate`: see the `validate` module. Capabilities: ReadWrite.
//!
//! Differences from upstream, besides those documented in the submodules: a missing property
//! is `NotFound` (upstream: a plain error); the client and its ServiceAccount token are kept
//! between reconciles and the token is renewed before it expires; kubeconfigs of `authRef` must
//! not run commands or read local files.

pub(crate) mod config;
mod connect;
pub(crate) mod error;
mod find;
mod metadata;
mod push;
mod read;
pub(crate) mod session;
mod validate;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::KubernetesProvider;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};

use self::error::map_error;
use self::find::Query;
use self::push::Deletion;
use self::session::Session;
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::credentials::CredentialResolver;
use crate::error::{ErrorKind, ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::{StoreId, StoreKind};
use crate::value::{SecretMap, SecretValue};

pub use self::config::validate_store;

/// The `kubernetes` backend.
#[derive(Debug, Clone, Copy)]
pub struct Kubernetes;

#[async_trait]
impl Provider for Kubernetes {
    type Spec = KubernetesProvider;
    const NAME: &'static str = "kubernetes";

    fn validate_store(&self, spec: &KubernetesProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &KubernetesProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        Ok(Arc::new(
            KubernetesClient::new(spec, context.credentials).await?,
        ))
    }
}

/// A client of one kubernetes store.
pub struct KubernetesClient {
    /// `None` for a ClusterSecretStore with referent auth validated without a caller: it cannot
    /// know whose credentials to use.
    session: Option<Session>,
    remote_namespace: String,
    store_kind: StoreKind,
}

impl KubernetesClient {
    /// Builds the client and connects (reading credentials, requesting a token), so a broken
    /// configuration fails here.
    pub async fn new(spec: &KubernetesProvider, credentials: CredentialResolver) -> Result<Self> {
        let store_kind = credentials.store().kind;
        let remote_namespace = spec.remote_namespace.clone();
        let referent_without_caller = store_kind == StoreKind::ClusterSecretStore
            && credentials.caller_namespace().is_none()
            && config::is_referent(spec);
        let session = if referent_without_caller {
            None
        } else {
            Some(Session::open(spec, credentials).await?)
        };
        Ok(Self {
            session,
            remote_namespace,
            store_kind,
        })
    }

    async fn kube_client(&self) -> Result<kube::Client> {
        match &self.session {
            Some(session) => session.client().await,
            None => Err(ProviderError::invalid_config(
                "cluster scope requires namespace: this store resolves its credentials in the \
                 namespace of the object using it",
            )),
        }
    }

    async fn secrets(&self, namespace: &str) -> Result<Api<Secret>> {
        Ok(Api::namespaced(self.kube_client().await?, namespace))
    }

    /// The Secret `name` of the remote namespace, `None` if it does not exist.
    async fn get(&self, namespace: &str, name: &str) -> Result<Option<Secret>> {
        self.secrets(namespace)
            .await?
            .get_opt(name)
            .await
            .map_err(|error| map_error(error, &describe("get", namespace, name)))
    }

    /// Like [`Self::get`], a missing Secret being `NotFound`.
    async fn get_existing(&self, name: &str) -> Result<Secret> {
        self.get(&self.remote_namespace, name)
            .await?
            .ok_or_else(|| {
                ProviderError::not_found(format!(
                    "secret {name:?} not found in namespace {:?}",
                    self.remote_namespace
                ))
            })
    }

    /// The namespace a push goes to: the store's, or the metadata's override.
    fn push_namespace(&self, push_metadata: Option<&metadata::PushMetadata>) -> Result<String> {
        match push_metadata.map(|push| push.remote_namespace.as_str()) {
            Some(namespace) if !namespace.is_empty() => {
                if self.store_kind != StoreKind::ClusterSecretStore {
                    return Err(ProviderError::invalid_request(
                        "remoteNamespace override is only supported with ClusterSecretStore",
                    ));
                }
                Ok(namespace.to_owned())
            }
            _ => Ok(self.remote_namespace.clone()),
        }
    }
}

fn describe(verb: &str, namespace: &str, name: &str) -> String {
    format!("failed to {verb} secret {name:?} in namespace {namespace:?}")
}

#[async_trait]
impl SecretsClient for KubernetesClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let secret = self.get_existing(&remote_ref.key).await?;
        read::secret_value(&secret, remote_ref)
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let secret = self.get_existing(&remote_ref.key).await?;
        read::secret_map(&secret, remote_ref)
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let query = Query::of(find)?;
        let params = ListParams::default().labels(query.selector());
        let listed = self
            .secrets(&self.remote_namespace)
            .await?
            .list(&params)
            .await
            .map_err(|error| {
                map_error(
                    error,
                    &format!(
                        "unable to list secrets in namespace {:?}",
                        self.remote_namespace
                    ),
                )
            })?;
        query.collect(&listed.items, find)
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        push::check_request(request)?;
        let push_metadata = metadata::parse(request.metadata.as_ref())?;
        let namespace = self.push_namespace(push_metadata.as_ref())?;
        let name = &request.remote_ref.remote_key;
        if name.is_empty() {
            return Err(ProviderError::invalid_request("remote key must be defined"));
        }
        let existing = self.get(&namespace, name).await?;
        let desired = push::desired_secret(
            existing.as_ref(),
            &namespace,
            request,
            push_metadata.as_ref(),
        )?;
        let api = self.secrets(&namespace).await?;
        match existing {
            None => api
                .create(&PostParams::default(), &desired)
                .await
                .map(drop)
                .map_err(|error| map_error(error, &describe("create", &namespace, name))),
            Some(existing) if push::unchanged(&existing, &desired) => Ok(()),
            Some(_) => api
                .replace(name, &PostParams::default(), &desired)
                .await
                .map(drop)
                .map_err(|error| map_error(error, &describe("update", &namespace, name))),
        }
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let namespace = &self.remote_namespace;
        let name = &remote_ref.remote_key;
        let Some(existing) = self.get(namespace, name).await? else {
            return Ok(());
        };
        let api = self.secrets(namespace).await?;
        match push::deletion(&existing, remote_ref.property.as_deref()) {
            Deletion::Nothing => Ok(()),
            Deletion::Update(updated) => api
                .replace(name, &PostParams::default(), &updated)
                .await
                .map(drop)
                .map_err(|error| map_error(error, &describe("update", namespace, name))),
            Deletion::Delete => match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => Ok(()),
                Err(error) => match map_error(error, &describe("delete", namespace, name)) {
                    gone if gone.kind() == ErrorKind::NotFound => Ok(()),
                    other => Err(other),
                },
            },
        }
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let existing = self
            .get(&self.remote_namespace, &remote_ref.remote_key)
            .await?;
        Ok(match (existing, remote_ref.property.as_deref()) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(secret), Some(property)) => {
                secret.data.is_some_and(|data| data.contains_key(property))
            }
        })
    }

    async fn validate(&self) -> Result<ValidationResult> {
        if self.session.is_none() {
            // Referent auth: whose credentials is only known per ExternalSecret.
            return Ok(ValidationResult::Unknown);
        }
        validate::validate(self.kube_client().await?, &self.remote_namespace).await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
