//! The Helm chart (charts/external-secrets) installs our operator from upstream-style values.
//!
//! Each case renders the chart with the Helm library (helm_sdkpy, driven through
//! charts/test/render_chart.py). helm_sdkpy has no template or dry-run action, so the chart is
//! installed into a loopback API server the test starts for that alone; the manifests Helm
//! reports are then checked (arguments our binary accepts, labels, least-privilege RBAC, CRDs
//! identical to crds/manifests) and applied with server-side dry run to the cluster under test
//! (`KUBECONFIG`, or the shared loopback server). Fails, never skips, without python3 and
//! helm_sdkpy (scripts/test-tools.sh installs them; scripts/test.sh puts them on PATH).

#[path = "helm_chart/render.rs"]
mod render;

use e2e::harness::{TestCluster, TestNamespace, controller_binary};
use render::{dry_run_apply, render, repository, values_file};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The string at `pointer`, or "" (the assertions then say what was missing).
fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The rendered object of `kind` named `name`.
fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|object| text(object, "/kind") == kind && text(object, "/metadata/name") == name)
        .unwrap_or_else(|| panic!("no {kind} {name} rendered"))
}

fn names_of<'a>(objects: &'a [Value], kind: &str) -> BTreeSet<&'a str> {
    objects
        .iter()
        .filter(|object| text(object, "/kind") == kind)
        .map(|object| text(object, "/metadata/name"))
        .collect()
}

/// The first container's `args` of a Deployment.
fn args(deployment: &Value) -> Vec<String> {
    serde_json::from_value(deployment["spec"]["template"]["spec"]["containers"][0]["args"].clone())
        .expect("container args")
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|item| (*item).to_owned()).collect()
}

/// The `rules` of a Role or ClusterRole as (resources, verbs, resourceNames) per rule.
fn rules(role: &Value) -> Vec<(Vec<String>, Vec<String>, Vec<String>)> {
    let list = |rule: &Value, key: &str| -> Vec<String> {
        serde_json::from_value(rule[key].clone()).unwrap_or_default()
    };
    role["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|rule| {
            (
                list(rule, "resources"),
                list(rule, "verbs"),
                list(rule, "resourceNames"),
            )
        })
        .collect()
}

/// Every resource the role grants anything on.
fn granted(role: &Value) -> BTreeSet<String> {
    rules(role)
        .into_iter()
        .flat_map(|(resources, ..)| resources)
        .collect()
}

