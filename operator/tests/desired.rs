//! The "desired objects from config" function, field by field (the upstream operator's table
//! cases as checklist): each test builds a config, computes the objects and checks the effect.

use external_secrets_operator::api::{ExternalSecretsConfig, ExternalSecretsManager};
use external_secrets_operator::desired::{Environment, desired, kind, name};
use serde_json::{Value, json};

fn config(spec: Value) -> ExternalSecretsConfig {
    serde_json::from_value(json!({
        "apiVersion": "operator.openshift.io/v1alpha1", "kind": "ExternalSecretsConfig",
        "metadata": {"name": "cluster"}, "spec": spec,
    }))
    .expect("a config")
}

fn manager(spec: Value) -> ExternalSecretsManager {
    serde_json::from_value(json!({
        "apiVersion": "operator.openshift.io/v1alpha1", "kind": "ExternalSecretsManager",
        "metadata": {"name": "cluster"}, "spec": spec,
    }))
    .expect("a manager")
}

fn environment() -> Environment {
    Environment {
        image: Some("example.com/eso:test".into()),
        bitwarden_image: "example.com/bitwarden:test".into(),
        proxy: None,
    }
}

fn objects(spec: Value) -> Vec<Value> {
    desired(&config(spec), None, &environment()).expect("desired objects")
}

fn find<'a>(objects: &'a [Value], wanted_kind: &str, wanted: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|object| kind(object) == wanted_kind && name(object) == wanted)
}

fn get<'a>(objects: &'a [Value], wanted_kind: &str, wanted: &str) -> &'a Value {
    find(objects, wanted_kind, wanted).unwrap_or_else(|| panic!("no {wanted_kind} {wanted}"))
}

fn pod<'a>(objects: &'a [Value], deployment: &str) -> &'a Value {
    &get(objects, "Deployment", deployment)["spec"]["template"]["spec"]
}

fn args(objects: &[Value], deployment: &str) -> Vec<String> {
    serde_json::from_value(pod(objects, deployment)["containers"][0]["args"].clone()).expect("args")
}

fn names(objects: &[Value], wanted_kind: &str) -> Vec<String> {
    objects
        .iter()
        .filter(|object| kind(object) == wanted_kind)
        .map(|object| name(object).to_owned())
        .collect()
}

const DEPLOYMENTS: [&str; 3] = [
    "external-secrets",
    "external-secrets-webhook",
    "external-secrets-cert-controller",
];

