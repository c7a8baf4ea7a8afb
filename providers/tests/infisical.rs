//! The `infisical` backend against the Infisical contract fake: each auth method (universal,
//! JWT, LDAP, Kubernetes with a token file, token; refused credentials; unsupported methods),
//! what every request carries, folders in keys, imports and reference expansion, recursive find
//! and the path filter, JSON members pushed and deleted, token renewal and revocation.

#![cfg(feature = "infisical")]

mod support;

use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use serde_json::json;
use support::infisical::{
    CLIENT_ID, ENVIRONMENT, UNIVERSAL, fake, folder, spec, spec_on, try_client, universal_auth,
};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

fn push(key: &str, property: Option<&str>, value: &str) -> PushRequest {
    PushRequest {
        remote_ref: PushRemoteRef {
            property: property.map(Into::into),
            ..PushRemoteRef::new(key)
        },
        ..PushRequest::single(
            [("source".to_owned(), SecretValue::from(value))].into(),
            "source",
            key,
        )
    }
}

#[tokio::test]
async fn universal_auth_logs_in_and_every_read_carries_the_scope() {
    let path = folder();
    fake().set_secret(ENVIRONMENT, &path, "db", "hunter2");
    let client = try_client(&spec(&path, universal_auth(), json!({})), UNIVERSAL)
        .await
        .unwrap();
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("db")).await.unwrap()),
        "hunter2"
    );
    let requests = fake().server.requests();
    let read = requests
        .iter()
        .rev()
        .find(|r| {
            r.path == "/api/v3/secrets/raw/db"
                && r.query.as_deref().unwrap_or("").contains(&path[1..])
        })
        .expect("the read reached the fake");
    let query = read.query.as_deref().unwrap();
    for wanted in [
        "workspaceSlug=behaviour",
        "environment=dev",
        "include_imports=true",
        "expandSecretReferences=true",
        "type=shared",
    ] {
        assert!(query.contains(wanted), "{wanted} in {query}");
    }
    let token = contract_fakes::server::bearer(&read.headers).unwrap();
    assert!(token.starts_with("fake-access-token-"));
    assert_eq!(
        contract_fakes::server::header(&read.headers, "user-agent"),
        Some("infisical-go-sdk")
    );
}

#[tokio::test]
async fn refused_credentials_fail_the_client_without_showing_them() {
    let wrong = [("clientId", CLIENT_ID), ("clientSecret", "not-the-secret")];
    let error = try_client(&spec(&folder(), universal_auth(), json!({})), &wrong)
        .await
        .err()
        .expect("refused");
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(error.message().contains("Invalid credentials"), "{error}");
    assert!(!error.message().contains("not-the-secret"), "{error}");
    let missing = try_client(
        &spec(&folder(), universal_auth(), json!({})),
        &[("clientId", CLIENT_ID)],
    )
    .await
    .err()
    .expect("missing key");
    assert!(
        missing
            .message()
            .starts_with("failed to get secret data clientSecret"),
        "{missing}"
    );
}

#[tokio::test]
async fn jwt_ldap_and_token_auth_log_in_with_their_credentials() {
    fake().accept_login(
        "jwt-auth",
        json!({"identityId": "id-jwt", "jwt": "signed.jwt.token"}),
    );
    fake().accept_login(
        "ldap-auth",
        json!({"identityId": "id-ldap", "username": "alice", "password": "ldap-pass"}),
    );
    fake().accept_token("pre-issued-token");
    let path = folder();
    fake().set_secret(ENVIRONMENT, &path, "k", "v");
    let credentials = [
        ("identityId", "id-jwt"),
        ("jwt", "signed.jwt.token"),
        ("ldapIdentity", "id-ldap"),
        ("username", "alice"),
        ("password", "ldap-pass"),
        ("token", "pre-issued-token"),
    ];
    let selector = |key: &str| json!({"name": support::infisical::CREDENTIALS, "key": key});
    let methods = [
        json!({"jwtAuthCredentials": {"identityId": selector("identityId"), "jwt": selector("jwt")}}),
        json!({"ldapAuthCredentials": {
            "identityId": selector("ldapIdentity"),
            "ldapUsername": selector("username"),
            "ldapPassword": selector("password"),
        }}),
        json!({"tokenAuthCredentials": {"accessToken": selector("token")}}),
    ];
    for auth in methods {
        let client = try_client(&spec(&path, auth.clone(), json!({})), &credentials)
            .await
            .unwrap_or_else(|error| panic!("{auth}: {error}"));
        assert_eq!(
            text(client.get_secret(&RemoteRef::new("k")).await.unwrap()),
            "v"
        );
    }
    // A wrong JWT is refused.
    let wrong = [("identityId", "id-jwt"), ("jwt", "other.jwt")];
    let auth = json!({"jwtAuthCredentials": {"identityId": selector("identityId"), "jwt": selector("jwt")}});
    let error = try_client(&spec(&path, auth, json!({})), &wrong)
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
}

