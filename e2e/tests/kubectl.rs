//! `kubectl` works against the cluster: client-side and server-side apply, watching, deleting,
//! short names of CRDs and server-side field validation. Fails (never skips) without kubectl.

use e2e::harness::{Kubectl, TestCluster, TestCrd, TestNamespace, is_not_found, unique_name};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

fn config_map_yaml(namespace: &str, name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {namespace}\ndata:\n  key: \"{value}\"\n"
    )
}

#[tokio::test]
async fn apply_get_and_delete() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let kubectl = Kubectl::new(&cluster)?;
    let namespace = TestNamespace::create(&cluster, "kubectl").await?;
    let ns = namespace.name.as_str();
    let created = kubectl
        .run(&["apply", "-f", "-"], Some(&config_map_yaml(ns, "c", "1")))
        .await?;
    assert!(created.contains("configmap/c created"), "{created}");
    let unchanged = kubectl
        .run(&["apply", "-f", "-"], Some(&config_map_yaml(ns, "c", "1")))
        .await?;
    assert!(unchanged.contains("configmap/c unchanged"), "{unchanged}");
    let configured = kubectl
        .run(&["apply", "-f", "-"], Some(&config_map_yaml(ns, "c", "2")))
        .await?;
    assert!(
        configured.contains("configmap/c configured"),
        "{configured}"
    );
    let value = kubectl
        .run(
            &[
                "get",
                "configmap",
                "c",
                "-n",
                ns,
                "-o",
                "jsonpath={.data.key}",
            ],
            None,
        )
        .await?;
    assert_eq!(value, "2");
    let listed = kubectl.run(&["get", "cm", "-n", ns], None).await?;
    assert!(
        listed.lines().any(|line| line.starts_with("c ")),
        "{listed}"
    );
    let deleted = kubectl
        .run(&["delete", "configmap", "c", "-n", ns], None)
        .await?;
    assert!(deleted.contains("\"c\" deleted"), "{deleted}");
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), ns);
    assert!(is_not_found(&api.get("c").await.unwrap_err()));
    namespace.delete().await
}

#[tokio::test]
async fn server_side_apply_and_conflicts() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let kubectl = Kubectl::new(&cluster)?;
    let namespace = TestNamespace::create(&cluster, "kubectl-ssa").await?;
    let ns = namespace.name.as_str();
    let applied = kubectl
        .run(
            &["apply", "--server-side", "-f", "-"],
            Some(&config_map_yaml(ns, "s", "1")),
        )
        .await?;
    assert!(
        applied.contains("configmap/s serverside-applied"),
        "{applied}"
    );
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), ns);
    let managers: Vec<String> = api
        .get("s")
        .await?
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| e.manager)
        .collect();
    assert!(managers.contains(&"kubectl".to_owned()), "{managers:?}");
    let takeover = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}, "data": {"key": "other"}});
    api.patch(
        "s",
        &PatchParams::apply("someone-else").force(),
        &Patch::Apply(&takeover),
    )
    .await?;
    let conflict = kubectl
        .output(
            &["apply", "--server-side", "-f", "-"],
            Some(&config_map_yaml(ns, "s", "3")),
        )
        .await?;
    assert!(!conflict.status.success());
    let stderr = String::from_utf8_lossy(&conflict.stderr);
    assert!(
        stderr.contains("conflict") && stderr.contains("someone-else"),
        "{stderr}"
    );
    kubectl
        .run(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(&config_map_yaml(ns, "s", "3")),
        )
        .await?;
    assert_eq!(api.get("s").await?.data.unwrap()["key"], "3");
    namespace.delete().await
}

#[tokio::test]
async fn get_watch_streams_events() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let kubectl = Kubectl::new(&cluster)?;
    let namespace = TestNamespace::create(&cluster, "kubectl-watch").await?;
    let ns = namespace.name.as_str();
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), ns);
    let mut child = kubectl
        .command(&[
            "get",
            "configmaps",
            "-n",
            ns,
            "--watch",
            "--output-watch-events",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let expect_line =
        async |lines: &mut tokio::io::Lines<_>, prefix: &str, name: &str| -> anyhow::Result<()> {
            let found = tokio::time::timeout(Duration::from_secs(30), async {
                while let Some(line) = lines.next_line().await? {
                    let line: String = line;
                    let mut words = line.split_whitespace();
                    if words.next() == Some(prefix) && words.next() == Some(name) {
                        return anyhow::Ok(());
                    }
                }
                anyhow::bail!("kubectl get --watch ended")
            })
            .await;
            found
                .map_err(|_| anyhow::anyhow!("no {prefix} {name} line from kubectl get --watch"))?
        };
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "first"}}))?,
    )
    .await?;
    expect_line(&mut lines, "ADDED", "first").await?;
    api.patch(
        "first",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await?;
    expect_line(&mut lines, "MODIFIED", "first").await?;
    api.delete("first", &Default::default()).await?;
    expect_line(&mut lines, "DELETED", "first").await?;
    child.kill().await?;
    namespace.delete().await
}

