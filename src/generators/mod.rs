//! Generators (`generators.external-secrets.io`): objects that produce secret values instead
//! of reading them from a store, used through an ExternalSecret's
//! `dataFrom[].sourceRef.generatorRef` (and a PushSecret's `selector.generatorRef`). This build
//! generates with `Password`, `UUID`, `Fake`, `SSHKey`, `VaultDynamicSecret`,
//! `STSSessionToken`, `ECRAuthorizationToken`, `Webhook` and `MFA`, directly or wrapped in a
//! `ClusterGenerator`; other kinds are refused by name. One module per kind; the network kinds
//! call the provider code of their backend (its clients and authentication).
//!
//! Nothing generated is cleaned up afterwards and no `GeneratorState` is kept: upstream's
//! cleanup of every kind here does nothing either.
//!
//! Where a generator object comes from is a [`GeneratorSource`]: the cluster for the
//! controller, the input file for `render`. The source also reads the Secrets a generator's
//! spec refers to (credentials of the network kinds): those resolve in the namespace of the
//! object using the generator, for a `ClusterGenerator` too, as upstream (which runs every
//! generator "in" that namespace); a reference naming another namespace is refused, where
//! upstream ignores the namespace it names.

mod ecr_authorization_token;
mod mfa;
mod password;
mod random;
mod ssh_key;
mod sts_session_token;
mod vault_dynamic_secret;
mod webhook;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::generators::{
    ClusterGenerator, EcrAuthorizationToken, Fake, Mfa, Password, SshKey, StsSessionToken, Uuid,
    VaultDynamicSecret, Webhook,
};
use external_secrets_crds::v1::{GeneratorRef, GeneratorRefKind};
use external_secrets_providers::credentials::{CredentialResolver, KubeSecretSource, SecretSource};
use external_secrets_providers::{ProviderError, SecretMap, StoreId};
use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;

/// Generated data, key to value.
pub type Generated = BTreeMap<String, Vec<u8>>;

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
    ) -> Result<Option<Value>, String>;

    /// Where the Secrets a generator's spec refers to are read.
    fn credentials(&self) -> Arc<dyn SecretSource>;
}

/// Generator objects read from the Kubernetes API.
pub struct KubeGenerators {
    client: kube::Client,
}

impl KubeGenerators {
    /// Reads with `client` (the operator's identity).
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }
}

#[async_trait]
impl GeneratorSource for KubeGenerators {
    async fn object(
        &self,
        namespace: &str,
        reference: &GeneratorRef,
    ) -> Result<Option<Value>, String> {
        let resource = api_resource(reference.kind)?;
        let api: Api<DynamicObject> = if reference.kind == GeneratorRefKind::ClusterGenerator {
            Api::all_with(self.client.clone(), &resource)
        } else {
            Api::namespaced_with(self.client.clone(), namespace, &resource)
        };
        let object = api
            .get_opt(&reference.name)
            .await
            .map_err(|error| format!("could not get generator: {error}"))?;
        object
            .map(|object| serde_json::to_value(object).map_err(|error| error.to_string()))
            .transpose()
    }

    fn credentials(&self) -> Arc<dyn SecretSource> {
        Arc::new(KubeSecretSource::new(self.client.clone()))
    }
}

/// The API resource of the generator kinds this build generates with.
fn api_resource(kind: GeneratorRefKind) -> Result<ApiResource, String> {
    match kind {
        GeneratorRefKind::Password => Ok(ApiResource::erase::<Password>(&())),
        GeneratorRefKind::Uuid => Ok(ApiResource::erase::<Uuid>(&())),
        GeneratorRefKind::Fake => Ok(ApiResource::erase::<Fake>(&())),
        GeneratorRefKind::SshKey => Ok(ApiResource::erase::<SshKey>(&())),
        GeneratorRefKind::VaultDynamicSecret => Ok(ApiResource::erase::<VaultDynamicSecret>(&())),
        GeneratorRefKind::StsSessionToken => Ok(ApiResource::erase::<StsSessionToken>(&())),
        GeneratorRefKind::EcrAuthorizationToken => {
            Ok(ApiResource::erase::<EcrAuthorizationToken>(&()))
        }
        GeneratorRefKind::Webhook => Ok(ApiResource::erase::<Webhook>(&())),
        GeneratorRefKind::Mfa => Ok(ApiResource::erase::<Mfa>(&())),
        GeneratorRefKind::ClusterGenerator => Ok(ApiResource::erase::<ClusterGenerator>(&())),
        other => Err(unsupported(other)),
    }
}

fn unsupported(kind: GeneratorRefKind) -> String {
    let name = serde_json::to_value(kind)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default();
    format!("generator kind {name:?} is not supported by this build")
}

