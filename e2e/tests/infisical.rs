//! The infisical provider end to end: the controller binary, run as a local process against the
//! cluster, logs in with universal auth (client id and secret from a Secret) at the Infisical
//! contract fake (`contract-fakes::infisical`, on 127.0.0.1 in this test process, trusted
//! through the store's `caBundle`), syncs an ExternalSecret from a project environment (a
//! value, a key in a sub-folder, a JSON member and `dataFrom.extract`), follows a changed
//! value, and pushes a PushSecret's value into a JSON member of a new secret that is deleted
//! again with the PushSecret.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use base64::Engine as _;
use contract_fakes::infisical::InfisicalFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const CLIENT_ID: &str = "e2e-machine-identity";
const CLIENT_SECRET: &str = "e2e-client-secret";

/// The credentials Secret and a store over project `shop`, environment `prod`, folder `/app`.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &InfisicalFake,
) -> anyhow::Result<()> {
    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "infisical"},
        "stringData": {"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &credentials)
        .await?;
    let ca = base64::engine::general_purpose::STANDARD.encode(&fake.server.ca_pem);
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "infisical"},
        "spec": {"controller": class, "provider": {"infisical": {
            "hostAPI": format!("{}/api", fake.server.url),
            "caBundle": ca,
            "secretsScope": {"projectSlug": "shop", "environmentSlug": "prod", "secretsPath": "/app"},
            "auth": {"universalAuthCredentials": {
                "clientId": {"name": "infisical", "key": "clientId"},
                "clientSecret": {"name": "infisical", "key": "clientSecret"},
            }},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_infisical_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let fake = InfisicalFake::start("shop", &["dev", "prod"]).await?;
    fake.accept_login(
        "universal-auth",
        json!({"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET}),
    );
    fake.set_secret("prod", "/app", "DB_PASSWORD", "first");
    fake.set_secret("prod", "/app/cache", "REDIS_URL", "redis://cache");
    fake.set_secret("prod", "/app", "CONFIG", r#"{"region":"eu","tier":"gold"}"#);
    fake.set_secret("dev", "/app", "DB_PASSWORD", "not-this-environment");
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "infisical").await?;
    let class = unique_name("e2e-infisical");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "infisical", "kind": "SecretStore"},
            "target": {"name": "app-config"},
            "data": [
                {"secretKey": "password", "remoteRef": {"key": "DB_PASSWORD"}},
                {"secretKey": "redis", "remoteRef": {"key": "cache/REDIS_URL"}},
                {"secretKey": "region", "remoteRef": {"key": "CONFIG", "property": "region"}},
            ],
            "dataFrom": [{"extract": {"key": "CONFIG"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = |password: &'static str| {
        [
            ("password", password),
            ("redis", "redis://cache"),
            ("region", "eu"),
            ("tier", "gold"),
        ]
    };
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("first"),
        WAIT,
        "target Secret synced from Infisical",
        &controller,
    )
    .await?;

    // A changed value reaches the Secret at the next refresh.
    fake.set_secret("prod", "/app", "DB_PASSWORD", "second");
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("second"),
        WAIT,
        "target Secret follows Infisical",
        &controller,
    )
    .await?;

    // A PushSecret writes a JSON member of a new secret, and deletes it with the PushSecret.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "infisical",
        json!({"token": "pushed-value"}),
        json!([{"match": {
            "secretKey": "token",
            "remoteRef": {"remoteKey": "PUSHED", "property": "token"},
        }}]),
    )
    .await?;
    let pushed = eventually(WAIT, "value pushed to Infisical", || async {
        Ok(fake.secret("prod", "/app", "PUSHED"))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(pushed, r#"{"token":"pushed-value"}"#);
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret deleted from Infisical", || async {
        Ok(fake
            .secret("prod", "/app", "PUSHED")
            .is_none()
            .then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
