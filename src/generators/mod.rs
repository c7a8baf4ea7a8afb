//! Generators (`generators.external-secrets.io`): objects that produce secret values instead
//! of reading them from a store, used through an ExternalSecret's
//! `dataFrom[].sourceRef.generatorRef`. This build generates with `Password`, `UUID` and
//! `Fake`, directly or wrapped in a `ClusterGenerator`; other kinds are refused by name.
//!
//! Where a generator object comes from is a [`GeneratorSource`]: the cluster for the
//! controller, the input file for `render`.

mod password;
mod random;

use std::collections::BTreeMap;

use async_trait::async_trait;
use external_secrets_crds::generators::{ClusterGenerator, Fake, Password, Uuid};
use external_secrets_crds::v1::{GeneratorRef, GeneratorRefKind};
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
}

/// The API resource of the generator kinds this build generates with.
fn api_resource(kind: GeneratorRefKind) -> Result<ApiResource, String> {
    match kind {
        GeneratorRefKind::Password => Ok(ApiResource::erase::<Password>(&())),
        GeneratorRefKind::Uuid => Ok(ApiResource::erase::<Uuid>(&())),
        GeneratorRefKind::Fake => Ok(ApiResource::erase::<Fake>(&())),
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

/// Generates the data of the generator `reference` names, from `source`.
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
                other => return Err(unsupported(other)),
            };
            run(kind, inner.get(field).cloned().unwrap_or(Value::Null))
        }
        kind => run(kind, spec),
    }
}

/// Runs the generator `kind` with `spec`.
fn run(kind: GeneratorRefKind, spec: Value) -> Result<Generated, String> {
    let spec = if spec.is_null() {
        Value::Object(Default::default())
    } else {
        spec
    };
    match kind {
        GeneratorRefKind::Password => {
            password::generate(&serde_json::from_value(spec).map_err(invalid)?)
        }
        GeneratorRefKind::Uuid => Ok([("uuid".to_owned(), uuid_v4()?.into_bytes())].into()),
        GeneratorRefKind::Fake => {
            let spec: external_secrets_crds::generators::FakeSpec =
                serde_json::from_value(spec).map_err(invalid)?;
            Ok(spec
                .data
                .into_iter()
                .map(|(key, value)| (key, value.into_bytes()))
                .collect())
        }
        other => Err(unsupported(other)),
    }
}

fn invalid(error: serde_json::Error) -> String {
    format!("invalid generator spec: {error}")
}

/// A random (version 4) UUID in its text form, as upstream's `UUID` generator returns.
fn uuid_v4() -> Result<String, String> {
    let mut bytes = random::bytes::<16>()?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = data_encoding::HEXLOWER.encode(&bytes);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
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
        let ecr = generate(&objects, "ns", &reference("ECRAuthorizationToken", "x"))
            .await
            .unwrap_err();
        assert_eq!(
            ecr,
            "generator kind \"ECRAuthorizationToken\" is not supported by this build"
        );
    }
}