/// Generates the data of the generator `reference` names, from `source`, for an object in
/// `namespace`.
pub async fn generate(
    source: &dyn GeneratorSource,
    namespace: &str,
    reference: &GeneratorRef,
) -> Result<Generated, String> {
    api_resource(reference.kind)?;
    let object = source.object(namespace, reference).await?.ok_or_else(|| {
        format!(
            "could not get generator: {:?} {:?} not found",
            reference.kind, reference.name
        )
    })?;
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    // Referenced Secrets resolve as a SecretStore's in the caller's namespace would.
    let credentials = CredentialResolver::new(
        source.credentials(),
        StoreId::secret_store(namespace, reference.name.clone()),
        Some(namespace.to_owned()),
    );
    match reference.kind {
        GeneratorRefKind::ClusterGenerator => {
            let spec: external_secrets_crds::generators::ClusterGeneratorSpec =
                serde_json::from_value(spec).map_err(invalid)?;
            let inner = serde_json::to_value(&spec.generator).map_err(invalid)?;
            let kind: GeneratorRefKind = serde_json::to_value(spec.kind)
                .and_then(serde_json::from_value)
                .map_err(invalid)?;
            let field = match kind {
                GeneratorRefKind::Password => "passwordSpec",
                GeneratorRefKind::Uuid => "uuidSpec",
                GeneratorRefKind::Fake => "fakeSpec",
                GeneratorRefKind::SshKey => "sshKeySpec",
                GeneratorRefKind::VaultDynamicSecret => "vaultDynamicSecretSpec",
                GeneratorRefKind::StsSessionToken => "stsSessionTokenSpec",
                GeneratorRefKind::EcrAuthorizationToken => "ecrAuthorizationTokenSpec",
                GeneratorRefKind::Webhook => "webhookSpec",
                GeneratorRefKind::Mfa => "mfaSpec",
                other => return Err(unsupported(other)),
            };
            let spec = inner.get(field).cloned().unwrap_or(Value::Null);
            run(kind, spec, credentials)
                .await
                .map_err(|error| format!("spec.generator.{field}: {error}"))
        }
        kind => run(kind, spec, credentials).await,
    }
}

/// Runs the generator `kind` with `spec`, reading referenced Secrets through `credentials`.
async fn run(
    kind: GeneratorRefKind,
    spec: Value,
    credentials: CredentialResolver,
) -> Result<Generated, String> {
    let spec = if spec.is_null() {
        Value::Object(Default::default())
    } else {
        spec
    };
    match kind {
        GeneratorRefKind::Password => {
            password::generate(&serde_json::from_value(spec).map_err(invalid)?)
        }
        GeneratorRefKind::Uuid => Ok([(
            "uuid".to_owned(),
            uuid::Uuid::new_v4().to_string().into_bytes(),
        )]
        .into()),
        GeneratorRefKind::Fake => {
            let spec: external_secrets_crds::generators::FakeSpec =
                serde_json::from_value(spec).map_err(invalid)?;
            Ok(spec
                .data
                .into_iter()
                .map(|(key, value)| (key, value.into_bytes()))
                .collect())
        }
        GeneratorRefKind::SshKey => {
            ssh_key::generate(&serde_json::from_value(spec).map_err(invalid)?).await
        }
        GeneratorRefKind::VaultDynamicSecret => {
            let spec = serde_json::from_value(spec).map_err(invalid)?;
            vault_dynamic_secret::generate(&spec, credentials).await
        }
        GeneratorRefKind::StsSessionToken => {
            let spec = serde_json::from_value(spec).map_err(invalid)?;
            sts_session_token::generate(&spec, credentials).await
        }
        GeneratorRefKind::EcrAuthorizationToken => {
            let spec = serde_json::from_value(spec).map_err(invalid)?;
            ecr_authorization_token::generate(&spec, credentials).await
        }
        GeneratorRefKind::Webhook => {
            let spec = serde_json::from_value(spec).map_err(invalid)?;
            webhook::generate(&spec, credentials).await
        }
        GeneratorRefKind::Mfa => {
            mfa::generate(&serde_json::from_value(spec).map_err(invalid)?, credentials).await
        }
        other => Err(unsupported(other)),
    }
}

/// A provider's answer as generated data; its errors carry no secret values.
fn provided(result: Result<SecretMap, ProviderError>) -> Result<Generated, String> {
    result
        .map(|data| {
            data.into_iter()
                .map(|(key, value)| (key, value.into_bytes()))
                .collect()
        })
        .map_err(|error| error.to_string())
}

fn invalid(error: serde_json::Error) -> String {
    format!("invalid generator spec: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Generator objects held in memory.
    struct Objects(BTreeMap<String, Value>);

    #[async_trait]
    impl GeneratorSource for Objects {
        async fn object(&self, _: &str, reference: &GeneratorRef) -> Result<Option<Value>, String> {
            Ok(self.0.get(&reference.name).cloned())
        }

        fn credentials(&self) -> Arc<dyn SecretSource> {
            Arc::new(external_secrets_providers::credentials::MemorySecretSource::default())
        }
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
    async fn missing_objects_and_unsupported_kinds_are_named() {
        let objects = Objects(BTreeMap::new());
        let missing = generate(&objects, "ns", &reference("Password", "none"))
            .await
            .unwrap_err();
        assert_eq!(
            missing,
            "could not get generator: Password \"none\" not found"
        );
        let gcr = generate(&objects, "ns", &reference("GCRAccessToken", "x"))
            .await
            .unwrap_err();
        assert_eq!(
            gcr,
            "generator kind \"GCRAccessToken\" is not supported by this build"
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
            .unwrap_err();
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
        .unwrap_err();
        assert!(
            direct.starts_with("could not fetch SecretAccessKey secret: namespace should"),
            "{direct}"
        );
        let vault = generate(&objects, "ns", &reference("VaultDynamicSecret", "vault"))
            .await
            .unwrap_err();
        assert_eq!(vault, "path: must name the Vault path to call");
    }
}
