//! Waiting for a target Secret to hold exactly the expected data: how every backend's e2e test
//! checks what the controller synced (on a real cluster writes land later, so it polls).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use super::{ControllerProcess, eventually, string_data};

/// Waits up to `timeout` until Secret `name` of `secrets` holds exactly `expected` (keys and
/// UTF-8 values). `what` names the wait; a timeout's error carries `controller`'s log.
pub async fn wait_for_secret_data(
    secrets: &Api<Secret>,
    name: &str,
    expected: &[(&str, &str)],
    timeout: Duration,
    what: &str,
    controller: &ControllerProcess,
) -> anyhow::Result<()> {
    let expected: BTreeMap<String, String> = expected
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    eventually(timeout, what, || async {
        let Some(secret) = secrets.get_opt(name).await? else {
            return Ok(None);
        };
        Ok((string_data(&secret) == expected).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))
}
