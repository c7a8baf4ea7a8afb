//! The operand's manifests: our Helm chart rendered with the real Helm library
//! (`render-operand.sh`, drift-checked by `tests/operand_render.rs`), embedded in the binary
//! and parsed into objects the operator then edits per `ExternalSecretsConfig`.
//!
//! A chart change reaches the operator like this: re-run `operator/render-operand.sh`, which
//! rewrites `manifests/operand/*.yaml`; the next build embeds them.

use serde::Deserialize;
use serde_json::Value;

/// The renderings: (file under `manifests/operand/`, `webhook.certManager.enabled`).
pub const RENDERINGS: &[(&str, bool)] =
    &[("cert-controller.yaml", false), ("cert-manager.yaml", true)];

const CERT_CONTROLLER: &str = include_str!("../manifests/operand/cert-controller.yaml");
const CERT_MANAGER: &str = include_str!("../manifests/operand/cert-manager.yaml");

/// Every object of a multi-document YAML text, empty documents dropped.
pub fn parse(text: &str) -> Result<Vec<Value>, serde_yaml::Error> {
    let mut objects = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value = Value::deserialize(document)?;
        if value.is_object() {
            objects.push(value);
        }
    }
    Ok(objects)
}

/// The chart's objects for one certificate mode: with `cert_manager`, cert-manager issues the
/// webhook's certificate and there is no cert controller.
pub fn chart_objects(cert_manager: bool) -> Result<Vec<Value>, serde_yaml::Error> {
    parse(if cert_manager {
        CERT_MANAGER
    } else {
        CERT_CONTROLLER
    })
}
