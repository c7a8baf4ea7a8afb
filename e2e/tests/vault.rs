//! The vault provider end to end: the controller binary, run as a local process against the
//! cluster, syncs an ExternalSecret from an OpenBao dev server on 127.0.0.1 (started by the
//! test, TLS checked against a `caProvider` ConfigMap, token auth from a Secret), follows a
//! change of the value, and pushes a PushSecret's value there and deletes it again; and syncs
//! with Kubernetes auth: the controller requests a ServiceAccount token, OpenBao has the
//! cluster's API server review it.
//!
//! Cluster-agnostic: only the controller talks to OpenBao, and it runs on this machine; OpenBao
//! reaches the API server where the kubeconfig says, with a reviewer token the test requests.

#[path = "../../providers/tests/support/bao_process.rs"]
mod bao_process;

use std::time::Duration;

use bao_process::{BaoProcess, ROOT_TOKEN};
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    string_data, unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

/// Runs the `bao` CLI against `bao`; its JSON output (`Null` when there is none).
fn bao_cli(bao: &BaoProcess, args: &[&str]) -> anyhow::Result<Value> {
    let output = bao.cli().args(args).output()?;
    if !output.status.success() {
        anyhow::bail!(
            "bao {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(serde_json::from_slice(&output.stdout).unwrap_or(Value::Null))
}

/// The data of KV v2 secret `key` of the dev server's `secret/` mount, if it exists.
fn stored(bao: &BaoProcess, key: &str) -> Option<Value> {
    bao_cli(bao, &["kv", "get", "-format=json", "-mount=secret", key])
        .ok()
        .map(|answer| answer["data"].clone())
}

/// The credentials and trust the store refers to, and the store itself.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    bao: &BaoProcess,
) -> anyhow::Result<()> {
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "vault-ca"},
        "data": {"ca.crt": bao.ca_pem},
    }))?;
    Api::<ConfigMap>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &config_map)
        .await?;
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "vault-token"},
        "stringData": {"token": ROOT_TOKEN},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &token)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "vault"},
        "spec": {"controller": class, "provider": {"vault": {
            "server": bao.url,
            "path": "secret",
            "version": "v2",
            "caProvider": {"type": "ConfigMap", "name": "vault-ca", "key": "ca.crt"},
            "auth": {"tokenSecretRef": {"name": "vault-token", "key": "token"}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_openbao_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let bao = BaoProcess::start();
    bao_cli(
        &bao,
        &[
            "kv",
            "put",
            "-mount=secret",
            "app/db",
            "user=admin",
            "password=first",
        ],
    )?;
    bao_cli(
        &bao,
        &[
            "kv",
            "put",
            "-mount=secret",
            "app/config",
            "host=db.local",
            "port=5432",
        ],
    )?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "vault").await?;
    let class = unique_name("e2e-vault");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &bao).await?;

    // An ExternalSecret reading single properties and a whole secret, refreshed every second.
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "vault", "kind": "SecretStore"},
            "target": {"name": "db-credentials"},
            "data": [
                {"secretKey": "user", "remoteRef": {"key": "app/db", "property": "user"}},
                {"secretKey": "password", "remoteRef": {"key": "app/db", "property": "password"}},
            ],
            "dataFrom": [{"extract": {"key": "app/config"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = |password: &'static str| {
        [
            ("user", "admin"),
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
        "target Secret synced from OpenBao",
        &controller,
    )
    .await?;

    // A new version in OpenBao reaches the Secret at the next refresh.
    bao_cli(
        &bao,
        &["kv", "patch", "-mount=secret", "app/db", "password=second"],
    )?;
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("second"),
        WAIT,
        "target Secret follows OpenBao",
        &controller,
    )
    .await?;

    // A PushSecret writes a property, marked as pushed, and deletes it when it is deleted.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "vault",
        json!({"password": "pushed-value"}),
        json!([{"match": {"secretKey": "password",
                "remoteRef": {"remoteKey": "pushed/db", "property": "password"}}}]),
    )
    .await?;
    let pushed = eventually(WAIT, "value pushed to OpenBao", || async {
        Ok(stored(&bao, "pushed/db"))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(pushed["data"], json!({"password": "pushed-value"}));
    assert_eq!(
        pushed["metadata"]["custom_metadata"],
        json!({"managed-by": "external-secrets"})
    );
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed value deleted from OpenBao", || async {
        Ok(stored(&bao, "pushed/db").is_none().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}

/// Creates ServiceAccount `name`, and returns a token of it when `reviewer` (after letting it
/// review tokens, as `system:auth-delegator` does for OpenBao's reviewer on any cluster).
async fn service_account(
    cluster: &TestCluster,
    namespace: &str,
    name: &str,
    reviewer: Option<&str>,
) -> anyhow::Result<Option<String>> {
    let accounts: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), namespace);
    let account: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    accounts.create(&PostParams::default(), &account).await?;
    let Some(binding_name) = reviewer else {
        return Ok(None);
    };
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": binding_name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
            "name": "system:auth-delegator"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }))?;
    Api::<ClusterRoleBinding>::all(cluster.client.clone())
        .create(&PostParams::default(), &binding)
        .await?;
    let token = accounts
        .create_token_request(name, &PostParams::default(), &TokenRequest::default())
        .await?
        .status
        .map(|status| status.token)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| anyhow::anyhow!("the TokenRequest for {name} returned no token"))?;
    Ok(Some(token))
}

