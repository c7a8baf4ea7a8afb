//! `external-secrets render`: the README's quickstart renders the expected Secret without a
//! cluster, and failures are reported as the status condition words them, with a non-zero
//! exit and no secret value in the message.

use std::collections::BTreeMap;
use std::process::{Command, Output};

use base64::Engine as _;
use serde_json::Value;

fn render(file: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_external-secrets"))
        .args(["render", "-f"])
        .arg(file)
        .output()
        .expect("running external-secrets render")
}

/// The Secrets printed on stdout, as JSON values.
fn documents(output: &Output) -> Vec<Value> {
    let text = String::from_utf8(output.stdout.clone()).expect("UTF-8 output");
    serde_yaml::Deserializer::from_str(&text)
        .map(|document| serde::Deserialize::deserialize(document).expect("YAML document"))
        .collect()
}

fn decoded_data(secret: &Value) -> BTreeMap<String, String> {
    secret["data"]
        .as_object()
        .expect("data")
        .iter()
        .map(|(key, value)| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(value.as_str().expect("base64 string"))
                .expect("valid base64");
            (key.clone(), String::from_utf8(bytes).expect("UTF-8 value"))
        })
        .collect()
}

#[test]
fn quickstart_renders_the_secret_and_reports_the_broken_example() {
    let quickstart = std::path::Path::new(
        &std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("examples/quickstart.yaml");
    let output = render(&quickstart);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let secrets = documents(&output);
    assert_eq!(secrets.len(), 1, "stderr: {stderr}");
    let secret = &secrets[0];
    assert_eq!(secret["kind"], "Secret");
    assert_eq!(secret["metadata"]["name"], "demo-credentials");
    assert_eq!(secret["metadata"]["namespace"], "default");
    assert_eq!(secret["type"], "Opaque");
    assert_eq!(
        secret["metadata"]["labels"]["reconcile.external-secrets.io/managed"],
        "true"
    );
    assert_eq!(
        secret["metadata"]["labels"]["app.kubernetes.io/name"],
        "demo"
    );
    let expected: BTreeMap<String, String> = [
        ("token", "demo-token-v2"),
        ("username", "app"),
        ("password", "demo-password"),
        ("host", "db.demo.svc"),
        ("dsn", "postgres://app:demo-password@db.demo.svc:5432/app"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(decoded_data(secret), expected);

    // The second ExternalSecret reads a key the store lacks.
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr.contains(
            "ExternalSecret default/demo-missing: Ready=False SecretSyncedError: could not get secret data from provider: error processing spec.data[0] (key: /demo/does-not-exist), err: "
        ),
        "stderr: {stderr}"
    );
    assert!(
        !stderr.contains("demo-password"),
        "no secret value in {stderr}"
    );
}

#[test]
fn store_rules_apply_without_a_cluster() {
    let output = render_text(
        "rules",
        r#"
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: shared}
spec:
  conditions: [{namespaceSelector: {matchLabels: {team: a}}}]
  provider: {fake: {data: [{key: k, value: v}]}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: allowed, namespace: team-a}
spec:
  secretStoreRef: {name: shared, kind: ClusterSecretStore}
  data: [{secretKey: key, remoteRef: {key: k}}]
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: denied, namespace: team-b}
spec:
  secretStoreRef: {name: shared, kind: ClusterSecretStore}
  data: [{secretKey: key, remoteRef: {key: k}}]
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: elsewhere, namespace: team-b}
spec:
  secretStoreRef: {name: missing}
  data: [{secretKey: key, remoteRef: {key: k}}]
"#,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let secrets = documents(&output);
    assert_eq!(secrets.len(), 1, "stderr: {stderr}");
    assert_eq!(secrets[0]["metadata"]["namespace"], "team-a");
    assert_eq!(decoded_data(&secrets[0])["key"], "v");
    assert!(
        stderr.contains("ExternalSecret team-b/denied: Ready=False SecretSyncedError: using cluster store \"shared\" is not allowed from namespace \"team-b\": denied by spec.condition"),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("ExternalSecret team-b/elsewhere: Ready=False SecretSyncedError: could not get SecretStore \"missing\": not found"),
        "stderr: {stderr}"
    );
    assert_eq!(output.status.code(), Some(1));
}

