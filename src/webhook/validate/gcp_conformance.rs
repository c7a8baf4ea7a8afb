//! Upstream's GCP documentation manifests (`../shared/conformance/manifests`: the `gcpsm-*`
//! stores and ExternalSecrets, the `GCRAccessToken` examples' ExternalSecrets) pass this
//! webhook's validation once their `[PLACEHOLDER]`s are filled in as a user must (unfilled,
//! `projectID: [PROJECT_ID]` is a YAML list, which the CRD schema refuses before any webhook).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::{Kind, check};

/// Every document of the GCP example files, with its file name.
fn gcp_documents() -> Vec<(String, Value)> {
    let dir =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../shared/conformance/manifests");
    let placeholder = regex::Regex::new(r"\[([A-Z_]+)\]").unwrap();
    let mut documents = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("gcpsm-") || name.starts_with("generator-gcr")) {
            continue;
        }
        // Helm-escaped examples are wrapped in `{% raw %}` lines for the docs' renderer.
        let text: String = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|line| !matches!(line.trim(), "{% raw %}" | "{% endraw %}"))
            .map(|line| format!("{line}\n"))
            .collect();
        let text = placeholder.replace_all(&text, |found: &regex::Captures| {
            found[1].to_ascii_lowercase().replace('_', "-")
        });
        for document in serde_yaml::Deserializer::from_str(&text) {
            let value = Value::deserialize(document).unwrap();
            if !value.is_null() {
                documents.push((name.clone(), value));
            }
        }
    }
    documents.sort_by(|a, b| a.0.cmp(&b.0));
    documents
}

#[test]
fn upstream_gcp_examples_are_admitted() {
    let mut checked = Vec::new();
    for (file, document) in gcp_documents() {
        let kind = match document["kind"].as_str() {
            Some("SecretStore") => Kind::SecretStore,
            Some("ClusterSecretStore") => Kind::ClusterSecretStore,
            Some("ExternalSecret") => Kind::ExternalSecret,
            _ => continue,
        };
        assert!(
            check(kind, document).is_ok(),
            "{file}: refused by the admission webhook's validation"
        );
        checked.push(file);
    }
    // The five example stores and the ExternalSecrets of the GCP pages (a change in the
    // shared examples shows here instead of silently checking fewer).
    let stores = checked
        .iter()
        .filter(|file| file.contains("secret-store"))
        .count();
    assert_eq!(stores, 5, "{checked:?}");
    assert!(checked.len() >= 9, "{checked:?}");
}