#[tokio::test]
async fn kubernetes_auth_tokens_are_reviewed_by_the_clusters_api_server() -> anyhow::Result<()> {
    let bao = BaoProcess::start();
    bao_cli(
        &bao,
        &["kv", "put", "-mount=secret", "team/db", "password=reviewed"],
    )?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "vault-k8s").await?;
    let reviewer_binding = unique_name("e2e-vault-reviewer");
    let reviewer_token = service_account(
        &cluster,
        &namespace.name,
        "reviewer",
        Some(&reviewer_binding),
    )
    .await?
    .expect("a reviewer token");
    service_account(&cluster, &namespace.name, "app-reader", None).await?;

    // OpenBao reviews login tokens at the cluster's API server, with the reviewer's token.
    let api_server = cluster.api_server()?;
    bao_cli(&bao, &["auth", "enable", "kubernetes"])?;
    let mut config = vec![
        format!("kubernetes_host={}", api_server.url),
        format!("token_reviewer_jwt={reviewer_token}"),
        "disable_local_ca_jwt=true".to_owned(),
    ];
    config.extend(
        api_server
            .ca_pem
            .map(|pem| format!("kubernetes_ca_cert={pem}")),
    );
    let mut args = vec!["write", "auth/kubernetes/config"];
    args.extend(config.iter().map(String::as_str));
    bao_cli(&bao, &args)?;
    bao_cli(
        &bao,
        &[
            "write",
            "sys/policies/acl/team-read",
            r#"policy=path "secret/data/team/*" { capabilities = ["read"] }"#,
        ],
    )?;
    let bound_namespace = format!("bound_service_account_namespaces={}", namespace.name);
    bao_cli(
        &bao,
        &[
            "write",
            "auth/kubernetes/role/app",
            "bound_service_account_names=app-reader",
            &bound_namespace,
            "token_policies=team-read",
        ],
    )?;

    let class = unique_name("e2e-vault-k8s");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "vault-ca"},
        "data": {"ca.crt": bao.ca_pem},
    }))?;
    Api::<ConfigMap>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &config_map)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "vault-k8s"},
        "spec": {"controller": class, "provider": {"vault": {
            "server": bao.url,
            "path": "secret",
            "version": "v2",
            "caProvider": {"type": "ConfigMap", "name": "vault-ca", "key": "ca.crt"},
            "auth": {"kubernetes": {
                "mountPath": "kubernetes",
                "role": "app",
                "serviceAccountRef": {"name": "app-reader"},
            }},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &store)
        .await?;
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "team-db"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "vault-k8s", "kind": "SecretStore"},
            "target": {"name": "team-db"},
            "data": [{"secretKey": "password",
                "remoteRef": {"key": "team/db", "property": "password"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let synced = eventually(
        WAIT,
        "target Secret synced with Kubernetes auth",
        || async {
            Ok(secrets
                .get_opt("team-db")
                .await?
                .map(|secret| string_data(&secret)))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()));
    Api::<ClusterRoleBinding>::all(cluster.client.clone())
        .delete(&reviewer_binding, &DeleteParams::default())
        .await?;
    let synced = synced?;
    assert_eq!(synced.get("password").map(String::as_str), Some("reviewed"));

    controller.stop().await?;
    namespace.delete().await
}
