//! The effective settings: the config's, else the manager's global ones, else the operator's
//! environment (proxy), else the API defaults.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, EnvVar, ResourceRequirements, Toleration};

use super::enabled;
use crate::api::{
    CommonConfigs, Component, ExternalSecretsConfig, ExternalSecretsManager, InjectAnnotations,
    IssuerReference, NetworkPolicy, NetworkPolicyProvisioning, ProxyConfig,
};

/// What the operator's own process provides.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// The operand image (`RELATED_IMAGE_EXTERNAL_SECRETS`); the chart's when unset.
    pub image: Option<String>,
    /// The Bitwarden SDK server image (`RELATED_IMAGE_BITWARDEN_SDK_SERVER`).
    pub bitwarden_image: String,
    /// The operator's own proxy (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`), the last fallback.
    pub proxy: Option<ProxyConfig>,
}

/// Settings after merging config over manager over environment.
#[derive(Clone, Debug, Default)]
pub struct Effective {
    /// `--loglevel` value of the operand.
    pub log_level: &'static str,
    /// Container resources.
    pub resources: Option<ResourceRequirements>,
    /// Pod affinity.
    pub affinity: Option<Affinity>,
    /// Pod tolerations.
    pub tolerations: Option<Vec<Toleration>>,
    /// Pod node selector.
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Proxy, when one applies and names at least one proxy.
    pub proxy: Option<ProxyConfig>,
    /// The only namespace the operand watches.
    pub operating_namespace: Option<String>,
    /// The webhook's `--check-interval`.
    pub check_interval: String,
    /// cert-manager mode.
    pub cert_manager: bool,
    /// cert-manager's CA injection into the CRDs.
    pub inject_annotations: InjectAnnotations,
    /// The issuer of cert-manager's certificates.
    pub issuer: Option<IssuerReference>,
    /// Certificate lifetime.
    pub certificate_duration: String,
    /// Certificate renewal lead time.
    pub certificate_renew_before: String,
    /// Bitwarden SDK server enabled.
    pub bitwarden: bool,
    /// Secret with the Bitwarden server's TLS certificate.
    pub bitwarden_secret: Option<String>,
    /// The manager's labels (lowest priority).
    pub manager_labels: BTreeMap<String, String>,
    /// The config's labels.
    pub labels: BTreeMap<String, String>,
    /// The config's annotations.
    pub annotations: BTreeMap<String, String>,
    /// User NetworkPolicies.
    pub network_policies: Vec<NetworkPolicy>,
    /// Per component: revisionHistoryLimit and overrideEnv.
    pub components: BTreeMap<Component, (Option<i32>, Vec<EnvVar>)>,
}

/// The operand's `--loglevel` for the API's 1..5, more verbose as it grows (upstream's mapping
/// made 2 quieter than 1).
pub fn log_level(level: i32) -> &'static str {
    match level {
        ..=1 => "error",
        2 => "warn",
        3 => "info",
        4 => "debug",
        _ => "trace",
    }
}

impl Effective {
    /// Merges the config over the manager's global settings over the environment.
    pub fn new(
        config: &ExternalSecretsConfig,
        manager: Option<&ExternalSecretsManager>,
        environment: &Environment,
    ) -> Self {
        let spec = &config.spec;
        let app = spec.app_config.clone().unwrap_or_default();
        let global = manager
            .and_then(|manager| manager.spec.global_config.clone())
            .unwrap_or_default();
        let (mine, theirs): (&CommonConfigs, &CommonConfigs) = (&app.common, &global.common);
        let controller = spec.controller_config.clone().unwrap_or_default();
        let cert_manager = controller
            .cert_provider
            .and_then(|provider| provider.cert_manager);
        let bitwarden = spec
            .plugins
            .as_ref()
            .and_then(|plugins| plugins.bitwarden_secret_manager_provider.clone())
            .unwrap_or_default();
        let proxy = mine
            .proxy
            .clone()
            .or_else(|| theirs.proxy.clone())
            .or_else(|| environment.proxy.clone())
            .filter(|proxy| {
                [&proxy.http_proxy, &proxy.https_proxy, &proxy.no_proxy]
                    .iter()
                    .any(|value| value.as_deref().is_some_and(|text| !text.is_empty()))
            });
        let components = controller
            .component_configs
            .unwrap_or_default()
            .into_iter()
            .map(|component| {
                (
                    component.component_name,
                    (
                        component
                            .deployment_configs
                            .and_then(|deployment| deployment.revision_history_limit),
                        component.override_env.unwrap_or_default(),
                    ),
                )
            })
            .collect();
        Self {
            log_level: log_level(mine.log_level.or(theirs.log_level).unwrap_or(1)),
            resources: mine.resources.clone().or_else(|| theirs.resources.clone()),
            affinity: mine.affinity.clone().or_else(|| theirs.affinity.clone()),
            tolerations: mine
                .tolerations
                .clone()
                .or_else(|| theirs.tolerations.clone()),
            node_selector: mine
                .node_selector
                .clone()
                .or_else(|| theirs.node_selector.clone()),
            proxy,
            operating_namespace: app.operating_namespace.filter(|ns| !ns.is_empty()),
            check_interval: app
                .webhook_config
                .and_then(|webhook| webhook.certificate_check_interval)
                .unwrap_or_else(|| "5m".into()),
            cert_manager: cert_manager
                .as_ref()
                .is_some_and(|cm| enabled(Some(cm.mode))),
            inject_annotations: cert_manager
                .as_ref()
                .and_then(|cm| cm.inject_annotations)
                .unwrap_or_default(),
            issuer: cert_manager.as_ref().and_then(|cm| cm.issuer_ref.clone()),
            certificate_duration: cert_manager
                .as_ref()
                .and_then(|cm| cm.certificate_duration.clone())
                .unwrap_or_else(|| "8760h".into()),
            certificate_renew_before: cert_manager
                .as_ref()
                .and_then(|cm| cm.certificate_renew_before.clone())
                .unwrap_or_else(|| "30m".into()),
            bitwarden: enabled(bitwarden.mode),
            bitwarden_secret: bitwarden.secret_ref.map(|secret| secret.name),
            manager_labels: global.labels.unwrap_or_default(),
            labels: controller.labels.unwrap_or_default(),
            annotations: controller.annotations.unwrap_or_default(),
            network_policies: controller.network_policies.unwrap_or_default(),
            components,
        }
    }

    /// Whether the operator provisions the proxy's egress NetworkPolicy.
    pub fn manages_proxy_policy(&self) -> bool {
        self.proxy.as_ref().is_some_and(|proxy| {
            proxy.network_policy_provisioning.unwrap_or_default()
                == NetworkPolicyProvisioning::Managed
        })
    }
}
