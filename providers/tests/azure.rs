//! azurekv beyond the behaviour suite, against the Key Vault contract fake: every auth method
//! (service principal with secret and certificate, managed identity with and without an
//! identity id, workload identity from a TokenRequest and from the webhook's token file), the
//! challenge, token caching, object types, versions, tags, paging, disabled secrets, and pushes
//! with ownership and metadata.

mod support;

#[cfg(feature = "azurekv")]
mod azurekv {
    use std::sync::Arc;

    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use contract_fakes::azure_identity::AppCredential;
    use contract_fakes::azure_keyvault::{KeyVaultFake, Kind};
    use external_secrets_providers::backends::azurekv::auth::WorkloadEnvironment;
    use external_secrets_providers::credentials::{KubeSecretSource, MemorySecretSource};
    use external_secrets_providers::request::{
        Find, FindName, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef,
    };
    use external_secrets_providers::{ErrorKind, SecretValue, SharedClient};
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use serde_json::json;

    use crate::support::azurekv::{
        CLIENT_SECRET, CREDENTIALS_SECRET, TENANT, client_secret_auth, connect, credentials, spec,
        start_fake,
    };
    use crate::support::{NAMESPACE, cluster_with_service_account};

    const CERT_BUNDLE: &str = include_str!("data/azure-sp-cert.pem");

    fn text(value: SecretValue) -> String {
        String::from_utf8(value.into_bytes()).unwrap()
    }

    async fn secret_client(fake: &KeyVaultFake) -> SharedClient {
        let spec = spec(fake, client_secret_auth());
        connect(
            fake,
            &spec,
            Arc::new(credentials(CLIENT_SECRET)),
            WorkloadEnvironment::default(),
        )
        .await
        .unwrap()
    }

    async fn reads_seeded_secret(fake: &KeyVaultFake, client: &SharedClient) {
        fake.put_secret("probe", "value", &[], true);
        let value = client.get_secret(&RemoteRef::new("probe")).await.unwrap();
        assert_eq!(text(value), "value");
    }

    #[tokio::test]
    async fn client_secret_is_sent_and_checked() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        reads_seeded_secret(&fake, &client).await;
        let first = fake.server.requests();
        // Challenge first (no token), then the token endpoint, then the authorised read.
        assert!(first[0].headers.get("authorization").is_none());
        assert_eq!(first[1].path, format!("/{TENANT}/oauth2/v2.0/token"));
        assert!(
            first[2]
                .query
                .as_deref()
                .unwrap()
                .contains("api-version=7.4")
        );

