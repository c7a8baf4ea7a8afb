//! The gcpsm provider against cloudbox's Secret Manager emulator (through this project's
//! launcher, see `gcp/cloudbox_launcher.py`) on 127.0.0.1, authenticating with a
//! service-account key whose tokens come from the Google token endpoint contract fake.
//!
//! One emulator per test binary, kept in a static; tests keep apart by project (every
//! [`Project`] is a fresh project id; cloudbox creates projects on first use). Clients are built
//! with [`GcpsmClient::new`] pointing at the emulator, not through the registry (which reads the
//! endpoint from the process environment, shared by concurrent tests). The token endpoint runs on
//! the calling test's runtime, so each client gets its own.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use base64::Engine as _;
use contract_fakes::google::TokenEndpoint;
use external_secrets_crds::v1::GcpsmProvider;
use external_secrets_providers::backends::gcpsm::{Endpoints, GcpsmClient};
use external_secrets_providers::credentials::{
    CredentialResolver, MemorySecretSource, SecretSource,
};
use external_secrets_providers::{ProviderError, SharedClient, StoreId};
use serde_json::json;

use super::{Features, Harness, NAMESPACE, unique_name};

#[path = "gcp/cloudbox_process.rs"]
mod cloudbox_process;

pub use cloudbox_process::CloudboxProcess;

/// The test key file (its `token_uri` is a placeholder).
const KEY_FILE: &str = include_str!("../data/gcp-service-account.json");
/// The test key's account.
pub const ACCOUNT: &str = "eso-test@eso-test.iam.gserviceaccount.com";
/// The Secret (in [`NAMESPACE`]) holding the key, under [`KEY_ITEM`].
pub const KEY_SECRET: &str = "gcp-key";
/// The key's item in [`KEY_SECRET`].
pub const KEY_ITEM: &str = "key.json";

static SHARED: OnceLock<CloudboxProcess> = OnceLock::new();

/// The emulator of this test binary, started on first use.
pub fn cloudbox() -> &'static CloudboxProcess {
    SHARED.get_or_init(CloudboxProcess::start)
}

/// The key file with `token_uri` set.
pub fn key_file(token_uri: &str) -> String {
    KEY_FILE.replace("TOKEN_URI", token_uri)
}

/// A token endpoint for the test key's account.
pub async fn token_endpoint() -> TokenEndpoint {
    let key: serde_json::Value = serde_json::from_str(KEY_FILE).expect("key file is JSON");
    let pem = key["private_key"].as_str().expect("private_key");
    TokenEndpoint::start(ACCOUNT, pem)
        .await
        .expect("starting the token endpoint fake")
}

/// Secret Manager at `secret_manager`, every Google token service at `google`.
pub fn endpoints(secret_manager: &str, google: &str) -> Endpoints {
    let google = reqwest::Url::parse(google).expect("token services URL");
    Endpoints {
        secret_manager: reqwest::Url::parse(secret_manager).expect("Secret Manager URL"),
        secure_token: google.clone(),
        iam_credentials: google.clone(),
        sts: google,
    }
}

/// One project of the emulator.
pub struct Project {
    /// The project id.
    pub id: String,
}

impl Project {
    /// A project no other test uses.
    pub fn fresh() -> Self {
        Self {
            id: unique_name("eso-project"),
        }
    }

    /// Calls the emulator for `path` under this project; the JSON answer (panics unless 2xx).
    fn send(&self, method: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let path = format!("/v1/projects/{}/{path}", self.id);
        let (status, answer) = cloudbox().call(method, &path, &body);
        assert!(
            (200..300).contains(&status),
            "cloudbox {method} {path}: {status} {answer}: {}",
            cloudbox().log_tail()
        );
        serde_json::from_str(&answer).unwrap_or_default()
    }

