//! The aws provider against moto's server (see `moto_process`) on 127.0.0.1.
//!
//! One server per test binary, started by the first test that needs it and kept in a static.
//! Tests keep apart by account rather than by resetting the server (tests run concurrently):
//! every [`Account`] is a 12-digit account of its own, entered the way the provider enters it,
//! by assuming a role of that account (moto switches accounts on `AssumeRole`). The provider's
//! stores use static keys from a Secret and `role` set to that account's role, so every test
//! also exercises the assume-role path.
//!
//! Clients are built with [`AwsClient::with_endpoints`] pointing at moto, not through the
//! registry (which takes endpoints from the process environment, shared by concurrent tests).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_credential_types::Credentials;
use aws_sdk_secretsmanager::primitives::Blob;
use aws_sdk_ssm::types::ParameterType;
use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
use external_secrets_crds::v1::AwsProvider;
use external_secrets_providers::backends::aws::{AwsClient, Endpoints};
use external_secrets_providers::credentials::{
    CredentialResolver, MemorySecretSource, SecretSource,
};
use external_secrets_providers::{ProviderError, SharedClient, StoreId};
use serde_json::json;

use super::{Features, Harness, NAMESPACE, unique_name};

#[path = "../aws/moto_process.rs"]
mod moto_process;

pub use moto_process::MotoProcess;

/// The region every test uses.
pub const REGION: &str = "eu-west-1";

/// The account moto acts in for keys it did not issue.
pub const DEFAULT_ACCOUNT: &str = "123456789012";

/// The Secret (in [`NAMESPACE`]) holding static keys under `access-key` and `secret-key`.
pub const KEYS_SECRET: &str = "aws-keys";

/// A running moto server.
pub struct MotoServer {
    process: MotoProcess,
}

static SHARED: OnceLock<MotoServer> = OnceLock::new();

