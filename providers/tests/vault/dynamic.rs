//! The `VaultDynamicSecret` generator's calls against the shared OpenBao server: PKI
//! certificates issued by a write, a token from `auth/token/create` (`resultType: Auth`), a
//! KV v2 version read with `getParameters` (and `Raw`), empty answers, and a token without the
//! policy refused.

use std::sync::Arc;

use external_secrets_crds::generators::{VaultDynamicSecretResultType, VaultDynamicSecretSpec};
use external_secrets_crds::v1::SecretStoreRetrySettings;
use external_secrets_providers::backends::vault::generate_dynamic_secret;
use external_secrets_providers::credentials::{CredentialResolver, MemorySecretSource};
use external_secrets_providers::{ErrorKind, SecretMap, StoreId};
use reqwest::Method;
use serde_json::json;

use super::support::vault::{BaoServer, ROOT_TOKEN, token_auth, token_source};
use super::support::{NAMESPACE, unique_name};

/// A spec calling `path` with `method` on the shared server, with token auth.
fn spec(server: &BaoServer, method: &str, path: &str) -> VaultDynamicSecretSpec {
    VaultDynamicSecretSpec {
        method: Some(method.to_owned()),
        path: path.to_owned(),
        provider: server.provider("unused", Some(token_auth())),
        retry_settings: Some(SecretStoreRetrySettings {
            max_retries: Some(0),
            retry_interval: None,
        }),
        ..VaultDynamicSecretSpec::default()
    }
}

/// Generates with `spec`, authenticating with `token` read from a Secret in [`NAMESPACE`].
async fn generate(
    spec: &VaultDynamicSecretSpec,
    token: &str,
) -> external_secrets_providers::Result<SecretMap> {
    let source: Arc<MemorySecretSource> = Arc::new(token_source(token));
    let credentials = CredentialResolver::new(
        source,
        StoreId::secret_store(NAMESPACE, "generator"),
        Some(NAMESPACE.to_owned()),
    );
    generate_dynamic_secret(spec, credentials).await
}

fn text(map: &SecretMap, key: &str) -> String {
    String::from_utf8(map[key].expose().to_vec()).unwrap()
}

#[tokio::test]
async fn a_pki_write_issues_a_certificate() {
    let server = BaoServer::shared();
    let mount = unique_name("pki");
    server
        .write(&format!("sys/mounts/{mount}"), json!({"type": "pki"}))
        .await;
    server
        .write(
            &format!("{mount}/root/generate/internal"),
            json!({"common_name": "example.com", "ttl": "1h"}),
        )
        .await;
    server
        .write(
            &format!("{mount}/roles/web"),
            json!({"allowed_domains": ["example.com"], "allow_subdomains": true, "max_ttl": "1h"}),
        )
        .await;
    let mut spec = spec(server, "POST", &format!("{mount}/issue/web"));
    spec.parameters = Some(json!({"common_name": "app.example.com", "ttl": "10m"}));
    let issued = generate(&spec, ROOT_TOKEN).await.unwrap();
    assert!(text(&issued, "certificate").starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(text(&issued, "private_key").contains("PRIVATE KEY-----"));
    assert!(text(&issued, "issuing_ca").starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(!text(&issued, "serial_number").is_empty());
    // Non-string members are JSON.
    assert!(text(&issued, "ca_chain").starts_with("[\""));
}

#[tokio::test]
async fn auth_results_return_the_created_token() {
    let server = BaoServer::shared();
    let mut spec = spec(server, "POST", "auth/token/create");
    spec.result_type = VaultDynamicSecretResultType::Auth;
    spec.parameters = Some(json!({"policies": ["default"], "ttl": "10m"}));
    let auth = generate(&spec, ROOT_TOKEN).await.unwrap();
    let token = text(&auth, "client_token");
    assert_eq!(text(&auth, "policies"), r#"["default"]"#);
    let (status, looked_up) = server
        .call(
            Method::POST,
            "auth/token/lookup",
            Some(json!({"token": token})),
            None,
        )
        .await;
    assert!(status.is_success(), "{status} {looked_up}");
    assert_eq!(
        looked_up["data"]["ttl"].as_u64().map(|ttl| ttl <= 600),
        Some(true)
    );
}

#[tokio::test]
async fn get_parameters_are_the_query_and_raw_returns_the_whole_answer() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[("app", "first")]).await;
    server
        .write(
            &format!("{mount}/data/app"),
            json!({"data": {"value": "second"}}),
        )
        .await;
    let mut spec = spec(server, "GET", &format!("{mount}/data/app"));
    spec.get_parameters = [("version".to_owned(), vec!["1".to_owned()])].into();
    let data = generate(&spec, ROOT_TOKEN).await.unwrap();
    assert_eq!(text(&data, "data"), r#"{"value":"first"}"#);
    spec.method = None;
    spec.get_parameters.clear();
    spec.result_type = VaultDynamicSecretResultType::Raw;
    let raw = generate(&spec, ROOT_TOKEN).await.unwrap();
    assert!(text(&raw, "data").contains(r#""value":"second""#));
    assert!(raw.contains_key("request_id") && raw.contains_key("lease_duration"));
}

#[tokio::test]
async fn empty_answers_fail_unless_allowed() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[("gone", "x")]).await;
    let mut spec = spec(server, "DELETE", &format!("{mount}/metadata/gone"));
    let error = generate(&spec, ROOT_TOKEN).await.unwrap_err();
    assert!(
        error.to_string().contains("empty response from Vault"),
        "{error}"
    );
    spec.allow_empty_response = true;
    assert!(generate(&spec, ROOT_TOKEN).await.unwrap().is_empty());
    spec.method = Some("GET".to_owned());
    spec.path = format!("{mount}/data/never");
    assert!(generate(&spec, ROOT_TOKEN).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_token_without_the_policy_is_denied_without_leaking_it() {
    let server = BaoServer::shared();
    let token = server.token(&["default"]).await;
    let spec = spec(server, "POST", "auth/token/create");
    let error = generate(&spec, &token).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.to_string().contains(&token), "{error}");
}
