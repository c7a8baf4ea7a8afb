//! Chaos at CI size (issue 23): `CHAOS_COUNT` ExternalSecrets (default 60, refreshed every
//! `CHAOS_REFRESH`, default `5s`) sync from a real OpenBao through the fault proxy, served by two replicas under leader
//! election. Faults in turn: the provider unavailable for a while (503 from the proxy); the
//! leader killed with SIGKILL while a new batch of ExternalSecrets is syncing (the other
//! replica takes over once the Lease expires, and the killed one is started again). After
//! each fault: no Secret lost or emptied (asserted), and the figures the chaos section of
//! `BENCHMARKS.md` reports (time until all are Ready again, provider calls and the leader's API
//! requests during recovery) are printed.
//!
//! The API endpoint cut: the controllers reach the API server through a TCP proxy that, for
//! `CHAOS_CUT_SECONDS` (default 10), resets every connection, watches included, and every new
//! one, under one replica and under two replicas with leader election (where the leader cannot
//! renew its Lease during the cut). The test's own client is never cut off.
//!
//! A last test restarts the API server itself (its own loopback server) under one replica: the
//! server's state surviving its restart is what it checks, beyond the endpoint cut.
//!
//! Cluster-agnostic (all but the last): only the controllers, running on this machine, talk to
//! the proxies.

#[path = "../../providers/tests/support/bao_process.rs"]
mod bao_process;
#[path = "support/faulty_vault.rs"]
mod faulty_vault;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use contract_fakes::cut_proxy::CutProxy;
use contract_fakes::fault_proxy::{Fault, FaultProxy};
use e2e::bench::requests_by_resource;
use e2e::harness::{
    ControllerProcess, ProxiedCluster, TestCluster, TestNamespace, eventually, install_crds,
    string_data, unique_name, wait_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, ExternalSecretConditionType, SecretStore};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};
use loopback_apiserver::{LoopbackServer, Options};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(180);

/// One replica: its process and the name its Lease identity starts with.
struct Replica {
    name: &'static str,
    process: ControllerProcess,
}

struct Chaos {
    cluster: TestCluster,
    namespace: String,
    class: String,
    lease: String,
    proxy: FaultProxy,
    /// `refreshInterval` of every ExternalSecret.
    refresh: String,
    /// The cluster as the controllers reach it, when not directly (through the cut proxy).
    controllers_via: Option<ProxiedCluster>,
}

