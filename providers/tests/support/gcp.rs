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
use external_secrets_providers::backends::gcpsm::GcpsmClient;
use external_secrets_providers::credentials::{CredentialResolver, MemorySecretSource};
use external_secrets_providers::{ProviderError, SharedClient, StoreId};
use rustls::pki_types::pem::PemObject as _;
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

/// The test key's public half (PKCS#1), for the token endpoint fake.
pub fn public_key() -> Vec<u8> {
    let key: serde_json::Value = serde_json::from_str(KEY_FILE).expect("key file is JSON");
    let pem = key["private_key"].as_str().expect("private_key");
    let der =
        rustls::pki_types::PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes()).expect("PKCS#8 key");
    let pair = ring::signature::RsaKeyPair::from_pkcs8(der.secret_pkcs8_der()).expect("RSA key");
    ring::signature::KeyPair::public_key(&pair)
        .as_ref()
        .to_vec()
}

/// The key file with `token_uri` set.
pub fn key_file(token_uri: &str) -> String {
    KEY_FILE.replace("TOKEN_URI", token_uri)
}

/// A token endpoint for the test key's account.
pub async fn token_endpoint() -> TokenEndpoint {
    TokenEndpoint::start(ACCOUNT, public_key())
        .await
        .expect("starting the token endpoint fake")
}

/// One project of the emulator.
pub struct Project {
    /// The project id.
    pub id: String,
    http: reqwest::Client,
}

impl Project {
    /// A project no other test uses.
    pub fn fresh() -> Self {
        // reqwest is built without a default crypto provider in this workspace.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            id: unique_name("eso-project"),
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/v1/projects/{}/{path}", cloudbox().url, self.id)
    }

    /// Creates secret `name` with `labels` (no ownership label unless given).
    pub async fn create_secret(&self, name: &str, labels: &[(&str, &str)]) {
        let labels: serde_json::Map<String, serde_json::Value> = labels
            .iter()
            .map(|(key, value)| ((*key).to_owned(), json!(value)))
            .collect();
        let body = json!({"replication": {"automatic": {}}, "labels": labels});
        self.send(
            reqwest::Method::POST,
            &format!("secrets?secretId={name}"),
            Some(body),
        )
        .await;
    }

    /// Adds a version holding `value` to secret `name`.
    pub async fn add_version(&self, name: &str, value: &[u8]) {
        let data = base64::engine::general_purpose::STANDARD.encode(value);
        let body = json!({"payload": {"data": data}});
        self.send(
            reqwest::Method::POST,
            &format!("secrets/{name}:addVersion"),
            Some(body),
        )
        .await;
    }

    /// Creates secret `name` holding `value`.
    pub async fn seed(&self, name: &str, value: &[u8], labels: &[(&str, &str)]) {
        self.create_secret(name, labels).await;
        self.add_version(name, value).await;
    }

    /// Disables or destroys (`action`) version `version` of `name`.
    pub async fn version_action(&self, name: &str, version: &str, action: &str) {
        let path = format!("secrets/{name}/versions/{version}:{action}");
        self.send(reqwest::Method::POST, &path, Some(json!({})))
            .await;
    }

    /// The secret's metadata as the emulator holds it (`None` if it does not exist).
    pub async fn secret(&self, name: &str) -> Option<serde_json::Value> {
        let response = self
            .http
            .get(self.url(&format!("secrets/{name}")))
            .send()
            .await
            .expect("calling cloudbox");
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return None;
        }
        let text = response.text().await.expect("reading cloudbox's answer");
        Some(serde_json::from_str(&text).expect("cloudbox answers JSON"))
    }

    /// The number of versions of `name`.
    pub async fn version_count(&self, name: &str) -> usize {
        let page = self
            .send(
                reqwest::Method::GET,
                &format!("secrets/{name}/versions"),
                None,
            )
            .await;
        page["versions"].as_array().map_or(0, Vec::len)
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let mut request = self.http.request(method, self.url(path));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.expect("calling cloudbox");
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "cloudbox {path}: {status} {text}: {}",
            cloudbox().log_tail()
        );
        serde_json::from_str(&text).unwrap_or_default()
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
        let store = StoreId::secret_store(NAMESPACE, "gcp");
        let credentials = CredentialResolver::new(Arc::new(source), store, Some(NAMESPACE.into()));
        let endpoint = reqwest::Url::parse(&cloudbox().url).expect("emulator URL");
        GcpsmClient::new(spec, credentials, endpoint).await
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
            project.seed(key, value.as_bytes(), &[]).await;
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
