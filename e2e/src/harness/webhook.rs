//! The `webhook` subcommand under test: started on free local ports with a certificate
//! directory, probed over plain HTTP and called over HTTPS by a client trusting a given CA.

use anyhow::Context;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{ComponentProcess, eventually, free_local_address, http_status};

const WAIT: Duration = Duration::from_secs(60);

/// A running `external-secrets webhook`.
pub struct WebhookProcess {
    /// The process.
    pub process: ComponentProcess,
    /// The HTTPS port (all interfaces; tests connect to 127.0.0.1).
    pub port: u16,
    /// The `/healthz` and `/readyz` address.
    pub healthz: SocketAddr,
    /// The `/metrics` address.
    pub metrics: SocketAddr,
}

impl WebhookProcess {
    /// Starts the webhook serving the certificate in `cert_dir` for `dns_name`, checking the
    /// files every second; returns once `/healthz` answers (it need not be ready).
    pub async fn start(cert_dir: &Path, dns_name: &str) -> anyhow::Result<Self> {
        Self::start_with(cert_dir, dns_name, &[]).await
    }

    /// [`WebhookProcess::start`] with `extra` flags (`--enable-http2`, `--metrics-secure`...).
    pub async fn start_with(
        cert_dir: &Path,
        dns_name: &str,
        extra: &[String],
    ) -> anyhow::Result<Self> {
        let port = free_local_address()?.port();
        let healthz = free_local_address()?;
        let metrics = free_local_address()?;
        let mut args = vec![
            "webhook".to_owned(),
            format!("--port={port}"),
            format!("--cert-dir={}", cert_dir.display()),
            format!("--dns-name={dns_name}"),
            "--check-interval=1s".to_owned(),
            format!("--healthz-addr={healthz}"),
            format!("--metrics-addr={metrics}"),
        ];
        args.extend_from_slice(extra);
        let mut process = ComponentProcess::start(&args, None)?;
        eventually(WAIT, "the webhook's /healthz", || {
            let running = process.ensure_running();
            async move {
                running?;
                let answer = http_status(healthz, "/healthz").await.ok();
                Ok(answer.filter(|(code, _)| *code == 200).map(|_| ()))
            }
        })
        .await?;
        Ok(Self {
            process,
            port,
            healthz,
            metrics,
        })
    }

    /// The status code and body of `/readyz`.
    pub async fn readiness(&self) -> anyhow::Result<(u16, String)> {
        http_status(self.healthz, "/readyz").await
    }

    /// Waits until `/readyz` answers 200.
    pub async fn wait_ready(&self) -> anyhow::Result<()> {
        eventually(WAIT, "the webhook's /readyz", || async {
            Ok((self.readiness().await?.0 == 200).then_some(()))
        })
        .await
        .map_err(|error| error.context(self.process.log()))
    }

    /// A client of the webhook that trusts only the CA in `ca_pem` and expects the server
    /// name `server_name`. `scratch` is a directory for the CA file.
    pub async fn client_trusting(
        &self,
        scratch: &Path,
        ca_pem: &[u8],
        server_name: &str,
    ) -> anyhow::Result<kube::Client> {
        let ca_path: PathBuf = scratch.join(format!("trust-{:08x}.pem", fastrand::u32(..)));
        std::fs::write(&ca_path, ca_pem)?;
        let kubeconfig = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "webhook", "cluster": {
                "server": format!("https://127.0.0.1:{}", self.port),
                "certificate-authority": ca_path,
                "tls-server-name": server_name,
            }}],
            "contexts": [{"name": "webhook", "context": {"cluster": "webhook", "user": "nobody"}}],
            "users": [{"name": "nobody", "user": {}}],
            "current-context": "webhook",
        }))?;
        let config = kube::Config::from_custom_kubeconfig(
            kubeconfig,
            &kube::config::KubeConfigOptions::default(),
        )
        .await?;
        Ok(kube::Client::try_from(config)?)
    }
}

/// An `admission.k8s.io/v1` review asking to create `object` (of `kind` in `version`, served
/// as `resource`), with a fresh uid.
pub fn admission_review(kind: &str, version: &str, resource: &str, object: Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": format!("{:08x}-e2e", fastrand::u32(..)),
            "kind": {"group": "external-secrets.io", "version": version, "kind": kind},
            "resource": {"group": "external-secrets.io", "version": version, "resource": resource},
            "name": object["metadata"]["name"],
            "namespace": object["metadata"]["namespace"],
            "operation": "CREATE",
            "userInfo": {"username": "e2e"},
            "object": object,
            "dryRun": false,
        }
    })
}

/// A review asking to create a minimal valid ExternalSecret (`default/es`, extracting
/// `config`): the webhook allows it.
pub fn valid_external_secret_review() -> Value {
    let object = json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "es", "namespace": "default"},
        "spec": {"dataFrom": [{"extract": {"key": "config"}}]},
    });
    admission_review("ExternalSecret", "v1", "externalsecrets", object)
}

/// Posts `review` to `path` and returns the answer's `response` (checked to answer that
/// review).
pub async fn post_review(
    client: &kube::Client,
    path: &str,
    review: &Value,
) -> anyhow::Result<Value> {
    let request = http::Request::post(path)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(review)?)?;
    let text = client
        .request_text(request)
        .await
        .with_context(|| format!("POST {path}"))?;
    let answer: Value = serde_json::from_str(&text)?;
    anyhow::ensure!(
        answer["response"]["uid"] == review["request"]["uid"],
        "answer to another request: {answer}"
    );
    Ok(answer["response"].clone())
}
