//! Generators (`generators.external-secrets.io`): objects that produce secret values instead
//! of reading them from a store, used through an ExternalSecret's
//! `dataFrom[].sourceRef.generatorRef` (and a PushSecret's `selector.generatorRef`). This build
//! generates with `Password`, `UUID`, `Fake`, `SSHKey`, `VaultDynamicSecret`,
//! `STSSessionToken`, `ECRAuthorizationToken`, `ACRAccessToken`,
//! `GCRAccessToken`, `Webhook` and `MFA`, directly or wrapped in a
//! `ClusterGenerator`; other kinds are refused by name. One module per kind; the network kinds
//! call the provider code of their backend (its clients and authentication).
//!
//! Each kind is one [`Generator`] (its spec and how it generates) in its own module;
//! [`generator`] is the one exhaustive `match` over the kinds. Nothing generated is cleaned
//! up afterwards and no `GeneratorState` is kept: upstream's cleanup of every kind here does
//! nothing and none of them returns state (see [`Generator`]).
//!
//! Where a generator object comes from is a [`GeneratorSource`]: the cluster for the
//! controller, the input file for `render`. The source also reads the Secrets a generator's
//! spec refers to (credentials of the network kinds): those resolve in the namespace of the
//! object using the generator, for a `ClusterGenerator` too, as upstream (which runs every
//! generator "in" that namespace); a reference naming another namespace is refused, where
//! upstream ignores the namespace it names.

mod acr_access_token;
mod ecr_authorization_token;
mod error;
mod fake;
mod gcr_access_token;
mod mfa;
mod password;
mod random;
mod ssh_key;
mod sts_session_token;
mod uuid;
mod vault_dynamic_secret;
mod webhook;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::generators::ClusterGenerator;
use external_secrets_crds::v1::{GeneratorRef, GeneratorRefKind};
use external_secrets_providers::credentials::{
    CredentialResolver, KubeSecretSource, OperatorIdentity, SecretSource,
};
use external_secrets_providers::{ProviderError, SecretMap, StoreId};
use kube::api::{Api, ApiResource, DynamicObject};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use error::Error;

/// Generated data, key to value.
pub type Generated = BTreeMap<String, Vec<u8>>;

/// One generator kind, as upstream's generator interface without its state: generate from a
/// spec. Upstream's `Cleanup` and `GeneratorProviderState` serve the kinds that create
/// something to revoke later (kept in `GeneratorState` objects); every kind of this build
/// returns no state and upstream's cleanup of each of them does nothing, so the trait has
/// neither. A state-keeping kind adds them together with the `GeneratorState` objects that
/// call the cleanup.
#[async_trait]
pub trait Generator: Send + Sync {
    /// The generator's custom resource (for API lookups).
    type Object: kube::Resource<DynamicType = ()>;
    /// The spec it generates from.
    type Spec: DeserializeOwned + Send + Sync;
    /// The field holding its spec inside a `ClusterGenerator`'s `spec.generator`.
    const CLUSTER_FIELD: &'static str;

    /// Generates the data, reading the Secrets the spec names through `credentials`.
    async fn generate(
        &self,
        spec: Self::Spec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error>;
}

/// A [`Generator`] behind a pointer: spec as JSON.
#[async_trait]
trait DynGenerator: Send + Sync {
    fn api_resource(&self) -> ApiResource;
    fn cluster_field(&self) -> &'static str;
    async fn generate_json(
        &self,
        spec: Value,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error>;
}

#[async_trait]
impl<G: Generator> DynGenerator for G {
    fn api_resource(&self) -> ApiResource {
        ApiResource::erase::<G::Object>(&())
    }

    fn cluster_field(&self) -> &'static str {
        G::CLUSTER_FIELD
    }

