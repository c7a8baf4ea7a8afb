//! The reconcilers the operator runs, one module per kind.

pub mod secret_store;
