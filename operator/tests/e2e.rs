//! The operator end to end, against the loopback API server (or the cluster `KUBECONFIG`
//! names): the controller runs in-process; the test applies an `ExternalSecretsConfig`, sees
//! the operand created, marks the Deployments Available itself (no kubelet) to see `Ready`,
//! changes settings and sees them applied and removed, switches plugins and cert-manager mode
//! and sees deletions, and deletes the config to see the operand removed and the CRDs kept.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use e2e::harness::{TestCluster, eventually};
use external_secrets_operator::api::{ExternalSecretsConfig, ExternalSecretsManager};
use external_secrets_operator::controller::{self, Context, apply};
use external_secrets_operator::desired::{Environment, NAMESPACE};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use serde::Deserialize;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(60);
const TEST_MANAGER: &str = "operator-e2e";

fn environment() -> Environment {
    Environment {
        image: Some("ghcr.io/external-secrets-rs/external-secrets:e2e".into()),
        bitwarden_image: "ghcr.io/external-secrets/bitwarden-sdk-server:v0.5.2".into(),
        proxy: None,
    }
}

async fn apply_crds(
    client: &kube::Client,
    crds: Vec<CustomResourceDefinition>,
) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds {
        let name = crd.metadata.name.clone().context("CRD name")?;
        api.patch(
            &name,
            &PatchParams::apply(TEST_MANAGER).force(),
            &Patch::Apply(&crd),
        )
        .await?;
        tokio::time::timeout(
            TIMEOUT,
            await_condition(api.clone(), &name, conditions::is_crd_established()),
        )
        .await??;
    }
    Ok(())
}

fn cert_manager_crds() -> anyhow::Result<Vec<CustomResourceDefinition>> {
    let path = &format!(
        "{}/../charts/test/third-party-crds.yaml",
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")
    );
    let mut crds = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&std::fs::read_to_string(path)?) {
        let crd = CustomResourceDefinition::deserialize(document)?;
        if crd.spec.group == "cert-manager.io" {
            crds.push(crd);
        }
    }
    Ok(crds)
}

/// Applies the singleton `cluster` of kind `K` with `spec`, as the test's field manager.
async fn apply_singleton<K>(client: &kube::Client, spec: Value) -> anyhow::Result<()>
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let object = json!({"apiVersion": K::api_version(&()), "kind": K::kind(&()),
        "metadata": {"name": "cluster"}, "spec": spec});
    Api::<K>::all(client.clone())
        .patch(
            "cluster",
            &PatchParams::apply(TEST_MANAGER).force(),
            &Patch::Apply(&object),
        )
        .await?;
    Ok(())
}

async fn set_spec(client: &kube::Client, spec: Value) -> anyhow::Result<()> {
    apply_singleton::<ExternalSecretsConfig>(client, spec).await
}

async fn deployment(client: &kube::Client, name: &str) -> anyhow::Result<Option<Deployment>> {
    Ok(Api::<Deployment>::namespaced(client.clone(), NAMESPACE)
        .get_opt(name)
        .await?)
}

/// Waits until the Deployment exists and `check` holds for it.
async fn wait_deployment(
    client: &kube::Client,
    name: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> anyhow::Result<()> {
    eventually(TIMEOUT, what, || async {
        let found = deployment(client, name).await?;
        Ok(found
            .map(|found| serde_json::to_value(found).unwrap_or_default())
            .filter(|value| check(value))
            .map(|_| ()))
    })
    .await
}

async fn wait_gone(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    eventually(TIMEOUT, &format!("Deployment {name} deleted"), || async {
        Ok(deployment(client, name).await?.is_none().then_some(()))
    })
    .await
}

/// Marks every operand Deployment Available through the status subresource (no kubelet).
async fn mark_available(client: &kube::Client) -> anyhow::Result<()> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), NAMESPACE);
    for found in api.list(&ListParams::default()).await? {
        let name = found.metadata.name.clone().unwrap_or_default();
        let status = json!({"status": {
            "observedGeneration": found.metadata.generation,
            "replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                "message": "marked by the test", "lastTransitionTime": "2026-01-01T00:00:00Z",
                "lastUpdateTime": "2026-01-01T00:00:00Z"}],
        }});
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
            .await?;
    }
    Ok(())
}

