//! external-secrets.io/v1alpha1: PushSecret and ClusterPushSecret.

pub mod cluster_push_secret;
pub mod push_secret;

pub use cluster_push_secret::*;
pub use push_secret::*;
