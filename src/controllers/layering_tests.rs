//! Checks the layering of `src/controllers` from its source text: no controller imports another
//! controller's modules, shared modules (and `src/stores`, `src/labels.rs`, `src/caches.rs`) import no
//! controller, the admission webhook (`src/webhook`) imports no controller's modules (only shared
//! ones), and the imports between the files of `src/controllers` form no cycle.
//!
//! Imports are read from `use` trees and from inline `crate::controllers::...` and `super::...`
//! paths. A module's `mod.rs` wiring up its own children (declaring and running them) is the
//! module tree, not an import, so edges from a `mod.rs` to files below it are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The controllers: one directory each. Every other module of `src/controllers` is shared.
const CONTROLLERS: &[&str] = &[
    "cluster_external_secret",
    "cluster_push_secret",
    "external_secret",
    "push_secret",
    "secret_store",
];

/// A file's module path below `src/controllers` (`["external_secret", "generic", "sync"]`).
type ModulePath = Vec<String>;

fn root() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("src/controllers")
}

/// Every `.rs` file below `dir`, by module path (`mod.rs` is its directory's module).
fn files(dir: &Path, module: &ModulePath, found: &mut BTreeMap<ModulePath, PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut child = module.clone();
            child.push(name);
            files(&path, &child, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let mut child = module.clone();
            if name != "mod" {
                child.push(name);
            }
            found.insert(child, path);
        }
    }
}

/// Expands a `use` tree (`super::{self, a::{b, c}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.trim_end_matches("::self").to_owned()];
    };
    let prefix = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (index, character) in inner.char_indices() {
        match character {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .flat_map(|part| match part.trim() {
            "self" => vec![prefix.to_owned()],
            part => expand(part)
                .into_iter()
                .map(|path| format!("{prefix}::{path}"))
                .collect(),
        })
        .collect()
}

/// The paths a file imports: its `use` trees and inline `crate::controllers::`/`super::`
/// paths (comments skipped).
fn imported_paths(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let statement = regex::Regex::new(r"(?m)^\s*(?:pub(?:\([\w:]+\))?\s+)?use\s+([^;]+);").unwrap();
    let mut paths: Vec<String> = statement
        .captures_iter(&code)
        .flat_map(|captures| expand(&captures[1]))
        .collect();
    let inline = regex::Regex::new(r"\b(crate::controllers|super)(::\w+)+").unwrap();
    paths.extend(
        inline
            .find_iter(&code)
            .map(|found| found.as_str().to_owned()),
    );
    paths
}

/// The file (module path) `path`, written in the file of module `from` (`is_mod` when that
/// file is a `mod.rs`), refers to; `None` for other crates and modules outside
/// `src/controllers`.
fn resolve(
    path: &str,
    from: &ModulePath,
    is_mod: bool,
    modules: &BTreeMap<ModulePath, PathBuf>,
) -> Option<ModulePath> {
    let segments: Vec<&str> = path.split("::").map(str::trim).collect();
    let (mut module, rest): (ModulePath, &[&str]) = match segments.as_slice() {
        ["crate", "controllers", rest @ ..] => (Vec::new(), rest),
        ["crate", ..] => return None,
        ["self", rest @ ..] => (from.clone(), rest),
        ["super", ..] => {
            let mut module = from.clone();
            let mut rest = segments.as_slice();
            while rest.first() == Some(&"super") {
                module.pop()?;
                rest = &rest[1..];
            }
            (module, rest)
        }
        [first, ..] => {
            let mut child = from.clone();
            child.push((*first).to_owned());
            if !is_mod || !modules.contains_key(&child) {
                return None;
            }
            (from.clone(), segments.as_slice())
        }
        [] => return None,
    };
    for segment in rest {
        let mut child = module.clone();
        child.push((*segment).to_owned());
        if !modules.contains_key(&child) {
            break;
        }
        module = child;
    }
    Some(module)
}

/// The import edges between the files of `src/controllers`.
fn edges() -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
    let mut modules = BTreeMap::new();
    files(&root(), &Vec::new(), &mut modules);
    let mut edges = BTreeMap::new();
    for (module, path) in &modules {
        let is_mod = path.file_name().is_some_and(|name| name == "mod.rs");
        let text = std::fs::read_to_string(path).unwrap();
        let targets: BTreeSet<ModulePath> = imported_paths(&text)
            .iter()
            .filter_map(|imported| resolve(imported, module, is_mod, &modules))
            .filter(|target| target != module)
            .filter(|target| !(is_mod && target.starts_with(module)))
            .collect();
        edges.insert(module.clone(), targets);
    }
    edges
}