/// Writes `manifest` to a fresh file and renders it.
fn render_text(name: &str, manifest: &str) -> Output {
    let dir = std::env::temp_dir().join(format!("render-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("input.yaml");
    std::fs::write(&file, manifest).unwrap();
    let output = render(&file);
    std::fs::remove_dir_all(&dir).unwrap();
    output
}

#[test]
fn data_overrides_data_from_and_missing_keys_follow_the_deletion_policy() {
    let output = render_text(
        "order",
        r#"
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: store}
spec:
  provider:
    fake:
      data:
        - {key: bundle, value: '{"token":"from-bundle","user/name":"app"}'}
        - {key: token, value: from-data}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: ordered}
spec:
  secretStoreRef: {name: store}
  target: {deletionPolicy: Delete}
  data:
    - {secretKey: token, remoteRef: {key: token}}
    - {secretKey: gone, remoteRef: {key: not-there}}
  dataFrom:
    - extract: {key: bundle}
"#,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    let secrets = documents(&output);
    let data = decoded_data(&secrets[0]);
    // spec.data wins over spec.dataFrom; the extracted key is converted (`/` -> `_`); the
    // missing key is skipped under deletionPolicy Delete.
    let expected: BTreeMap<String, String> = [("token", "from-data"), ("user_name", "app")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(data, expected);
}

#[test]
fn null_byte_policy_fail_refuses_binary_values() {
    let output = render_text(
        "nul",
        r#"
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: store}
spec:
  provider: {fake: {data: [{key: blob, value: "A\0B"}]}}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: strict}
spec:
  secretStoreRef: {name: store}
  data: [{secretKey: blob, remoteRef: {key: blob, nullBytePolicy: Fail}}]
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: lenient}
spec:
  secretStoreRef: {name: store}
  data: [{secretKey: blob, remoteRef: {key: blob}}]
"#,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ExternalSecret default/strict: Ready=False SecretSyncedError: could not get secret data from provider: error processing spec.data[0] (key: blob), err: fetched secret value for key \"blob\" contains null bytes"),
        "stderr: {stderr}"
    );
    let secrets = documents(&output);
    assert_eq!(secrets.len(), 1);
    assert_eq!(secrets[0]["metadata"]["name"], "lenient");
    assert_eq!(decoded_data(&secrets[0])["blob"], "A\u{0}B");
}

#[test]
fn generators_in_the_file_generate_without_a_cluster() {
    let output = render_text(
        "generators",
        r#"
apiVersion: generators.external-secrets.io/v1alpha1
kind: Password
metadata: {name: pw}
spec: {length: 20, digits: 4, symbols: 0, allowRepeat: true}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: ClusterGenerator
metadata: {name: shared-id}
spec:
  kind: UUID
  generator: {uuidSpec: {}}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: generated}
spec:
  dataFrom:
    - sourceRef: {generatorRef: {apiVersion: generators.external-secrets.io/v1alpha1, kind: Password, name: pw}}
    - sourceRef: {generatorRef: {apiVersion: generators.external-secrets.io/v1alpha1, kind: ClusterGenerator, name: shared-id}}
"#,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    let data = decoded_data(&documents(&output)[0]);
    assert_eq!(data["password"].len(), 20);
    assert_eq!(
        data["password"]
            .chars()
            .filter(char::is_ascii_digit)
            .count(),
        4
    );
    assert_eq!(data["uuid"].len(), 36);
}

#[test]
fn generic_targets_render_as_the_object_the_controller_writes() {
    let output = render_text(
        "generic",
        r#"
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: fake, namespace: apps}
spec:
  provider: {fake: {data: [{key: host, value: db.local}, {key: user, value: app}]}}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: settings, namespace: apps}
spec:
  secretStoreRef: {name: fake}
  target:
    name: app-settings
    manifest: {apiVersion: v1, kind: ConfigMap}
  data:
    - {secretKey: host, remoteRef: {key: host}}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: database, namespace: apps}
spec:
  secretStoreRef: {name: fake}
  target:
    manifest: {apiVersion: example.io/v1, kind: Database}
    template:
      templateFrom:
        - {target: spec.connection, literal: "user: {{ .user }}\nport: 5432"}
  data:
    - {secretKey: user, remoteRef: {key: user}}
"#,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    let objects = documents(&output);
    assert_eq!(objects.len(), 2, "stderr: {stderr}");
    let config_map = objects
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .expect("a ConfigMap");
    assert_eq!(config_map["metadata"]["name"], "app-settings");
    assert_eq!(config_map["data"]["host"], "db.local");
    let database = objects
        .iter()
        .find(|o| o["kind"] == "Database")
        .expect("a Database");
    assert_eq!(database["apiVersion"], "example.io/v1");
    assert_eq!(
        database["spec"]["connection"],
        serde_json::json!({"user": "app", "port": 5432})
    );
}
