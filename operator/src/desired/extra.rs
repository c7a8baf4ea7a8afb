//! The objects the chart does not render: the namespace, the deny-all policy, users' and the
//! proxy's NetworkPolicies, the trusted CA bundle, the Bitwarden SDK server, and the settings of
//! cert-manager's Certificates.

use serde_json::{Value, json};

use super::deployment::TRUSTED_CA_BUNDLE;
use super::{Effective, Environment, NAMESPACE};
use crate::api::NetworkPolicyComponent;

/// Name of the Bitwarden SDK server's ServiceAccount, Service and Deployment.
pub const BITWARDEN: &str = "bitwarden-sdk-server";
/// Its TLS Secret (and cert-manager Certificate) when the config names none.
const BITWARDEN_TLS: &str = "bitwarden-tls-certs";
/// Its HTTPS port.
const BITWARDEN_PORT: u16 = 9998;

/// The operand's namespace.
pub fn namespace() -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
}

fn network_policy(name: &str, selector: Value, types: &[&str], rules: Value) -> Value {
    let mut policy = json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"podSelector": selector, "policyTypes": types},
    });
    if let (Some(spec), Some(rules)) = (policy["spec"].as_object_mut(), rules.as_object()) {
        spec.extend(rules.clone());
    }
    policy
}

/// Denies all traffic in the namespace except what the allow policies open.
pub fn deny_all() -> Value {
    network_policy(
        "deny-all-traffic",
        json!({}),
        &["Ingress", "Egress"],
        json!({}),
    )
}

fn selector(component: &str) -> Value {
    json!({"matchLabels": {"app.kubernetes.io/name": component}})
}

/// The users' egress policies, named `eso-user-<name>` (Bitwarden's with a `-bitwarden`
/// suffix, so one name used for both components makes two objects).
pub fn custom_network_policies(effective: &Effective) -> Vec<Value> {
    effective
        .network_policies
        .iter()
        .filter(|policy| {
            policy.component_name != NetworkPolicyComponent::BitwardenSdkServer
                || effective.bitwarden
        })
        .map(|policy| {
            let (name, pods) = match policy.component_name {
                NetworkPolicyComponent::ExternalSecretsCoreController => {
                    (format!("eso-user-{}", policy.name), "external-secrets")
                }
                NetworkPolicyComponent::BitwardenSdkServer => {
                    (format!("eso-user-{}-bitwarden", policy.name), BITWARDEN)
                }
            };
            network_policy(
                &name,
                selector(pods),
                &["Egress"],
                json!({"egress": policy.egress}),
            )
        })
        .collect()
}

/// With `networkPolicyProvisioning: Managed`, egress from every operand pod to the proxies'
/// ports.
pub fn proxy_network_policy(effective: &Effective) -> Option<Value> {
    if !effective.manages_proxy_policy() {
        return None;
    }
    let proxy = effective.proxy.as_ref()?;
    let mut ports: Vec<u16> = [&proxy.http_proxy, &proxy.https_proxy]
        .into_iter()
        .filter_map(|url| proxy_port(url.as_deref()?))
        .collect();
    ports.sort_unstable();
    ports.dedup();
    let ports: Vec<Value> = ports
        .iter()
        .map(|port| json!({"protocol": "TCP", "port": port}))
        .collect();
    Some(network_policy(
        "eso-proxy-egress",
        json!({"matchExpressions": [{"key": "app.kubernetes.io/instance", "operator": "In", "values": ["external-secrets"]}]}),
        &["Egress"],
        json!({"egress": [{"ports": ports}]}),
    ))
}

/// The port of a proxy URL (`[scheme://][user@]host[:port][/...]`): explicit, else the
/// scheme's (80 for http, 443 for https, 1080 for socks).
pub fn proxy_port(url: &str) -> Option<u16> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let port = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once("]:").map(|(_, port)| port),
        None => host.rsplit_once(':').map(|(_, port)| port),
    };
    let explicit = port.and_then(|port| port.parse().ok());
    explicit.or(match scheme.to_ascii_lowercase().as_str() {
        "http" => Some(80),
        "https" => Some(443),
        scheme if scheme.starts_with("socks") => Some(1080),
        _ => None,
    })
}

/// The ConfigMap the platform fills with the trusted CA bundle, while a proxy is set.
pub fn trusted_ca_bundle(effective: &Effective) -> Option<Value> {
    effective.proxy.as_ref()?;
    Some(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": TRUSTED_CA_BUNDLE,
            "namespace": NAMESPACE,
            "labels": {"config.openshift.io/inject-trusted-cabundle": "true"},
        },
    }))
}

/// cert-manager's webhook Certificate from the config's issuer, duration and renewal.
pub fn webhook_certificate(certificate: &mut Value, effective: &Effective) {
    certificate["spec"]["issuerRef"] = issuer(effective);
    certificate["spec"]["duration"] = json!(effective.certificate_duration);
    certificate["spec"]["renewBefore"] = json!(effective.certificate_renew_before);
}

