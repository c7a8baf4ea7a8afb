//! gcpsm-specific behaviour against cloudbox (through the project's launcher) and the Google
//! token endpoint fake: token caching and refused keys, versions and the version selection
//! policy, binary payloads, find by labels, metadata reads, and push ownership and metadata;
//! and GKE workload identity through the loopback API server's TokenRequest and the Secure
//! Token / IAM Credentials contract fake.

#![cfg(feature = "gcpsm")]

mod support;

use external_secrets_providers::request::{
    Find, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef,
};
use external_secrets_providers::{ErrorKind, SecretValue, SecretsClient};
use serde_json::json;
use support::gcp::{Project, cloudbox, token_endpoint};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

async fn client(project: &Project, extra: serde_json::Value) -> impl SecretsClient {
    let tokens = token_endpoint().await;
    project
        .client(&project.spec(extra), &tokens.token_uri())
        .await
        .expect("client builds")
}

fn push(key: &str, value: &str) -> PushRequest {
    PushRequest::single(
        [("source".to_owned(), SecretValue::from(value))].into(),
        "source",
        key,
    )
}

#[tokio::test]
async fn tokens_are_fetched_once_and_refused_keys_fail_the_client() {
    let project = Project::fresh();
    project.seed("a", b"1", &[]);
    let tokens = token_endpoint().await;
    let client = project
        .client(&project.spec(json!({})), &tokens.token_uri())
        .await
        .unwrap();
    for _ in 0..3 {
        client.get_secret(&RemoteRef::new("a")).await.unwrap();
    }
    assert_eq!(
        tokens.issued(),
        1,
        "one token serves every call until near expiry"
    );
    let sent = tokens.server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, "/token");

    // A key signed for another endpoint (the fake checks `aud`) is refused.
    let other = token_endpoint().await;
    let wrong_audience = format!("{}/token?", other.server.url);
    let error = project
        .client(&project.spec(json!({})), &wrong_audience)
        .await
        .err()
        .expect("refused");
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
    assert!(error.message().starts_with("unable to get credentials"));
    assert_eq!(other.issued(), 0);
}

#[tokio::test]
async fn versions_and_the_selection_policy() {
    let project = Project::fresh();
    project.seed("v", b"one", &[]);
    project.add_version("v", b"two");
    let fail = client(&project, json!({})).await;
    let one = RemoteRef::new("v").with_version("1");
    assert_eq!(text(fail.get_secret(&one).await.unwrap()), "one");
    assert_eq!(
        text(fail.get_secret(&RemoteRef::new("v")).await.unwrap()),
        "two"
    );
    let missing = fail
        .get_secret(&RemoteRef::new("v").with_version("9"))
        .await;
    assert_eq!(missing.unwrap_err().kind(), ErrorKind::NotFound);

    project.version_action("v", "2", "disable");
    let error = fail.get_secret(&RemoteRef::new("v")).await.unwrap_err();
    assert_ne!(
        error.kind(),
        ErrorKind::NotFound,
        "a disabled version is not a deleted secret"
    );
    assert!(error.message().contains("DISABLED state"), "{error}");

    let fetch = client(
        &project,
        json!({"secretVersionSelectionPolicy": "LatestOrFetch"}),
    )
    .await;
    assert_eq!(
        text(fetch.get_secret(&RemoteRef::new("v")).await.unwrap()),
        "one"
    );
    // An explicit version is never replaced.
    let two = RemoteRef::new("v").with_version("2");
    assert!(fetch.get_secret(&two).await.is_err());
    project.version_action("v", "1", "destroy");
    assert!(fetch.get_secret(&RemoteRef::new("v")).await.is_err());
}

#[tokio::test]
async fn binary_payloads_come_back_unchanged() {
    let project = Project::fresh();
    let bytes = [0u8, 159, 146, 150, 255, 10];
    project.seed("bin", &bytes, &[]);
    let client = client(&project, json!({})).await;
    let value = client.get_secret(&RemoteRef::new("bin")).await.unwrap();
    assert_eq!(value.expose(), bytes);
}

