//! The benchmark's phases against a running controller: the initial sync of N
//! ExternalSecrets, a restart with nothing due, and a refresh wave with a newcomer.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use e2e::bench::{ProcessSample, sample};
use e2e::harness::ControllerProcess;
use external_secrets_crds::v1::ExternalSecret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};

use crate::observe;
use crate::options::Options;
use crate::setup::{Bench, Requests};
use crate::workload;

/// What the benchmark shares between phases.
pub struct Run<'a> {
    /// The cluster and request counting.
    pub bench: &'a Bench,
    /// The controller class the store names.
    pub class: &'a str,
    /// The flags.
    pub options: &'a Options,
    /// The ExternalSecrets of the benchmark's namespace.
    pub external_secrets: Api<ExternalSecret>,
    /// When waiting gives up.
    pub deadline: Instant,
}

/// The first controller's sync of the N ExternalSecrets.
pub struct InitialSync {
    /// From starting the process until it reported all N Ready.
    pub elapsed: Duration,
    /// The controller's memory and CPU at that moment.
    pub process: ProcessSample,
    /// This process's CPU seconds meanwhile: the loopback server's work (plus polling).
    pub bench_cpu: Option<f64>,
    /// Provider calls the controller counted.
    pub provider_calls: f64,
    /// API requests of the controller.
    pub requests: Requests,
    /// The ExternalSecrets as they were then (for their refresh times).
    pub synced: Vec<ExternalSecret>,
}

/// Starts the controller and waits until all N are Ready; returns the running controller.
pub async fn initial_sync(run: &Run<'_>) -> anyhow::Result<(ControllerProcess, InitialSync)> {
    let options = run.options;
    let baseline = run.bench.baseline_for_new_process();
    let bench_before = sample(std::process::id());
    let started = Instant::now();
    let controller = start(run).await?;
    let pid = controller.pid().context("controller pid")?;
    let page = observe::all_ready(&controller, options.count, options.poll(), run.deadline).await?;
    let elapsed = started.elapsed();
    let process = sample(pid).unwrap_or_default();
    let bench_cpu = cpu_since(bench_before);
    let requests = run.bench.controller_requests(&page).since(&baseline);
    let synced = observe::confirm_ready(&run.external_secrets, options.count, run.deadline).await?;
    Ok((
        controller,
        InitialSync {
            elapsed,
            process,
            bench_cpu,
            provider_calls: observe::provider_calls(&page),
            requests,
            synced,
        },
    ))
}

/// The first window after a restart.
pub struct Restart {
    /// ExternalSecrets whose refresh could fall into the window.
    pub due: usize,
    /// Provider calls in the window.
    pub provider_calls: f64,
    /// API requests in the window.
    pub requests: Requests,
    /// Until the new process reported all N Ready (from its status, without syncing).
    pub all_ready: Option<Duration>,
    /// The new process's memory and CPU at the end of the window.
    pub process: ProcessSample,
}

/// Stops `controller`, starts a new one and counts what it does in the restart window.
pub async fn restart(
    run: &Run<'_>,
    controller: ControllerProcess,
    synced: &[ExternalSecret],
) -> anyhow::Result<(ControllerProcess, Restart)> {
    let options = run.options;
    controller.stop().await?;
    let baseline = run.bench.baseline_for_new_process();
    let started = Instant::now();
    let end = started + options.restart_window();
    let restarted = start(run).await?;
    let pid = restarted.pid().context("controller pid")?;
    let caught_up = observe::all_ready(&restarted, options.count, options.poll(), end).await;
    let all_ready = caught_up.is_ok().then(|| started.elapsed());
    tokio::time::sleep_until(end.into()).await;
    let page = restarted.metrics().await?;
    let (due, _) = observe::due(synced, options.refresh(), Timestamp::now());
    let restart = Restart {
        due,
        provider_calls: observe::provider_calls(&page),
        requests: run.bench.controller_requests(&page).since(&baseline),
        all_ready,
        process: sample(pid).unwrap_or_default(),
    };
    Ok((restarted, restart))
}

