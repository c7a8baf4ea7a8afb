//! The kubernetes provider end to end: a SecretStore reading and writing Secrets of another
//! namespace of the same cluster, authenticating as a ServiceAccount (the controller requests
//! its tokens), with the API server's address and CA taken from the kubeconfig. An
//! ExternalSecret syncs a remote Secret's key, and a PushSecret writes a key into a remote
//! Secret and removes it again when deleted.
//!
//! Cluster-agnostic: the ServiceAccount is granted exactly the Secret access it needs in the
//! remote namespace (a Role and RoleBinding), as a real cluster requires.

use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
    wait_for_store_released,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use external_secrets_crds::v1alpha1::PushSecret;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

/// ServiceAccount `name` in `app`, allowed to read and write Secrets in `remote`.
async fn reader_account(
    cluster: &TestCluster,
    app: &str,
    remote: &str,
    name: &str,
) -> anyhow::Result<()> {
    let account: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    Api::<ServiceAccount>::namespaced(cluster.client.clone(), app)
        .create(&PostParams::default(), &account)
        .await?;
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": name},
        "rules": [{"apiGroups": [""], "resources": ["secrets"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}],
    }))?;
    Api::<Role>::namespaced(cluster.client.clone(), remote)
        .create(&PostParams::default(), &role)
        .await?;
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": app}],
    }))?;
    Api::<RoleBinding>::namespaced(cluster.client.clone(), remote)
        .create(&PostParams::default(), &binding)
        .await?;
    Ok(())
}

#[tokio::test]
async fn secrets_of_another_namespace_sync_and_receive_pushes() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let app = TestNamespace::create(&cluster, "k8s-app").await?;
    let remote = TestNamespace::create(&cluster, "k8s-remote").await?;
    reader_account(&cluster, &app.name, &remote.name, "remote-reader").await?;
    let remote_secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &remote.name);
    let db: Secret = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "stringData": {"password": "from-the-other-namespace"},
    }))?;
    remote_secrets.create(&PostParams::default(), &db).await?;

    let class = unique_name("e2e-k8s");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let server = cluster.api_server()?.store_server();
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "other-namespace"},
        "spec": {"controller": class, "provider": {"kubernetes": {
            "remoteNamespace": remote.name,
            "server": server,
            "auth": {"serviceAccount": {"name": "remote-reader"}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), &app.name)
        .create(&PostParams::default(), &store)
        .await?;

    // An ExternalSecret reads a key of the remote Secret.
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "copied"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "other-namespace", "kind": "SecretStore"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "db", "property": "password"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &app.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let app_secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &app.name);
    let copied = eventually(WAIT, "remote key synced", || async {
        Ok(app_secrets.get_opt("copied").await?)
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    let password = copied
        .data
        .as_ref()
        .and_then(|data| data.get("password"))
        .map(|value| value.0.clone());
    assert_eq!(password.as_deref(), Some(&b"from-the-other-namespace"[..]));

    // A PushSecret writes a key into a remote Secret and removes it when deleted.
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "local"},
        "stringData": {"token": "pushed-across"},
    }))?;
    app_secrets.create(&PostParams::default(), &source).await?;
    let push: PushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": "across"},
        "spec": {
            "refreshInterval": "1h",
            "deletionPolicy": "Delete",
            "secretStoreRefs": [{"name": "other-namespace", "kind": "SecretStore"}],
            "selector": {"secret": {"name": "local"}},
            "data": [{"match": {"secretKey": "token",
                "remoteRef": {"remoteKey": "received", "property": "token"}}}],
        },
    }))?;
    let push_secrets: Api<PushSecret> = Api::namespaced(cluster.client.clone(), &app.name);
    push_secrets.create(&PostParams::default(), &push).await?;
    let received = eventually(WAIT, "pushed into the remote namespace", || async {
        Ok(remote_secrets.get_opt("received").await?)
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    let token = received
        .data
        .as_ref()
        .and_then(|data| data.get("token"))
        .map(|value| value.0.clone());
    assert_eq!(token.as_deref(), Some(&b"pushed-across"[..]));
    push_secrets
        .delete("across", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed key removed", || async {
        let gone = match remote_secrets.get_opt("received").await? {
            None => true,
            Some(secret) => !secret
                .data
                .as_ref()
                .is_some_and(|data| data.contains_key("token")),
        };
        let push_gone = push_secrets.get_opt("across").await?.is_none();
        Ok((gone && push_gone).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &app.name);
    wait_for_store_released(&stores, "other-namespace", &controller).await?;

    controller.stop().await?;
    app.delete().await?;
    remote.delete().await
}
