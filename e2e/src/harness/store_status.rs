//! Waiting for a SecretStore to be Ready with the capabilities its backend reports (and, after
//! the last PushSecret with `deletionPolicy: Delete` went, released), and the CA file a
//! controller is told to trust a contract fake through: steps every backend's e2e test takes.

use std::time::Duration;

use external_secrets_crds::v1::SecretStore;
use kube::Api;

use super::{ControllerProcess, eventually, unique_name};

/// Waits up to `timeout` until store `name` of `stores` has condition Ready=True and
/// `status.capabilities` equal to `capabilities`; a timeout's error carries `controller`'s log.
pub async fn wait_for_store_ready(
    stores: &Api<SecretStore>,
    name: &str,
    capabilities: &str,
    timeout: Duration,
    controller: &ControllerProcess,
) -> anyhow::Result<()> {
    let what = format!("store {name} ready and {capabilities}");
    eventually(timeout, &what, || async {
        let status = stores.get(name).await?.status.unwrap_or_default();
        let ready = status
            .conditions
            .iter()
            .any(|condition| condition.r#type == "Ready" && condition.status == "True");
        Ok((ready && status.capabilities.as_deref() == Some(capabilities)).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))
}

/// Writes a contract fake's CA `pem` to a new temporary file named after `prefix`; its path, for
/// the controller's `SSL_CERT_FILE`.
pub fn fake_ca_file(prefix: &str, pem: &str) -> anyhow::Result<String> {
    let path = std::env::temp_dir().join(format!("{}.pem", unique_name(prefix)));
    std::fs::write(&path, pem)?;
    Ok(path.to_string_lossy().into_owned())
}

/// Waits until store `name` no longer carries the finalizer stores keep while PushSecrets with
/// `deletionPolicy: Delete` use them: a test that deleted its last such PushSecret waits for this
/// before stopping the controller, or its namespace could not be deleted afterwards.
pub async fn wait_for_store_released(
    stores: &Api<SecretStore>,
    name: &str,
    controller: &ControllerProcess,
) -> anyhow::Result<()> {
    const FINALIZER: &str = "secretstore.externalsecrets.io/finalizer";
    eventually(
        Duration::from_secs(60),
        &format!("store {name} released"),
        || async {
            let held = stores
                .get_opt(name)
                .await?
                .and_then(|store| store.metadata.finalizers)
                .is_some_and(|finalizers| finalizers.iter().any(|f| f == FINALIZER));
            Ok((!held).then_some(()))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))
}
