//! Generators end to end: the controller binary, run as a local process against the cluster,
//! fills ExternalSecrets from `dataFrom[].sourceRef.generatorRef` with an `SSHKey` (a key pair
//! made in the controller), a `VaultDynamicSecret` (a token created by an OpenBao dev server
//! on 127.0.0.1, started by the test, with token auth from a Secret in the ExternalSecret's
//! namespace and the server's CA inline), a `Webhook` (an HTTP server of the test on
//! 127.0.0.1, its bearer token from a labelled Secret) and an `MFA` code (pinned in time, so
//! the code is RFC 6238's test vector).
//!
//! Cluster-agnostic: only the controller talks to OpenBao and the HTTP server, and it runs on
//! this machine.

#[path = "../../providers/tests/support/bao_process.rs"]
mod bao_process;
mod support;

use bao_process::{BaoProcess, ROOT_TOKEN};
use base64::Engine as _;
use e2e::harness::string_data;
use external_secrets_crds::v1::ExternalSecret;
use k8s_openapi::api::core::v1::Secret;
use kube::api::PostParams;
use serde_json::{Value, json};
use support::{Setup, external_secret, wait_reason};

/// A `dataFrom` entry naming the generator `kind`/`name`.
fn generated_by(kind: &str, name: &str) -> Value {
    json!({"sourceRef": {"generatorRef": {
        "apiVersion": "generators.external-secrets.io/v1alpha1", "kind": kind, "name": name}}})
}

#[tokio::test]
async fn ssh_keys_fill_data_from() -> anyhow::Result<()> {
    let setup = Setup::start("gen-sshkey", &[]).await?;
    setup
        .create_generator(
            "SSHKey",
            "sshkeys",
            "deploy-key",
            json!({"keyType": "ed25519", "comment": "deploy@e2e"}),
        )
        .await?;
    let es = external_secret(
        "deploy-key",
        "store",
        json!({"data": [], "dataFrom": [generated_by("SSHKey", "deploy-key")]}),
    )?;
    let es_api = setup.api::<ExternalSecret>();
    es_api.create(&PostParams::default(), &es).await?;
    wait_reason(&es_api, "deploy-key", "SecretSynced", &setup.controller).await?;
    let data = string_data(&setup.api::<Secret>().get("deploy-key").await?);
    assert_eq!(
        data.keys().map(String::as_str).collect::<Vec<_>>(),
        ["privateKey", "publicKey"]
    );
    assert!(
        data["privateKey"].starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n"),
        "an OpenSSH private key"
    );
    let public = &data["publicKey"];
    assert!(
        public.starts_with("ssh-ed25519 AAAA") && public.ends_with(" deploy@e2e\n"),
        "{public}"
    );
    setup.finish().await
}

#[tokio::test]
async fn mfa_codes_fill_data_from() -> anyhow::Result<()> {
    let setup = Setup::start("gen-mfa", &[]).await?;
    // RFC 6238 appendix B: the seed "12345678901234567890" in base32.
    let seed: Secret = serde_json::from_value(json!({
        "metadata": {"name": "totp-seed"},
        "stringData": {"seed": "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"},
    }))?;
    setup
        .api::<Secret>()
        .create(&PostParams::default(), &seed)
        .await?;
    setup
        .create_generator(
            "MFA",
            "mfas",
            "login-code",
            json!({"secret": {"name": "totp-seed", "key": "seed"}, "length": 8,
                   "when": "2005-03-18T01:58:29Z"}),
        )
        .await?;
    let es = external_secret(
        "login-code",
        "store",
        json!({"data": [], "dataFrom": [generated_by("MFA", "login-code")]}),
    )?;
    let es_api = setup.api::<ExternalSecret>();
    es_api.create(&PostParams::default(), &es).await?;
    wait_reason(&es_api, "login-code", "SecretSynced", &setup.controller).await?;
    let data = string_data(&setup.api::<Secret>().get("login-code").await?);
    assert_eq!(data["token"], "07081804");
    assert_eq!(data["timeLeft"], "1");
    setup.finish().await
}

