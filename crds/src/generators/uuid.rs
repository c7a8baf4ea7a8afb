//! The `UUID` generator: random UUIDs.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// UUIDSpec controls the behavior of the uuid generator.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "UUID",
    root = "Uuid",
    plural = "uuids",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "UUID generates a version 1 UUID (e56657e3-764f-11ef-a397-65231a88c216)."
)]
pub struct UuidSpec {}
