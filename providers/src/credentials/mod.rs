//! Reading the Kubernetes Secrets (and ConfigMaps) a store's configuration refers to.
//!
//! The namespace rules are upstream's, in one place ([`CredentialResolver::namespace_for`]):
//!
//! * A `SecretStore` reads from its own namespace only. A reference may repeat that namespace;
//!   naming another one is an error ("namespace should either be empty or match the namespace of
//!   the SecretStore for a namespaced SecretStore").
//! * A `ClusterSecretStore` reference must name its namespace ("cluster scope requires
//!   namespace"), except where the provider supports referent authentication: then a reference
//!   without a namespace resolves in the namespace of the ExternalSecret (or PushSecret) using
//!   the store, as upstream's `SecretKeyRef` does.
//!
//! Reads go through the small [`SecretSource`] trait so the rules are tested without a cluster;
//! [`KubeSecretSource`] is the real one. A missing Secret or key is an `InvalidConfig` error that
//! is temporary (the Secret may be created later) and never `NotFound`, which would make the
//! ExternalSecret's deletionPolicy delete the target.
//!
//! The same rules apply to ServiceAccounts a store authenticates as
//! ([`CredentialResolver::service_account_token`]): the token is requested (TokenRequest) from
//! the operator's own cluster, for a ServiceAccount in the namespace the rules give.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use kube::Api;
use kube::api::PostParams;

use crate::error::{ErrorKind, ProviderError, Result};
use crate::store::{StoreId, StoreKind};
use crate::value::{SecretMap, SecretValue};

mod memory;
mod operator_identity;

pub use memory::MemorySecretSource;
pub use operator_identity::OperatorIdentity;

/// The parts of a Kubernetes Secret providers use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubeSecret {
    /// Its labels (the webhook provider requires one).
    pub labels: BTreeMap<String, String>,
    /// Its data.
    pub data: SecretMap,
}

/// A short-lived ServiceAccount token (TokenRequest), for providers that authenticate as one.
#[derive(Debug, Clone)]
pub struct ServiceAccountToken {
    /// The bearer token (redacted when formatted).
    pub token: SecretValue,
    /// How long the token is valid from when it was issued, as the API server granted it.
    pub lifetime: Duration,
}

/// Reads Secrets and ConfigMaps; `Ok(None)` when the object does not exist.
#[async_trait]
pub trait SecretSource: Send + Sync {
    /// The Secret `namespace/name`.
    async fn secret(&self, namespace: &str, name: &str) -> Result<Option<KubeSecret>>;

    /// The data of ConfigMap `namespace/name` (for CA bundles).
    async fn config_map(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BTreeMap<String, String>>>;

    /// The annotations of ServiceAccount `namespace/name` (AWS IRSA names its role in one),
    /// `Ok(None)` when it does not exist. Sources without a cluster have no ServiceAccounts.
    async fn service_account_annotations(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BTreeMap<String, String>>> {
        let _ = namespace;
        Err(ProviderError::unsupported(format!(
            "cannot get service account {name:?}: this credential source has no cluster"
        )))
    }

    /// A token of ServiceAccount `namespace/name` for `audiences` (none: the API server's
    /// default), valid for about `lifetime`. Sources without a cluster cannot issue tokens.
    async fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
        audiences: &[String],
        lifetime: Duration,
    ) -> Result<ServiceAccountToken> {
        let _ = (namespace, audiences, lifetime);
        Err(ProviderError::unsupported(format!(
            "cannot create service account token: {name:?}: this credential source has no cluster"
        )))
    }
}

/// Whether a ClusterSecretStore reference without a namespace may fall back to the caller's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Referent {
    /// The provider supports referent auth: fall back to the caller's namespace.
    Allowed,
    /// The reference must name its namespace.
    Forbidden,
}

/// Upstream's `ValidateSecretSelector` (with [`Referent::Forbidden`]) and
/// `ValidateReferentSecretSelector` (with [`Referent::Allowed`]): the admission-time check of
/// the namespace a reference of `store` names, with upstream's message when it is refused.
pub fn check_selector_namespace(
    store: &StoreId,
    namespace: Option<&str>,
    referent: Referent,
) -> std::result::Result<(), &'static str> {
    match (store.kind, namespace, referent) {
        (StoreKind::ClusterSecretStore, None, Referent::Forbidden) => {
            Err("cluster scope requires namespace")
        }
        (StoreKind::SecretStore, Some(namespace), _)
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(
                "namespace should either be empty or match the namespace of the SecretStore \
                 for a namespaced SecretStore",
            )
        }
        _ => Ok(()),
    }
}