/// Checks `args` with the binary itself: clap parses every flag and value before acting on
/// the trailing `--help`, so it exits 0 only if all are accepted.
fn assert_binary_accepts(args: &[String]) -> anyhow::Result<()> {
    let output = std::process::Command::new(controller_binary()?)
        .args(args)
        .arg("--help")
        .output()?;
    anyhow::ensure!(
        output.status.success(),
        "external-secrets rejects {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

/// Labels every chart object (not CRDs, not extraObjects) carries.
fn assert_labels(objects: &[Value], release: &str, extra: &[(&str, &str)]) {
    for object in objects {
        let kind = text(object, "/kind");
        if kind == "CustomResourceDefinition" || object["metadata"].get("labels").is_none() {
            assert!(
                kind == "CustomResourceDefinition" || kind == "ConfigMap",
                "{kind} {} has no labels",
                text(object, "/metadata/name")
            );
            continue;
        }
        let labels = &object["metadata"]["labels"];
        let expected = [
            ("app.kubernetes.io/instance", release),
            ("app.kubernetes.io/managed-by", "Helm"),
        ];
        for (key, value) in expected.iter().chain(extra) {
            assert_eq!(
                labels[key], *value,
                "{kind} {} label {key}",
                object["metadata"]["name"]
            );
        }
    }
}

/// No role may grant anything on Secrets without naming them, except the controller's role
/// (it writes the target Secrets of every ExternalSecret): upstream's cert controller could
/// read every Secret of the cluster (CVE-2024-45041).
fn assert_secrets_only_for_the_controller(objects: &[Value], controller_role: &str) {
    for role in objects
        .iter()
        .filter(|object| matches!(text(object, "/kind"), "Role" | "ClusterRole"))
        .filter(|role| text(role, "/metadata/name") != controller_role)
    {
        for (resources, _, names) in rules(role) {
            if resources.iter().any(|resource| resource == "secrets") {
                assert!(
                    !names.is_empty(),
                    "{} reaches every Secret",
                    role["metadata"]["name"]
                );
            }
        }
    }
}

#[tokio::test]
async fn default_values_install_our_crds_and_least_privilege_rbac() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "helm-default").await?;
    let ns = namespace.name.as_str();
    let objects = render(&json!({}), "eso", ns, ns)
        .await?
        .map_err(anyhow::Error::msg)?;

    let chart: Value = serde_yaml::from_str(&std::fs::read_to_string(
        repository().join("charts/external-secrets/Chart.yaml"),
    )?)?;
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(
        chart["appVersion"],
        tag.as_str(),
        "appVersion follows the workspace"
    );

    // The CRDs are exactly the generated ones (the drift check of the chart's copies).
    let mut generated = BTreeMap::new();
    for entry in std::fs::read_dir(repository().join("crds/manifests"))? {
        let crd: Value = serde_yaml::from_str(&std::fs::read_to_string(entry?.path())?)?;
        generated.insert(text(&crd, "/metadata/name").to_owned(), crd);
    }
    let rendered: BTreeMap<String, Value> = objects
        .iter()
        .filter(|object| text(object, "/kind") == "CustomResourceDefinition")
        .map(|crd| (text(crd, "/metadata/name").to_owned(), crd.clone()))
        .collect();
    assert!(
        rendered == generated,
        "the chart's CRDs differ from crds/manifests: run scripts/sync-chart-crds.sh"
    );

    assert!(
        !names_of(&objects, "Deployment").contains("bitwarden-sdk-server"),
        "the Bitwarden SDK server only with bitwarden-sdk-server.enabled"
    );

    let controller = find(&objects, "Deployment", "eso-external-secrets");
    let image = format!("ghcr.io/external-secrets-rs/external-secrets:{tag}");
    assert_eq!(
        controller["spec"]["template"]["spec"]["containers"][0]["image"],
        image.as_str()
    );
    let controller_args = args(controller);
    assert_eq!(
        controller_args,
        strings(&[
            "--concurrent=1",
            "--metrics-addr=:8080",
            "--loglevel=info",
            "--zap-time-encoding=epoch"
        ])
    );
    assert_binary_accepts(&controller_args)?;
    let webhook_args = args(find(&objects, "Deployment", "eso-external-secrets-webhook"));
    assert_eq!(
        webhook_args,
        strings(&[
            "webhook",
            "--port=10250",
            &format!("--dns-name=eso-external-secrets-webhook.{ns}.svc"),
            "--cert-dir=/tmp/certs",
            "--check-interval=5m",
            "--metrics-addr=:8080",
            "--healthz-addr=:8081",
            "--loglevel=info",
            "--zap-time-encoding=epoch",
        ])
    );
    assert_binary_accepts(&webhook_args)?;
    let cert_args = args(find(
        &objects,
        "Deployment",
        "eso-external-secrets-cert-controller",
    ));
    assert_eq!(
        cert_args,
        strings(&[
            "certcontroller",
            "--crd-requeue-interval=5m",
            "--service-name=eso-external-secrets-webhook",
            &format!("--service-namespace={ns}"),
            "--secret-name=eso-external-secrets-webhook",
            &format!("--secret-namespace={ns}"),
            "--metrics-addr=:8080",
            "--healthz-addr=:8081",
            "--loglevel=info",
            "--zap-time-encoding=epoch",
            "--enable-partial-cache=true",
        ])
    );
    assert_binary_accepts(&cert_args)?;

    assert_labels(&objects, "eso", &[]);
    let role = find(&objects, "ClusterRole", "eso-external-secrets-controller");
    let kinds = [
        "externalsecrets",
        "secretstores",
        "clustersecretstores",
        "clusterexternalsecrets",
        "pushsecrets",
        "clusterpushsecrets",
    ];
    let mut allowed: BTreeSet<String> = [
        "secrets",
        "configmaps",
        "serviceaccounts",
        "serviceaccounts/token",
        "namespaces",
        "events",
        // The generator kinds this build generates with.
        "passwords",
        "uuids",
        "fakes",
        "sshkeys",
        "vaultdynamicsecrets",
        "stssessiontokens",
        "ecrauthorizationtokens",
        "acraccesstokens",
        "gcraccesstokens",
        "webhooks",
        "mfas",
        "clustergenerators",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for kind in kinds {
        allowed.extend([
            kind.to_owned(),
            format!("{kind}/status"),
            format!("{kind}/finalizers"),
        ]);
    }
    assert_eq!(
        granted(role),
        allowed,
        "the controller is granted exactly what it uses"
    );
    assert!(
        rules(role)
            .iter()
            .all(|(resources, verbs, _)| !resources.contains(&"*".to_owned())
                && !verbs.contains(&"*".to_owned()))
    );
    assert_secrets_only_for_the_controller(&objects, "eso-external-secrets-controller");
    let cert_role = find(&objects, "Role", "eso-external-secrets-cert-controller");
    assert!(rules(cert_role).contains(&(
        strings(&["secrets"]),
        strings(&["get", "list", "watch", "update", "patch"]),
        strings(&["eso-external-secrets-webhook"]),
    )));
    assert!(
        names_of(&objects, "Role").len() == 1,
        "no leader election Role without leaderElect"
    );
    assert_eq!(
        names_of(&objects, "ValidatingWebhookConfiguration"),
        BTreeSet::from(["externalsecret-validate", "secretstore-validate"])
    );

    dry_run_apply(&cluster, &objects).await?;
    namespace.delete().await
}

#[tokio::test]
async fn upstream_values_file_sets_every_supported_key() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "helm-full").await?;
    let ns = namespace.name.as_str();
    let values = values_file("full-values.yaml", &[("namespaceOverride", ns)])?;
    let objects = render(&values, "full", "eso-release", ns)
        .await?
        .map_err(anyhow::Error::msg)?;

    for object in &objects {
        if let Some(object_namespace) = object["metadata"]["namespace"].as_str() {
            assert_eq!(
                object_namespace, ns,
                "namespaceOverride: {}",
                object["metadata"]["name"]
            );
        }
    }
    assert_labels(&objects, "full", &[("example.com/team", "platform")]);

    let controller = find(&objects, "Deployment", "eso-full");
    let controller_args = args(controller);
    assert_eq!(
        controller_args,
        strings(&[
            "--enable-leader-election=true",
            "--leader-election-id=eso-full-lock",
            "--leader-election-lease-duration=30s",
            "--leader-election-renew-deadline=20s",
            "--leader-election-retry-period=4s",
            "--enable-cluster-store-reconciler=false",
            "--enable-cluster-push-secret-reconciler=false",
            "--unsafe-allow-generic-targets=true",
            "--deny-operator-identity=true",
            "--enable-extended-metric-labels=true",
            "--enable-vault-token-cache=true",
            "--vault-token-cache-size=1000",
            "--store-requeue-interval=2m",
            "--controller-class=team-a",
            "--concurrent=4",
            "--client-qps=20",
            "--provider-qps=10",
            "--metrics-addr=:8088",
            "--metrics-auth=true",
            "--metrics-secure=true",
            "--metrics-cert-dir=/etc/metrics-tls",
            "--metrics-cert-name=server.crt",
            "--metrics-key-name=server.key",
            "--enable-http2=true",
            "--loglevel=debug",
            "--zap-time-encoding=rfc3339",
            "--live-addr=0.0.0.0:8083",
        ])
    );
    assert_binary_accepts(&controller_args)?;
    let controller_role = find(&objects, "ClusterRole", "eso-full-controller");
    let all_verbs = strings(&[
        "get", "list", "watch", "create", "update", "patch", "delete",
    ]);
    for resource in ["configmaps", "applications"] {
        assert!(
            rules(controller_role)
                .iter()
                .any(
                    |(resources, verbs, _)| resources.contains(&resource.to_owned())
                        && verbs == &all_verbs
                ),
            "genericTargets grants {resource}"
        );
    }
    let pod = &controller["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(controller["spec"]["replicas"], 2);
    assert_eq!(
        container["image"],
        "registry.example.com/eso/external-secrets:v9.9.9"
    );
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(container["resources"]["limits"]["memory"], "256Mi");
    assert_eq!(container["securityContext"]["runAsUser"], 65532);
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["port"], "live");
    assert_eq!(
        container["ports"][1],
        json!({"name": "live", "containerPort": 8083, "protocol": "TCP"})
    );
    assert_eq!(container["env"][1], json!({"name": "EXTRA", "value": "1"}));
    assert_eq!(container["volumeMounts"][0]["mountPath"], "/scratch");
    assert_eq!(pod["containers"][1]["name"], "sidecar");
    assert_eq!(
        pod["initContainers"][0]["image"],
        "registry.example.com/busybox:0.1.0"
    );
    assert_eq!(pod["securityContext"], json!({"fsGroup": 2000}));
    assert_eq!(pod["serviceAccountName"], "eso-controller");
    assert_eq!(pod["hostUsers"], false);
    assert_eq!(pod["priorityClassName"], "system-cluster-critical");
    assert_eq!(pod["terminationGracePeriodSeconds"], 45);
    assert_eq!(pod["tolerations"][0]["key"], "dedicated");
    assert_eq!(
        pod["topologySpreadConstraints"][0]["labelSelector"]["matchLabels"],
        json!({"app.kubernetes.io/name": "secrets-operator", "app.kubernetes.io/instance": "full"})
    );
    assert_eq!(
        controller["spec"]["template"]["metadata"]["labels"]["example.com/pod-label"],
        "controller"
    );

    let webhook = find(&objects, "Deployment", "eso-full-webhook");
    let webhook_args = args(webhook);
    assert!(webhook_args.contains(&format!("--dns-name=eso-full-webhook.{ns}.svc")));
    assert!(webhook_args.contains(&"--healthz-addr=:8085".to_owned()));
    assert!(webhook_args.contains(&"--lookahead-interval=720h".to_owned()));
    assert!(webhook_args.contains(&"--metrics-auth=true".to_owned()));
    // webhook.metrics.listen.secure and enableHTTP2 pass upstream's flags (file names relative
    // to certDir, as the controller's).
    for flag in [
        "--metrics-secure=true",
        "--metrics-cert-dir=/etc/webhook-metrics-tls",
        "--metrics-cert-name=tls.crt",
        "--metrics-key-name=tls.key",
        "--enable-http2=true",
    ] {
        assert!(webhook_args.contains(&flag.to_owned()), "webhook: {flag}");
    }
    // --metrics-auth: the controller and the webhook may create TokenReviews and
    // SubjectAccessReviews (the cert controller's metrics stay open here).
    for (role, account) in [
        ("eso-full-metrics-auth", "eso-controller"),
        ("eso-full-webhook-metrics-auth", "eso-webhook-sa"),
    ] {
        let rules = &find(&objects, "ClusterRole", role)["rules"];
        assert_eq!(rules[0]["resources"], json!(["tokenreviews"]));
        assert_eq!(rules[1]["resources"], json!(["subjectaccessreviews"]));
        let binding = find(&objects, "ClusterRoleBinding", role);
        assert_eq!(binding["subjects"][0]["name"], account);
    }
    assert!(!names_of(&objects, "ClusterRole").contains("eso-full-cert-controller-metrics-auth"));
    assert_binary_accepts(&webhook_args)?;
    assert_eq!(webhook["spec"]["replicas"], 3);
    let webhook_pod = &webhook["spec"]["template"]["spec"];
    assert_eq!(
        webhook_pod["containers"][0]["image"],
        "ghcr.io/external-secrets-rs/external-secrets:v9.9.8-ubi"
    );
    assert_eq!(
        webhook_pod["containers"][0]["startupProbe"]["httpGet"]["port"],
        "ready"
    );
    assert_eq!(
        webhook_pod["volumes"][0]["secret"]["secretName"],
        "eso-full-webhook"
    );
    assert_eq!(
        webhook_pod["containers"][0]["volumeMounts"][0]["mountPath"],
        "/var/run/certs"
    );
    assert_eq!(
        webhook["spec"]["template"]["metadata"]["annotations"]["example.com/global"],
        "fallback"
    );
    let webhook_service = find(&objects, "Service", "eso-full-webhook");
    assert_eq!(webhook_service["spec"]["ports"][1]["port"], 9091);
    let configuration = find(
        &objects,
        "ValidatingWebhookConfiguration",
        "secretstore-validate",
    );
    assert_eq!(configuration["webhooks"][0]["failurePolicy"], "Ignore");

    let cert_args = args(find(&objects, "Deployment", "eso-full-cert-controller"));
    assert!(cert_args.contains(&"--enable-leader-election=true".to_owned()));
    assert!(cert_args.contains(&"--crd-requeue-interval=10m".to_owned()));
    // certController.metrics.listen.secure with upstream's default certificate paths.
    for flag in [
        "--metrics-secure=true",
        "--metrics-cert-dir=/etc/tls",
        "--metrics-cert-name=tls.crt",
        "--metrics-key-name=tls.key",
        "--enable-http2=true",
    ] {
        assert!(
            cert_args.contains(&flag.to_owned()),
            "cert controller: {flag}"
        );
    }
    assert_eq!(
        cert_args
            .iter()
            .filter(|arg| arg.starts_with("--crd-names="))
            .collect::<Vec<_>>(),
        [
            "--crd-names=externalsecrets.external-secrets.io",
            "--crd-names=secretstores.external-secrets.io"
        ],
        "no ClusterSecretStore CRD to patch"
    );
    assert_binary_accepts(&cert_args)?;

    assert_eq!(
        names_of(&objects, "PodDisruptionBudget"),
        BTreeSet::from(["eso-full-pdb", "eso-full-webhook-pdb", "eso-certs-pdb"])
    );
    assert_eq!(names_of(&objects, "NetworkPolicy").len(), 3);
    assert_eq!(
        names_of(&objects, "ServiceMonitor"),
        BTreeSet::from([
            "eso-full-metrics",
            "eso-full-webhook-metrics",
            "eso-full-cert-controller-metrics"
        ])
    );
    assert_eq!(
        find(&objects, "Service", "eso-full-metrics")["spec"]["ports"][0]["port"],
        9090
    );
    // Upstream's servicemonitor.yaml: every endpoint scrapes port `metrics` with the values'
    // interval, timeout, honorLabels and relabelings.
    let monitor = find(&objects, "ServiceMonitor", "eso-full-metrics");
    assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
    let endpoint = &monitor["spec"]["endpoints"][0];
    assert_eq!(endpoint["port"], "metrics");
    assert_eq!(endpoint["interval"], "15s");
    assert_eq!(endpoint["scrapeTimeout"], "10s");
    assert_eq!(endpoint["honorLabels"], true);
    assert_eq!(endpoint["relabelings"][0]["targetLabel"], "node");
    assert_eq!(monitor["spec"]["namespaceSelector"]["matchNames"][0], ns);
    assert_eq!(
        names_of(&objects, "ConfigMap"),
        BTreeSet::from([
            "eso-full-dashboard",
            "eso-full-extra",
            "eso-full-extra-text"
        ])
    );
    // grafanaDashboard: the chart's dashboard file, labelled for Grafana's sidecar.
    let dashboard = find(&objects, "ConfigMap", "eso-full-dashboard");
    assert_eq!(dashboard["metadata"]["labels"]["grafana_dashboard"], "yes");
    assert_eq!(dashboard["metadata"]["labels"]["team"], "platform");
    assert_eq!(
        dashboard["metadata"]["annotations"]["grafana_folder"],
        "Security"
    );
    let shipped: Value = serde_json::from_str(
        dashboard["data"]["external-secrets.json"]
            .as_str()
            .unwrap_or_default(),
    )?;
    let file: Value = serde_json::from_str(&std::fs::read_to_string(
        repository().join("charts/external-secrets/monitoring/grafana-dashboard.json"),
    )?)?;
    assert_eq!(shipped, file);
    let lease_role = find(&objects, "Role", "eso-full-leaderelection");
    assert_eq!(rules(lease_role)[0].2, strings(&["eso-full-lock"]));
    let view = find(&objects, "ClusterRole", "eso-full-view");
    assert!(
        view["metadata"]["labels"]
            .get("rbac.authorization.k8s.io/aggregate-to-admin")
            .is_none()
    );
    let controller_grants = granted(find(&objects, "ClusterRole", "eso-full-controller"));
    assert!(!controller_grants.contains("clusterpushsecrets"));
    assert!(!controller_grants.contains("clustersecretstores"));
    let cert_role = find(&objects, "ClusterRole", "eso-full-cert-controller");
    assert_eq!(
        rules(cert_role)[1].2,
        strings(&[
            "externalsecrets.external-secrets.io",
            "secretstores.external-secrets.io"
        ]),
        "only the CRDs the chart installs"
    );
    assert_secrets_only_for_the_controller(&objects, "eso-full-controller");

    let crds = names_of(&objects, "CustomResourceDefinition");
    assert_eq!(crds.len(), 23);
    assert!(!crds.contains("clusterpushsecrets.external-secrets.io"));
    assert!(!crds.contains("clustersecretstores.external-secrets.io"));
    let external_secrets = find(
        &objects,
        "CustomResourceDefinition",
        "externalsecrets.external-secrets.io",
    );
    assert_eq!(
        external_secrets["metadata"]["annotations"]["example.com/owner"],
        "platform"
    );
    assert_eq!(external_secrets["spec"]["versions"][1]["name"], "v1beta1");
    assert_eq!(external_secrets["spec"]["versions"][1]["served"], true);

    dry_run_apply(&cluster, &objects).await?;
    namespace.delete().await
}

