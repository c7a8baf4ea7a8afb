//! Connecting tests to a cluster: the one `KUBECONFIG` names, or a loopback API server
//! started once per test process.

use anyhow::Context;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{
    Api, Client, Config,
    api::{Patch, PatchParams},
    config::{Cluster, KubeConfigOptions, Kubeconfig},
    runtime::wait::{await_condition, conditions},
};
use std::{path::PathBuf, sync::OnceLock, time::Duration};

/// Field manager the harness applies with, so its writes are recognisable in managedFields.
const FIELD_MANAGER: &str = "external-secrets-e2e";

/// A connection to the cluster under test.
pub struct TestCluster {
    /// Client for the cluster, bound to the calling test's runtime.
    pub client: Client,
    /// Kubeconfig file of the cluster, for child processes (kubectl, the controller binary).
    pub kubeconfig: PathBuf,
    /// Whether this is the process-wide loopback server (for diagnostics only: tests must not
    /// behave differently).
    pub loopback: bool,
}

impl TestCluster {
    /// Connects to `KUBECONFIG` when set, otherwise to the process-wide loopback server.
    pub async fn connect() -> anyhow::Result<Self> {
        let (kubeconfig, loopback) = match std::env::var_os("KUBECONFIG") {
            Some(path) if !path.is_empty() => (PathBuf::from(path), false),
            _ => (loopback_kubeconfig()?, true),
        };
        let client = client_for(&kubeconfig).await?;
        Ok(Self {
            client,
            kubeconfig,
            loopback,
        })
    }
}

/// Where the cluster's API server listens and the PEM bundle that verifies it, for servers a
/// test starts that call the API server themselves (OpenBao reviewing tokens).
pub struct ApiServerEndpoint {
    /// The server's URL, as the kubeconfig gives it.
    pub url: String,
    /// Its certificate authority (PEM), unless the kubeconfig names none.
    pub ca_pem: Option<String>,
}

impl ApiServerEndpoint {
    /// The `server` section of a kubernetes-connected store (kubernetes and crd providers):
    /// the URL, and the CA as a base64 `caBundle` when there is one.
    pub fn store_server(&self) -> serde_json::Value {
        use base64::Engine as _;
        let mut server = serde_json::json!({"url": self.url});
        if let Some(pem) = &self.ca_pem {
            server["caBundle"] = base64::engine::general_purpose::STANDARD.encode(pem).into();
        }
        server
    }
}

impl TestCluster {
    /// The API server of the kubeconfig's current context.
    pub fn api_server(&self) -> anyhow::Result<ApiServerEndpoint> {
        use base64::Engine as _;
        let mut kubeconfig = Kubeconfig::read_from(&self.kubeconfig)?;
        let cluster = current_cluster(&mut kubeconfig)?;
        let url = cluster
            .server
            .clone()
            .context("the kubeconfig's cluster has no server")?;
        let ca_pem = match (
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
        ) {
            (Some(data), _) => Some(String::from_utf8(
                base64::engine::general_purpose::STANDARD.decode(data)?,
            )?),
            (None, Some(path)) => Some(std::fs::read_to_string(path)?),
            (None, None) => None,
        };
        Ok(ApiServerEndpoint { url, ca_pem })
    }
}

/// The cluster entry of the kubeconfig's current context.
pub(super) fn current_cluster(kubeconfig: &mut Kubeconfig) -> anyhow::Result<&mut Cluster> {
    let context_name = kubeconfig
        .current_context
        .clone()
        .context("the kubeconfig has no current-context")?;
    let cluster_name = kubeconfig
        .contexts
        .iter()
        .find(|context| context.name == context_name)
        .and_then(|context| context.context.as_ref())
        .with_context(|| format!("the kubeconfig has no context {context_name:?}"))?
        .cluster
        .clone();
    kubeconfig
        .clusters
        .iter_mut()
        .find(|cluster| cluster.name == cluster_name)
        .and_then(|cluster| cluster.cluster.as_mut())
        .with_context(|| format!("the kubeconfig has no cluster {cluster_name:?}"))
}

/// A client for the cluster a kubeconfig file describes (its current context).
pub(crate) async fn client_for(kubeconfig: &std::path::Path) -> anyhow::Result<Client> {
    let parsed = Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("reading kubeconfig {}", kubeconfig.display()))?;
    let config = Config::from_custom_kubeconfig(parsed, &KubeConfigOptions::default()).await?;
    Ok(Client::try_from(config)?)
}

/// Starts the loopback server on a runtime of its own, so it outlives every test's runtime,
/// and returns its kubeconfig path.
fn loopback_kubeconfig() -> anyhow::Result<PathBuf> {
    static KUBECONFIG: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    KUBECONFIG
        .get_or_init(|| {
            let (sender, receiver) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("loopback-apiserver".into())
                .spawn(move || {
                    let runtime = match tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                    {
                        Ok(runtime) => runtime,
                        Err(error) => {
                            let _ = sender.send(Err(format!(
                                "starting a runtime for the loopback API server: {error}"
                            )));
                            return;
                        }
                    };
                    runtime.block_on(async move {
                        let options = loopback_apiserver::Options {
                            kubeconfig: Some(process_directory().join("kubeconfig")),
                            ..loopback_apiserver::Options::default()
                        };
                        match loopback_apiserver::LoopbackServer::start(options).await {
                            Ok(server) => {
                                let _ = sender.send(Ok(server.kubeconfig_path().to_path_buf()));
                                std::future::pending::<()>().await;
                                drop(server);
                            }
                            Err(error) => {
                                let _ = sender.send(Err(format!(
                                    "starting the loopback API server: {error:#}"
                                )));
                            }
                        }
                    });
                })
                .map_err(|error| format!("spawning the loopback API server thread: {error}"))?;
            receiver
                .recv()
                .unwrap_or_else(|_| Err("loopback API server thread died".to_owned()))
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Prefix of the per-process directories holding the loopback server's kubeconfig.
const DIRECTORY_PREFIX: &str = "eso-e2e-loopback-";

/// This process's directory for the loopback kubeconfig. The server lives as long as the
/// process, so it can never remove it: directories of processes that are gone are swept here.
fn process_directory() -> PathBuf {
    let temporary = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&temporary) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix(DIRECTORY_PREFIX) else {
                continue;
            };
            if std::path::Path::new("/proc/self").exists()
                && !std::path::Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    temporary.join(format!("{DIRECTORY_PREFIX}{}", std::process::id()))
}

/// Installs (server-side applies) every CRD this build serves and waits until each is
/// established. Idempotent, so every test may call it.
pub async fn install_crds(client: &Client) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for crd in external_secrets_crds::all_crds() {
        let name = crd.metadata.name.clone().context("CRD without a name")?;
        api.patch(&name, &params, &Patch::Apply(&crd))
            .await
            .with_context(|| format!("applying CRD {name}"))?;
        tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(api.clone(), &name, conditions::is_crd_established()),
        )
        .await
        .with_context(|| format!("CRD {name} not established within 30s"))??;
    }
    Ok(())
}
