//! The `STSSessionToken` and `ECRAuthorizationToken` generators against moto: static keys from
//! a Secret with a role assumed, the keys each returns, and what they refuse.

use std::time::{SystemTime, UNIX_EPOCH};

use external_secrets_crds::generators::{EcrAuthorizationTokenSpec, StsSessionTokenSpec};
use external_secrets_providers::backends::aws::{
    generate_ecr_authorization_token, generate_sts_session_token,
};
use external_secrets_providers::credentials::{CredentialResolver, MemorySecretSource};
use external_secrets_providers::{ErrorKind, SecretMap, StoreId};
use serde_json::{Value, json};
use std::sync::Arc;

use super::support::NAMESPACE;
use super::support::aws::{KEYS_SECRET, MotoServer, REGION, keys};

/// `auth` reading the static keys of [`keys`], plus the fields of `extra`.
fn spec<T: serde::de::DeserializeOwned>(extra: Value) -> T {
    let mut spec = json!({
        "region": REGION,
        "auth": {"secretRef": {
            "accessKeyIDSecretRef": {"name": KEYS_SECRET, "key": "access-key"},
            "secretAccessKeySecretRef": {"name": KEYS_SECRET, "key": "secret-key"},
        }},
    });
    for (field, value) in extra.as_object().unwrap() {
        spec[field] = value.clone();
    }
    serde_json::from_value(spec).unwrap()
}

/// Resolves references in [`NAMESPACE`] from `source`.
fn resolver(source: MemorySecretSource) -> CredentialResolver {
    CredentialResolver::new(
        Arc::new(source),
        StoreId::secret_store(NAMESPACE, "generator"),
        Some(NAMESPACE.to_owned()),
    )
}

fn text(map: &SecretMap, key: &str) -> String {
    String::from_utf8(map[key].expose().to_vec()).unwrap()
}

fn now() -> i64 {
    let elapsed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(elapsed.as_secs()).unwrap()
}

#[tokio::test]
async fn sts_session_tokens_come_from_the_assumed_role() {
    let server = MotoServer::shared();
    let account = server.account().await;
    let spec: StsSessionTokenSpec = spec(json!({
        "role": account.role_arn,
        "requestParameters": {"sessionDuration": 900},
    }));
    let token = generate_sts_session_token(&spec, resolver(keys()), &server.endpoints())
        .await
        .unwrap();
    assert_eq!(
        token.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "access_key_id",
            "expiration",
            "secret_access_key",
            "session_token"
        ]
    );
    assert!(!text(&token, "access_key_id").is_empty());
    assert!(!text(&token, "session_token").is_empty());
    let expiration: i64 = text(&token, "expiration").parse().unwrap();
    assert!(
        (now() + 800..=now() + 1000).contains(&expiration),
        "{expiration}"
    );
    assert!(
        server
            .assumed_roles()
            .iter()
            .any(|role| role["role_arn"] == account.role_arn.as_str()),
        "the role was assumed first"
    );
}

#[tokio::test]
async fn sts_refuses_jwt_auth_and_names_missing_keys() {
    let server = MotoServer::shared();
    let jwt: StsSessionTokenSpec = spec(json!({
        "auth": {"jwt": {"serviceAccountRef": {"name": "app"}}},
    }));
    let error = generate_sts_session_token(&jwt, resolver(keys()), &server.endpoints())
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "auth.jwt: jwt auth cannot be used for STS Session Token generation"
    );
    let spec: StsSessionTokenSpec = spec(json!({}));
    let empty = MemorySecretSource::default();
    let error = generate_sts_session_token(&spec, resolver(empty), &server.endpoints())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.message().contains(KEYS_SECRET), "{error}");
}

#[tokio::test]
async fn ecr_tokens_are_decoded_into_user_and_password() {
    let server = MotoServer::shared();
    let account = server.account().await;
    let spec: EcrAuthorizationTokenSpec = spec(json!({"role": account.role_arn}));
    let token = generate_ecr_authorization_token(&spec, resolver(keys()), &server.endpoints())
        .await
        .unwrap();
    assert_eq!(
        token.keys().map(String::as_str).collect::<Vec<_>>(),
        ["expires_at", "password", "proxy_endpoint", "username"]
    );
    assert_eq!(text(&token, "username"), "AWS");
    // moto's token names the account it was issued in: the assumed role's.
    assert_eq!(
        text(&token, "password"),
        format!("{}-auth-token", account.id)
    );
    assert_eq!(
        text(&token, "proxy_endpoint"),
        format!("https://{}.dkr.ecr.{REGION}.amazonaws.com", account.id)
    );
    // moto answers a fixed expiry, 2015-01-01T00:00:00Z.
    assert_eq!(text(&token, "expires_at"), "1420070400");
}

#[tokio::test]
async fn ecr_public_scope_is_refused_naming_the_field() {
    let server = MotoServer::shared();
    let spec: EcrAuthorizationTokenSpec = spec(json!({"scope": "public"}));
    let error = generate_ecr_authorization_token(&spec, resolver(keys()), &server.endpoints())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert_eq!(
        error.message(),
        "scope: public (ECR Public) is not supported by this build"
    );
}
