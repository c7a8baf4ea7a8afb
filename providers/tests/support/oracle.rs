//! The `oracle` harness: one OCI Vault contract fake per test process (on a runtime of its
//! own), reached through `OCI_SECRETS_ENDPOINT`/`OCI_VAULTS_ENDPOINT`/`OCI_KMS_ENDPOINT` and
//! trusted through `SSL_CERT_FILE` (the provider has no CA field, as upstream), and a fresh
//! vault per client. Requests are signed with the test API key (`tests/data/oci-api-key.pem`),
//! whose public half the fake verifies every signature with.
//!
//! The suite's key `k` is the secret named `k` in the client's vault.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::oracle::{OracleFake, Tenancy};
use contract_fakes::oracle_identity::{InstanceIdentity, InstanceMetadata};
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{OracleAuth, OracleProvider, OracleSecretRef, SecretStoreProvider};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The tenancy and user OCIDs and the key fingerprint the fake expects.
pub const TENANCY: &str = "ocid1.tenancy.oc1..eso-test";
/// The user signing requests.
pub const USER: &str = "ocid1.user.oc1..eso-test";
/// The test key's fingerprint (MD5 of its public key).
pub const FINGERPRINT: &str = "db:03:f0:60:cc:74:92:e4:4a:56:b1:be:1c:ed:a5:21";
/// The compartment of every vault.
pub const COMPARTMENT: &str = "ocid1.compartment.oc1..eso-test";
/// The vaults' master encryption key.
pub const ENCRYPTION_KEY: &str = "ocid1.key.oc1..eso-test";

/// The test API key, PKCS#8 PEM.
pub fn private_key() -> String {
    std::fs::read_to_string(data("oci-api-key.pem")).expect("reading the OCI test key")
}

/// A file of `tests/data`.
pub fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The process's fake, started (and made the OCI endpoints) on first use.
pub fn fake() -> &'static OracleFake {
    static FAKE: OnceLock<OracleFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let tenancy = Tenancy {
            key_id: format!("{TENANCY}/{USER}/{FINGERPRINT}"),
            vault: "ocid1.vault.oc1..first".into(),
            compartment: COMPARTMENT.into(),
            encryption_key: ENCRYPTION_KEY.into(),
        };
        let key = private_key();
        let fake = super::start_fake("OCI Vault", move || async move {
            OracleFake::start(tenancy, &key).await
        });
        super::trust_fakes_ca("oracle", &fake.server.ca_pem);
        for variable in [
            "OCI_SECRETS_ENDPOINT",
            "OCI_VAULTS_ENDPOINT",
            "OCI_KMS_ENDPOINT",
        ] {
            // SAFETY: set once while the harness starts, before its first client reads it;
            // other tests of the process read no such variable meanwhile.
            unsafe { std::env::set_var(variable, &fake.server.url) };
        }
        fake
    })
}

/// The tenancy of the instance the instance-principal tests run on.
pub const INSTANCE_TENANCY: &str = "ocid1.tenancy.oc1..eso-instance";

/// The instance identity of this process: its metadata service started and made the SDKs'
/// `OCI_METADATA_BASE_URL`, the Vault fake made the identity service
/// (`OCI_SDK_AUTH_CLIENT_REGION_URL`). The leaf key is the test API key. Tokens are issued
/// only once a test registers the identity with the fake.
pub fn instance() -> &'static (InstanceIdentity, InstanceMetadata) {
    static INSTANCE: OnceLock<(InstanceIdentity, InstanceMetadata)> = OnceLock::new();
    INSTANCE.get_or_init(|| {
        let url = fake().server.url.clone();
        let identity = InstanceIdentity::new(INSTANCE_TENANCY, &private_key())
            .expect("creating the instance's certificates");
        let served = identity.clone();
        let metadata = super::start_fake("OCI instance metadata", move || async move {
            InstanceMetadata::start(&served).await
        });
        // SAFETY: set once before the first instance-principal client reads them; no other
        // test of the process reads these variables.
        unsafe {
            std::env::set_var("OCI_METADATA_BASE_URL", metadata.base_url());
            std::env::set_var("OCI_SDK_AUTH_CLIENT_REGION_URL", url);
        }
        (identity, metadata)
    })
}