#[tokio::test]
async fn vault_dynamic_secrets_fill_data_from() -> anyhow::Result<()> {
    let bao = BaoProcess::start();
    let setup = Setup::start("gen-vault", &[]).await?;
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "vault-token"},
        "stringData": {"token": ROOT_TOKEN},
    }))?;
    setup
        .api::<Secret>()
        .create(&PostParams::default(), &token)
        .await?;
    let ca = base64::engine::general_purpose::STANDARD.encode(&bao.ca_pem);
    setup
        .create_generator(
            "VaultDynamicSecret",
            "vaultdynamicsecrets",
            "app-token",
            json!({
                "path": "auth/token/create",
                "method": "POST",
                "parameters": {"policies": ["default"], "ttl": "10m", "display_name": "e2e"},
                "resultType": "Auth",
                "provider": {
                    "server": bao.url,
                    "caBundle": ca,
                    "auth": {"tokenSecretRef": {"name": "vault-token", "key": "token"}},
                },
            }),
        )
        .await?;
    let es = external_secret(
        "app-token",
        "store",
        json!({"data": [], "dataFrom": [generated_by("VaultDynamicSecret", "app-token")]}),
    )?;
    let es_api = setup.api::<ExternalSecret>();
    es_api.create(&PostParams::default(), &es).await?;
    wait_reason(&es_api, "app-token", "SecretSynced", &setup.controller).await?;
    let data = string_data(&setup.api::<Secret>().get("app-token").await?);
    assert_eq!(data["policies"], r#"["default"]"#);
    let created = &data["client_token"];
    let lookup = bao
        .cli()
        .args(["token", "lookup", "-format=json", created.as_str()])
        .output()?;
    assert!(
        lookup.status.success(),
        "the generated token is live: {}",
        String::from_utf8_lossy(&lookup.stderr)
    );
    let answer: Value = serde_json::from_slice(&lookup.stdout)?;
    assert_eq!(answer["data"]["display_name"], "token-e2e");
    setup.finish().await
}

/// Serves `POST /issue` on 127.0.0.1, answering `{"issued": {...}}` to `Bearer <token>`
/// requests; returns the base URL.
async fn issuing_server(token: &'static str) -> anyhow::Result<String> {
    let issue = move |headers: axum::http::HeaderMap| async move {
        let bearer = headers
            .get("authorization")
            .and_then(|value| value.to_str().ok());
        if bearer == Some(&format!("Bearer {token}")) {
            (
                axum::http::StatusCode::OK,
                r#"{"issued": {"username": "svc", "password": "from-webhook"}}"#,
            )
        } else {
            (axum::http::StatusCode::UNAUTHORIZED, "{}")
        }
    };
    let app = axum::Router::new().route("/issue", axum::routing::post(issue));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(format!("http://{address}"))
}

#[tokio::test]
async fn webhooks_fill_data_from() -> anyhow::Result<()> {
    let base = issuing_server("e2e-token").await?;
    let setup = Setup::start("gen-webhook", &[]).await?;
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "issuer-token",
            "labels": {"external-secrets.io/type": "webhook"}},
        "stringData": {"token": "e2e-token"},
    }))?;
    setup
        .api::<Secret>()
        .create(&PostParams::default(), &token)
        .await?;
    setup
        .create_generator(
            "Webhook",
            "webhooks",
            "issuer",
            json!({
                "url": format!("{base}/issue"),
                "method": "POST",
                "headers": {"Authorization": "Bearer {{ .auth.token }}"},
                "result": {"jsonPath": "$.issued"},
                "secrets": [{"name": "auth", "secretRef": {"name": "issuer-token"}}],
            }),
        )
        .await?;
    let es = external_secret(
        "issued",
        "store",
        json!({"data": [], "dataFrom": [generated_by("Webhook", "issuer")]}),
    )?;
    let es_api = setup.api::<ExternalSecret>();
    es_api.create(&PostParams::default(), &es).await?;
    wait_reason(&es_api, "issued", "SecretSynced", &setup.controller).await?;
    let data = string_data(&setup.api::<Secret>().get("issued").await?);
    assert_eq!(data["username"], "svc");
    assert_eq!(data["password"], "from-webhook");
    setup.finish().await
}
