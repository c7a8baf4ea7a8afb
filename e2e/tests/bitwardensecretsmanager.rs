//! The bitwardensecretsmanager provider end to end: the controller binary, run as a local
//! process against the cluster, logs in with a machine account's access token (from a Secret)
//! at the `bitwarden-sdk-server` contract fake (`contract-fakes::bitwarden`, on 127.0.0.1 in
//! this test process, trusted through the store's `caBundle`), syncs an ExternalSecret from a
//! secret named within the store's project and one addressed by UUID (`dataFrom.extract` of a
//! YAML value), follows a new value, and pushes a PushSecret's value into a new secret of the
//! project, with its note, that is deleted again with the PushSecret.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use contract_fakes::bitwarden::{Account, BitwardenFake};
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "0.5b3f1c0e-e2e0-4d6a-9f1b-3c2d1e0f9a8b.e2e-secret:ZTJlLWtleQ==";
const ORGANIZATION: &str = "7d0e9c1a-5b2f-4e3d-8a6c-0b1f2e3d4c5a";
const PROJECT: &str = "2c4e6a8b-0d1f-4a3c-9e5b-7f8a9b0c1d2e";

/// The token Secret and a store on the fake SDK server.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &BitwardenFake,
) -> anyhow::Result<()> {
    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "bitwarden"},
        "stringData": {"token": TOKEN},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &credentials)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "bitwarden"},
        "spec": {"controller": class, "provider": {"bitwardensecretsmanager": {
            "bitwardenServerSDKURL": fake.server.url,
            "caBundle": fake.server.ca_pem,
            "organizationID": ORGANIZATION,
            "projectID": PROJECT,
            "auth": {"secretRef": {"credentials": {"name": "bitwarden", "key": "token"}}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_bitwarden_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let fake = BitwardenFake::start().await?;
    fake.add_account(Account {
        token: TOKEN,
        api_url: "",
        identity_url: "",
        organization: ORGANIZATION,
    });
    fake.add_project(ORGANIZATION, PROJECT);
    let password = fake.add_secret(ORGANIZATION, PROJECT, "db-password", "hunter2", "");
    let config = fake.add_secret(
        ORGANIZATION,
        PROJECT,
        "config",
        "region: eu\ntier: gold\n",
        "",
    );
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "bitwarden").await?;
    let class = unique_name("e2e-bitwarden");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "bitwarden", "kind": "SecretStore"},
            "target": {"name": "app-config"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "db-password"}}],
            "dataFrom": [{"extract": {"key": config}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected =
        |password: &'static str| [("password", password), ("region", "eu"), ("tier", "gold")];
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("hunter2"),
        WAIT,
        "target Secret synced from Bitwarden",
        &controller,
    )
    .await?;

    // A new value of the same secret reaches the Secret at the next refresh.
    fake.set_value(&password, "correct-horse");
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("correct-horse"),
        WAIT,
        "target Secret follows Bitwarden",
        &controller,
    )
    .await?;

    // A PushSecret creates a secret in the project, with its note, and deletes it again.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "bitwarden",
        json!({"token": "pushed-value"}),
        json!([{
            "match": {"secretKey": "token", "remoteRef": {"remoteKey": "api-token"}},
            "metadata": {
                "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
                "kind": "PushSecretMetadata",
                "spec": {"note": "pushed by e2e"},
            },
        }]),
    )
    .await?;
    let pushed = eventually(WAIT, "value pushed to Bitwarden", || async {
        Ok(fake
            .secrets_named(ORGANIZATION, "api-token")
            .into_iter()
            .next())
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(
        (
            pushed.project.as_str(),
            pushed.value.as_str(),
            pushed.note.as_str()
        ),
        (PROJECT, "pushed-value", "pushed by e2e")
    );
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret deleted from Bitwarden", || async {
        let gone = fake.secrets_named(ORGANIZATION, "api-token").is_empty();
        Ok(gone.then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