/// Upstream's `ValidateValueOrRef` with `RequireValueOrRef` and a referent-selector check, as
/// stores whose credentials are "a `value` or a `secretRef`" (delinea, secretserver) validate
/// each one at admission: exactly one of the two, and a reference with a name, a key and a
/// namespace the store may name.
pub fn check_value_or_ref(
    value: Option<&str>,
    selector: Option<&external_secrets_crds::meta::SecretKeySelector>,
    store: &StoreId,
) -> std::result::Result<(), String> {
    let value = value.unwrap_or_default();
    let Some(selector) = selector else {
        if value.is_empty() {
            return Err("must specify either value or reference".into());
        }
        return Ok(());
    };
    if !value.is_empty() {
        return Err("cannot specify both value and reference".into());
    }
    check_selector_namespace(store, selector.namespace.as_deref(), Referent::Allowed)?;
    if selector.name.as_deref().unwrap_or_default().is_empty() {
        return Err("must specify a secret name".into());
    }
    if selector.key.as_deref().unwrap_or_default().is_empty() {
        return Err("must specify a secret key".into());
    }
    Ok(())
}

/// Resolves a store's references under the namespace rules of that store.
#[derive(Clone)]
pub struct CredentialResolver {
    source: Arc<dyn SecretSource>,
    store: StoreId,
    caller_namespace: Option<String>,
    operator_identity: OperatorIdentity,
}

impl CredentialResolver {
    /// A resolver for `store`, used on behalf of an object in `caller_namespace` (the
    /// ExternalSecret's or PushSecret's namespace; `None` when validating the store itself).
    pub fn new(
        source: Arc<dyn SecretSource>,
        store: StoreId,
        caller_namespace: Option<String>,
    ) -> Self {
        Self {
            source,
            store,
            caller_namespace,
            operator_identity: OperatorIdentity::default(),
        }
    }

    /// The store whose references are resolved.
    pub fn store(&self) -> &StoreId {
        &self.store
    }

    /// The namespace of the object using the store, if any.
    pub fn caller_namespace(&self) -> Option<&str> {
        self.caller_namespace.as_deref()
    }

    /// The namespace a reference naming `requested` (or nothing) resolves in.
    pub fn namespace_for(&self, requested: Option<&str>, referent: Referent) -> Result<String> {
        match self.store.kind {
            StoreKind::SecretStore => {
                let own = self.store.namespace.as_deref().unwrap_or_default();
                match requested {
                    Some(namespace) if namespace != own => Err(ProviderError::invalid_config(
                        "namespace should either be empty or match the namespace of the \
                         SecretStore for a namespaced SecretStore",
                    )),
                    _ => Ok(own.to_owned()),
                }
            }
            StoreKind::ClusterSecretStore => match (requested, referent) {
                (Some(namespace), _) => Ok(namespace.to_owned()),
                (None, Referent::Allowed) => self.caller_namespace.clone().ok_or_else(|| {
                    ProviderError::invalid_config("cluster scope requires namespace")
                }),
                (None, Referent::Forbidden) => Err(ProviderError::invalid_config(
                    "cluster scope requires namespace",
                )),
            },
        }
    }

    /// The whole Secret `name`, in the namespace the rules give.
    pub async fn secret(
        &self,
        name: &str,
        namespace: Option<&str>,
        referent: Referent,
    ) -> Result<KubeSecret> {
        let namespace = self.namespace_for(namespace, referent)?;
        self.source.secret(&namespace, name).await?.ok_or_else(|| {
            missing(format!(
                "cannot get Kubernetes secret {name:?} from namespace {namespace:?}: not found"
            ))
        })
    }

    /// One key of a Secret (a `SecretKeySelector`).
    pub async fn secret_key(
        &self,
        name: &str,
        key: &str,
        namespace: Option<&str>,
        referent: Referent,
    ) -> Result<SecretValue> {
        let mut secret = self.secret(name, namespace, referent).await?;
        secret
            .data
            .remove(key)
            .ok_or_else(|| missing(format!("cannot find secret data for key: {key:?}")))
    }

    /// The key a `SecretKeySelector` names (missing name or key: empty, which fails as a Secret
    /// that does not exist would), under the namespace rules of `referent`.
    pub async fn selected_key(
        &self,
        selector: &external_secrets_crds::meta::SecretKeySelector,
        referent: Referent,
    ) -> Result<SecretValue> {
        self.secret_key(
            selector.name.as_deref().unwrap_or_default(),
            selector.key.as_deref().unwrap_or_default(),
            selector.namespace.as_deref(),
            referent,
        )
        .await
    }

