//! What every step of an ExternalSecret sync shares: the controller's caches, settings and
//! clients.

use std::sync::Arc;

use super::fetch::SharedReads;
use super::generic::GenericTargets;
use super::known::KnownSecrets;
use super::recent::RecentStatuses;
use super::refresh_timers::RefreshTimers;
use crate::context::Context;
use crate::stores::Stores;

/// The controller's name in metrics and logs.
pub const CONTROLLER: &str = "externalsecret";
/// Upstream's event recorder name for ExternalSecrets.
pub const EVENT_REPORTER: &str = "external-secrets";

/// What the ExternalSecret reconciler shares.
pub struct EsContext {
    /// State shared with the other controllers.
    pub shared: Arc<Context>,
    /// Watch caches of both store kinds.
    pub stores: Stores,
    /// Whether ClusterSecretStores may be used (`--enable-cluster-store-reconciler`).
    pub cluster_stores_enabled: bool,
    /// Provider reads shared across ExternalSecrets (`--provider-read-dedup-window`).
    pub reads: SharedReads,
    /// Generic targets (`spec.target.manifest`).
    pub generic: GenericTargets,
    /// Managed target Secrets as the metadata watch and our own writes know them.
    pub known: Arc<KnownSecrets>,
    /// Statuses written that the ExternalSecret watch has not shown yet.
    pub recent: Arc<RecentStatuses>,
    /// When each ExternalSecret's next refresh is due.
    pub refresh_timers: Arc<RefreshTimers>,
}
