//! `--metrics-auth`, run as the real binary: `/metrics` answers only readers the API server
//! authenticates (TokenReview) and authorizes for `get` on the non-resource URL `/metrics`
//! (SubjectAccessReview), as controller-runtime's `WithAuthenticationAndAuthorization` filter:
//! no token or an unknown one is 401, a ServiceAccount without the grant 403, one bound to a
//! `nonResourceURLs: ["/metrics"]` ClusterRole reads the metrics.

use e2e::harness::{ControllerProcess, TestCluster, TestNamespace, install_crds, unique_name};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

/// A token of a new ServiceAccount `name` in `namespace`.
async fn token_of(cluster: &TestCluster, namespace: &str, name: &str) -> anyhow::Result<String> {
    let accounts: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), namespace);
    let account: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    accounts.create(&PostParams::default(), &account).await?;
    accounts
        .create_token_request(name, &PostParams::default(), &TokenRequest::default())
        .await?
        .status
        .map(|status| status.token)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| anyhow::anyhow!("the TokenRequest for {name} returned no token"))
}

#[tokio::test]
async fn only_authorized_readers_get_metrics() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "metrics-auth").await?;
    let class = unique_name("e2e-class");
    let controller = ControllerProcess::start(&cluster, &class, &["--metrics-auth"]).await?;
    let reader = token_of(&cluster, &namespace.name, "reader").await?;
    let stranger = token_of(&cluster, &namespace.name, "stranger").await?;

    let grant = unique_name("e2e-metrics-reader");
    let roles: Api<ClusterRole> = Api::all(cluster.client.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(cluster.client.clone());
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": grant},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    }))?;
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": grant},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": grant},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace.name}],
    }))?;
    roles.create(&PostParams::default(), &role).await?;
    bindings.create(&PostParams::default(), &binding).await?;

    let checks = async {
        let (status, _) = controller.metrics_as(None).await?;
        assert_eq!(status, 401, "no token");
        let (status, _) = controller.metrics_as(Some("not-a-token")).await?;
        assert_eq!(status, 401, "unknown token");
        let (status, body) = controller.metrics_as(Some(&stranger)).await?;
        assert_eq!(status, 403, "not granted: {body}");
        // A grant reaches a real API server's authorizer within moments, and a refusal is
        // cached for 30 s (as controller-runtime's): retry for longer than that.
        let mut last = (0, String::new());
        for _ in 0..45 {
            last = controller.metrics_as(Some(&reader)).await?;
            if last.0 == 200 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
        assert_eq!(last.0, 200, "granted: {}", last.1);
        assert!(last.1.contains("controller_runtime_reconcile_total"));
        anyhow::Ok(())
    }
    .await
    .map_err(|error| error.context(controller.log()));
    let _ = bindings.delete(&grant, &DeleteParams::default()).await;
    let _ = roles.delete(&grant, &DeleteParams::default()).await;
    checks?;
    controller.stop().await?;
    namespace.delete().await
}
