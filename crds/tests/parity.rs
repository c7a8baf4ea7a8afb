//! Schema parity with upstream: every CRD generated from our types must match upstream's generated
//! CRD (`../shared/reference/upstream-crds/`) path for path, except for the few differences on
//! [`ALLOWED`]. Descriptions are compared too, but only counted and reported.
//!
//! `cargo test -p external-secrets-crds --test parity -- --nocapture` prints what was compared.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::Value;

/// `/../../shared/reference/upstream-crds` under the package, read when the test runs: a target dir shared
/// between checkouts must never point a test at another checkout.
fn upstream_dir() -> String {
    format!(
        "{}/../../shared/reference/upstream-crds",
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")
    )
}

/// Differences we accept: (CRD name, version, schema path, kind of difference, reason).
const ALLOWED: &[(&str, &str, &str, &str, &str)] = &[];

/// One difference between upstream's CRD and ours.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Difference {
    crd: String,
    version: String,
    path: String,
    kind: String,
    detail: String,
}

#[derive(Default)]
struct Comparison {
    crd: String,
    version: String,
    differences: Vec<Difference>,
    compared_paths: usize,
    description_mismatches: Vec<String>,
}

impl Comparison {
    fn differ(&mut self, path: &str, kind: &str, ours: Option<&Value>, upstream: Option<&Value>) {
        let show = |value: Option<&Value>| value.map_or("<absent>".to_owned(), short);
        self.differences.push(Difference {
            crd: self.crd.clone(),
            version: self.version.clone(),
            path: path.to_owned(),
            kind: kind.to_owned(),
            detail: format!("ours {} / upstream {}", show(ours), show(upstream)),
        });
    }

    /// Compares two schema nodes and everything below them.
    fn schema(&mut self, path: &str, ours: &Value, upstream: &Value) {
        self.compared_paths += 1;
        let (Some(ours), Some(upstream)) = (ours.as_object(), upstream.as_object()) else {
            if ours != upstream {
                self.differ(path, "schema", Some(ours), Some(upstream));
            }
            return;
        };
        let keys: BTreeSet<&String> = ours.keys().chain(upstream.keys()).collect();
        for key in keys {
            let (mine, theirs) = (ours.get(key), upstream.get(key));
            match key.as_str() {
                "description" => {
                    if mine != theirs {
                        self.description_mismatches.push(format!(
                            "{} {} {path}: ours {} / upstream {}",
                            self.crd,
                            self.version,
                            mine.map_or("<absent>".to_owned(), short),
                            theirs.map_or("<absent>".to_owned(), short),
                        ));
                    }
                }
                "properties" => self.properties(path, mine, theirs),
                "items" => match (mine, theirs) {
                    (Some(mine), Some(theirs)) => self.schema(&format!("{path}[]"), mine, theirs),
                    _ => self.differ(path, key, mine, theirs),
                },
                "additionalProperties" => match (mine, theirs) {
                    (Some(mine @ Value::Object(_)), Some(theirs @ Value::Object(_))) => {
                        self.schema(&format!("{path}{{}}"), mine, theirs)
                    }
                    _ if mine != theirs => self.differ(path, key, mine, theirs),
                    _ => {}
                },
                "required" => {
                    let set = |value: Option<&Value>| -> BTreeSet<String> {
                        value
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(short)
                            .collect()
                    };
                    if set(mine) != set(theirs) {
                        self.differ(path, key, mine, theirs);
                    }
                }
                _ => {
                    if !same_value(mine, theirs) {
                        self.differ(path, key, mine, theirs);
                    }
                }
            }
        }
    }

    fn properties(&mut self, path: &str, ours: Option<&Value>, upstream: Option<&Value>) {
        let empty = serde_json::Map::new();
        let ours = ours.and_then(Value::as_object).unwrap_or(&empty);
        let upstream = upstream.and_then(Value::as_object).unwrap_or(&empty);
        let names: BTreeSet<&String> = ours.keys().chain(upstream.keys()).collect();
        for name in names {
            let child = format!("{path}.{name}");
            match (ours.get(name), upstream.get(name)) {
                (Some(mine), Some(theirs)) => self.schema(&child, mine, theirs),
                (mine, theirs) => self.differ(&child, "property", mine, theirs),
            }
        }
    }
}

/// Equality, numbers compared by value: k8s-openapi's `JSONSchemaProps` keeps `minimum` and
/// `maximum` as `f64`, so our `1` comes out as `1.0`.
fn same_value(ours: Option<&Value>, upstream: Option<&Value>) -> bool {
    match (ours, upstream) {
        (Some(Value::Number(a)), Some(Value::Number(b))) => a.as_f64() == b.as_f64(),
        _ => ours == upstream,
    }
}

fn short(value: &Value) -> String {
    let text = match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let text = text.replace('\n', "\\n");
    if text.chars().count() > 100 {
        format!("{}...", text.chars().take(100).collect::<String>())
    } else {
        text
    }
}

