//! The akeyless provider end to end: the controller binary, run as a local process against the
//! cluster, authenticates with an access key (id, type and key from a Secret) at the Akeyless
//! gateway contract fake (`contract-fakes::akeyless`, on 127.0.0.1 in this test process,
//! trusted through the store's `caBundle`), syncs an ExternalSecret from a static secret (a
//! JSON member and `dataFrom.extract`) and a dynamic secret, follows a new version, and pushes a
//! PushSecret's value into a new tagged item that is deleted again with the PushSecret.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use base64::Engine as _;
use contract_fakes::akeyless::AkeylessFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const ACCESS_ID: &str = "p-e2e";
const ACCESS_KEY: &str = "e2e-access-key";

/// The credentials Secret and a store on the fake gateway.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &AkeylessFake,
) -> anyhow::Result<()> {
    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "akeyless"},
        "stringData": {"id": ACCESS_ID, "type": "access_key", "key": ACCESS_KEY},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &credentials)
        .await?;
    let ca = base64::engine::general_purpose::STANDARD.encode(&fake.server.ca_pem);
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "akeyless"},
        "spec": {"controller": class, "provider": {"akeyless": {
            "akeylessGWApiURL": fake.server.url,
            "caBundle": ca,
            "authSecretRef": {"secretRef": {
                "accessID": {"name": "akeyless", "key": "id"},
                "accessType": {"name": "akeyless", "key": "type"},
                "accessTypeParam": {"name": "akeyless", "key": "key"},
            }},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_akeyless_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let fake = AkeylessFake::start().await?;
    fake.accept_access_key(ACCESS_ID, ACCESS_KEY);
    fake.set_static("/app/config", r#"{"region":"eu","tier":"gold"}"#, &[]);
    fake.set_dynamic(
        "/app/db",
        json!({"user": "tmp-user", "password": "tmp-pass"}),
    );
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "akeyless").await?;
    let class = unique_name("e2e-akeyless");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "akeyless", "kind": "SecretStore"},
            "target": {"name": "app-config"},
            "data": [
                {"secretKey": "password", "remoteRef": {"key": "/app/db", "property": "password"}},
            ],
            "dataFrom": [{"extract": {"key": "/app/config"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected =
        |tier: &'static str| [("password", "tmp-pass"), ("region", "eu"), ("tier", tier)];
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("gold"),
        WAIT,
        "target Secret synced from Akeyless",
        &controller,
    )
    .await?;

    // A new version reaches the Secret at the next refresh.
    fake.set_static("/app/config", r#"{"region":"eu","tier":"platinum"}"#, &[]);
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("platinum"),
        WAIT,
        "target Secret follows Akeyless",
        &controller,
    )
    .await?;

    // A PushSecret creates a tagged item, and deletes it with the PushSecret.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "akeyless",
        json!({"token": "pushed-value"}),
        json!([{"match": {
            "secretKey": "token",
            "remoteRef": {"remoteKey": "/app/pushed", "property": "token"},
        }}]),
    )
    .await?;
    let (value, tags) = eventually(WAIT, "value pushed to Akeyless", || async {
        Ok(fake.static_value("/app/pushed"))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(value, r#"{"token":"pushed-value"}"#);
    assert_eq!(tags, vec!["k8s-external-secrets".to_owned()]);
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed item deleted from Akeyless", || async {
        Ok(fake.static_value("/app/pushed").is_none().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