async fn condition(client: &kube::Client, kind: &str) -> anyhow::Result<Option<(String, String)>> {
    let config = Api::<ExternalSecretsConfig>::all(client.clone())
        .get_opt("cluster")
        .await?;
    Ok(config
        .and_then(|config| config.status)
        .and_then(|status| status.conditions.into_iter().find(|c| c.type_ == kind))
        .map(|c| (c.status, c.message)))
}

async fn wait_condition(
    client: &kube::Client,
    kind: &str,
    status: &str,
    contains: &str,
) -> anyhow::Result<()> {
    eventually(
        TIMEOUT,
        &format!("{kind}={status} ({contains})"),
        || async {
            Ok(condition(client, kind)
                .await?
                .filter(|(found, message)| found == status && message.contains(contains))
                .map(|_| ()))
        },
    )
    .await
}

fn args(deployment: &Value) -> String {
    deployment["spec"]["template"]["spec"]["containers"][0]["args"].to_string()
}

/// The resourceVersions of every managed object.
async fn versions(client: &kube::Client) -> anyhow::Result<Vec<(String, String)>> {
    let mut found = Vec::new();
    for kind in external_secrets_operator::kinds::KINDS {
        let api: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &kind.resource());
        let Ok(list) = api
            .list(&ListParams::default().labels(&controller::managed_selector()))
            .await
        else {
            continue;
        };
        for object in list {
            found.push((
                format!("{} {}", kind.kind, object.metadata.name.unwrap_or_default()),
                object.metadata.resource_version.unwrap_or_default(),
            ));
        }
    }
    found.sort();
    Ok(found)
}

/// Waits until the proxy's CA bundle and egress policy and the user's policy all exist
/// (`present`) or are all gone.
async fn wait_extras(client: &kube::Client, present: bool) -> anyhow::Result<()> {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let policies: Api<NetworkPolicy> = Api::namespaced(client.clone(), NAMESPACE);
    eventually(
        TIMEOUT,
        &format!("proxy and user objects present: {present}"),
        || async {
            let found = [
                config_maps
                    .get_opt("external-secrets-trusted-ca-bundle")
                    .await?
                    .is_some(),
                policies.get_opt("eso-user-vault").await?.is_some(),
                policies.get_opt("eso-proxy-egress").await?.is_some(),
            ];
            Ok(found.iter().all(|found| *found == present).then_some(()))
        },
    )
    .await
}

