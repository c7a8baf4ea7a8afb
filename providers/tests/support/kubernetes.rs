//! The kubernetes provider against a loopback Kubernetes API server started by the harness.
//!
//! The loopback server plays both clusters: the operator's (where credential Secrets and
//! ServiceAccounts live, in [`NAMESPACE`]) and the remote one (each client reads its own fresh
//! namespace). Seeds become Secrets named after their key: a seed whose value is a JSON object
//! of strings gets those members as data keys, any other seed a single key `value`. So the suite's
//! single values are addressed with property `value`, as a user of this provider would.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{
    KubernetesAuth, KubernetesProvider, KubernetesServer, SecretStoreProvider, TokenAuth,
};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::{MemorySecretSource, SecretSource};
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::PostParams;
use loopback_apiserver::{LoopbackServer, Options};

use super::{Features, Harness, NAMESPACE, client_with_source, secret_store, unique_name};

/// The data key single seeded values live under.
pub const VALUE_KEY: &str = "value";

/// The Secret (in [`NAMESPACE`]) holding the loopback server's bearer token.
pub const TOKEN_SECRET: &str = "remote-token";

/// A running loopback API server, an admin client of it, and stores pointing at it.
pub struct KubernetesHarness {
    /// The server.
    pub server: LoopbackServer,
    /// A client with the server's static (admin) token.
    pub admin: kube::Client,
}

impl KubernetesHarness {
    /// Starts a loopback server (HTTPS, bearer token) and creates [`NAMESPACE`] in it.
    pub async fn start() -> Self {
        let server = LoopbackServer::start(Options::default())
            .await
            .expect("loopback API server starts");
        let admin = server.client().await.expect("admin client");
        let harness = Self { server, admin };
        harness.create_namespace(NAMESPACE).await;
        harness
    }

    /// The server's static bearer token.
    pub fn token(&self) -> &str {
        self.server
            .token()
            .expect("the loopback server has a token")
    }

    /// Creates ServiceAccount `account` in [`NAMESPACE`] allowed to get, list and watch
    /// `resources` of API group `group` in `namespace`: the server authorizes ServiceAccount
    /// tokens by RBAC, as a real cluster does.
    pub async fn reader_account(
        &self,
        account: &str,
        namespace: &str,
        group: &str,
        resources: &[&str],
    ) {
        let role = format!("{account}-reads");
        let service_account: ServiceAccount =
            serde_json::from_value(serde_json::json!({"metadata": {"name": account}})).unwrap();
        let rules: Role = serde_json::from_value(serde_json::json!({
            "metadata": {"name": role},
            "rules": [{"apiGroups": [group], "resources": resources,
                       "verbs": ["get", "list", "watch"]}],
        }))
        .unwrap();
        let binding: RoleBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}],
        }))
        .unwrap();
        let post = PostParams::default();
        let admin = || self.admin.clone();
        Api::<ServiceAccount>::namespaced(admin(), NAMESPACE)
            .create(&post, &service_account)
            .await
            .unwrap();
        Api::<Role>::namespaced(admin(), namespace)
            .create(&post, &rules)
            .await
            .unwrap();
        Api::<RoleBinding>::namespaced(admin(), namespace)
            .create(&post, &binding)
            .await
            .unwrap();
    }

    /// Creates namespace `name` (already existing is fine).
    pub async fn create_namespace(&self, name: &str) {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let api: Api<Namespace> = Api::all(self.admin.clone());
        match api.create(&PostParams::default(), &namespace).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => panic!("creating namespace {name}: {error}"),
        }
    }

    /// A fresh namespace holding `seed` as Secrets (see the module docs).
    pub async fn seeded_namespace(&self, seed: &[(&str, &str)]) -> String {
        let namespace = unique_name("remote");
        self.create_namespace(&namespace).await;
        for (key, value) in seed {
            let data = match serde_json::from_str::<BTreeMap<String, String>>(value) {
                Ok(members) => members,
                Err(_) => BTreeMap::from([(VALUE_KEY.to_owned(), (*value).to_owned())]),
            };
            let pairs: Vec<(&str, &str)> = data
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect();
            self.create_secret(&namespace, key, &[], &pairs).await;
        }
        namespace
    }

    /// Creates Secret `namespace/name` with `labels` and `data`.
    pub async fn create_secret(
        &self,
        namespace: &str,
        name: &str,
        labels: &[(&str, &str)],
        data: &[(&str, &str)],
    ) {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(key, value)| ((*key).to_owned(), ByteString(value.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        };
        Api::<Secret>::namespaced(self.admin.clone(), namespace)
            .create(&PostParams::default(), &secret)
            .await
            .unwrap_or_else(|error| panic!("creating secret {namespace}/{name}: {error}"));
    }

    /// Secret `namespace/name` as the API server has it, if it exists.
    pub async fn read_secret(&self, namespace: &str, name: &str) -> Option<Secret> {
        Api::<Secret>::namespaced(self.admin.clone(), namespace)
            .get_opt(name)
            .await
            .expect("reading a secret")
    }

    /// A provider spec for this server (its CA inline) reading `remote_namespace` with `auth`.
    pub fn provider(&self, remote_namespace: &str, auth: KubernetesAuth) -> KubernetesProvider {
        KubernetesProvider {
            server: Some(KubernetesServer {
                url: self.server.base_url().to_owned(),
                ca_bundle: Some(ByteString(
                    self.server.ca_pem().expect("HTTPS").as_bytes().to_vec(),
                )),
                ca_provider: None,
            }),
            auth: Some(auth),
            auth_ref: None,
            remote_namespace: remote_namespace.to_owned(),
        }
    }

    /// Token auth through [`TOKEN_SECRET`] (in the store's namespace).
    pub fn token_auth() -> KubernetesAuth {
        KubernetesAuth {
            token: Some(TokenAuth {
                bearer_token: SecretKeySelector {
                    name: Some(TOKEN_SECRET.to_owned()),
                    namespace: None,
                    key: Some("token".to_owned()),
                },
            }),
            ..KubernetesAuth::default()
        }
    }

    /// An in-memory credential source holding the admin token as [`TOKEN_SECRET`].
    pub fn token_source(&self) -> MemorySecretSource {
        MemorySecretSource::default().with_secret(
            NAMESPACE,
            TOKEN_SECRET,
            &[],
            &[("token", self.token())],
        )
    }
}

#[async_trait]
impl Harness for KubernetesHarness {
    fn name(&self) -> &'static str {
        "kubernetes"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(key).with_property(VALUE_KEY)
    }

    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef {
            remote_key: key.to_owned(),
            property: Some(VALUE_KEY.to_owned()),
        }
    }

    fn found_value(&self, value: &str) -> String {
        serde_json::json!({ VALUE_KEY: value }).to_string()
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let namespace = self.seeded_namespace(seed).await;
        let provider = SecretStoreProvider {
            kubernetes: Some(Box::new(self.provider(&namespace, Self::token_auth()))),
            ..SecretStoreProvider::default()
        };
        let store = secret_store(&unique_name("kubernetes"), provider);
        let source: Arc<dyn SecretSource> = Arc::new(self.token_source());
        client_with_source(&store, source).await
    }
}
