//! The PushSecret every backend's e2e test drives: a source Secret and a PushSecret that pushes
//! its entries to one SecretStore at refresh `1h` and deletes them when it is deleted.

use external_secrets_crds::v1alpha1::PushSecret;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

/// Creates Secret `source` with `string_data` and PushSecret `push` of `data` entries to
/// SecretStore `store` in `namespace`; returns the PushSecrets API of that namespace (for the
/// test's deletion at the end).
pub async fn create_push_secret(
    client: &Client,
    namespace: &str,
    store: &str,
    string_data: Value,
    data: Value,
) -> anyhow::Result<Api<PushSecret>> {
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "source"},
        "stringData": string_data,
    }))?;
    Api::<Secret>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &source)
        .await?;
    let push_secret: PushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": "push"},
        "spec": {
            "refreshInterval": "1h",
            "deletionPolicy": "Delete",
            "secretStoreRefs": [{"name": store, "kind": "SecretStore"}],
            "selector": {"secret": {"name": "source"}},
            "data": data,
        },
    }))?;
    let push_secrets: Api<PushSecret> = Api::namespaced(client.clone(), namespace);
    push_secrets
        .create(&PostParams::default(), &push_secret)
        .await?;
    Ok(push_secrets)
}
