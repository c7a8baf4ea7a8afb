//! The `secretserver` harness: one Secret Server contract fake per test process (its own
//! thread and runtime, so it outlives each test's runtime), trusted through `SSL_CERT_FILE`
//! (every contract fake of the process shares one CA), one folder per client.
//!
//! The suite's key `k` is the secret named `<prefix>-k` (template "Username and Password") in
//! the client's folder, its value in the first field (`username`); reads name that field as
//! property, pushes create secrets in the folder through PushSecret metadata.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::secretserver::{Accounts, PASSWORD_TEMPLATE, SecretServerFake};
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{
    SecretServerProvider, SecretServerProviderRef, SecretStoreProvider,
};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{PushRemoteRef, RemoteRef};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The user the fake accepts.
pub const USERNAME: &str = "tss-user";
/// Its password.
pub const PASSWORD: &str = "tss-password";
/// The domain the fake requires.
pub const DOMAIN: &str = "corp";

/// The process's fake Secret Server, started on first use.
pub fn fake() -> &'static SecretServerFake {
    static FAKE: OnceLock<SecretServerFake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let accounts = Accounts {
            username: USERNAME.into(),
            password: PASSWORD.into(),
            domain: DOMAIN.into(),
            fixed_token: "tss-fixed-token".into(),
            platform: false,
        };
        let fake = super::start_fake("Secret Server", || SecretServerFake::start(accounts));
        super::trust_fakes_ca("secretserver", &fake.server.ca_pem);
        fake
    })
}

/// A folder of its own on the fake (id, path).
pub fn new_folder() -> (i64, String) {
    static NEXT: AtomicI64 = AtomicI64::new(100);
    let id = NEXT.fetch_add(1, Ordering::SeqCst);
    let path = format!("/{}", unique_name("team"));
    fake().add_folder(id, &path);
    (id, path)
}

/// An inline credential.
pub fn value(text: &str) -> Option<SecretServerProviderRef> {
    Some(SecretServerProviderRef {
        value: Some(text.into()),
        secret_ref: None,
    })
}

/// A credential in Secret `tss`, key `key`.
pub fn reference(key: &str) -> Option<SecretServerProviderRef> {
    Some(SecretServerProviderRef {
        value: None,
        secret_ref: Some(SecretKeySelector {
            name: Some("tss".into()),
            key: Some(key.into()),
            namespace: None,
        }),
    })
}

/// A secretserver store section for `server_url`: inline username, password from Secret `tss`.
pub fn store_provider(server_url: &str) -> SecretStoreProvider {
    SecretStoreProvider {
        secretserver: Some(Box::new(SecretServerProvider {
            username: value(USERNAME),
            password: reference("password"),
            domain: Some(DOMAIN.into()),
            server_url: server_url.to_owned(),
            ..SecretServerProvider::default()
        })),
        ..SecretStoreProvider::default()
    }
}

/// A client of `provider` whose Secret `tss` holds `password` and `token`.
pub async fn client_of(provider: SecretStoreProvider, password: &str) -> SharedClient {
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "tss",
        &[],
        &[("password", password), ("token", "tss-fixed-token")],
    );
    let store = secret_store(&unique_name("secretserver"), provider);
    client_for(&store, Arc::new(source)).await
}

/// A client of the process's fake with the password `password`.
pub async fn client(password: &str) -> SharedClient {
    client_of(store_provider(&fake().server.url), password).await
}

/// The behaviour suite's view of the backend.
pub struct SecretServerHarness {
    prefix: String,
    folder: i64,
}

impl SecretServerHarness {
    /// A harness whose secrets live in a folder of their own, under names of their own.
    pub fn new() -> Self {
        Self {
            prefix: unique_name("suite"),
            folder: new_folder().0,
        }
    }

    fn name(&self, key: &str) -> String {
        format!("{}-{key}", self.prefix)
    }
}

#[async_trait]
impl Harness for SecretServerHarness {
    fn name(&self) -> &'static str {
        "secretserver"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: false,
            delete_removes: true,
        }
    }

    fn value_ref(&self, key: &str) -> RemoteRef {
        RemoteRef::new(self.name(key)).with_property("username")
    }

    fn push_ref(&self, key: &str) -> PushRemoteRef {
        PushRemoteRef::new(self.name(key))
    }

    fn push_metadata(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
            "kind": "PushSecretMetadata",
            "spec": {"folderId": self.folder, "secretTemplateId": PASSWORD_TEMPLATE},
        }))
    }

    fn json_ref(&self, key: &str, property: Option<&str>) -> RemoteRef {
        let remote_ref = RemoteRef::new(self.name(key));
        match property {
            Some(property) => remote_ref.with_property(property),
            None => remote_ref,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        for (key, value) in seed {
            let values: [(&str, &[u8]); 1] = [("username", value.as_bytes())];
            fake().add_secret(self.folder, &self.name(key), PASSWORD_TEMPLATE, &values);
        }
        client(PASSWORD).await
    }
}
