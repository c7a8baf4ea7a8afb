//! OpenBao behind the fault proxy, as the faults and chaos tests use it: a dev server holding
//! `app/db` (`user=admin`, `password=first`) and, in a test namespace, the SecretStore `vault`
//! that reaches it only through the proxy with the root token from Secret `vault-token`.
//! Included by path next to `bao_process.rs` (the including test declares both).

use contract_fakes::fault_proxy::FaultProxy;
use external_secrets_crds::v1::SecretStore;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::bao_process::{BaoProcess, ROOT_TOKEN};

/// Starts OpenBao with `app/db` written, and a healthy proxy in front of it.
pub async fn start() -> anyhow::Result<(BaoProcess, FaultProxy)> {
    let bao = BaoProcess::start();
    let put = bao
        .cli()
        .args([
            "kv",
            "put",
            "-mount=secret",
            "app/db",
            "user=admin",
            "password=first",
        ])
        .output()?;
    anyhow::ensure!(
        put.status.success(),
        "{}",
        String::from_utf8_lossy(&put.stderr)
    );
    let proxy = FaultProxy::start(&bao.url, &bao.ca_pem).await?;
    Ok((bao, proxy))
}

/// Creates the token Secret and the store `vault` of controller class `class` in `namespace`,
/// with `spec_extra` (e.g. `retrySettings`) merged into its spec.
pub async fn create_store(
    client: &Client,
    namespace: &str,
    class: &str,
    proxy: &FaultProxy,
    spec_extra: Value,
) -> anyhow::Result<()> {
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "vault-token"},
        "stringData": {"token": ROOT_TOKEN},
    }))?;
    Api::<Secret>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &token)
        .await?;
    let mut spec = json!({
        "controller": class,
        "provider": {"vault": {
            "server": proxy.url,
            "path": "secret",
            "version": "v2",
            "auth": {"tokenSecretRef": {"name": "vault-token", "key": "token"}},
        }},
    });
    if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), spec_extra) {
        spec.extend(extra);
    }
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "vault"},
        "spec": spec,
    }))?;
    Api::<SecretStore>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}
