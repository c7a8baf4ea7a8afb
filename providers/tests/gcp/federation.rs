//! Workload identity federation against the Security Token Service contract fake, one test per
//! subject token source (a file, a URL, a Kubernetes ServiceAccount through the loopback API
//! server's TokenRequest, signed AWS credentials), with impersonation through IAM Credentials,
//! and the configurations upstream refuses.

use std::sync::Arc;

use contract_fakes::google_sts::{StsEndpoints, Subject};
use external_secrets_providers::backends::gcpsm::{Endpoints, GcpsmClient};
use external_secrets_providers::credentials::{KubeSecretSource, MemorySecretSource, SecretSource};
use external_secrets_providers::request::RemoteRef;
use external_secrets_providers::{ErrorKind, ProviderError, SecretsClient};
use serde_json::{Value, json};

use super::support::NAMESPACE;
use super::support::gcp::{Project, cloudbox};

const AUDIENCE: &str =
    "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/eso/providers/test";
const GOOGLE_ACCOUNT: &str = "federated@eso-test.iam.gserviceaccount.com";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

fn endpoints(fake_url: &str) -> Endpoints {
    super::support::gcp::endpoints(&cloudbox().url, fake_url)
}

/// An external account configuration with `source` as `credential_source`, `extra` merged in.
fn cred_config(source: Value, extra: Value) -> String {
    let mut config = json!({
        "type": "external_account",
        "audience": AUDIENCE,
        "subject_token_type": ID_TOKEN,
        "token_url": "https://sts.googleapis.com/v1/token",
        "credential_source": source,
    });
    if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(extra.clone());
    }
    config.to_string()
}

/// A source holding `config` in ConfigMap `wif` (key `config.json`).
fn with_config(config: &str) -> MemorySecretSource {
    MemorySecretSource::default().with_config_map(NAMESPACE, "wif", &[("config.json", config)])
}

async fn client(
    project: &Project,
    federation: Value,
    source: Arc<dyn SecretSource>,
    endpoints: Endpoints,
) -> Result<GcpsmClient, ProviderError> {
    let spec = serde_json::from_value(json!({
        "projectID": project.id,
        "auth": {"workloadIdentityFederation": federation},
    }))
    .unwrap();
    project.client_with(&spec, source, endpoints).await
}

fn by_config() -> Value {
    json!({"credConfig": {"name": "wif", "key": "config.json"}})
}

async fn reads(client: &GcpsmClient) -> String {
    let value = client.get_secret(&RemoteRef::new("wif")).await.unwrap();
    String::from_utf8(value.into_bytes()).unwrap()
}

#[tokio::test]
async fn a_file_subject_token_is_exchanged() {
    let project = Project::fresh();
    project.seed("wif", b"federated", &[]);
    let fixed = Subject::Fixed {
        token_type: ID_TOKEN.into(),
        token: "file-token".into(),
    };
    let fake = StsEndpoints::start(AUDIENCE, fixed, GOOGLE_ACCOUNT)
        .await
        .unwrap();
    let path = std::env::temp_dir().join(format!("{}.token", project.id));
    std::fs::write(&path, "  file-token\n").unwrap();
    let config = cred_config(json!({"file": path}), json!({}));
    let source = Arc::new(with_config(&config));
    let client = client(&project, by_config(), source, endpoints(&fake.server.url))
        .await
        .unwrap();
    assert_eq!(reads(&client).await, "federated");
    assert_eq!(
        fake.counts(),
        (1, 0),
        "the federated token is used as it is"
    );
    let sent = fake.server.requests();
    assert_eq!(sent[0].path, "/v1/token");

    // Another token in the file: the provider refuses it, and so is the client.
    std::fs::write(&path, "other-token").unwrap();
    let source = Arc::new(with_config(&config));
    let error = client_of_error(&project, by_config(), source, &fake).await;
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error
            .message()
            .contains("unable to exchange the subject token: status 400"),
        "{error}"
    );
    std::fs::remove_file(&path).unwrap();
}