/// The pod's service-account token the workload-identity tests exchange.
pub const POD_TOKEN: &str =
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZXNvIn0.pod";

/// The pod of this process for workload identity: its token file
/// (`OCI_KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH`) holds [`POD_TOKEN`], its cluster CA
/// (`OCI_KUBERNETES_SERVICE_ACCOUNT_CERT_PATH`) is the fakes' CA and the Vault fake is the
/// proxymux (`OCI_PROXYMUX_ENDPOINT`). Tokens are issued once a test registers the pod token.
pub fn pod() {
    static POD: OnceLock<()> = OnceLock::new();
    POD.get_or_init(|| {
        let fake = fake();
        let directory = std::env::temp_dir().join(format!("oci-pod-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("creating the pod directory");
        std::fs::write(directory.join("token"), POD_TOKEN).expect("writing the pod token");
        std::fs::write(directory.join("ca.crt"), &fake.server.ca_pem).expect("writing the CA");
        // SAFETY: set once before the first workload-identity client reads them; no other test
        // of the process reads these variables.
        unsafe {
            std::env::set_var(
                "OCI_KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH",
                directory.join("token"),
            );
            std::env::set_var(
                "OCI_KUBERNETES_SERVICE_ACCOUNT_CERT_PATH",
                directory.join("ca.crt"),
            );
            std::env::set_var(
                "OCI_PROXYMUX_ENDPOINT",
                format!("{}/resourcePrincipalSessionTokens", fake.server.url),
            );
        }
    });
}

/// A new empty vault on the fake; its OCID.
pub fn vault() -> String {
    let vault = format!("ocid1.vault.oc1..{}", unique_name("vault"));
    fake().add_vault(&vault);
    vault
}

/// An oracle store section on `vault` with user-principal auth, `configure` applied.
pub fn store_provider(
    vault: &str,
    configure: impl FnOnce(&mut OracleProvider),
) -> SecretStoreProvider {
    let selector = |key: &str| SecretKeySelector {
        name: Some("oci".into()),
        key: Some(key.into()),
        namespace: None,
    };
    let mut oracle = OracleProvider {
        region: "us-ashburn-1".into(),
        vault: vault.to_owned(),
        compartment: Some(COMPARTMENT.into()),
        encryption_key: Some(ENCRYPTION_KEY.into()),
        auth: Some(OracleAuth {
            tenancy: TENANCY.into(),
            user: USER.into(),
            secret_ref: OracleSecretRef {
                privatekey: selector("privateKey"),
                fingerprint: selector("fingerprint"),
            },
        }),
        ..OracleProvider::default()
    };
    configure(&mut oracle);
    SecretStoreProvider {
        oracle: Some(Box::new(oracle)),
        ..SecretStoreProvider::default()
    }
}

/// A client of a store on `vault` configured by `configure`, whose Secret holds `key_pem` and
/// `fingerprint`.
pub async fn client(
    vault: &str,
    key_pem: &str,
    fingerprint: &str,
    configure: impl FnOnce(&mut OracleProvider),
) -> SharedClient {
    fake();
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "oci",
        &[],
        &[("privateKey", key_pem), ("fingerprint", fingerprint)],
    );
    let store = secret_store(&unique_name("oracle"), store_provider(vault, configure));
    client_for(&store, Arc::new(source)).await
}

/// The behaviour suite's view of the backend.
pub struct OracleHarness;

#[async_trait]
impl Harness for OracleHarness {
    fn name(&self) -> &'static str {
        "oracle"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            // Deletion is scheduled (OCI keeps the secret readable until the date comes).
            delete_removes: false,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let vault = vault();
        for (key, value) in seed {
            fake().put_secret(&vault, key, value, &[]);
        }
        client(&vault, &private_key(), FINGERPRINT, |_| {}).await
    }
}
