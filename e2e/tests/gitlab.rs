//! The gitlab provider end to end: the controller binary, run as a local process against the
//! cluster, reads CI/CD variables from the GitLab contract fake (`contract-fakes::gitlab`, on
//! 127.0.0.1 in this test process, trusted through the store's `caBundle`): a project variable
//! scoped to the store's environment, a JSON property, a variable inherited from the project's
//! group, and `dataFrom.find`; it follows a changed variable. The backend is read-only, as
//! upstream, so the store reports `ReadOnly` and there is no PushSecret to run.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use base64::Engine as _;
use contract_fakes::gitlab::{GitlabFake, Owner};
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, install_crds, unique_name, wait_for_secret_data,
    wait_for_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "glpat-e2e-token";
const PROJECT: u64 = 42;
const GROUP: u64 = 7;

/// The fake with group `platform` and its project `platform/app`, holding the variables the
/// ExternalSecret reads.
async fn seeded_fake() -> anyhow::Result<GitlabFake> {
    let fake = GitlabFake::start(TOKEN).await?;
    fake.add_group(GROUP, "platform");
    fake.add_project(PROJECT, "platform/app", &[GROUP]);
    let project = Owner::Project(PROJECT);
    for (owner, key, value, scope) in [
        (project, "DB_PASSWORD", "prod-first", "production"),
        (project, "DB_PASSWORD", "any-environment", "*"),
        (
            project,
            "DB_CONFIG",
            r#"{"user":"admin","port":"5432"}"#,
            "*",
        ),
        (project, "APP_STAGING_ONLY", "hidden", "staging"),
        (project, "APP_MODE", "blue", "*"),
        (Owner::Group(GROUP), "REGISTRY_TOKEN", "from-group", "*"),
    ] {
        anyhow::ensure!(fake.set_variable(owner, key, value, scope));
    }
    Ok(fake)
}

/// The token Secret and a store on project 42 in environment `production`, groups inherited.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &GitlabFake,
) -> anyhow::Result<()> {
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "gitlab"},
        "stringData": {"token": TOKEN},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &token)
        .await?;
    let ca = base64::engine::general_purpose::STANDARD.encode(&fake.server.ca_pem);
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "gitlab"},
        "spec": {"controller": class, "provider": {"gitlab": {
            "url": fake.server.url,
            "projectID": PROJECT.to_string(),
            "inheritFromGroups": true,
            "environment": "production",
            "caBundle": ca,
            "auth": {"SecretRef": {"accessToken": {"name": "gitlab", "key": "token"}}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_gitlab_variables() -> anyhow::Result<()> {
    let fake = seeded_fake().await?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "gitlab").await?;
    let class = unique_name("e2e-gitlab");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;

    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    wait_for_store_ready(&stores, "gitlab", "ReadOnly", WAIT, &controller).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "gitlab", "kind": "SecretStore"},
            "target": {"name": "app-credentials"},
            "data": [
                {"secretKey": "password", "remoteRef": {"key": "DB-PASSWORD"}},
                {"secretKey": "user", "remoteRef": {"key": "DB_CONFIG", "property": "user"}},
                {"secretKey": "registry", "remoteRef": {"key": "REGISTRY_TOKEN"}},
            ],
            "dataFrom": [{"find": {"name": {"regexp": "^APP_"}}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = |password: &'static str| {
        [
            ("password", password),
            ("user", "admin"),
            ("registry", "from-group"),
            ("APP_MODE", "blue"),
        ]
    };
    wait_for_secret_data(
        &secrets,
        "app-credentials",
        &expected("prod-first"),
        WAIT,
        "target Secret synced from GitLab",
        &controller,
    )
    .await?;

    // A changed variable reaches the Secret at the next refresh.
    anyhow::ensure!(fake.set_variable(
        Owner::Project(PROJECT),
        "DB_PASSWORD",
        "prod-second",
        "production"
    ));
    wait_for_secret_data(
        &secrets,
        "app-credentials",
        &expected("prod-second"),
        WAIT,
        "target Secret follows GitLab",
        &controller,
    )
    .await?;

    // Every request the controller sent carried the token as GitLab's PRIVATE-TOKEN.
    let requests = fake.server.requests();
    anyhow::ensure!(!requests.is_empty());
    for request in &requests {
        let token = contract_fakes::server::header(&request.headers, "private-token");
        anyhow::ensure!(token == Some(TOKEN), "{} without the token", request.path);
    }

    controller.stop().await?;
    namespace.delete().await
}