    async fn generate_json(
        &self,
        spec: Value,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        let spec = if spec.is_null() {
            Value::Object(Default::default())
        } else {
            spec
        };
        let spec: G::Spec = serde_json::from_value(spec).map_err(Error::InvalidSpec)?;
        self.generate(spec, credentials).await
    }
}

/// The generator of `kind`: the one place that lists the kinds, so a kind added to the CRD
/// must be decided on here.
fn generator(kind: GeneratorRefKind) -> Result<&'static dyn DynGenerator, Error> {
    use GeneratorRefKind as Kind;
    match kind {
        Kind::Password => Ok(&password::PasswordGenerator),
        Kind::Uuid => Ok(&uuid::UuidGenerator),
        Kind::Fake => Ok(&fake::FakeGenerator),
        Kind::SshKey => Ok(&ssh_key::SshKeyGenerator),
        Kind::VaultDynamicSecret => Ok(&vault_dynamic_secret::VaultDynamicSecretGenerator),
        Kind::StsSessionToken => Ok(&sts_session_token::StsSessionTokenGenerator),
        Kind::EcrAuthorizationToken => Ok(&ecr_authorization_token::EcrAuthorizationTokenGenerator),
        Kind::GcrAccessToken => Ok(&gcr_access_token::GcrAccessTokenGenerator),
        Kind::Webhook => Ok(&webhook::WebhookGenerator),
        Kind::Mfa => Ok(&mfa::MfaGenerator),
        Kind::AcrAccessToken => Ok(&acr_access_token::AcrAccessTokenGenerator),
        // A ClusterGenerator wraps one of the above; it does not generate by itself.
        Kind::ClusterGenerator
        | Kind::BeyondtrustWorkloadCredentialsDynamicSecret
        | Kind::CloudsmithAccessToken
        | Kind::GithubAccessToken
        | Kind::GitlabDeployToken
        | Kind::QuayAccessToken
        | Kind::Grafana => Err(Error::unsupported(kind)),
    }
}

/// Finds generator objects: the object `reference` names, as JSON, `None` if it does not exist.
/// Namespaced kinds are looked up in `namespace` (the ExternalSecret's), `ClusterGenerator`
/// cluster-wide.
#[async_trait]
pub trait GeneratorSource: Send + Sync {
    /// The object `reference` names.
    async fn object(
        &self,
        namespace: &str,
        reference: &GeneratorRef,
    ) -> Result<Option<Value>, Error>;

    /// Where the Secrets a generator's spec refers to are read.
    fn credentials(&self) -> Arc<dyn SecretSource>;

    /// Whether namespaced generators may fall back to the operator's own identity (the AWS
    /// default chain of ECRAuthorizationToken and STSSessionToken, and the like):
    /// `--deny-operator-identity` refuses it, as for SecretStores. Upstream allows it.
    fn operator_identity(&self) -> OperatorIdentity {
        OperatorIdentity::Allowed
    }
}

/// Generator objects read from the Kubernetes API.
pub struct KubeGenerators {
    client: kube::Client,
    operator_identity: OperatorIdentity,
}

impl KubeGenerators {
    /// Reads with `client` (the operator's identity); namespaced generators authenticate
    /// under `operator_identity` (the stores' policy).
    pub fn new(client: kube::Client, operator_identity: OperatorIdentity) -> Self {
        Self {
            client,
            operator_identity,
        }
    }
}

#[async_trait]
impl GeneratorSource for KubeGenerators {
    async fn object(
        &self,
        namespace: &str,
        reference: &GeneratorRef,
    ) -> Result<Option<Value>, Error> {
        let resource = api_resource(reference.kind)?;
        let api: Api<DynamicObject> = if reference.kind == GeneratorRefKind::ClusterGenerator {
            Api::all_with(self.client.clone(), &resource)
        } else {
            Api::namespaced_with(self.client.clone(), namespace, &resource)
        };
        let object = api.get_opt(&reference.name).await.map_err(Error::Get)?;
        object
            .map(|object| serde_json::to_value(object).map_err(Error::Object))
            .transpose()
    }

    fn credentials(&self) -> Arc<dyn SecretSource> {
        Arc::new(KubeSecretSource::new(self.client.clone()))
    }

    fn operator_identity(&self) -> OperatorIdentity {
        self.operator_identity
    }
}

/// The API resource of a generator kind this build generates with.
fn api_resource(kind: GeneratorRefKind) -> Result<ApiResource, Error> {
    match kind {
        GeneratorRefKind::ClusterGenerator => Ok(ApiResource::erase::<ClusterGenerator>(&())),
        kind => Ok(generator(kind)?.api_resource()),
    }
}