#[tokio::test]
async fn kubernetes_auth_sends_the_token_file_named_by_the_secret() {
    let token_file =
        std::env::temp_dir().join(format!("{}.jwt", support::unique_name("infisical-sa")));
    std::fs::write(&token_file, "projected.sa.token\n").unwrap();
    fake().accept_login(
        "kubernetes-auth",
        json!({"identityId": "id-k8s", "jwt": "projected.sa.token"}),
    );
    let path = folder();
    fake().set_secret(ENVIRONMENT, &path, "k", "from-k8s");
    let selector = |key: &str| json!({"name": support::infisical::CREDENTIALS, "key": key});
    let auth = json!({"kubernetesAuthCredentials": {
        "identityId": selector("identityId"),
        "serviceAccountTokenPath": selector("path"),
    }});
    let file = token_file.to_string_lossy().into_owned();
    let credentials = [("identityId", "id-k8s"), ("path", file.as_str())];
    let client = try_client(&spec(&path, auth.clone(), json!({})), &credentials)
        .await
        .unwrap();
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("k")).await.unwrap()),
        "from-k8s"
    );
    let missing = [("identityId", "id-k8s"), ("path", "/nonexistent/token")];
    let error = try_client(&spec(&path, auth, json!({})), &missing)
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
}

#[tokio::test]
async fn unsupported_auth_methods_and_no_method_are_refused() {
    let selector = json!({"name": "x", "key": "y"});
    let azure = json!({"azureAuthCredentials": {"identityId": selector}});
    let error = try_client(&spec(&folder(), azure, json!({})), &[])
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert!(error.message().contains("azureAuthCredentials"), "{error}");
    let none = try_client(&spec(&folder(), json!({}), json!({})), &[])
        .await
        .err()
        .unwrap();
    assert_eq!(none.message(), "authentication method not found");
}

#[tokio::test]
async fn keys_name_folders_and_imports_and_references_are_read() {
    let path = folder();
    let shared = folder();
    fake().set_secret(ENVIRONMENT, &path, "host", "db.internal");
    fake().set_secret(ENVIRONMENT, &path, "url", "postgres://${host}/app");
    fake().set_secret(ENVIRONMENT, &format!("{path}/nested"), "deep", "below");
    fake().set_secret(ENVIRONMENT, &shared, "imported", "from-import");
    fake().add_import(ENVIRONMENT, &path, &shared);
    let client = try_client(&spec(&path, universal_auth(), json!({})), UNIVERSAL)
        .await
        .unwrap();
    let get = |key: &str| {
        let client = client.clone();
        let key = key.to_owned();
        async move { client.get_secret(&RemoteRef::new(key)).await }
    };
    assert_eq!(
        text(get("url").await.unwrap()),
        "postgres://db.internal/app"
    );
    assert_eq!(text(get("nested/deep").await.unwrap()), "below");
    assert_eq!(
        text(get(&format!("{path}/nested/deep")).await.unwrap()),
        "below"
    );
    assert_eq!(text(get("imported").await.unwrap()), "from-import");
    assert_eq!(get("absent").await.unwrap_err().kind(), ErrorKind::NotFound);
    let raw = try_client(
        &spec(
            &path,
            universal_auth(),
            json!({"expandSecretReferences": false}),
        ),
        UNIVERSAL,
    )
    .await
    .unwrap();
    assert_eq!(
        text(raw.get_secret(&RemoteRef::new("url")).await.unwrap()),
        "postgres://${host}/app"
    );
    let property = client
        .get_secret(&RemoteRef::new("host").with_property("x"))
        .await
        .unwrap_err();
    assert_eq!(
        property.message(),
        "property x does not exist in secret host"
    );
}

