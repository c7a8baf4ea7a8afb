//! Upstream's documentation manifests (`shared/conformance/manifests`) are what our users
//! will apply unchanged. Each external-secrets.io / generators.external-secrets.io document
//! must get the same verdict (accepted or rejected) from our generated CRDs as from
//! upstream's, and every accepted one must deserialize into our Rust types without unknown
//! fields and survive a serialize/deserialize round trip.

mod schema_validation;

use external_secrets_crds::{generators, v1, v1alpha1, v1beta1};
use schema_validation::CrdSet;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;
use std::{collections::BTreeSet, fmt::Debug, path::PathBuf};

const GROUPS: [&str; 2] = ["external-secrets.io", "generators.external-secrets.io"];

fn shared_dir() -> PathBuf {
    PathBuf::from(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../shared")
}

/// One YAML document of a conformance file, with where it came from for messages.
struct Document {
    origin: String,
    body: Value,
}

/// Reads every conformance file; files that are partial snippets (not YAML) are returned
/// separately so the test can report them instead of silently dropping them.
fn load_documents() -> (Vec<Document>, Vec<String>) {
    let dir = shared_dir().join("conformance/manifests");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    paths.sort();
    let mut documents = Vec::new();
    let mut snippets = Vec::new();
    for path in paths {
        let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("conformance file is UTF-8");
        let stripped: String = text
            .lines()
            .filter(|line| !matches!(line.trim(), "{% raw %}" | "{% endraw %}"))
            .map(|line| format!("{line}\n"))
            .collect();
        let parsed: Result<Vec<Value>, _> = serde_yaml::Deserializer::from_str(&stripped)
            .map(Value::deserialize)
            .collect();
        match parsed {
            Ok(bodies) => documents.extend(
                bodies
                    .into_iter()
                    .filter(|body| !body.is_null())
                    .enumerate()
                    .map(|(index, body)| Document {
                        origin: format!("{file_name}#{index}"),
                        body,
                    }),
            ),
            Err(_) => snippets.push(file_name),
        }
    }
    (documents, snippets)
}

fn api_group(document: &Value) -> Option<&str> {
    let api_version = document.get("apiVersion")?.as_str()?;
    Some(
        api_version
            .split_once('/')
            .map_or(api_version, |(group, _)| group),
    )
}

/// Deserializes `document` into `K`, refusing unknown fields, then checks that the
/// serialized form keeps every value of the original and deserializes back to an equal value.
fn round_trip<K>(document: &Value) -> Result<(), String>
where
    K: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let mut unknown_fields = Vec::new();
    // kube's derived types take apiVersion and kind from the Resource impl, not from fields.
    let typed: K = serde_ignored::deserialize(document.clone(), |path| {
        let path = path.to_string();
        if path != "apiVersion" && path != "kind" {
            unknown_fields.push(path);
        }
    })
    .map_err(|error| format!("does not deserialize: {error}"))?;
    if !unknown_fields.is_empty() {
        return Err(format!("unknown fields: {unknown_fields:?}"));
    }
    let serialized = serde_json::to_value(&typed).map_err(|error| error.to_string())?;
    let mut lost = Vec::new();
    lost_values(document, &serialized, String::new(), &mut lost);
    if !lost.is_empty() {
        return Err(format!(
            "values lost or changed by serialization at {lost:?}"
        ));
    }
    let again: K = serde_json::from_value(serialized).map_err(|error| error.to_string())?;
    if again != typed {
        return Err("deserialize(serialize(x)) != x".to_owned());
    }
    Ok(())
}

