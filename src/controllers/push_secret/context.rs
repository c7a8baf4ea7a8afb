//! What every step of a PushSecret sync shares.

use std::sync::Arc;

use crate::context::Context;

/// The controller's name in metrics and logs.
pub const CONTROLLER: &str = "pushsecret";

/// What the reconciler shares.
pub struct PsContext {
    /// State shared with the other controllers.
    pub shared: Arc<Context>,
    /// Whether ClusterSecretStores may be used.
    pub cluster_stores_enabled: bool,
}