#[tokio::test]
async fn find_lists_recursively_filters_by_path_and_refuses_tags() {
    let path = folder();
    fake().set_secret(ENVIRONMENT, &path, "top", "1");
    fake().set_secret(ENVIRONMENT, &format!("{path}/app"), "inner", "2");
    let flat = try_client(&spec(&path, universal_auth(), json!({})), UNIVERSAL)
        .await
        .unwrap();
    let all = flat.get_all_secrets(&Find::default()).await.unwrap();
    assert_eq!(texts(all), vec![("top".into(), "1".into())]);
    let deep = try_client(
        &spec(&path, universal_auth(), json!({"recursive": true})),
        UNIVERSAL,
    )
    .await
    .unwrap();
    let all = deep.get_all_secrets(&Find::default()).await.unwrap();
    assert_eq!(
        texts(all),
        vec![("inner".into(), "2".into()), ("top".into(), "1".into())]
    );
    let under_app = Find {
        path: Some(format!("{path}/app")),
        ..Find::default()
    };
    let found = deep.get_all_secrets(&under_app).await.unwrap();
    assert_eq!(texts(found), vec![("inner".into(), "2".into())]);
    let tags = Find {
        tags: [("team".to_owned(), "a".to_owned())].into(),
        ..Find::default()
    };
    let error = deep.get_all_secrets(&tags).await.unwrap_err();
    assert_eq!(error.message(), "find by tags not supported");
}

#[tokio::test]
async fn pushes_set_and_delete_json_members_and_skip_unchanged_values() {
    let path = folder();
    let client = try_client(&spec(&path, universal_auth(), json!({})), UNIVERSAL)
        .await
        .unwrap();
    client
        .push_secret(&push("config", Some("user"), "admin"))
        .await
        .unwrap();
    client
        .push_secret(&push("config", Some("pass"), "s3cret"))
        .await
        .unwrap();
    assert_eq!(
        fake().secret(ENVIRONMENT, &path, "config").as_deref(),
        Some(r#"{"pass":"s3cret","user":"admin"}"#)
    );
    let user = PushRemoteRef {
        property: Some("user".into()),
        ..PushRemoteRef::new("config")
    };
    assert!(client.secret_exists(&user).await.unwrap());
    client.delete_secret(&user).await.unwrap();
    assert!(!client.secret_exists(&user).await.unwrap());
    assert_eq!(
        fake().secret(ENVIRONMENT, &path, "config").as_deref(),
        Some(r#"{"pass":"s3cret"}"#)
    );
    let pass = PushRemoteRef {
        property: Some("pass".into()),
        ..PushRemoteRef::new("config")
    };
    client.delete_secret(&pass).await.unwrap();
    assert_eq!(
        fake().secret(ENVIRONMENT, &path, "config"),
        None,
        "no member left: deleted"
    );
    // A whole value into a sub-folder; an unchanged push writes nothing.
    client
        .push_secret(&push("plain", None, "text"))
        .await
        .unwrap();
    let writes_before = fake()
        .server
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH")
        .count();
    client
        .push_secret(&push("plain", None, "text"))
        .await
        .unwrap();
    let writes_after = fake()
        .server
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH")
        .count();
    assert_eq!(
        fake().secret(ENVIRONMENT, &path, "plain").as_deref(),
        Some("text")
    );
    assert_eq!(writes_before, writes_after);
    let member = client
        .push_secret(&push("plain", Some("a"), "b"))
        .await
        .unwrap_err();
    assert!(member.message().contains("not a JSON object"), "{member}");
    let empty = client.push_secret(&push("", None, "x")).await.unwrap_err();
    assert_eq!(
        empty.message(),
        "remoteKey is required to push a secret to Infisical"
    );
}

#[tokio::test]
async fn expiring_tokens_are_renewed_and_closed_clients_revoke_theirs() {
    // A fake of its own: its login count and token lifetime are this test's alone.
    let own = support::infisical::start().await;
    own.set_secret(ENVIRONMENT, "/", "k", "v");
    own.set_expires_in(30);
    let spec = spec_on(&own, "/", universal_auth(), json!({}));
    let client = try_client(&spec, UNIVERSAL).await.unwrap();
    own.set_expires_in(7200);
    assert_eq!(own.logins(), 1);
    client.get_secret(&RemoteRef::new("k")).await.unwrap();
    assert_eq!(
        own.logins(),
        2,
        "a token within the renewal margin is renewed"
    );
    client.get_secret(&RemoteRef::new("k")).await.unwrap();
    assert_eq!(own.logins(), 2, "a fresh token is reused");
    client.close().await.unwrap();
    assert_eq!(own.revoked(), vec!["fake-access-token-2".to_owned()]);
}
