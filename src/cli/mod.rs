//! Command-line interface: one subcommand per job the binary can do, so the same
//! image runs the controller, the webhook and the tooling around them.

mod certcontroller_args;
mod probe_args;
mod run_args;
mod webhook_args;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

pub use certcontroller_args::CertControllerArgs;
pub use probe_args::ProbeArgs;
pub use run_args::RunArgs;
pub use webhook_args::WebhookArgs;

/// Top-level arguments of the `external-secrets` binary. Without a subcommand it runs the
/// controllers with the given flags, as upstream's root command does, so upstream's
/// Deployment arguments work unchanged.
#[derive(Debug, Parser)]
#[command(
    name = "external-secrets",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to run; the controllers when absent.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The controllers' flags, when no subcommand is given.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Cli {
    /// The job to run, the root command's flags meaning `run`.
    pub fn into_command(self) -> Command {
        self.command.unwrap_or(Command::Run(self.run))
    }
}

/// The jobs the binary can run.
#[derive(Debug, Subcommand)]
// Parsed once at start; boxing the flags would only complicate the clap derive.
#[allow(clippy::large_enum_variant)]
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
    /// Run the controllers (SecretStore, ClusterSecretStore, ExternalSecret) with the metrics
    /// and probe servers until SIGINT or SIGTERM; the same as giving the flags alone.
    Run(RunArgs),
    /// Serve the validating admission webhooks (ExternalSecret, SecretStore,
    /// ClusterSecretStore, ClusterExternalSecret, PushSecret) over HTTPS with the certificate
    /// in `--cert-dir`, reloaded when it changes.
    Webhook(WebhookArgs),
    /// Keep the webhook's CA and serving certificate in its Secret, rotated before expiry,
    /// and inject the CA into the labelled ValidatingWebhookConfigurations and the CRDs'
    /// conversion webhooks.
    Certcontroller(CertControllerArgs),
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    fn run_args(args: &[&str]) -> super::RunArgs {
        use clap::Parser;
        let cli = Cli::try_parse_from(args).unwrap();
        match cli.into_command() {
            super::Command::Run(args) => args,
            other => panic!("expected the controllers, got {other:?}"),
        }
    }

    #[test]
    fn run_accepts_upstream_flags() {
        let args = run_args(&[
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
        ]);
        assert_eq!(args.controller_class, "dev");
        assert_eq!(args.metrics_addr.to_string(), "0.0.0.0:9090");
        assert_eq!(args.store_requeue_interval.as_secs(), 60);
        assert!(!args.enable_cluster_store_reconciler);
        assert!(!args.enable_leader_election);
        let defaults = run_args(&["external-secrets", "run"]);
        assert_eq!(defaults.controller_class, "default");
        assert_eq!(defaults.store_requeue_interval.as_secs(), 300);
        assert!(defaults.enable_cluster_store_reconciler);
        assert_eq!(defaults.leader_election_id, "external-secrets-controller");
        assert_eq!(defaults.live_addr.to_string(), "0.0.0.0:8082");
        assert_eq!(defaults.leader_election_lease_duration.as_secs(), 15);
        // Go-style booleans: a bare flag means true, `=false` turns it off.
        let bare = run_args(&[
            "external-secrets",
            "run",
            "--enable-leader-election",
            "--enable-cluster-store-reconciler=false",
        ]);
        assert!(bare.enable_leader_election);
        assert!(!bare.enable_cluster_store_reconciler);
        // --enable-http2 is upstream's, off by default, and a real flag (not compatibility-only).
        assert!(!defaults.metrics_tls.enable_http2);
        let http2 = run_args(&["external-secrets", "--enable-http2", "--metrics-secure"]);
        assert!(http2.metrics_tls.enable_http2);
        assert!(http2.compatibility.given().is_empty());
    }

    #[test]
    fn doppler_etag_cache_size_is_upstreams_and_takes_effect() {
        let defaults = run_args(&["external-secrets", "run"]);
        assert_eq!(defaults.doppler_etag_cache_size, 1 << 14);
        assert!(defaults.compatibility.given().is_empty());
        let off = run_args(&["external-secrets", "--doppler-etag-cache-size=-1"]);
        assert_eq!(off.doppler_etag_cache_size, -1);
        let oidc = run_args(&[
            "external-secrets",
            "--experimental-enable-doppler-oidc-cache",
        ]);
        assert_eq!(
            oidc.compatibility.given(),
            ["experimental-enable-doppler-oidc-cache"]
        );
    }

    #[test]
    fn root_command_runs_the_controllers_with_upstream_deployment_args() {
        // The arguments upstream's Helm chart renders, plus compatibility-only flags.
        let args = run_args(&[
            "external-secrets",
            "--concurrent=2",
            "--metrics-addr=:8080",
            "--loglevel=info",
            "--zap-time-encoding=epoch",
            "--enable-leader-election=true",
            "--enable-managed-secrets-caching=true",
            "--enable-secrets-caching",
            "--experimental-enable-vault-token-cache=false",
            "--namespace=team-a",
            "--client-qps=50",
            "--client-burst=100",
        ]);
        assert_eq!(args.concurrent, 2);
        assert!(args.enable_leader_election);
        assert_eq!(args.namespace, "team-a");
        assert_eq!(args.client_qps, 50.0);
        assert_eq!(
            args.compatibility.given(),
            [
                "enable-secrets-caching",
                "enable-managed-secrets-caching",
                "experimental-enable-vault-token-cache"
            ]
        );
        let zap = run_args(&["external-secrets", "--zap-log-level=debug"]);
        assert_eq!(zap.loglevel, "debug");
        use clap::Parser;
        assert!(Cli::try_parse_from(["external-secrets", "--no-such-flag"]).is_err());
        assert!(Cli::try_parse_from(["external-secrets", "--zap-time-encoding=weird"]).is_err());
    }
    #[test]
    fn webhook_accepts_upstream_deployment_args() {
        use clap::Parser;
        // The arguments upstream's Helm chart renders for the webhook.
        let cli = Cli::try_parse_from([
            "external-secrets",
            "webhook",
            "--port=10250",
            "--dns-name=eso-webhook.eso.svc",
            "--cert-dir=/tmp/certs",
            "--check-interval=5m",
            "--metrics-addr=:8080",
            "--healthz-addr=:8081",
            "--loglevel=info",
            "--zap-time-encoding=epoch",
            "--lookahead-interval=720h",
            "--enable-http2=true",
            "--tls-ciphers=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "--tls-min-version=1.3",
            "--metrics-secure=true",
            "--metrics-cert-dir=/etc/tls",
            "--metrics-cert-name=tls.crt",
            "--metrics-key-name=tls.key",
            "--metrics-auth=true",
        ])
        .unwrap();
        let super::Command::Webhook(args) = cli.into_command() else {
            panic!("expected the webhook");
        };
        assert_eq!(args.port, 10250);
        assert_eq!(args.dns_name, "eso-webhook.eso.svc");
        assert_eq!(args.cert_dir.to_str(), Some("/tmp/certs"));
        assert_eq!(args.check_interval.as_secs(), 300);
        assert_eq!(args.lookahead_interval.as_secs(), 720 * 3600);
        assert_eq!(args.probes.healthz_addr.to_string(), "0.0.0.0:8081");
        assert_eq!(args.tls_min_version, "1.3");
        let metrics = &args.probes.metrics_tls;
        assert!(metrics.enable_http2 && metrics.metrics_auth);
        assert_eq!(
            metrics.tls().and_then(|tls| tls.cert_dir),
            Some("/etc/tls".into())
        );
        let defaults = Cli::try_parse_from(["external-secrets", "webhook"]).unwrap();
        let super::Command::Webhook(defaults) = defaults.into_command() else {
            panic!("expected the webhook");
        };
        assert_eq!(defaults.dns_name, "localhost");
        assert_eq!(
            defaults.cert_dir.to_str(),
            Some("/tmp/k8s-webhook-server/serving-certs")
        );
        assert_eq!(defaults.lookahead_interval.as_secs(), 90 * 24 * 3600);
        assert_eq!(defaults.tls_min_version, "1.2");
        assert_eq!(defaults.probes.metrics_addr.to_string(), "0.0.0.0:8080");
        // Upstream's defaults: HTTP/2 off, metrics over plain HTTP.
        assert!(!defaults.probes.metrics_tls.enable_http2);
        assert_eq!(defaults.probes.metrics_tls.tls(), None);
    }

    #[test]
    fn certcontroller_accepts_upstream_deployment_args() {
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "external-secrets",
            "certcontroller",
            "--crd-requeue-interval=5m",
            "--service-name=eso-webhook",
            "--service-namespace=eso",
            "--secret-name=eso-webhook",
            "--secret-namespace=eso",
            "--metrics-addr=:8080",
            "--healthz-addr=:8081",
            "--loglevel=info",
            "--zap-time-encoding=epoch",
            "--crd-names=externalsecrets.external-secrets.io",
            "--crd-names=secretstores.external-secrets.io",
            "--enable-partial-cache=true",
            "--enable-leader-election=true",
            "--enable-http2",
            "--metrics-secure",
        ])
        .unwrap();
        let super::Command::Certcontroller(args) = cli.into_command() else {
            panic!("expected the cert controller");
        };
        assert_eq!(args.service_name, "eso-webhook");
        assert_eq!(args.secret_namespace, "eso");
        assert_eq!(
            args.crd_names,
            [
                "externalsecrets.external-secrets.io",
                "secretstores.external-secrets.io"
            ]
        );
        assert!(args.enable_leader_election);
        assert!(args.probes.metrics_tls.enable_http2);
        // Without --metrics-cert-dir a self-signed certificate is generated.
        assert_eq!(
            args.probes.metrics_tls.tls().map(|tls| tls.cert_dir),
            Some(None)
        );
        let defaults = Cli::try_parse_from(["external-secrets", "certcontroller"]).unwrap();
        let super::Command::Certcontroller(defaults) = defaults.into_command() else {
            panic!("expected the cert controller");
        };
        assert_eq!(defaults.crd_names.len(), 3);
        assert_eq!(defaults.service_name, "external-secrets-webhook");
        assert_eq!(defaults.service_namespace, "default");
        assert_eq!(defaults.secret_name, "external-secrets-webhook");
        assert_eq!(defaults.crd_requeue_interval.as_secs(), 300);
        assert!(!defaults.enable_leader_election);
    }
}
