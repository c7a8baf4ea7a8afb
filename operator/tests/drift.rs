//! The committed `operator/manifests/crds/*.yaml` must be exactly what the types generate.
//!
//! Regenerate them with `UPDATE_CRDS=1 cargo test -p external-secrets-operator --test drift`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// `/manifests/crds` under the package, read when the test runs: a target dir shared
/// between checkouts must never point a test at another checkout.
fn manifest_dir() -> String {
    format!(
        "{}/manifests/crds",
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")
    )
}

#[test]
fn committed_crds_match_the_types() {
    let generated: BTreeMap<String, String> = external_secrets_operator::api::manifests()
        .into_iter()
        .collect();
    let dir = manifest_dir();
    let dir = Path::new(&dir);
    if std::env::var_os("UPDATE_CRDS").is_some_and(|value| value == "1") {
        fs::create_dir_all(dir).expect("creating operator/manifests/crds");
        for (name, yaml) in &generated {
            fs::write(dir.join(name), yaml).expect("writing a CRD manifest");
        }
    }
    let committed: BTreeMap<String, String> = fs::read_dir(dir)
        .expect("operator/manifests/crds")
        .map(|entry| entry.expect("a directory entry").path())
        .map(|path| {
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            (name, fs::read_to_string(&path).expect("a CRD manifest"))
        })
        .collect();
    let stale: Vec<&String> = generated
        .iter()
        .filter(|(name, yaml)| committed.get(*name) != Some(yaml))
        .map(|(name, _)| name)
        .chain(
            committed
                .keys()
                .filter(|name| !generated.contains_key(*name)),
        )
        .collect();
    assert!(
        stale.is_empty(),
        "operator/manifests/crds is out of date with the types ({stale:?}): regenerate with \
         `UPDATE_CRDS=1 cargo test -p external-secrets-operator --test drift` and commit"
    );
}
