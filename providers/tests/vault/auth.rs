//! Every auth method against the real server (Kubernetes and JWT with ServiceAccount tokens of
//! a loopback API server, which also answers OpenBao's TokenReviews), referent auth, and the
//! token's life: revoked on close, renewed before it expires, replaced at its maximum TTL or
//! when revoked behind the client's back.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use external_secrets_crds::meta::ServiceAccountSelector;
use external_secrets_crds::v1::{
    VaultAppRole, VaultAuth, VaultCertAuth, VaultJwtAuth, VaultKubernetesAuth,
    VaultKubernetesServiceAccountTokenAuth, VaultLdapAuth, VaultProvider, VaultUserPassAuth,
};
use external_secrets_providers::credentials::{
    KubeSecretSource, MemorySecretSource, OperatorIdentity,
};
use external_secrets_providers::request::RemoteRef;
use external_secrets_providers::{
    ErrorKind, ProviderError, Registry, SharedClient, StoreRef, ValidationResult,
};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::Api;
use kube::api::PostParams;
use loopback_apiserver::LoopbackServer;
use reqwest::Method;
use serde_json::json;
use std::sync::Arc;

use super::support::vault::{BaoServer, selector, token_auth, token_source};
use super::support::{NAMESPACE, cluster_with_service_account, unique_name};
use super::{client, cluster_store_of, store_of, text};

const PASSWORD: &str = "correct horse";

/// The Secret holding every credential of these tests, one key each.
pub(super) const CREDENTIALS: &str = "vault-credentials";

/// A KV v2 mount holding `db` (`value: v`) and a policy reading it; their names.
pub(super) async fn readable_mount(server: &BaoServer) -> (String, String) {
    let mount = server.seeded_mount(&[("db", "v")]).await;
    let policy = format!("read-{mount}");
    server
        .policy(&policy, &format!("{mount}/data/*"), &["read"])
        .await;
    (mount, policy)
}

/// A credential source holding `pairs` in [`CREDENTIALS`].
pub(super) fn credentials(pairs: &[(&str, &str)]) -> MemorySecretSource {
    MemorySecretSource::default().with_secret(NAMESPACE, CREDENTIALS, &[], pairs)
}

pub(super) async fn read_db(client: &SharedClient) -> Result<String, ProviderError> {
    client
        .get_secret(&RemoteRef::new("db").with_property("value"))
        .await
        .map(text)
}

/// A userpass mount with user `alice` ([`PASSWORD`], `policy`, plus `settings`); its path.
async fn userpass(server: &BaoServer, policy: &str, settings: serde_json::Value) -> String {
    let path = unique_name("userpass");
    server.enable_auth(&path, "userpass").await;
    let mut user = json!({"password": PASSWORD, "token_policies": [policy]});
    user.as_object_mut()
        .unwrap()
        .extend(settings.as_object().unwrap().clone());
    server
        .write(&format!("auth/{path}/users/alice"), user)
        .await;
    path
}

fn userpass_auth(path: &str) -> VaultAuth {
    VaultAuth {
        user_pass: Some(VaultUserPassAuth {
            path: path.to_owned(),
            username: "alice".into(),
            secret_ref: Some(selector(CREDENTIALS, "password")),
        }),
        ..VaultAuth::default()
    }
}

