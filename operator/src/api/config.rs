//! `ExternalSecretsConfig`: the singleton (`cluster`) that says how the operand is installed.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use k8s_openapi::api::networking::v1::NetworkPolicyEgressRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CommonConfigs, Mode};

/// The desired install of external-secrets: application settings, optional plugins and how the
/// operand's controllers are deployed.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "operator.openshift.io",
    version = "v1alpha1",
    kind = "ExternalSecretsConfig",
    status = "ExternalSecretsConfigStatus",
    shortname = "esc",
    shortname = "externalsecretsconfig",
    shortname = "esconfig",
    category = "external-secrets-operator",
    category = "external-secrets",
    label("app.kubernetes.io/name", "externalsecretsconfig"),
    label("app.kubernetes.io/part-of", "external-secrets-operator"),
    printcolumn = r#"{"jsonPath": ".status.conditions[?(@.type=='Ready')].status", "name": "Ready", "type": "string"}"#,
    printcolumn = r#"{"jsonPath": ".status.conditions[?(@.type=='Ready')].message", "name": "Message", "type": "string"}"#,
    printcolumn = r#"{"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "message": "secretRef or certManager must be configured when bitwardenSecretManagerProvider plugin is enabled",
    "rule": "!has(self.plugins) || !has(self.plugins.bitwardenSecretManagerProvider) || !has(self.plugins.bitwardenSecretManagerProvider.mode) || self.plugins.bitwardenSecretManagerProvider.mode != 'Enabled' || has(self.plugins.bitwardenSecretManagerProvider.secretRef) || (has(self.controllerConfig) && has(self.controllerConfig.certProvider) && has(self.controllerConfig.certProvider.certManager) && has(self.controllerConfig.certProvider.certManager.mode) && self.controllerConfig.certProvider.certManager.mode == 'Enabled')"
}]))]
pub struct ExternalSecretsConfigSpec {
    /// appConfig configures the operand's behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_config: Option<ApplicationConfig>,
    /// plugins enables optional components such as the Bitwarden SDK server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<PluginsConfig>,
    /// controllerConfig configures how the operator deploys the operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_config: Option<ControllerConfig>,
}

/// The operand's application settings; the common ones win over `ExternalSecretsManager`'s.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationConfig {
    /// The settings shared with `ExternalSecretsManager.spec.globalConfig`.
    #[serde(flatten)]
    pub common: CommonConfigs,
    /// operatingNamespace restricts the operand to one namespace (cluster-wide kinds off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub operating_namespace: Option<String>,
    /// webhookConfig configures the operand's admission webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_config: Option<WebhookConfig>,
}

/// The admission webhook's settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConfig {
    /// certificateCheckInterval is how often the webhook checks its certificate (a duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "5m"))]
    pub certificate_check_interval: Option<String>,
}

/// Optional components.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginsConfig {
    /// bitwardenSecretManagerProvider enables the Bitwarden SDK server the bitwarden provider
    /// talks to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitwarden_secret_manager_provider: Option<BitwardenSecretManagerProvider>,
}

/// The Bitwarden SDK server plugin.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BitwardenSecretManagerProvider {
    /// mode enables or disables the plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Disabled"))]
    pub mode: Option<Mode>,
    /// secretRef names the Secret (keys tls.crt, tls.key, ca.crt) with the server's TLS
    /// certificate; without it cert-manager must issue one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
}

/// A Secret in the operand's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct SecretReference {
    /// name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// How the operand's controllers are deployed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerConfig {
    /// certProvider chooses who issues the webhook's certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_provider: Option<CertProvidersConfig>,
    /// labels to add to every operand object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "minProperties" = 0,
        "maxProperties" = 20,
        "x-kubernetes-map-type" = "granular"
    ))]
    pub labels: Option<BTreeMap<String, String>>,
    /// annotations to add to every operand object and pod template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "minProperties" = 0,
        "maxProperties" = 20,
        "x-kubernetes-validations" = crate::api::crds::annotation_rules()
    ))]
    pub annotations: Option<BTreeMap<String, String>>,
    /// networkPolicies are egress NetworkPolicies added for an operand component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 0, max = 50),
        extend(
            "x-kubernetes-list-map-keys" = ["name", "componentName"],
            "x-kubernetes-list-type" = "map",
            "x-kubernetes-validations" = [{
                "message": "name and componentName fields in networkPolicies are immutable",
                "rule": "oldSelf.all(op, self.exists(p, p.name == op.name && p.componentName == op.componentName))"
            }]
        )
    )]
    pub network_policies: Option<Vec<NetworkPolicy>>,
    /// componentConfigs are per-component Deployment settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 0, max = 4),
        extend(
            "x-kubernetes-list-map-keys" = ["componentName"],
            "x-kubernetes-list-type" = "map"
        )
    )]
    pub component_configs: Option<Vec<ComponentConfig>>,
}

/// Certificate providers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CertProvidersConfig {
    /// certManager makes cert-manager issue the webhook's (and the Bitwarden server's)
    /// certificate instead of the built-in cert controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_manager: Option<CertManagerConfig>,
}

