//! The benchmark's flags.

use std::path::PathBuf;
use std::time::Duration;

/// Flags of the scale benchmark.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "scale",
    about = "Syncs N ExternalSecrets with the release controller and measures time, memory, \
             API requests and provider calls against a plain client doing the same work"
)]
pub struct Options {
    /// Number of ExternalSecrets (three data entries each).
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// Concurrent reconciles of the controller (its `--concurrent`); the floor's client uses
    /// the same concurrency.
    #[arg(long, default_value_t = 4)]
    pub concurrent: u16,
    /// The ExternalSecrets' `refreshInterval` in seconds. The new ExternalSecret is created
    /// during the first refresh wave, so a run lasts at least this long; it must exceed the
    /// sync time plus the restart window for the restart to find nothing due.
    #[arg(long, default_value_t = 60)]
    pub refresh_seconds: u64,
    /// How long after a restart provider calls and API writes are counted (the issue asks
    /// about the first minute; 20 s keeps CI-size runs short).
    #[arg(long, default_value_t = 20)]
    pub restart_window_seconds: u64,
    /// The controller's `--provider-qps` and `--provider-burst`: its per-store limit (50/s by
    /// default) protects real backends, the in-memory fake provider needs none.
    #[arg(long, default_value_t = 100_000)]
    pub provider_qps: u32,
    /// Further flags for the controller, one per occurrence, e.g.
    /// `--controller-arg=--provider-read-dedup-window=0s`.
    #[arg(long = "controller-arg", allow_hyphen_values = true)]
    pub controller_args: Vec<String>,
    /// Kubeconfig of the cluster to run against; without it (and without `KUBECONFIG`) a
    /// loopback API server runs inside this process.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "target/scale.json")]
    pub json: PathBuf,
    /// Give up when the N ExternalSecrets are not all Ready after this many seconds.
    #[arg(long, default_value_t = 900)]
    pub timeout_seconds: u64,
}

impl Options {
    /// `refreshInterval` as a duration.
    pub fn refresh(&self) -> Duration {
        Duration::from_secs(self.refresh_seconds)
    }

    /// The restart window as a duration.
    pub fn restart_window(&self) -> Duration {
        Duration::from_secs(self.restart_window_seconds)
    }

    /// How often the controller's metrics page is scraped while waiting: a page of N
    /// ExternalSecrets costs the controller time to render (at 10,000 scraped every 500 ms it
    /// was the largest cost in the CPU profile, issue 24), so large runs scrape less often,
    /// at most once a second (Prometheus scrapes every 15-60 s); the figures are precise to
    /// this interval.
    pub fn poll(&self) -> Duration {
        Duration::from_millis((self.count as u64 / 10).clamp(100, 1000))
    }

    /// The flags the controller runs with.
    pub fn controller_flags(&self) -> Vec<String> {
        let mut flags = vec![
            "--concurrent".to_owned(),
            self.concurrent.to_string(),
            "--provider-qps".to_owned(),
            self.provider_qps.to_string(),
            "--provider-burst".to_owned(),
            self.provider_qps.to_string(),
        ];
        flags.extend(self.controller_args.iter().cloned());
        flags
    }
}
