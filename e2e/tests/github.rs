//! The github provider end to end: the controller binary, run as a local process against the
//! cluster with `SSL_CERT_FILE` naming the CA of the GitHub contract fake
//! (`contract-fakes::github`, on 127.0.0.1 in this test process, addressed as a GitHub Enterprise
//! Server `url`), authenticates as a GitHub App (RS256 JWT, installation token), pushes a
//! PushSecret's value into a repository's Actions secrets sealed to the repository's public key
//! (the fake opens it with the private key), deletes it with the PushSecret, and refuses an
//! ExternalSecret: the store is write-only, as upstream.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use contract_fakes::github::{GithubFake, Scope};
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name,
};
use external_secrets_crds::v1::{ExternalSecret, ExternalSecretConditionType, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const APP_ID: i64 = 1234;
const INSTALLATION_ID: i64 = 5678;
/// A test App key (PKCS#1, as GitHub issues them); it protects nothing.
const APP_KEY: &str = include_str!("../../providers/tests/data/github-app-key.pem");

/// The App key Secret and a store writing to repository `acme/app` of the fake.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &GithubFake,
) -> anyhow::Result<()> {
    let key: Secret = serde_json::from_value(json!({
        "metadata": {"name": "github-app"},
        "stringData": {"private-key": APP_KEY},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &key)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "github"},
        "spec": {"controller": class, "provider": {"github": {
            "url": fake.server.url,
            "appID": APP_ID,
            "installationID": INSTALLATION_ID,
            "organization": "acme",
            "repository": "app",
            "auth": {"privateKey": {"name": "github-app", "key": "private-key"}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn push_secrets_write_sealed_github_actions_secrets() -> anyhow::Result<()> {
    let fake = GithubFake::start(APP_ID, INSTALLATION_ID, APP_KEY).await?;
    let scope = Scope::Repository("acme".into(), "app".into());
    fake.add_scope(&scope);
    let ca = std::env::temp_dir().join(format!("{}.pem", unique_name("github-e2e-ca")));
    std::fs::write(&ca, &fake.server.ca_pem)?;
    let ca = ca.to_string_lossy().into_owned();
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "github").await?;
    let class = unique_name("e2e-github");
    let env = [("SSL_CERT_FILE", ca.as_str())];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;

    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    eventually(WAIT, "store ready and write-only", || async {
        let store = stores.get("github").await?;
        let status = store.status.unwrap_or_default();
        let ready = status
            .conditions
            .iter()
            .any(|condition| condition.r#type == "Ready" && condition.status == "True");
        Ok((ready && status.capabilities.as_deref() == Some("WriteOnly")).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    // A PushSecret writes the value, sealed; the fake opened it with the repository's key.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "github",
        json!({"token": "pushed-value"}),
        json!([{"match": {"secretKey": "token", "remoteRef": {"remoteKey": "PUSHED_TOKEN"}}}]),
    )
    .await?;
    eventually(WAIT, "value pushed to GitHub", || async {
        let stored = fake.secret(&scope, "PUSHED_TOKEN");
        Ok(stored
            .is_some_and(|stored| stored.value == b"pushed-value")
            .then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    anyhow::ensure!(
        fake.tokens_issued() >= 1,
        "no installation token was issued"
    );

    // The store cannot serve reads: an ExternalSecret on it is refused.
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "refused"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "github", "kind": "SecretStore"},
            "target": {"name": "refused"},
            "data": [{"secretKey": "x", "remoteRef": {"key": "PUSHED_TOKEN"}}],
        },
    }))?;
    let external_secrets: Api<ExternalSecret> =
        Api::namespaced(cluster.client.clone(), &namespace.name);
    external_secrets
        .create(&PostParams::default(), &external_secret)
        .await?;
    eventually(
        WAIT,
        "ExternalSecret refused by the write-only store",
        || async {
            let status = external_secrets
                .get("refused")
                .await?
                .status
                .unwrap_or_default();
            Ok(status
                .conditions
                .iter()
                .any(|condition| {
                    condition.r#type == ExternalSecretConditionType::Ready
                        && condition.status == "False"
                        && condition
                            .message
                            .as_deref()
                            .is_some_and(|message| message.contains("write-only"))
                })
                .then_some(()))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))?;

    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret deleted from GitHub", || async {
        Ok(fake.secret(&scope, "PUSHED_TOKEN").is_none().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
