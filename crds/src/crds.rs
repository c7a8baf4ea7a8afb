//! The CustomResourceDefinitions of every kind, versions merged, and their YAML manifests.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceSubresourceStatus, CustomResourceSubresources,
};
use kube::core::crd::merge_crds;
use serde_json::Value;

use crate::schema::crd;
use crate::{generators, v1, v1alpha1, v1beta1};

/// The label upstream puts on every CRD.
const COMPONENT_LABEL: (&str, &str) = ("external-secrets.io/component", "controller");

/// Every CRD of the external-secrets.io and generators.external-secrets.io groups, one per kind
/// with all its versions (v1 is the storage version where there is a v1beta1), in the order of
/// their manifest file names.
///
/// Use this rather than `Kind::crd()`: the schemas kube's derive generates on its own mark every
/// optional field `nullable` and lack the root's `apiVersion`, `kind` and `metadata`, unlike
/// upstream's; here they are generated to match upstream exactly.
pub fn all_crds() -> Vec<CustomResourceDefinition> {
    let crds = vec![
        merged(vec![
            crd::<v1::ClusterExternalSecret>(),
            crd::<v1beta1::ClusterExternalSecret>(),
        ]),
        crd::<v1alpha1::ClusterPushSecret>(),
        merged(vec![
            crd::<v1::ClusterSecretStore>(),
            crd::<v1beta1::ClusterSecretStore>(),
        ]),
        merged(vec![
            crd::<v1::ExternalSecret>(),
            crd::<v1beta1::ExternalSecret>(),
        ]),
        crd::<v1alpha1::PushSecret>(),
        merged(vec![
            crd::<v1::SecretStore>(),
            crd::<v1beta1::SecretStore>(),
        ]),
        generator(crd::<generators::AcrAccessToken>()),
        generator(crd::<generators::BeyondtrustWorkloadCredentialsDynamicSecret>()),
        generator(crd::<generators::CloudsmithAccessToken>()),
        generator(crd::<generators::ClusterGenerator>()),
        generator(crd::<generators::EcrAuthorizationToken>()),
        generator(crd::<generators::Fake>()),
        generator(crd::<generators::GcrAccessToken>()),
        generator_state(crd::<generators::GeneratorState>()),
        generator(crd::<generators::GithubAccessToken>()),
        generator(crd::<generators::GitlabDeployToken>()),
        generator(crd::<generators::Grafana>()),
        generator(crd::<generators::Mfa>()),
        generator(crd::<generators::Password>()),
        generator(crd::<generators::QuayAccessToken>()),
        generator(crd::<generators::SshKey>()),
        generator(crd::<generators::StsSessionToken>()),
        generator(crd::<generators::Uuid>()),
        generator(crd::<generators::VaultDynamicSecret>()),
        generator(crd::<generators::Webhook>()),
    ];
    crds.into_iter().map(labelled).collect()
}

/// One `(file name, YAML)` per CRD of [`all_crds`], named as upstream names its files
/// (`<group>_<plural>.yaml`).
pub fn manifests() -> Vec<(String, String)> {
    all_crds()
        .into_iter()
        .map(|crd| manifest_yaml(&crd))
        .collect()
}

/// The `(file name, YAML)` of one CRD, named as upstream names its files
/// (`<group>_<plural>.yaml`); the installer operator writes its own CRDs with it too.
pub fn manifest_yaml(crd: &CustomResourceDefinition) -> (String, String) {
    let file = format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural);
    let mut json = serde_json::to_value(crd).expect("a CRD serializes");
    integral_numbers(&mut json);
    let yaml = serde_yaml::to_string(&json).expect("JSON serializes to YAML");
    (file, yaml)
}

/// Writes whole numbers as integers: k8s-openapi keeps `minimum`/`maximum` as `f64`, which would
/// print `1.0` where upstream's manifests (and our types) say `1`.
fn integral_numbers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(float) = number
                .as_f64()
                .filter(|float| float.fract() == 0.0 && number.is_f64())
            {
                *value = Value::from(float as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(fields) => fields.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// The versions of one kind in one CRD; the first (v1) is the storage version.
fn merged(crds: Vec<CustomResourceDefinition>) -> CustomResourceDefinition {
    let storage = crds[0].spec.versions[0].name.clone();
    merge_crds(crds, &storage).expect("the versions of a kind share group, kind and scope")
}

/// Upstream's generator kinds declare a status subresource although they have no status field.
fn generator(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for version in &mut crd.spec.versions {
        version.subresources = Some(CustomResourceSubresources {
            status: Some(CustomResourceSubresourceStatus(serde_json::json!({}))),
            scale: None,
        });
    }
    crd
}

/// Upstream's GeneratorState has a status field but declares no status subresource
/// (`subresources: {}`): the controller writes its status with ordinary updates.
fn generator_state(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for version in &mut crd.spec.versions {
        version.subresources = Some(CustomResourceSubresources::default());
    }
    crd
}

fn labelled(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let (key, value) = COMPONENT_LABEL;
    crd.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(key.into(), value.into());
    crd
}
