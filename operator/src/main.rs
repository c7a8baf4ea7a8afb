//! `external-secrets-operator`: installs and manages the external-secrets operand from the
//! `ExternalSecretsConfig`/`ExternalSecretsManager` singletons.

use external_secrets_leader as leader;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use external_secrets_operator::api::{ExternalSecretsManager, ProxyConfig, SINGLETON};
use external_secrets_operator::controller::{self, Context, FIELD_MANAGER};
use external_secrets_operator::desired::Environment;
use external_secrets_operator::metrics::{self, Metrics};
use kube::api::{Api, PostParams};
use serde_json::json;

/// Installs the external-secrets operand and keeps it as ExternalSecretsConfig says.
#[derive(Debug, Parser)]
#[command(name = "external-secrets-operator", version)]
struct Cli {
    /// Where `/metrics` (and the probes) are served.
    #[arg(long, default_value = "0.0.0.0:8080")]
    metrics_addr: SocketAddr,
    /// Where `/healthz` and `/readyz` are served.
    #[arg(long, default_value = "0.0.0.0:8081")]
    healthz_addr: SocketAddr,
    /// Compete for a Lease so only one replica reconciles.
    #[arg(long, default_value_t = false)]
    leader_elect: bool,
    /// The Lease's name.
    #[arg(long, default_value = "external-secrets-operator")]
    leader_election_id: String,
    /// The Lease's namespace (default: the pod's).
    #[arg(long)]
    leader_election_namespace: Option<String>,
    /// The operand image (controller, webhook, cert controller); the chart's when unset.
    #[arg(long, env = "RELATED_IMAGE_EXTERNAL_SECRETS")]
    external_secrets_image: Option<String>,
    /// The Bitwarden SDK server image.
    #[arg(
        long,
        env = "RELATED_IMAGE_BITWARDEN_SDK_SERVER",
        default_value = "ghcr.io/external-secrets/bitwarden-sdk-server:v0.5.2"
    )]
    bitwarden_sdk_server_image: String,
}

/// The operator's own proxy settings, the operand's last fallback.
fn proxy_from_env() -> Option<ProxyConfig> {
    let read = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let proxy = ProxyConfig {
        http_proxy: read("HTTP_PROXY"),
        https_proxy: read("HTTPS_PROXY"),
        no_proxy: read("NO_PROXY"),
        network_policy_provisioning: None,
    };
    (proxy != ProxyConfig::default()).then_some(proxy)
}

/// Creates the default `ExternalSecretsManager` if there is none (as upstream's operator does).
async fn default_manager(client: &kube::Client) -> anyhow::Result<()> {
    let api: Api<ExternalSecretsManager> = Api::all(client.clone());
    if api.get_opt(SINGLETON).await?.is_some() {
        return Ok(());
    }
    let manager: ExternalSecretsManager = serde_json::from_value(json!({
        "apiVersion": "operator.openshift.io/v1alpha1",
        "kind": "ExternalSecretsManager",
        "metadata": {"name": SINGLETON, "labels": {
            "app.kubernetes.io/name": SINGLETON,
            "app.kubernetes.io/managed-by": FIELD_MANAGER,
            "app.kubernetes.io/part-of": FIELD_MANAGER,
        }},
        "spec": {},
    }))?;
    match api.create(&PostParams::default(), &manager).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let cli = Cli::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = kube::Client::try_default()
        .await
        .context("connecting to the API server")?;
    let metrics = Arc::new(Metrics::default());
    let server = tokio::spawn(metrics::serve(
        cli.metrics_addr,
        cli.healthz_addr,
        metrics.clone(),
    ));
    let leadership = if cli.leader_elect {
        let settings = leader::LeaseSettings {
            name: cli.leader_election_id.clone(),
            namespace: cli.leader_election_namespace.clone(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        };
        Some(leader::acquire(client.clone(), &settings).await?)
    } else {
        None
    };
    default_manager(&client).await?;
    let environment = Environment {
        image: cli.external_secrets_image,
        bitwarden_image: cli.bitwarden_sdk_server_image,
        proxy: proxy_from_env(),
    };
    let context = Arc::new(Context::new(client, environment, metrics));
    match leadership {
        Some(mut leadership) => {
            tokio::select! {
                () = controller::run(context) => leadership.release().await,
                () = leadership.lost() => anyhow::bail!("lost the leader lease"),
            }
        }
        None => controller::run(context).await,
    }
    server.abort();
    Ok(())
}