        let spec = spec(&fake, client_secret_auth());
        let wrong = connect(
            &fake,
            &spec,
            Arc::new(credentials("wrong")),
            WorkloadEnvironment::default(),
        )
        .await
        .unwrap();
        let error = wrong
            .get_secret(&RemoteRef::new("probe"))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::PermissionDenied);
        assert!(error.message().contains("AADSTS7000215"), "{error}");
        assert!(!error.message().contains("wrong"));
    }

    #[tokio::test]
    async fn tokens_are_cached_per_client() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        for _ in 0..3 {
            reads_seeded_secret(&fake, &client).await;
        }
        assert_eq!(fake.directory.issued(), 1);
    }

    #[tokio::test]
    async fn client_certificate_signs_an_assertion() {
        let fake = start_fake().await;
        let der = CertificateDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap();
        let PrivateKeyDer::Pkcs8(key) =
            PrivateKeyDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap()
        else {
            panic!("the test key is PKCS#8");
        };
        let pair = ring::signature::RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()).unwrap();
        use ring::signature::KeyPair as _;
        fake.directory.register_app(
            TENANT,
            "cert-app",
            AppCredential::Certificate {
                der: der.to_vec(),
                public_key: pair.public_key().as_ref().to_vec(),
            },
        );
        let source = MemorySecretSource::default().with_secret(
            NAMESPACE,
            CREDENTIALS_SECRET,
            &[],
            &[("client-id", "cert-app"), ("cert", CERT_BUNDLE)],
        );
        let spec = spec(
            &fake,
            json!({
                "tenantId": TENANT,
                "authSecretRef": {
                    "clientId": {"name": CREDENTIALS_SECRET, "key": "client-id"},
                    "clientCertificate": {"name": CREDENTIALS_SECRET, "key": "cert"},
                }
            }),
        );
        let client = connect(
            &fake,
            &spec,
            Arc::new(source),
            WorkloadEnvironment::default(),
        )
        .await
        .unwrap();
        reads_seeded_secret(&fake, &client).await;
    }

    #[tokio::test]
    async fn service_principal_configuration_errors_are_upstreams() {
        let fake = start_fake().await;
        let both = spec(
            &fake,
            json!({
                "tenantId": TENANT,
                "authSecretRef": {
                    "clientId": {"name": CREDENTIALS_SECRET, "key": "client-id"},
                    "clientSecret": {"name": CREDENTIALS_SECRET, "key": "client-secret"},
                    "clientCertificate": {"name": CREDENTIALS_SECRET, "key": "cert"},
                }
            }),
        );
        let source = Arc::new(credentials(CLIENT_SECRET));
        let error = connect(&fake, &both, source.clone(), WorkloadEnvironment::default())
            .await
            .err()
            .unwrap();
        assert_eq!(
            error.message(),
            "both clientSecret and clientCredentials set"
        );
        let no_tenant = spec(&fake, json!({"authSecretRef": {}}));
        let error = connect(&fake, &no_tenant, source, WorkloadEnvironment::default())
            .await
            .err()
            .unwrap();
        assert_eq!(error.message(), "missing tenantID in store config");
    }

    #[tokio::test]
    async fn managed_identity_asks_imds_with_the_identity_id() {
        let fake = start_fake().await;
        fake.directory.assign_managed_identity("system-assigned");
        fake.directory.assign_managed_identity("user-assigned");
        let source = Arc::new(MemorySecretSource::default());
        for identity in [None, Some("user-assigned")] {
            let mut extra = json!({"authType": "ManagedIdentity"});
            if let Some(identity) = identity {
                extra["identityId"] = json!(identity);
            }
            let spec = spec(&fake, extra);
            let client = connect(&fake, &spec, source.clone(), WorkloadEnvironment::default())
                .await
                .unwrap();
            reads_seeded_secret(&fake, &client).await;
        }
        let imds: Vec<_> = fake
            .server
            .requests()
            .into_iter()
            .filter(|request| request.path == "/metadata/identity/oauth2/token")
            .collect();
        assert_eq!(imds.len(), 2);
        assert_eq!(imds[0].headers["metadata"], "true");
        assert!(!imds[0].query.as_deref().unwrap().contains("client_id"));
        assert!(
            imds[1]
                .query
                .as_deref()
                .unwrap()
                .contains("client_id=user-assigned")
        );

        let unknown = spec(
            &fake,
            json!({"authType": "ManagedIdentity", "identityId": "nobody"}),
        );
        let client = connect(&fake, &unknown, source, WorkloadEnvironment::default())
            .await
            .unwrap();
        let error = client
            .get_secret(&RemoteRef::new("probe"))
            .await
            .unwrap_err();
        assert!(error.message().contains("Identity not found"), "{error}");
    }

    fn federated_token(subject: &str) -> String {
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256"}"#);
        let claims =
            json!({"sub": subject, "aud": ["api://AzureADTokenExchange"], "exp": 4_000_000_000u64});
        format!(
            "{header}.{}.c2ln",
            URL_SAFE_NO_PAD.encode(claims.to_string())
        )
    }

    #[tokio::test]
    async fn workload_identity_from_the_webhooks_token_file() {
        let fake = start_fake().await;
        let subject = "system:serviceaccount:eso:controller";
        fake.directory.register_app(
            TENANT,
            "wi-app",
            AppCredential::Federated {
                subject: subject.to_owned(),
            },
        );
        let file = std::env::temp_dir().join(format!("azure-token-{}", std::process::id()));
        std::fs::write(&file, federated_token(subject)).unwrap();
        let spec = spec(&fake, json!({"authType": "WorkloadIdentity"}));
        let source = Arc::new(MemorySecretSource::default());
        let missing = connect(&fake, &spec, source.clone(), WorkloadEnvironment::default())
            .await
            .err()
            .unwrap();
        assert!(
            missing
                .message()
                .starts_with("missing environment variables")
        );
        let environment = WorkloadEnvironment {
            client_id: Some("wi-app".to_owned()),
            tenant_id: Some(TENANT.to_owned()),
            token_file: Some(file.clone()),
        };
        let client = connect(&fake, &spec, source, environment).await.unwrap();
        reads_seeded_secret(&fake, &client).await;
        std::fs::remove_file(file).unwrap();
    }

    #[tokio::test]
    async fn workload_identity_from_a_service_account_token_request() {
        let fake = start_fake().await;
        let subject = format!("system:serviceaccount:{NAMESPACE}:eso-wi");
        fake.directory
            .register_app(TENANT, "sa-app", AppCredential::Federated { subject });
        let (_loopback, admin) = cluster_with_service_account(
            "eso-wi",
            &[
                ("azure.workload.identity/client-id", "sa-app"),
                ("azure.workload.identity/tenant-id", TENANT),
            ],
        )
        .await;
        let spec = spec(
            &fake,
            json!({"authType": "WorkloadIdentity", "serviceAccountRef": {"name": "eso-wi"}}),
        );
        let client = connect(
            &fake,
            &spec,
            Arc::new(KubeSecretSource::new(admin.clone())),
            WorkloadEnvironment::default(),
        )
        .await
        .unwrap();
        reads_seeded_secret(&fake, &client).await;

        let (_other, admin) = cluster_with_service_account("eso-wi", &[]).await;
        let error = connect(
            &fake,
            &spec,
            Arc::new(KubeSecretSource::new(admin)),
            WorkloadEnvironment::default(),
        )
        .await
        .err()
        .unwrap();
        assert!(error.message().starts_with("missing clientID"), "{error}");
    }

    #[tokio::test]
    async fn challenge_resource_is_checked_outside_tests() {
        let fake = start_fake().await;
        let spec = spec(&fake, client_secret_auth());
        let store = external_secrets_providers::StoreId::secret_store(NAMESPACE, "azurekv");
        let resolver = external_secrets_providers::credentials::CredentialResolver::new(
            Arc::new(credentials(CLIENT_SECRET)),
            store,
            Some(NAMESPACE.to_owned()),
        );
        let mut endpoints =
            crate::support::azurekv::endpoints(&fake, WorkloadEnvironment::default());
        endpoints.verify_challenge_resource = true;
        let client = external_secrets_providers::backends::azurekv::AzureKvClient::connect(
            &spec, resolver, endpoints,
        )
        .await
        .unwrap();
        use external_secrets_providers::SecretsClient as _;
        let error = client
            .get_secret(&RemoteRef::new("probe"))
            .await
            .unwrap_err();
        assert!(
            error
                .message()
                .contains("doesn't match the requested domain"),
            "{error}"
        );
        assert_eq!(fake.directory.issued(), 0);
    }

    #[tokio::test]
    async fn keys_certificates_and_versions() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        fake.put_key(
            "signing",
            json!({"kty": "RSA", "n": "bW9kdWx1cw", "e": "AQAB"}),
            &[],
        );
        let jwk = client
            .get_secret(&RemoteRef::new("key/signing"))
            .await
            .unwrap();
        let jwk: serde_json::Value = serde_json::from_slice(jwk.expose()).unwrap();
        assert_eq!(jwk["kty"], "RSA");
        assert!(jwk["kid"].as_str().unwrap().contains("/keys/signing/"));
        let n = client
            .get_secret(&RemoteRef::new("key/signing").with_property("n"))
            .await
            .unwrap();
        assert_eq!(text(n), "bW9kdWx1cw");

        fake.put_certificate("tls", b"\x30\x03\x02\x01\x05", &[]);
        let der = client
            .get_secret(&RemoteRef::new("cert/tls"))
            .await
            .unwrap();
        assert_eq!(der.expose(), b"\x30\x03\x02\x01\x05");
        let map_error = client
            .get_secret_map(&RemoteRef::new("cert/tls"))
            .await
            .unwrap_err();
        assert_eq!(
            map_error.message(),
            "cannot get use dataFrom to get certificate secret"
        );

        fake.put_secret("rotated", "v1", &[], true);
        let old_id = fake.bundle(Kind::Secret, "rotated").unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        fake.put_secret("rotated", "v2", &[], true);
        let old_version = old_id.rsplit('/').next().unwrap();
        let latest = client
            .get_secret(&RemoteRef::new("secret/rotated"))
            .await
            .unwrap();
        let pinned = client
            .get_secret(&RemoteRef::new("rotated").with_version(old_version))
            .await
            .unwrap();
        assert_eq!(
            (text(latest), text(pinned)),
            ("v2".to_owned(), "v1".to_owned())
        );
        let missing = client
            .get_secret(&RemoteRef::new("rotated").with_version("0123"))
            .await
            .unwrap_err();
        assert!(missing.is_not_found());
        let unknown = client
            .get_secret(&RemoteRef::new("blob/x"))
            .await
            .unwrap_err();
        assert_eq!(
            unknown.message(),
            "unknown Azure Keyvault object Type for x"
        );
    }

    #[tokio::test]
    async fn find_by_tags_pages_and_skips_disabled() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        for index in 0..30 {
            let team = if index % 2 == 0 { "red" } else { "blue" };
            fake.put_secret(
                &format!("s{index:02}"),
                &format!("v{index}"),
                &[("team", team)],
                true,
            );
        }
        fake.put_secret("s-disabled", "hidden", &[("team", "red")], false);
        let find = Find {
            tags: [("team".to_owned(), "red".to_owned())].into(),
            ..Find::default()
        };
        let found = client.get_all_secrets(&find).await.unwrap();
        assert_eq!(found.len(), 15);
        assert_eq!(text(found["s28"].clone()), "v28");
        assert!(!found.contains_key("s-disabled"));
        let pages = fake
            .server
            .requests()
            .into_iter()
            .filter(|r| r.path == "/secrets" && r.headers.contains_key("authorization"))
            .count();
        assert_eq!(pages, 2, "31 secrets are two pages of 25");
        let by_name = Find {
            name: Some(FindName {
                regexp: "^s0[0-4]$".to_owned(),
            }),
            ..Find::default()
        };
        assert_eq!(client.get_all_secrets(&by_name).await.unwrap().len(), 5);
        let disabled = client
            .get_secret(&RemoteRef::new("s-disabled"))
            .await
            .unwrap_err();
        assert_eq!(disabled.kind(), ErrorKind::PermissionDenied);
        assert!(disabled.message().contains("SecretDisabled"), "{disabled}");
    }

    #[tokio::test]
    async fn metadata_policy_fetch_returns_tags() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        fake.put_secret(
            "tagged",
            "v",
            &[("env", "prod"), ("owner", r#"{"team":"red"}"#)],
            true,
        );
        let mut all = RemoteRef::new("tagged");
        all.metadata_policy = MetadataPolicy::Fetch;
        let tags: serde_json::Value =
            serde_json::from_slice(client.get_secret(&all).await.unwrap().expose()).unwrap();
        assert_eq!(tags["env"], "prod");
        assert!(tags["attribute.created"].as_str().unwrap().ends_with('Z'));
        let one = RemoteRef {
            property: Some("owner.team".to_owned()),
            ..all.clone()
        };
        assert_eq!(text(client.get_secret(&one).await.unwrap()), "red");
        let map = client.get_secret_map(&all).await.unwrap();
        assert_eq!(text(map["tagged_env"].clone()), "prod");
        assert_eq!(text(map["tagged_owner_team"].clone()), "red");
        let missing = RemoteRef {
            property: Some("absent".to_owned()),
            ..all
        };
        assert_eq!(
            client.get_secret(&missing).await.unwrap_err().message(),
            "tag absent does not exist"
        );
    }

    fn push(remote_key: &str, value: &str, metadata: Option<serde_json::Value>) -> PushRequest {
        let data = [("value".to_owned(), SecretValue::from(value))].into();
        let mut request = PushRequest::single(data, "value", remote_key);
        request.metadata = metadata;
        request
    }

    #[tokio::test]
    async fn pushes_are_tagged_and_never_touch_unmanaged_secrets() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        let metadata = json!({
            "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
            "kind": "PushSecretMetadata",
            "spec": {"expirationDate": "2040-01-02T03:04:05Z", "contentType": "text/plain", "tags": {"team": "red"}}
        });
        client
            .push_secret(&push("pushed", "one", Some(metadata)))
            .await
            .unwrap();
        let bundle = fake.bundle(Kind::Secret, "pushed").unwrap();
        assert_eq!(bundle["value"], "one");
        assert_eq!(
            bundle["tags"],
            json!({"managed-by": "external-secrets", "team": "red"})
        );
        assert_eq!(bundle["contentType"], "text/plain");
        assert_eq!(bundle["attributes"]["exp"], 2_209_086_245i64);

        fake.put_secret("foreign", "theirs", &[], true);
        let refused = client
            .push_secret(&push("foreign", "mine", None))
            .await
            .unwrap_err();
        assert!(
            refused
                .message()
                .contains("not managed by external-secrets"),
            "{refused}"
        );
        assert_eq!(
            fake.bundle(Kind::Secret, "foreign").unwrap()["value"],
            "theirs"
        );
        let delete = client
            .delete_secret(&PushRemoteRef::new("foreign"))
            .await
            .unwrap_err();
        assert!(delete.message().contains("not managed by external-secrets"));
        assert!(fake.bundle(Kind::Secret, "foreign").is_some());

        let bad_tags = json!({"apiVersion": "kubernetes.external-secrets.io/v1alpha1", "kind": "PushSecretMetadata", "spec": {"tags": {"managed-by": "me"}}});
        let error = client
            .push_secret(&push("pushed", "two", Some(bad_tags)))
            .await
            .unwrap_err();
        assert_eq!(
            error.message(),
            "error parsing tags in metadata: Cannot specify a 'managed-by' tag"
        );
    }

    #[tokio::test]
    async fn deleted_secrets_are_soft_deleted_and_recovered_on_push() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        client
            .push_secret(&push("cycle", "one", None))
            .await
            .unwrap();
        client
            .delete_secret(&PushRemoteRef::new("cycle"))
            .await
            .unwrap();
        assert!(fake.is_deleted(Kind::Secret, "cycle"));
        assert!(
            !client
                .secret_exists(&PushRemoteRef::new("cycle"))
                .await
                .unwrap()
        );
        client
            .push_secret(&push("cycle", "two", None))
            .await
            .unwrap();
        assert!(!fake.is_deleted(Kind::Secret, "cycle"));
        assert_eq!(fake.bundle(Kind::Secret, "cycle").unwrap()["value"], "two");
        assert!(
            client
                .secret_exists(&PushRemoteRef::new("cycle"))
                .await
                .unwrap()
        );
    }

    #[tokio::test]
    async fn pushed_pem_keys_are_imported_as_jwks() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        let key_pem = &CERT_BUNDLE[CERT_BUNDLE.find("-----BEGIN PRIVATE KEY").unwrap()..];
        client
            .push_secret(&push("key/imported", key_pem, None))
            .await
            .unwrap();
        let bundle = fake.bundle(Kind::Key, "imported").unwrap();
        assert_eq!(bundle["key"]["kty"], "RSA");
        assert_eq!(bundle["key"]["e"], "AQAB");
        assert!(bundle["key"].get("d").is_none());
        assert_eq!(bundle["tags"], json!({"managed-by": "external-secrets"}));
        let first_id = bundle["key"]["kid"].clone();
        client
            .push_secret(&push("key/imported", key_pem, None))
            .await
            .unwrap();
        let again = fake.bundle(Kind::Key, "imported").unwrap();
        assert_eq!(
            again["key"]["kid"], first_id,
            "an unchanged key is not imported again"
        );

        fake.put_key(
            "foreign",
            json!({"kty": "RSA", "n": "eA", "e": "AQAB"}),
            &[],
        );
        let refused = client
            .push_secret(&push("key/foreign", key_pem, None))
            .await
            .unwrap_err();
        assert!(
            refused
                .message()
                .contains("not managed by external-secrets")
        );
        client
            .delete_secret(&PushRemoteRef::new("key/imported"))
            .await
            .unwrap();
        assert!(fake.is_deleted(Kind::Key, "imported"));
    }

    #[tokio::test]
    async fn pushed_pem_certificates_are_imported() {
        let fake = start_fake().await;
        let client = secret_client(&fake).await;
        client
            .push_secret(&push("cert/tls", CERT_BUNDLE, None))
            .await
            .unwrap();
        let der = CertificateDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap();
        let read = client
            .get_secret(&RemoteRef::new("cert/tls"))
            .await
            .unwrap();
        assert_eq!(read.expose(), der.as_ref());
        let bundle = fake.bundle(Kind::Certificate, "tls").unwrap();
        assert_eq!(bundle["tags"], json!({"managed-by": "external-secrets"}));
        client
            .push_secret(&push("cert/tls", CERT_BUNDLE, None))
            .await
            .unwrap();
        assert_eq!(
            fake.bundle(Kind::Certificate, "tls").unwrap()["id"],
            bundle["id"]
        );
        let no_key = &CERT_BUNDLE[..CERT_BUNDLE.find("-----BEGIN PRIVATE KEY").unwrap()];
        let refused = client
            .push_secret(&push("cert/other", no_key, None))
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::InvalidRequest, "{refused}");
    }
}
