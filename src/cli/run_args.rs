//! The controller's flags, named, typed and defaulted as upstream's root command defines them,
//! so Deployments, Helm `extraArgs` and scripts written for upstream ESO start this binary
//! unchanged. Flags that tune upstream internals we do not have are accepted and say so.

use std::net::SocketAddr;
use std::time::Duration;

use clap::ArgAction;
use external_secrets_providers::duration::DurationError;

use crate::metrics_auth::MetricsAuth;

/// Flags of the controller (the root command, or `run`).
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// The controller is instantiated with a specific controller name and filters stores
    /// based on their `spec.controller`.
    #[arg(long, default_value = "default")]
    pub controller_class: String,
    /// The address the metric endpoint binds to; `:8080` means all interfaces.
    #[arg(long, default_value = ":8080", value_parser = parse_address)]
    pub metrics_addr: SocketAddr,
    /// Add the objects' Kubernetes recommended labels (`app.kubernetes.io/name`, `instance`,
    /// `version`, `component`, `part-of`, `managed-by`) to the per-object metrics, as upstream.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", default_value_t = false)]
    pub enable_extended_metric_labels: bool,
    /// The address the live endpoint (`/healthz`, `/readyz`) binds to.
    #[arg(long, default_value = ":8082", value_parser = parse_address)]
    pub live_addr: SocketAddr,
    /// Default time duration between reconciling (Cluster)SecretStores, e.g. `5m`.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub store_requeue_interval: Duration,
    /// Watch ExternalSecrets and SecretStores in this namespace only (empty: all).
    /// ClusterSecretStores still work if they reference nothing in other namespaces.
    #[arg(long, default_value = "")]
    pub namespace: String,
    /// Enable the SecretStore reconciler.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_secret_store_reconciler: bool,
    /// Enable the ClusterSecretStore reconciler (and the use of ClusterSecretStores).
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_cluster_store_reconciler: bool,
    /// Enable the ClusterExternalSecret reconciler.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_cluster_external_secret_reconciler: bool,
    /// Enable the PushSecret reconciler.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_push_secret_reconciler: bool,
    /// Enable the ClusterPushSecret reconciler.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_cluster_push_secret_reconciler: bool,
    /// Sync ExternalSecrets only while their stores are Ready (a store not validated yet is
    /// refused, as upstream).
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_flood_gate: bool,
    /// Enable leader election, so only one of several replicas reconciles.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_leader_election: bool,
    /// The name of the leader election Lease; set a unique value when running several
    /// deployments in the same namespace.
    #[arg(long, default_value = "external-secrets-controller")]
    pub leader_election_id: String,
    /// The namespace of the leader election Lease (default: the pod's namespace, or the
    /// kubeconfig context's outside a cluster).
    #[arg(long)]
    pub leader_election_namespace: Option<String>,
    /// How long non-leaders wait after the last observed renewal before taking the lease.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub leader_election_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub leader_election_renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub leader_election_retry_period: Duration,
    /// Identical provider reads (same store, key, version, property) that start within this
    /// window share one provider call, across ExternalSecrets; values are kept no longer
    /// than the window. `0s` turns sharing off. Not an upstream flag.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub provider_read_dedup_window: Duration,
    /// Calls per second toward each store's provider (a token bucket per store, shared by
    /// all controllers; calls wait rather than fail). Not an upstream flag.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub provider_qps: u32,
    /// Burst of calls toward each store's provider above `--provider-qps`.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub provider_burst: u32,
    /// The number of concurrent reconciles per controller.
    #[arg(long, default_value_t = 1)]
    pub concurrent: u16,
    /// Requests per second to the Kubernetes API (0: unlimited). Upstream's default of 50
    /// is its users' top throttling complaint; ours leaves fairness to the API server's
    /// priority and fairness unless a limit is asked for.
    #[arg(long, default_value_t = 0.0)]
    pub client_qps: f32,
    /// Burst of requests to the Kubernetes API above `--client-qps`.
    #[arg(long, default_value_t = 100)]
    pub client_burst: u32,
    /// Log level: debug, info, warn, error (dpanic, panic and fatal log errors only), or a
    /// tracing filter directive.
    #[arg(long, alias = "zap-log-level", default_value = "info")]
    pub loglevel: String,
    /// Time encoding of log lines: epoch, millis, nano, iso8601, rfc3339 or rfc3339nano.
    #[arg(long, default_value = "epoch", value_parser = ["epoch", "millis", "nano", "iso8601", "rfc3339", "rfc3339nano"])]
    pub zap_time_encoding: String,
    /// Allow `spec.target.manifest` (ConfigMaps and custom resources as targets).
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub unsafe_allow_generic_targets: bool,
    /// Refuse namespaced SecretStores that would authenticate as the operator itself (Vault
    /// Kubernetes auth with neither `serviceAccountRef` nor `secretRef`, AWS without `auth`):
    /// upstream allows it, which lets whoever may create a SecretStore act as the operator.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub deny_operator_identity: bool,
    /// The left delimiter of templates.
    #[arg(long, default_value = "{{")]
    pub template_left_delimiter: String,
    /// The right delimiter of templates.
    #[arg(long, default_value = "}}")]
    pub template_right_delimiter: String,
    /// Maximum number of Doppler downloads kept with their ETag, so that an unchanged config
    /// is answered `304 Not Modified` from memory (upstream's flag and default); 0 or less
    /// turns the cache off.
    #[arg(long, default_value_t = 16384, allow_negative_numbers = true)]
    pub doppler_etag_cache_size: i64,
    /// Flags of upstream's caches, generators and providers that have no counterpart
    /// here. They are accepted so upstream manifests start unchanged, and have no effect:
    /// managed Secrets are always watched metadata-only and nothing caches other Secrets.
    #[command(flatten)]
    pub compatibility: CompatibilityArgs,
    /// HTTPS for the metrics server.
    #[command(flatten)]
    pub metrics_tls: MetricsTlsArgs,
}

