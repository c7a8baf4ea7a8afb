//! Flags the webhook and the cert controller share with upstream's: where metrics and probes
//! are served, and how logs look.

use std::net::SocketAddr;

use clap::ArgAction;

use super::run_args::parse_address;

/// Metrics, probe and log flags of `webhook` and `certcontroller`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// The address the metric endpoint binds to; `:8080` means all interfaces.
    #[arg(long, default_value = ":8080", value_parser = parse_address)]
    pub metrics_addr: SocketAddr,
    /// The address the health endpoint (`/healthz`, `/readyz`) binds to.
    #[arg(long, default_value = ":8081", value_parser = parse_address)]
    pub healthz_addr: SocketAddr,
    /// Log level: debug, info, warn, error, or a tracing filter directive.
    #[arg(long, default_value = "info")]
    pub loglevel: String,
    /// Time encoding of log lines: epoch, millis, nano, iso8601, rfc3339 or rfc3339nano.
    #[arg(long, default_value = "epoch", value_parser = ["epoch", "millis", "nano", "iso8601", "rfc3339", "rfc3339nano"])]
    pub zap_time_encoding: String,
    /// Let only readers the API server authenticates (TokenReview) and authorizes (`get` on
    /// the non-resource URL `/metrics`, SubjectAccessReview) read metrics, as controller-runtime.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", default_value_t = false)]
    pub metrics_auth: bool,
    /// Upstream's metrics-server flags this build does not implement, accepted so upstream
    /// Deployments start unchanged.
    #[command(flatten)]
    pub compatibility: MetricsCompatibilityArgs,
}

/// Upstream flags accepted for compatibility only: metrics are served over plain HTTP, and
/// servers speak HTTP/1.1.
#[derive(Debug, Clone, clap::Args)]
pub struct MetricsCompatibilityArgs {
    /// Not supported yet: metrics are served over plain HTTP.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub metrics_secure: Option<bool>,
    /// Used with `--metrics-secure` only.
    #[arg(long, hide = true)]
    pub metrics_cert_dir: Option<String>,
    /// Used with `--metrics-secure` only.
    #[arg(long, hide = true)]
    pub metrics_cert_name: Option<String>,
    /// Used with `--metrics-secure` only.
    #[arg(long, hide = true)]
    pub metrics_key_name: Option<String>,
    /// No effect: servers speak HTTP/1.1 only (upstream's default).
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_http2: Option<bool>,
}

impl MetricsCompatibilityArgs {
    /// The names of the compatibility flags given on the command line, to warn about.
    pub fn given(&self) -> Vec<&'static str> {
        [
            ("metrics-secure", self.metrics_secure.is_some()),
            ("metrics-cert-dir", self.metrics_cert_dir.is_some()),
            ("metrics-cert-name", self.metrics_cert_name.is_some()),
            ("metrics-key-name", self.metrics_key_name.is_some()),
            ("enable-http2", self.enable_http2.is_some()),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .map(|(name, _)| name)
        .collect()
    }
}
