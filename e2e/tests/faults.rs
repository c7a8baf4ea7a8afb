//! Provider faults never cost a Secret: ExternalSecrets of every creationPolicy ×
//! deletionPolicy and a PushSecret with `deletionPolicy: Delete` sync from a real OpenBao
//! through the fault proxy (`contract_fakes::fault_proxy`); then each fault in turn (error
//! statuses, a reset connection, a truncated answer, a hang, a slow answer) meets refreshes
//! (every second for the ExternalSecrets, forced for the PushSecret). Every target Secret stays byte-identical with the same resourceVersion (no write
//! at all), the status shows the error, the pushed value stays in OpenBao at the same version
//! (no remote delete), and all recover by themselves once the proxy heals; then deleting the
//! PushSecret deletes the value as usual. A real "secret gone" answer (404)
//! is not a fault and keeps upstream's deletionPolicy semantics (`external_secret.rs`).
//!
//! Cluster-agnostic: only the controller, running on this machine, talks to the proxy.

#[path = "../../providers/tests/support/bao_process.rs"]
mod bao_process;
#[path = "support/faulty_vault.rs"]
mod faulty_vault;

use std::collections::BTreeMap;
use std::time::Duration;

use bao_process::BaoProcess;
use contract_fakes::fault_proxy::Fault;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_store_released, wait_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use external_secrets_crds::v1alpha1::PushSecret;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
/// How long recovery may take: an ExternalSecret failing several times in a row waits up to
/// the per-object backoff's cap (5 minutes plus 10 % jitter) before its next try.
const RECOVERY_WAIT: Duration = Duration::from_secs(340);
/// A hung request ends at the Vault client's own 60 s timeout; the error shows after it.
const HANG_WAIT: Duration = Duration::from_secs(180);

/// Every creationPolicy × deletionPolicy pair the API admits (`None` with `Merge` is refused:
/// there is no Secret to merge with).
const POLICIES: [(&str, &str); 11] = [
    ("Owner", "Retain"),
    ("Owner", "Delete"),
    ("Owner", "Merge"),
    ("Orphan", "Retain"),
    ("Orphan", "Delete"),
    ("Orphan", "Merge"),
    ("Merge", "Retain"),
    ("Merge", "Delete"),
    ("Merge", "Merge"),
    ("None", "Retain"),
    ("None", "Delete"),
];

fn es_name(creation: &str, deletion: &str) -> String {
    format!("es-{}-{}", creation.to_lowercase(), deletion.to_lowercase())
}