#[tokio::test]
async fn approle_logs_in_with_a_role_id_or_role_ref() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let path = unique_name("approle");
    server.enable_auth(&path, "approle").await;
    server
        .write(
            &format!("auth/{path}/role/reader"),
            json!({ "token_policies": [policy] }),
        )
        .await;
    let role_id = server
        .read(&format!("auth/{path}/role/reader/role-id"))
        .await
        .unwrap()["data"]["role_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let secret_id = server
        .write(&format!("auth/{path}/role/reader/secret-id"), json!({}))
        .await["data"]["secret_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let app_role = |role_id: Option<&str>| VaultAuth {
        app_role: Some(VaultAppRole {
            path: path.clone(),
            role_id: role_id.map(str::to_owned),
            role_ref: Some(selector(CREDENTIALS, "role-id")),
            secret_ref: selector(CREDENTIALS, "secret-id"),
        }),
        ..VaultAuth::default()
    };
    let source = || credentials(&[("role-id", &role_id), ("secret-id", &secret_id)]);

    let inline = client(
        server.provider(&mount, Some(app_role(Some(&format!(" {role_id} "))))),
        source(),
    )
    .await
    .unwrap();
    assert_eq!(read_db(&inline).await.unwrap(), "v");
    let from_secret = client(server.provider(&mount, Some(app_role(None))), source())
        .await
        .unwrap();
    assert_eq!(read_db(&from_secret).await.unwrap(), "v");
    assert_eq!(
        from_secret.validate().await.unwrap(),
        ValidationResult::Ready
    );

    let wrong = credentials(&[("role-id", &role_id), ("secret-id", "wrong")]);
    let error = client(server.provider(&mount, Some(app_role(None))), wrong)
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error
            .message()
            .starts_with("cannot log in to vault with approle auth")
    );
}

#[tokio::test]
async fn userpass_and_ldap_log_in_with_a_password() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let path = userpass(server, &policy, json!({})).await;
    let source = || credentials(&[("password", PASSWORD)]);
    let user_pass = client(
        server.provider(&mount, Some(userpass_auth(&path))),
        source(),
    )
    .await
    .unwrap();
    assert_eq!(read_db(&user_pass).await.unwrap(), "v");

    // OpenBao has no LDAP plugin; its login API is userpass's, so a userpass mount stands in.
    let ldap = VaultAuth {
        ldap: Some(VaultLdapAuth {
            path: path.clone(),
            username: " alice ".into(),
            secret_ref: Some(selector(CREDENTIALS, "password")),
        }),
        ..VaultAuth::default()
    };
    let ldap = client(server.provider(&mount, Some(ldap)), source())
        .await
        .unwrap();
    assert_eq!(read_db(&ldap).await.unwrap(), "v");

    let error = client(
        server.provider(&mount, Some(userpass_auth(&path))),
        credentials(&[("password", "wrong")]),
    )
    .await
    .err()
    .unwrap();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("wrong"));
}

/// A loopback API server with [`NAMESPACE`] and ServiceAccount `reader` in it.
async fn cluster() -> (LoopbackServer, kube::Client) {
    cluster_with_service_account("reader", &[]).await
}

fn reader() -> ServiceAccountSelector {
    ServiceAccountSelector {
        name: "reader".into(),
        namespace: None,
        audiences: Vec::new(),
    }
}

/// The loopback server's token signing key as a PEM public key (from its JWKS: a P-256 point).
fn signing_key_pem(loopback: &LoopbackServer) -> String {
    const P256_SPKI_PREFIX: &str = "3059301306072a8648ce3d020106082a8648ce3d030107034200";
    let key = &loopback.token_issuer().jwks()["keys"][0];
    let coordinate = |name: &str| URL_SAFE_NO_PAD.decode(key[name].as_str().unwrap()).unwrap();
    let mut der: Vec<u8> = (0..P256_SPKI_PREFIX.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&P256_SPKI_PREFIX[at..at + 2], 16).unwrap())
        .collect();
    der.push(0x04);
    der.extend(coordinate("x"));
    der.extend(coordinate("y"));
    format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        STANDARD.encode(der)
    )
}

