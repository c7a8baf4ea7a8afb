//! The reconcilers the operator runs, one module per kind.

pub mod backoff;
pub mod cluster_external_secret;
pub mod cluster_push_secret;
pub mod external_secret;
pub mod fan_out;
pub mod metadata;
pub mod push_secret;
pub mod queue_depth;
pub mod rewrite;
pub mod secret_store;
