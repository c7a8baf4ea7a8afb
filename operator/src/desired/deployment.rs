//! Edits of an operand Deployment: image, arguments, scheduling, resources, proxy and the
//! per-component settings.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, EnvVar, PodSpec, Volume, VolumeMount,
};
use serde_json::Value;

use super::{DesiredError, Effective, Environment, name};
use crate::api::Component;

/// The ConfigMap (and volume) with the CA bundle trusted through the proxy.
pub const TRUSTED_CA_BUNDLE: &str = "external-secrets-trusted-ca-bundle";
const TRUSTED_CA_VOLUME: &str = "trusted-ca-bundle";
/// Where the operand reads the trusted CAs (`ca-bundle.crt`).
const TRUSTED_CA_PATH: &str = "/etc/pki/tls/certs";

/// The component a Deployment runs, by its name.
pub fn component(deployment: &str) -> Option<Component> {
    match deployment {
        "external-secrets" => Some(Component::ExternalSecretsCoreController),
        "external-secrets-webhook" => Some(Component::Webhook),
        "external-secrets-cert-controller" => Some(Component::CertController),
        super::extra::BITWARDEN => Some(Component::BitwardenSdkServer),
        _ => None,
    }
}

/// Applies the effective settings to one Deployment object.
pub fn edit(
    object: &mut Value,
    effective: &Effective,
    environment: &Environment,
) -> Result<(), DesiredError> {
    let Some(component) = component(name(object)) else {
        return Ok(());
    };
    let error = |source| DesiredError::Object {
        object: format!("Deployment {}", name(object)),
        source,
    };
    let mut deployment: Deployment = serde_json::from_value(object.clone()).map_err(error)?;
    let Some(spec) = deployment.spec.as_mut() else {
        return Ok(());
    };
    let (history, override_env) = effective
        .components
        .get(&component)
        .cloned()
        .unwrap_or_default();
    if let Some(limit) = history {
        spec.revision_history_limit = Some(limit);
    }
    if let Some(pod) = spec.template.spec.as_mut() {
        pod_settings(pod, effective);
        for container in &mut pod.containers {
            if component != Component::BitwardenSdkServer {
                if let Some(image) = &environment.image {
                    container.image = Some(image.clone());
                }
                arguments(container, component, effective);
            }
        }
        if let Some(main) = pod.containers.first_mut() {
            merge_env(main, &override_env);
        }
    }
    *object = serde_json::to_value(&deployment).map_err(error)?;
    Ok(())
}

/// Scheduling, resources and proxy of the pod.
fn pod_settings(pod: &mut PodSpec, effective: &Effective) {
    pod.affinity = effective.affinity.clone();
    pod.tolerations = effective.tolerations.clone();
    pod.node_selector = effective.node_selector.clone();
    let proxy_env = proxy_env(effective);
    let init = pod.init_containers.iter_mut().flatten();
    for container in pod.containers.iter_mut().chain(init) {
        if let Some(resources) = &effective.resources {
            container.resources = Some(resources.clone());
        }
        merge_env(container, &proxy_env);
        if effective.proxy.is_some() {
            container
                .volume_mounts
                .get_or_insert_with(Vec::new)
                .push(VolumeMount {
                    name: TRUSTED_CA_VOLUME.into(),
                    mount_path: TRUSTED_CA_PATH.into(),
                    read_only: Some(true),
                    ..VolumeMount::default()
                });
        }
    }
    if effective.proxy.is_some() {
        pod.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: TRUSTED_CA_VOLUME.into(),
            config_map: Some(ConfigMapVolumeSource {
                name: TRUSTED_CA_BUNDLE.into(),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        });
    }
}

/// `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY` and their lowercase forms, for the set ones.
fn proxy_env(effective: &Effective) -> Vec<EnvVar> {
    let Some(proxy) = &effective.proxy else {
        return Vec::new();
    };
    [
        ("HTTP_PROXY", &proxy.http_proxy),
        ("HTTPS_PROXY", &proxy.https_proxy),
        ("NO_PROXY", &proxy.no_proxy),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, value.as_deref().filter(|v| !v.is_empty())?)))
    .flat_map(|(name, value)| {
        [name.to_owned(), name.to_lowercase()].map(|name| EnvVar {
            name,
            value: Some(value.to_owned()),
            value_from: None,
        })
    })
    .collect()
}

/// Sets each of `env` on the container, replacing a variable of the same name.
fn merge_env(container: &mut Container, env: &[EnvVar]) {
    let list = container.env.get_or_insert_with(Vec::new);
    for variable in env {
        match list
            .iter_mut()
            .find(|existing| existing.name == variable.name)
        {
            Some(existing) => *existing = variable.clone(),
            None => list.push(variable.clone()),
        }
    }
}

/// The log level, namespace restriction and the webhook's check interval.
fn arguments(container: &mut Container, component: Component, effective: &Effective) {
    let args = container.args.get_or_insert_with(Vec::new);
    set_flag(args, "--loglevel", effective.log_level);
    match component {
        Component::ExternalSecretsCoreController => {
            if let Some(namespace) = &effective.operating_namespace {
                set_flag(args, "--namespace", namespace);
                set_flag(args, "--enable-cluster-store-reconciler", "false");
                set_flag(args, "--enable-cluster-external-secret-reconciler", "false");
                set_flag(args, "--enable-cluster-push-secret-reconciler", "false");
            }
        }
        Component::Webhook => set_flag(args, "--check-interval", &effective.check_interval),
        _ => {}
    }
}

/// Replaces `--flag=...` in `args`, or appends it.
fn set_flag(args: &mut Vec<String>, flag: &str, value: &str) {
    let prefix = format!("{flag}=");
    let argument = format!("{flag}={value}");
    match args.iter_mut().find(|arg| arg.starts_with(&prefix)) {
        Some(existing) => *existing = argument,
        None => args.push(argument),
    }
}