    /// A credential given inline (`value`) or by a Secret key (`selector`, which must name its
    /// namespace in a ClusterSecretStore): the "value or secretRef" fields of delinea and
    /// secretserver.
    pub async fn value_or_ref(
        &self,
        value: Option<&str>,
        selector: Option<&external_secrets_crds::meta::SecretKeySelector>,
    ) -> Result<SecretValue> {
        match selector {
            None => Ok(SecretValue::from(value.unwrap_or_default().to_owned())),
            Some(selector) => self.selected_key(selector, Referent::Forbidden).await,
        }
    }

    /// One key of a ConfigMap.
    pub async fn config_map_key(
        &self,
        name: &str,
        key: &str,
        namespace: Option<&str>,
        referent: Referent,
    ) -> Result<String> {
        let namespace = self.namespace_for(namespace, referent)?;
        let mut data = self.source.config_map(&namespace, name).await?.ok_or_else(|| {
            missing(format!(
                "cannot get Kubernetes configmap {name:?} from namespace {namespace:?}: not found"
            ))
        })?;
        data.remove(key)
            .ok_or_else(|| missing(format!("cannot find configmap data for key: {key:?}")))
    }

    /// The annotations of ServiceAccount `name`, in the namespace the rules give; a missing
    /// ServiceAccount is a configuration error worth retrying.
    pub async fn service_account_annotations(
        &self,
        name: &str,
        namespace: Option<&str>,
        referent: Referent,
    ) -> Result<BTreeMap<String, String>> {
        let namespace = self.namespace_for(namespace, referent)?;
        self.source
            .service_account_annotations(&namespace, name)
            .await?
            .ok_or_else(|| {
                missing(format!(
                    "cannot get service account {name:?} from namespace {namespace:?}: not found"
                ))
            })
    }

    /// A token of ServiceAccount `name`, in the namespace the rules give (`namespace` as
    /// written in the store), for `audiences`.
    pub async fn service_account_token(
        &self,
        name: &str,
        namespace: Option<&str>,
        audiences: &[String],
        lifetime: Duration,
        referent: Referent,
    ) -> Result<ServiceAccountToken> {
        let namespace = self.namespace_for(namespace, referent)?;
        self.source
            .service_account_token(&namespace, name, audiences, lifetime)
            .await
    }
}

/// A reference to something that does not exist (yet): a configuration error worth retrying.
fn missing(message: String) -> ProviderError {
    ProviderError::invalid_config(message).with_temporary(true)
}

/// Reads through the Kubernetes API.
#[derive(Clone)]
pub struct KubeSecretSource {
    client: kube::Client,
}

impl KubeSecretSource {
    /// Reads with `client` (the operator's own identity).
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }
}

#[async_trait]
impl SecretSource for KubeSecretSource {
    async fn secret(&self, namespace: &str, name: &str) -> Result<Option<KubeSecret>> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        let secret = api
            .get_opt(name)
            .await
            .map_err(|error| map_kube_error(error, "secret", namespace, name))?;
        Ok(secret.map(|secret| KubeSecret {
            labels: secret.metadata.labels.unwrap_or_default(),
            data: secret
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(key, value)| (key, SecretValue::from(value)))
                .collect(),
        }))
    }

    async fn config_map(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BTreeMap<String, String>>> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), namespace);
        let config_map = api
            .get_opt(name)
            .await
            .map_err(|error| map_kube_error(error, "configmap", namespace, name))?;
        Ok(config_map.map(|config_map| config_map.data.unwrap_or_default()))
    }

    async fn service_account_annotations(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BTreeMap<String, String>>> {
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), namespace);
        let account = api
            .get_opt(name)
            .await
            .map_err(|error| map_kube_error(error, "service account", namespace, name))?;
        Ok(account.map(|account| account.metadata.annotations.unwrap_or_default()))
    }

    async fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
        audiences: &[String],
        lifetime: Duration,
    ) -> Result<ServiceAccountToken> {
        let requested = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX);
        let request = TokenRequest {
            spec: TokenRequestSpec {
                audiences: audiences.to_vec(),
                expiration_seconds: Some(requested),
                bound_object_ref: None,
            },
            ..TokenRequest::default()
        };
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), namespace);
        let response = api
            .create_token_request(name, &PostParams::default(), &request)
            .await
            .map_err(|error| map_token_error(error, namespace, name))?;
        let token = response
            .status
            .map(|status| status.token)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| {
                ProviderError::invalid_data(format!(
                    "cannot create service account token: {name:?}: the response has no token"
                ))
            })?;
        let granted = response.spec.expiration_seconds.unwrap_or(requested);
        Ok(ServiceAccountToken {
            token: SecretValue::from(token),
            lifetime: Duration::from_secs(u64::try_from(granted).unwrap_or_default()),
        })
    }
}

