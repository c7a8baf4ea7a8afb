//! The `crd` provider: arbitrary Kubernetes resources (custom resources, or core kinds such as
//! ConfigMap with `group: ""`; never core Secrets) read as secrets. Read-only.
//!
//! Behaviour follows upstream's crd provider:
//!
//! * Connection: `server`, `auth` and `authRef` exactly as the kubernetes provider (its session,
//!   checks and error mapping are shared). A ClusterSecretStore with referent auth and no caller
//!   namespace gets a client that only validates (`Unknown`).
//! * The client resolves `resource` (group, version, kind) through discovery once, and asks a
//!   SelfSubjectAccessReview for `get` (for `list` before each find).
//! * Keys: see [`config::parse_key`]. A SecretStore reads its own namespace; a
//!   ClusterSecretStore reads `namespace/name` for namespaced kinds and `name` for cluster-scoped
//!   ones.
//! * Values: the whole object as JSON, or the gjson `property` path in it; maps are the members
//!   of that JSON object. A missing object or property is `NotFound`.
//! * Find: by name regular expression over the listed objects (a SecretStore lists its
//!   namespace; a ClusterSecretStore over a namespaced kind lists all namespaces and names
//!   results `namespace/name`); each result is the whole object. Tags and path are ignored.
//! * `whitelist.rules` gate every read, find and `secret_exists` (see the `whitelist` module).
//!
//! Differences from upstream: a missing property is `NotFound` (upstream: a plain error), as in
//! our kubernetes provider; a read the whitelist refuses is `PermissionDenied` (upstream: a
//! plain error); an API server without access reviews (404) skips the preflight. As upstream's
//! code (not its API doc), a store with inline `auth` and no `server` fails with "no server URL
//! provided": it does not fall back to the in-cluster API.

mod config;
mod resource;
mod whitelist;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::CrdProvider;
use kube::Api;
use kube::api::ListParams;
use kube::core::DynamicObject;

use self::config::{Key, parse_key};
use self::resource::Target;
use self::whitelist::Whitelist;
use crate::backends::kubernetes::config::is_referent;
use crate::backends::kubernetes::error::map_error;
use crate::backends::kubernetes::session::Session;
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult, not_implemented};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef, convert_keys};
use crate::store::{StoreId, StoreKind};
use crate::value::{SecretMap, SecretValue};

/// How many objects one list page asks for.
const PAGE_SIZE: u32 = 500;
/// How many objects a find reads at most, so a huge collection cannot exhaust memory.
const MAX_FOUND: usize = 10_000;

/// The `crd` backend.
#[derive(Debug, Clone, Copy)]
pub struct Crd;

#[async_trait]
impl Provider for Crd {
    type Spec = CrdProvider;
    const NAME: &'static str = "crd";

    fn capabilities(&self, _spec: &CrdProvider) -> Capabilities {
        Capabilities::ReadOnly
    }

    fn validate_store(&self, spec: &CrdProvider, store: &StoreId) -> Result<()> {
        config::validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &CrdProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        Ok(Arc::new(CrdClient::new(spec, context).await?))
    }
}

/// What a connected client holds.
struct Connected {
    session: Session,
    target: Target,
    /// The namespace `list` permission is checked in (empty: cluster-wide).
    access_namespace: String,
}

/// A client of one crd store.
pub struct CrdClient {
    /// `None` for a referent ClusterSecretStore validated without a caller.
    connected: Option<Connected>,
    store_kind: StoreKind,
    /// The store's namespace (SecretStores only).
    namespace: String,
    kind: String,
    whitelist: Whitelist,
}

impl CrdClient {
    async fn new(spec: &CrdProvider, context: ClientContext<'_>) -> Result<Self> {
        let store_kind = context.store.kind;
        let namespace = context.store.namespace.clone().unwrap_or_default();
        let whitelist = Whitelist::compile(spec.whitelist.as_ref())?;
        let connection = config::connection(spec);
        let referent_without_caller = store_kind == StoreKind::ClusterSecretStore
            && context.credentials.caller_namespace().is_none()
            && is_referent(&connection);
        let connected = if referent_without_caller {
            None
        } else {
            let session = Session::open(&connection, context.credentials)
                .await
                .map_err(|error| error.context("crd: failed to prepare api connection"))?;
            let client = session.client().await?;
            let target = resource::discover(&client, &spec.resource).await?;
            let access_namespace = if target.namespaced && store_kind == StoreKind::SecretStore {
                namespace.clone()
            } else {
                String::new()
            };
            resource::check_access(&client, &target, &access_namespace, "get").await?;
            Some(Connected {
                session,
                target,
                access_namespace,
            })
        };
        Ok(Self {
            connected,
            store_kind,
            namespace,
            kind: spec.resource.kind.clone(),
            whitelist,
        })
    }

    fn connected(&self) -> Result<&Connected> {
        self.connected.as_ref().ok_or_else(|| {
            ProviderError::invalid_config(
                "crd: client has no active connection; a referent ClusterSecretStore is \
                 resolved per-ExternalSecret at reconcile",
            )
        })
    }

