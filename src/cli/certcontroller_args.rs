//! Flags of `external-secrets certcontroller`, named and defaulted as upstream's
//! `certcontroller` command, so upstream's Deployment arguments start it unchanged.

use std::time::Duration;

use clap::ArgAction;

use super::ProbeArgs;
use super::run_args::parse_duration;

/// Flags of the certificate controller.
#[derive(Debug, Clone, clap::Args)]
pub struct CertControllerArgs {
    /// How often the certificate and its injection are checked even without changes.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub crd_requeue_interval: Duration,
    /// The webhook's Service name: the certificate is issued for `<name>.<namespace>.svc`.
    #[arg(long, default_value = "external-secrets-webhook")]
    pub service_name: String,
    /// The webhook's Service namespace.
    #[arg(long, default_value = "default")]
    pub service_namespace: String,
    /// The Secret holding the certificates (`ca.crt`, `ca.key`, `tls.crt`, `tls.key`).
    #[arg(long, default_value = "external-secrets-webhook")]
    pub secret_name: String,
    /// The namespace of that Secret.
    #[arg(long, default_value = "default")]
    pub secret_namespace: String,
    /// CustomResourceDefinitions whose conversion webhook (when their strategy is Webhook)
    /// gets the CA bundle and Service; repeat the flag or separate names by commas.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [
            "externalsecrets.external-secrets.io".to_owned(),
            "clustersecretstores.external-secrets.io".to_owned(),
            "secretstores.external-secrets.io".to_owned(),
        ]
    )]
    pub crd_names: Vec<String>,
    /// The ValidatingWebhookConfigurations to inject, by label selector. Not an upstream
    /// flag (upstream always selects `external-secrets.io/component=webhook`): narrow it to run
    /// several cert controllers in one cluster without them fighting over each other's
    /// configurations.
    #[arg(long, default_value = "external-secrets.io/component=webhook")]
    pub webhook_config_selector: String,
    /// No effect: only labelled ValidatingWebhookConfigurations and the named CRDs are read.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_partial_cache: Option<bool>,
    /// Enable leader election, so only one of several replicas writes certificates.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_leader_election: bool,
    /// Metrics, probes and logs.
    #[command(flatten)]
    pub probes: ProbeArgs,
}