/// Collects the paths where `original` holds a value that `serialized` lacks or changed
/// (defaults added by serialization are fine; nulls and empty lists or maps in the original
/// mean "absent", as they do to the API).
fn lost_values(original: &Value, serialized: &Value, path: String, lost: &mut Vec<String>) {
    match (original, serialized) {
        (Value::Null, _) => {}
        (Value::Object(original), Value::Object(serialized)) => {
            for (key, value) in original {
                let child = format!("{path}.{key}");
                match serialized.get(key) {
                    Some(present) => lost_values(value, present, child, lost),
                    None if is_empty(value) => {}
                    None => lost.push(child),
                }
            }
        }
        (Value::Array(original), Value::Array(serialized))
            if original.len() == serialized.len() =>
        {
            for (index, (a, b)) in original.iter().zip(serialized).enumerate() {
                lost_values(a, b, format!("{path}[{index}]"), lost);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) if a == b => {}
        _ => lost.push(path),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(entries) => entries.is_empty(),
        _ => false,
    }
}

/// Every kind and version our CRDs serve, mapped to its Rust type. The test below checks
/// this table covers every version of every generated CRD.
fn typed_round_trip(api_version: &str, kind: &str, document: &Value) -> Option<Result<(), String>> {
    let check = match (api_version, kind) {
        ("external-secrets.io/v1", "ExternalSecret") => round_trip::<v1::ExternalSecret>,
        ("external-secrets.io/v1", "ClusterExternalSecret") => {
            round_trip::<v1::ClusterExternalSecret>
        }
        ("external-secrets.io/v1", "SecretStore") => round_trip::<v1::SecretStore>,
        ("external-secrets.io/v1", "ClusterSecretStore") => round_trip::<v1::ClusterSecretStore>,
        ("external-secrets.io/v1beta1", "ExternalSecret") => round_trip::<v1beta1::ExternalSecret>,
        ("external-secrets.io/v1beta1", "ClusterExternalSecret") => {
            round_trip::<v1beta1::ClusterExternalSecret>
        }
        ("external-secrets.io/v1beta1", "SecretStore") => round_trip::<v1beta1::SecretStore>,
        ("external-secrets.io/v1beta1", "ClusterSecretStore") => {
            round_trip::<v1beta1::ClusterSecretStore>
        }
        ("external-secrets.io/v1alpha1", "PushSecret") => round_trip::<v1alpha1::PushSecret>,
        ("external-secrets.io/v1alpha1", "ClusterPushSecret") => {
            round_trip::<v1alpha1::ClusterPushSecret>
        }
        ("generators.external-secrets.io/v1alpha1", kind) => {
            return generators_round_trip(kind, document);
        }
        _ => return None,
    };
    Some(check(document))
}

fn generators_round_trip(kind: &str, document: &Value) -> Option<Result<(), String>> {
    use generators::*;
    let check = match kind {
        "ACRAccessToken" => round_trip::<AcrAccessToken>,
        "BeyondtrustWorkloadCredentialsDynamicSecret" => {
            round_trip::<BeyondtrustWorkloadCredentialsDynamicSecret>
        }
        "CloudsmithAccessToken" => round_trip::<CloudsmithAccessToken>,
        "ClusterGenerator" => round_trip::<ClusterGenerator>,
        "ECRAuthorizationToken" => round_trip::<EcrAuthorizationToken>,
        "Fake" => round_trip::<Fake>,
        "GCRAccessToken" => round_trip::<GcrAccessToken>,
        "GeneratorState" => round_trip::<GeneratorState>,
        "GithubAccessToken" => round_trip::<GithubAccessToken>,
        "GitlabDeployToken" => round_trip::<GitlabDeployToken>,
        "Grafana" => round_trip::<Grafana>,
        "MFA" => round_trip::<Mfa>,
        "Password" => round_trip::<Password>,
        "QuayAccessToken" => round_trip::<QuayAccessToken>,
        "SSHKey" => round_trip::<SshKey>,
        "STSSessionToken" => round_trip::<StsSessionToken>,
        "UUID" => round_trip::<Uuid>,
        "VaultDynamicSecret" => round_trip::<VaultDynamicSecret>,
        "Webhook" => round_trip::<Webhook>,
        _ => return None,
    };
    Some(check(document))
}

#[test]
fn round_trip_table_covers_every_served_kind_and_version() {
    let mut missing = BTreeSet::new();
    for crd in external_secrets_crds::all_crds() {
        for version in &crd.spec.versions {
            let api_version = format!("{}/{}", crd.spec.group, version.name);
            let minimal = serde_json::json!({
                "apiVersion": api_version,
                "kind": crd.spec.names.kind,
                "metadata": {"name": "x"},
            });
            if typed_round_trip(&api_version, &crd.spec.names.kind, &minimal).is_none() {
                missing.insert(format!("{api_version} {}", crd.spec.names.kind));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "no Rust type registered for {missing:?}"
    );
}

#[test]
fn conformance_manifests_get_upstream_verdict_and_round_trip() {
    let upstream = CrdSet::from_directory(&shared_dir().join("reference/upstream-crds"));
    let ours = CrdSet::from_crds(external_secrets_crds::all_crds());
    let (documents, snippets) = load_documents();
    let mut failures = Vec::new();
    let (mut checked, mut rejected, mut round_tripped) = (0, 0, 0);
    for document in documents
        .iter()
        .filter(|d| api_group(&d.body).is_some_and(|g| GROUPS.contains(&g)))
    {
        checked += 1;
        let upstream_verdict = upstream.validate(&document.body);
        let our_verdict = ours.validate(&document.body);
        if upstream_verdict.is_ok() != our_verdict.is_ok() {
            failures.push(format!(
                "{}: upstream says {upstream_verdict:?}, ours says {our_verdict:?}",
                document.origin
            ));
            continue;
        }
        if our_verdict.is_err() {
            rejected += 1;
            continue;
        }
        let api_version = document.body["apiVersion"].as_str().unwrap_or_default();
        let kind = document.body["kind"].as_str().unwrap_or_default();
        match typed_round_trip(api_version, kind, &document.body) {
            Some(Ok(())) => round_tripped += 1,
            Some(Err(error)) => failures.push(format!("{}: {error}", document.origin)),
            None => failures.push(format!(
                "{}: no Rust type for {api_version} {kind}",
                document.origin
            )),
        }
    }
    println!(
        "conformance: {checked} documents checked, {rejected} rejected by both, {round_tripped} accepted \
         by both and round-tripped, {} failures; {} files are partial snippets, not YAML: {snippets:?}",
        failures.len(),
        snippets.len()
    );
    assert!(
        checked > 150,
        "expected the whole conformance folder, found only {checked} documents"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
