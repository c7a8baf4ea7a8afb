//! Command-line interface: one subcommand per job the binary can do, so the same
//! image runs the controller, the webhook and the tooling around them.

use clap::{ArgAction, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Top-level arguments of the `external-secrets` binary.
#[derive(Debug, Parser)]
#[command(name = "external-secrets", version, about)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The jobs the binary can run.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every CustomResourceDefinition this build serves, as multi-document YAML,
    /// so clusters and the Helm chart install exactly the schema the types define.
    Crds {
        /// Write one file per CRD into this directory (upstream's file names) instead of
        /// printing to standard output.
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
    /// Run the ExternalSecret pipeline without a cluster: read SecretStores, ExternalSecrets
    /// and the Secrets/ConfigMaps they reference from a multi-document YAML file, and print
    /// the Secrets the controller would write (failures as the status condition words them).
    Render {
        /// The manifest file to read.
        #[arg(short = 'f', long)]
        file: PathBuf,
    },
    /// Run the controllers (SecretStore, ClusterSecretStore, ExternalSecret) with the metrics and probe
    /// server, until SIGINT or SIGTERM.
    Run(RunArgs),
}

/// Flags of `run`, named as upstream's `external-secrets` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// The controller is instantiated with a specific controller name and filters stores
    /// based on their `spec.controller`.
    #[arg(long, default_value = "default")]
    pub controller_class: String,
    /// The address the metric endpoint (and /healthz, /readyz) binds to; `:8080` means all
    /// interfaces.
    #[arg(long, default_value = ":8080", value_parser = parse_address)]
    pub metrics_addr: SocketAddr,
    /// Default time duration between reconciling (Cluster)SecretStores, e.g. `5m`.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub store_requeue_interval: Duration,
    /// Enable the ClusterSecretStore reconciler.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_cluster_store_reconciler: bool,
    /// Enable leader election for controller manager. Enabling this will ensure there is only
    /// one active controller manager.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_leader_election: bool,
    /// The name of the Lease used for leader election; set a unique value when running
    /// several deployments in the same namespace.
    #[arg(long, default_value = "external-secrets-controller")]
    pub leader_election_id: String,
    /// The namespace of the leader election Lease (default: the pod's namespace, or the
    /// kubeconfig context's outside a cluster).
    #[arg(long)]
    pub leader_election_namespace: Option<String>,
    /// The number of concurrent reconciles per controller.
    #[arg(long, default_value_t = 1)]
    pub concurrent: u16,
    /// Log level: debug, info, warn or error (or a tracing filter directive).
    #[arg(long, default_value = "info")]
    pub loglevel: String,
}

/// Accepts Go-style `:8080` as well as `host:port`.
fn parse_address(text: &str) -> Result<SocketAddr, String> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    };
    full.parse()
        .map_err(|error| format!("invalid address {text:?}: {error}"))
}

/// Accepts a Go duration such as `5m` or `1h30m`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    external_secrets_providers::duration::parse_go_duration(text)
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_accepts_upstream_flags() {
        use super::Command;
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "external-secrets",
            "run",
            "--controller-class",
            "dev",
            "--metrics-addr",
            ":9090",
            "--store-requeue-interval",
            "1m",
            "--enable-cluster-store-reconciler",
            "false",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("expected run")
        };
        assert_eq!(args.controller_class, "dev");
        assert_eq!(args.metrics_addr.to_string(), "0.0.0.0:9090");
        assert_eq!(args.store_requeue_interval.as_secs(), 60);
        assert!(!args.enable_cluster_store_reconciler);
        assert!(!args.enable_leader_election);
        let defaults = Cli::try_parse_from(["external-secrets", "run"]).unwrap();
        let Command::Run(args) = defaults.command else {
            panic!("expected run")
        };
        assert_eq!(args.controller_class, "default");
        assert_eq!(args.store_requeue_interval.as_secs(), 300);
        assert!(args.enable_cluster_store_reconciler);
        assert_eq!(args.leader_election_id, "external-secrets-controller");
        // Go-style booleans: a bare flag means true, `=false` turns it off.
        let bare = Cli::try_parse_from([
            "external-secrets",
            "run",
            "--enable-leader-election",
            "--enable-cluster-store-reconciler=false",
        ])
        .unwrap();
        let Command::Run(args) = bare.command else {
            panic!("expected run")
        };
        assert!(args.enable_leader_election);
        assert!(!args.enable_cluster_store_reconciler);
    }
}