/// Upstream's (controller-runtime's) secure metrics serving flags, and `--enable-http2`; the
/// controller, the webhook and the cert controller share them.
#[derive(Debug, Clone, clap::Args)]
pub struct MetricsTlsArgs {
    /// Serve metrics over HTTPS.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", default_value_t = false)]
    pub metrics_secure: bool,
    /// Let only readers the API server authenticates (TokenReview) and authorizes (`get` on
    /// the non-resource URL `/metrics`, SubjectAccessReview) read metrics, as controller-runtime.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", default_value_t = false)]
    pub metrics_auth: bool,
    /// The directory of the metrics serving certificate (reloaded when its files change);
    /// empty: a self-signed certificate is generated.
    #[arg(long, default_value = "")]
    pub metrics_cert_dir: String,
    /// The certificate file's name in --metrics-cert-dir.
    #[arg(long, default_value = "tls.crt")]
    pub metrics_cert_name: String,
    /// The key file's name in --metrics-cert-dir.
    #[arg(long, default_value = "tls.key")]
    pub metrics_key_name: String,
    /// Offer HTTP/2 on the TLS servers (secure metrics, the webhook). Off by default, as
    /// upstream, because of the HTTP/2 rapid-reset CVEs: they then speak HTTP/1.1 only.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", default_value_t = false)]
    pub enable_http2: bool,
}

impl MetricsTlsArgs {
    /// How the metrics port is served: the certificate loaded, and the reader check asking
    /// `client`'s API server (a client from the environment when `None`).
    pub async fn serving(
        &self,
        client: Option<&kube::Client>,
    ) -> anyhow::Result<crate::server::MetricsServing> {
        use anyhow::Context as _;
        let tls = match self.tls() {
            Some(tls) => Some(tls.store()?),
            None => None,
        };
        let client = match (self.metrics_auth, client) {
            (false, _) => None,
            (true, Some(client)) => Some(client.clone()),
            (true, None) => Some(
                kube::Client::try_default()
                    .await
                    .context("connecting to the Kubernetes API for --metrics-auth")?,
            ),
        };
        Ok(crate::server::MetricsServing {
            tls,
            auth: client.map(|client| std::sync::Arc::new(MetricsAuth::new(client))),
            http2: self.enable_http2,
        })
    }

    /// Where the certificate comes from, when metrics are served over HTTPS.
    pub fn tls(&self) -> Option<crate::secure_metrics::MetricsTls> {
        self.metrics_secure
            .then(|| crate::secure_metrics::MetricsTls {
                cert_dir: (!self.metrics_cert_dir.is_empty())
                    .then(|| self.metrics_cert_dir.clone().into()),
                cert_name: self.metrics_cert_name.clone(),
                key_name: self.metrics_key_name.clone(),
            })
    }
}

