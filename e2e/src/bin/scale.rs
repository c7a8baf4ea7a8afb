//! The scale benchmark (issue 5): N ExternalSecrets (three entries each, two of them shared
//! with others) against one `fake` SecretStore, synced by the release controller binary run as
//! a separate process, on a loopback API server in this process (or the cluster a kubeconfig
//! names). Measures, and compares with a plain client doing only the unavoidable work:
//!
//! * time until all N are Ready, peak and steady RSS, CPU seconds of the controller;
//! * the controller's API requests by verb and resource (loopback) or HTTP method (its own
//!   metrics, elsewhere), and its provider calls;
//! * how long a new ExternalSecret takes to become Ready while the N refresh, and what one
//!   refresh cycle costs;
//! * provider calls and API writes in the first window after a restart.
//!
//! Prints one table and writes it as JSON. Figures, not assertions:
//! `cargo build --release -p external-secrets --bin external-secrets`, then
//! `cargo run --release -p e2e --bin scale -- --count 1000`.

#[path = "scale/observe.rs"]
mod observe;
#[path = "scale/options.rs"]
mod options;
#[path = "scale/phases.rs"]
mod phases;
#[path = "scale/report.rs"]
mod report;
#[path = "scale/setup.rs"]
mod setup;
#[path = "scale/workload.rs"]
mod workload;

use std::time::{Duration, Instant};

use clap::Parser as _;
use e2e::bench::sample;
use e2e::harness::{TestNamespace, install_crds};
use kube::api::Api;
use serde_json::json;

use options::Options;
use phases::{InitialSync, RefreshWave, Restart, Run};
use report::Figure;
use setup::{Bench, Requests};
use workload::Floor;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let bench = Bench::connect(options.kubeconfig.clone()).await?;
    println!("cluster: {}", bench.describe());
    install_crds(&bench.cluster.client).await?;
    let namespace = TestNamespace::create(&bench.cluster, "eso-scale").await?;
    let class = format!("scale-{}", std::process::id());
    let result = measure(&bench, &namespace.name, &class, &options).await;
    if let Err(error) = namespace.delete().await {
        eprintln!("deleting the benchmark namespace: {error:#}");
    }
    let figures = result?;
    print!("{}", report::table(&figures));
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let context = json!({
        "count": options.count,
        "concurrent": options.concurrent,
        "refresh_seconds": options.refresh_seconds,
        "restart_window_seconds": options.restart_window_seconds,
        "provider_qps": options.provider_qps,
        "controller_args": options.controller_args,
        "cluster": bench.describe(),
        "cores": cores,
        "poll_milliseconds": options.poll().as_millis() as u64,
    });
    report::write_json(&options.json, context, &figures)?;
    println!("written to {}", options.json.display());
    Ok(())
}

async fn measure(
    bench: &Bench,
    namespace: &str,
    class: &str,
    options: &Options,
) -> anyhow::Result<Vec<Figure>> {
    let client = &bench.cluster.client;
    let count = options.count;
    let bench_before = sample(std::process::id());
    let floor = workload::floor(&bench.floor_client, namespace, count, options.concurrent).await?;
    let floor_cpu = phases::cpu_since(bench_before);
    println!(
        "floors: {:.2}s (Secret applies), {:.2}s (Secret then status applies)",
        floor.elapsed.as_secs_f64(),
        floor.with_status.as_secs_f64()
    );

    let created = Instant::now();
    workload::create_store(client, namespace, class, count).await?;
    let run = Run {
        bench,
        class,
        options,
        external_secrets: Api::namespaced(client.clone(), namespace),
        deadline: Instant::now() + Duration::from_secs(options.timeout_seconds),
    };
    workload::create_external_secrets(&run.external_secrets, count, options.refresh()).await?;
    println!(
        "created {count} ExternalSecrets in {:.2}s",
        created.elapsed().as_secs_f64()
    );

    let (controller, sync) = phases::initial_sync(&run).await?;
    println!("all Ready after {:.2}s", sync.elapsed.as_secs_f64());
    if sync.elapsed + options.restart_window() + Duration::from_secs(5) > options.refresh() {
        println!(
            "note: the sync plus the restart window outlast --refresh-seconds: refreshes fall \
             into the restart window (counted as due)"
        );
    }
    let (controller, restart) = phases::restart(&run, controller, &sync.synced).await?;
    println!("restart window over; waiting for the refresh wave");
    let wave = phases::refresh_wave(&run, &controller, &sync.synced).await?;
    controller.stop().await?;
    let floor_requests = bench.floor_requests();
    Ok(figures(
        options,
        &floor,
        floor_cpu,
        floor_requests.as_ref(),
        &sync,
        &restart,
        &wave,
    ))
}

