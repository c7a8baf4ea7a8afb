//! The workload, Service, policy and RBAC kinds (what a Helm chart renders besides CRDs) are
//! served with generic storage: discovered with their scope, stored as given, with the status
//! subresource and generation rules of the real API server, and not stored on a dry run.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Discovery, Scope};
use loopback_apiserver::{LoopbackServer, Options};
use serde_json::json;

#[tokio::test]
async fn chart_kinds_are_discovered_with_their_scope() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options::default()).await?;
    let discovery = Discovery::new(server.client().await?).run().await?;
    let expected = [
        ("", "v1", "Service", Scope::Namespaced),
        ("apps", "v1", "Deployment", Scope::Namespaced),
        ("policy", "v1", "PodDisruptionBudget", Scope::Namespaced),
        (
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            Scope::Namespaced,
        ),
        (
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            Scope::Cluster,
        ),
        (
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            Scope::Cluster,
        ),
        ("rbac.authorization.k8s.io", "v1", "Role", Scope::Namespaced),
        (
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            Scope::Namespaced,
        ),
    ];
    for (group, version, kind, scope) in expected {
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (_, capabilities) = discovery
            .resolve_gvk(&gvk)
            .unwrap_or_else(|| panic!("{kind} is not discovered"));
        assert_eq!(capabilities.scope, scope, "scope of {kind}");
    }
    Ok(())
}

#[tokio::test]
async fn deployment_status_and_generation_follow_the_api_server() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options::default()).await?;
    let deployments: Api<Deployment> = Api::namespaced(server.client().await?, "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "example.com/web:1"}]},
            },
        },
    }))?;
    let created = deployments
        .create(&PostParams::default(), &deployment)
        .await?;
    assert_eq!(created.metadata.generation, Some(1));

    let labelled = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "front"}}})),
        )
        .await?;
    assert_eq!(labelled.metadata.generation, Some(1), "metadata only");
    let scaled = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}, "status": {"replicas": 9}})),
        )
        .await?;
    assert_eq!(scaled.metadata.generation, Some(2), "spec change");
    assert_eq!(
        scaled.status.and_then(|status| status.replicas),
        None,
        "status is written through /status only"
    );

    let reported = deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 3, "readyReplicas": 3}})),
        )
        .await?;
    assert_eq!(reported.metadata.generation, Some(2), "status write");
    assert_eq!(
        reported.status.and_then(|status| status.ready_replicas),
        Some(3)
    );
    Ok(())
}

#[tokio::test]
async fn dry_run_apply_of_a_cluster_role_stores_nothing() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options::default()).await?;
    let roles: Api<ClusterRole> = Api::all(server.client().await?);
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
    });
    let answered = roles
        .patch(
            "reader",
            &PatchParams::apply("test").dry_run(),
            &Patch::Apply(&role),
        )
        .await?;
    assert_eq!(
        answered.rules.unwrap_or_default()[0].verbs,
        vec!["get".to_owned()]
    );
    assert!(
        roles.get_opt("reader").await?.is_none(),
        "dry run stored it"
    );

    roles
        .patch("reader", &PatchParams::apply("test"), &Patch::Apply(&role))
        .await?;
    assert!(roles.get_opt("reader").await?.is_some());
    Ok(())
}
