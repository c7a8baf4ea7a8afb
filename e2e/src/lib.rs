//! e2e harness.
