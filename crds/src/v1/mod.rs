//! external-secrets.io/v1: the served and stored version of ExternalSecret, ClusterExternalSecret,
//! SecretStore and ClusterSecretStore.

pub mod cluster_external_secret;
pub mod external_secret;
pub mod secret_store;

pub use cluster_external_secret::*;
pub use external_secret::*;
pub use secret_store::*;