    /// The object `key` names, after the whitelist allowed reading it with `property`.
    async fn object(&self, key: &str, property: Option<&str>) -> Result<DynamicObject> {
        let connected = self.connected()?;
        let Key { name, namespace } = parse_key(self.store_kind, key)?;
        if !self.whitelist.allows(
            self.store_kind,
            name,
            namespace.unwrap_or_default(),
            property,
        ) {
            return Err(ProviderError::permission_denied(format!(
                "crd: request for {key:?} denied by whitelist rules"
            )));
        }
        let client = connected.session.client().await?;
        let resource = &connected.target.api_resource;
        let kind = &self.kind;
        let (api, described): (Api<DynamicObject>, String) = if connected.target.namespaced {
            let namespace = match (namespace, self.store_kind) {
                (Some(namespace), _) => namespace,
                (None, StoreKind::SecretStore) => self.namespace.as_str(),
                (None, StoreKind::ClusterSecretStore) => {
                    return Err(ProviderError::invalid_request(format!(
                        "crd: namespaced resource kind {kind:?} requires remoteRef.key in the \
                         form namespace/objectName when using ClusterSecretStore"
                    )));
                }
            };
            (
                Api::namespaced_with(client, namespace, resource),
                format!("{namespace}/{name}"),
            )
        } else {
            if namespace.is_some() {
                return Err(ProviderError::invalid_request(format!(
                    "crd: cluster-scoped resource kind {kind:?} does not allow '/' in \
                     remoteRef.key (use object name only)"
                )));
            }
            (Api::all_with(client, resource), name.to_owned())
        };
        api.get_opt(name)
            .await
            .map_err(|error| map_error(error, &format!("crd: failed to get {kind} {described}")))?
            .ok_or_else(|| ProviderError::not_found(format!("crd: {kind} {described} not found")))
    }

    /// Every object a find sees, paged and bounded.
    async fn list(&self, connected: &Connected) -> Result<Vec<DynamicObject>> {
        let client = connected.session.client().await?;
        let resource = &connected.target.api_resource;
        let api: Api<DynamicObject> =
            if connected.target.namespaced && self.store_kind == StoreKind::SecretStore {
                Api::namespaced_with(client, &self.namespace, resource)
            } else {
                Api::all_with(client, resource)
            };
        let mut objects = Vec::new();
        let mut params = ListParams::default().limit(PAGE_SIZE);
        loop {
            let page = api
                .list(&params)
                .await
                .map_err(|error| map_error(error, &format!("crd: failed to list {}", self.kind)))?;
            if objects.len() + page.items.len() > MAX_FOUND {
                return Err(ProviderError::invalid_request(format!(
                    "crd: more than {MAX_FOUND} {} objects to search",
                    self.kind
                )));
            }
            objects.extend(page.items);
            match page.metadata.continue_ {
                Some(token) if !token.is_empty() => params = params.continue_token(&token),
                _ => return Ok(objects),
            }
        }
    }
}

#[async_trait]
impl SecretsClient for CrdClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let property = remote_ref.property.as_deref();
        let object = self.object(&remote_ref.key, property).await?;
        resource::value(&object, property)
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        self.get_secret(remote_ref).await.map(resource::value_map)
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let connected = self.connected()?;
        resource::check_access(
            &connected.session.client().await?,
            &connected.target,
            &connected.access_namespace,
            "list",
        )
        .await?;
        let matcher = match find.name.as_ref().filter(|name| !name.regexp.is_empty()) {
            Some(name) => Some(regex::Regex::new(&name.regexp).map_err(|error| {
                ProviderError::invalid_request(format!(
                    "crd: invalid name pattern {:?}: {error}",
                    name.regexp
                ))
            })?),
            None => None,
        };
        let qualified =
            connected.target.namespaced && self.store_kind == StoreKind::ClusterSecretStore;
        let mut found = SecretMap::new();
        for object in self.list(connected).await? {
            let name = object.metadata.name.as_deref().unwrap_or_default();
            let namespace = object.metadata.namespace.as_deref().unwrap_or_default();
            let key = if qualified {
                format!("{namespace}/{name}")
            } else {
                name.to_owned()
            };
            if matcher
                .as_ref()
                .is_some_and(|matcher| !matcher.is_match(&key))
                || !self
                    .whitelist
                    .allows(self.store_kind, name, namespace, None)
            {
                continue;
            }
            found.insert(key, resource::value(&object, None)?);
        }
        convert_keys(find.conversion_strategy, found)
    }

    async fn push_secret(&self, _request: &PushRequest) -> Result<()> {
        Err(not_implemented(Crd::NAME, "PushSecret"))
    }

    async fn delete_secret(&self, _remote_ref: &PushRemoteRef) -> Result<()> {
        Err(not_implemented(Crd::NAME, "DeleteSecret"))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self
            .object(&remote_ref.remote_key, remote_ref.property.as_deref())
            .await
        {
            Ok(_) => Ok(true),
            Err(error) if error.is_not_found() => Ok(false),
            Err(error) => Err(error),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        Ok(match self.connected {
            Some(_) => ValidationResult::Ready,
            None => ValidationResult::Unknown,
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
