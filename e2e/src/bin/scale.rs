//! The scale benchmark: N ExternalSecrets (3 entries each, two of them shared with others)
//! against one `fake` SecretStore, synced by the release controller binary run as a separate
//! process, on the loopback API server (or the cluster `KUBECONFIG` names). Prints one table
//! and writes it as JSON:
//!
//! * time until all N are Ready, and the floor (a plain client doing the N Secret applies);
//! * peak and steady RSS and CPU seconds of the controller;
//! * API requests by method and provider calls;
//! * how long a new ExternalSecret takes to become Ready while the N refresh;
//! * provider calls and API writes in the first window after a restart.
//!
//! `cargo run --release -p e2e --bin scale -- --count 1000` (build the controller with
//! `cargo build --release --bin external-secrets` first). Figures, not assertions.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use e2e::bench::{metric_sum, requests_by_method, sample};
use e2e::harness::{ControllerProcess, TestCluster, TestNamespace, install_crds};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

/// Shared remote keys: entries a and b of every ExternalSecret read one of these.
const SHARED_KEYS: usize = 10;

struct Options {
    count: usize,
    concurrent: u16,
    refresh: Duration,
    restart_window: Duration,
    json: std::path::PathBuf,
}

fn options() -> anyhow::Result<Options> {
    let mut options = Options {
        count: 1000,
        concurrent: 4,
        refresh: Duration::from_secs(60),
        restart_window: Duration::from_secs(20),
        json: std::path::PathBuf::from("target/scale.json"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--count" => options.count = value.parse()?,
            "--concurrent" => options.concurrent = value.parse()?,
            "--refresh-seconds" => options.refresh = Duration::from_secs(value.parse()?),
            "--restart-window-seconds" => {
                options.restart_window = Duration::from_secs(value.parse()?);
            }
            "--json" => options.json = value.into(),
            other => anyhow::bail!(
                "unknown flag {other} (--count, --concurrent, --refresh-seconds, --restart-window-seconds, --json)"
            ),
        }
    }
    Ok(options)
}

/// One row of the report.
struct Figure {
    name: String,
    value: f64,
    unit: &'static str,
    ratio: Option<f64>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let options = options()?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "eso-scale").await?;
    let class = format!("scale-{}", std::process::id());
    let result = run(&cluster, &namespace.name, &class, &options).await;
    namespace.delete().await?;
    let figures = result?;
    report(&figures, &options)
}

async fn run(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    options: &Options,
) -> anyhow::Result<Vec<Figure>> {
    let client = cluster.client.clone();
    let count = options.count;
    let floor = floor(&client, namespace, count, options.concurrent).await?;
    create_store(&client, namespace, class, count).await?;
    let external_secrets: Api<ExternalSecret> = Api::namespaced(client.clone(), namespace);
    let refresh = format!("{}s", options.refresh.as_secs());
    futures::stream::iter(0..count)
        .map(|index| {
            let api = external_secrets.clone();
            let manifest = external_secret(&format!("es-{index}"), index, &refresh);
            async move {
                api.create(&PostParams::default(), &manifest?)
                    .await
                    .map_err(anyhow::Error::from)
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<_>>()
        .await?;

    let concurrent = options.concurrent.to_string();
    // The per-store provider limit (50/s by default) protects real backends; the fake one
    // needs none, so the figures show the controller's own pace.
    let args = [
        "--concurrent",
        concurrent.as_str(),
        "--provider-qps",
        "100000",
        "--provider-burst",
        "100000",
    ];
    let controller = ControllerProcess::start(cluster, class, &args).await?;
    let pid = controller.pid().context("controller pid")?;
    let started = Instant::now();
    wait_ready(&controller, count).await?;
    let all_ready = started.elapsed();
    let at_ready = sample(pid).unwrap_or_default();
    let ready_page = controller.metrics().await?;

    // Restart right away: every ExternalSecret is valid and recently refreshed, so a
    // restart should cost no provider call and no write.
    controller.stop().await?;
    let restarted = ControllerProcess::start(cluster, class, &args).await?;
    let pid = restarted.pid().context("controller pid")?;
    tokio::time::sleep(options.restart_window).await;
    let restart_page = restarted.metrics().await?;

    // New work while the N refresh: wait until refreshes are due, then add one more.
    tokio::time::sleep(options.refresh.saturating_sub(started.elapsed())).await;
    let newcomer = Instant::now();
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("es-new", 0, &refresh)?,
        )
        .await?;
    wait_for(&external_secrets, "es-new").await?;
    let new_ready = newcomer.elapsed();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let steady = sample(pid).unwrap_or_default();
    let steady_page = restarted.metrics().await?;
    restarted.stop().await?;

    let methods = requests_by_method(&ready_page);
    let restart_methods = requests_by_method(&restart_page);
    let writes = |methods: &std::collections::BTreeMap<String, f64>| {
        ["POST", "PUT", "PATCH", "DELETE"]
            .iter()
            .map(|method| methods.get(*method).copied().unwrap_or(0.0))
            .sum::<f64>()
    };
    let provider_calls =
        |page: &str| metric_sum(page, "externalsecret_provider_api_calls_count", &[]);
    let mut figures = vec![
        Figure {
            name: "ExternalSecrets".into(),
            value: count as f64,
            unit: "",
            ratio: None,
        },
        Figure {
            name: "time until all Ready".into(),
            value: all_ready.as_secs_f64(),
            unit: "s",
            ratio: Some(all_ready.as_secs_f64() / floor.as_secs_f64()),
        },
        Figure {
            name: "floor: plain client applying N Secrets".into(),
            value: floor.as_secs_f64(),
            unit: "s",
            ratio: Some(1.0),
        },
        Figure {
            name: "peak RSS (initial sync)".into(),
            value: at_ready.peak_rss_kib as f64 / 1024.0,
            unit: "MiB",
            ratio: None,
        },
        Figure {
            name: "RSS when all Ready".into(),
            value: at_ready.rss_kib as f64 / 1024.0,
            unit: "MiB",
            ratio: None,
        },
        Figure {
            name: "steady-state RSS (refreshing)".into(),
            value: steady.rss_kib as f64 / 1024.0,
            unit: "MiB",
            ratio: None,
        },
        Figure {
            name: "CPU seconds until all Ready".into(),
            value: at_ready.cpu_seconds,
            unit: "s",
            ratio: None,
        },
        Figure {
            name: "provider calls until all Ready".into(),
            value: provider_calls(&ready_page),
            unit: "",
            ratio: Some(provider_calls(&ready_page) / (3 * count) as f64),
        },
        Figure {
            name: "provider calls after restart, into the first refresh".into(),
            value: provider_calls(&steady_page),
            unit: "",
            ratio: None,
        },
        Figure {
            name: "new ExternalSecret Ready while refreshing".into(),
            value: new_ready.as_secs_f64(),
            unit: "s",
            ratio: None,
        },
        Figure {
            name: "API writes until all Ready".into(),
            value: writes(&methods),
            unit: "",
            ratio: Some(writes(&methods) / count as f64),
        },
        Figure {
            name: "provider calls after restart".into(),
            value: provider_calls(&restart_page),
            unit: "",
            ratio: None,
        },
        Figure {
            name: "API writes after restart".into(),
            value: writes(&restart_methods),
            unit: "",
            ratio: None,
        },
    ];
    for (method, requests) in methods {
        figures.push(Figure {
            name: format!("API {method} requests until all Ready"),
            value: requests,
            unit: "",
            ratio: Some(requests / count as f64),
        });
    }
    Ok(figures)
}

/// The `fake` store: the shared keys and one key of each ExternalSecret's own.
async fn create_store(
    client: &kube::Client,
    namespace: &str,
    class: &str,
    count: usize,
) -> anyhow::Result<()> {
    let mut data: Vec<Value> = (0..SHARED_KEYS)
        .map(|index| json!({"key": format!("shared/{index}"), "value": format!("shared-value-{index}")}))
        .collect();
    data.extend((0..=count).map(
        |index| json!({"key": format!("own/{index}"), "value": format!("own-value-{index}")}),
    ));
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "store"},
        "spec": {"controller": class, "provider": {"fake": {"data": data}}},
    }))?;
    Api::<SecretStore>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

