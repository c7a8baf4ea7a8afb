//! CVE-2024-45041 at run time: the cert controller, running as a ServiceAccount bound to the
//! chart's own cert controller RBAC (default values), does its whole job (fills its Secret with
//! a CA and serving certificate, injects the CA into its webhook configuration and CRD) while
//! its token is refused every other Secret of its namespace: upstream's chart let it read all
//! Secrets of the cluster.
//!
//! The RBAC objects are the chart's, rendered with default values (see `helm_chart.rs`) for a
//! release named uniquely for this run into the test's namespace, so the ClusterRole and
//! ClusterRoleBinding do not collide on shared clusters and are deleted at the end. The only
//! change: the ClusterRole's `resourceNames` for CRDs and webhook configurations (the chart's
//! own `externalsecrets.external-secrets.io`, `externalsecret-validate`, ...) name this run's
//! stand-ins instead, so a real installation's objects are never touched.
//!
//! Cluster-agnostic: on a real cluster RBAC is kube-apiserver's, on the loopback server its
//! ServiceAccount authorization (`e2e/loopback/src/authz.rs`). The negative control at the end
//! removes the Role's `resourceNames` and sees the other Secret become readable: the refusal is
//! the protection's doing, not a token that can read nothing.

#[path = "cert_controller/fixtures.rs"]
mod fixtures;
#[path = "helm_chart/render.rs"]
#[allow(dead_code)] // shared with helm_chart.rs; this test only renders
mod render;

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use base64::Engine as _;
use e2e::harness::{
    ComponentProcess, TestCluster, TestCrd, TestNamespace, create_manifest as create, eventually,
    free_local_address, is_not_found, unique_name,
};
use fixtures::{ca_bundles, certificates, conversion_crd, webhook_configuration};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use render::render;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
/// What the other Secret holds; it must never reach the cert controller.
const OTHER_VALUE: &str = "not-for-the-cert-controller";

/// The string at `pointer`, or "" (used by `render.rs` too).
fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The rendered object of `kind` named `name`.
fn rendered(objects: &[Value], kind: &str, name: &str) -> anyhow::Result<Value> {
    objects
        .iter()
        .find(|object| text(object, "/kind") == kind && text(object, "/metadata/name") == name)
        .cloned()
        .with_context(|| format!("the chart renders no {kind} {name}"))
}

/// Points the ClusterRole's named rules for `resource` at `name` instead of the chart's objects.
fn rename_targets(role: &mut Value, resource: &str, name: &str) -> anyhow::Result<()> {
    let mut renamed = 0;
    for rule in role["rules"].as_array_mut().into_iter().flatten() {
        let names_resource = rule["resources"]
            .as_array()
            .is_some_and(|resources| resources.iter().any(|r| r == resource));
        if names_resource && rule.get("resourceNames").is_some() {
            rule["resourceNames"] = json!([name]);
            renamed += 1;
        }
    }
    anyhow::ensure!(renamed > 0, "the ClusterRole names no {resource}");
    Ok(())
}

/// A kubeconfig for the cluster under test (same server and CA) that authenticates with `token`.
fn token_kubeconfig(cluster: &TestCluster, token: &str, path: &Path) -> anyhow::Result<()> {
    let server = cluster.api_server()?;
    let mut entry = json!({"server": server.url});
    if let Some(pem) = &server.ca_pem {
        entry["certificate-authority-data"] =
            base64::engine::general_purpose::STANDARD.encode(pem).into();
    }
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": entry}],
        "users": [{"name": "cert-controller", "user": {"token": token}}],
        "contexts": [{"name": "cert-controller", "context": {"cluster": "cluster", "user": "cert-controller"}}],
        "current-context": "cert-controller",
    });
    std::fs::write(path, serde_yaml::to_string(&kubeconfig)?)?;
    Ok(())
}

async fn client_for(path: &Path) -> anyhow::Result<kube::Client> {
    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(path)?,
        &KubeConfigOptions::default(),
    )
    .await?;
    Ok(kube::Client::try_from(config)?)
}