/// Generates the data of the generator `reference` names, from `source`, for an object in
/// `namespace`.
pub async fn generate(
    source: &dyn GeneratorSource,
    namespace: &str,
    reference: &GeneratorRef,
) -> Result<Generated, Error> {
    api_resource(reference.kind)?;
    let object = source
        .object(namespace, reference)
        .await?
        .ok_or_else(|| Error::NotFound {
            kind: reference.kind,
            name: reference.name.clone(),
        })?;
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    // Referenced Secrets resolve as a SecretStore's in the caller's namespace would.
    let credentials = CredentialResolver::new(
        source.credentials(),
        StoreId::secret_store(namespace, reference.name.clone()),
        Some(namespace.to_owned()),
    );
    match reference.kind {
        // Written by the cluster administrator, as a ClusterSecretStore: keeps the fallback.
        GeneratorRefKind::ClusterGenerator => cluster_generate(spec, credentials).await,
        kind => {
            let credentials = credentials.with_operator_identity(source.operator_identity());
            generator(kind)?.generate_json(spec, credentials).await
        }
    }
}

/// The controller class the generator `reference` names declares (`spec.controller`; a
/// `ClusterGenerator`'s from the spec of the kind it wraps, as upstream reads it from the
/// "virtual" generator), `None` when it names none or cannot be read: upstream's
/// `shouldSkipGenerator` skips generators it cannot get.
pub async fn controller_class(
    source: &dyn GeneratorSource,
    namespace: &str,
    reference: &GeneratorRef,
) -> Option<String> {
    let object = source.object(namespace, reference).await.ok()??;
    let spec = object.get("spec")?;
    let spec = match reference.kind {
        GeneratorRefKind::ClusterGenerator => {
            let kind: GeneratorRefKind = serde_json::from_value(spec.get("kind")?.clone()).ok()?;
            spec.get("generator")?
                .get(generator(kind).ok()?.cluster_field())?
        }
        _ => spec,
    };
    let class = spec.get("controller")?.as_str()?;
    (!class.is_empty()).then(|| class.to_owned())
}

/// A `ClusterGenerator`: the kind it names, generating from its field of `spec.generator`.
async fn cluster_generate(
    spec: Value,
    credentials: CredentialResolver,
) -> Result<Generated, Error> {
    let spec: external_secrets_crds::generators::ClusterGeneratorSpec =
        serde_json::from_value(spec).map_err(Error::InvalidSpec)?;
    let inner = serde_json::to_value(&spec.generator).map_err(Error::InvalidSpec)?;
    let kind: GeneratorRefKind = serde_json::to_value(spec.kind)
        .and_then(serde_json::from_value)
        .map_err(Error::InvalidSpec)?;
    let generator = generator(kind)?;
    let field = generator.cluster_field();
    let spec = inner.get(field).cloned().unwrap_or(Value::Null);
    generator
        .generate_json(spec, credentials)
        .await
        .map_err(|error| Error::InCluster {
            field,
            source: Box::new(error),
        })
}

