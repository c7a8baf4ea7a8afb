//! What the ExternalSecret e2e suites share: a namespace with a `fake` SecretStore and a
//! controller of its own class, ExternalSecret manifests, and waits on the Ready condition.
//! Each test crate uses a part of it, hence the allowance below.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
    wait_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, ExternalSecretConditionType, SecretStore};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

pub const WAIT: Duration = Duration::from_secs(60);

/// Test data only: the fake provider serves what the store spec lists.
pub fn fake_data() -> Value {
    json!([
        {"key": "/db/user", "value": "app"},
        {"key": "/db/password", "value": "first-password"},
        {"key": "/db/config", "value": "{\"host\":\"db.local\",\"port\":\"5432\"}"},
    ])
}

pub fn secret_store(name: &str, class: &str, data: Value) -> anyhow::Result<SecretStore> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": name},
        "spec": {"controller": class, "provider": {"fake": {"data": data}}},
    }))?)
}

/// An ExternalSecret reading from the SecretStore `store`, with `spec` merged over the basics.
pub fn external_secret(name: &str, store: &str, spec: Value) -> anyhow::Result<ExternalSecret> {
    let mut manifest = json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": name},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": store, "kind": "SecretStore"},
            "data": [
                {"secretKey": "user", "remoteRef": {"key": "/db/user"}},
                {"secretKey": "password", "remoteRef": {"key": "/db/password"}},
            ],
        },
    });
    if let (Some(base), Value::Object(extra)) = (manifest["spec"].as_object_mut(), spec) {
        base.extend(extra);
    }
    Ok(serde_json::from_value(manifest)?)
}

/// The `Ready` condition as [status, reason, message], once there is one.
pub fn ready_of(es: &ExternalSecret) -> Option<[String; 3]> {
    let condition = es
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.r#type == ExternalSecretConditionType::Ready)?;
    Some([
        condition.status.clone(),
        condition.reason.clone().unwrap_or_default(),
        condition.message.clone().unwrap_or_default(),
    ])
}

/// Waits until the ExternalSecret's Ready condition has `reason`.
pub async fn wait_reason(
    api: &Api<ExternalSecret>,
    name: &str,
    reason: &str,
    controller: &ControllerProcess,
) -> anyhow::Result<(ExternalSecret, [String; 3])> {
    eventually(WAIT, &format!("ExternalSecret {name} {reason}"), || async {
        let es = api.get(name).await?;
        Ok(ready_of(&es)
            .filter(|ready| ready[1] == reason)
            .map(|ready| (es, ready)))
    })
    .await
    .map_err(|error| error.context(controller.log()))
}

/// Annotates the ExternalSecret (upstream's way to force a sync) every 2 s until its Ready
/// condition has `reason`: the controller may see the annotation before the store change.
pub async fn force_sync_until(
    api: &Api<ExternalSecret>,
    name: &str,
    reason: &str,
    controller: &ControllerProcess,
) -> anyhow::Result<(ExternalSecret, [String; 3])> {
    for attempt in 0..30 {
        let es = api.get(name).await?;
        if let Some(ready) = ready_of(&es).filter(|ready| ready[1] == reason) {
            return Ok((es, ready));
        }
        let annotation = json!({"metadata": {"annotations": {"force-sync": attempt.to_string()}}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(annotation))
            .await?;
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    anyhow::bail!(
        "ExternalSecret {name} never reached {reason}\n{}",
        controller.log()
    )
}

pub fn pairs(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// One controller, one namespace, and the APIs the tests use.
pub struct Setup {
    pub cluster: TestCluster,
    pub namespace: TestNamespace,
    pub class: String,
    pub controller: ControllerProcess,
}

impl Setup {
    /// A namespace holding the `fake` SecretStore `store`, validated (Ready), and a controller
    /// of its own class run with `args`.
    pub async fn start(prefix: &str, args: &[&str]) -> anyhow::Result<Self> {
        let setup = Self::start_unvalidated(prefix, args).await?;
        // The flood gate refuses a store until it is validated (as upstream's): tests that
        // expect a particular failure must not see "not ready" first.
        wait_store_ready(&setup.api(), "store", WAIT)
            .await
            .map_err(|error| error.context(setup.controller.log()))?;
        Ok(setup)
    }

    /// As [`Setup::start`] without waiting for the store: for a controller that does not
    /// watch the setup namespace.
    pub async fn start_unvalidated(prefix: &str, args: &[&str]) -> anyhow::Result<Self> {
        let cluster = TestCluster::connect().await?;
        install_crds(&cluster.client).await?;
        let namespace = TestNamespace::create(&cluster, prefix).await?;
        let class = unique_name("e2e-class");
        let controller = ControllerProcess::start(&cluster, &class, args).await?;
        let setup = Self {
            cluster,
            namespace,
            class,
            controller,
        };
        setup
            .api::<SecretStore>()
            .create(
                &PostParams::default(),
                &secret_store("store", &setup.class, fake_data())?,
            )
            .await?;
        Ok(setup)
    }

    pub fn client(&self) -> Client {
        self.cluster.client.clone()
    }

    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client(), &self.namespace.name)
    }

    /// Creates the generator `kind` (resource `plural`) named `name` with `spec` in the test's
    /// namespace.
    pub async fn create_generator(
        &self,
        kind: &str,
        plural: &str,
        name: &str,
        spec: Value,
    ) -> anyhow::Result<()> {
        let resource = kube::discovery::ApiResource {
            group: "generators.external-secrets.io".into(),
            version: "v1alpha1".into(),
            api_version: "generators.external-secrets.io/v1alpha1".into(),
            kind: kind.into(),
            plural: plural.into(),
        };
        let object: kube::api::DynamicObject = serde_json::from_value(json!({
            "apiVersion": "generators.external-secrets.io/v1alpha1",
            "kind": kind,
            "metadata": {"name": name},
            "spec": spec,
        }))?;
        Api::<kube::api::DynamicObject>::namespaced_with(
            self.client(),
            &self.namespace.name,
            &resource,
        )
        .create(&PostParams::default(), &object)
        .await?;
        Ok(())
    }

    pub async fn finish(self) -> anyhow::Result<()> {
        self.controller.stop().await?;
        self.namespace.delete().await
    }
}