#[test]
fn default_config_installs_the_chart_with_cert_controller() {
    let objects = objects(json!({}));
    assert_eq!(kind(&objects[0]), "Namespace");
    assert_eq!(name(&objects[0]), "external-secrets");
    let mut deployments = names(&objects, "Deployment");
    deployments.sort();
    let mut expected = DEPLOYMENTS.map(String::from).to_vec();
    expected.sort();
    assert_eq!(deployments, expected);
    assert!(find(&objects, "Secret", "external-secrets-webhook").is_some());
    assert!(find(&objects, "NetworkPolicy", "deny-all-traffic").is_some());
    assert!(names(&objects, "Certificate").is_empty());
    assert_eq!(
        names(&objects, "ValidatingWebhookConfiguration").len(),
        2,
        "both webhook configurations"
    );
    assert!(!names(&objects, "CustomResourceDefinition").is_empty());
    for object in &objects {
        assert_eq!(
            object["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "external-secrets-operator",
            "{} {}",
            kind(object),
            name(object)
        );
        if kind(object) != "Namespace" && !object["metadata"]["namespace"].is_null() {
            assert_eq!(object["metadata"]["namespace"], "external-secrets");
        }
    }
    for deployment in DEPLOYMENTS {
        assert_eq!(
            pod(&objects, deployment)["containers"][0]["image"],
            "example.com/eso:test"
        );
        assert!(args(&objects, deployment).contains(&"--loglevel=error".to_owned()));
    }
}

#[test]
fn log_level_maps_monotonically_and_manager_is_the_fallback() {
    for (level, expected) in [
        (1, "error"),
        (2, "warn"),
        (3, "info"),
        (4, "debug"),
        (5, "trace"),
    ] {
        let objects = objects(json!({"appConfig": {"logLevel": level}}));
        for deployment in DEPLOYMENTS {
            assert!(args(&objects, deployment).contains(&format!("--loglevel={expected}")));
        }
    }
    let global = manager(json!({"globalConfig": {"logLevel": 4}}));
    let objects = desired(&config(json!({})), Some(&global), &environment()).expect("objects");
    assert!(args(&objects, "external-secrets").contains(&"--loglevel=debug".to_owned()));
    let objects = desired(
        &config(json!({"appConfig": {"logLevel": 3}})),
        Some(&global),
        &environment(),
    )
    .expect("objects");
    assert!(args(&objects, "external-secrets").contains(&"--loglevel=info".to_owned()));
}

#[test]
fn operating_namespace_restricts_the_controller() {
    let objects = objects(json!({"appConfig": {"operatingNamespace": "team-a"}}));
    let args = args(&objects, "external-secrets");
    for flag in [
        "--namespace=team-a",
        "--enable-cluster-store-reconciler=false",
        "--enable-cluster-external-secret-reconciler=false",
    ] {
        assert!(args.contains(&flag.to_owned()), "{flag} in {args:?}");
    }
    let default = objects_args_default();
    assert!(!default.iter().any(|arg| arg.starts_with("--namespace=")));
}

fn objects_args_default() -> Vec<String> {
    args(&objects(json!({})), "external-secrets")
}

#[test]
fn certificate_check_interval_reaches_the_webhook() {
    let objects =
        objects(json!({"appConfig": {"webhookConfig": {"certificateCheckInterval": "10m"}}}));
    assert!(
        args(&objects, "external-secrets-webhook").contains(&"--check-interval=10m".to_owned())
    );
    let objects = objects_default();
    assert!(args(&objects, "external-secrets-webhook").contains(&"--check-interval=5m".to_owned()));
}

fn objects_default() -> Vec<Value> {
    objects(json!({}))
}

#[test]
fn scheduling_and_resources_apply_to_every_deployment() {
    let spec = json!({"appConfig": {
        "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "64Mi"}},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"disk": "ssd"},
    }});
    let objects = objects(spec.clone());
    for deployment in DEPLOYMENTS {
        let pod = pod(&objects, deployment);
        assert_eq!(pod["nodeSelector"], spec["appConfig"]["nodeSelector"]);
        assert_eq!(pod["tolerations"], spec["appConfig"]["tolerations"]);
        assert_eq!(pod["affinity"], spec["appConfig"]["affinity"]);
        assert_eq!(
            pod["containers"][0]["resources"],
            spec["appConfig"]["resources"]
        );
    }
    // Removed from the config, they are absent from the desired object (server-side apply then
    // removes them from the live one).
    let objects = objects_default();
    let pod = pod(&objects, "external-secrets");
    for field in ["nodeSelector", "tolerations", "affinity"] {
        assert!(pod[field].is_null(), "{field} absent");
    }
}

#[test]
fn manager_globals_are_fallbacks_and_config_wins() {
    let global = manager(json!({"globalConfig": {
        "nodeSelector": {"from": "manager"},
        "labels": {"team": "platform", "shared": "manager"},
    }}));
    let esc = config(json!({"controllerConfig": {"labels": {"shared": "config"}}}));
    let objects = desired(&esc, Some(&global), &environment()).expect("objects");
    assert_eq!(
        pod(&objects, "external-secrets")["nodeSelector"],
        json!({"from": "manager"})
    );
    let labels = &get(&objects, "Deployment", "external-secrets")["metadata"]["labels"];
    assert_eq!(labels["team"], "platform");
    assert_eq!(labels["shared"], "config");
    let esc = config(json!({"appConfig": {"nodeSelector": {"from": "config"}}}));
    let objects = desired(&esc, Some(&global), &environment()).expect("objects");
    assert_eq!(
        pod(&objects, "external-secrets")["nodeSelector"],
        json!({"from": "config"})
    );
}

#[test]
fn reserved_labels_are_skipped_and_annotations_reach_pod_templates() {
    let objects = objects(json!({"controllerConfig": {
        "labels": {"app": "mine", "app.kubernetes.io/name": "x", "team": "a"},
        "annotations": {"example.com/owner": "team-a"},
    }}));
    let deployment = get(&objects, "Deployment", "external-secrets");
    assert_eq!(deployment["metadata"]["labels"]["app"], "external-secrets");
    assert_eq!(
        deployment["metadata"]["labels"]["app.kubernetes.io/name"],
        "external-secrets"
    );
    assert_eq!(deployment["metadata"]["labels"]["team"], "a");
    assert_eq!(
        deployment["metadata"]["annotations"]["example.com/owner"],
        "team-a"
    );
    assert_eq!(
        deployment["spec"]["template"]["metadata"]["annotations"]["example.com/owner"],
        "team-a"
    );
    assert_eq!(
        get(&objects, "Service", "external-secrets-webhook")["metadata"]["annotations"]["example.com/owner"],
        "team-a"
    );
}

#[test]
fn proxy_sets_env_ca_bundle_and_egress_policy() {
    let objects = objects(json!({"appConfig": {"proxy": {
        "httpProxy": "http://proxy.example.com:3128",
        "httpsProxy": "http://proxy.example.com:3129",
        "noProxy": ".cluster.local",
    }}}));
    for deployment in DEPLOYMENTS {
        let container = &pod(&objects, deployment)["containers"][0];
        let env: Vec<(String, String)> = container["env"]
            .as_array()
            .expect("env")
            .iter()
            .map(|var| {
                (
                    var["name"].as_str().unwrap_or("").to_owned(),
                    var["value"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        for (key, value) in [
            ("HTTP_PROXY", "http://proxy.example.com:3128"),
            ("http_proxy", "http://proxy.example.com:3128"),
            ("HTTPS_PROXY", "http://proxy.example.com:3129"),
            ("NO_PROXY", ".cluster.local"),
            ("no_proxy", ".cluster.local"),
        ] {
            assert!(
                env.contains(&(key.into(), value.into())),
                "{deployment}: {key}"
            );
        }
        assert!(
            container["volumeMounts"]
                .as_array()
                .expect("mounts")
                .iter()
                .any(|mount| mount["mountPath"] == "/etc/pki/tls/certs")
        );
    }
    assert!(find(&objects, "ConfigMap", "external-secrets-trusted-ca-bundle").is_some());
    let policy = get(&objects, "NetworkPolicy", "eso-proxy-egress");
    assert_eq!(
        policy["spec"]["egress"][0]["ports"],
        json!([{"protocol": "TCP", "port": 3128}, {"protocol": "TCP", "port": 3129}])
    );
    // Unmanaged: no policy; no proxy at all: no env, no ConfigMap.
    let unmanaged = objects_with_proxy("Unmanaged");
    assert!(find(&unmanaged, "NetworkPolicy", "eso-proxy-egress").is_none());
    let none = objects_default();
    assert!(find(&none, "ConfigMap", "external-secrets-trusted-ca-bundle").is_none());
    let env = &pod(&none, "external-secrets")["containers"][0]["env"];
    assert!(!env.to_string().contains("HTTP_PROXY"));
}

fn objects_with_proxy(provisioning: &str) -> Vec<Value> {
    objects(
        json!({"appConfig": {"proxy": {"httpProxy": "http://p:3128", "networkPolicyProvisioning": provisioning}}}),
    )
}

#[test]
fn operator_environment_proxy_is_the_last_fallback() {
    let mut environment = environment();
    environment.proxy =
        Some(serde_json::from_value(json!({"httpsProxy": "https://corp:8443"})).expect("proxy"));
    let objects = desired(&config(json!({})), None, &environment).expect("objects");
    assert!(
        pod(&objects, "external-secrets")["containers"][0]["env"]
            .to_string()
            .contains("https://corp:8443")
    );
    let policy = get(&objects, "NetworkPolicy", "eso-proxy-egress");
    assert_eq!(policy["spec"]["egress"][0]["ports"][0]["port"], 8443);
}

#[test]
fn cert_manager_mode_replaces_the_cert_controller() {
    let objects = objects(
        json!({"controllerConfig": {"certProvider": {"certManager": {
            "mode": "Enabled",
            "issuerRef": {"name": "my-ca", "kind": "ClusterIssuer"},
            "certificateDuration": "2160h",
        }}}}),
    );
    assert!(find(&objects, "Deployment", "external-secrets-cert-controller").is_none());
    assert!(find(&objects, "ClusterRole", "external-secrets-cert-controller").is_none());
    let certificate = get(&objects, "Certificate", "external-secrets-webhook");
    assert_eq!(
        certificate["spec"]["issuerRef"],
        json!({"name": "my-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"})
    );
    assert_eq!(certificate["spec"]["duration"], "2160h");
    assert_eq!(certificate["spec"]["renewBefore"], "30m");
    // The webhook configurations always get the CA from cert-manager (nothing else fills it).
    for webhook in names(&objects, "ValidatingWebhookConfiguration") {
        let object = get(&objects, "ValidatingWebhookConfiguration", &webhook);
        assert_eq!(
            object["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            "external-secrets/external-secrets-webhook"
        );
    }
    // CRDs only with injectAnnotations "true".
    let crd = objects
        .iter()
        .find(|object| kind(object) == "CustomResourceDefinition")
        .expect("a CRD");
    assert!(crd["metadata"]["annotations"].is_null());
    let injected = objects_injected();
    let crd = injected
        .iter()
        .find(|object| kind(object) == "CustomResourceDefinition")
        .expect("a CRD");
    assert_eq!(
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "external-secrets/external-secrets-webhook"
    );
}

fn objects_injected() -> Vec<Value> {
    objects(
        json!({"controllerConfig": {"certProvider": {"certManager": {
            "mode": "Enabled", "injectAnnotations": "true", "issuerRef": {"name": "ca"},
        }}}}),
    )
}

#[test]
fn bitwarden_plugin_adds_its_server() {
    let objects = objects(json!({"plugins": {"bitwardenSecretManagerProvider": {
        "mode": "Enabled", "secretRef": {"name": "bw-tls"},
    }}}));
    assert!(find(&objects, "ServiceAccount", "bitwarden-sdk-server").is_some());
    let service = get(&objects, "Service", "bitwarden-sdk-server");
    assert_eq!(service["spec"]["ports"][0]["protocol"], "TCP");
    let pod = pod(&objects, "bitwarden-sdk-server");
    assert_eq!(pod["containers"][0]["image"], "example.com/bitwarden:test");
    assert_eq!(pod["volumes"][0]["secret"]["secretName"], "bw-tls");
    assert!(names(&objects, "Certificate").is_empty());
    let egress = get(
        &objects,
        "NetworkPolicy",
        "allow-external-secrets-to-bitwarden-sdk-server",
    );
    assert_eq!(
        egress["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/name"],
        "external-secrets"
    );
    assert_eq!(egress["spec"]["egress"][0]["ports"][0]["port"], 9998);
    let disabled = objects_default();
    assert!(find(&disabled, "Deployment", "bitwarden-sdk-server").is_none());
    assert!(
        find(
            &disabled,
            "NetworkPolicy",
            "allow-external-secrets-to-bitwarden-sdk-server"
        )
        .is_none()
    );
    // With cert-manager and no Secret, cert-manager issues it.
    let issued = self::objects(json!({
        "plugins": {"bitwardenSecretManagerProvider": {"mode": "Enabled"}},
        "controllerConfig": {"certProvider": {"certManager": {"mode": "Enabled", "issuerRef": {"name": "ca"}}}},
    }));
    assert!(find(&issued, "Certificate", "bitwarden-tls-certs").is_some());
}

#[test]
fn custom_network_policies_are_named_per_component() {
    let egress = json!([{"ports": [{"protocol": "TCP", "port": 443}]}]);
    let objects = objects(json!({
        "plugins": {"bitwardenSecretManagerProvider": {"mode": "Enabled", "secretRef": {"name": "s"}}},
        "controllerConfig": {"networkPolicies": [
            {"name": "egress", "componentName": "ExternalSecretsCoreController", "egress": egress},
            {"name": "egress", "componentName": "BitwardenSDKServer", "egress": egress},
        ]},
    }));
    let core = get(&objects, "NetworkPolicy", "eso-user-egress");
    assert_eq!(
        core["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/name"],
        "external-secrets"
    );
    assert_eq!(core["spec"]["policyTypes"], json!(["Egress"]));
    assert_eq!(core["spec"]["egress"], egress);
    let bitwarden = get(&objects, "NetworkPolicy", "eso-user-egress-bitwarden");
    assert_eq!(
        bitwarden["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/name"],
        "bitwarden-sdk-server"
    );
}

#[test]
fn component_configs_set_history_and_override_env_on_the_main_container() {
    let objects = objects(json!({"controllerConfig": {"componentConfigs": [
        {"componentName": "Webhook", "deploymentConfigs": {"revisionHistoryLimit": 3},
         "overrideEnv": [{"name": "RUST_BACKTRACE", "value": "1"}, {"name": "POD_NAME", "value": "fixed"}]},
    ]}}));
    let webhook = get(&objects, "Deployment", "external-secrets-webhook");
    assert_eq!(webhook["spec"]["revisionHistoryLimit"], 3);
    let env = webhook["spec"]["template"]["spec"]["containers"][0]["env"].to_string();
    assert!(env.contains("RUST_BACKTRACE"));
    assert!(env.contains("\"fixed\""), "user value wins: {env}");
    let controller = get(&objects, "Deployment", "external-secrets");
    assert_eq!(controller["spec"]["revisionHistoryLimit"], 10);
    assert!(!controller.to_string().contains("RUST_BACKTRACE"));
}

#[test]
fn issuer_kind_and_group_are_matched_without_case() {
    let objects = objects(
        json!({"controllerConfig": {"certProvider": {"certManager": {
            "mode": "Enabled", "issuerRef": {"name": "ca", "kind": "clusterissuer", "group": "Cert-Manager.io"},
        }}}}),
    );
    let certificate = get(&objects, "Certificate", "external-secrets-webhook");
    assert_eq!(
        certificate["spec"]["issuerRef"],
        json!({"name": "ca", "kind": "ClusterIssuer", "group": "cert-manager.io"})
    );
}
