//! The crd provider end to end: a SecretStore reading objects of a custom kind in its own
//! namespace, authenticating as a ServiceAccount (the controller requests its tokens), with the
//! API server's address and CA taken from the kubeconfig. An ExternalSecret syncs one property,
//! the members of a nested object (`dataFrom.extract`) and found objects (`dataFrom.find`); the
//! store reports itself Ready and ReadOnly.
//!
//! Cluster-agnostic: the kind is a throwaway CRD under a unique group, and the ServiceAccount is
//! granted exactly `get` and `list` on it in the namespace (a Role and RoleBinding), as a real
//! cluster requires.

mod support;

use e2e::harness::{
    ControllerProcess, TestCluster, TestCrd, TestNamespace, eventually, install_crds, string_data,
    unique_name,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};
use support::{WAIT, wait_reason};

/// A namespaced kind whose spec takes anything.
fn credentials_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "placeholder"},
        "spec": {
            "group": "crd-provider.e2e.external-secrets.io",
            "scope": "Namespaced",
            "names": {"kind": "DbCredential", "plural": "dbcredentials", "singular": "dbcredential"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    })
}

/// ServiceAccount `name` in `namespace`, allowed to get and list `crd`'s objects there.
async fn reader_account(
    cluster: &TestCluster,
    namespace: &str,
    crd: &TestCrd,
    name: &str,
) -> anyhow::Result<()> {
    let account: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    Api::<ServiceAccount>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &account)
        .await?;
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": name},
        "rules": [{"apiGroups": [crd.group], "resources": ["dbcredentials"],
            "verbs": ["get", "list"]}],
    }))?;
    Api::<Role>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &role)
        .await?;
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }))?;
    Api::<RoleBinding>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &binding)
        .await?;
    Ok(())
}

#[tokio::test]
async fn custom_resources_sync_into_secrets() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let crd = TestCrd::create(&cluster, credentials_crd()).await?;
    let app = TestNamespace::create(&cluster, "crd-app").await?;
    reader_account(&cluster, &app.name, &crd, "crd-reader").await?;
    let objects: Api<DynamicObject> =
        Api::namespaced_with(cluster.client.clone(), &app.name, &crd.resource("v1"));
    for (name, spec) in [
        (
            "orders",
            json!({"password": "orders-pass", "connection": {"host": "db.local", "port": 5432}}),
        ),
        ("billing", json!({"password": "billing-pass"})),
    ] {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": format!("{}/v1", crd.group),
            "kind": "DbCredential",
            "metadata": {"name": name},
            "spec": spec,
        }))?;
        objects.create(&PostParams::default(), &object).await?;
    }

    let class = unique_name("e2e-crd");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let server = cluster.api_server()?.store_server();
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "custom-resources"},
        "spec": {"controller": class, "provider": {"crd": {
            "server": server,
            "auth": {"serviceAccount": {"name": "crd-reader"}},
            "resource": {"group": crd.group, "version": "v1", "kind": "DbCredential"},
        }}},
    }))?;
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &app.name);
    stores.create(&PostParams::default(), &store).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "orders-db"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "custom-resources", "kind": "SecretStore"},
            "data": [{"secretKey": "password",
                "remoteRef": {"key": "orders", "property": "spec.password"}}],
            "dataFrom": [
                {"extract": {"key": "orders", "property": "spec.connection"}},
                {"find": {"name": {"regexp": "^bill"}}},
            ],
        },
    }))?;
    let external_secrets: Api<ExternalSecret> = Api::namespaced(cluster.client.clone(), &app.name);
    external_secrets
        .create(&PostParams::default(), &external_secret)
        .await?;
    wait_reason(&external_secrets, "orders-db", "SecretSynced", &controller).await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &app.name);
    let synced = secrets.get("orders-db").await?;
    let data = string_data(&synced);
    assert_eq!(
        data.keys().collect::<Vec<_>>(),
        ["billing", "host", "password", "port"]
    );
    assert_eq!(data["host"], "db.local");
    assert_eq!(data["password"], "orders-pass");
    assert_eq!(data["port"], "5432");
    let billing: Value = serde_json::from_str(&data["billing"])?;
    assert_eq!(billing["spec"]["password"], "billing-pass");
    assert_eq!(billing["kind"], "DbCredential");

    let capabilities = eventually(WAIT, "store Ready and ReadOnly", || async {
        let store = stores.get("custom-resources").await?;
        Ok(store.status.and_then(|status| status.capabilities))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(capabilities, "ReadOnly");

    controller.stop().await?;
    app.delete().await?;
    crd.delete().await
}
