//! What the admission webhook checks, per kind, without any I/O: an object in, every problem
//! found out, each message naming its field.

mod cluster_external_secret;
mod common;
mod external_secret;
mod push_secret;
mod secret_store;

use external_secrets_crds::v1::{
    ClusterExternalSecret, ClusterSecretStore, ExternalSecret, SecretStore,
};
use external_secrets_crds::v1alpha1::PushSecret;
use external_secrets_providers::store::StoreId;
use serde::de::DeserializeOwned;

use common::Problems;

/// A kind the webhook validates, by the path the API server posts its reviews to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `external-secrets.io/v1` ExternalSecret.
    ExternalSecret,
    /// `external-secrets.io/v1` SecretStore.
    SecretStore,
    /// `external-secrets.io/v1` ClusterSecretStore.
    ClusterSecretStore,
    /// `external-secrets.io/v1` ClusterExternalSecret (no upstream webhook).
    ClusterExternalSecret,
    /// `external-secrets.io/v1alpha1` PushSecret (no upstream webhook).
    PushSecret,
}

impl Kind {
    /// Every kind, for routing.
    pub const ALL: [Kind; 5] = [
        Kind::ExternalSecret,
        Kind::SecretStore,
        Kind::ClusterSecretStore,
        Kind::ClusterExternalSecret,
        Kind::PushSecret,
    ];

    /// The URL path of the kind's webhook: upstream's (controller-runtime's
    /// `/validate-<group with dashes>-<version>-<lowercase kind>`) for the kinds upstream
    /// validates, the same pattern for the others.
    pub fn path(self) -> &'static str {
        match self {
            Kind::ExternalSecret => "/validate-external-secrets-io-v1-externalsecret",
            Kind::SecretStore => "/validate-external-secrets-io-v1-secretstore",
            Kind::ClusterSecretStore => "/validate-external-secrets-io-v1-clustersecretstore",
            Kind::ClusterExternalSecret => "/validate-external-secrets-io-v1-clusterexternalsecret",
            Kind::PushSecret => "/validate-external-secrets-io-v1alpha1-pushsecret",
        }
    }

    /// The kind's name, for messages and metric labels.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ExternalSecret => "ExternalSecret",
            Kind::SecretStore => "SecretStore",
            Kind::ClusterSecretStore => "ClusterSecretStore",
            Kind::ClusterExternalSecret => "ClusterExternalSecret",
            Kind::PushSecret => "PushSecret",
        }
    }
}

/// Why an object is refused.
#[derive(Debug, PartialEq)]
pub enum Rejection {
    /// The object is not a valid instance of its kind's schema (a bad enum value, a string
    /// where a number belongs...); the message says where.
    Undecodable(String),
    /// The object decodes but breaks rules; one message per problem.
    Invalid(Vec<String>),
}

/// Checks `object`, which the API server says is a `kind`.
pub fn check(kind: Kind, object: serde_json::Value) -> Result<(), Rejection> {
    let mut problems = Problems::default();
    match kind {
        Kind::ExternalSecret => {
            let es: ExternalSecret = decode(kind, object)?;
            external_secret::check_spec("spec", &es.spec, &mut problems);
        }
        Kind::SecretStore => {
            let store: SecretStore = decode(kind, object)?;
            let id = StoreId::secret_store(
                store.metadata.namespace.clone().unwrap_or_default(),
                store.metadata.name.clone().unwrap_or_default(),
            );
            secret_store::check_spec(&id, &store.spec, &mut problems);
        }
        Kind::ClusterSecretStore => {
            let store: ClusterSecretStore = decode(kind, object)?;
            let id = StoreId::cluster_secret_store(store.metadata.name.clone().unwrap_or_default());
            secret_store::check_spec(&id, &store.spec.0, &mut problems);
        }
        Kind::ClusterExternalSecret => {
            let ces: ClusterExternalSecret = decode(kind, object)?;
            cluster_external_secret::check_spec(&ces.spec, &mut problems);
        }
        Kind::PushSecret => {
            let push_secret: PushSecret = decode(kind, object)?;
            push_secret::check_spec(&push_secret.spec, &mut problems);
        }
    }
    problems.into_result().map_err(Rejection::Invalid)
}

/// The warnings said back to the client with the verdict for `object`, a `kind`: for stores,
/// the provider's own admission warnings, then upstream's maintenance warning for an
/// unmaintained provider.
pub fn warnings(kind: Kind, object: &serde_json::Value) -> Vec<String> {
    let store = match kind {
        Kind::SecretStore => serde_json::from_value::<SecretStore>(object.clone())
            .ok()
            .map(|store| (store.metadata.name, store.spec)),
        Kind::ClusterSecretStore => serde_json::from_value::<ClusterSecretStore>(object.clone())
            .ok()
            .map(|store| (store.metadata.name, store.spec.0)),
        _ => None,
    };
    store
        .map(|(name, spec)| secret_store::warnings(name.as_deref().unwrap_or_default(), &spec))
        .unwrap_or_default()
}

/// The typed object, or where it departs from the schema.
fn decode<T: DeserializeOwned>(kind: Kind, object: serde_json::Value) -> Result<T, Rejection> {
    serde_json::from_value(object)
        .map_err(|error| Rejection::Undecodable(format!("not a valid {}: {error}", kind.name())))
}

#[cfg(test)]
mod gcp_conformance;
#[cfg(test)]
#[path = "tests.rs"]
mod tests;