#[tokio::test]
async fn jwt_logs_in_with_a_token_from_a_secret_or_a_token_request() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let (loopback, admin) = cluster().await;
    let issuer = loopback.token_issuer();
    let path = unique_name("jwt");
    server.enable_auth(&path, "jwt").await;
    server
        .write(
            &format!("auth/{path}/config"),
            json!({"jwt_validation_pubkeys": [signing_key_pem(&loopback)],
                "bound_issuer": issuer.issuer()}),
        )
        .await;
    server
        .write(
            &format!("auth/{path}/role/ci"),
            json!({"role_type": "jwt", "user_claim": "sub", "bound_audiences": ["vault"],
                "token_policies": [policy]}),
        )
        .await;
    let jwt = |jwt: VaultJwtAuth| VaultAuth {
        jwt: Some(VaultJwtAuth {
            path: path.clone(),
            role: Some(" ci ".into()),
            ..jwt
        }),
        ..VaultAuth::default()
    };

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = issuer.sign(&json!({"iss": issuer.issuer(), "sub": "ci", "aud": "vault",
        "iat": now, "exp": now + 600}));
    let from_secret = VaultJwtAuth {
        secret_ref: Some(selector(CREDENTIALS, "jwt")),
        ..VaultJwtAuth::default()
    };
    let client_from_secret = client(
        server.provider(&mount, Some(jwt(from_secret))),
        credentials(&[("jwt", &token)]),
    )
    .await
    .unwrap();
    assert_eq!(read_db(&client_from_secret).await.unwrap(), "v");

    // A TokenRequest with the default audience `vault`.
    let requested = VaultJwtAuth {
        kubernetes_service_account_token: Some(VaultKubernetesServiceAccountTokenAuth {
            service_account_ref: reader(),
            ..VaultKubernetesServiceAccountTokenAuth::default()
        }),
        ..VaultJwtAuth::default()
    };
    let source = KubeSecretSource::new(admin);
    let requested = client(server.provider(&mount, Some(jwt(requested))), source)
        .await
        .unwrap();
    assert_eq!(read_db(&requested).await.unwrap(), "v");
}

#[tokio::test]
async fn kubernetes_auth_is_reviewed_by_the_api_server() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let (loopback, admin) = cluster().await;
    let path = unique_name("kubernetes");
    server.enable_auth(&path, "kubernetes").await;
    server
        .write(
            &format!("auth/{path}/config"),
            json!({"kubernetes_host": loopback.base_url(),
                "kubernetes_ca_cert": loopback.ca_pem().unwrap(),
                "token_reviewer_jwt": loopback.token().unwrap(),
                "disable_local_ca_jwt": true}),
        )
        .await;
    server
        .write(
            &format!("auth/{path}/role/reader"),
            json!({"bound_service_account_names": ["reader"],
                "bound_service_account_namespaces": [NAMESPACE], "token_policies": [policy]}),
        )
        .await;
    let kubernetes = |auth: VaultKubernetesAuth| VaultAuth {
        kubernetes: Some(VaultKubernetesAuth {
            mount_path: path.clone(),
            role: "reader".into(),
            ..auth
        }),
        ..VaultAuth::default()
    };

    let requested = VaultKubernetesAuth {
        service_account_ref: Some(reader()),
        ..VaultKubernetesAuth::default()
    };
    let source = KubeSecretSource::new(admin.clone());
    let requested = client(server.provider(&mount, Some(kubernetes(requested))), source)
        .await
        .unwrap();
    assert_eq!(read_db(&requested).await.unwrap(), "v");

    // A token kept in a Secret, under the default key `token`.
    let token = Api::<ServiceAccount>::namespaced(admin, NAMESPACE)
        .create_token_request(
            "reader",
            &PostParams::default(),
            &k8s_openapi::api::authentication::v1::TokenRequest::default(),
        )
        .await
        .unwrap()
        .status
        .unwrap()
        .token;
    let mut in_secret = selector(CREDENTIALS, "");
    in_secret.key = None;
    let from_secret = VaultKubernetesAuth {
        secret_ref: Some(in_secret),
        ..VaultKubernetesAuth::default()
    };
    let from_secret = client(
        server.provider(&mount, Some(kubernetes(from_secret))),
        credentials(&[("token", &token)]),
    )
    .await
    .unwrap();
    assert_eq!(read_db(&from_secret).await.unwrap(), "v");

    let mut stranger = reader();
    stranger.name = "stranger".into();
    let unknown = VaultKubernetesAuth {
        service_account_ref: Some(stranger),
        ..VaultKubernetesAuth::default()
    };
    let error = client(
        server.provider(&mount, Some(kubernetes(unknown))),
        KubeSecretSource::new(loopback.client().await.unwrap()),
    )
    .await
    .err()
    .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.message().contains("stranger"), "{error}");
}

