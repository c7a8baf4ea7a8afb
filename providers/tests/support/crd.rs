//! The crd provider against a loopback Kubernetes API server started by the harness (the
//! kubernetes harness's server, token and namespaces), with a namespaced custom kind `Thing`
//! and a cluster-scoped kind `ClusterThing` installed.
//!
//! Seeds become `Thing`s named after their key in a fresh namespace: a seed whose value is a
//! JSON object is the object's `spec`, any other seed is `spec.value`. So the suite's single
//! values are addressed with property `spec.value`, and its JSON secrets with `spec` (map) or
//! `spec.<member>` (property).

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::{
    CrdProvider, CrdProviderResource, KubernetesAuth, SecretStoreProvider,
};
use external_secrets_providers::credentials::SecretSource;
use external_secrets_providers::request::RemoteRef;
use external_secrets_providers::{Capabilities, SharedClient};
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};

use super::kubernetes::KubernetesHarness;
use super::{Features, Harness, client_with_source, secret_store, unique_name};

/// The API group of the test kinds.
pub const GROUP: &str = "test.crd.external-secrets.io";

/// A running loopback server with the test kinds installed.
pub struct CrdHarness {
    /// The server, its admin client and credential helpers.
    pub kubernetes: KubernetesHarness,
}

fn crd(kind: &str, plural: &str, scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase()},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    })
}

/// The resource of test kind `kind` (`Thing` or `ClusterThing`).
pub fn api_resource(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(GROUP, "v1", kind))
}

impl CrdHarness {
    /// Starts the server and installs the test kinds.
    pub async fn start() -> Self {
        let kubernetes = KubernetesHarness::start().await;
        let crds = ApiResource::from_gvk(&GroupVersionKind::gvk(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
        ));
        let api: Api<DynamicObject> = Api::all_with(kubernetes.admin.clone(), &crds);
        for definition in [
            crd("Thing", "things", "Namespaced"),
            crd("ClusterThing", "clusterthings", "Cluster"),
        ] {
            let object: DynamicObject = serde_json::from_value(definition).unwrap();
            api.create(&PostParams::default(), &object)
                .await
                .expect("installing a test CRD");
        }
        Self { kubernetes }
    }

    /// Creates object `name` of `kind` (in `namespace` when given) with `spec`.
    pub async fn create(&self, kind: &str, namespace: Option<&str>, name: &str, spec: Value) {
        let resource = api_resource(kind);
        let mut object = DynamicObject::new(name, &resource).data(json!({ "spec": spec }));
        object.metadata.namespace = namespace.map(str::to_owned);
        let api: Api<DynamicObject> = match namespace {
            Some(namespace) => {
                Api::namespaced_with(self.kubernetes.admin.clone(), namespace, &resource)
            }
            None => Api::all_with(self.kubernetes.admin.clone(), &resource),
        };
        api.create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|error| panic!("creating {kind} {name}: {error}"));
    }

    /// A fresh namespace holding `seed` as `Thing`s (see the module docs).
    pub async fn seeded_namespace(&self, seed: &[(&str, &str)]) -> String {
        let namespace = unique_name("things");
        self.kubernetes.create_namespace(&namespace).await;
        for (key, value) in seed {
            let spec = match serde_json::from_str::<Value>(value) {
                Ok(object @ Value::Object(_)) => object,
                _ => json!({ "value": value }),
            };
            self.create("Thing", Some(&namespace), key, spec).await;
        }
        namespace
    }

    /// A provider spec for this server (its CA inline) reading `kind` with `auth`.
    pub fn provider(&self, kind: &str, auth: KubernetesAuth) -> CrdProvider {
        let connection = self.kubernetes.provider("unused", auth);
        CrdProvider {
            server: connection.server,
            auth: connection.auth,
            auth_ref: None,
            resource: CrdProviderResource {
                group: GROUP.to_owned(),
                version: "v1".to_owned(),
                kind: kind.to_owned(),
            },
            whitelist: None,
        }
    }

    /// A client of a SecretStore in `namespace` with `provider`, the admin token readable.
    pub async fn client_in(&self, namespace: &str, provider: CrdProvider) -> SharedClient {
        let mut store = secret_store(
            &unique_name("crd"),
            SecretStoreProvider {
                crd: Some(Box::new(provider)),
                ..SecretStoreProvider::default()
            },
        );
        store.metadata.namespace = Some(namespace.to_owned());
        let source = self.kubernetes.token_source().with_secret(
            namespace,
            super::kubernetes::TOKEN_SECRET,
            &[],
            &[("token", self.kubernetes.token())],
        );
        let source: Arc<dyn SecretSource> = Arc::new(source);
        client_with_source(&store, source).await
    }
}

#[async_trait]
impl Harness for CrdHarness {
    fn name(&self) -> &'static str {
        "crd"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: false,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(key).with_property("spec.value")
    }

    fn json_ref(&self, key: &str, property: Option<&str>) -> RemoteRef {
        let path = match property {
            Some(property) => format!("spec.{property}"),
            None => "spec".to_owned(),
        };
        RemoteRef::new(key).with_property(path)
    }

    fn seed_of_found(&self, found: &str) -> String {
        let object: Value = serde_json::from_str(found).expect("a found object is JSON");
        object["spec"]["value"]
            .as_str()
            .expect("a seeded Thing has spec.value")
            .to_owned()
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let namespace = self.seeded_namespace(seed).await;
        let provider = self.provider("Thing", KubernetesHarness::token_auth());
        self.client_in(&namespace, provider).await
    }
}