fn figures(
    options: &Options,
    floor: &Floor,
    floor_cpu: Option<f64>,
    floor_requests: Option<&Requests>,
    sync: &InitialSync,
    restart: &Restart,
    wave: &RefreshWave,
) -> Vec<Figure> {
    let count = options.count as f64;
    let mib = |kib: u64| Some(kib as f64 / 1024.0);
    let floor_time = Some(floor.elapsed.as_secs_f64());
    let two_writes = Some(floor.with_status.as_secs_f64());
    let floor_reads = Some(floor.provider_reads as f64);
    // The physical limit: one Secret apply and one status apply per ExternalSecret.
    let floor_total = 2.0 * floor.applies as f64;
    let window = options.restart_window_seconds;
    let mut figures = vec![
        Figure::new("ExternalSecrets", Some(count), ""),
        Figure::against(
            "floor: distinct reads + N Secret applies",
            floor_time,
            "s",
            floor_time,
        ),
        Figure::against(
            "floor: the same + N status applies (two writes)",
            two_writes,
            "s",
            floor_time,
        ),
        Figure::against(
            "time until all Ready (vs Secret applies)",
            Some(sync.elapsed.as_secs_f64()),
            "s",
            floor_time,
        ),
        Figure::against(
            "time until all Ready (vs two writes)",
            Some(sync.elapsed.as_secs_f64()),
            "s",
            two_writes,
        ),
        Figure::against(
            "API server CPU during it (in-process loopback)",
            sync.bench_cpu.filter(|_| floor_requests.is_some()),
            "s",
            floor_cpu,
        ),
        Figure::new(
            "controller CPU until all Ready",
            Some(sync.process.cpu_seconds),
            "s",
        ),
        Figure::new(
            "controller peak RSS (VmHWM) until all Ready",
            mib(sync.process.peak_rss_kib),
            "MiB",
        ),
        Figure::new(
            "controller RSS when all Ready",
            mib(sync.process.rss_kib),
            "MiB",
        ),
        Figure::new(
            "steady-state RSS after a refresh cycle",
            mib(wave.process.rss_kib),
            "MiB",
        ),
        Figure::new(
            "  of which file-backed (the binary's pages)",
            mib(wave.process.rss_file_kib),
            "MiB",
        ),
        Figure::new(
            "peak RSS (VmHWM) of the restarted controller",
            mib(wave.process.peak_rss_kib),
            "MiB",
        ),
        Figure::against(
            "provider calls until all Ready",
            Some(sync.provider_calls),
            "",
            floor_reads,
        ),
        Figure::against(
            "API requests until all Ready",
            Some(sync.requests.total()),
            "",
            Some(floor_total),
        ),
        Figure::against(
            "API writes until all Ready",
            Some(sync.requests.writes()),
            "",
            Some(floor_total),
        ),
    ];
    for (label, requests) in sync.requests.labelled() {
        figures.push(Figure::against(
            format!("  {label}"),
            Some(requests),
            "",
            Some(floor_total),
        ));
    }
    figures.extend([
        Figure::new(
            "new ExternalSecret Ready while the N refresh",
            Some(wave.newcomer_ready.as_secs_f64()),
            "s",
        ),
        Figure::against(
            "refresh cycle: provider calls",
            Some(wave.provider_calls),
            "",
            floor_reads,
        ),
        Figure::new(
            "refresh cycle: data entries (3 per ExternalSecret)",
            Some(3.0 * count + 3.0),
            "",
        ),
        Figure::new(
            "refresh cycle: API requests",
            Some(wave.requests.total()),
            "",
        ),
        Figure::new(
            "refresh cycle: API writes",
            Some(wave.requests.writes()),
            "",
        ),
        Figure::new(
            "refresh cycle: Secret writes",
            Some(wave.requests.secret_writes()),
            "",
        ),
        Figure::new(
            format!("restart: ExternalSecrets due in the first {window}s"),
            Some(restart.due as f64),
            "",
        ),
        Figure::new(
            format!("restart: provider calls in the first {window}s"),
            Some(restart.provider_calls),
            "",
        ),
        Figure::new(
            format!("restart: API writes in the first {window}s"),
            Some(restart.requests.writes()),
            "",
        ),
        Figure::new(
            format!("restart: Secret writes in the first {window}s"),
            Some(restart.requests.secret_writes()),
            "",
        ),
        Figure::new(
            format!("restart: API requests in the first {window}s"),
            Some(restart.requests.total()),
            "",
        ),
        Figure::new(
            "restart: until the new process reports all Ready",
            restart.all_ready.map(|took| took.as_secs_f64()),
            "s",
        ),
        Figure::new(
            format!("restart: controller CPU in the first {window}s"),
            Some(restart.process.cpu_seconds),
            "s",
        ),
    ]);
    for (label, requests) in restart.requests.labelled() {
        figures.push(Figure::new(
            format!("  restart: {label}"),
            Some(requests),
            "",
        ));
    }
    figures
}
