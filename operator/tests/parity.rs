//! Schema parity with OpenShift's external-secrets-operator: our generated CRDs must equal the
//! upstream ones (`../shared/reference/upstream-operator-crds/`) key for key, at every path of
//! the whole CRD: names, scope, printer columns, subresources, labels and the complete schema
//! with its defaults, enums, bounds and CEL rules. Only `description` texts are not compared
//! (counted and printed), and controller-gen's version annotation.
//!
//! `cargo test -p external-secrets-operator --test parity -- --nocapture` prints the counts.

use std::fs;

use serde_json::Value;

/// `/../../shared/reference/upstream-operator-crds` under the package, read when the test runs: a target dir shared
/// between checkouts must never point a test at another checkout.
fn upstream_dir() -> String {
    format!(
        "{}/../../shared/reference/upstream-operator-crds",
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")
    )
}

/// Differences we accept: (path, reason).
const ALLOWED: &[(&str, &str)] = &[(
    "externalsecretsconfigs.operator.openshift.io/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/controllerConfig/properties/componentConfigs/items/properties/overrideEnv/items/properties/valueFrom/properties/fileKeyRef",
    "EnvVarSource.fileKeyRef is Kubernetes 1.34 (EnvFiles feature gate, alpha); the workspace \
     builds k8s-openapi for 1.33, whose EnvVar has no such field",
)];

/// Walks both values, collecting every path where they differ.
fn compare(path: &str, ours: &Value, upstream: &Value, report: &mut Report) {
    report.paths += 1;
    match (ours, upstream) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let child = format!("{path}/{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) if key == "description" => {
                        if x != y {
                            report.descriptions += 1;
                        }
                    }
                    (Some(x), Some(y)) if key == "required" => {
                        compare(&child, &sorted(x), &sorted(y), report)
                    }
                    (Some(x), Some(y)) => compare(&child, x, y, report),
                    (x, y) if key == "description" => {
                        if x.is_some() != y.is_some() {
                            report.descriptions += 1;
                        }
                    }
                    _ if ALLOWED.iter().any(|(path, _)| *path == child) => report.allowed += 1,
                    (x, y) => report
                        .differences
                        .push(format!("{child}: ours {x:?} / upstream {y:?}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                compare(&format!("{path}/{index}"), x, y, report);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        _ if ours == upstream => {}
        _ => report
            .differences
            .push(format!("{path}: ours {ours} / upstream {upstream}")),
    }
}

/// A `required` list in name order (its order means nothing).
fn sorted(list: &Value) -> Value {
    let mut names: Vec<Value> = list.as_array().cloned().unwrap_or_default();
    names.sort_by_key(Value::to_string);
    Value::Array(names)
}

#[derive(Default)]
struct Report {
    paths: usize,
    allowed: usize,
    descriptions: usize,
    differences: Vec<String>,
}

#[test]
fn generated_crds_match_upstream() {
    let mut report = Report::default();
    let ours = external_secrets_operator::api::all_crds();
    assert_eq!(ours.len(), 2, "two CRDs");
    for crd in ours {
        let name = crd.metadata.name.clone().expect("a CRD name");
        let file = format!(
            "{}/{}_{}.yaml",
            upstream_dir(),
            crd.spec.group,
            crd.spec.names.plural
        );
        let text = fs::read_to_string(&file).unwrap_or_else(|error| panic!("{file}: {error}"));
        let mut upstream: Value = serde_yaml::from_str(&text).expect("upstream CRD YAML");
        if let Some(annotations) = upstream
            .pointer_mut("/metadata")
            .and_then(Value::as_object_mut)
        {
            annotations.remove("annotations");
        }
        let ours = serde_json::to_value(&crd).expect("a CRD serializes");
        compare(&name, &ours, &upstream, &mut report);
    }
    println!(
        "{} paths compared, {} description texts differ",
        report.paths, report.descriptions
    );
    assert_eq!(
        report.allowed,
        ALLOWED.len(),
        "every allowed difference must still occur"
    );
    for difference in &report.differences {
        println!("DIFF {difference}");
    }
    assert!(
        report.differences.is_empty(),
        "{} differences from upstream's CRDs (DIFF lines above)",
        report.differences.len()
    );
}
