//! The oracle provider end to end: the controller binary, run as a local process against the
//! cluster with `OCI_SECRETS_ENDPOINT`, `OCI_VAULTS_ENDPOINT` and `OCI_KMS_ENDPOINT` naming the
//! OCI Vault contract fake (`contract-fakes::oracle`, on 127.0.0.1 in this test process, which
//! verifies every request's signature with the test API key's public half) and `SSL_CERT_FILE`
//! its CA, signs its requests with the API key from a Secret, syncs an ExternalSecret (a value,
//! a JSON property, and a find by name), follows a changed secret, and pushes a PushSecret's
//! value into the vault with the store's encryption key, scheduled for deletion when the
//! PushSecret is deleted.
//!
//! A second test runs a store without `auth` (instance principal) against the instance
//! metadata and X.509 federation fakes (`contract-fakes::oracle_identity`), named to the
//! controller through the OCI SDKs' `OCI_METADATA_BASE_URL` and `OCI_SDK_AUTH_CLIENT_REGION_URL`.
//!
//! Cluster-agnostic: only the controller talks to the fakes, and it runs on this machine.

use std::time::Duration;

use contract_fakes::oracle::{OracleFake, Tenancy};
use contract_fakes::oracle_identity::{InstanceIdentity, InstanceMetadata};
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, fake_ca_file,
    install_crds, unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const TENANCY: &str = "ocid1.tenancy.oc1..e2e";
const USER: &str = "ocid1.user.oc1..e2e";
const FINGERPRINT: &str = "db:03:f0:60:cc:74:92:e4:4a:56:b1:be:1c:ed:a5:21";
const VAULT: &str = "ocid1.vault.oc1..e2e";
const COMPARTMENT: &str = "ocid1.compartment.oc1..e2e";
const KEY: &str = "ocid1.key.oc1..e2e";

/// The test API key (providers/tests/data), PKCS#8 PEM.
fn private_key() -> anyhow::Result<String> {
    let manifest = std::env::var("CARGO_MANIFEST_DIR")?;
    let path = std::path::Path::new(&manifest).join("../providers/tests/data/oci-api-key.pem");
    Ok(std::fs::read_to_string(path)?)
}

/// The OCI Vault fake of the test tenancy, verifying signatures with `key`'s public half.
async fn start_fake(key: &str) -> anyhow::Result<OracleFake> {
    let tenancy = Tenancy {
        key_id: format!("{TENANCY}/{USER}/{FINGERPRINT}"),
        vault: VAULT.into(),
        compartment: COMPARTMENT.into(),
        encryption_key: KEY.into(),
    };
    Ok(OracleFake::start(tenancy, key).await?)
}

