//! One folder per backend, each behind its cargo feature. A backend exports one value
//! implementing [`crate::provider::Provider`] (and its client, implementing
//! [`crate::client::SecretsClient`]); the registry's [`crate::registry::Backend::of`] is the only
//! place that names it. `providers/README.md` has the recipe for adding one.

#[cfg(feature = "akeyless")]
pub mod akeyless;
#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "azurekv")]
pub mod azurekv;
#[cfg(feature = "bitwardensecretsmanager")]
pub mod bitwardensecretsmanager;
#[cfg(feature = "conjur")]
pub mod conjur;
#[cfg(feature = "crd")]
pub mod crd;
#[cfg(feature = "delinea")]
pub mod delinea;
#[cfg(feature = "doppler")]
pub mod doppler;
#[cfg(feature = "fake")]
pub mod fake;
#[cfg(feature = "gcpsm")]
pub mod gcpsm;
#[cfg(feature = "github")]
pub mod github;
#[cfg(feature = "gitlab")]
pub mod gitlab;
#[cfg(feature = "ibm")]
pub mod ibm;
#[cfg(feature = "infisical")]
pub mod infisical;
#[cfg(feature = "keepersecurity")]
pub mod keepersecurity;
#[cfg(feature = "kubernetes")]
pub mod kubernetes;
#[cfg(feature = "onepassword")]
pub mod onepassword;
#[cfg(feature = "vault")]
pub mod openbao;
#[cfg(feature = "oracle")]
pub mod oracle;
#[cfg(feature = "secretserver")]
pub mod secretserver;
#[cfg(feature = "vault")]
pub mod vault;
#[cfg(feature = "webhook")]
pub mod webhook;