/// ExternalSecret `name`: two shared keys and its own.
fn external_secret(name: &str, index: usize, refresh: &str) -> anyhow::Result<ExternalSecret> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": name},
        "spec": {
            "refreshInterval": refresh,
            "secretStoreRef": {"name": "store", "kind": "SecretStore"},
            "data": [
                {"secretKey": "a", "remoteRef": {"key": format!("shared/{}", index % SHARED_KEYS)}},
                {"secretKey": "b", "remoteRef": {"key": format!("shared/{}", (index + 1) % SHARED_KEYS)}},
                {"secretKey": "c", "remoteRef": {"key": format!("own/{index}")}},
            ],
        },
    }))?)
}

/// Waits until the controller reports `count` ExternalSecrets Ready.
async fn wait_ready(controller: &ControllerProcess, count: usize) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(1800);
    loop {
        let page = controller.metrics().await?;
        let ready = metric_sum(
            &page,
            "externalsecret_status_condition",
            &["status=\"True\""],
        );
        if ready >= count as f64 {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "only {ready} of {count} Ready after 30 minutes"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Polls one ExternalSecret until its Ready condition is True.
async fn wait_for(api: &Api<ExternalSecret>, name: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let es = api.get(name).await?;
        let ready = es
            .status
            .iter()
            .flat_map(|s| &s.conditions)
            .any(|c| c.status == "True");
        if ready {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{name} not Ready after 10 minutes"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The unavoidable work: N server-side applies of a 3-key Secret, with the same concurrency.
async fn floor(
    client: &kube::Client,
    namespace: &str,
    count: usize,
    concurrent: u16,
) -> anyhow::Result<Duration> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let started = Instant::now();
    futures::stream::iter(0..count)
        .map(|index| {
            let secrets = secrets.clone();
            async move {
                let body = json!({
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": format!("floor-{index}")},
                    "stringData": {"a": "shared", "b": "shared", "c": format!("own-{index}")},
                });
                secrets
                    .patch(
                        &format!("floor-{index}"),
                        &PatchParams::apply("floor"),
                        &Patch::Apply(&body),
                    )
                    .await
                    .map_err(anyhow::Error::from)
            }
        })
        .buffer_unordered(usize::from(concurrent.max(1)))
        .try_collect::<Vec<_>>()
        .await?;
    Ok(started.elapsed())
}

fn report(figures: &[Figure], options: &Options) -> anyhow::Result<()> {
    println!(
        "{:<48} {:>12} {:>6} {:>10}",
        "figure", "value", "unit", "ratio"
    );
    for figure in figures {
        let ratio = figure.ratio.map(|r| format!("{r:.2}")).unwrap_or_default();
        println!(
            "{:<48} {:>12.2} {:>6} {:>10}",
            figure.name, figure.value, figure.unit, ratio
        );
    }
    let rows: Vec<Value> = figures
        .iter()
        .map(|f| json!({"figure": f.name, "value": f.value, "unit": f.unit, "ratio_to_floor": f.ratio}))
        .collect();
    let document =
        json!({"count": options.count, "concurrent": options.concurrent, "figures": rows});
    if let Some(parent) = options.json.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&options.json, serde_json::to_string_pretty(&document)?)?;
    println!("written to {}", options.json.display());
    Ok(())
}