/// Upstream flags accepted for compatibility only (see [`RunArgs::compatibility`]).
#[derive(Debug, Clone, clap::Args)]
pub struct CompatibilityArgs {
    /// No effect: this build never caches all Secrets.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_secrets_caching: Option<bool>,
    /// No effect: this build never caches ConfigMaps.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_configmaps_caching: Option<bool>,
    /// No effect: managed Secrets are always watched metadata-only.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_managed_secrets_caching: Option<bool>,
    /// No effect: Secrets are always read from the API.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_secret_api_read_on_cache_mismatch: Option<bool>,
    /// No effect: the generators of this build keep no state.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_generator_state: Option<bool>,
    /// No effect: the generators of this build keep no state to collect.
    #[arg(long, hide = true)]
    pub generator_gc_grace_period: Option<String>,
    /// Always on: each store's Vault client keeps its login token (renewed, or re-issued when
    /// it cannot be) for as long as the store is unchanged, which is what upstream's cache adds.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_vault_token_cache: Option<bool>,
    /// No effect: one token per store client, bounded by the number of stores.
    #[arg(long, hide = true)]
    pub vault_token_cache_size: Option<u64>,
    /// See `--enable-vault-token-cache`.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub experimental_enable_vault_token_cache: Option<bool>,
    /// See `--vault-token-cache-size`.
    #[arg(long, hide = true)]
    pub experimental_vault_token_cache_size: Option<u64>,
    /// No effect: the client manager always keeps one Doppler client (and its OIDC-issued
    /// token) per store version.
    #[arg(long, hide = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub experimental_enable_doppler_oidc_cache: Option<bool>,
    /// No effect: see `--experimental-enable-doppler-oidc-cache`.
    #[arg(long, hide = true)]
    pub experimental_doppler_oidc_cache_size: Option<u64>,
    /// No effect: the Nebius provider is not part of this build.
    #[arg(long, hide = true)]
    pub mysterybox_tokens_cache_size: Option<u64>,
    /// No effect: the Nebius provider is not part of this build.
    #[arg(long, hide = true)]
    pub mysterybox_connections_cache_size: Option<u64>,
}

impl CompatibilityArgs {
    /// The names of the compatibility flags that were given, to log that they do nothing.
    pub fn given(&self) -> Vec<&'static str> {
        let flags = [
            (
                "enable-secrets-caching",
                self.enable_secrets_caching.is_some(),
            ),
            (
                "enable-configmaps-caching",
                self.enable_configmaps_caching.is_some(),
            ),
            (
                "enable-managed-secrets-caching",
                self.enable_managed_secrets_caching.is_some(),
            ),
            (
                "enable-secret-api-read-on-cache-mismatch",
                self.enable_secret_api_read_on_cache_mismatch.is_some(),
            ),
            (
                "enable-generator-state",
                self.enable_generator_state.is_some(),
            ),
            (
                "generator-gc-grace-period",
                self.generator_gc_grace_period.is_some(),
            ),
            (
                "enable-vault-token-cache",
                self.enable_vault_token_cache.is_some(),
            ),
            (
                "vault-token-cache-size",
                self.vault_token_cache_size.is_some(),
            ),
            (
                "experimental-enable-vault-token-cache",
                self.experimental_enable_vault_token_cache.is_some(),
            ),
            (
                "experimental-vault-token-cache-size",
                self.experimental_vault_token_cache_size.is_some(),
            ),
            (
                "experimental-enable-doppler-oidc-cache",
                self.experimental_enable_doppler_oidc_cache.is_some(),
            ),
            (
                "experimental-doppler-oidc-cache-size",
                self.experimental_doppler_oidc_cache_size.is_some(),
            ),
            (
                "mysterybox-tokens-cache-size",
                self.mysterybox_tokens_cache_size.is_some(),
            ),
            (
                "mysterybox-connections-cache-size",
                self.mysterybox_connections_cache_size.is_some(),
            ),
        ];
        flags
            .into_iter()
            .filter(|(_, given)| *given)
            .map(|(name, _)| name)
            .collect()
    }
}

/// An address flag that is not `host:port` or `:port`.
#[derive(Debug, thiserror::Error)]
#[error("invalid address {text:?}: {source}")]
pub(super) struct AddressError {
    /// The flag's value.
    text: String,
    /// Why it does not parse.
    source: std::net::AddrParseError,
}

/// Accepts Go-style `:8080` as well as `host:port`.
pub(super) fn parse_address(text: &str) -> Result<SocketAddr, AddressError> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    };
    full.parse().map_err(|source| AddressError {
        text: text.to_owned(),
        source,
    })
}

/// Accepts a Go duration such as `5m` or `1h30m`.
pub(super) fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    external_secrets_providers::duration::parse_go_duration(text)
}
