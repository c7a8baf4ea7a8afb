//! The `run` subcommand: build the shared context, then run the store controllers and the
//! metrics/probe server until SIGINT or SIGTERM.

use std::sync::Arc;

use anyhow::Context as _;
use external_secrets_crds::v1::{ClusterSecretStore, SecretStore};
use external_secrets_providers::credentials::{KubeSecretSource, OperatorIdentity};
use external_secrets_providers::rate_limit::RateLimit;
use external_secrets_providers::{ClientManager, ManagerSettings};
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cli::RunArgs;
use crate::context::{Context, Settings};
use crate::controllers::secret_store;
use crate::controllers::store_watch::SharedStores;
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

/// Runs the controllers until a termination signal: connect, serve probes and metrics, wait
/// for the lease, run the enabled controllers until a signal or the lease is lost, then shut
/// down in order.
pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let metrics = Arc::new(Metrics::new(args.enable_extended_metric_labels));
    let context = connect(&args, metrics.clone()).await?;
    let (stop, stopped) = watch::channel(false);
    // Dropped with the runtime when `run` returns.
    tokio::spawn(crate::allocator::trim_now_and_then());
    let shutdown = Shutdown(stopped);
    let serving = args.metrics_tls.serving(Some(&context.client)).await?;
    let server = tokio::spawn(crate::server::serve(
        (args.metrics_addr, args.live_addr),
        metrics,
        serving,
        {
            let shutdown = shutdown.clone();
            move || shutdown.wait()
        },
    ));
    // Probes and metrics are served while waiting for the lease, as upstream's manager does.
    let mut leadership = match lead(&args, &context).await? {
        Lead::Go(leadership) => leadership,
        Lead::Terminated => {
            let _ = stop.send(true);
            return finish_server(server).await;
        }
    };
    let controllers = controllers(&args, &context, &shutdown);
    let lost = supervise(controllers, leadership.as_mut(), &stop).await;
    if let Some(leadership) = leadership.take() {
        leadership.release().await;
    }
    let _ = stop.send(true);
    context.clients.shutdown().await;
    finish_server(server).await?;
    // Like upstream, a replica that lost the lease exits (non-zero) and is restarted to compete again.
    anyhow::ensure!(!lost, "leader election lost");
    Ok(())
}

/// Applies the process-wide flags and builds the shared context on an API client.
async fn connect(args: &RunArgs, metrics: Arc<Metrics>) -> anyhow::Result<Arc<Context>> {
    crate::controllers::template::set_delimiters(
        &args.template_left_delimiter,
        &args.template_right_delimiter,
    );
    let client = crate::kube_client::client(metrics.clone(), args.client_qps, args.client_burst)
        .await
        .context("connecting to the Kubernetes API")?;
    let ignored = args.compatibility.given();
    if !ignored.is_empty() {
        tracing::warn!(flags = ?ignored, "upstream flags without effect in this build");
    }
    Ok(Arc::new(build_context(client, metrics, args)))
}

/// Resolves once the stop flag is raised; every task gets its own wait.
#[derive(Clone)]
struct Shutdown(watch::Receiver<bool>);

impl Shutdown {
    /// A future that completes when the stop flag is raised.
    fn wait(&self) -> impl Future<Output = ()> + Send + Sync + use<> {
        let mut stopped = self.0.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    }
}

/// Whether the controllers may start.
enum Lead {
    /// Yes: with the lease when leader election is on.
    Go(Option<leader::Leadership>),
    /// A termination signal came while waiting for the lease.
    Terminated,
}

/// Waits for the lease when leader election is on (or for a termination signal).
async fn lead(args: &RunArgs, context: &Context) -> anyhow::Result<Lead> {
    if !args.enable_leader_election {
        return Ok(Lead::Go(None));
    }
    let settings = LeaseSettings {
        name: args.leader_election_id.clone(),
        namespace: args.leader_election_namespace.clone(),
        lease_duration: args.leader_election_lease_duration,
        renew_deadline: args.leader_election_renew_deadline,
        retry_period: args.leader_election_retry_period,
    };
    // The lease has a client of its own, without the client-side rate limit: controllers using
    // all of `--client-qps` must never delay a renewal until the lease is lost.
    let lease_client = crate::kube_client::client(context.metrics.clone(), 0.0, 0)
        .await
        .context("connecting to the Kubernetes API for leader election")?;
    tokio::select! {
        leadership = leader::acquire(lease_client, &settings) => {
            Ok(Lead::Go(Some(leadership?)))
        }
        () = termination() => Ok(Lead::Terminated),
    }
}

