//! The azurekv provider end to end: the controller binary, run as a local process against the
//! cluster, syncs an ExternalSecret from the Key Vault contract fake on 127.0.0.1 (service
//! principal with a client secret from a Secret, Entra ID at the fake through
//! `customCloudConfig`), follows a new version of the value, and pushes a PushSecret's value
//! there (tagged `managed-by`) and soft-deletes it again with the PushSecret.
//!
//! The `ACRAccessToken` generator fills ExternalSecrets from the registry contract fake: a
//! scoped access token through a service principal (Entra ID at the fake through
//! `AZURE_AUTHORITY_HOST`), and a refresh token through a `ClusterGenerator` with a managed
//! identity (IMDS at the fake through `AZURE_POD_IDENTITY_AUTHORITY_HOST`).
//!
//! The controller trusts the fakes' CA through `SSL_CERT_FILE` (neither the store nor the
//! generator has a CA field) and checks the vault's challenge as in production: the fake names
//! `https://127.0.0.1` as its audience, which covers the vault's host. Cluster-agnostic: only
//! the controller talks to the fakes, and it runs on this machine.

use std::time::Duration;

use contract_fakes::azure_identity::AppCredential;
use contract_fakes::azure_keyvault::{KeyVaultFake, Kind};
use contract_fakes::azure_registry::RegistryFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    string_data, unique_name, wait_for_secret_data,
};
use external_secrets_crds::generators::{AcrAccessToken, ClusterGenerator};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const TENANT: &str = "e2e-tenant";

#[tokio::test]
async fn external_secrets_sync_from_key_vault_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let fake = KeyVaultFake::start(TENANT, Some("https://127.0.0.1")).await?;
    fake.directory.register_app(
        TENANT,
        "e2e-app",
        AppCredential::Secret("e2e-secret".to_owned()),
    );
    fake.put_secret("db-password", "first", &[], true);
    fake.put_secret(
        "app-config",
        r#"{"host":"db.local","port":5432}"#,
        &[],
        true,
    );
    let ca_file = std::env::temp_dir().join(format!("{}.pem", unique_name("azure-fake-ca")));
    std::fs::write(&ca_file, &fake.server.ca_pem)?;

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "azurekv").await?;
    let class = unique_name("e2e-azurekv");
    let ca_path = ca_file.to_string_lossy().into_owned();
    let controller =
        ControllerProcess::start_with_env(&cluster, &class, &[], &[("SSL_CERT_FILE", &ca_path)])
            .await?;

    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "azure-sp"},
        "stringData": {"client-id": "e2e-app", "client-secret": "e2e-secret"},
    }))?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    secrets.create(&PostParams::default(), &credentials).await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "azure"},
        "spec": {"controller": class, "provider": {"azurekv": {
            "vaultUrl": fake.server.url,
            "tenantId": TENANT,
            "useAzureSDK": true,
            "customCloudConfig": {"activeDirectoryEndpoint": fake.server.url},
            "authSecretRef": {
                "clientId": {"name": "azure-sp", "key": "client-id"},
                "clientSecret": {"name": "azure-sp", "key": "client-secret"},
            },
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &store)
        .await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "azure", "kind": "SecretStore"},
            "target": {"name": "db-credentials"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "secret/db-password"}}],
            "dataFrom": [{"extract": {"key": "app-config"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let expected = |password: &'static str| {
        [
            ("password", password),
            ("host", "db.local"),
            ("port", "5432"),
        ]
    };
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("first"),
        WAIT,
        "target Secret synced from Key Vault",
        &controller,
    )
    .await?;
    fake.put_secret("db-password", "second", &[], true);
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("second"),
        WAIT,
        "target Secret follows the new version",
        &controller,
    )
    .await?;

    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "azure",
        json!({"token": "pushed-value"}),
        json!([{"match": {"secretKey": "token", "remoteRef": {"remoteKey": "pushed-token"}}}]),
    )
    .await?;
    let pushed = eventually(WAIT, "value pushed to Key Vault", || async {
        Ok(fake.bundle(Kind::Secret, "pushed-token"))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(pushed["value"], "pushed-value");
    assert_eq!(pushed["tags"], json!({"managed-by": "external-secrets"}));
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret soft-deleted in Key Vault", || async {
        Ok(fake.is_deleted(Kind::Secret, "pushed-token").then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    std::fs::remove_file(&ca_file)?;
    namespace.delete().await
}

/// An ExternalSecret whose only data is the generator `kind`/`name`'s output.
fn generated_secret(name: &str, kind: &str, generator: &str) -> anyhow::Result<ExternalSecret> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": name},
        "spec": {
            "refreshInterval": "1h",
            "target": {"name": name},
            "dataFrom": [{"sourceRef": {"generatorRef": {
                "apiVersion": "generators.external-secrets.io/v1alpha1",
                "kind": kind, "name": generator}}}],
        },
    }))?)
}

