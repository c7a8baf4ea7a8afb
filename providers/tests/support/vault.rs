//! The vault provider against a real OpenBao server (see `bao_process`) on 127.0.0.1.
//!
//! One server per test binary, started by the first test that needs it and kept in a static;
//! tests keep apart by using their own mounts. Admin calls go through the HTTP API as root.
//!
//! Seeds become KV v2 secrets named after their key: a seed whose value is a JSON object of
//! strings is stored as that object, any other seed under the single key `value`. So the suite's
//! single values are addressed with property `value`, as a user of this provider would.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{SecretStoreProvider, VaultAuth, VaultProvider};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::{MemorySecretSource, SecretSource};
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};
use k8s_openapi::ByteString;
use reqwest::{Method, StatusCode};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use serde_json::{Value, json};

use super::bao_process::BaoProcess;
use super::{Features, Harness, NAMESPACE, client_with_source, secret_store, unique_name};

pub use super::bao_process::ROOT_TOKEN;

/// The data key single seeded values live under.
pub const VALUE_KEY: &str = "value";

/// The Secret (in [`NAMESPACE`]) holding a Vault token under key `token`.
pub const TOKEN_SECRET: &str = "vault-token";

/// A running OpenBao dev server with TLS and an HTTP client of its API.
pub struct BaoServer {
    process: BaoProcess,
}

static SHARED: OnceLock<BaoServer> = OnceLock::new();

impl BaoServer {
    /// The server of this test binary, started on first use (blocking for about a second).
    pub fn shared() -> &'static BaoServer {
        SHARED.get_or_init(|| BaoServer {
            process: BaoProcess::start(),
        })
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        &self.process.url
    }

    /// The CA that signed the server's certificate (PEM).
    pub fn ca_pem(&self) -> &str {
        &self.process.ca_pem
    }

    /// An HTTP client trusting the server's CA.
    pub fn http(&self) -> reqwest::Client {
        let mut roots = rustls::RootCertStore::empty();
        for certificate in CertificateDer::pem_slice_iter(self.ca_pem().as_bytes()) {
            roots.add(certificate.expect("CA PEM")).expect("CA added");
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .build()
            .expect("HTTP client")
    }

    /// Calls the API as root (optionally in a Vault namespace): the status and JSON answer
    /// (`Null` when empty).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        namespace: Option<&str>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .http()
            .request(method, format!("{}/v1/{path}", self.url()))
            .header("X-Vault-Token", ROOT_TOKEN);
        if let Some(namespace) = namespace {
            request = request.header("X-Vault-Namespace", namespace);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().await.expect("calling bao");
        let status = response.status();
        let bytes = response.bytes().await.expect("reading bao's answer");
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, value)
    }

    /// POSTs `body` to `path` as root; panics unless it succeeds.
    pub async fn write(&self, path: &str, body: Value) -> Value {
        self.write_in(None, path, body).await
    }

    /// Like [`Self::write`], in Vault namespace `namespace`.
    pub async fn write_in(&self, namespace: Option<&str>, path: &str, body: Value) -> Value {
        let (status, answer) = self.call(Method::POST, path, Some(body), namespace).await;
        assert!(status.is_success(), "POST {path}: {status} {answer}");
        answer
    }

    /// GETs `path` as root: `None` on 404.
    pub async fn read(&self, path: &str) -> Option<Value> {
        let (status, answer) = self.call(Method::GET, path, None, None).await;
        if status == StatusCode::NOT_FOUND {
            return None;
        }
        assert!(status.is_success(), "GET {path}: {status} {answer}");
        Some(answer)
    }

    /// Mounts a KV engine of `version` (1 or 2) at `mount`.
    pub async fn mount_kv(&self, namespace: Option<&str>, mount: &str, version: u8) {
        let body = json!({"type": "kv", "options": {"version": version.to_string()}});
        self.write_in(namespace, &format!("sys/mounts/{mount}"), body)
            .await;
    }

    /// Enables the auth method `kind` at `path`.
    pub async fn enable_auth(&self, path: &str, kind: &str) {
        self.write(&format!("sys/auth/{path}"), json!({ "type": kind }))
            .await;
    }

    /// Writes the ACL policy `name` granting `capabilities` on `path`.
    pub async fn policy(&self, name: &str, path: &str, capabilities: &[&str]) {
        let policy = format!("path \"{path}\" {{ capabilities = {capabilities:?} }}");
        self.write(
            &format!("sys/policies/acl/{name}"),
            json!({ "policy": policy }),
        )
        .await;
    }

    /// A token with `policies` (not the root token).
    pub async fn token(&self, policies: &[&str]) -> String {
        let answer = self
            .write("auth/token/create", json!({ "policies": policies }))
            .await;
        answer["auth"]["client_token"]
            .as_str()
            .expect("token created")
            .to_owned()
    }

    /// The accessors of the live tokens issued by the auth mount at `path` (e.g.
    /// `userpass-3`).
    pub async fn accessors_of(&self, path: &str) -> Vec<String> {
        let (_, listed) = self
            .call(Method::GET, "auth/token/accessors?list=true", None, None)
            .await;
        let mut accessors = Vec::new();
        for accessor in listed["data"]["keys"].as_array().into_iter().flatten() {
            let (status, token) = self
                .call(
                    Method::POST,
                    "auth/token/lookup-accessor",
                    Some(json!({ "accessor": accessor })),
                    None,
                )
                .await;
            let issued_by = token["data"]["path"].as_str().unwrap_or_default();
            if status.is_success() && issued_by.starts_with(&format!("auth/{path}/")) {
                accessors.push(accessor.as_str().unwrap_or_default().to_owned());
            }
        }
        accessors
    }

    /// How many live tokens the auth mount at `path` issued.
    pub async fn tokens_of(&self, path: &str) -> usize {
        self.accessors_of(path).await.len()
    }

    /// A KV v2 mount of its own holding `seed` (see the module docs).
    pub async fn seeded_mount(&self, seed: &[(&str, &str)]) -> String {
        let mount = unique_name("kv");
        self.mount_kv(None, &mount, 2).await;
        for (key, value) in seed {
            let data = match serde_json::from_str::<BTreeMap<String, String>>(value) {
                Ok(members) => json!(members),
                Err(_) => json!({ VALUE_KEY: value }),
            };
            self.write(&format!("{mount}/data/{key}"), json!({ "data": data }))
                .await;
        }
        mount
    }

    /// A provider spec for this server (its CA inline) reading KV v2 mount `mount`.
    pub fn provider(&self, mount: &str, auth: Option<VaultAuth>) -> VaultProvider {
        VaultProvider {
            server: self.url().to_owned(),
            path: Some(mount.to_owned()),
            ca_bundle: Some(ByteString(self.ca_pem().as_bytes().to_vec())),
            auth,
            ..VaultProvider::default()
        }
    }
}