/// Every controller the flags enable, run together until `shutdown`.
fn controllers(
    args: &RunArgs,
    context: &Arc<Context>,
    shutdown: &Shutdown,
) -> impl Future<Output = Vec<()>> + use<> {
    let (concurrent, cluster_stores) = (args.concurrent, args.enable_cluster_store_reconciler);
    let push_secrets = args.enable_push_secret_reconciler;
    let context = || context.clone();
    // One watch per store kind for every controller reading stores; each consumer subscribes
    // here, before the watches start.
    let stores = SharedStores::default();
    let es_stores = (
        stores.secret_stores.subscribe(),
        stores.cluster_secret_stores.subscribe(),
    );
    // A feed not taken by its controller (disabled) is dropped and holds the watch back never.
    let secret_store_feed = stores.secret_stores.subscribe();
    let cluster_store_feed = stores.cluster_secret_stores.subscribe();
    futures::future::join_all([
        stores
            .drive(context(), {
                let shutdown = shutdown.clone();
                move || shutdown.wait()
            })
            .boxed(),
        enabled(args.enable_secret_store_reconciler, || {
            secret_store::run::<SecretStore>(
                context(),
                concurrent,
                secret_store_feed,
                push_secrets,
                shutdown.wait(),
            )
            .boxed()
        }),
        enabled(cluster_stores, || {
            secret_store::run::<ClusterSecretStore>(
                context(),
                concurrent,
                cluster_store_feed,
                push_secrets,
                shutdown.wait(),
            )
            .boxed()
        }),
        crate::controllers::external_secret::run(
            context(),
            concurrent,
            es_stores,
            cluster_stores,
            shutdown.wait(),
        )
        .boxed(),
        enabled(args.enable_cluster_external_secret_reconciler, || {
            crate::controllers::cluster_external_secret::run(context(), concurrent, shutdown.wait())
                .boxed()
        }),
        enabled(args.enable_push_secret_reconciler, || {
            crate::controllers::push_secret::run(
                context(),
                concurrent,
                cluster_stores,
                shutdown.wait(),
            )
            .boxed()
        }),
        enabled(args.enable_cluster_push_secret_reconciler, || {
            crate::controllers::cluster_push_secret::run(context(), concurrent, shutdown.wait())
                .boxed()
        }),
    ])
}

/// The controller `start` makes when `on`, else nothing to run.
fn enabled(on: bool, start: impl FnOnce() -> BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
    if on {
        start()
    } else {
        futures::future::ready(()).boxed()
    }
}

/// Runs `controllers` until they end, a termination signal, or the lease is lost (then they
/// are stopped and awaited); returns whether the lease was lost.
async fn supervise(
    controllers: impl Future<Output = Vec<()>>,
    leadership: Option<&mut leader::Leadership>,
    stop: &watch::Sender<bool>,
) -> bool {
    tokio::pin!(controllers);
    let leadership_lost = async {
        match leadership {
            Some(leadership) => leadership.lost().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
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
    }
}

/// Waits for the metrics and probe server to stop.
async fn finish_server(server: JoinHandle<anyhow::Result<()>>) -> anyhow::Result<()> {
    server
        .await
        .context("metrics server task")?
        .context("serving metrics")
}

/// The context the controllers share.
pub fn build_context(client: kube::Client, metrics: Arc<Metrics>, args: &RunArgs) -> Context {
    let source = Arc::new(KubeSecretSource::new(client.clone()));
    let manager_settings = ManagerSettings {
        rate_limit: RateLimit::new(args.provider_qps, args.provider_burst).unwrap_or_default(),
        operator_identity: if args.deny_operator_identity {
            OperatorIdentity::DeniedToSecretStores
        } else {
            OperatorIdentity::Allowed
        },
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
