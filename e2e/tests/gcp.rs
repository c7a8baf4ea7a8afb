//! The gcpsm provider end to end: the controller binary, run as a local process against the
//! cluster and pointed at cloudbox's Secret Manager emulator on 127.0.0.1 (through the
//! project's launcher) with `GCP_SECRETMANAGER_ENDPOINT`, authenticates with a service-account
//! key read from a Secret (its tokens from the Google token endpoint contract fake), syncs an
//! ExternalSecret from a seeded secret, follows a new version, and pushes a PushSecret's value
//! (created with the ownership label) that a second ExternalSecret reads back; deleting the
//! PushSecret deletes the pushed secret. A `GCRAccessToken` generator (directly and inside a
//! `ClusterGenerator`) fills ExternalSecrets with registry logins from the same key. Upstream's
//! example stores (`../shared/conformance/manifests`, placeholders filled) become Ready: the one
//! without `auth` through the default credentials (`GOOGLE_APPLICATION_CREDENTIALS`), the
//! workload identity one through TokenRequest and the Secure Token / IAM Credentials fake.
//!
//! Cluster-agnostic: only the controller talks to cloudbox and the fake, and it runs here.

// Shared with the provider tests.
#[path = "../../providers/tests/support/gcp/cloudbox_process.rs"]
mod cloudbox_process;

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use cloudbox_process::CloudboxProcess;
use contract_fakes::google::TokenEndpoint;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    string_data, unique_name,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

/// The provider tests' key file (its `token_uri` is a placeholder).
const KEY_FILE: &str = include_str!("../../providers/tests/data/gcp-service-account.json");
const ACCOUNT: &str = "eso-test@eso-test.iam.gserviceaccount.com";
const PROJECT: &str = "eso-e2e";

/// The token endpoint fake for the test key's account.
async fn token_endpoint() -> anyhow::Result<TokenEndpoint> {
    let key: Value = serde_json::from_str(KEY_FILE)?;
    let pem = key["private_key"].as_str().unwrap_or_default();
    Ok(TokenEndpoint::start(ACCOUNT, pem).await?)
}

/// Creates Secret `gcp-key` (item `key.json`: the test key, tokens from `tokens`) in
/// `namespace`; the namespace's Secrets API.
async fn create_key_secret(
    cluster: &TestCluster,
    namespace: &TestNamespace,
    tokens: &TokenEndpoint,
) -> anyhow::Result<Api<Secret>> {
    let key_secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "gcp-key"},
        "stringData": {"key.json": KEY_FILE.replace("TOKEN_URI", &tokens.token_uri())},
    }))?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    secrets.create(&PostParams::default(), &key_secret).await?;
    Ok(secrets)
}

/// Calls the emulator under the project; panics unless it answers 2xx.
fn call(cloudbox: &CloudboxProcess, method: &str, path: &str, body: Value) -> Value {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let path = format!("/v1/projects/{PROJECT}/{path}");
    let (status, answer) = cloudbox.call(method, &path, &body);
    assert!(
        (200..300).contains(&status),
        "cloudbox {method} {path}: {status} {answer}"
    );
    serde_json::from_str(&answer).unwrap_or_default()
}

fn add_version(cloudbox: &CloudboxProcess, name: &str, value: &str) {
    let body = json!({"payload": {"data": STANDARD.encode(value)}});
    call(
        cloudbox,
        "POST",
        &format!("secrets/{name}:addVersion"),
        body,
    );
}

/// An ExternalSecret reading `key` (property `property`, if any) into `target`.
fn external_secret(name: &str, target: &str, key: &str, property: Option<&str>) -> Value {
    let mut remote_ref = json!({"key": key});
    if let Some(property) = property {
        remote_ref["property"] = json!(property);
    }
    json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": name},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "gcp", "kind": "SecretStore"},
            "target": {"name": target},
            "data": [{"secretKey": "value", "remoteRef": remote_ref}],
        },
    })
}

