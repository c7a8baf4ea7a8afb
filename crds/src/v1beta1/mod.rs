//! external-secrets.io/v1beta1: the previous version, still listed in the CRDs but no longer served
//! (`served: false`, `deprecated: true`, no conversion). Its schema is older and smaller than v1;
//! types identical to v1 are reused from [`crate::v1`], only the differing ones are defined here.

pub mod cluster_external_secret;
pub mod external_secret;
pub mod secret_store;

pub use cluster_external_secret::*;
pub use external_secret::*;
pub use secret_store::*;
