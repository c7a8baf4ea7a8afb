//! The `vault` provider: secrets of a HashiCorp Vault (or OpenBao) KV engine.
//!
//! Behaviour follows upstream's vault provider:
//!
//! * The store points at the server `server` (its certificate checked against `caBundle` /
//!   `caProvider`, system roots otherwise; a client certificate from `tls`, or from `auth.cert`),
//!   in the Vault namespace `namespace`, with the extra `headers`. `path` is the KV mount and
//!   `version` (default v2) its engine version; see the `paths` module for how keys become API
//!   paths.
//! * Authentication: see the `auth` module for the methods (token, AppRole, Kubernetes, LDAP,
//!   userpass, JWT, cert; AWS IAM and GCP are not supported) and the `session` module for the
//!   token's life. A ClusterSecretStore resolves credentials without a namespace in the
//!   namespace of the object using it (referent auth); validating such a store without that
//!   namespace is `Unknown`, as upstream.
//! * Reads: the key is the secret's path, `version` a KV v2 version, the property a key or
//!   gjson-style path of its data; `metadataPolicy: Fetch` reads the KV v2 metadata instead (see
//!   the `read` module). A missing secret (or deleted current version) is `NotFound`.
//! * Find: see the `find` module. Push and delete: see the `push` module.
//! * The `VaultDynamicSecret` generator's calls: see the `dynamic` module.
//! * `secret_exists`: the secret exists and, with a property, has a non-null value there.
//! * `validate`: a login token is proof of valid credentials; a static token is looked up
//!   (`lookup-self`). Capabilities: ReadWrite.
//! * `readYourWrites` (or `forwardInconsistent`) sends back the replication states seen (see the
//!   `consistency` module); with both, requests also ask standbys to forward to the active node.
//!
//! Differences from upstream, besides those in the submodules: one login per client lifetime
//! with renewal, rather than one per reconcile; a missing property is `NotFound` (upstream: a
//! plain error); Kubernetes auth does not fall back to the token Secrets of a ServiceAccount
//! (removed from Kubernetes in 1.24); the Vault client does not retry by itself (the store's
//! retry settings apply to every call instead).

mod auth;
mod config;
mod consistency;
mod dynamic;
mod find;
mod http;
mod kv;
mod paths;
mod push;
mod read;
mod session;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::VaultProvider;