#[tokio::test]
async fn external_secrets_sync_from_cloudbox_and_push_secrets_round_trip() -> anyhow::Result<()> {
    let cloudbox = CloudboxProcess::start();
    let tokens = token_endpoint().await?;
    let labels = json!({"replication": {"automatic": {}}});
    call(&cloudbox, "POST", "secrets?secretId=db", labels);
    add_version(&cloudbox, "db", r#"{"user":"admin","password":"first"}"#);

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "gcp").await?;
    let class = unique_name("e2e-gcp");
    let endpoint = [("GCP_SECRETMANAGER_ENDPOINT", cloudbox.url.as_str())];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &endpoint).await?;

    let secrets = create_key_secret(&cluster, &namespace, &tokens).await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "gcp"},
        "spec": {"controller": class, "provider": {"gcpsm": {
            "projectID": PROJECT,
            "auth": {"secretRef": {"secretAccessKeySecretRef": {"name": "gcp-key", "key": "key.json"}}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &store)
        .await?;

    let external_secrets: Api<ExternalSecret> =
        Api::namespaced(cluster.client.clone(), &namespace.name);
    let db = external_secret("db", "db-credentials", "db", Some("password"));
    external_secrets
        .create(&PostParams::default(), &serde_json::from_value(db)?)
        .await?;
    let holds = |target: &'static str, expected: &'static str| {
        let secrets = secrets.clone();
        move || {
            let secrets = secrets.clone();
            async move {
                let Some(secret) = secrets.get_opt(target).await? else {
                    return Ok(None);
                };
                let wanted = BTreeMap::from([("value".to_owned(), expected.to_owned())]);
                Ok((string_data(&secret) == wanted).then_some(()))
            }
        }
    };
    eventually(
        WAIT,
        "target Secret synced from cloudbox",
        holds("db-credentials", "first"),
    )
    .await
    .map_err(|error| error.context(controller.log()))?;
    add_version(&cloudbox, "db", r#"{"user":"admin","password":"second"}"#);
    eventually(
        WAIT,
        "target Secret follows the new version",
        holds("db-credentials", "second"),
    )
    .await
    .map_err(|error| error.context(controller.log()))?;

    // A PushSecret creates a secret labelled as ours; an ExternalSecret reads it back.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "gcp",
        json!({"token": "pushed-value"}),
        json!([{"match": {"secretKey": "token", "remoteRef": {"remoteKey": "pushed-token"}}}]),
    )
    .await?;
    let secret_path = format!("/v1/projects/{PROJECT}/secrets/pushed-token");
    let pushed = eventually(WAIT, "value pushed to cloudbox", || async {
        let (status, answer) =
            cloudbox.call("GET", &format!("{secret_path}/versions/latest:access"), "");
        Ok((status == 200).then_some(answer))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    let pushed: Value = serde_json::from_str(&pushed)?;
    let data = pushed["payload"]["data"].as_str().unwrap_or_default();
    assert_eq!(STANDARD.decode(data)?, b"pushed-value");
    let (_, metadata) = cloudbox.call("GET", &secret_path, "");
    let metadata: Value = serde_json::from_str(&metadata)?;
    assert_eq!(metadata["labels"]["managed-by"], "external-secrets");
    let read_back = external_secret("read-back", "read-back", "pushed-token", None);
    external_secrets
        .create(&PostParams::default(), &serde_json::from_value(read_back)?)
        .await?;
    eventually(
        WAIT,
        "pushed value read back",
        holds("read-back", "pushed-value"),
    )
    .await
    .map_err(|error| error.context(controller.log()))?;

    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret deleted from cloudbox", || async {
        Ok((cloudbox.call("GET", &secret_path, "").0 == 404).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert!(
        tokens.issued() >= 1,
        "the controller authenticated at the token endpoint"
    );

    controller.stop().await?;
    namespace.delete().await
}

/// A `dataFrom` ExternalSecret named `name` filled by the generator `kind`/`generator`.
fn generated(name: &str, kind: &str, generator: &str) -> Value {
    json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": name},
        "spec": {
            "refreshInterval": "1h",
            "target": {"name": name},
            "dataFrom": [{"sourceRef": {"generatorRef": {
                "apiVersion": "generators.external-secrets.io/v1alpha1",
                "kind": kind, "name": generator}}}],
        },
    })
}

#[tokio::test]
async fn gcr_access_tokens_fill_data_from() -> anyhow::Result<()> {
    use external_secrets_crds::generators::{ClusterGenerator, GcrAccessToken};

    let tokens = token_endpoint().await?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "gcr").await?;
    let class = unique_name("e2e-gcr");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let secrets = create_key_secret(&cluster, &namespace, &tokens).await?;
    let spec = json!({
        "projectID": PROJECT,
        "auth": {"secretRef": {"secretAccessKeySecretRef": {"name": "gcp-key", "key": "key.json"}}},
    });
    let generator: GcrAccessToken = serde_json::from_value(json!({
        "apiVersion": "generators.external-secrets.io/v1alpha1",
        "kind": "GCRAccessToken",
        "metadata": {"name": "registry"},
        "spec": spec,
    }))?;
    Api::<GcrAccessToken>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &generator)
        .await?;
    // The same spec inside a ClusterGenerator: its key resolves in the ExternalSecret's namespace.
    let cluster_generator_name = unique_name("gcr");
    let wrapped: ClusterGenerator = serde_json::from_value(json!({
        "apiVersion": "generators.external-secrets.io/v1alpha1",
        "kind": "ClusterGenerator",
        "metadata": {"name": cluster_generator_name},
        "spec": {"kind": "GCRAccessToken", "generator": {"gcrAccessTokenSpec": spec}},
    }))?;
    let cluster_generators: Api<ClusterGenerator> = Api::all(cluster.client.clone());
    cluster_generators
        .create(&PostParams::default(), &wrapped)
        .await?;

    let external_secrets: Api<ExternalSecret> =
        Api::namespaced(cluster.client.clone(), &namespace.name);
    for (name, kind, generator) in [
        ("direct", "GCRAccessToken", "registry"),
        (
            "wrapped",
            "ClusterGenerator",
            cluster_generator_name.as_str(),
        ),
    ] {
        let manifest = generated(name, kind, generator);
        external_secrets
            .create(&PostParams::default(), &serde_json::from_value(manifest)?)
            .await?;
    }
    let mut passwords = Vec::new();
    for name in ["direct", "wrapped"] {
        let data = eventually(WAIT, "registry login generated", || async {
            Ok(secrets
                .get_opt(name)
                .await?
                .map(|secret| string_data(&secret)))
        })
        .await
        .map_err(|error| error.context(controller.log()))?;
        assert_eq!(
            data.keys().map(String::as_str).collect::<Vec<_>>(),
            ["expiry", "password", "username"]
        );
        assert_eq!(data["username"], "oauth2accesstoken");
        assert!(
            data["password"].starts_with("ya29.fake-"),
            "a token the endpoint issued"
        );
        let expiry: u64 = data["expiry"].parse()?;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
        assert!(expiry > now.as_secs(), "expiry is a future Unix time");
        passwords.push(data["password"].clone());
    }
    assert_ne!(
        passwords[0], passwords[1],
        "each generation asks for a token"
    );
    assert!(tokens.issued() >= 2);

    cluster_generators
        .delete(&cluster_generator_name, &DeleteParams::default())
        .await?;
    controller.stop().await?;
    namespace.delete().await
}

/// An upstream example store manifest (`../shared/conformance/manifests/<file>`) with its
/// placeholders filled, named `name` in `namespace`, served by controller `class`.
fn example_store(file: &str, name: &str, namespace: &str, class: &str) -> anyhow::Result<Value> {
    let path = std::path::Path::new(
        &std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../shared/conformance/manifests")
    .join(file);
    let text = std::fs::read_to_string(&path)?
        .replace("[PROJECT_ID]", PROJECT)
        .replace("[CLUSTER_PROJECT_ID]", "cluster-project")
        .replace("[CLUSTER_LOCATION]", "europe-west1")
        .replace("[CLUSTER_NAME]", "c1");
    let mut store: Value = serde_yaml::from_str(&text)?;
    store["metadata"] = json!({"name": name, "namespace": namespace});
    store["spec"]["controller"] = json!(class);
    Ok(store)
}

#[tokio::test]
async fn upstream_example_stores_become_ready() -> anyhow::Result<()> {
    use contract_fakes::google::WorkloadIdentityEndpoints;
    use k8s_openapi::api::core::v1::ServiceAccount;

    let cloudbox = CloudboxProcess::start();
    let tokens = token_endpoint().await?;
    let provider = "https://container.googleapis.com/v1/projects/cluster-project/locations/europe-west1/clusters/c1";
    let identity =
        WorkloadIdentityEndpoints::start("cluster-project.svc.id.goog", provider, ACCOUNT).await?;
    let key_path = std::env::temp_dir().join(format!("{}.json", unique_name("gcp-adc")));
    std::fs::write(
        &key_path,
        KEY_FILE.replace("TOKEN_URI", &tokens.token_uri()),
    )?;

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "gcp-examples").await?;
    let class = unique_name("e2e-gcp-examples");
    let key_file = key_path.to_string_lossy().into_owned();
    let environment = [
        ("GCP_SECRETMANAGER_ENDPOINT", cloudbox.url.as_str()),
        ("GOOGLE_APPLICATION_CREDENTIALS", key_file.as_str()),
        ("GCP_SECURETOKEN_ENDPOINT", identity.server.url.as_str()),
        ("GCP_IAMCREDENTIALS_ENDPOINT", identity.server.url.as_str()),
    ];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &environment).await?;
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "demo-secrets-sa"}}))?;
    Api::<ServiceAccount>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &account)
        .await?;
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    // No auth: the default credentials (the key file); workload identity with the cluster named.
    let examples = [
        (
            "default-credentials",
            "gcpsm-wif-core-controller-secret-store.yaml",
        ),
        (
            "workload-identity",
            "gcpsm-wif-sa-secret-store-with-explicit-name-and-location.yaml",
        ),
    ];
    for (name, file) in examples {
        let store = example_store(file, name, &namespace.name, &class)?;
        stores
            .create(&PostParams::default(), &serde_json::from_value(store)?)
            .await?;
    }
    for (name, _) in examples {
        eventually(WAIT, &format!("example store {name} Ready"), || async {
            let store = stores.get(name).await?;
            let ready = store.status.as_ref().and_then(|status| {
                status
                    .conditions
                    .iter()
                    .find(|condition| condition.r#type == "Ready")
                    .map(|condition| condition.status.clone())
            });
            Ok((ready.as_deref() == Some("True")).then_some(()))
        })
        .await
        .map_err(|error| error.context(controller.log()))?;
    }
    assert!(tokens.issued() >= 1, "the key file's account authenticated");
    assert!(
        identity.counts().0 >= 1,
        "the ServiceAccount token was exchanged"
    );

    controller.stop().await?;
    std::fs::remove_file(&key_path)?;
    namespace.delete().await
}