    /// Creates secret `name` with `labels` and a version holding `value`.
    pub fn seed(&self, name: &str, value: &[u8], labels: &[(&str, &str)]) {
        let labels: serde_json::Map<String, serde_json::Value> = labels
            .iter()
            .map(|(key, value)| ((*key).to_owned(), json!(value)))
            .collect();
        let body = json!({"replication": {"automatic": {}}, "labels": labels});
        self.send("POST", &format!("secrets?secretId={name}"), body);
        self.add_version(name, value);
    }

    /// Adds a version holding `value` to secret `name`.
    pub fn add_version(&self, name: &str, value: &[u8]) {
        let data = base64::engine::general_purpose::STANDARD.encode(value);
        let body = json!({"payload": {"data": data}});
        self.send("POST", &format!("secrets/{name}:addVersion"), body);
    }

    /// Disables or destroys (`action`) version `version` of `name`.
    pub fn version_action(&self, name: &str, version: &str, action: &str) {
        let path = format!("secrets/{name}/versions/{version}:{action}");
        self.send("POST", &path, json!({}));
    }

    /// The secret's metadata as the emulator holds it (`None` if it does not exist).
    pub fn secret(&self, name: &str) -> Option<serde_json::Value> {
        let path = format!("/v1/projects/{}/secrets/{name}", self.id);
        let (status, answer) = cloudbox().call("GET", &path, "");
        (status == 200).then(|| serde_json::from_str(&answer).expect("cloudbox answers JSON"))
    }

    /// The number of versions of `name`.
    pub fn version_count(&self, name: &str) -> usize {
        let page = self.send(
            "GET",
            &format!("secrets/{name}/versions"),
            serde_json::Value::Null,
        );
        page["versions"].as_array().map_or(0, Vec::len)
    }

    /// A store spec for this project authenticating with the key in [`KEY_SECRET`].
    pub fn spec(&self, extra: serde_json::Value) -> GcpsmProvider {
        let mut spec = json!({
            "projectID": self.id,
            "auth": {"secretRef": {"secretAccessKeySecretRef": {"name": KEY_SECRET, "key": KEY_ITEM}}},
        });
        if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        serde_json::from_value(spec).expect("a valid gcpsm spec")
    }

    /// A client of `spec` in a SecretStore of [`NAMESPACE`] whose key Secret names `token_uri`.
    pub async fn client(
        &self,
        spec: &GcpsmProvider,
        token_uri: &str,
    ) -> Result<GcpsmClient, ProviderError> {
        let key = key_file(token_uri);
        let source = MemorySecretSource::default().with_secret(
            NAMESPACE,
            KEY_SECRET,
            &[],
            &[(KEY_ITEM, key.as_str())],
        );
        let endpoints = endpoints(&cloudbox().url, &cloudbox().url);
        self.client_with(spec, Arc::new(source), endpoints).await
    }

    /// A client of `spec` in a SecretStore of [`NAMESPACE`] reading credentials from `source`
    /// and calling `endpoints` (Secret Manager: set to the emulator by the caller).
    pub async fn client_with(
        &self,
        spec: &GcpsmProvider,
        source: Arc<dyn SecretSource>,
        endpoints: Endpoints,
    ) -> Result<GcpsmClient, ProviderError> {
        let store = StoreId::secret_store(NAMESPACE, "gcp");
        let credentials = CredentialResolver::new(source, store, Some(NAMESPACE.into()));
        GcpsmClient::new(spec, credentials, endpoints).await
    }
}

/// The behaviour suite's harness: each client in a fresh project, seeded through the API.
pub struct GcpsmHarness;

#[async_trait]
impl Harness for GcpsmHarness {
    fn name(&self) -> &'static str {
        "gcpsm"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let project = Project::fresh();
        for (key, value) in seed {
            project.seed(key, value.as_bytes(), &[]);
        }
        let tokens = token_endpoint().await;
        let client = project
            .client(&project.spec(json!({})), &tokens.token_uri())
            .await
            .expect("gcpsm client builds");
        // Dropping the handle leaves the endpoint serving until the test's runtime stops.
        drop(tokens);
        Arc::new(client)
    }
}
