//! The kubeconfig file clients (kube-rs, kubectl, the controller binary) use to reach the
//! server: one cluster, one user (bearer token or none), one context.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use std::path::Path;

/// Writes a kubeconfig for `server_url`, trusting `ca_pem` (for HTTPS) and presenting `token`.
pub(crate) fn write(
    path: &Path,
    server_url: &str,
    ca_pem: Option<&str>,
    token: Option<&str>,
) -> anyhow::Result<()> {
    let mut cluster = json!({"server": server_url});
    if let Some(ca_pem) = ca_pem {
        cluster["certificate-authority-data"] = STANDARD.encode(ca_pem).into();
    }
    let user = match token {
        Some(token) => json!({"token": token}),
        None => json!({}),
    };
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "loopback", "cluster": cluster}],
        "users": [{"name": "loopback", "user": user}],
        "contexts": [{"name": "loopback", "context": {"cluster": "loopback", "user": "loopback", "namespace": "default"}}],
        "current-context": "loopback",
        "preferences": {},
    });
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, serde_yaml::to_string(&config)?)?;
    Ok(())
}
