//! The `run` subcommand: build the shared context, then run the store controllers and the
//! metrics/probe server until SIGINT or SIGTERM.

use std::sync::Arc;

use anyhow::Context as _;
use external_secrets_crds::v1::{ClusterSecretStore, SecretStore};
use external_secrets_providers::credentials::KubeSecretSource;
use external_secrets_providers::rate_limit::RateLimit;
use external_secrets_providers::{ClientManager, ManagerSettings};
use futures::FutureExt;
use tokio::sync::watch;

use crate::cli::RunArgs;
use crate::context::{Context, Settings};
use crate::controllers::secret_store;
use crate::leader::{self, LeaseSettings};
use crate::metrics::Metrics;

/// Logs as JSON lines, filtered by `RUST_LOG` or else `--loglevel`.
pub fn init_tracing(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .init();
}

/// Runs the controllers until a termination signal.
pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    crate::controllers::template::set_delimiters(
        &args.template_left_delimiter,
        &args.template_right_delimiter,
    );
    let metrics = Arc::new(Metrics::default());
    let client = crate::kube_client::client(metrics.clone(), args.client_qps, args.client_burst)
        .await
        .context("connecting to the Kubernetes API")?;
    let ignored = args.compatibility.given();
    if !ignored.is_empty() {
        tracing::warn!(flags = ?ignored, "upstream flags without effect in this build");
    }
    let context = Arc::new(build_context(client, metrics.clone(), &args));

    let (stop, stopped) = watch::channel(false);
    let shutdown = move || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    };
    let server = tokio::spawn(crate::server::serve(
        args.metrics_addr,
        args.live_addr,
        metrics,
        shutdown.clone(),
    ));
    // Probes and metrics are served while waiting for the lease, as upstream's manager does.
    let mut leadership = if args.enable_leader_election {
        let settings = LeaseSettings {
            name: args.leader_election_id.clone(),
            namespace: args.leader_election_namespace.clone(),
            lease_duration: args.leader_election_lease_duration,
            renew_deadline: args.leader_election_renew_deadline,
            retry_period: args.leader_election_retry_period,
        };
        tokio::select! {
            leadership = leader::acquire(context.client.clone(), &settings) => Some(leadership?),
            () = termination() => {
                let _ = stop.send(true);
                return server.await.context("metrics server task")?.context("serving metrics");
            }
        }
    } else {
        None
    };
    let secret_stores = if args.enable_secret_store_reconciler {
        secret_store::run::<SecretStore>(context.clone(), args.concurrent, shutdown()).boxed()
    } else {
        futures::future::ready(()).boxed()
    };
    let cluster_secret_stores = if args.enable_cluster_store_reconciler {
        secret_store::run::<ClusterSecretStore>(context.clone(), args.concurrent, shutdown())
            .boxed()
    } else {
        futures::future::ready(()).boxed()
    };
    let external_secrets = crate::controllers::external_secret::run(
        context.clone(),
        args.concurrent,
        args.enable_cluster_store_reconciler,
        shutdown(),
    )
    .boxed();
    let cluster_external_secrets = if args.enable_cluster_external_secret_reconciler {
        crate::controllers::cluster_external_secret::run(
            context.clone(),
            args.concurrent,
            shutdown(),
        )
        .boxed()
    } else {
        futures::future::ready(()).boxed()
    };
    let push_secrets = if args.enable_push_secret_reconciler {
        crate::controllers::push_secret::run(
            context.clone(),
            args.concurrent,
            args.enable_cluster_store_reconciler,
            shutdown(),
        )
        .boxed()
    } else {
        futures::future::ready(()).boxed()
    };
    let cluster_push_secrets = if args.enable_cluster_push_secret_reconciler {
        crate::controllers::cluster_push_secret::run(context.clone(), args.concurrent, shutdown())
            .boxed()
    } else {
        futures::future::ready(()).boxed()
    };
    let controllers = futures::future::join_all([
        secret_stores,
        cluster_secret_stores,
        external_secrets,
        cluster_external_secrets,
        push_secrets,
        cluster_push_secrets,
    ]);
    tokio::pin!(controllers);
    let leadership_lost = async {
        match leadership.as_mut() {
            Some(leadership) => leadership.lost().await,
            None => std::future::pending().await,
        }
    };
    let lost = tokio::select! {
        _ = &mut controllers => false,
        () = termination() => {
            tracing::info!("termination signal received, shutting down");
            let _ = stop.send(true);
            controllers.await;
            false
        }
        () = leadership_lost => {
            tracing::error!("leader election lost, shutting down");
            let _ = stop.send(true);
            controllers.await;
            true
        }
    };
    if let Some(leadership) = leadership.take() {
        leadership.release().await;
    }
    let _ = stop.send(true);
    context.clients.shutdown().await;
    server
        .await
        .context("metrics server task")?
        .context("serving metrics")?;
    // Like upstream, a replica that lost the lease exits (non-zero) and is restarted to compete again.
    anyhow::ensure!(!lost, "leader election lost");
    Ok(())
}

/// The context the controllers share.
pub fn build_context(client: kube::Client, metrics: Arc<Metrics>, args: &RunArgs) -> Context {
    let source = Arc::new(KubeSecretSource::new(client.clone()));
    let manager_settings = ManagerSettings {
        rate_limit: RateLimit::new(args.provider_qps, args.provider_burst).unwrap_or_default(),
        ..ManagerSettings::default()
    };
    let clients = Arc::new(ClientManager::new(source, manager_settings));
    let doppler_downloads = usize::try_from(args.doppler_etag_cache_size).unwrap_or(0);
    clients.registry().configure(
        external_secrets_providers::backends::doppler::EtagCache::with_capacity(doppler_downloads),
    );
    let settings = Settings {
        controller_class: args.controller_class.clone(),
        store_requeue_interval: args.store_requeue_interval,
        namespace: Some(args.namespace.clone()).filter(|namespace| !namespace.is_empty()),
        flood_gate: args.enable_flood_gate,
        provider_read_dedup_window: args.provider_read_dedup_window,
        allow_generic_targets: args.unsafe_allow_generic_targets,
    };
    Context::new(client, clients, metrics, settings)
}

async fn termination() {
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("installing the SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}
