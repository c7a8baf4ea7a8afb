//! The azurekv provider against the Key Vault contract fake (`contract_fakes::azure_keyvault`),
//! one fake per client so tests never share a vault. Clients are built with
//! [`AzureKvClient::connect`] and [`Endpoints`] pointing at the fake: its CA trusted, its IMDS,
//! and the challenge-resource check off (the fake names the real `https://vault.azure.net`
//! audience while listening on 127.0.0.1) — the one place that check is disabled.

use std::sync::Arc;

use async_trait::async_trait;
use contract_fakes::azure_identity::AppCredential;
use contract_fakes::azure_keyvault::KeyVaultFake;
use external_secrets_crds::v1::AzureKvProvider;
use external_secrets_providers::backends::azurekv::auth::WorkloadEnvironment;
use external_secrets_providers::backends::azurekv::{AzureKvClient, Endpoints};
use external_secrets_providers::credentials::{
    CredentialResolver, MemorySecretSource, SecretSource,
};
use external_secrets_providers::{ProviderError, SharedClient, StoreId};
use serde_json::json;

use super::{Features, Harness, NAMESPACE};

/// The tenant every fake's apps live in.
pub const TENANT: &str = "11111111-2222-3333-4444-555555555555";
/// The service principal registered with a client secret.
pub const CLIENT_ID: &str = "eso-app";
/// Its secret.
pub const CLIENT_SECRET: &str = "app-secret";
/// The Secret holding `client-id` and `client-secret`.
pub const CREDENTIALS_SECRET: &str = "azure-sp";

/// A fresh vault whose directory knows the secret-based service principal.
pub async fn start_fake() -> KeyVaultFake {
    let fake = KeyVaultFake::start(TENANT, None)
        .await
        .expect("starting the Key Vault fake");
    fake.directory.register_app(
        TENANT,
        CLIENT_ID,
        AppCredential::Secret(CLIENT_SECRET.to_owned()),
    );
    fake
}

/// A store spec for `fake`'s vault with `extra` merged in (auth fields), its authority the fake
/// (through `customCloudConfig`, which upstream allows with `useAzureSDK`).
pub fn spec(fake: &KeyVaultFake, extra: serde_json::Value) -> AzureKvProvider {
    let mut spec = json!({
        "vaultUrl": fake.server.url,
        "useAzureSDK": true,
        "customCloudConfig": {"activeDirectoryEndpoint": fake.server.url},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(spec).expect("a valid azurekv spec")
}

/// The service-principal-with-secret part of a spec.
pub fn client_secret_auth() -> serde_json::Value {
    json!({
        "tenantId": TENANT,
        "authSecretRef": {
            "clientId": {"name": CREDENTIALS_SECRET, "key": "client-id"},
            "clientSecret": {"name": CREDENTIALS_SECRET, "key": "client-secret"},
        }
    })
}

/// A credential source holding [`CREDENTIALS_SECRET`] with `secret` as the client secret.
pub fn credentials(secret: &str) -> MemorySecretSource {
    MemorySecretSource::default().with_secret(
        NAMESPACE,
        CREDENTIALS_SECRET,
        &[],
        &[("client-id", CLIENT_ID), ("client-secret", secret)],
    )
}

/// Endpoints of `fake` for a client under test.
pub fn endpoints(fake: &KeyVaultFake, workload: WorkloadEnvironment) -> Endpoints {
    Endpoints {
        imds: fake.server.url.clone(),
        authority_host: None,
        extra_ca_pem: Some(fake.server.ca_pem.clone().into_bytes()),
        verify_challenge_resource: false,
        workload,
    }
}

/// A client of a SecretStore in [`NAMESPACE`].
pub async fn connect(
    fake: &KeyVaultFake,
    spec: &AzureKvProvider,
    source: Arc<dyn SecretSource>,
    workload: WorkloadEnvironment,
) -> Result<SharedClient, ProviderError> {
    let store = StoreId::secret_store(NAMESPACE, "azurekv");
    let resolver = CredentialResolver::new(source, store, Some(NAMESPACE.to_owned()));
    let client = AzureKvClient::connect(spec, resolver, endpoints(fake, workload)).await?;
    Ok(Arc::new(client))
}

/// The behaviour suite's harness: secrets seeded into a fresh fake, read with a service
/// principal's client secret.
pub struct AzureKvHarness;

#[async_trait]
impl Harness for AzureKvHarness {
    fn name(&self) -> &'static str {
        "azurekv"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let fake = start_fake().await;
        for (name, value) in seed {
            fake.put_secret(name, value, &[], true);
        }
        let spec = spec(&fake, client_secret_auth());
        let source = Arc::new(credentials(CLIENT_SECRET));
        connect(&fake, &spec, source, WorkloadEnvironment::default())
            .await
            .expect("azurekv client")
    }
}
