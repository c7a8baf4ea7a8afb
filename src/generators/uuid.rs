//! The `UUID` generator: one random (version 4) UUID under the key `uuid`.

use async_trait::async_trait;
use external_secrets_crds::generators::{Uuid, UuidSpec};
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator};

/// Generates UUIDs.
pub struct UuidGenerator;

#[async_trait]
impl Generator for UuidGenerator {
    type Object = Uuid;
    type Spec = UuidSpec;
    const CLUSTER_FIELD: &'static str = "uuidSpec";

    async fn generate(&self, _: UuidSpec, _: CredentialResolver) -> Result<Generated, Error> {
        let uuid = uuid::Uuid::new_v4().to_string().into_bytes();
        Ok([("uuid".to_owned(), uuid)].into())
    }
}