/// A self-signed client certificate and its key (PEM).
fn client_certificate() -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["eso-client".to_owned()]).unwrap();
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let certificate = params.self_signed(&key).unwrap();
    (certificate.pem(), key.serialize_pem())
}

#[tokio::test]
async fn cert_auth_presents_the_client_certificate() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let path = unique_name("cert");
    server.enable_auth(&path, "cert").await;
    let (certificate, key) = client_certificate();
    server
        .write(
            &format!("auth/{path}/certs/web"),
            json!({"certificate": certificate, "token_policies": [policy]}),
        )
        .await;
    let cert = |role: Option<&str>| VaultAuth {
        cert: Some(VaultCertAuth {
            path: path.clone(),
            vault_role: role.map(str::to_owned),
            client_cert: Some(selector(CREDENTIALS, "tls.crt")),
            secret_ref: Some(selector(CREDENTIALS, "tls.key")),
        }),
        ..VaultAuth::default()
    };
    for role in [None, Some("web")] {
        let client = client(
            server.provider(&mount, Some(cert(role))),
            credentials(&[("tls.crt", &certificate), ("tls.key", &key)]),
        )
        .await
        .unwrap();
        assert_eq!(read_db(&client).await.unwrap(), "v", "{role:?}");
    }

    let (other_certificate, other_key) = client_certificate();
    let error = client(
        server.provider(&mount, Some(cert(None))),
        credentials(&[("tls.crt", &other_certificate), ("tls.key", &other_key)]),
    )
    .await
    .err()
    .unwrap();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
}

#[tokio::test]
async fn login_tokens_are_revoked_on_close_and_static_tokens_kept() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let path = userpass(server, &policy, json!({})).await;
    let client = client(
        server.provider(&mount, Some(userpass_auth(&path))),
        credentials(&[("password", PASSWORD)]),
    )
    .await
    .unwrap();
    read_db(&client).await.unwrap();
    read_db(&client).await.unwrap();
    assert_eq!(server.tokens_of(&path).await, 1, "one login per client");
    client.close().await.unwrap();
    assert_eq!(server.tokens_of(&path).await, 0);
    let error = read_db(&client).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable);

    let token = server.token(&[&policy]).await;
    let static_client = super::client(
        server.provider(&mount, Some(token_auth())),
        token_source(&token),
    )
    .await
    .unwrap();
    static_client.close().await.unwrap();
    let (status, _) = server
        .call(
            Method::POST,
            "auth/token/lookup",
            Some(json!({ "token": token })),
            None,
        )
        .await;
    assert!(status.is_success(), "the user's token is not revoked");
}

#[tokio::test]
async fn tokens_are_renewed_before_they_expire() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let path = unique_name("approle");
    server.enable_auth(&path, "approle").await;
    server
        .write(
            &format!("auth/{path}/role/short"),
            json!({"token_policies": [policy], "token_ttl": "3s", "token_max_ttl": "1h",
                "secret_id_num_uses": 1}),
        )
        .await;
    let role_id = server
        .read(&format!("auth/{path}/role/short/role-id"))
        .await
        .unwrap()["data"]["role_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let secret_id = server
        .write(&format!("auth/{path}/role/short/secret-id"), json!({}))
        .await["data"]["secret_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let auth = VaultAuth {
        app_role: Some(VaultAppRole {
            path: path.clone(),
            role_id: Some(role_id),
            role_ref: None,
            secret_ref: selector(CREDENTIALS, "secret-id"),
        }),
        ..VaultAuth::default()
    };
    let client = client(
        server.provider(&mount, Some(auth)),
        credentials(&[("secret-id", &secret_id)]),
    )
    .await
    .unwrap();
    // The secret id allowed one login; reading past the token's first TTL needs renewals.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(2200)).await;
        assert_eq!(read_db(&client).await.unwrap(), "v");
    }
    assert_eq!(server.tokens_of(&path).await, 1);
    client.close().await.unwrap();
}

