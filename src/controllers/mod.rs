//! The reconcilers the operator runs, one module per kind, and the modules they share
//! (`backoff`, `deadline`, `fan_out`, `finalizers`, `metadata`, `queue_depth`, `rewrite`,
//! `schema_guard`, `store_watch`, `template`, `watch_filter`): a controller never imports another controller's
//! module; what two need lives in a shared module.

pub mod backoff;
pub mod cluster_external_secret;
pub mod cluster_push_secret;
pub mod deadline;
pub mod external_secret;
pub mod fan_out;
pub mod finalizers;
pub mod hash;
pub mod metadata;
pub mod push_secret;
pub mod queue_depth;
pub mod rewrite;
pub mod schema_guard;
pub mod secret_store;
pub mod store_watch;
pub mod template;
#[cfg(test)]
pub mod test_client;
pub mod watch_filter;

#[cfg(test)]
mod layering_tests;
