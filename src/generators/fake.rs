//! The `Fake` generator: the fixed `spec.data`, for tests and examples.

use async_trait::async_trait;
use external_secrets_crds::generators::{Fake, FakeSpec};
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator};

/// Generates `spec.data`.
pub struct FakeGenerator;

#[async_trait]
impl Generator for FakeGenerator {
    type Object = Fake;
    type Spec = FakeSpec;
    const CLUSTER_FIELD: &'static str = "fakeSpec";

    async fn generate(&self, spec: FakeSpec, _: CredentialResolver) -> Result<Generated, Error> {
        let data = spec
            .data
            .into_iter()
            .map(|(key, value)| (key, value.into_bytes()))
            .collect();
        Ok(data)
    }
}
