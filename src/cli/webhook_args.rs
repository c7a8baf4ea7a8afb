//! Flags of `external-secrets webhook`, named and defaulted as upstream's `webhook` command,
//! so upstream's Deployment arguments start it unchanged.

use std::path::PathBuf;
use std::time::Duration;

use super::ProbeArgs;
use super::run_args::parse_duration;

/// Flags of the admission webhook server.
#[derive(Debug, Clone, clap::Args)]
pub struct WebhookArgs {
    /// Port number that the webhook server (HTTPS) serves on.
    #[arg(long, default_value_t = 10250)]
    pub port: u16,
    /// DNS name the serving certificate must be valid for (readiness and the periodic check).
    #[arg(long, default_value = "localhost")]
    pub dns_name: String,
    /// Directory holding `tls.crt`, `tls.key` and `ca.crt`; reloaded when they change.
    #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs")]
    pub cert_dir: PathBuf,
    /// How often the certificate files are checked for changes and for expiry.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub check_interval: Duration,
    /// The serving certificate must stay valid this far ahead; an error is logged otherwise.
    #[arg(long, default_value = "2160h", value_parser = parse_duration)]
    pub lookahead_interval: Duration,
    /// Comma-separated TLS 1.2 cipher suites to allow, by their IANA names (TLS 1.3 suites are
    /// always enabled and chosen automatically). Empty: the TLS library's defaults.
    #[arg(long, default_value = "")]
    pub tls_ciphers: String,
    /// Minimum TLS version: 1.2 or 1.3 (1.0 and 1.1 are not supported and mean 1.2).
    #[arg(long, default_value = "1.2")]
    pub tls_min_version: String,
    /// Metrics, probes and logs.
    #[command(flatten)]
    pub probes: ProbeArgs,
}