#[tokio::test]
async fn scoped_rbac_and_cert_manager_values() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "helm-scoped").await?;
    let ns = namespace.name.as_str();
    let values = values_file("scoped-values.yaml", &[("scopedNamespace", ns)])?;
    let objects = render(&values, "scoped", ns, ns)
        .await?
        .map_err(anyhow::Error::msg)?;

    assert!(
        names_of(&objects, "CustomResourceDefinition").is_empty(),
        "installCRDs: false"
    );
    assert!(
        names_of(&objects, "ClusterRole").is_empty(),
        "scopedRBAC: Roles only"
    );
    assert_eq!(
        names_of(&objects, "ClusterRoleBinding"),
        BTreeSet::from(["scoped-external-secrets-auth-delegator"])
    );
    let role = find(&objects, "Role", "scoped-external-secrets-controller");
    assert_eq!(text(role, "/metadata/namespace"), ns);
    assert_eq!(
        granted(role),
        [
            "externalsecrets",
            "externalsecrets/status",
            "secretstores",
            "secretstores/status",
            "secrets",
            "configmaps",
            "serviceaccounts",
            "events",
            "passwords",
            "uuids",
            "fakes",
            "sshkeys",
            "vaultdynamicsecrets",
            "stssessiontokens",
            "ecrauthorizationtokens",
            "acraccesstokens",
            "gcraccesstokens",
            "webhooks",
            "mfas"
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<BTreeSet<_>>(),
        "no cluster-scoped kinds, namespaces, finalizers, tokens or PushSecrets"
    );
    let controller = find(&objects, "Deployment", "scoped-external-secrets");
    let controller_args = args(controller);
    assert_eq!(
        &controller_args[..5],
        strings(&[
            &format!("--namespace={ns}"),
            "--enable-cluster-store-reconciler=false",
            "--enable-cluster-external-secret-reconciler=false",
            "--enable-cluster-push-secret-reconciler=false",
            "--enable-push-secret-reconciler=false",
        ])
    );
    assert_binary_accepts(&controller_args)?;
    let pod = &controller["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "existing-controller-sa");
    assert_eq!(
        pod["containers"][0]["image"],
        "mirror.example.com/external-secrets:v0.1.0"
    );
    assert_eq!(pod["imagePullSecrets"][0]["name"], "global-registry");
    assert_eq!(pod["nodeSelector"]["kubernetes.io/os"], "linux");
    assert_eq!(pod["tolerations"][0]["key"], "global");
    assert!(
        pod.get("securityContext").is_none(),
        "OpenShift assigns fsGroup and runAsGroup"
    );
    assert!(
        pod["containers"][0]["securityContext"]
            .get("runAsUser")
            .is_none()
    );
    assert_eq!(
        controller["spec"]["template"]["metadata"]["labels"]["example.com/global"],
        "true"
    );
    assert_eq!(
        names_of(&objects, "ServiceAccount"),
        BTreeSet::from(["external-secrets-webhook"])
    );

    assert!(!names_of(&objects, "Deployment").contains("scoped-external-secrets-cert-controller"));
    assert!(
        names_of(&objects, "Secret").is_empty(),
        "cert-manager writes the webhook Secret"
    );
    let certificate = find(&objects, "Certificate", "scoped-external-secrets-webhook");
    assert_eq!(
        certificate["spec"]["secretName"],
        "scoped-external-secrets-webhook"
    );
    assert_eq!(certificate["spec"]["issuerRef"]["kind"], "ClusterIssuer");
    assert_eq!(certificate["spec"]["revisionHistoryLimit"], 3);
    assert_eq!(
        certificate["spec"]["dnsNames"][2],
        format!("scoped-external-secrets-webhook.{ns}.svc")
    );
    let configuration = find(
        &objects,
        "ValidatingWebhookConfiguration",
        "externalsecret-validate",
    );
    assert_eq!(
        configuration["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        format!("{ns}/scoped-external-secrets-webhook")
    );

    dry_run_apply(&cluster, &objects).await?;
    namespace.delete().await
}

#[tokio::test]
async fn bitwarden_sdk_server_values_deploy_the_sub_chart() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "helm-bitwarden").await?;
    let ns = namespace.name.as_str();
    let values = json!({"bitwarden-sdk-server": {
        "enabled": true,
        "namespaceOverride": ns,
        "image": {"tls": {"secretName": "sdk-certs"}},
        "podLabels": {"team": "secrets"},
    }});
    let objects = render(&values, "eso", "default", ns)
        .await?
        .map_err(anyhow::Error::msg)?;
    let server = find(&objects, "Deployment", "bitwarden-sdk-server");
    assert_eq!(text(server, "/metadata/namespace"), ns);
    let pod = &server["spec"]["template"];
    assert_eq!(text(pod, "/metadata/labels/team"), "secrets");
    assert_eq!(
        text(pod, "/metadata/labels/app.kubernetes.io~1name"),
        "bitwarden-sdk-server"
    );
    let container = &pod["spec"]["containers"][0];
    assert_eq!(
        text(container, "/image"),
        "ghcr.io/external-secrets/bitwarden-sdk-server:v0.6.0"
    );
    assert!(container.get("args").is_none(), "HTTPS unless tls is off");
    assert_eq!(container["ports"][0]["containerPort"], 9998);
    assert_eq!(text(container, "/readinessProbe/httpGet/path"), "/ready");
    assert_eq!(text(container, "/livenessProbe/httpGet/scheme"), "HTTPS");
    assert_eq!(text(container, "/volumeMounts/0/mountPath"), "/certs");
    let volume = &pod["spec"]["volumes"][0]["secret"];
    assert_eq!(text(volume, "/secretName"), "sdk-certs");
    assert_eq!(text(volume, "/items/0/path"), "cert.pem");
    assert_eq!(
        text(pod, "/spec/serviceAccountName"),
        "bitwarden-sdk-server"
    );
    let service = find(&objects, "Service", "bitwarden-sdk-server");
    assert_eq!(text(service, "/metadata/namespace"), ns);
    assert_eq!(service["spec"]["ports"][0]["port"], 9998);
    assert_eq!(
        service["spec"]["selector"],
        json!({"app.kubernetes.io/name": "bitwarden-sdk-server", "app.kubernetes.io/instance": "eso"})
    );
    find(&objects, "ServiceAccount", "bitwarden-sdk-server");
    dry_run_apply(&cluster, &objects).await?;

    // Without TLS the server is started with --insecure and mounts no certificate.
    let plain =
        json!({"bitwarden-sdk-server": {"enabled": true, "image": {"tls": {"enabled": false}}}});
    let objects = render(&plain, "plain", "bitwarden-plain", "bitwarden-plain")
        .await?
        .map_err(anyhow::Error::msg)?;
    let server = find(&objects, "Deployment", "bitwarden-sdk-server");
    assert_eq!(args(server), strings(&["--insecure"]));
    let pod = &server["spec"]["template"]["spec"];
    assert!(pod.get("volumes").is_none());
    assert_eq!(
        text(pod, "/containers/0/livenessProbe/httpGet/scheme"),
        "HTTP"
    );
    namespace.delete().await
}

#[tokio::test]
async fn unsupported_values_fail_naming_each_key() -> anyhow::Result<()> {
    let values = values_file("unsupported-values.yaml", &[])?;
    let message = match render(&values, "unsupported", "default", "unsupported").await? {
        Ok(_) => anyhow::bail!("the chart rendered values it cannot honour"),
        Err(message) => message,
    };
    for key in [
        "processClusterPushSecret=true with processPushSecret=false",
        "global.compatibility.openshift.adaptSecurityContext=\"sometimes\"",
    ] {
        assert!(message.contains(key), "{key} is not named in: {message}");
    }
    Ok(())
}

#[test]
fn chart_crd_templates_are_in_sync_with_crds_manifests() -> anyhow::Result<()> {
    let output = std::process::Command::new("bash")
        .arg(repository().join("scripts/sync-chart-crds.sh"))
        .arg("--check")
        .output()?;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}