impl MotoServer {
    /// The server of this test binary, started on first use.
    pub fn shared() -> &'static MotoServer {
        SHARED.get_or_init(|| MotoServer {
            process: MotoProcess::start(),
        })
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        &self.process.url
    }

    /// Every AWS API at this server.
    pub fn endpoints(&self) -> Endpoints {
        Endpoints::all(self.url())
    }

    /// An SDK configuration signing with `credentials`, for calls the tests make themselves.
    pub async fn sdk(&self, credentials: Credentials) -> SdkConfig {
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::Ring))
            .build_https();
        aws_config::defaults(BehaviorVersion::latest())
            .region(Region::new(REGION))
            .endpoint_url(self.url())
            .http_client(http)
            .credentials_provider(credentials)
            .load()
            .await
    }

    /// The roles assumed so far, as moto records them (`role_arn`, `external_id`,
    /// `session_name`, `account_id`, ...).
    pub fn assumed_roles(&self) -> Vec<serde_json::Value> {
        let data: serde_json::Value =
            serde_json::from_str(&self.process.get("/moto-api/data.json"))
                .expect("moto's data is JSON");
        data["sts"]["AssumedRole"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// moto's default account, where keys that were never issued by an `AssumeRole` act.
    pub async fn default_account(&'static self) -> Account {
        Account {
            id: DEFAULT_ACCOUNT.to_owned(),
            role_arn: String::new(),
            sdk: self.sdk(static_keys()).await,
            server: self,
        }
    }

    /// A fresh account, entered by assuming its role `eso` with any keys.
    pub async fn account(&'static self) -> Account {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = format!(
            "{:012}",
            200_000_000_000 + NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let role_arn = format!("arn:aws:iam::{id}:role/eso");
        let outside = self.sdk(static_keys()).await;
        let assumed = aws_sdk_sts::Client::new(&outside)
            .assume_role()
            .role_arn(&role_arn)
            .role_session_name("tests")
            .send()
            .await
            .expect("assuming the account's role in moto");
        let keys = assumed.credentials().expect("credentials");
        let credentials = Credentials::new(
            keys.access_key_id(),
            keys.secret_access_key(),
            Some(keys.session_token().to_owned()),
            None,
            "tests",
        );
        Account {
            id,
            role_arn,
            sdk: self.sdk(credentials).await,
            server: self,
        }
    }
}

/// One moto account, as the tests see it.
pub struct Account {
    /// The 12-digit account id.
    pub id: String,
    /// The role stores assume to act in this account.
    pub role_arn: String,
    sdk: SdkConfig,
    server: &'static MotoServer,
}

impl Account {
    /// A Secrets Manager client acting in this account.
    pub fn secrets_manager(&self) -> aws_sdk_secretsmanager::Client {
        aws_sdk_secretsmanager::Client::new(&self.sdk)
    }

    /// A Systems Manager client acting in this account.
    pub fn ssm(&self) -> aws_sdk_ssm::Client {
        aws_sdk_ssm::Client::new(&self.sdk)
    }

    /// Creates the string secret `name`.
    pub async fn create_secret(&self, name: &str, value: &str) {
        self.secrets_manager()
            .create_secret()
            .name(name)
            .secret_string(value)
            .send()
            .await
            .expect("creating a secret in moto");
    }

    /// Creates the binary secret `name`.
    pub async fn create_binary_secret(&self, name: &str, value: &[u8]) {
        self.secrets_manager()
            .create_secret()
            .name(name)
            .secret_binary(Blob::new(value))
            .send()
            .await
            .expect("creating a secret in moto");
    }

    /// Writes the parameter `name` (overwriting it: a new version).
    pub async fn put_parameter(&self, name: &str, value: &str, kind: ParameterType) {
        self.ssm()
            .put_parameter()
            .name(name)
            .value(value)
            .r#type(kind)
            .overwrite(true)
            .send()
            .await
            .expect("writing a parameter in moto");
    }

    /// A store spec of `service` acting in this account (static keys, then its role).
    pub fn provider(&self, service: &str) -> AwsProvider {
        serde_json::from_value(json!({
            "service": service,
            "region": REGION,
            "role": self.role_arn,
            "auth": {"secretRef": {
                "accessKeyIDSecretRef": {"name": KEYS_SECRET, "key": "access-key"},
                "secretAccessKeySecretRef": {"name": KEYS_SECRET, "key": "secret-key"},
            }},
        }))
        .expect("aws provider spec")
    }

    /// A client of a SecretStore in [`NAMESPACE`] with `spec`, reading [`keys`], at moto.
    pub async fn client(&self, spec: &AwsProvider) -> Result<SharedClient, ProviderError> {
        let store = StoreId::secret_store(NAMESPACE, unique_name("aws"));
        client(
            spec,
            store,
            Some(NAMESPACE),
            keys(),
            self.server.endpoints(),
        )
        .await
    }
}

/// A client of `spec` for `store`, acting for an object in `caller_namespace`, at `endpoints`.
pub async fn client(
    spec: &AwsProvider,
    store: StoreId,
    caller_namespace: Option<&str>,
    source: impl SecretSource + 'static,
    endpoints: Endpoints,
) -> Result<SharedClient, ProviderError> {
    let caller_namespace = caller_namespace.map(str::to_owned);
    let resolver = CredentialResolver::new(Arc::new(source), store, caller_namespace);
    let client = AwsClient::with_endpoints(spec, resolver, endpoints).await?;
    Ok(Arc::new(client))
}

/// A credential source holding any static keys as [`KEYS_SECRET`] (moto accepts all).
pub fn keys() -> MemorySecretSource {
    MemorySecretSource::default().with_secret(
        NAMESPACE,
        KEYS_SECRET,
        &[],
        &[("access-key", "AKIDEXAMPLE"), ("secret-key", "not-checked")],
    )
}

/// Keys moto did not issue (it accepts any).
fn static_keys() -> Credentials {
    Credentials::new("AKIDEXAMPLE", "not-checked", None, None, "tests")
}

/// Serves the suite's seeds from Secrets Manager, one account per client.
pub struct SecretsManagerHarness;

/// Serves the suite's seeds from Parameter Store, one account per client.
pub struct ParameterStoreHarness;

#[async_trait]
impl Harness for SecretsManagerHarness {
    fn name(&self) -> &'static str {
        "aws-secretsmanager"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let account = MotoServer::shared().account().await;
        for (key, value) in seed {
            account.create_secret(key, value).await;
        }
        account
            .client(&account.provider("SecretsManager"))
            .await
            .expect("client builds")
    }
}

#[async_trait]
impl Harness for ParameterStoreHarness {
    fn name(&self) -> &'static str {
        "aws-parameterstore"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: true,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let account = MotoServer::shared().account().await;
        for (key, value) in seed {
            account
                .put_parameter(key, value, ParameterType::String)
                .await;
        }
        account
            .client(&account.provider("ParameterStore"))
            .await
            .expect("client builds")
    }
}
