//! `loopback-bench`: throughput of the loopback API server driven through kube-rs over
//! HTTPS on loopback — creates/s, full lists/s, updates/s and watch events delivered/s.
//! Bounded in count and time; it stops by itself.

use clap::Parser;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;
use std::time::{Duration, Instant};

/// Loopback API server throughput benchmark.
#[derive(Debug, Parser)]
struct Cli {
    /// Objects to create (and then update).
    #[arg(long, default_value_t = 2000)]
    objects: usize,
    /// Concurrent client requests.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Concurrent watchers during the update phase.
    #[arg(long, default_value_t = 10)]
    watchers: usize,
    /// Seconds spent listing.
    #[arg(long, default_value_t = 3)]
    list_seconds: u64,
    /// Worker threads of the runtime (server and clients share it).
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cli.threads)
        .enable_all()
        .build()?
        .block_on(run(cli))
}

fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let server =
        loopback_apiserver::LoopbackServer::start(loopback_apiserver::Options::default()).await?;
    let client = server.client().await?;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "bench"}}))?,
        )
        .await?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "bench");
    let names: Vec<String> = (0..cli.objects)
        .map(|index| format!("object-{index:06}"))
        .collect();

    let started = Instant::now();
    futures::stream::iter(names.iter().cloned())
        .map(|name| {
            let api = api.clone();
            async move {
                let object: ConfigMap = serde_json::from_value(json!({
                    "metadata": {"name": name, "labels": {"bench": "true"}},
                    "data": {"payload": "x".repeat(256)},
                }))?;
                api.create(&PostParams::default(), &object).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(cli.concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    let elapsed = started.elapsed();
    println!(
        "creates:      {:>9.0}/s  ({} objects in {elapsed:.2?})",
        rate(cli.objects, elapsed),
        cli.objects
    );

    let started = Instant::now();
    let mut lists = 0;
    while started.elapsed() < Duration::from_secs(cli.list_seconds) {
        let listed = api
            .list(&ListParams::default().labels("bench=true"))
            .await?;
        anyhow::ensure!(
            listed.items.len() == cli.objects,
            "listed {} objects",
            listed.items.len()
        );
        lists += 1;
    }
    let elapsed = started.elapsed();
    println!(
        "full lists:   {:>9.1}/s  ({} objects each, {:.0} objects/s)",
        rate(lists, elapsed),
        cli.objects,
        rate(lists * cli.objects, elapsed)
    );

    let version = api
        .list(&ListParams::default().limit(1))
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut watchers = Vec::new();
    for _ in 0..cli.watchers {
        let stream = api
            .watch(&WatchParams::default().timeout(290), &version)
            .await?;
        let expected = cli.objects;
        watchers.push(tokio::spawn(async move {
            let mut stream = stream.boxed();
            let mut seen = 0;
            while seen < expected {
                match stream.try_next().await? {
                    Some(WatchEvent::Modified(_)) => seen += 1,
                    Some(_) => {}
                    None => anyhow::bail!("watch ended after {seen} events"),
                }
            }
            anyhow::Ok(Instant::now())
        }));
    }
    let started = Instant::now();
    futures::stream::iter(names.iter().cloned())
        .map(|name| {
            let api = api.clone();
            async move {
                api.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"data": {"updated": "yes"}})),
                )
                .await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(cli.concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    let updates_done = started.elapsed();
    let mut last = started;
    for watcher in watchers {
        last = last.max(tokio::time::timeout(Duration::from_secs(120), watcher).await???);
    }
    let delivered = last - started;
    println!(
        "updates:      {:>9.0}/s  ({} patches in {updates_done:.2?})",
        rate(cli.objects, updates_done),
        cli.objects
    );
    println!(
        "watch events: {:>9.0}/s  delivered ({} watchers x {} events in {delivered:.2?})",
        rate(cli.watchers * cli.objects, delivered),
        cli.watchers,
        cli.objects
    );
    Ok(())
}