use self::http::{Settings, Transport};
use self::kv::Engine;
use self::paths::Kv;
use self::session::Session;
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::credentials::CredentialResolver;
use crate::error::{ErrorKind, ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::{StoreId, StoreKind};
use crate::value::{SecretMap, SecretValue};

pub use self::config::validate_store;
pub use self::dynamic::generate as generate_dynamic_secret;

/// The `vault` backend.
#[derive(Debug, Clone, Copy)]
pub struct Vault;

#[async_trait]
impl Provider for Vault {
    type Spec = VaultProvider;
    const NAME: &'static str = "vault";

    fn validate_store(&self, spec: &VaultProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &VaultProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        Ok(Arc::new(VaultClient::new(spec, context.credentials).await?))
    }
}

/// A client of one vault store.
pub struct VaultClient {
    /// `None` for a ClusterSecretStore with referent auth validated without a caller: it cannot
    /// know whose credentials to use.
    engine: Option<Engine>,
    check_and_set: bool,
}

impl VaultClient {
    /// Builds the client and authenticates, so a broken configuration fails here.
    pub async fn new(spec: &VaultProvider, credentials: CredentialResolver) -> Result<Self> {
        validate_store(spec, credentials.store())?;
        let referent_without_caller = credentials.store().kind == StoreKind::ClusterSecretStore
            && credentials.caller_namespace().is_none()
            && config::is_referent(spec);
        let engine = if referent_without_caller {
            None
        } else {
            Some(connect(spec, credentials).await?)
        };
        Ok(Self {
            engine,
            check_and_set: config::check_and_set(spec),
        })
    }

    fn engine(&self) -> Result<&Engine> {
        self.engine.as_ref().ok_or_else(|| {
            ProviderError::invalid_config(
                "cluster scope requires namespace: this store resolves its credentials in the \
                 namespace of the object using it",
            )
        })
    }

    /// The document a read addresses: the secret's data, or its metadata.
    async fn document(&self, remote_ref: &RemoteRef) -> Result<kv::Document> {
        let engine = self.engine()?;
        let key = &remote_ref.key;
        let missing = || ProviderError::not_found(format!("secret {key:?} not found in vault"));
        if remote_ref.metadata_policy == MetadataPolicy::Fetch {
            if !engine.kv.is_v2() {
                return Err(ProviderError::invalid_request(
                    "cannot perform metadata fetch operations with kv version v1",
                ));
            }
            let metadata = engine.metadata(key).await?.ok_or_else(missing)?;
            return read::metadata_document(&metadata.entries);
        }
        engine
            .read(key, remote_ref.version.as_deref())
            .await?
            .ok_or_else(missing)
    }
}

/// Builds the transport (reading CA and client certificate) and authenticates.
async fn connect(spec: &VaultProvider, credentials: CredentialResolver) -> Result<Engine> {
    let ca_pem = crate::ca::ca_bundle(
        spec.ca_bundle.as_ref(),
        spec.ca_provider.as_ref(),
        &credentials,
    )
    .await?;
    let identity = client_identity(spec, &credentials).await?;
    let read_your_writes = spec.read_your_writes.unwrap_or(false);
    let forward_inconsistent = spec.forward_inconsistent.unwrap_or(false);
    let transport = Transport::new(Settings {
        server: config::server_url(spec)?,
        ca_pem,
        identity,
        headers: config::headers(spec)?,
        read_your_writes: read_your_writes || forward_inconsistent,
        forward_inconsistent: read_your_writes && forward_inconsistent,
    })?;
    let session = Session::open(
        transport,
        spec.auth.as_ref(),
        credentials,
        spec.namespace.clone(),
    )
    .await?;
    Ok(Engine {
        session,
        kv: Kv {
            mount: spec.path.clone(),
            version: spec.version,
        },
    })
}

/// The client certificate and key: `auth.cert`'s if that is the auth method (upstream lets it
/// replace `tls`'s), otherwise `tls`'s (keys `tls.crt` and `tls.key` by default).
async fn client_identity(
    spec: &VaultProvider,
    credentials: &CredentialResolver,
) -> Result<Option<(Vec<u8>, SecretValue)>> {
    let (certificate, key, [default_certificate, default_key]) =
        match config::AuthMethod::of(spec.auth.as_ref())? {
            config::AuthMethod::Cert(cert) => (&cert.client_cert, &cert.secret_ref, [None, None]),
            _ => match &spec.tls {
                Some(tls) => (
                    &tls.cert_secret_ref,
                    &tls.key_secret_ref,
                    [Some("tls.crt"), Some("tls.key")],
                ),
                None => return Ok(None),
            },
        };
    let (Some(certificate), Some(key)) = (certificate, key) else {
        return Ok(None);
    };
    let certificate = auth::selected_secret(credentials, certificate, default_certificate).await?;
    let key = auth::selected_secret(credentials, key, default_key).await?;
    Ok(Some((certificate.into_bytes(), key)))
}

#[async_trait]
impl SecretsClient for VaultClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let document = self.document(remote_ref).await?;
        let value = read::select(&document, remote_ref.property.as_deref())?;
        Ok(SecretValue::new(value.unwrap_or_default()))
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.get_secret(remote_ref).await?;
        read::to_map(value.expose())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        find::find(self.engine()?, find).await
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        push::push(self.engine()?, request, self.check_and_set).await
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        push::delete(self.engine()?, remote_ref, self.check_and_set).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let engine = self.engine()?;
        let Some(document) = engine.read(&remote_ref.remote_key, None).await? else {
            return Ok(false);
        };
        match read::select(&document, remote_ref.property.as_deref()) {
            Ok(value) => Ok(value.is_some()),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        let Some(engine) = &self.engine else {
            // Referent auth: whose credentials is only known per ExternalSecret.
            return Ok(ValidationResult::Unknown);
        };
        engine.session.validate().await?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        match &self.engine {
            Some(engine) => engine.session.close().await,
            None => Ok(()),
        }
    }
}