/// The API's code, reason and message for a request that must have been refused (a success is reported
/// without the object, which is another Secret's content).
fn refusal<T>(result: Result<T, kube::Error>) -> anyhow::Result<(u16, String, String)> {
    match result {
        Err(kube::Error::Api(status)) => {
            Ok((status.code, status.reason.clone(), status.message.clone()))
        }
        Err(error) => anyhow::bail!("expected the API to refuse, got {error}"),
        Ok(_) => anyhow::bail!("expected the API to refuse, it answered"),
    }
}

#[tokio::test]
async fn cert_controller_under_the_charts_rbac_reads_only_its_secret() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "certs-rbac").await?;
    let ns = namespace.name.as_str();
    let release = unique_name("rbac");
    let objects = render(&json!({}), &release, ns, ns)
        .await?
        .map_err(anyhow::Error::msg)?;
    let fullname = format!("{release}-external-secrets");
    let role_name = format!("{fullname}-cert-controller");
    let deployment = rendered(&objects, "Deployment", &role_name)?;
    let account_name = text(&deployment, "/spec/template/spec/serviceAccountName").to_owned();
    let account = rendered(&objects, "ServiceAccount", &account_name)?;
    let own_secret = rendered(&objects, "Secret", &format!("{fullname}-webhook"))?;
    let secret_name = text(&own_secret, "/metadata/name").to_owned();

    // This run's stand-ins for the chart's webhook configurations and CRDs.
    let run_label = unique_name("certs-rbac");
    let configuration_name = unique_name("e2e-rbac-validate");
    let configurations: Api<ValidatingWebhookConfiguration> = Api::all(cluster.client.clone());
    configurations
        .create(
            &PostParams::default(),
            &webhook_configuration(&configuration_name, &run_label, true)?,
        )
        .await?;
    let crd = TestCrd::create(&cluster, conversion_crd()).await?;

    // The chart's ServiceAccount, its (empty) webhook Secret and its cert controller RBAC.
    let admin = cluster.client.clone();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), ns);
    create(&accounts, account).await?;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), ns);
    create(&secrets, own_secret).await?;
    let other: Secret = serde_json::from_value(json!({
        "metadata": {"name": "other"},
        "stringData": {"password": OTHER_VALUE},
    }))?;
    secrets.create(&PostParams::default(), &other).await?;
    let mut cluster_role = rendered(&objects, "ClusterRole", &role_name)?;
    rename_targets(&mut cluster_role, "customresourcedefinitions", &crd.name)?;
    rename_targets(
        &mut cluster_role,
        "validatingwebhookconfigurations",
        &configuration_name,
    )?;
    let cluster_roles: Api<ClusterRole> = Api::all(admin.clone());
    create(&cluster_roles, cluster_role).await?;
    let cluster_bindings: Api<ClusterRoleBinding> = Api::all(admin.clone());
    create(
        &cluster_bindings,
        rendered(&objects, "ClusterRoleBinding", &role_name)?,
    )
    .await?;
    let roles: Api<Role> = Api::namespaced(admin.clone(), ns);
    create(&roles, rendered(&objects, "Role", &role_name)?).await?;
    let bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), ns);
    create(&bindings, rendered(&objects, "RoleBinding", &role_name)?).await?;

    // Its token, in a kubeconfig of its own.
    let token = accounts
        .create_token_request(
            &account_name,
            &PostParams::default(),
            &TokenRequest::default(),
        )
        .await?
        .status
        .map(|status| status.token)
        .filter(|token| !token.is_empty())
        .context("the TokenRequest returned no token")?;
    let kubeconfig = std::env::temp_dir().join(format!(
        "eso-e2e-cert-rbac-{}-{release}.kubeconfig",
        std::process::id()
    ));
    token_kubeconfig(&cluster, &token, &kubeconfig)?;

    // The chart's cert controller arguments, with local probe ports and this run's stand-ins.
    let mut args: Vec<String> = serde_json::from_value(
        deployment["spec"]["template"]["spec"]["containers"][0]["args"].clone(),
    )?;
    args.retain(|arg| !arg.starts_with("--metrics-addr=") && !arg.starts_with("--healthz-addr="));
    args.extend([
        format!("--metrics-addr={}", free_local_address()?),
        format!("--healthz-addr={}", free_local_address()?),
        format!("--crd-names={}", crd.name),
        format!(
            "--webhook-config-selector=external-secrets.io/component=webhook,e2e-run={run_label}"
        ),
    ]);
    anyhow::ensure!(
        args.contains(&format!("--secret-name={secret_name}"))
            && args.contains(&format!("--secret-namespace={ns}")),
        "the chart's cert controller writes {secret_name} in {ns}: {args:?}"
    );
    let mut controller = ComponentProcess::start(&args, Some(&kubeconfig))?;

    // It does its job under that RBAC.
    let data = eventually(WAIT, "the certificate Secret", || {
        let running = controller.ensure_running();
        let secrets = secrets.clone();
        let secret_name = secret_name.clone();
        async move {
            running?;
            certificates(&secrets, &secret_name).await
        }
    })
    .await?;
    let ca = data["ca.crt"].clone();
    eventually(
        WAIT,
        "the CA bundle in the webhook configuration",
        || async {
            let config = configurations.get(&configuration_name).await?;
            Ok((ca_bundles(&config)[0].as_deref() == Some(ca.as_slice())).then_some(()))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))?;
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    eventually(
        WAIT,
        "the CA bundle in the CRD's conversion webhook",
        || async {
            let bundle = crds
                .get(&crd.name)
                .await?
                .spec
                .conversion
                .and_then(|conversion| conversion.webhook)
                .and_then(|webhook| webhook.client_config)
                .and_then(|config| config.ca_bundle);
            Ok((bundle.map(|bundle| bundle.0) == Some(ca.clone())).then_some(()))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))?;

    // Its token reads its own Secret, and is refused any other and the list.
    let as_controller: Api<Secret> = Api::namespaced(client_for(&kubeconfig).await?, ns);
    as_controller.get(&secret_name).await?;
    let forbidden = (403, "Forbidden".to_owned());
    let (code, reason, message) = refusal(as_controller.get("other").await)?;
    assert_eq!((code, reason), forbidden);
    // kube-apiserver's wording (some clusters append their authorizers' reasons).
    let expected = format!(
        "secrets \"other\" is forbidden: User \"system:serviceaccount:{ns}:{account_name}\" \
         cannot get resource \"secrets\" in API group \"\" in the namespace \"{ns}\""
    );
    assert!(message.starts_with(&expected), "{message}");
    let (code, reason, _) = refusal(as_controller.list(&ListParams::default()).await)?;
    assert_eq!((code, reason), forbidden);
    let log = controller.log();
    assert!(
        !log.contains("\"other\"") && !log.contains("/other") && !log.contains(OTHER_VALUE),
        "the cert controller's log mentions the other Secret:\n{log}"
    );
    controller.ensure_running()?;
    let status = controller.stop().await?;
    assert!(status.success(), "cert controller exited with {status}");

    // The negative control: the chart's Role without its resourceNames lets the same token
    // read the other Secret (real clusters apply RBAC changes within moments).
    let mut role = roles.get(&role_name).await?;
    let rule = role
        .rules
        .as_mut()
        .and_then(|rules| rules.first_mut())
        .filter(|rule| {
            rule.resources.as_deref() == Some(&["secrets".to_owned()][..])
                && rule.resource_names.as_deref() == Some(&[secret_name.clone()][..])
        })
        .context("the chart's Role's first rule is its Secret by name")?;
    rule.resource_names = None;
    roles
        .replace(&role_name, &PostParams::default(), &role)
        .await?;
    let read = eventually(
        WAIT,
        "the other Secret readable without resourceNames",
        || async {
            match as_controller.get("other").await {
                Ok(secret) => Ok(Some(secret)),
                Err(kube::Error::Api(status)) if status.code == 403 => Ok(None),
                Err(error) => Err(error.into()),
            }
        },
    )
    .await?;
    assert_eq!(read.metadata.name.as_deref(), Some("other"));

    cluster_bindings
        .delete(&role_name, &DeleteParams::default())
        .await?;
    cluster_roles
        .delete(&role_name, &DeleteParams::default())
        .await?;
    match configurations
        .delete(&configuration_name, &DeleteParams::default())
        .await
    {
        Ok(_) => {}
        Err(error) if is_not_found(&error) => {}
        Err(error) => return Err(error.into()),
    }
    let _ = std::fs::remove_file(&kubeconfig);
    crd.delete().await?;
    namespace.delete().await
}
