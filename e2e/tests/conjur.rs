//! The conjur provider end to end: the controller binary, run as a local process against the
//! cluster, authenticates with a host's API key (login and key from a Secret) at the Conjur
//! contract fake (`contract-fakes::conjur`, on 127.0.0.1 in this test process, trusted through
//! the store's `caBundle`), syncs an ExternalSecret from variables (a value whose id has a
//! `/`, a JSON member, `dataFrom.extract` and `dataFrom.find` by annotations) and follows a
//! changed value.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use base64::Engine as _;
use contract_fakes::conjur::ConjurFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, install_crds, unique_name, wait_for_secret_data,
    wait_for_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const LOGIN: &str = "host/e2e/eso";
const API_KEY: &str = "e2e-conjur-api-key";

/// The credentials Secret and a store of account `shop` on `fake`.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &ConjurFake,
) -> anyhow::Result<()> {
    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "conjur"},
        "stringData": {"login": LOGIN, "apiKey": API_KEY},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &credentials)
        .await?;
    let ca = base64::engine::general_purpose::STANDARD.encode(&fake.server.ca_pem);
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "conjur"},
        "spec": {"controller": class, "provider": {"conjur": {
            "url": fake.server.url,
            "caBundle": ca,
            "auth": {"apikey": {
                "account": "shop",
                "userRef": {"name": "conjur", "key": "login"},
                "apiKeyRef": {"name": "conjur", "key": "apiKey"},
            }},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_conjur_variables() -> anyhow::Result<()> {
    let fake = ConjurFake::start("shop").await?;
    fake.add_api_key(LOGIN, API_KEY);
    fake.set_variable("prod/db/password", Some("first"), &[]);
    fake.set_variable("prod/config", Some(r#"{"region":"eu","tier":"gold"}"#), &[]);
    fake.set_variable("prod/api-token", Some("tok"), &[("eso-sync", "yes")]);
    fake.set_variable("prod/other", Some("not-tagged"), &[("eso-sync", "no")]);
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "conjur").await?;
    let class = unique_name("e2e-conjur");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    wait_for_store_ready(&stores, "conjur", "ReadOnly", WAIT, &controller).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "conjur", "kind": "SecretStore"},
            "target": {"name": "app-config"},
            "data": [
                {"secretKey": "password", "remoteRef": {"key": "prod/db/password"}},
                {"secretKey": "region", "remoteRef": {"key": "prod/config", "property": "region"}},
            ],
            "dataFrom": [
                {"extract": {"key": "prod/config"}},
                {"find": {"tags": {"eso-sync": "yes"}},
                 "rewrite": [{"regexp": {"source": "prod/(.*)", "target": "$1"}}]},
            ],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = |password: &'static str| {
        [
            ("password", password),
            ("region", "eu"),
            ("tier", "gold"),
            ("api-token", "tok"),
        ]
    };
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("first"),
        WAIT,
        "target Secret synced from Conjur",
        &controller,
    )
    .await?;

    // A changed value reaches the Secret at the next refresh.
    fake.set_variable("prod/db/password", Some("second"), &[]);
    wait_for_secret_data(
        &secrets,
        "app-config",
        &expected("second"),
        WAIT,
        "target Secret follows Conjur",
        &controller,
    )
    .await?;

    controller.stop().await?;
    namespace.delete().await
}