/// cert-manager as certificate provider.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"message": "issuerRef must be provided when mode is set to Enabled.", "rule": "self.mode != 'Enabled' || has(self.issuerRef)"},
    {"message": "injectAnnotations can only be set when mode is set to Enabled.", "rule": "has(self.injectAnnotations) && self.injectAnnotations != 'false' ? self.mode != 'Disabled' : true"}
]))]
pub struct CertManagerConfig {
    /// mode enables cert-manager; it cannot be changed once set.
    #[schemars(extend("x-kubernetes-validations" = [{"message": "mode is immutable once set", "rule": "self == oldSelf"}]))]
    pub mode: Mode,
    /// injectAnnotations "true" adds `cert-manager.io/inject-ca-from` to the webhook
    /// configurations and the operand's CRDs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "default" = "false",
        "x-kubernetes-validations" = [{"message": "injectAnnotations is immutable once set", "rule": "self == oldSelf"}]
    ))]
    pub inject_annotations: Option<InjectAnnotations>,
    /// issuerRef is the cert-manager Issuer or ClusterIssuer that signs the certificates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer_ref: Option<IssuerReference>,
    /// certificateDuration is the certificates' lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "8760h"))]
    pub certificate_duration: Option<String>,
    /// certificateRenewBefore is how long before expiry cert-manager renews.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "30m"))]
    pub certificate_renew_before: Option<String>,
}

/// Whether cert-manager's CA injector fills the webhook configurations' and CRDs' CA bundle.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum InjectAnnotations {
    // Add the `cert-manager.io/inject-ca-from` annotation.
    #[serde(rename = "true")]
    True,
    // Do not.
    #[default]
    #[serde(rename = "false")]
    False,
}

/// A cert-manager issuer.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[schemars(extend("x-kubernetes-validations" = [
    {"message": "issuerRef is immutable once set", "rule": "self == oldSelf"},
    {"message": "kind must be either 'Issuer' or 'ClusterIssuer'", "rule": "!has(self.kind) || self.kind.lowerAscii() == 'issuer' || self.kind.lowerAscii() == 'clusterissuer'"},
    {"message": "group must be 'cert-manager.io'", "rule": "!has(self.group) || self.group.lowerAscii() == 'cert-manager.io'"}
]))]
pub struct IssuerReference {
    /// name of the issuer.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// kind: Issuer (in the operand's namespace, the default) or ClusterIssuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub kind: Option<String>,
    /// group: cert-manager.io.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub group: Option<String>,
}

/// A user's egress NetworkPolicy for one component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicy {
    /// name of the policy (the object is named `eso-user-<name>`).
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// componentName is the component whose pods the policy selects.
    pub component_name: NetworkPolicyComponent,
    /// egress rules, as in a Kubernetes NetworkPolicy.
    #[schemars(
        schema_with = "crate::api::crds::egress",
        extend("x-kubernetes-list-type" = "atomic")
    )]
    pub egress: Vec<NetworkPolicyEgressRule>,
}

/// Components a user NetworkPolicy can select.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum NetworkPolicyComponent {
    // The main controller.
    #[default]
    ExternalSecretsCoreController,
    // The Bitwarden SDK server.
    #[serde(rename = "BitwardenSDKServer")]
    BitwardenSdkServer,
}

/// Settings of one component's Deployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentConfig {
    /// componentName: the component these settings apply to.
    pub component_name: Component,
    /// deploymentConfigs are Deployment settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_configs: Option<DeploymentConfig>,
    /// overrideEnv are environment variables set on the component's main container; they win
    /// over the operator's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        schema_with = "crate::api::crds::env",
        length(max = 50),
        extend(
            "x-kubernetes-list-map-keys" = ["name"],
            "x-kubernetes-list-type" = "map",
            "x-kubernetes-validations" = [{
                "message": "Environment variable names with reserved prefixes 'HOSTNAME', 'KUBERNETES_', 'EXTERNAL_SECRETS_' are not allowed",
                "rule": "self.all(e, !['HOSTNAME', 'KUBERNETES_', 'EXTERNAL_SECRETS_'].exists(p, e.name.startsWith(p)))"
            }]
        )
    )]
    pub override_env: Option<Vec<EnvVar>>,
}

/// The operand's components.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum Component {
    // The main controller (Deployment `external-secrets`).
    #[default]
    ExternalSecretsCoreController,
    // The admission webhook.
    Webhook,
    // The built-in certificate controller.
    CertController,
    // The Bitwarden SDK server.
    #[serde(rename = "BitwardenSDKServer")]
    BitwardenSdkServer,
}

/// Deployment settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentConfig {
    /// revisionHistoryLimit is how many old ReplicaSets the Deployment keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50), extend("default" = 10, "format" = "int32"))]
    pub revision_history_limit: Option<i32>,
}

/// What the operator observed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretsConfigStatus {
    /// conditions: Ready, Progressing and Degraded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::api::crds::conditions")]
    pub conditions: Vec<Condition>,
    /// externalSecretsImage is the operand image installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_secrets_image: Option<String>,
    /// bitwardenSDKServerImage is the Bitwarden SDK server image installed.
    #[serde(
        default,
        rename = "bitwardenSDKServerImage",
        skip_serializing_if = "Option::is_none"
    )]
    pub bitwarden_sdk_server_image: Option<String>,
}