fn upstream_crds() -> BTreeMap<String, Value> {
    let dir = upstream_dir();
    let dir = Path::new(&dir);
    let mut crds = BTreeMap::new();
    for entry in
        fs::read_dir(dir).unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
    {
        let path = entry.expect("a directory entry").path();
        if path
            .extension()
            .is_some_and(|extension| extension == "yaml")
        {
            let text = fs::read_to_string(&path).expect("an upstream CRD file");
            let crd: Value = serde_yaml::from_str(&text).expect("upstream CRD YAML");
            crds.insert(
                crd["metadata"]["name"]
                    .as_str()
                    .expect("a CRD name")
                    .to_owned(),
                crd,
            );
        }
    }
    crds
}

/// CRD-level fields compared outside the schema, as (JSON pointer, kind of difference).
const CRD_FIELDS: &[(&str, &str)] = &[
    ("/metadata/labels", "labels"),
    ("/spec/group", "group"),
    ("/spec/names", "names"),
    ("/spec/scope", "scope"),
    ("/spec/conversion", "conversion"),
    ("/spec/preserveUnknownFields", "preserveUnknownFields"),
];

/// Version-level fields compared outside the schema.
const VERSION_FIELDS: &[&str] = &[
    "served",
    "storage",
    "deprecated",
    "deprecationWarning",
    "subresources",
    "additionalPrinterColumns",
    "selectableFields",
];

#[test]
fn generated_crds_match_upstream() {
    let upstream = upstream_crds();
    let ours: BTreeMap<String, Value> = external_secrets_crds::all_crds()
        .into_iter()
        .map(|crd| {
            let name = crd.metadata.name.clone().expect("a CRD name");
            (name, serde_json::to_value(crd).expect("a CRD serializes"))
        })
        .collect();

    let mut differences = Vec::new();
    let mut descriptions = Vec::new();
    let mut total_paths = 0;
    let names: BTreeSet<&String> = ours.keys().chain(upstream.keys()).collect();
    for name in names {
        let (Some(mine), Some(theirs)) = (ours.get(name), upstream.get(name)) else {
            differences.push(Difference {
                crd: name.clone(),
                version: String::new(),
                path: String::new(),
                kind: "crd".into(),
                detail: format!(
                    "only in {}",
                    if ours.contains_key(name) {
                        "ours"
                    } else {
                        "upstream"
                    }
                ),
            });
            continue;
        };
        let mut crd = Comparison {
            crd: name.clone(),
            ..Comparison::default()
        };
        for (pointer, kind) in CRD_FIELDS {
            let (a, b) = (mine.pointer(pointer), theirs.pointer(pointer));
            if a != b {
                crd.differ(pointer, kind, a, b);
            }
        }
        let versions = |crd: &Value| -> Vec<Value> {
            crd["spec"]["versions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        let (my_versions, their_versions) = (versions(mine), versions(theirs));
        let order = |versions: &[Value]| -> Vec<String> {
            versions.iter().map(|v| short(&v["name"])).collect()
        };
        if order(&my_versions) != order(&their_versions) {
            crd.differ(
                "/spec/versions",
                "versions",
                Some(&Value::from(order(&my_versions))),
                Some(&Value::from(order(&their_versions))),
            );
        }
        let mut paths = 0;
        for theirs in &their_versions {
            let Some(mine) = my_versions.iter().find(|v| v["name"] == theirs["name"]) else {
                continue;
            };
            crd.version = short(&theirs["name"]);
            for field in VERSION_FIELDS {
                let (a, b) = (mine.get(*field), theirs.get(*field));
                if a != b {
                    crd.differ("", field, a, b);
                }
            }
            let pointer = "/schema/openAPIV3Schema";
            match (mine.pointer(pointer), theirs.pointer(pointer)) {
                (Some(a), Some(b)) => crd.schema("", a, b),
                (a, b) => crd.differ("", "schema", a, b),
            }
        }
        paths += crd.compared_paths;
        println!(
            "{name}: {paths} schema paths compared, {} differences, {} description mismatches",
            crd.differences.len(),
            crd.description_mismatches.len()
        );
        total_paths += paths;
        differences.append(&mut crd.differences);
        descriptions.append(&mut crd.description_mismatches);
    }

    println!(
        "total: {total_paths} schema paths compared, {} description mismatches",
        descriptions.len()
    );
    for mismatch in descriptions.iter().take(20) {
        println!("  description differs: {mismatch}");
    }

    let allowed = |difference: &Difference| {
        ALLOWED.iter().any(|(crd, version, path, kind, _)| {
            difference.crd == *crd
                && difference.version == *version
                && difference.path == *path
                && difference.kind == *kind
        })
    };
    let stale: Vec<_> = ALLOWED
        .iter()
        .filter(|(crd, version, path, kind, _)| {
            !differences.iter().any(|difference| {
                difference.crd == *crd
                    && difference.version == *version
                    && difference.path == *path
                    && difference.kind == *kind
            })
        })
        .collect();
    let unexpected: Vec<_> = differences
        .iter()
        .filter(|difference| !allowed(difference))
        .collect();
    for difference in &unexpected {
        println!(
            "DIFF {} {} {} [{}]: {}",
            difference.crd, difference.version, difference.path, difference.kind, difference.detail
        );
    }
    assert!(
        stale.is_empty(),
        "allow-list entries that match no difference any more: {stale:?}"
    );
    assert!(
        unexpected.is_empty(),
        "{} differences from upstream's CRDs (see DIFF lines above)",
        unexpected.len()
    );
}
