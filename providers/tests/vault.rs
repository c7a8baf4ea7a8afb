//! The vault provider against a real OpenBao server (one per test binary, see
//! `support::vault`), each test in mounts of its own: KV v1 and v2 reads, TLS and namespaces
//! (`reads`), the headers it sends and how answers map to errors (`transport`), push, delete and
//! find (`writes`), every auth method with the token's life (`auth`), the read-only
//! `openBao` provider the vault client also serves (`openbao`), the `VaultDynamicSecret`
//! generator's calls (`dynamic`), and the `gcp` auth method's login (`gcp_auth`).

#![cfg(feature = "vault")]

mod support;

#[path = "vault/auth.rs"]
mod auth;
#[path = "vault/dynamic.rs"]
mod dynamic;
#[cfg(feature = "gcpsm")]
#[path = "vault/gcp_auth.rs"]
mod gcp_auth;
#[path = "vault/openbao.rs"]
mod openbao;
#[path = "vault/reads.rs"]
mod reads;
#[path = "vault/transport.rs"]
mod transport;
#[path = "vault/writes.rs"]
mod writes;

use std::sync::Arc;

use external_secrets_crds::v1::{
    ClusterSecretStore, ClusterSecretStoreSpec, SecretStore, SecretStoreProvider, SecretStoreSpec,
    VaultProvider,
};
use external_secrets_providers::credentials::SecretSource;
use external_secrets_providers::{ProviderError, Registry, SecretValue, SharedClient, StoreRef};
use support::vault::{BaoServer, ROOT_TOKEN, token_auth, token_source};
use support::{NAMESPACE, secret_store, unique_name};

/// The bytes of a value as text.
fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

/// A SecretStore (in [`NAMESPACE`]) with `provider`.
fn store_of(provider: VaultProvider) -> SecretStore {
    secret_store(
        &unique_name("vault"),
        SecretStoreProvider {
            vault: Some(Box::new(provider)),
            ..SecretStoreProvider::default()
        },
    )
}

/// A ClusterSecretStore with `provider`.
fn cluster_store_of(provider: VaultProvider) -> ClusterSecretStore {
    let mut store = ClusterSecretStore::new(
        &unique_name("cluster-vault"),
        ClusterSecretStoreSpec(SecretStoreSpec {
            provider: SecretStoreProvider {
                vault: Some(Box::new(provider)),
                ..SecretStoreProvider::default()
            },
            ..SecretStoreSpec::default()
        }),
    );
    store.metadata.uid = Some("uid".into());
    store.metadata.generation = Some(1);
    store
}

/// A bare client (no retries, no cache) of a SecretStore with `provider`, reading credentials
/// from `source`.
async fn client(
    provider: VaultProvider,
    source: impl SecretSource + 'static,
) -> Result<SharedClient, ProviderError> {
    let store = store_of(provider);
    Registry::new(Arc::new(source))
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
}

/// A root-token client of KV v2 mount `mount` of the shared server.
async fn root_client(server: &BaoServer, mount: &str) -> SharedClient {
    let provider = server.provider(mount, Some(token_auth()));
    client(provider, token_source(ROOT_TOKEN)).await.unwrap()
}
