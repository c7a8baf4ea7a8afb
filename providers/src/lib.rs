//! The provider layer: how the operator talks to external secret managers.
//!
//! * [`provider::Provider`] is what one backend implements to be served (upstream's
//!   `Provider`: name, capabilities, store validation, `new_client`), and
//!   [`client::SecretsClient`] is its client (upstream's `SecretsClient`), returning
//!   [`error::ProviderError`] and [`value::SecretValue`].
//! * [`backends`] holds one folder per backend, each behind its cargo feature.
//! * [`registry`] maps `spec.provider` to its backend (the one exhaustive `match`) and builds
//!   clients; [`manager::ClientManager`] is what controllers use: registry, [`cache`],
//!   [`rate_limit`] and [`retry`] (through [`resilient`]) together.
//! * Shared machinery for backends: [`request`] (provider-facing request types converted from
//!   the CRDs by [`convert`]), [`credentials`] (the Kubernetes Secrets a store refers to, under
//!   upstream's namespace rules), [`property`] (JSON paths), [`duration`] (Go durations), [`ca`] (CA
//!   bundles), and [`transport`] (the HTTPS client, bounded body reads and failure descriptions
//!   every HTTP backend shares); [`redact`] describes parser errors
//!   without the secret text they quote.

pub mod backends;
pub mod ca;
pub mod cache;
pub mod client;
pub mod convert;
pub mod credentials;
pub mod duration;
pub mod error;
#[cfg(feature = "jwt")]
pub mod jwt;
pub mod manager;
pub mod property;
pub mod provider;
pub mod rate_limit;
pub mod redact;
pub mod registry;
pub mod request;
pub mod resilient;
pub mod retry;
pub mod store;
pub mod token_file;
#[cfg(feature = "https")]
pub mod transport;
pub mod value;

#[cfg(test)]
mod test_support;

pub use client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
pub use error::{ErrorKind, ProviderError, Result};
pub use manager::{ClientManager, ManagerSettings};
pub use provider::Provider;
pub use registry::{Backend, Registry, StoreRef};
pub use store::{StoreId, StoreKind};
pub use value::{SecretMap, SecretValue};
