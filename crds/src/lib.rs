//! Rust types of the External Secrets Operator API, and the CRDs generated from them.
//!
//! The types mirror upstream's API (external-secrets.io v1, v1beta1 and v1alpha1, and
//! generators.external-secrets.io v1alpha1) field for field: the schema each CRD serves is generated
//! from them ([`all_crds`], [`manifests`]) and checked against upstream's by `tests/parity.rs`. Field
//! docs are upstream's descriptions verbatim, since they become the schema descriptions
//! (`kubectl explain`).

// Field docs are upstream's API descriptions verbatim (they are the schema descriptions), so they
// carry bare URLs and <placeholders> that rustdoc would read as Markdown links and HTML.
#![allow(rustdoc::bare_urls, rustdoc::invalid_html_tags)]

mod crds;
pub mod generators;
pub mod meta;
pub mod schema;
pub mod v1;
pub mod v1alpha1;
pub mod v1beta1;

pub use crds::{all_crds, manifest_yaml, manifests};
