//! generators.external-secrets.io/v1alpha1: the generator kinds (each produces secret values on
//! demand), ClusterGenerator and GeneratorState.

pub mod acr;
pub mod beyondtrust_workload_credentials;
pub mod cloudsmith;
pub mod cluster_generator;
pub mod ecr;
pub mod fake;
pub mod gcr;
pub mod generator_state;
pub mod github;
pub mod gitlab;
pub mod grafana;
pub mod mfa;
pub mod password;
pub mod quay;
pub mod ssh_key;
pub mod sts;
pub mod uuid;
pub mod vault;
pub mod webhook;

pub use acr::*;
pub use beyondtrust_workload_credentials::*;
pub use cloudsmith::*;
pub use cluster_generator::*;
pub use ecr::*;
pub use fake::*;
pub use gcr::*;
pub use generator_state::*;
pub use github::*;
pub use gitlab::*;
pub use grafana::*;
pub use mfa::*;
pub use password::*;
pub use quay::*;
pub use ssh_key::*;
pub use sts::*;
pub use uuid::*;
pub use vault::*;
pub use webhook::*;