/// Runs the `bao` CLI as root; its JSON output.
fn bao_json(bao: &BaoProcess, args: &[&str]) -> anyhow::Result<Value> {
    let output = bao.cli().args(args).output()?;
    anyhow::ensure!(
        output.status.success(),
        "bao {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(serde_json::from_slice(&output.stdout)?)
}

/// The data and current version of KV v2 secret `key`, read from OpenBao directly.
fn stored(bao: &BaoProcess, key: &str) -> anyhow::Result<(Value, Value)> {
    let answer = bao_json(bao, &["kv", "get", "-format=json", "-mount=secret", key])?;
    Ok((
        answer["data"]["data"].clone(),
        answer["data"]["metadata"]["version"].clone(),
    ))
}

/// The `Ready` condition's status and reason of a status's `conditions` (as JSON).
fn ready(status: &Value) -> Option<(String, String)> {
    let condition = status["conditions"]
        .as_array()?
        .iter()
        .find(|condition| condition["type"] == "Ready")?;
    Some((
        condition["status"].as_str()?.to_owned(),
        condition["reason"].as_str().unwrap_or_default().to_owned(),
    ))
}

struct Objects {
    external_secrets: Api<ExternalSecret>,
    push_secrets: Api<PushSecret>,
    secrets: Api<Secret>,
}

impl Objects {
    /// Every watched object's Ready (status, reason), by name (`push` for the PushSecret).
    async fn readiness(&self) -> anyhow::Result<BTreeMap<String, Option<(String, String)>>> {
        let mut all = BTreeMap::new();
        for (creation, deletion) in POLICIES {
            let name = es_name(creation, deletion);
            let es = self.external_secrets.get(&name).await?;
            all.insert(name, ready(&serde_json::to_value(&es.status)?));
        }
        let push = self.push_secrets.get("push").await?;
        all.insert(
            "push".to_owned(),
            ready(&serde_json::to_value(&push.status)?),
        );
        Ok(all)
    }

    /// Annotates the PushSecret (upstream's way to force a refresh; the ExternalSecrets refresh
    /// every second by themselves: an annotation of theirs would be copied to their targets).
    async fn force_push(&self, round: &str) -> anyhow::Result<()> {
        let patch = Patch::Merge(json!({"metadata": {"annotations": {"force-sync": round}}}));
        self.push_secrets
            .patch("push", &PatchParams::default(), &patch)
            .await?;
        Ok(())
    }

    /// Waits until every watched object's Ready status is `want` ("True" or "False").
    async fn wait_all(
        &self,
        want: &str,
        timeout: Duration,
        what: &str,
        controller: &ControllerProcess,
    ) -> anyhow::Result<()> {
        let waited = eventually(timeout, what, || async {
            let all = self.readiness().await?;
            let done = all
                .values()
                .all(|ready| ready.as_ref().is_some_and(|(status, _)| status == want));
            Ok(done.then_some(()))
        })
        .await;
        match waited {
            Ok(()) => Ok(()),
            Err(error) => {
                let state = format!("Ready of each object: {:?}", self.readiness().await?);
                Err(error.context(state).context(controller.log()))
            }
        }
    }

    /// Every ExternalSecret's `status.refreshTime`, by name.
    async fn refresh_times(&self) -> anyhow::Result<BTreeMap<String, Option<String>>> {
        let mut all = BTreeMap::new();
        for (creation, deletion) in POLICIES {
            let name = es_name(creation, deletion);
            let es = self.external_secrets.get(&name).await?;
            let time = es.status.and_then(|status| status.refresh_time);
            all.insert(name, time.map(|time| time.0.to_string()));
        }
        Ok(all)
    }

    /// Every target Secret (name → data and resourceVersion).
    async fn targets(&self) -> anyhow::Result<BTreeMap<String, Value>> {
        let mut all = BTreeMap::new();
        for (creation, deletion) in POLICIES {
            let name = es_name(creation, deletion);
            let secret = self.secrets.get(&name).await?;
            all.insert(
                name,
                json!({"data": secret.data, "resourceVersion": secret.metadata.resource_version}),
            );
        }
        Ok(all)
    }
}

/// The ExternalSecrets of [`POLICIES`]; the targets of `Merge` and `None` exist beforehand
/// with a key of their own.
async fn create_external_secrets(objects: &Objects) -> anyhow::Result<()> {
    for (creation, deletion) in POLICIES {
        let name = es_name(creation, deletion);
        if matches!(creation, "Merge" | "None") {
            let existing: Secret = serde_json::from_value(json!({
                "metadata": {"name": name},
                "stringData": {"own-key": "kept"},
            }))?;
            objects
                .secrets
                .create(&PostParams::default(), &existing)
                .await?;
        }
        let es: ExternalSecret = serde_json::from_value(json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {"name": name},
            "spec": {
                "refreshInterval": "1s",
                "secretStoreRef": {"name": "vault", "kind": "SecretStore"},
                "target": {"name": name, "creationPolicy": creation, "deletionPolicy": deletion},
                "data": [
                    {"secretKey": "user", "remoteRef": {"key": "app/db", "property": "user"}},
                    {"secretKey": "password", "remoteRef": {"key": "app/db", "property": "password"}},
                ],
            },
        }))?;
        objects
            .external_secrets
            .create(&PostParams::default(), &es)
            .await?;
    }
    Ok(())
}