#[tokio::test]
async fn tokens_are_replaced_at_their_maximum_ttl_or_when_revoked() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    // Tokens live 6 seconds and cannot be renewed past that: after 4 the client logs in again,
    // and revokes the old token, which would otherwise live 2 more seconds.
    let path = userpass(
        server,
        &policy,
        json!({"token_ttl": "6s", "token_max_ttl": "6s"}),
    )
    .await;
    let client = client(
        server.provider(&mount, Some(userpass_auth(&path))),
        credentials(&[("password", PASSWORD)]),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(4200)).await;
    assert_eq!(read_db(&client).await.unwrap(), "v");
    assert_eq!(
        server.tokens_of(&path).await,
        1,
        "replaced tokens are revoked"
    );

    // Revoked behind the client's back: the next call logs in again.
    for accessor in server.accessors_of(&path).await {
        server
            .write(
                "auth/token/revoke-accessor",
                json!({ "accessor": accessor }),
            )
            .await;
    }
    assert_eq!(server.tokens_of(&path).await, 0);
    assert_eq!(read_db(&client).await.unwrap(), "v");
    assert_eq!(server.tokens_of(&path).await, 1);
}

#[tokio::test]
async fn logins_may_happen_in_another_namespace_than_reads() {
    let server = BaoServer::shared();
    let namespace = unique_name("tenant");
    server
        .write(&format!("sys/namespaces/{namespace}"), json!({}))
        .await;
    server.mount_kv(Some(&namespace), "kv", 2).await;
    server
        .write_in(
            Some(&namespace),
            "kv/data/db",
            json!({"data": {"value": "v"}}),
        )
        .await;
    // A root-namespace user whose policy reaches into the tenant namespace.
    let policy = format!("read-{namespace}");
    server
        .policy(&policy, &format!("{namespace}/kv/data/*"), &["read"])
        .await;
    let path = userpass(server, &policy, json!({})).await;
    let mut auth = userpass_auth(&path);
    auth.namespace = Some(String::new());
    let provider = VaultProvider {
        namespace: Some(namespace.clone()),
        ..server.provider("kv", Some(auth))
    };
    let client = client(provider, credentials(&[("password", PASSWORD)]))
        .await
        .unwrap();
    assert_eq!(read_db(&client).await.unwrap(), "v");
}

#[tokio::test]
async fn cluster_stores_resolve_referent_credentials_in_the_callers_namespace() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let path = userpass(server, &policy, json!({})).await;
    let store = cluster_store_of(server.provider(&mount, Some(userpass_auth(&path))));
    let registry = Registry::new(Arc::new(credentials(&[("password", PASSWORD)])));
    let unknown = registry
        .new_client(&StoreRef::from(&store), None)
        .await
        .unwrap();
    assert_eq!(unknown.validate().await.unwrap(), ValidationResult::Unknown);
    assert!(read_db(&unknown).await.is_err());
    let caller = registry
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
        .unwrap();
    assert_eq!(read_db(&caller).await.unwrap(), "v");
}

#[tokio::test]
async fn secret_stores_may_be_denied_the_operators_own_service_account_token() {
    let server = BaoServer::shared();
    let (mount, _policy) = readable_mount(server).await;
    let own_token = VaultAuth {
        kubernetes: Some(VaultKubernetesAuth {
            mount_path: "kubernetes".into(),
            role: "reader".into(),
            ..VaultKubernetesAuth::default()
        }),
        ..VaultAuth::default()
    };
    let provider = server.provider(&mount, Some(own_token));
    let denied = Registry::new(Arc::new(credentials(&[])))
        .with_operator_identity(OperatorIdentity::DeniedToSecretStores);
    let namespaced = store_of(provider.clone());
    let error = denied
        .new_client(&StoreRef::from(&namespaced), Some(NAMESPACE))
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(
        error.message().starts_with(
            "kubernetes auth: a SecretStore may not authenticate as the operator's own identity"
        ),
        "{error}"
    );
    // A ClusterSecretStore keeps upstream's fallback: it goes on to the mounted token (absent
    // outside a pod).
    let cluster = cluster_store_of(provider);
    let error = denied
        .new_client(&StoreRef::from(&cluster), Some(NAMESPACE))
        .await
        .err()
        .unwrap();
    assert!(
        error
            .message()
            .contains("cannot read Kubernetes service account token"),
        "{error}"
    );
}