/// The issuer reference; kind and group are matched without case, as the CRD's rules accept
/// them, and written as cert-manager spells them.
fn issuer(effective: &Effective) -> Value {
    let issuer = effective.issuer.clone().unwrap_or_default();
    let kind = match issuer
        .kind
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("clusterissuer") => "ClusterIssuer",
        _ => "Issuer",
    };
    json!({"name": issuer.name, "kind": kind, "group": "cert-manager.io"})
}

/// The Bitwarden SDK server, when enabled: ServiceAccount, Service (protocol set, so an
/// unchanged reconcile changes nothing), Deployment, its NetworkPolicy and the controller's
/// egress to it, and with cert-manager and no Secret of the user's, its Certificate.
pub fn bitwarden(effective: &Effective, environment: &Environment) -> Vec<Value> {
    if !effective.bitwarden {
        return Vec::new();
    }
    let labels = json!({"app.kubernetes.io/name": BITWARDEN, "app.kubernetes.io/instance": "external-secrets"});
    let metadata = json!({"name": BITWARDEN, "namespace": NAMESPACE, "labels": labels});
    let secret = effective
        .bitwarden_secret
        .clone()
        .unwrap_or_else(|| BITWARDEN_TLS.into());
    let probe = |path: &str| json!({"httpGet": {"path": path, "port": "http", "scheme": "HTTPS"}});
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata}),
        json!({
            "apiVersion": "v1", "kind": "Service", "metadata": metadata,
            "spec": {
                "type": "ClusterIP",
                "selector": labels,
                "ports": [{"name": "http", "port": BITWARDEN_PORT, "protocol": "TCP", "targetPort": "http"}],
            },
        }),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": BITWARDEN,
                        "containers": [{
                            "name": BITWARDEN,
                            "image": environment.bitwarden_image,
                            "ports": [{"name": "http", "containerPort": BITWARDEN_PORT, "protocol": "TCP"}],
                            "livenessProbe": probe("/live"),
                            "readinessProbe": probe("/ready"),
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": true,
                                "runAsNonRoot": true,
                                "seccompProfile": {"type": "RuntimeDefault"},
                            },
                            "volumeMounts": [{"name": BITWARDEN_TLS, "mountPath": "/certs", "readOnly": true}],
                        }],
                        "volumes": [{
                            "name": BITWARDEN_TLS,
                            "secret": {
                                "secretName": secret,
                                "items": [
                                    {"key": "tls.crt", "path": "cert.pem"},
                                    {"key": "tls.key", "path": "key.pem"},
                                    {"key": "ca.crt", "path": "ca.pem"},
                                ],
                            },
                        }],
                    },
                },
            },
        }),
        network_policy(
            "allow-bitwarden-sdk-server",
            selector(BITWARDEN),
            &["Ingress", "Egress"],
            json!({
                "ingress": [{"ports": [{"protocol": "TCP", "port": BITWARDEN_PORT}]}],
                "egress": [
                    {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]},
                    {"ports": [{"protocol": "TCP", "port": 53}, {"protocol": "UDP", "port": 53}]},
                ],
            }),
        ),
        // The controller may reach the server (upstream leaves this to a user policy).
        network_policy(
            "allow-external-secrets-to-bitwarden-sdk-server",
            selector("external-secrets"),
            &["Egress"],
            json!({"egress": [{
                "to": [{"podSelector": selector(BITWARDEN)}],
                "ports": [{"protocol": "TCP", "port": BITWARDEN_PORT}],
            }]}),
        ),
    ];
    if effective.cert_manager && effective.bitwarden_secret.is_none() {
        objects.push(json!({
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": BITWARDEN_TLS, "namespace": NAMESPACE, "labels": labels},
            "spec": {
                "secretName": BITWARDEN_TLS,
                "dnsNames": [
                    format!("{BITWARDEN}.{NAMESPACE}.svc.cluster.local"),
                    format!("external-secrets-{BITWARDEN}.{NAMESPACE}.svc.cluster.local"),
                    "localhost",
                ],
                "ipAddresses": ["127.0.0.1", "::1"],
                "privateKey": {"algorithm": "RSA", "encoding": "PKCS8", "size": 2048},
                "duration": effective.certificate_duration,
                "renewBefore": effective.certificate_renew_before,
                "issuerRef": issuer(effective),
            },
        }));
    }
    objects
}

#[cfg(test)]
mod tests {
    use super::proxy_port;

    #[test]
    fn proxy_ports_from_urls() {
        assert_eq!(proxy_port("http://proxy.example.com:3128"), Some(3128));
        assert_eq!(
            proxy_port("https://user:secret@proxy:8443/path"),
            Some(8443)
        );
        assert_eq!(proxy_port("http://proxy.example.com"), Some(80));
        assert_eq!(proxy_port("https://proxy.example.com/"), Some(443));
        assert_eq!(proxy_port("proxy.example.com:3128"), Some(3128));
        assert_eq!(proxy_port("http://[2001:db8::1]:3128"), Some(3128));
        assert_eq!(proxy_port("http://[2001:db8::1]"), Some(80));
        assert_eq!(proxy_port("socks5://proxy"), Some(1080));
        assert_eq!(proxy_port("ftp://proxy"), None);
        // An unparsable port falls back to the scheme's.
        assert_eq!(proxy_port("http://proxy:notaport"), Some(80));
    }
}