impl Chaos {
    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.cluster.client.clone(), &self.namespace)
    }

    fn external_secrets(&self) -> Api<ExternalSecret> {
        Api::namespaced(self.cluster.client.clone(), &self.namespace)
    }

    /// A namespace with the Vault store (reaching OpenBao through the proxy) and its token.
    async fn setup(
        cluster: TestCluster,
        proxy: FaultProxy,
    ) -> anyhow::Result<(Self, TestNamespace)> {
        install_crds(&cluster.client).await?;
        let namespace = TestNamespace::create(&cluster, "chaos").await?;
        let chaos = Chaos {
            proxy,
            namespace: namespace.name.clone(),
            class: unique_name("e2e-chaos"),
            lease: unique_name("e2e-chaos-lease"),
            refresh: std::env::var("CHAOS_REFRESH").unwrap_or_else(|_| "5s".to_owned()),
            cluster,
            controllers_via: None,
        };
        let client = chaos.cluster.client.clone();
        faulty_vault::create_store(
            &client,
            &chaos.namespace,
            &chaos.class,
            &chaos.proxy,
            json!({}),
        )
        .await?;
        Ok((chaos, namespace))
    }

    fn stores(&self) -> Api<SecretStore> {
        Api::namespaced(self.cluster.client.clone(), &self.namespace)
    }

    async fn wait_store(&self) -> anyhow::Result<()> {
        wait_store_ready(&self.stores(), "vault", WAIT).await
    }

    /// Starts replica `name`, competing for the Lease when `elect`.
    async fn start(&self, name: &'static str, elect: bool) -> anyhow::Result<Replica> {
        let mut args = vec!["--concurrent", "8"];
        if elect {
            args.extend([
                "--enable-leader-election",
                "--leader-election-id",
                &self.lease,
                "--leader-election-namespace",
                &self.namespace,
            ]);
        }
        let process = ControllerProcess::start_with_env(
            self.controllers_via.as_deref().unwrap_or(&self.cluster),
            &self.class,
            &args,
            &[("POD_NAME", name)],
        )
        .await?;
        Ok(Replica { name, process })
    }

    /// The replica name of the Lease holder, once there is one.
    async fn leader(&self) -> anyhow::Result<String> {
        let leases: Api<Lease> = Api::namespaced(self.cluster.client.clone(), &self.namespace);
        eventually(WAIT, "a Lease holder", || async {
            let holder = leases
                .get_opt(&self.lease)
                .await?
                .and_then(|lease| lease.spec?.holder_identity)
                .and_then(|holder| Some(holder.split_once('_')?.0.to_owned()));
            Ok(holder)
        })
        .await
    }

    async fn create_batch(&self, batch: &str, count: usize) -> anyhow::Result<()> {
        for index in 0..count {
            let es: ExternalSecret = serde_json::from_value(json!({
                "apiVersion": "external-secrets.io/v1",
                "kind": "ExternalSecret",
                "metadata": {"name": format!("{batch}-{index}")},
                "spec": {
                    "refreshInterval": self.refresh,
                    "secretStoreRef": {"name": "vault", "kind": "SecretStore"},
                    "target": {"name": format!("{batch}-{index}")},
                    "data": [
                        {"secretKey": "user", "remoteRef": {"key": "app/db", "property": "user"}},
                        {"secretKey": "password", "remoteRef": {"key": "app/db", "property": "password"}},
                    ],
                },
            }))?;
            self.external_secrets()
                .create(&PostParams::default(), &es)
                .await?;
        }
        Ok(())
    }

    /// Waits until every ExternalSecret is Ready; returns how long that took.
    async fn all_ready(&self, what: &str) -> anyhow::Result<Duration> {
        let started = Instant::now();
        eventually(ready_wait(), what, || async {
            Ok(self.ready_now().await?.then_some(()))
        })
        .await?;
        Ok(started.elapsed())
    }

    /// Whether every ExternalSecret is Ready now.
    async fn ready_now(&self) -> anyhow::Result<bool> {
        let all = self.external_secrets().list(&ListParams::default()).await?;
        Ok(all.items.iter().all(|es| {
            es.status.as_ref().is_some_and(|status| {
                status
                    .conditions
                    .iter()
                    .any(|c| c.r#type == ExternalSecretConditionType::Ready && c.status == "True")
            })
        }))
    }

    /// Target Secrets missing, or without the provider's data, among `names`.
    async fn lost_or_emptied(&self, names: &[String]) -> anyhow::Result<Vec<String>> {
        let expected = BTreeMap::from([
            ("password".to_owned(), "first".to_owned()),
            ("user".to_owned(), "admin".to_owned()),
        ]);
        let mut bad = Vec::new();
        for name in names {
            match self.secrets().get_opt(name).await? {
                Some(secret) if string_data(&secret) == expected => {}
                _ => bad.push(name.clone()),
            }
        }
        Ok(bad)
    }
}

/// The API requests `replica` made so far, by verb (`get`, `apply`, `create`, ...).
async fn api_requests(replica: &Replica) -> BTreeMap<String, f64> {
    let mut by_verb = BTreeMap::new();
    if let Ok(page) = replica.process.metrics().await {
        for ((verb, _), count) in requests_by_resource(&page) {
            *by_verb.entry(verb).or_insert(0.0) += count;
        }
    }
    by_verb
}