#[tokio::test]
async fn provider_faults_leave_every_secret_untouched_and_recover() -> anyhow::Result<()> {
    let (bao, proxy) = faulty_vault::start().await?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "faults").await?;
    let class = unique_name("e2e-faults");
    // Every refresh must reach the provider: no sharing of reads made moments before. A
    // worker per ExternalSecret, so that hung calls (each holding its worker until the Vault
    // client's timeout) fail all of them at once rather than one after another.
    let controller = ControllerProcess::start(
        &cluster,
        &class,
        &["--provider-read-dedup-window", "0s", "--concurrent", "12"],
    )
    .await?;
    let client = cluster.client.clone();
    let objects = Objects {
        external_secrets: Api::namespaced(client.clone(), &namespace.name),
        push_secrets: Api::namespaced(client.clone(), &namespace.name),
        secrets: Api::namespaced(client.clone(), &namespace.name),
    };
    // Each call tried once: a fault shows in the status at once.
    let retry = json!({"retrySettings": {"maxRetries": 0, "retryInterval": "1s"}});
    faulty_vault::create_store(&client, &namespace.name, &class, &proxy, retry).await?;
    let stores: Api<SecretStore> = Api::namespaced(client.clone(), &namespace.name);
    wait_store_ready(&stores, "vault", WAIT)
        .await
        .map_err(|error| error.context(controller.log()))?;
    create_external_secrets(&objects).await?;
    create_push_secret(
        &client,
        &namespace.name,
        "vault",
        json!({"password": "pushed-value"}),
        json!([{"match": {"secretKey": "password",
                "remoteRef": {"remoteKey": "pushed/db", "property": "password"}}}]),
    )
    .await?;
    objects
        .wait_all("True", WAIT, "everything synced", &controller)
        .await?;
    let targets = objects.targets().await?;
    let pushed = stored(&bao, "pushed/db")?;
    assert_eq!(pushed.0, json!({"password": "pushed-value"}));
    for (creation, deletion) in POLICIES {
        let data = &targets[&es_name(creation, deletion)]["data"];
        let synced = data.get("user").is_some() && data.get("password").is_some();
        assert_eq!(synced, creation != "None", "{creation}/{deletion}: {data}");
        assert_eq!(
            data.get("own-key").is_some(),
            matches!(creation, "Merge" | "None")
        );
    }

    let faults = [
        Fault::Status(500),
        Fault::Status(503),
        Fault::Status(429),
        Fault::Status(401),
        Fault::Status(403),
        Fault::Reset,
        Fault::Truncated,
        Fault::Hang,
    ];
    for (round, fault) in faults.into_iter().enumerate() {
        let what = format!("{fault:?}");
        proxy.set(fault);
        objects.force_push(&format!("fault-{round}")).await?;
        let wait = if fault == Fault::Hang {
            HANG_WAIT
        } else {
            WAIT
        };
        objects
            .wait_all(
                "False",
                wait,
                &format!("every object failing on {what}"),
                &controller,
            )
            .await?;
        assert_eq!(
            objects.targets().await?,
            targets,
            "targets written on {what}"
        );
        assert_eq!(
            stored(&bao, "pushed/db")?,
            pushed,
            "pushed value changed on {what}"
        );

        // Recovery needs no help: failed objects back off and try again by themselves.
        proxy.heal();
        objects
            .wait_all(
                "True",
                RECOVERY_WAIT,
                &format!("recovery from {what}"),
                &controller,
            )
            .await?;
        assert_eq!(
            objects.targets().await?,
            targets,
            "targets written after {what}"
        );
        assert_eq!(
            stored(&bao, "pushed/db")?,
            pushed,
            "pushed value changed after {what}"
        );
    }

    // A slow provider is no failure: every refresh completes (a new refreshTime, in whole
    // seconds, hence the pause), writing nothing new.
    let refreshed = objects.refresh_times().await?;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    proxy.set(Fault::Slow(Duration::from_secs(2)));
    objects.force_push("slow").await?;
    eventually(
        WAIT,
        "every ExternalSecret refreshed through the slow proxy",
        || async {
            let now = objects.refresh_times().await?;
            Ok(now
                .iter()
                .all(|(name, time)| time.is_some() && refreshed.get(name) != Some(time))
                .then_some(()))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))?;
    proxy.heal();
    assert_eq!(
        objects.targets().await?,
        targets,
        "targets written when slow"
    );
    assert_eq!(stored(&bao, "pushed/db")?, pushed);

    // Healed, the PushSecret's deletionPolicy works as ever: deleting it deletes the value.
    objects
        .push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed value deleted from OpenBao", || async {
        Ok(stored(&bao, "pushed/db").is_err().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    wait_for_store_released(&stores, "vault", &controller).await?;
    controller.stop().await?;
    namespace.delete().await
}