/// The API key Secret and a store on the fake's vault.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    key: &str,
) -> anyhow::Result<()> {
    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "oci"},
        "stringData": {"privateKey": key, "fingerprint": FINGERPRINT},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &credentials)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "oracle"},
        "spec": {"controller": class, "provider": {"oracle": {
            "region": "us-ashburn-1",
            "vault": VAULT,
            "compartment": COMPARTMENT,
            "encryptionKey": KEY,
            "auth": {
                "tenancy": TENANCY,
                "user": USER,
                "secretRef": {
                    "privatekey": {"name": "oci", "key": "privateKey"},
                    "fingerprint": {"name": "oci", "key": "fingerprint"},
                },
            },
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_oci_vault_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let key = private_key()?;
    let fake = start_fake(&key).await?;
    fake.put_secret(VAULT, "db-password", "first", &[]);
    fake.put_secret(VAULT, "db-config", r#"{"user":"admin"}"#, &[]);
    fake.put_secret(VAULT, "feature-a", "on", &[]);
    fake.put_secret(VAULT, "feature-b", "off", &[]);
    let ca = fake_ca_file("oracle-e2e-ca", &fake.server.ca_pem)?;

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "oracle").await?;
    let class = unique_name("e2e-oracle");
    let url = fake.server.url.as_str();
    let env = [
        ("SSL_CERT_FILE", ca.as_str()),
        ("OCI_SECRETS_ENDPOINT", url),
        ("OCI_VAULTS_ENDPOINT", url),
        ("OCI_KMS_ENDPOINT", url),
    ];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    create_store(&cluster, &namespace.name, &class, &key).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "oracle", "kind": "SecretStore"},
            "target": {"name": "app-credentials"},
            "data": [
                {"secretKey": "password", "remoteRef": {"key": "db-password"}},
                {"secretKey": "user", "remoteRef": {"key": "db-config", "property": "user"}},
            ],
            "dataFrom": [{"find": {"name": {"regexp": "^feature-"}}}],
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
            ("feature-a", "on"),
            ("feature-b", "off"),
        ]
    };
    wait_for_secret_data(
        &secrets,
        "app-credentials",
        &expected("first"),
        WAIT,
        "target Secret synced from OCI Vault",
        &controller,
    )
    .await?;

    // A new version reaches the Secret at the next refresh.
    fake.put_secret(VAULT, "db-password", "second", &[]);
    wait_for_secret_data(
        &secrets,
        "app-credentials",
        &expected("second"),
        WAIT,
        "target Secret follows OCI Vault",
        &controller,
    )
    .await?;

    // A PushSecret creates a secret in the vault; deleting it schedules the secret's deletion.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "oracle",
        json!({"token": "pushed-value"}),
        json!([{"match": {"secretKey": "token", "remoteRef": {"remoteKey": "pushed-token"}}}]),
    )
    .await?;
    eventually(WAIT, "value pushed to OCI Vault", || async {
        let pushed = fake.secret(VAULT, "pushed-token");
        Ok((pushed == Some(("pushed-value".to_owned(), false))).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret scheduled for deletion", || async {
        let pushed = fake.secret(VAULT, "pushed-token");
        Ok(pushed.is_some_and(|(_, scheduled)| scheduled).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}

#[tokio::test]
async fn external_secrets_sync_with_the_instance_principal() -> anyhow::Result<()> {
    let key = private_key()?;
    let fake = start_fake(&key).await?;
    fake.put_secret(VAULT, "db-password", "from-instance", &[]);
    let identity = InstanceIdentity::new("ocid1.tenancy.oc1..e2e-instance", &key)?;
    fake.register_instance(&identity, 3600);
    let metadata = InstanceMetadata::start(&identity).await?;
    let ca = fake_ca_file("oracle-instance-e2e-ca", &fake.server.ca_pem)?;

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "oracle-instance").await?;
    let class = unique_name("e2e-oracle-instance");
    let url = fake.server.url.as_str();
    let metadata_url = metadata.base_url();
    let env = [
        ("SSL_CERT_FILE", ca.as_str()),
        ("OCI_SECRETS_ENDPOINT", url),
        ("OCI_VAULTS_ENDPOINT", url),
        ("OCI_KMS_ENDPOINT", url),
        ("OCI_SDK_AUTH_CLIENT_REGION_URL", url),
        ("OCI_METADATA_BASE_URL", metadata_url.as_str()),
    ];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "oracle"},
        "spec": {"controller": class, "provider": {"oracle": {
            "region": "us-ashburn-1",
            "vault": VAULT,
            "principalType": "InstancePrincipal",
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &store)
        .await?;
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "oracle", "kind": "SecretStore"},
            "target": {"name": "app-credentials"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "db-password"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    wait_for_secret_data(
        &secrets,
        "app-credentials",
        &[("password", "from-instance")],
        WAIT,
        "target Secret synced as the instance principal",
        &controller,
    )
    .await?;
    anyhow::ensure!(
        fake.federations() >= 1,
        "the controller never federated at the identity service"
    );
    controller.stop().await?;
    namespace.delete().await
}
