//! The aws provider end to end: the controller binary, run as a local process against the
//! cluster and pointed at moto's server on 127.0.0.1 through upstream's endpoint variables
//! (`AWS_SECRETSMANAGER_ENDPOINT`, `AWS_SSM_ENDPOINT`, `AWS_STS_ENDPOINT`), syncs an
//! ExternalSecret from Secrets Manager and Parameter Store with static keys read from a Secret,
//! follows a new secret version, and pushes a PushSecret's value to Secrets Manager (as a binary
//! secret tagged as ours) and deletes it again.
//!
//! Cluster-agnostic: only the controller talks to moto, and it runs on this machine.

// Shared with the provider tests, which use the parts this test does not.
#[allow(dead_code)]
#[path = "../../providers/tests/aws/moto_process.rs"]
mod moto_process;

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use moto_process::MotoProcess;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

/// Calls a Secrets Manager action on moto; its status and JSON answer.
fn secrets_manager(moto: &MotoProcess, action: &str, body: Value) -> (u16, Value) {
    let (status, answer) = moto.call(
        "secretsmanager",
        &format!("secretsmanager.{action}"),
        &body.to_string(),
    );
    (status, serde_json::from_str(&answer).unwrap_or(Value::Null))
}

/// Seeds moto: a JSON secret in Secrets Manager and a parameter in Parameter Store.
fn seed(moto: &MotoProcess) -> anyhow::Result<()> {
    let (status, answer) = secrets_manager(
        moto,
        "CreateSecret",
        json!({"Name": "app/db", "SecretString": r#"{"user":"admin","password":"first"}"#}),
    );
    anyhow::ensure!(status == 200, "CreateSecret: {status} {answer}");
    let body = json!({"Name": "/app/host", "Value": "db.local", "Type": "String"});
    let (status, answer) = moto.call("ssm", "AmazonSSM.PutParameter", &body.to_string());
    anyhow::ensure!(status == 200, "PutParameter: {status} {answer}");
    Ok(())
}

/// The static keys and one store per service, both reading the keys from one Secret.
async fn create_stores(cluster: &TestCluster, namespace: &str, class: &str) -> anyhow::Result<()> {
    let keys: Secret = serde_json::from_value(json!({
        "metadata": {"name": "aws-keys"},
        "stringData": {"access-key": "AKIDE2ETEST", "secret-key": "not-checked-by-moto"},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &keys)
        .await?;
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), namespace);
    for (name, service) in [("sm", "SecretsManager"), ("ps", "ParameterStore")] {
        let store: SecretStore = serde_json::from_value(json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "SecretStore",
            "metadata": {"name": name},
            "spec": {"controller": class, "provider": {"aws": {
                "service": service,
                "region": "eu-west-1",
                "secretsManager": {"forceDeleteWithoutRecovery": true},
                "auth": {"secretRef": {
                    "accessKeyIDSecretRef": {"name": "aws-keys", "key": "access-key"},
                    "secretAccessKeySecretRef": {"name": "aws-keys", "key": "secret-key"},
                }},
            }}},
        }))?;
        stores.create(&PostParams::default(), &store).await?;
    }
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_moto_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let moto = MotoProcess::start();
    seed(&moto)?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "aws").await?;
    let class = unique_name("e2e-aws");
    let endpoints = [
        ("AWS_SECRETSMANAGER_ENDPOINT", moto.url.as_str()),
        ("AWS_SSM_ENDPOINT", moto.url.as_str()),
        ("AWS_STS_ENDPOINT", moto.url.as_str()),
    ];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &endpoints).await?;
    create_stores(&cluster, &namespace.name, &class).await?;

    // Properties of a Secrets Manager JSON secret and a parameter, refreshed every second.
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "sm", "kind": "SecretStore"},
            "target": {"name": "db-credentials"},
            "data": [
                {"secretKey": "user", "remoteRef": {"key": "app/db", "property": "user"}},
                {"secretKey": "password", "remoteRef": {"key": "app/db", "property": "password"}},
                {"secretKey": "host", "remoteRef": {"key": "/app/host"},
                    "sourceRef": {"storeRef": {"name": "ps", "kind": "SecretStore"}}},
            ],
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
        ]
    };
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("first"),
        WAIT,
        "target Secret synced from moto",
        &controller,
    )
    .await?;

    // A new secret version reaches the Secret at the next refresh.
    let (status, answer) = secrets_manager(
        &moto,
        "PutSecretValue",
        json!({"SecretId": "app/db", "SecretString": r#"{"user":"admin","password":"second"}"#}),
    );
    anyhow::ensure!(status == 200, "PutSecretValue: {status} {answer}");
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("second"),
        WAIT,
        "target Secret follows moto",
        &controller,
    )
    .await?;

    // A PushSecret creates a secret tagged as ours, and deletes it when it is deleted.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "sm",
        json!({"token": "pushed-value"}),
        json!([{"match": {"secretKey": "token", "remoteRef": {"remoteKey": "pushed/token"}}}]),
    )
    .await?;
    let lookup = json!({"SecretId": "pushed/token"});
    let pushed = eventually(WAIT, "value pushed to moto", || async {
        let (status, answer) = secrets_manager(&moto, "GetSecretValue", lookup.clone());
        Ok((status == 200).then_some(answer))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    // Pushed as a binary secret, as upstream pushes (the JSON API shows it base64-encoded).
    let binary = pushed["SecretBinary"].as_str().unwrap_or_default();
    assert_eq!(STANDARD.decode(binary)?, b"pushed-value");
    let (_, described) = secrets_manager(&moto, "DescribeSecret", lookup.clone());
    assert_eq!(
        described["Tags"],
        json!([{"Key": "managed-by", "Value": "external-secrets"}])
    );
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret deleted from moto", || async {
        // AWS answers 400, moto 404: the error type is what both agree on.
        let (_, answer) = secrets_manager(&moto, "DescribeSecret", lookup.clone());
        Ok((answer["__type"] == "ResourceNotFoundException").then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
