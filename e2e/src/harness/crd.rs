//! Throwaway CustomResourceDefinitions: a test's inline CRD installed under a group unique to
//! the run (so concurrent tests and runs never share one), removed at the end.

use super::{TestCluster, cluster::client_for, eventually, is_not_found, unique_name};
use anyhow::Context;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::discovery::ApiResource;
use kube::runtime::wait::{await_condition, conditions};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// A CRD created for one test.
pub struct TestCrd {
    /// The unique group the CRD was installed under.
    pub group: String,
    /// The CRD's name (`<plural>.<group>`).
    pub name: String,
    kind: String,
    plural: String,
    client: Client,
    kubeconfig: PathBuf,
    deleted: bool,
}

impl TestCrd {
    /// Creates `definition` with `spec.group` prefixed by a unique label and waits until it
    /// is established and served.
    pub async fn create(cluster: &TestCluster, mut definition: Value) -> anyhow::Result<Self> {
        let base_group = definition["spec"]["group"]
            .as_str()
            .context("spec.group")?
            .to_owned();
        let group = format!("{}.{base_group}", unique_name("t"));
        let plural = definition["spec"]["names"]["plural"]
            .as_str()
            .context("spec.names.plural")?
            .to_owned();
        let kind = definition["spec"]["names"]["kind"]
            .as_str()
            .context("spec.names.kind")?
            .to_owned();
        let name = format!("{plural}.{group}");
        definition["spec"]["group"] = group.clone().into();
        definition["metadata"]["name"] = name.clone().into();
        let crd: CustomResourceDefinition = serde_json::from_value(definition)?;
        let api: Api<CustomResourceDefinition> = Api::all(cluster.client.clone());
        api.create(&PostParams::default(), &crd)
            .await
            .with_context(|| format!("creating CRD {name}"))?;
        let created = Self {
            group,
            name: name.clone(),
            kind,
            plural,
            client: cluster.client.clone(),
            kubeconfig: cluster.kubeconfig.clone(),
            deleted: false,
        };
        tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(api, &name, conditions::is_crd_established()),
        )
        .await
        .with_context(|| format!("CRD {name} not established within 30s"))??;
        let version = crd
            .spec
            .versions
            .iter()
            .find(|v| v.served)
            .context("a served version")?
            .name
            .clone();
        let objects: Api<DynamicObject> =
            Api::all_with(cluster.client.clone(), &created.resource(&version));
        eventually(
            Duration::from_secs(30),
            &format!("{name} to be served"),
            || async {
                match objects.list(&ListParams::default().limit(1)).await {
                    Ok(_) => Ok(Some(())),
                    Err(error) if is_not_found(&error) => Ok(None),
                    Err(error) => Err(error.into()),
                }
            },
        )
        .await?;
        Ok(created)
    }

    /// The API resource of one version, for `Api::<DynamicObject>::*_with`.
    pub fn resource(&self, version: &str) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: version.to_owned(),
            api_version: format!("{}/{version}", self.group),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }

    /// Deletes the CRD (and so all its objects) and waits until it is gone.
    pub async fn delete(mut self) -> anyhow::Result<()> {
        self.deleted = true;
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        match api.delete(&self.name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(error) if is_not_found(&error) => return Ok(()),
            Err(error) => return Err(error.into()),
        }
        eventually(
            Duration::from_secs(60),
            &format!("CRD {} to be deleted", self.name),
            || async { Ok(api.get_opt(&self.name).await?.is_none().then_some(())) },
        )
        .await
    }
}

impl Drop for TestCrd {
    /// Requests deletion from a helper thread (see `TestNamespace`'s drop).
    fn drop(&mut self) {
        if self.deleted {
            return;
        }
        let (kubeconfig, name) = (self.kubeconfig.clone(), self.name.clone());
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let client = client_for(&kubeconfig).await.ok()?;
                let api: Api<CustomResourceDefinition> = Api::all(client);
                api.delete(&name, &DeleteParams::default())
                    .await
                    .ok()
                    .map(|_| ())
            })
        });
        let _ = cleanup.join();
    }
}
