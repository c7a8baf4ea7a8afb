//! Behaviour only the loopback server can show on demand (a real cluster compacts history
//! on its own schedule, and its transport and authentication are its own): each test starts
//! its own server.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use loopback_apiserver::{LoopbackServer, Options};
use serde_json::{Value, json};

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).expect("a ConfigMap")
}

#[tokio::test]
async fn watch_history_is_bounded() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options {
        watch_history: 5,
        ..Options::default()
    })
    .await?;
    let client = server.client().await?;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let first = api
        .create(&PostParams::default(), &config_map("first"))
        .await?;
    let mut last = first.clone();
    for index in 0..10 {
        last = api
            .create(&PostParams::default(), &config_map(&format!("c{index}")))
            .await?;
    }
    let old = first.metadata.resource_version.unwrap();
    let event = api
        .watch(&WatchParams::default().timeout(5), &old)
        .await?
        .boxed()
        .try_next()
        .await?;
    match event {
        Some(WatchEvent::Error(error)) => {
            assert_eq!((error.code, error.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected 410, got {other:?}"),
    }
    let recent = last.metadata.resource_version.unwrap();
    api.create(&PostParams::default(), &config_map("after"))
        .await?;
    let event = api
        .watch(&WatchParams::default().timeout(5), &recent)
        .await?
        .boxed()
        .try_next()
        .await?;
    assert!(
        matches!(event, Some(WatchEvent::Added(object)) if object.metadata.name.as_deref() == Some("after"))
    );
    Ok(())
}

/// The root-CA ConfigMap of every namespace carries the CA of this very server (a real
/// controller manager publishes its `--root-ca-file`), so in-cluster clients can verify it.
#[tokio::test]
async fn root_ca_config_maps_publish_the_serving_ca() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options::default()).await?;
    let ca = server.ca_pem().expect("TLS by default").to_owned();
    let client = server.client().await?;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "fresh"}}))?,
        )
        .await?;
    for namespace in ["default", "fresh"] {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
        let root = api.get("kube-root-ca.crt").await?;
        assert_eq!(
            root.data.unwrap_or_default().get("ca.crt"),
            Some(&ca),
            "{namespace}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn openid_discovery_serves_the_signing_key() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options::default()).await?;
    let client = server.client().await?;
    let get = |path: &str| {
        http::Request::get(path)
            .body(Vec::new())
            .expect("a request")
    };
    let configuration: Value = client
        .request(get("/.well-known/openid-configuration"))
        .await?;
    assert_eq!(configuration["issuer"], server.token_issuer().issuer());
    assert_eq!(
        configuration["jwks_uri"],
        format!("{}/openid/v1/jwks", server.base_url())
    );
    let keys: Value = client.request(get("/openid/v1/jwks")).await?;
    assert_eq!(keys["keys"][0]["kty"], "EC");
    assert_eq!(keys["keys"][0]["alg"], "ES256");
    Ok(())
}

#[tokio::test]
async fn plain_http_without_authentication() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options {
        tls: false,
        token: None,
        ..Options::default()
    })
    .await?;
    assert!(server.base_url().starts_with("http://"));
    let api: Api<ConfigMap> = Api::namespaced(server.client().await?, "kube-system");
    assert!(
        api.list(&ListParams::default())
            .await?
            .items
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some("kube-root-ca.crt"))
    );
    Ok(())
}

#[tokio::test]
async fn wrong_tokens_are_rejected() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options {
        token: Some("right".into()),
        ..Options::default()
    })
    .await?;
    let mut config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(server.kubeconfig_path())?,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    config.auth_info.token = Some("wrong".to_owned().into());
    let api: Api<ConfigMap> = Api::namespaced(kube::Client::try_from(config)?, "default");
    match api.list(&ListParams::default()).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 401),
        other => panic!("expected 401, got {other:?}"),
    }
    Ok(())
}
