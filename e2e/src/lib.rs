//! End-to-end tests of the controller against a cluster, and the harness they share.
//!
//! Tests run against the cluster `KUBECONFIG` names, or, when it is unset, against the
//! loopback API server (`loopback-apiserver`) started once per test process. Nothing in the
//! tests may rely on loopback-only behaviour unless it says so and starts its own server.

pub mod bench;
pub mod harness;
