//! The provider layer: how the operator talks to external secret managers.
//!
//! * [`client::SecretsClient`] is the one trait every backend implements (upstream's
//!   `SecretsClient`), returning [`error::ProviderError`] and [`value::SecretValue`].
//! * [`request`] holds the provider-facing request types converted from the CRDs.
//! * [`credentials`] resolves the Kubernetes Secrets a store refers to, under upstream's
//!   namespace rules.
//! * [`cache::ClientCache`] keeps one authenticated client per store and identity;
//!   [`resilient::ResilientClient`] adds the store's rate limit ([`rate_limit`]) and retry policy
//!   ([`retry`]) to every call.
//! * [`registry::Registry`] builds a backend client from a store; [`manager::ClientManager`]
//!   is what controllers use: registry, cache, rate limit and retries together.
//! * One module per backend, each behind its cargo feature: [`aws`], [`fake`], [`kubernetes`],
//!   [`vault`] (also serving [`openbao`]), [`webhook`].

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(any(feature = "kubernetes", feature = "vault", feature = "webhook"))]
mod ca;
pub mod cache;
pub mod client;
pub mod convert;
pub mod credentials;
pub mod duration;
pub mod error;
#[cfg(feature = "fake")]
pub mod fake;
#[cfg(feature = "kubernetes")]
pub mod kubernetes;
pub mod manager;
#[cfg(feature = "vault")]
pub mod openbao;
pub mod property;
pub mod rate_limit;
pub mod registry;
pub mod request;
pub mod resilient;
pub mod retry;
pub mod store;
#[cfg(any(feature = "vault", feature = "webhook"))]
mod transport;
pub mod value;
#[cfg(feature = "vault")]
pub mod vault;
#[cfg(feature = "webhook")]
pub mod webhook;

#[cfg(test)]
mod test_support;

pub use client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
pub use error::{ErrorKind, ProviderError, Result};
pub use manager::{ClientManager, ManagerSettings};
pub use registry::{Backend, Registry, StoreRef};
pub use store::{StoreId, StoreKind};
pub use value::{SecretMap, SecretValue};
