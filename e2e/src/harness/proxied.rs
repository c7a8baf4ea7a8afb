//! The cluster as child processes see it through a local TCP proxy in front of its API server
//! (the chaos test cuts the API endpoint there, on any cluster): a copy of the kubeconfig whose
//! `server` is the proxy and whose `tls-server-name` is the real host, so the server's own
//! certificate still verifies through the proxy. The test's client keeps talking to the API
//! server directly.

use super::TestCluster;
use super::cluster::current_cluster;
use anyhow::Context;
use kube::config::Kubeconfig;
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// A [`TestCluster`] whose kubeconfig (what controller processes started with it use) leads
/// through a proxy while its client stays direct. The kubeconfig is a copy of the cluster's
/// credentials, so it is readable by its owner only and removed when this is dropped.
pub struct ProxiedCluster {
    cluster: TestCluster,
    directory: PathBuf,
}

impl std::ops::Deref for ProxiedCluster {
    type Target = TestCluster;

    fn deref(&self) -> &TestCluster {
        &self.cluster
    }
}

impl Drop for ProxiedCluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

impl TestCluster {
    /// `host:port` of the API server (the kubeconfig's current context): where a TCP proxy in
    /// front of it forwards to.
    pub fn api_server_address(&self) -> anyhow::Result<String> {
        let uri: http::Uri = self.api_server()?.url.parse()?;
        let (host, port) = host_and_port(&uri)?;
        Ok(format!("{host}:{port}"))
    }

    /// This cluster reached through the TCP proxy listening on `proxy` (which forwards to
    /// [`Self::api_server_address`]): same client, a kubeconfig whose server is the proxy.
    pub fn through_proxy(&self, proxy: SocketAddr) -> anyhow::Result<ProxiedCluster> {
        let mut kubeconfig = Kubeconfig::read_from(&self.kubeconfig)?;
        let cluster = current_cluster(&mut kubeconfig)?;
        let uri: http::Uri = cluster
            .server
            .as_deref()
            .context("the kubeconfig's cluster has no server")?
            .parse()?;
        let scheme = uri.scheme_str().unwrap_or("https");
        // A path prefix (clusters behind a gateway) stays.
        let path = uri.path().trim_end_matches('/');
        cluster.server = Some(format!("{scheme}://{proxy}{path}"));
        if scheme == "https" && cluster.tls_server_name.is_none() {
            let (host, _) = host_and_port(&uri)?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            cluster.tls_server_name = Some(host.to_owned());
        }
        let directory = std::env::temp_dir().join(format!(
            "eso-e2e-proxied-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let yaml = serde_yaml::to_string(&kubeconfig)?;
        std::fs::create_dir_all(&directory)?;
        let proxied = ProxiedCluster {
            cluster: TestCluster {
                client: self.client.clone(),
                kubeconfig: directory.join("kubeconfig"),
                loopback: self.loopback,
            },
            directory,
        };
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&proxied.kubeconfig)
            .and_then(|mut file| file.write_all(yaml.as_bytes()))
            .with_context(|| format!("writing {}", proxied.kubeconfig.display()))?;
        Ok(proxied)
    }
}

/// The host (IPv6 in brackets) and port of an API server URL, the port defaulting by scheme.
fn host_and_port(uri: &http::Uri) -> anyhow::Result<(&str, u16)> {
    let host = uri.host().context("the API server URL has no host")?;
    let default_port = if uri.scheme_str() == Some("http") {
        80
    } else {
        443
    };
    Ok((host, uri.port_u16().unwrap_or(default_port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_proxied_kubeconfig_points_at_the_proxy_and_verifies_the_real_host() {
        let directory =
            std::env::temp_dir().join(format!("eso-proxied-test-{:08x}", fastrand::u32(..)));
        std::fs::create_dir_all(&directory).unwrap();
        let original = directory.join("kubeconfig");
        std::fs::write(
            &original,
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
             contexts: [{name: c, context: {cluster: k, user: u}}, {name: other, context: {cluster: o, user: u}}]\n\
             clusters: [{name: o, cluster: {server: 'https://other:1'}}, \
             {name: k, cluster: {server: 'https://kube.example:6443/gateway/', certificate-authority-data: Q0E=}}]\n\
             users: [{name: u, user: {token: secret}}]\n",
        )
        .unwrap();
        let cluster = TestCluster {
            client: kube::Client::try_from(kube::Config::new(
                "https://kube.example:6443".parse().unwrap(),
            ))
            .unwrap(),
            kubeconfig: original,
            loopback: false,
        };
        assert_eq!(cluster.api_server_address().unwrap(), "kube.example:6443");
        let proxy: SocketAddr = "127.0.0.1:4242".parse().unwrap();
        let proxied = cluster.through_proxy(proxy).unwrap();
        let mut written = Kubeconfig::read_from(&proxied.kubeconfig).unwrap();
        let entry = current_cluster(&mut written).unwrap();
        assert_eq!(
            entry.server.as_deref(),
            Some("https://127.0.0.1:4242/gateway")
        );
        assert_eq!(entry.tls_server_name.as_deref(), Some("kube.example"));
        assert_eq!(entry.certificate_authority_data.as_deref(), Some("Q0E="));
        let text = std::fs::read_to_string(&proxied.kubeconfig).unwrap();
        assert!(
            text.contains("token: secret"),
            "the credentials are kept:\n{text}"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&proxied.kubeconfig)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let path = proxied.kubeconfig.clone();
        drop(proxied);
        assert!(!path.exists(), "the copy of the credentials is removed");
        std::fs::remove_dir_all(directory).unwrap();
    }
}