/// One refresh cycle of the N, and a new ExternalSecret created during it.
pub struct RefreshWave {
    /// From creating the newcomer until it was Ready.
    pub newcomer_ready: Duration,
    /// Provider calls during the cycle (the newcomer's included).
    pub provider_calls: f64,
    /// API requests during the cycle.
    pub requests: Requests,
    /// The controller's memory after the cycle.
    pub process: ProcessSample,
}

/// Waits for the N to come due, creates the newcomer once the refreshes are under way,
/// times it, and counts the cycle until the controller is quiet again.
pub async fn refresh_wave(
    run: &Run<'_>,
    controller: &ControllerProcess,
    synced: &[ExternalSecret],
) -> anyhow::Result<RefreshWave> {
    let options = run.options;
    let count = options.count;
    let refresh = options.refresh();
    let first_due = synced
        .iter()
        .filter_map(|es| es.status.as_ref()?.refresh_time.as_ref())
        .map(|time| time.0)
        .min()
        .context("no ExternalSecret has a refreshTime")?;
    let (_, last_due) = observe::due(synced, refresh, Timestamp::now());
    let last_due = last_due.context("no ExternalSecret has a refreshTime")?;
    // Just before the first refresh is due (refreshTime has whole seconds).
    tokio::time::sleep(until(first_due, refresh).saturating_sub(Duration::from_secs(1))).await;
    let before = controller.metrics().await?;
    let (syncs_before, calls_before) = (observe::syncs(&before), observe::provider_calls(&before));
    let requests_before = run.bench.controller_requests(&before);
    let under_way = (count as f64 / 20.0).max(1.0);
    let deadline = Instant::now() + refresh + Duration::from_secs(60);
    observe::poll_until(
        controller,
        Duration::from_millis(50),
        deadline,
        "refreshes",
        |page| observe::syncs(page) - syncs_before >= under_way,
    )
    .await?;
    let newcomer = Instant::now();
    run.external_secrets
        .create(
            &PostParams::default(),
            &workload::external_secret(count, refresh)?,
        )
        .await?;
    observe::one_ready(&run.external_secrets, &workload::name(count), deadline).await?;
    let newcomer_ready = newcomer.elapsed();
    // Every refresh is due by the last refreshTime plus the interval and its 5% jitter; the
    // cycle is over when the controller has been quiet for a while after that.
    let jitter = refresh.mul_f64(0.05) + Duration::from_secs(1);
    tokio::time::sleep(until(last_due, Duration::ZERO) + jitter).await;
    let after = quiet(
        controller,
        options.poll().max(Duration::from_millis(500)),
        deadline,
    )
    .await?;
    Ok(RefreshWave {
        newcomer_ready,
        provider_calls: observe::provider_calls(&after) - calls_before,
        requests: run
            .bench
            .controller_requests(&after)
            .since(&requests_before),
        process: sample(controller.pid().context("controller pid")?).unwrap_or_default(),
    })
}

/// Waits until the controller's sync counter stays the same for three scrapes `poll` apart.
async fn quiet(
    controller: &ControllerProcess,
    poll: Duration,
    deadline: Instant,
) -> anyhow::Result<String> {
    let mut last = f64::NAN;
    let mut unchanged = 0;
    observe::poll_until(
        controller,
        poll,
        deadline,
        "the refresh cycle to end",
        |page| {
            let syncs = observe::syncs(page);
            unchanged = if syncs == last { unchanged + 1 } else { 0 };
            last = syncs;
            unchanged >= 3
        },
    )
    .await
}

/// How long from now until `time + offset` (zero when past).
fn until(time: Timestamp, offset: Duration) -> Duration {
    let now = Timestamp::now();
    let target = time.as_millisecond() + offset.as_millis() as i64;
    Duration::from_millis(u64::try_from(target - now.as_millisecond()).unwrap_or(0))
}

async fn start(run: &Run<'_>) -> anyhow::Result<ControllerProcess> {
    let flags = run.options.controller_flags();
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    ControllerProcess::start(&run.bench.cluster, run.class, &args).await
}

/// This process's CPU seconds since `before`.
pub fn cpu_since(before: Option<ProcessSample>) -> Option<f64> {
    let now = sample(std::process::id())?;
    Some(now.cpu_seconds - before?.cpu_seconds)
}