fn controller_of(module: &ModulePath) -> Option<&str> {
    let first = module.first()?;
    CONTROLLERS.iter().copied().find(|c| c == first)
}

#[test]
fn no_controller_imports_another_controller() {
    let mut violations = Vec::new();
    for (module, targets) in edges() {
        for target in targets {
            let (from, to) = (controller_of(&module), controller_of(&target));
            if to.is_some() && from != to {
                violations.push(format!("{} -> {}", module.join("::"), target.join("::")));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "cross-controller imports: {violations:#?}"
    );
}

#[test]
fn modules_below_the_controllers_import_none() {
    let source =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("src");
    let mut below = vec![source.join("labels.rs"), source.join("caches.rs")];
    let mut stores = BTreeMap::new();
    files(&source.join("stores"), &Vec::new(), &mut stores);
    below.extend(stores.into_values());
    for path in below {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("crate::controllers"),
            "{} imports a controller module",
            path.display()
        );
    }
}

#[test]
fn the_webhook_imports_no_controller() {
    let mut webhook = BTreeMap::new();
    let source =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("src");
    files(&source.join("webhook"), &Vec::new(), &mut webhook);
    assert!(webhook.len() > 5, "the webhook's files were not found");
    let mut violations = Vec::new();
    for path in webhook.values() {
        let text = std::fs::read_to_string(path).unwrap();
        for imported in imported_paths(&text) {
            let segments: Vec<&str> = imported.split("::").map(str::trim).collect();
            if let ["crate", "controllers", first, ..] = segments.as_slice()
                && CONTROLLERS.contains(first)
            {
                violations.push(format!("{}: {imported}", path.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "the webhook imports controller internals: {violations:#?}"
    );
}

#[test]
fn controller_imports_form_no_cycle() {
    let edges = edges();
    // Depth-first search; a back edge to a module on the stack closes a cycle.
    fn visit(
        module: &ModulePath,
        edges: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        stack: &mut Vec<ModulePath>,
        done: &mut BTreeSet<ModulePath>,
        cycles: &mut Vec<String>,
    ) {
        if done.contains(module) {
            return;
        }
        if let Some(start) = stack.iter().position(|m| m == module) {
            let cycle: Vec<String> = stack[start..].iter().map(|m| m.join("::")).collect();
            cycles.push(cycle.join(" -> "));
            return;
        }
        stack.push(module.clone());
        for target in edges.get(module).into_iter().flatten() {
            visit(target, edges, stack, done, cycles);
        }
        stack.pop();
        done.insert(module.clone());
    }
    let (mut done, mut cycles) = (BTreeSet::new(), Vec::new());
    for module in edges.keys() {
        visit(module, &edges, &mut Vec::new(), &mut done, &mut cycles);
    }
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}

#[test]
fn the_checker_sees_imports() {
    assert_eq!(
        expand("super::{self, a::{b, c}, d}"),
        ["super", "super::a::b", "super::a::c", "super::d"]
    );
    let edges = edges();
    let reconcile = vec!["external_secret".to_owned(), "reconcile".to_owned()];
    let outcome = vec!["external_secret".to_owned(), "outcome".to_owned()];
    assert!(
        edges[&reconcile].contains(&outcome),
        "{:?}",
        edges[&reconcile]
    );
    // Every top-level directory is classified: a new controller must be added above.
    let shared = ["fan_out", "template"];
    for entry in std::fs::read_dir(root()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                CONTROLLERS.contains(&name.as_str()) || shared.contains(&name.as_str()),
                "{name}: add it to CONTROLLERS or to the shared modules"
            );
        }
    }
}