async fn client_of_error(
    project: &Project,
    federation: Value,
    source: Arc<dyn SecretSource>,
    fake: &StsEndpoints,
) -> ProviderError {
    client(project, federation, source, endpoints(&fake.server.url))
        .await
        .err()
        .expect("refused")
}

#[tokio::test]
async fn a_url_subject_token_is_exchanged_and_impersonates() {
    use axum::http::HeaderMap;
    let issuer = contract_fakes::server::FakeServer::http(axum::Router::new().route(
        "/token",
        axum::routing::get(|headers: HeaderMap| async move {
            let flavored = headers.get("metadata").is_some_and(|value| value == "True");
            axum::Json(json!({"access_token": if flavored { "url-token" } else { "no-header" }}))
        }),
    ))
    .await
    .unwrap();
    let url = format!("{}/token", issuer.url);
    let project = Project::fresh();
    project.seed("wif", b"impersonated", &[]);
    let fixed = Subject::Fixed {
        token_type: ID_TOKEN.into(),
        token: "url-token".into(),
    };
    let fake = StsEndpoints::start(AUDIENCE, fixed, GOOGLE_ACCOUNT)
        .await
        .unwrap();
    let impersonation = format!(
        "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/{GOOGLE_ACCOUNT}:generateAccessToken"
    );
    let config = cred_config(
        json!({"url": url, "headers": {"Metadata": "True"},
            "format": {"type": "json", "subject_token_field_name": "access_token"}}),
        json!({"service_account_impersonation_url": impersonation}),
    );
    let mut federation = by_config();
    federation["externalTokenEndpoint"] = json!(url);
    let client = client(
        &project,
        federation,
        Arc::new(with_config(&config)),
        endpoints(&fake.server.url),
    )
    .await
    .unwrap();
    assert_eq!(reads(&client).await, "impersonated");
    assert_eq!(fake.counts(), (1, 1), "exchanged, then impersonated");
    let sent = fake.server.requests();
    assert_eq!(
        sent[1].path,
        format!("/v1/projects/-/serviceAccounts/{GOOGLE_ACCOUNT}:generateAccessToken")
    );

    // Upstream's guard: the URL must be the configured externalTokenEndpoint.
    let error = client_of_error(&project, by_config(), Arc::new(with_config(&config)), &fake).await;
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(
        error
            .message()
            .contains(&format!("credential_source.url {url:?} does not match")),
        "{error}"
    );
}

#[tokio::test]
async fn a_service_account_token_is_exchanged() {
    let annotation = ("iam.gke.io/gcp-service-account", GOOGLE_ACCOUNT);
    let (loopback, admin) =
        super::support::cluster_with_service_account("federated", &[annotation]).await;
    let project = Project::fresh();
    project.seed("wif", b"from kubernetes", &[]);
    let jwt = Subject::Jwt {
        audience: AUDIENCE.into(),
    };
    let fake = StsEndpoints::start(AUDIENCE, jwt, GOOGLE_ACCOUNT)
        .await
        .unwrap();
    let federation = json!({
        "serviceAccountRef": {"name": "federated", "audiences": [AUDIENCE]},
        "audience": AUDIENCE,
    });
    let source: Arc<dyn SecretSource> = Arc::new(KubeSecretSource::new(admin));
    let client = client(
        &project,
        federation,
        source.clone(),
        endpoints(&fake.server.url),
    )
    .await
    .unwrap();
    assert_eq!(reads(&client).await, "from kubernetes");
    assert_eq!(
        fake.counts(),
        (1, 1),
        "the annotation's account is impersonated"
    );

    // Without the audience upstream refuses the block.
    let error = client_of_error(
        &project,
        json!({"serviceAccountRef": {"name": "federated"}}),
        source,
        &fake,
    )
    .await;
    assert_eq!(
        error.message(),
        "invalid workloadIdentityFederation config: audience must be provided, when \
         serviceAccountRef or awsSecurityCredentials is provided"
    );
    drop(loopback);
}