fn difference(after: &BTreeMap<String, f64>, before: &BTreeMap<String, f64>) -> String {
    after
        .iter()
        .map(|(verb, count)| format!("{verb} {}", count - before.get(verb).unwrap_or(&0.0)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How long the provider stays unavailable: `CHAOS_OUTAGE_SECONDS`, 15 by default (minutes
/// for the documented long-outage runs).
fn outage() -> Duration {
    seconds_from_env("CHAOS_OUTAGE_SECONDS", 15)
}

/// How long the API endpoint is cut: `CHAOS_CUT_SECONDS`, 10 by default.
fn cut_duration() -> Duration {
    seconds_from_env("CHAOS_CUT_SECONDS", 10)
}

fn seconds_from_env(name: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default),
    )
}

/// How long all ExternalSecrets may take to become Ready: `WAIT`, or 60 ms per ExternalSecret
/// for large `CHAOS_COUNT` runs (10,000: 10 minutes).
fn ready_wait() -> Duration {
    let per_object =
        Duration::from_millis(60).saturating_mul(chaos_count().try_into().unwrap_or(u32::MAX));
    WAIT.max(per_object)
}

fn chaos_count() -> usize {
    std::env::var("CHAOS_COUNT")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(60)
}

#[tokio::test]
async fn no_secret_is_lost_under_provider_outage_crash_and_failover() -> anyhow::Result<()> {
    let count = chaos_count();
    let (_bao, proxy) = faulty_vault::start().await?;
    let cluster = TestCluster::connect().await?;
    let (chaos, namespace) = Chaos::setup(cluster, proxy).await?;
    let mut replicas = vec![
        chaos.start("replica-a", true).await?,
        chaos.start("replica-b", true).await?,
    ];
    chaos.wait_store().await?;

    chaos.create_batch("first", count).await?;
    let initial = chaos.all_ready("initial sync").await?;
    println!("chaos: {count} ExternalSecrets Ready in {initial:?}");
    let mut names: Vec<String> = (0..count).map(|index| format!("first-{index}")).collect();

    // 1. The provider is unavailable for a while.
    let leader_name = chaos.leader().await?;
    let leader = replicas
        .iter()
        .find(|r| r.name == leader_name)
        .expect("the leader runs");
    let (calls, api) = (chaos.proxy.requests(), api_requests(leader).await);
    chaos.proxy.set(Fault::Status(503));
    let outage = outage();
    tokio::time::sleep(outage).await;
    assert_eq!(
        chaos.lost_or_emptied(&names).await?,
        Vec::<String>::new(),
        "during the outage"
    );
    chaos.proxy.heal();
    let healed = chaos.all_ready("recovery from the provider outage").await?;
    assert_eq!(chaos.lost_or_emptied(&names).await?, Vec::<String>::new());
    println!(
        "chaos: provider unavailable {outage:?}: 0 lost, all Ready {healed:?} after healing; \
         provider calls {}, leader API requests {}",
        chaos.proxy.requests() - calls,
        difference(&api_requests(leader).await, &api)
    );

    // 2. The leader is killed while a new batch syncs; the other replica takes over once the
    // Lease expires, and the killed one comes back.
    let leader_name = chaos.leader().await?;
    let position = replicas
        .iter()
        .position(|r| r.name == leader_name)
        .expect("the leader runs");
    let killed = replicas.swap_remove(position);
    let survivor_api = api_requests(&replicas[0]).await;
    let calls = chaos.proxy.requests();
    chaos.create_batch("second", count).await?;
    let crashed = Instant::now();
    killed.process.kill().await?;
    replicas.push(chaos.start(killed.name, true).await?);
    names.extend((0..count).map(|index| format!("second-{index}")));
    chaos
        .all_ready("recovery after the leader was killed")
        .await?;
    let failover = crashed.elapsed();
    let new_leader = chaos.leader().await?;
    assert_eq!(chaos.lost_or_emptied(&names).await?, Vec::<String>::new());
    println!(
        "chaos: leader {leader_name} killed mid-sync ({count} new): 0 lost, all {} Ready {:?} \
         after the kill (new leader {new_leader}); provider calls {}, API requests of the \
         survivor {} and of the restarted replica {}",
        names.len(),
        failover,
        chaos.proxy.requests() - calls,
        difference(&api_requests(&replicas[0]).await, &survivor_api),
        difference(&api_requests(&replicas[1]).await, &BTreeMap::new())
    );

    for replica in replicas {
        replica.process.stop().await?;
    }
    namespace.delete().await
}

/// The API endpoint is cut under one replica: every connection of the controller, watches
/// included, is reset and new ones are refused for `CHAOS_CUT_SECONDS`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_is_lost_when_the_api_endpoint_is_cut() -> anyhow::Result<()> {
    cut_the_api_endpoint(&["replica-a"]).await
}

/// The API endpoint is cut under two replicas with leader election: the leader cannot renew
/// its Lease during the cut. Whether it keeps the Lease or loses it (and exits, to be started
/// again as its pod would be), no Secret is lost and a batch created after the cut syncs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_is_lost_when_the_api_endpoint_is_cut_under_leader_election() -> anyhow::Result<()>
{
    cut_the_api_endpoint(&["replica-a", "replica-b"]).await
}

/// `CHAOS_COUNT` ExternalSecrets synced by `replica_names` (with leader election when more
/// than one), the API endpoint cut while the test edits nothing, then no Secret lost or
/// emptied and a batch created after the cut synced; figures printed.
async fn cut_the_api_endpoint(replica_names: &[&'static str]) -> anyhow::Result<()> {
    let count = chaos_count();
    let elect = replica_names.len() > 1;
    let (_bao, proxy) = faulty_vault::start().await?;
    let cluster = TestCluster::connect().await?;
    let endpoint = CutProxy::start(cluster.api_server_address()?).await?;
    let via = cluster.through_proxy(endpoint.address)?;
    let (mut chaos, namespace) = Chaos::setup(cluster, proxy).await?;
    chaos.controllers_via = Some(via);
    let mut replicas = Vec::new();
    for name in replica_names {
        replicas.push(chaos.start(name, elect).await?);
    }
    chaos.wait_store().await?;
    chaos.create_batch("first", count).await?;
    chaos.all_ready("initial sync").await?;
    let mut names: Vec<String> = (0..count).map(|index| format!("first-{index}")).collect();
    let leader = if elect {
        chaos.leader().await?
    } else {
        replica_names.join("")
    };

    let mut api = Vec::new();
    for replica in &replicas {
        api.push(api_requests(replica).await);
    }
    let (calls, connections) = (chaos.proxy.requests(), endpoint.connections());
    let cut = cut_duration();
    let began = Instant::now();
    endpoint.cut(cut);
    tokio::time::sleep(cut).await;
    // Read over the test's own connection, which was never cut.
    assert_eq!(
        chaos.lost_or_emptied(&names).await?,
        Vec::<String>::new(),
        "right after the cut"
    );
    let (closed, refused) = (endpoint.closed(), endpoint.refused());
    assert!(
        closed > 0,
        "the cut closed none of the controllers' connections"
    );

    chaos.create_batch("second", count).await?;
    names.extend((0..count).map(|index| format!("second-{index}")));
    // A replica that lost its Lease exits; it is started again, as its pod would be.
    let mut exited = Vec::new();
    let deadline = Instant::now() + ready_wait();
    loop {
        for (replica, before) in replicas.iter_mut().zip(api.iter_mut()) {
            if let Some(status) = replica.process.exit_status()? {
                exited.push(format!("{} ({status}), started again", replica.name));
                *replica = chaos.start(replica.name, elect).await?;
                before.clear();
            }
        }
        if chaos.ready_now().await? {
            break;
        }
        let logs: Vec<String> = replicas.iter().map(|r| r.process.log()).collect();
        anyhow::ensure!(
            Instant::now() < deadline,
            "not all Ready {:?} after the cut; logs:\n{}",
            ready_wait(),
            logs.join("\n")
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let recovered = began.elapsed();
    assert_eq!(chaos.lost_or_emptied(&names).await?, Vec::<String>::new());
    assert!(
        endpoint.connections() > connections,
        "the controllers reconnected through the proxy"
    );
    let mut requests = Vec::new();
    for (replica, before) in replicas.iter().zip(&api) {
        let difference = difference(&api_requests(replica).await, before);
        // A replica started again counts from its start.
        requests.push(format!("{}: {difference}", replica.name));
    }
    let after = if elect {
        format!("leader {leader} before, {} after", chaos.leader().await?)
    } else {
        leader
    };
    println!(
        "chaos: API endpoint cut {cut:?} ({after}): 0 lost, all {} Ready {recovered:?} after \
         the cut began ({count} created after it); the cut closed {closed} connections and \
         refused {refused}; replicas exited: {}; provider calls {}, API requests {}",
        names.len(),
        if exited.is_empty() {
            "none".to_owned()
        } else {
            exited.join(", ")
        },
        chaos.proxy.requests() - calls,
        requests.join("; ")
    );
    for replica in replicas {
        replica.process.stop().await?;
    }
    namespace.delete().await
}

/// The API server restarts (loopback only, on a server of its own: a real cluster's API server
/// cannot be restarted from a test): down for 10 s with every connection and watch cut. No
/// Secret is lost or emptied, and the controller reconnects: a batch created after the
/// restart syncs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_is_lost_when_the_api_server_restarts() -> anyhow::Result<()> {
    let count = chaos_count();
    let (_bao, proxy) = faulty_vault::start().await?;
    let mut server = LoopbackServer::start(Options::default()).await?;
    let cluster = TestCluster {
        client: server.client().await?,
        kubeconfig: server.kubeconfig_path().to_path_buf(),
        loopback: true,
    };
    let (chaos, _namespace) = Chaos::setup(cluster, proxy).await?;
    let replica = chaos.start("replica-a", false).await?;
    chaos.wait_store().await?;
    chaos.create_batch("first", count).await?;
    chaos.all_ready("initial sync").await?;
    let mut names: Vec<String> = (0..count).map(|index| format!("first-{index}")).collect();

    let (calls, api) = (chaos.proxy.requests(), api_requests(&replica).await);
    let restarted = Instant::now();
    server.restart(Duration::from_secs(10)).await?;
    eventually(WAIT, "the API server back", || async {
        Ok(chaos
            .secrets()
            .get_opt("vault-token")
            .await
            .ok()
            .flatten()
            .map(|_| ()))
    })
    .await?;
    assert_eq!(chaos.lost_or_emptied(&names).await?, Vec::<String>::new());
    chaos.create_batch("second", count).await?;
    names.extend((0..count).map(|index| format!("second-{index}")));
    chaos
        .all_ready("a batch created after the restart")
        .await
        .map_err(|error| error.context(replica.process.log()))?;
    assert_eq!(chaos.lost_or_emptied(&names).await?, Vec::<String>::new());
    println!(
        "chaos: API server down 10 s: 0 lost, all {} Ready {:?} after the restart began \
         ({count} created after it); provider calls {}, API requests {}",
        names.len(),
        restarted.elapsed(),
        chaos.proxy.requests() - calls,
        difference(&api_requests(&replica).await, &api)
    );
    replica.process.stop().await?;
    Ok(())
}
