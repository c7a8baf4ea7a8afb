//! The `certcontroller` subcommand: keeps the webhook's CA and serving certificate in its
//! Secret (`--secret-namespace`/`--secret-name`), renewed before they expire, and injects the
//! CA into the ValidatingWebhookConfigurations labelled `external-secrets.io/component=webhook`
//! and into the conversion webhook of the CRDs named by `--crd-names`, as upstream's cert
//! controller does.
//!
//! A pass ([`sync::sync`]) runs at start, whenever a labelled webhook configuration or a named
//! CRD changes (so a re-applied manifest without `caBundle` is fixed at once), and every
//! `--crd-requeue-interval`; failed passes are retried with backoff. `/readyz` is ready once a
//! pass succeeded, or while waiting for the leader lease (upstream: only the leader's
//! readiness depends on its work). Upstream's readiness also waits for the webhook Service's
//! endpoints; this one does not.

pub mod bundle;
mod inject;
mod sync;
pub mod verify;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};
use tokio::sync::watch;

use crate::cli::CertControllerArgs;
use crate::leader::{self, LeaseSettings};
use crate::metrics::Metrics;
use crate::server::MetricsServing;
use crate::webhook::probes;
use inject::Service;
use sync::Settings;

/// Upstream's leader election ID of the cert controller.
const LEASE_NAME: &str = "crd-certs-controller";
/// The controller name in the reconcile metrics.
const CONTROLLER: &str = "certcontroller";
/// Changes arriving this close together are handled by one pass.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// First and longest wait before retrying a failed pass.
const RETRY: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(60));

/// Where the controller stands, for `/readyz`.
#[derive(Debug, Clone)]
enum Phase {
    /// Waiting for the leader lease: another replica does the work.
    Standby,
    /// Leading (or alone) but no pass succeeded yet; why.
    Waiting(String),
    /// A pass succeeded: the certificates are in place.
    Ready,
}

/// Runs the cert controller until SIGINT or SIGTERM (or, with leader election, until the
/// lease is lost: the process then exits so it is restarted as a candidate).
pub async fn run(args: CertControllerArgs) -> anyhow::Result<()> {
    warn_ignored(&args);
    let metrics = Arc::new(Metrics::default());
    let client = crate::kube_client::client(metrics.clone(), 0.0, 100)
        .await
        .context("connecting to the Kubernetes API")?;
    let phase = Arc::new(Mutex::new(if args.enable_leader_election {
        Phase::Standby
    } else {
        Phase::Waiting(NOT_CHECKED.into())
    }));
    let (stop, stopped) = watch::channel(false);
    let serving = args.probes.metrics_tls.serving(Some(&client)).await?;
    let servers = serve_probes(&args, &phase, (&metrics, serving), &stopped);
    let mut leadership = None;
    if args.enable_leader_election {
        let Some(acquired) = lead(&client).await? else {
            let _ = stop.send(true);
            return finish(servers).await;
        };
        leadership = Some(acquired);
        *phase.lock().unwrap_or_else(|e| e.into_inner()) = Phase::Waiting(NOT_CHECKED.into());
    }
    let controller = reconcile_loop(
        client,
        settings(&args),
        args.crd_requeue_interval,
        phase,
        metrics,
    );
    let lost = supervise(controller, leadership.as_mut()).await;
    if let Some(leadership) = leadership.take() {
        leadership.release().await;
    }
    let _ = stop.send(true);
    finish(servers).await?;
    anyhow::ensure!(!lost, "leader election lost");
    Ok(())
}

/// `/readyz` while no pass has succeeded yet.
const NOT_CHECKED: &str = "certificates not checked yet";

/// Logs the upstream flags this build accepts without acting on them.
fn warn_ignored(args: &CertControllerArgs) {
    if args.enable_partial_cache.is_some() {
        tracing::warn!(flags = ?["enable-partial-cache"], "upstream flags without effect in this build");
    }
}

/// What the passes maintain, from the flags.
fn settings(args: &CertControllerArgs) -> Settings {
    Settings {
        service: Service {
            name: args.service_name.clone(),
            namespace: args.service_namespace.clone(),
        },
        secret_name: args.secret_name.clone(),
        secret_namespace: args.secret_namespace.clone(),
        webhook_selector: args.webhook_config_selector.clone(),
        crd_names: args.crd_names.clone(),
    }
}