/// A provider's answer as generated data; its errors carry no secret values.
fn provided(result: Result<SecretMap, ProviderError>) -> Result<Generated, Error> {
    let data = result.map_err(Error::Provider)?;
    let generated = data
        .into_iter()
        .map(|(key, value)| (key, value.into_bytes()))
        .collect();
    Ok(generated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Generator objects held in memory.
    struct Objects(BTreeMap<String, Value>);

    #[async_trait]
    impl GeneratorSource for Objects {
        async fn object(&self, _: &str, reference: &GeneratorRef) -> Result<Option<Value>, Error> {
            Ok(self.0.get(&reference.name).cloned())
        }

        fn credentials(&self) -> Arc<dyn SecretSource> {
            Arc::new(external_secrets_providers::credentials::MemorySecretSource::default())
        }
    }

    /// [`Objects`] under `--deny-operator-identity`.
    struct Denying(Objects);

    #[async_trait]
    impl GeneratorSource for Denying {
        async fn object(
            &self,
            namespace: &str,
            reference: &GeneratorRef,
        ) -> Result<Option<Value>, Error> {
            self.0.object(namespace, reference).await
        }

        fn credentials(&self) -> Arc<dyn SecretSource> {
            self.0.credentials()
        }

        fn operator_identity(&self) -> OperatorIdentity {
            OperatorIdentity::DeniedToSecretStores
        }
    }

    /// A namespaced STSSessionToken without `auth` would use the pod's AWS identity: refused
    /// under the flag before any AWS call. (ClusterGenerators keep the fallback; not called
    /// here, as that would reach for real AWS credentials.)
    #[tokio::test]
    async fn namespaced_generators_may_be_denied_the_operators_identity() {
        let objects = Denying(Objects(
            [("sts".to_owned(), json!({"spec": {"region": "eu-west-1"}}))].into(),
        ));
        let denied = generate(&objects, "team", &reference("STSSessionToken", "sts"))
            .await
            .unwrap_err()
            .to_string();
        assert!(denied.contains("--deny-operator-identity"), "{denied}");
    }

    fn reference(kind: &str, name: &str) -> GeneratorRef {
        serde_json::from_value(
            json!({"apiVersion": "generators.external-secrets.io/v1alpha1",
            "kind": kind, "name": name}),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn kinds_generate_their_keys_and_cluster_generators_wrap_them() {
        let objects = Objects(
            [
                (
                    "pw".to_owned(),
                    json!({"spec": {"length": 10, "digits": 2, "symbols": 0}}),
                ),
                ("id".to_owned(), json!({"spec": {}})),
                ("fixed".to_owned(), json!({"spec": {"data": {"a": "1"}}})),
                (
                    "wrapped".to_owned(),
                    json!({"spec": {"kind": "Password",
                    "generator": {"passwordSpec": {"length": 6, "digits": 0, "symbols": 0}}}}),
                ),
            ]
            .into(),
        );
        let password = generate(&objects, "ns", &reference("Password", "pw"))
            .await
            .unwrap();
        assert_eq!(password["password"].len(), 10);
        let uuid = generate(&objects, "ns", &reference("UUID", "id"))
            .await
            .unwrap();
        let text = String::from_utf8(uuid["uuid"].clone()).unwrap();
        assert_eq!(text.len(), 36);
        assert_eq!(&text[14..15], "4", "{text}");
        let fake = generate(&objects, "ns", &reference("Fake", "fixed"))
            .await
            .unwrap();
        assert_eq!(fake["a"], b"1");
        let wrapped = generate(&objects, "ns", &reference("ClusterGenerator", "wrapped"))
            .await
            .unwrap();
        assert_eq!(wrapped["password"].len(), 6);
    }

    #[tokio::test]
    async fn generators_generate_and_unknown_kinds_are_refused() {
        let spec: external_secrets_crds::generators::FakeSpec =
            serde_json::from_value(json!({"data": {"a": "1"}})).unwrap();
        let credentials = CredentialResolver::new(
            Objects(BTreeMap::new()).credentials(),
            StoreId::secret_store("ns", "fake"),
            Some("ns".to_owned()),
        );
        let generated = fake::FakeGenerator
            .generate(spec, credentials)
            .await
            .unwrap();
        assert_eq!(generated["a"], b"1");
        let unsupported = generator(GeneratorRefKind::Grafana).err().unwrap();
        assert_eq!(unsupported.reason(), "GeneratorNotSupported");
    }

    #[tokio::test]
    async fn missing_objects_and_unsupported_kinds_are_named() {
        let objects = Objects(BTreeMap::new());
        let missing = generate(&objects, "ns", &reference("Password", "none"))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            missing,
            "could not get generator: Password \"none\" not found"
        );
        let quay = generate(&objects, "ns", &reference("QuayAccessToken", "x"))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            quay,
            "generator kind \"QuayAccessToken\" is not supported by this build"
        );
    }

    #[tokio::test]
    async fn acr_access_tokens_are_generated_directly_and_inside_cluster_generators() {
        let objects = Objects(
            [
                (
                    "direct".to_owned(),
                    json!({"spec": {"registry": "r.azurecr.io", "auth": {}}}),
                ),
                (
                    "wrapped".to_owned(),
                    json!({"spec": {"kind": "ACRAccessToken", "generator": {
                        "acrAccessTokenSpec": {"registry": "r.azurecr.io", "auth": {}}}}}),
                ),
            ]
            .into(),
        );
        // No auth method: refused by the generator (not as an unsupported kind) before any I/O.
        let direct = generate(&objects, "ns", &reference("ACRAccessToken", "direct"))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(direct, "unexpeted configuration");
        let wrapped = generate(&objects, "ns", &reference("ClusterGenerator", "wrapped"))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            wrapped,
            "spec.generator.acrAccessTokenSpec: unexpeted configuration"
        );
    }

    #[tokio::test]
    async fn cluster_generators_wrap_ssh_keys() {
        let objects = Objects(
            [(
                "keys".to_owned(),
                json!({"spec": {"kind": "SSHKey",
                "generator": {"sshKeySpec": {"keyType": "ed25519", "comment": "c"}}}}),
            )]
            .into(),
        );
        let keys = generate(&objects, "ns", &reference("ClusterGenerator", "keys"))
            .await
            .unwrap();
        let public = String::from_utf8(keys["publicKey"].clone()).unwrap();
        assert!(public.starts_with("ssh-ed25519 ") && public.ends_with(" c\n"));
        assert!(keys.contains_key("privateKey"));
    }

    #[tokio::test]
    async fn credentials_resolve_in_the_callers_namespace_and_errors_name_the_field() {
        let keys = json!({"region": "eu-west-1", "auth": {"secretRef": {
            "accessKeyIDSecretRef": {"name": "aws", "key": "id", "namespace": "other"},
            "secretAccessKeySecretRef": {"name": "aws", "key": "secret", "namespace": "other"}}}});
        let objects = Objects(
            [
                (
                    "wrapped".to_owned(),
                    json!({"spec": {"kind": "STSSessionToken",
                    "generator": {"stsSessionTokenSpec": keys}}}),
                ),
                ("direct".to_owned(), json!({"spec": keys})),
                (
                    "vault".to_owned(),
                    json!({"spec": {"path": "", "provider": {"server": "https://127.0.0.1:1"}}}),
                ),
            ]
            .into(),
        );
        let wrapped = generate(&objects, "ns", &reference("ClusterGenerator", "wrapped"))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            wrapped,
            "spec.generator.stsSessionTokenSpec: could not fetch SecretAccessKey secret: namespace \
             should either be empty or match the namespace of the SecretStore for a namespaced \
             SecretStore"
        );
        let direct = generate(
            &objects,
            "ns",
            &reference("ECRAuthorizationToken", "direct"),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            direct.starts_with("could not fetch SecretAccessKey secret: namespace should"),
            "{direct}"
        );
        let vault = generate(&objects, "ns", &reference("VaultDynamicSecret", "vault"))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(vault, "path: must name the Vault path to call");
    }

    /// Upstream `shouldSkipGenerator` (externalsecret_controller_secret.go) reads
    /// `spec.controller` of the generator (for a ClusterGenerator, of the virtual generator
    /// built from the kind it wraps); "ignoreMismatchControllerForGeneratorRef"
    /// (externalsecret_controller_test.go) uses a Fake generator of class
    /// "fakeControllerClass". Missing or unreadable generators name no class.
    #[tokio::test]
    async fn controller_class_is_read_from_the_generator_spec() {
        let objects = Objects(
            [
                (
                    "mytestfake2".to_owned(),
                    json!({"spec": {"data": {"somekey": "someValue"},
                        "controller": "fakeControllerClass"}}),
                ),
                ("plain".to_owned(), json!({"spec": {"data": {}}})),
                (
                    "wrapped".to_owned(),
                    json!({"spec": {"kind": "Password",
                        "generator": {"passwordSpec": {"length": 8, "controller": "dev"}}}}),
                ),
            ]
            .into(),
        );
        let class = |kind: &'static str, name: &'static str| {
            let objects = &objects;
            async move { controller_class(objects, "ns", &reference(kind, name)).await }
        };
        assert_eq!(
            class("Fake", "mytestfake2").await.as_deref(),
            Some("fakeControllerClass")
        );
        assert_eq!(class("Fake", "plain").await, None);
        assert_eq!(class("Fake", "missing").await, None);
        assert_eq!(
            class("ClusterGenerator", "wrapped").await.as_deref(),
            Some("dev")
        );
    }
}
