//! The reconcilers the operator runs, one module per kind.

pub mod external_secret;
pub mod secret_store;
