//! The server counts the requests it answers by client, verb and resource.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use loopback_apiserver::{LoopbackServer, Options, RequestKey};

#[tokio::test]
async fn requests_are_counted_by_user_agent_verb_and_resource() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options::default()).await?;
    let kubeconfig = kube::config::Kubeconfig::read_from(server.kubeconfig_path())?;
    let mut config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static("counting-test"),
    ));
    let client = kube::Client::try_from(config)?;
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "counted"},
        "stringData": {"a": "b"},
    }))?;
    secrets.create(&PostParams::default(), &secret).await?;
    secrets.get("counted").await?;
    secrets.get("counted").await?;
    secrets.list(&ListParams::default()).await?;
    let apply = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "counted"},
        "stringData": {"a": "c"},
    });
    secrets
        .patch(
            "counted",
            &PatchParams::apply("test"),
            &Patch::Apply(&apply),
        )
        .await?;

    let counts = server.request_counts();
    let count = |verb: &str| {
        counts
            .get(&RequestKey {
                user_agent: "counting-test".into(),
                verb: verb.into(),
                resource: "secrets".into(),
            })
            .copied()
    };
    assert_eq!(count("create"), Some(1));
    assert_eq!(count("get"), Some(2));
    assert_eq!(count("list"), Some(1));
    assert_eq!(count("patch"), Some(1));
    let writes: u64 = counts
        .iter()
        .filter(|(key, _)| key.user_agent == "counting-test" && key.is_write())
        .map(|(_, count)| count)
        .sum();
    assert_eq!(writes, 2);
    Ok(())
}