#[tokio::test]
async fn acr_access_tokens_fill_external_secrets_directly_and_through_cluster_generators()
-> anyhow::Result<()> {
    let fake = RegistryFake::start(TENANT).await?;
    fake.directory.register_app(
        TENANT,
        "acr-app",
        AppCredential::Secret("acr-secret".to_owned()),
    );
    fake.directory.assign_managed_identity("acr-identity");
    let ca_file = std::env::temp_dir().join(format!("{}.pem", unique_name("acr-fake-ca")));
    std::fs::write(&ca_file, &fake.server.ca_pem)?;

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "acr").await?;
    let class = unique_name("e2e-acr");
    let ca_path = ca_file.to_string_lossy().into_owned();
    let environment = [
        ("SSL_CERT_FILE", ca_path.as_str()),
        ("AZURE_AUTHORITY_HOST", fake.server.url.as_str()),
        (
            "AZURE_POD_IDENTITY_AUTHORITY_HOST",
            fake.server.url.as_str(),
        ),
    ];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &environment).await?;

    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "acr-sp"},
        "stringData": {"client-id": "acr-app", "client-secret": "acr-secret"},
    }))?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    secrets.create(&PostParams::default(), &credentials).await?;
    let scope = "repository:team/app:pull";
    let direct: AcrAccessToken = serde_json::from_value(json!({
        "apiVersion": "generators.external-secrets.io/v1alpha1",
        "kind": "ACRAccessToken",
        "metadata": {"name": "registry"},
        "spec": {
            "registry": fake.login_server(),
            "tenantId": TENANT,
            "scope": scope,
            "auth": {"servicePrincipal": {"secretRef": {
                "clientId": {"name": "acr-sp", "key": "client-id"},
                "clientSecret": {"name": "acr-sp", "key": "client-secret"},
            }}},
        },
    }))?;
    Api::<AcrAccessToken>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &direct)
        .await?;
    let cluster_generator_name = unique_name("acr-mi");
    let wrapped: ClusterGenerator = serde_json::from_value(json!({
        "apiVersion": "generators.external-secrets.io/v1alpha1",
        "kind": "ClusterGenerator",
        "metadata": {"name": cluster_generator_name},
        "spec": {"kind": "ACRAccessToken", "generator": {"acrAccessTokenSpec": {
            "registry": fake.login_server(),
            "auth": {"managedIdentity": {"identityId": "acr-identity"}},
        }}},
    }))?;
    let cluster_generators: Api<ClusterGenerator> = Api::all(cluster.client.clone());
    cluster_generators
        .create(&PostParams::default(), &wrapped)
        .await?;
    let external_secrets: Api<ExternalSecret> =
        Api::namespaced(cluster.client.clone(), &namespace.name);
    for external_secret in [
        generated_secret("scoped", "ACRAccessToken", "registry")?,
        generated_secret("refresh", "ClusterGenerator", &cluster_generator_name)?,
    ] {
        external_secrets
            .create(&PostParams::default(), &external_secret)
            .await?;
    }
    let synced = |name: &'static str| {
        let secrets = secrets.clone();
        move || {
            let secrets = secrets.clone();
            async move {
                Ok(secrets
                    .get_opt(name)
                    .await?
                    .map(|secret| string_data(&secret)))
            }
        }
    };
    let scoped = eventually(
        WAIT,
        "Secret filled with an ACR access token",
        synced("scoped"),
    )
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(scoped["username"], "00000000-0000-0000-0000-000000000000");
    assert_eq!(
        fake.access_scope(&scoped["password"]).as_deref(),
        Some(scope)
    );
    let refresh = eventually(
        WAIT,
        "Secret filled through the ClusterGenerator",
        synced("refresh"),
    )
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(refresh.len(), 2);
    assert!(fake.is_refresh_token(&refresh["password"]), "{refresh:?}");

    controller.stop().await?;
    cluster_generators
        .delete(&cluster_generator_name, &DeleteParams::default())
        .await?;
    std::fs::remove_file(&ca_file)?;
    namespace.delete().await
}