#[tokio::test]
async fn operator_installs_changes_and_removes_the_operand() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let client = cluster.client.clone();
    apply_crds(&client, external_secrets_operator::api::all_crds()).await?;
    let context = Arc::new(Context::new(client.clone(), environment(), Arc::default()));
    let running = tokio::spawn(controller::run(context.clone()));

    // Install.
    set_spec(
        &client,
        json!({"controllerConfig": {"labels": {"team": "a"}}}),
    )
    .await?;
    for name in [
        "external-secrets",
        "external-secrets-webhook",
        "external-secrets-cert-controller",
    ] {
        wait_deployment(&client, name, &format!("{name} created"), |d| {
            d["metadata"]["labels"]["team"] == "a"
                && d["spec"]["template"]["spec"]["containers"][0]["image"]
                    == "ghcr.io/external-secrets-rs/external-secrets:e2e"
        })
        .await?;
    }
    let policies: Api<NetworkPolicy> = Api::namespaced(client.clone(), NAMESPACE);
    assert!(policies.get_opt("deny-all-traffic").await?.is_some());
    wait_condition(&client, "Progressing", "True", "external-secrets").await?;
    wait_condition(&client, "Ready", "False", "waiting for Deployments").await?;
    let configs: Api<ExternalSecretsConfig> = Api::all(client.clone());
    let config = configs.get("cluster").await?;
    assert!(
        config
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == controller::FINALIZER)
    );

    // Ready once every Deployment is Available.
    mark_available(&client).await?;
    wait_condition(&client, "Ready", "True", "reconciliation successful").await?;
    wait_condition(&client, "Degraded", "False", "").await?;
    let status = configs.get("cluster").await?.status.unwrap_or_default();
    assert_eq!(status.external_secrets_image, environment().image);
    assert_eq!(
        status.bitwarden_sdk_server_image,
        Some(environment().bitwarden_image)
    );
    // The manager's status mirrors the conditions.
    let managers: Api<ExternalSecretsManager> = Api::all(client.clone());
    apply_singleton::<ExternalSecretsManager>(&client, json!({})).await?;
    eventually(TIMEOUT, "the manager's mirror of Ready=True", || async {
        let manager = managers.get_opt("cluster").await?;
        let mirrored = manager
            .and_then(|manager| manager.status)
            .and_then(|status| status.controller_statuses.into_iter().next())
            .is_some_and(|entry| {
                entry.conditions.iter().any(|condition| {
                    condition.type_ == "Ready" && condition.status.as_deref() == Some("True")
                })
            });
        Ok(mirrored.then_some(()))
    })
    .await?;

    // Another writer's data in the webhook Secret survives reconciles (no full Update).
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let data = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "external-secrets-webhook"},
        "data": {"tls.crt": "Y2VydA=="}});
    secrets
        .patch(
            "external-secrets-webhook",
            &PatchParams::apply("cert-controller"),
            &Patch::Apply(&data),
        )
        .await?;

    // Another writer's caBundle in a webhook configuration survives too.
    let webhooks: Api<kube::api::DynamicObject> = Api::all_with(
        client.clone(),
        &external_secrets_operator::kinds::find("ValidatingWebhookConfiguration")
            .context("VWC kind")?
            .resource(),
    );
    // (JSON patch, an Update as the operand's cert controller writes it.)
    let bundle: json_patch::Patch = serde_json::from_value(json!([
        {"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "Y2E="}
    ]))?;
    webhooks
        .patch(
            "externalsecret-validate",
            &PatchParams::default(),
            &Patch::<()>::Json(bundle),
        )
        .await?;

    // Drift of a managed field is reverted.
    let drift = json!({"spec": {"replicas": 3}});
    Api::<Deployment>::namespaced(client.clone(), NAMESPACE)
        .patch(
            "external-secrets",
            &PatchParams::default(),
            &Patch::Merge(&drift),
        )
        .await?;
    wait_deployment(&client, "external-secrets", "replicas reverted", |d| {
        d["spec"]["replicas"] == 1
    })
    .await?;

    // An unchanged reconcile writes nothing.
    let config = configs.get("cluster").await?;
    let manager = managers.get_opt("cluster").await?;
    apply::install(&context, &config, manager.as_ref()).await?;
    let before = versions(&client).await?;
    apply::install(&context, &config, manager.as_ref()).await?;
    assert_eq!(
        before,
        versions(&client).await?,
        "no object written by an unchanged reconcile"
    );

    // Changing one setting changes what it governs and nothing else: the log level is in the
    // three Deployments only.
    let before = versions(&client).await?;
    // (The labels set at install stay, or every object would change.)
    set_spec(
        &client,
        json!({"appConfig": {"logLevel": 3}, "controllerConfig": {"labels": {"team": "a"}}}),
    )
    .await?;
    for name in [
        "external-secrets",
        "external-secrets-webhook",
        "external-secrets-cert-controller",
    ] {
        wait_deployment(&client, name, "log level 3", |d| {
            args(d).contains("--loglevel=info")
        })
        .await?;
    }
    let after = versions(&client).await?;
    let changed: Vec<&String> = after
        .iter()
        .filter(|entry| !before.contains(entry))
        .map(|(object, _)| object)
        .collect();
    assert_eq!(
        changed,
        [
            "Deployment external-secrets",
            "Deployment external-secrets-cert-controller",
            "Deployment external-secrets-webhook",
        ],
        "only the Deployments were written"
    );

    // A setting changes, then is removed again.
    set_spec(
        &client,
        json!({
            "appConfig": {"logLevel": 4, "nodeSelector": {"disk": "ssd"}},
            "controllerConfig": {"annotations": {"example.com/owner": "team-a"}},
        }),
    )
    .await?;
    wait_deployment(
        &client,
        "external-secrets",
        "log level, node selector and annotation",
        |d| {
            args(d).contains("--loglevel=debug")
                && d["spec"]["template"]["spec"]["nodeSelector"]["disk"] == "ssd"
                && d["spec"]["template"]["metadata"]["annotations"]["example.com/owner"] == "team-a"
                && d["metadata"]["annotations"]["example.com/owner"] == "team-a"
        },
    )
    .await?;
    set_spec(&client, json!({})).await?;
    wait_deployment(
        &client,
        "external-secrets",
        "node selector and annotation removed",
        |d| {
            d["spec"]["template"]["spec"]["nodeSelector"].is_null()
                && args(d).contains("--loglevel=error")
                && d["spec"]["template"]["metadata"]["annotations"]["example.com/owner"].is_null()
                && d["metadata"]["annotations"]["example.com/owner"].is_null()
        },
    )
    .await?;
    let secret = secrets.get("external-secrets-webhook").await?;
    assert!(
        secret.data.unwrap_or_default().contains_key("tls.crt"),
        "the Secret's data survived"
    );

    // The manager's global settings trigger a reconcile.
    apply_singleton::<ExternalSecretsManager>(
        &client,
        json!({"globalConfig": {"nodeSelector": {"pool": "infra"}}}),
    )
    .await?;
    wait_deployment(
        &client,
        "external-secrets-webhook",
        "manager's node selector",
        |d| d["spec"]["template"]["spec"]["nodeSelector"]["pool"] == "infra",
    )
    .await?;

    // Bitwarden on, with a custom policy and a proxy; then all off again.
    set_spec(&client, json!({
        "plugins": {"bitwardenSecretManagerProvider": {"mode": "Enabled", "secretRef": {"name": "bw-tls"}}},
        "appConfig": {"proxy": {"httpsProxy": "http://proxy.example.com:3128"}},
        "controllerConfig": {"networkPolicies": [{"name": "vault", "componentName": "ExternalSecretsCoreController",
            "egress": [{"ports": [{"protocol": "TCP", "port": 8200}]}]}]},
    })).await?;
    wait_deployment(&client, "bitwarden-sdk-server", "bitwarden created", |_| {
        true
    })
    .await?;
    wait_extras(&client, true).await?;
    set_spec(&client, json!({})).await?;
    wait_gone(&client, "bitwarden-sdk-server").await?;
    wait_extras(&client, false).await?;

    // cert-manager mode before cert-manager exists: Degraded; installing it later is noticed.
    let cert_manager_spec = json!({"controllerConfig": {"certProvider": {"certManager": {
        "mode": "Enabled", "issuerRef": {"name": "ca", "kind": "ClusterIssuer"}}}}});
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let preinstalled = crds
        .get_opt("certificates.cert-manager.io")
        .await?
        .is_some();
    set_spec(&client, cert_manager_spec).await?;
    if !preinstalled {
        wait_condition(&client, "Degraded", "True", "cert-manager is not installed").await?;
        apply_crds(&client, cert_manager_crds()?).await?;
    }
    wait_gone(&client, "external-secrets-cert-controller").await?;
    let certificates: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &external_secrets_operator::kinds::find("Certificate")
            .context("Certificate kind")?
            .resource(),
    );
    eventually(TIMEOUT, "webhook Certificate", || async {
        Ok(certificates
            .get_opt("external-secrets-webhook")
            .await?
            .map(|_| ()))
    })
    .await?;

    // Deleting the config removes the operand, keeps the CRDs, and the config goes.
    configs.delete("cluster", &DeleteParams::default()).await?;
    for name in ["external-secrets", "external-secrets-webhook"] {
        wait_gone(&client, name).await?;
    }
    eventually(TIMEOUT, "config deleted", || async {
        Ok(configs.get_opt("cluster").await?.is_none().then_some(()))
    })
    .await?;
    assert!(
        crds.get_opt("externalsecrets.external-secrets.io")
            .await?
            .is_some(),
        "CRDs stay"
    );
    running.abort();
    Ok(())
}
