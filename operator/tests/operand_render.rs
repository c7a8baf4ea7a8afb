//! The committed operand manifests (`operator/manifests/operand/*.yaml`) must be exactly what
//! our Helm chart renders from `operator/operand-values.yaml`: one source of truth, the chart.
//!
//! The chart is rendered with the real Helm library (helm_sdkpy through
//! charts/test/render_chart.py) into a loopback API server this test starts, once per
//! certificate mode. Regenerate with `operator/render-operand.sh` (this test with
//! `UPDATE_OPERAND=1`). Fails, never skips, without python3 and helm_sdkpy
//! (scripts/test-tools.sh installs them; scripts/test.sh puts them on PATH).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use loopback_apiserver::{LoopbackServer, Options};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

fn repository() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .parent()
        .expect("operator/ has a parent")
        .to_path_buf()
}

/// Renders the chart with `values` as release `external-secrets` in `external-secrets`.
async fn render(values: &Value) -> String {
    let server = LoopbackServer::start(Options::default())
        .await
        .expect("loopback server");
    let client = server.client().await.expect("client");
    // Helm creates what it renders: cert-manager's Certificate must be served.
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    let third_party = repository().join("charts/test/third-party-crds.yaml");
    let text = std::fs::read_to_string(&third_party).expect("third-party CRDs");
    for document in serde_yaml::Deserializer::from_str(&text) {
        let crd: CustomResourceDefinition =
            CustomResourceDefinition::deserialize(document).expect("a CRD");
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("creating a third-party CRD");
    }
    let script = repository().join("charts/test/render_chart.py");
    let mut child = tokio::process::Command::new("python3")
        .arg(&script)
        .arg(server.kubeconfig_path())
        .args(["external-secrets", "external-secrets"])
        .arg(repository().join("charts/external-secrets"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 with helm_sdkpy (scripts/test-tools.sh; scripts/test.sh puts it on PATH)");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(values.to_string().as_bytes())
        .await
        .expect("writing values");
    drop(stdin);
    let output = child.wait_with_output().await.expect("render_chart.py");
    assert!(
        output.status.success(),
        "rendering the chart failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 manifests")
}

#[tokio::test]
async fn committed_operand_manifests_are_the_rendered_chart() {
    let values_path =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("operand-values.yaml");
    let values: Value =
        serde_yaml::from_str(&std::fs::read_to_string(&values_path).expect("operand-values.yaml"))
            .expect("values YAML");
    let update = std::env::var_os("UPDATE_OPERAND").is_some_and(|value| value == "1");
    let mut stale = Vec::new();
    for (file, cert_manager) in external_secrets_operator::operand::RENDERINGS {
        let mut values = values.clone();
        values["webhook"]["certManager"]["enabled"] = Value::Bool(*cert_manager);
        let rendered = render(&values).await;
        let path =
            Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
                .join("manifests/operand")
                .join(file);
        if update {
            std::fs::write(&path, &rendered).expect("writing an operand manifest");
        }
        if std::fs::read_to_string(&path).ok().as_deref() != Some(rendered.as_str()) {
            stale.push(*file);
        }
        // What the operator embeds parses into objects it knows.
        assert!(
            !external_secrets_operator::operand::parse(&rendered)
                .expect("rendered manifests parse")
                .is_empty()
        );
    }
    assert!(
        stale.is_empty(),
        "operator/manifests/operand is out of date with the chart ({stale:?}): run \
         operator/render-operand.sh and commit the result"
    );
}