#[tokio::test]
async fn custom_resources_by_short_name_with_server_side_validation() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let kubectl = Kubectl::new(&cluster)?;
    let short_name = unique_name("gz").replace('-', "");
    let crd = TestCrd::create(
        &cluster,
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "gizmos.kubectl.e2e.external-secrets.io"},
            "spec": {
                "group": "kubectl.e2e.external-secrets.io",
                "scope": "Namespaced",
                "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "shortNames": [short_name]},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "required": ["size"], "properties": {
                        "size": {"type": "integer", "minimum": 1}
                    }}}
                }}}]
            }
        }),
    )
    .await?;
    let namespace = TestNamespace::create(&cluster, "kubectl-crd").await?;
    let ns = namespace.name.as_str();
    let gizmo = |name: &str, spec: &str| {
        format!(
            "apiVersion: {}/v1\nkind: Gizmo\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec: {spec}\n",
            crd.group
        )
    };
    let created = kubectl
        .run(&["apply", "-f", "-"], Some(&gizmo("g1", "{size: 2}")))
        .await?;
    assert!(created.contains("g1 created"), "{created}");
    let listed = kubectl
        .run(&["get", &short_name, "-n", ns, "-o", "name"], None)
        .await?;
    assert_eq!(listed.trim(), format!("gizmo.{}/g1", crd.group));
    let resources = kubectl
        .run(&["api-resources", "--api-group", &crd.group], None)
        .await?;
    assert!(
        resources.contains(&short_name) && resources.contains("Gizmo"),
        "{resources}"
    );
    let unknown = kubectl
        .output(
            &["apply", "-f", "-"],
            Some(&gizmo("g2", "{size: 2, bogus: 1}")),
        )
        .await?;
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        !unknown.status.success() && stderr.contains("unknown field \"spec.bogus\""),
        "{stderr}"
    );
    let invalid = kubectl
        .output(&["apply", "-f", "-"], Some(&gizmo("g3", "{size: 0}")))
        .await?;
    let stderr = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        !invalid.status.success() && stderr.contains("spec.size"),
        "{stderr}"
    );
    let deleted = kubectl
        .run(&["delete", &short_name, "g1", "-n", ns], None)
        .await?;
    assert!(deleted.contains("\"g1\" deleted"), "{deleted}");
    namespace.delete().await?;
    crd.delete().await
}

#[tokio::test]
async fn create_commands_and_service_account_tokens() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let kubectl = Kubectl::new(&cluster)?;
    let namespace = TestNamespace::create(&cluster, "kubectl-create").await?;
    let ns = namespace.name.as_str();
    kubectl
        .run(
            &["create", "configmap", "c", "-n", ns, "--from-literal=a=b"],
            None,
        )
        .await?;
    kubectl
        .run(
            &[
                "create",
                "secret",
                "generic",
                "s",
                "-n",
                ns,
                "--from-literal=username=u",
                "--type=kubernetes.io/basic-auth",
            ],
            None,
        )
        .await?;
    let secret = kubectl
        .run(
            &[
                "get",
                "secret",
                "s",
                "-n",
                ns,
                "-o",
                "jsonpath={.type} {.data.username}",
            ],
            None,
        )
        .await?;
    assert_eq!(secret, "kubernetes.io/basic-auth dQ==");
    kubectl
        .run(&["create", "serviceaccount", "bot", "-n", ns], None)
        .await?;
    let token = kubectl
        .run(
            &[
                "create",
                "token",
                "bot",
                "-n",
                ns,
                "--audience",
                "vault",
                "--duration",
                "20m",
            ],
            None,
        )
        .await?;
    let review: k8s_openapi::api::authentication::v1::TokenReview =
        serde_json::from_value(json!({"spec": {"token": token.trim(), "audiences": ["vault"]}}))?;
    let reviewed = Api::all(cluster.client.clone())
        .create(&PostParams::default(), &review)
        .await?;
    let status = reviewed.status.expect("a review status");
    assert_eq!(status.authenticated, Some(true), "{status:?}");
    assert_eq!(
        status.user.and_then(|u| u.username),
        Some(format!("system:serviceaccount:{ns}:bot"))
    );
    namespace.delete().await
}