#[tokio::test]
async fn signed_aws_credentials_are_exchanged() {
    let project = Project::fresh();
    project.seed("wif", b"from aws", &[]);
    let keys = [
        ("aws_access_key_id", "AKIDEXAMPLE"),
        (
            "aws_secret_access_key",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        ),
        ("aws_session_token", "session/token+1"),
    ];
    let expected = |secret: &str| Subject::Aws {
        region: "eu-west-1".into(),
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: secret.into(),
        session_token: Some("session/token+1".into()),
    };
    let source: Arc<dyn SecretSource> =
        Arc::new(MemorySecretSource::default().with_secret(NAMESPACE, "aws", &[], &keys));
    let federation = json!({
        "awsSecurityCredentials": {"region": "eu-west-1", "awsCredentialsSecretRef": {"name": "aws"}},
        "audience": AUDIENCE,
    });
    let fake = StsEndpoints::start(AUDIENCE, expected(keys[1].1), GOOGLE_ACCOUNT)
        .await
        .unwrap();
    let client = client(
        &project,
        federation.clone(),
        source.clone(),
        endpoints(&fake.server.url),
    )
    .await
    .unwrap();
    assert_eq!(reads(&client).await, "from aws");
    assert_eq!(
        fake.counts(),
        (1, 0),
        "the fake checked the aws4_request signature"
    );

    // A provider registered with other keys rejects the signature.
    let other = StsEndpoints::start(AUDIENCE, expected("another-secret"), GOOGLE_ACCOUNT)
        .await
        .unwrap();
    let error = client_of_error(&project, federation, source, &other).await;
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert_eq!(other.counts(), (0, 0));
}

#[tokio::test]
async fn configurations_upstream_refuses_are_refused() {
    let project = Project::fresh();
    let fake = StsEndpoints::start(
        AUDIENCE,
        Subject::Jwt {
            audience: AUDIENCE.into(),
        },
        GOOGLE_ACCOUNT,
    )
    .await
    .unwrap();
    let refused = |config: String, federation: Value| {
        let project = &project;
        let fake = &fake;
        async move {
            client_of_error(project, federation, Arc::new(with_config(&config)), fake)
                .await
                .message()
                .to_owned()
        }
    };
    let file = json!({"file": "/var/run/secrets/oidc/token"});
    let message = refused(
        cred_config(file.clone(), json!({"type": "service_account"})),
        by_config(),
    )
    .await;
    assert_eq!(
        message,
        "invalid credentials: 'type' field is \"service_account\" (expected \"external_account\")"
    );
    let message = refused(
        cred_config(
            file.clone(),
            json!({"token_url": "https://evil.example/token"}),
        ),
        by_config(),
    )
    .await;
    assert_eq!(
        message,
        "invalid external_account config\ntoken_url \"https://evil.example/token\" must match \
         https://sts.googleapis.com/v1/token"
    );
    let message = refused(
        cred_config(json!({"executable": {"command": "/bin/id"}}), json!({})),
        by_config(),
    )
    .await;
    assert!(
        message.contains("credential_source.executable.command is not allowed"),
        "{message}"
    );
    let operator_token = json!({"file": "/var/run/secrets/kubernetes.io/serviceaccount/token"});
    let message = refused(cred_config(operator_token, json!({})), by_config()).await;
    assert!(
        message.starts_with("invalid external_account config"),
        "{message}"
    );
    let message = refused(cred_config(file, json!({})), json!({})).await;
    assert_eq!(
        message,
        "invalid workloadIdentityFederation config: exactly one of credConfig, \
         awsSecurityCredentials or serviceAccountRef must be provided"
    );
    assert_eq!(fake.counts(), (0, 0), "nothing was exchanged");
}
