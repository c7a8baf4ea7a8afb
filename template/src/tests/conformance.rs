//! The templated examples of `../shared/conformance/manifests` (upstream's documentation
//! examples): every v2 template parses with the function map, and the ones whose output can be
//! checked without a provider render as Go renders them.

use std::path::Path;

use super::{data, ok};
use crate::{Delimiters, TemplateError, render};

#[test]
fn conformance_manifest_examples_render() {
    assert_eq!(ok("{{ `{{ .mysecret }}` }}", &[]), "{{ .mysecret }}");
    assert_eq!(
        ok("{{ printf \"{{ .password | toString }}\" }}", &[]),
        "{{ .password | toString }}"
    );
    let docker = "{\"auths\":{\"registry.example.com\":{\"username\":\"{{ .username }}\",\"password\":\"{{ .password }}\",\"auth\":\"{{(printf \"%s:%s\" .username .password) | b64enc }}\"}}}";
    assert_eq!(
        ok(docker, &[("username", "u"), ("password", "p")]),
        "{\"auths\":{\"registry.example.com\":{\"username\":\"u\",\"password\":\"p\",\"auth\":\"dTpw\"}}}"
    );
    let name =
        "{{  (fromJson .name).first }} {{  (fromJson .name).middle }} {{  (fromJson .name).last }}";
    assert_eq!(
        ok(
            name,
            &[("name", r#"{"first":"A","middle":"B","last":"C"}"#)]
        ),
        "A B C"
    );
    let htpasswd = "{{- $creds := list }}\n{{- range $user, $pw := . }}\n  {{- $creds = append $creds (printf \"%s\" (htpasswd $user $pw \"bcrypt\")) }}\n{{- end }}\nauth: {{ $creds | join \"\\n\" | quote }}";
    let out = ok(htpasswd, &[("user1", "password1"), ("user2", "password2")]);
    // `{{- end }}` trims only before itself: the newline after it stays, as in Go.
    assert!(
        out.starts_with("\nauth: \"user1:$2a$10$") && out.contains("\\nuser2:$2a$10$"),
        "{out}"
    );
    assert_eq!(
        ok(
            "last-sync-for-user/{{ .user }}: {{ .now }}",
            &[("user", "u"), ("now", "t")]
        ),
        "last-sync-for-user/u: t"
    );
}

/// The `template.data` values and `templateFrom` literals of every v2 ExternalSecret in `text`.
fn v2_templates(text: &str) -> Result<Vec<String>, serde_yaml::Error> {
    // The manifests come from upstream's docs, where Jekyll's `{% raw %}` lines wrap them.
    let text: String = text
        .lines()
        .filter(|line| !line.starts_with("{%"))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut sources = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value = <serde_yaml::Value as serde::Deserialize>::deserialize(document)?;
        let template = &value["spec"]["target"]["template"];
        if value["kind"] != "ExternalSecret"
            || template.is_null()
            || template["engineVersion"] == "v1"
        {
            continue;
        }
        if let Some(map) = template["data"].as_mapping() {
            sources.extend(map.values().filter_map(|v| v.as_str().map(str::to_owned)));
        }
        if let Some(list) = template["templateFrom"].as_sequence() {
            sources.extend(
                list.iter()
                    .filter_map(|f| f["literal"].as_str().map(str::to_owned)),
            );
        }
    }
    Ok(sources)
}

/// Manifests that are doc snippets rather than valid YAML, so their templates cannot be
/// extracted: file name and what is wrong. (The pkcs12 snippet's templates are the `pkcs12cert`
/// / `pkcs12key` / `pkcs12certPass` pipelines the `pem` tests render.)
const INVALID_YAML: &[(&str, &str)] = &[
    (
        "1password-connect-server-deployment.yaml",
        "`...` placeholders",
    ),
    ("conjur-ca-bundle.yaml", "`...` placeholders"),
    ("full-external-secret.yaml", "duplicate key dataFrom"),
    ("ibm-container-auth-volume.yaml", "`...` placeholders"),
    (
        "pkcs12-template-v2-external-secret.yaml",
        "duplicate key tls.crt, unescaped quotes",
    ),
];

#[test]
fn conformance_manifest_templates_parse() {
    let directory =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../../shared/conformance/manifests");
    let entries = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()));
    let mut checked = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy();
        let known_invalid = INVALID_YAML.iter().find(|(name, _)| *name == file);
        let sources = match (v2_templates(&text), known_invalid) {
            (Ok(sources), None) => sources,
            (Err(_), Some(_)) => continue,
            (Ok(_), Some(_)) => panic!("{file} parses now: remove it from INVALID_YAML"),
            (Err(error), None) => panic!("{file}: {error}"),
        };
        for source in sources {
            let result = render("k", &source, &data(&[]), &Delimiters::default());
            assert!(
                !matches!(result, Err(TemplateError::Parse { .. })),
                "{file}: {result:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} templates found");
}
