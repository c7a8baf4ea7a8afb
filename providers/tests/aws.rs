//! The aws provider against moto's server (one per test binary, see `support::aws`), each test
//! in AWS accounts of its own: credentials and assumed roles (`auth`), Secrets Manager reads,
//! finds, pushes and deletes (`secrets_manager`), ServiceAccount tokens exchanged for roles
//! (`jwt`, with a loopback API server), the same for Parameter Store
//! (`parameter_store`), how AWS errors map (`errors`, against stub endpoints where moto
//! cannot refuse or throttle), and the `STSSessionToken` and `ECRAuthorizationToken` generators
//! (`generators`).

#![cfg(feature = "aws")]

mod support;

#[path = "aws/auth.rs"]
mod auth;
#[path = "aws/errors.rs"]
mod errors;
#[path = "aws/generators.rs"]
mod generators;
#[path = "aws/jwt.rs"]
mod jwt;
#[path = "aws/parameter_store.rs"]
mod parameter_store;
#[path = "aws/secrets_manager.rs"]
mod secrets_manager;
#[path = "aws/stub.rs"]
mod stub;

use external_secrets_crds::v1::AwsProvider;
use external_secrets_providers::SecretValue;
use external_secrets_providers::request::RemoteRef;

/// The bytes of a value as text.
fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

/// `spec` with the JSON `changes` merged in (top-level fields).
fn with(spec: &AwsProvider, changes: serde_json::Value) -> AwsProvider {
    let mut json = serde_json::to_value(spec).unwrap();
    for (field, value) in changes.as_object().unwrap() {
        json[field] = value.clone();
    }
    serde_json::from_value(json).unwrap()
}

/// A reference to `key`.
fn remote(key: &str) -> RemoteRef {
    RemoteRef::new(key)
}
