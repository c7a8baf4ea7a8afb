//! The committed `crds/manifests/*.yaml` must be exactly what the types generate.
//!
//! Regenerate them with `UPDATE_CRDS=1 cargo test -p external-secrets-crds --test drift`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// `/manifests` under the package, read when the test runs: a target dir shared
/// between checkouts must never point a test at another checkout.
fn manifest_dir() -> String {
    format!(
        "{}/manifests",
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")
    )
}
const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p external-secrets-crds --test drift";

fn committed() -> BTreeMap<String, String> {
    let Ok(entries) = fs::read_dir(manifest_dir()) else {
        return BTreeMap::new();
    };
    entries
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "yaml")
        })
        .map(|path| {
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            (name, fs::read_to_string(&path).expect("a manifest file"))
        })
        .collect()
}

#[test]
fn committed_manifests_match_the_types() {
    let generated: BTreeMap<String, String> =
        external_secrets_crds::manifests().into_iter().collect();
    let committed = committed();

    if std::env::var_os("UPDATE_CRDS").is_some_and(|value| value == "1") {
        let dir = manifest_dir();
        let dir = Path::new(&dir);
        fs::create_dir_all(dir).expect("creating crds/manifests");
        for name in committed
            .keys()
            .filter(|name| !generated.contains_key(*name))
        {
            fs::remove_file(dir.join(name)).expect("removing a stale manifest");
        }
        for (name, yaml) in &generated {
            fs::write(dir.join(name), yaml).expect("writing a manifest");
        }
        return;
    }

    let mut problems = Vec::new();
    for (name, yaml) in &generated {
        match committed.get(name) {
            None => problems.push(format!("{name}: missing")),
            Some(text) if text != yaml => problems.push(format!("{name}: differs from the types")),
            Some(_) => {}
        }
    }
    for name in committed
        .keys()
        .filter(|name| !generated.contains_key(*name))
    {
        problems.push(format!("{name}: no longer generated"));
    }
    assert!(
        problems.is_empty(),
        "crds/manifests is out of date with the CRD types:\n  {}\nregenerate with `{REGENERATE}` and commit the result",
        problems.join("\n  ")
    );
}