/// Maps a failed TokenRequest: a missing ServiceAccount is a configuration error worth retrying
/// (it may be created later), never `NotFound`.
fn map_token_error(error: kube::Error, namespace: &str, name: &str) -> ProviderError {
    match &error {
        kube::Error::Api(status) if status.code == 404 => missing(format!(
            "cannot create service account token: service account {name:?} not found in \
             namespace {namespace:?}"
        )),
        _ => map_kube_error(error, "service account", namespace, name)
            .context("cannot create service account token"),
    }
}

/// Maps a Kubernetes API error on reading `namespace/name` to a provider error.
pub(crate) fn map_kube_error(
    error: kube::Error,
    what: &str,
    namespace: &str,
    name: &str,
) -> ProviderError {
    let message = format!("cannot get Kubernetes {what} {name:?} from namespace {namespace:?}");
    match &error {
        kube::Error::Api(status) => {
            let kind = match status.code {
                401 | 403 => ErrorKind::PermissionDenied,
                429 => ErrorKind::RateLimited,
                _ => ErrorKind::Unavailable,
            };
            let detail = status.message.clone();
            let temporary = kind != ErrorKind::PermissionDenied;
            ProviderError::new(kind, format!("{message}: {detail}")).with_temporary(temporary)
        }
        _ => ProviderError::unavailable(format!("{message}: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Arc<dyn SecretSource> {
        Arc::new(
            MemorySecretSource::default()
                .with_secret("store-ns", "creds", &[], &[("token", "s3cret")])
                .with_secret("other-ns", "creds", &[], &[("token", "other")])
                .with_secret("caller-ns", "creds", &[], &[("token", "caller")])
                .with_config_map("store-ns", "ca", &[("ca.crt", "PEM")]),
        )
    }

    fn namespaced() -> CredentialResolver {
        let store = StoreId::secret_store("store-ns", "store");
        CredentialResolver::new(source(), store, Some("store-ns".into()))
    }

    fn cluster(caller: Option<&str>) -> CredentialResolver {
        let store = StoreId::cluster_secret_store("store");
        CredentialResolver::new(source(), store, caller.map(Into::into))
    }

    async fn token(
        resolver: &CredentialResolver,
        namespace: Option<&str>,
        referent: Referent,
    ) -> Result<String> {
        let value = resolver
            .secret_key("creds", "token", namespace, referent)
            .await?;
        Ok(value.expose_str().unwrap().to_owned())
    }

    #[tokio::test]
    async fn a_secret_store_reads_only_its_own_namespace() {
        let resolver = namespaced();
        assert_eq!(
            token(&resolver, None, Referent::Forbidden).await.unwrap(),
            "s3cret"
        );
        assert_eq!(
            token(&resolver, Some("store-ns"), Referent::Allowed)
                .await
                .unwrap(),
            "s3cret"
        );
        let error = token(&resolver, Some("other-ns"), Referent::Allowed)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
        assert!(
            error
                .message()
                .starts_with("namespace should either be empty or match")
        );
    }

    #[tokio::test]
    async fn a_cluster_store_needs_a_namespace_unless_referent_auth_applies() {
        let resolver = cluster(Some("caller-ns"));
        assert_eq!(
            token(&resolver, Some("other-ns"), Referent::Forbidden)
                .await
                .unwrap(),
            "other"
        );
        let error = token(&resolver, None, Referent::Forbidden)
            .await
            .unwrap_err();
        assert_eq!(error.message(), "cluster scope requires namespace");
        assert_eq!(
            token(&resolver, None, Referent::Allowed).await.unwrap(),
            "caller"
        );

        let validating = cluster(None);
        let error = token(&validating, None, Referent::Allowed)
            .await
            .unwrap_err();
        assert_eq!(error.message(), "cluster scope requires namespace");
    }

    #[tokio::test]
    async fn missing_secrets_and_keys_are_temporary_config_errors_never_not_found() {
        let resolver = namespaced();
        let error = resolver
            .secret_key("absent", "token", None, Referent::Forbidden)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
        assert!(error.is_temporary());
        assert_eq!(
            error.message(),
            r#"cannot get Kubernetes secret "absent" from namespace "store-ns": not found"#
        );
        let error = resolver
            .secret_key("creds", "nope", None, Referent::Forbidden)
            .await
            .unwrap_err();
        assert_eq!(
            error.message(),
            r#"cannot find secret data for key: "nope""#
        );
        assert!(!error.is_not_found());
    }

    #[tokio::test]
    async fn config_maps_follow_the_same_rules() {
        let resolver = namespaced();
        let pem = resolver
            .config_map_key("ca", "ca.crt", None, Referent::Forbidden)
            .await
            .unwrap();
        assert_eq!(pem, "PEM");
        assert!(
            resolver
                .config_map_key("ca", "ca.crt", Some("other-ns"), Referent::Forbidden)
                .await
                .is_err()
        );
    }
}