/// Serves `/healthz`, `/readyz` (from `phase`) and `/metrics` (as `serving` says: HTTPS with
/// `--metrics-secure`, behind the reader check with `--metrics-auth`) until `stopped` turns
/// true.
fn serve_probes(
    args: &CertControllerArgs,
    phase: &Arc<Mutex<Phase>>,
    (metrics, serving): (&Arc<Metrics>, MetricsServing),
    stopped: &watch::Receiver<bool>,
) -> tokio::task::JoinHandle<anyhow::Result<()>> {
    let stopped = stopped.clone();
    let shutdown = move || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    };
    let readiness: probes::Readiness = {
        let phase = phase.clone();
        Arc::new(
            move || match &*phase.lock().unwrap_or_else(|e| e.into_inner()) {
                Phase::Standby | Phase::Ready => Ok(()),
                Phase::Waiting(reason) => Err(reason.clone().into()),
            },
        )
    };
    let (healthz_addr, metrics_addr) = (args.probes.healthz_addr, args.probes.metrics_addr);
    let router = crate::server::router(metrics.clone(), serving.auth.clone());
    tokio::spawn(async move {
        let metrics_server =
            crate::server::serve_metrics(metrics_addr, router, serving, &shutdown).await?;
        let probe_server = probes::serve(healthz_addr, probes::router(readiness), shutdown());
        futures::future::try_join(probe_server, metrics_server).await?;
        Ok(())
    })
}

/// Waits for upstream's lease; `None` when a termination signal came first.
async fn lead(client: &kube::Client) -> anyhow::Result<Option<leader::Leadership>> {
    let settings = LeaseSettings {
        name: LEASE_NAME.to_owned(),
        namespace: None,
        lease_duration: Duration::from_secs(15),
        renew_deadline: Duration::from_secs(10),
        retry_period: Duration::from_secs(2),
    };
    tokio::select! {
        acquired = leader::acquire(client.clone(), &settings) => Ok(Some(acquired?)),
        () = probes::termination() => Ok(None),
    }
}

/// Runs `controller` until it ends, a termination signal, or the lease is lost; returns
/// whether the lease was lost.
async fn supervise(
    controller: impl Future<Output = ()>,
    leadership: Option<&mut leader::Leadership>,
) -> bool {
    let leadership_lost = async {
        match leadership {
            Some(leadership) => leadership.lost().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = controller => false,
        () = probes::termination() => {
            tracing::info!("termination signal received, shutting down");
            false
        }
        () = leadership_lost => {
            tracing::error!("leader election lost, shutting down");
            true
        }
    }
}

/// Waits for the probe and metrics servers to stop.
async fn finish(servers: tokio::task::JoinHandle<anyhow::Result<()>>) -> anyhow::Result<()> {
    servers
        .await
        .context("probe server task")?
        .context("serving probes and metrics")
}

/// Runs passes forever: at start, on changes, every `interval`, and after failures with backoff.
async fn reconcile_loop(
    client: kube::Client,
    settings: Settings,
    interval: Duration,
    phase: Arc<Mutex<Phase>>,
    metrics: Arc<Metrics>,
) {
    // One pass at a time: a single worker, as controller-runtime reports it.
    metrics.controller_started(CONTROLLER, 1);
    let mut changes = changes(&client, &settings);
    let mut delay = Duration::ZERO;
    let mut retry = RETRY.0;
    loop {
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            Some(()) = changes.next() => {
                tokio::time::sleep(DEBOUNCE).await;
                while let Some(Some(())) = changes.next().now_or_never() {}
            }
        }
        let timer = metrics.reconcile_started(CONTROLLER);
        let result = sync::sync(&client, &settings).await;
        drop(timer);
        metrics.reconcile_result(CONTROLLER, &result);
        let mut phase = phase.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(()) => {
                *phase = Phase::Ready;
                delay = interval;
                retry = RETRY.0;
            }
            Err(error) => {
                tracing::error!(%error, retry_in = ?retry, "webhook certificate pass failed");
                if !matches!(*phase, Phase::Ready) {
                    *phase = Phase::Waiting(error.to_string());
                }
                delay = retry;
                retry = (retry * 2).min(RETRY.1);
            }
        }
    }
}

/// One item per change of a labelled webhook configuration or a named CRD (CRDs are watched
/// metadata-only, one by one by name, so no other CRD's schema is ever read).
fn changes(client: &kube::Client, settings: &Settings) -> BoxStream<'static, ()> {
    let configurations = watcher(
        Api::<ValidatingWebhookConfiguration>::all(client.clone()),
        watcher::Config::default().labels(&settings.webhook_selector),
    )
    .default_backoff()
    .map(|event| event.map(|event| is_change(&event)))
    .boxed();
    let crds = settings.crd_names.iter().map(|name| {
        watcher(
            Api::<PartialObjectMeta<CustomResourceDefinition>>::all(client.clone()),
            watcher::Config::default().fields(&format!("metadata.name={name}")),
        )
        .default_backoff()
        .map(|event| event.map(|event| is_change(&event)))
        .boxed()
    });
    futures::stream::select_all(std::iter::once(configurations).chain(crds))
        .filter_map(|change| async move {
            match change {
                Ok(true) => Some(()),
                Ok(false) => None,
                Err(error) => {
                    tracing::warn!(%error, "watching webhook configurations and CRDs");
                    None
                }
            }
        })
        .boxed()
}

/// Whether a watch event reports a change worth a pass (the initial listing is covered by the
/// pass at start).
fn is_change<K>(event: &Event<K>) -> bool {
    matches!(event, Event::Apply(_) | Event::Delete(_))
}
