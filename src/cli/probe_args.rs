//! Flags the webhook and the cert controller share with upstream's: where metrics and probes
//! are served, and how logs look.

use std::net::SocketAddr;

use super::run_args::{MetricsTlsArgs, parse_address};

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
    /// HTTPS, reader checks (`--metrics-auth`) and HTTP/2 for metrics, as the controller's.
    #[command(flatten)]
    pub metrics_tls: MetricsTlsArgs,
}