/// Token auth through [`TOKEN_SECRET`] (in the store's namespace).
pub fn token_auth() -> VaultAuth {
    VaultAuth {
        token_secret_ref: Some(selector(TOKEN_SECRET, "token")),
        ..VaultAuth::default()
    }
}

/// A selector of key `key` of Secret `name`, in the store's namespace.
pub fn selector(name: &str, key: &str) -> SecretKeySelector {
    SecretKeySelector {
        name: Some(name.to_owned()),
        namespace: None,
        key: Some(key.to_owned()),
    }
}

/// A credential source holding `token` as [`TOKEN_SECRET`].
pub fn token_source(token: &str) -> MemorySecretSource {
    MemorySecretSource::default().with_secret(NAMESPACE, TOKEN_SECRET, &[], &[("token", token)])
}

/// Serves the suite's seeds from a KV v2 mount of the shared server.
pub struct VaultHarness {
    server: &'static BaoServer,
}

impl VaultHarness {
    /// Starts (or reuses) the server.
    pub fn start() -> Self {
        Self {
            server: BaoServer::shared(),
        }
    }
}

#[async_trait]
impl Harness for VaultHarness {
    fn name(&self) -> &'static str {
        "vault"
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
        json!({ VALUE_KEY: value }).to_string()
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let mount = self.server.seeded_mount(seed).await;
        let provider = SecretStoreProvider {
            vault: Some(Box::new(self.server.provider(&mount, Some(token_auth())))),
            ..SecretStoreProvider::default()
        };
        let store = secret_store(&unique_name("vault"), provider);
        let source: Arc<dyn SecretSource> = Arc::new(token_source(ROOT_TOKEN));
        client_with_source(&store, source).await
    }
}