#[tokio::test]
async fn find_by_labels_and_path() {
    let project = Project::fresh();
    project.seed("app-db", b"1", &[("team", "a")]);
    project.seed("app-cache", b"2", &[("team", "a"), ("tier", "x")]);
    project.seed("other", b"3", &[("team", "b")]);
    let client = client(&project, json!({})).await;
    let mut find = Find::default();
    find.tags.insert("team".into(), "a".into());
    let found = client.get_all_secrets(&find).await.unwrap();
    let keys: Vec<&str> = found.keys().map(String::as_str).collect();
    assert_eq!(keys, ["app-cache", "app-db"]);
    find.tags.insert("tier".into(), "x".into());
    let found = client.get_all_secrets(&find).await.unwrap();
    assert_eq!(found.keys().collect::<Vec<_>>(), ["app-cache"]);
    let mut by_path = Find::by_name(".*");
    by_path.path = Some("app-d".into());
    let found = client.get_all_secrets(&by_path).await.unwrap();
    assert_eq!(found.keys().collect::<Vec<_>>(), ["app-db"]);
    let error = client.get_all_secrets(&Find::default()).await.unwrap_err();
    assert_eq!(error.message(), "unexpected find operator");
}

#[tokio::test]
async fn metadata_fetch_reads_labels() {
    let project = Project::fresh();
    project.seed("m", b"v", &[("env", "prod")]);
    let client = client(&project, json!({})).await;
    let mut remote_ref = RemoteRef::new("m");
    remote_ref.metadata_policy = MetadataPolicy::Fetch;
    let all = text(client.get_secret(&remote_ref).await.unwrap());
    let all: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all, json!({"annotations": {}, "labels": {"env": "prod"}}));
    let one = remote_ref.clone().with_property("labels.env");
    assert_eq!(text(client.get_secret(&one).await.unwrap()), "prod");
    let absent = remote_ref.clone().with_property("labels.nope");
    assert_eq!(
        client.get_secret(&absent).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let invalid = remote_ref.with_property("tags");
    assert!(
        client
            .get_secret(&invalid)
            .await
            .unwrap_err()
            .message()
            .starts_with("invalid property")
    );
}

#[tokio::test]
async fn push_owns_what_it_creates_and_adds_versions_only_on_change() {
    let project = Project::fresh();
    let client = client(&project, json!({})).await;
    client.push_secret(&push("p", "one")).await.unwrap();
    let created = project.secret("p").unwrap();
    assert_eq!(created["labels"]["managed-by"], "external-secrets");
    client.push_secret(&push("p", "one")).await.unwrap();
    assert_eq!(project.version_count("p"), 1, "same value: no new version");
    client.push_secret(&push("p", "two")).await.unwrap();
    assert_eq!(project.version_count("p"), 2);

    project.seed("theirs", b"keep", &[("owner", "someone")]);
    let error = client
        .push_secret(&push("theirs", "mine"))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "secret theirs is not managed by external secrets"
    );
    assert_eq!(project.version_count("theirs"), 1);
    client
        .delete_secret(&PushRemoteRef::new("theirs"))
        .await
        .unwrap();
    assert!(
        project.secret("theirs").is_some(),
        "unmanaged secrets are never deleted"
    );
    client
        .delete_secret(&PushRemoteRef::new("p"))
        .await
        .unwrap();
    assert!(project.secret("p").is_none());
}

#[tokio::test]
async fn push_metadata_labels_and_properties() {
    let project = Project::fresh();
    let client = client(&project, json!({})).await;
    let mut request = push("meta", "v");
    request.metadata = Some(json!({
        "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
        "kind": "PushSecretMetadata",
        "spec": {"labels": {"team": "a"}},
    }));
    client.push_secret(&request).await.unwrap();
    let labels = project.secret("meta").unwrap()["labels"].clone();
    assert_eq!(
        labels,
        json!({"managed-by": "external-secrets", "team": "a"})
    );

    let mut property = push("props", "admin");
    property.remote_ref.property = Some("user".into());
    client.push_secret(&property).await.unwrap();
    let mut second = push("props", "s3cret");
    second.remote_ref.property = Some("pass".into());
    client.push_secret(&second).await.unwrap();
    let value = client.get_secret(&RemoteRef::new("props")).await.unwrap();
    let value: serde_json::Value = serde_json::from_slice(value.expose()).unwrap();
    assert_eq!(value, json!({"user": "admin", "pass": "s3cret"}));
    property.metadata = request.metadata.clone();
    let error = client.push_secret(&property).await.unwrap_err();
    assert_eq!(
        error.message(),
        "cannot specify metadata and property at the same time"
    );
}

#[tokio::test]
async fn workload_identity_exchanges_a_service_account_token() {
    use contract_fakes::google::WorkloadIdentityEndpoints;
    use external_secrets_providers::backends::gcpsm::Endpoints;
    use external_secrets_providers::credentials::KubeSecretSource;
    use std::sync::Arc;

    let google_account = "eso@cluster-project.iam.gserviceaccount.com";
    let annotation = ("iam.gke.io/gcp-service-account", google_account);
    let (loopback, admin) =
        support::cluster_with_service_account("impersonating", &[annotation]).await;
    let plain = k8s_openapi::api::core::v1::ServiceAccount {
        metadata: kube::api::ObjectMeta {
            name: Some("plain".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    kube::Api::<k8s_openapi::api::core::v1::ServiceAccount>::namespaced(
        admin.clone(),
        support::NAMESPACE,
    )
    .create(&kube::api::PostParams::default(), &plain)
    .await
    .unwrap();
    let provider = "https://container.googleapis.com/v1/projects/cluster-project/locations/europe-west1/clusters/c1";
    let fake =
        WorkloadIdentityEndpoints::start("cluster-project.svc.id.goog", provider, google_account)
            .await
            .unwrap();
    let project = Project::fresh();
    project.seed("wi", b"through workload identity", &[]);
    let fake_url = reqwest::Url::parse(&fake.server.url).unwrap();
    let endpoints = Endpoints {
        secret_manager: reqwest::Url::parse(&cloudbox().url).unwrap(),
        secure_token: fake_url.clone(),
        iam_credentials: fake_url.clone(),
        sts: fake_url,
    };
    let spec = |account: &str| {
        serde_json::from_value(json!({
            "projectID": project.id,
            "auth": {"workloadIdentity": {
                "serviceAccountRef": {"name": account},
                "clusterLocation": "europe-west1",
                "clusterName": "c1",
                "clusterProjectID": "cluster-project",
            }},
        }))
        .unwrap()
    };
    let source = Arc::new(KubeSecretSource::new(admin));
    let client = project
        .client_with(&spec("impersonating"), source.clone(), endpoints.clone())
        .await
        .unwrap();
    for _ in 0..2 {
        let value = client.get_secret(&RemoteRef::new("wi")).await.unwrap();
        assert_eq!(text(value), "through workload identity");
    }
    assert_eq!(
        fake.counts(),
        (1, 1),
        "one exchange, one impersonation, then the cache"
    );
    let sent = fake.server.requests();
    let impersonation = sent
        .iter()
        .find(|r| r.path.contains("generateAccessToken"))
        .unwrap();
    assert_eq!(
        impersonation.path,
        format!("/v1/projects/-/serviceAccounts/{google_account}:generateAccessToken")
    );

    // Without the annotation the federated token is used as it is.
    let direct = project
        .client_with(&spec("plain"), source.clone(), endpoints.clone())
        .await
        .unwrap();
    direct.get_secret(&RemoteRef::new("wi")).await.unwrap();
    assert_eq!(fake.counts(), (2, 1));

    // A cluster the fake does not know: the exchange is refused, and so is the client.
    let mut wrong: serde_json::Value = serde_json::to_value(spec("plain")).unwrap();
    wrong["auth"]["workloadIdentity"]["clusterName"] = json!("other");
    let wrong = serde_json::from_value(wrong).unwrap();
    let error = project
        .client_with(&wrong, source, endpoints)
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
    assert!(
        error
            .message()
            .contains("unable to fetch identitybindingtoken"),
        "{error}"
    );
    drop(loopback);
}

#[path = "gcp/access_token.rs"]
mod access_token;

#[path = "gcp/federation.rs"]
mod federation;
