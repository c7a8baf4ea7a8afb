//! The controller under test, run as the real `external-secrets` binary in a child process
//! pointed at the cluster under test, as it runs in a pod.

use super::TestCluster;
use anyhow::Context;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// Environment variable naming the controller binary, overriding the build-tree default.
pub const CONTROLLER_BIN_ENV: &str = "ESO_CONTROLLER_BIN";

/// A running `external-secrets run` process, killed when dropped.
pub struct ControllerProcess {
    child: Child,
    /// Where the process's log lines go; read it to explain a failure.
    pub log_path: PathBuf,
    /// The address of its metrics and probe server.
    pub metrics_addr: std::net::SocketAddr,
}

impl ControllerProcess {
    /// Starts `external-secrets run` against `cluster` with `--controller-class class`, so the
    /// test's controller only touches the test's stores even on a cluster where other
    /// controllers run, plus `extra_args`; returns once `/readyz` answers.
    pub async fn start(
        cluster: &TestCluster,
        class: &str,
        extra_args: &[&str],
    ) -> anyhow::Result<Self> {
        Self::start_with_env(cluster, class, extra_args, &[]).await
    }

    /// [`Self::start`] with `env` added to the process's environment (e.g. upstream's
    /// `AWS_SECRETSMANAGER_ENDPOINT` pointing a provider at a local server).
    pub async fn start_with_env(
        cluster: &TestCluster,
        class: &str,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let binary = controller_binary()?;
        let metrics_addr = free_local_address()?;
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let number = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let log_path = std::env::temp_dir().join(format!("{class}-{number}.log"));
        let log = std::fs::File::create(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        println!("controller log: {}", log_path.display());
        let child = Command::new(&binary)
            .arg("run")
            .args(["--controller-class", class])
            .args(["--metrics-addr", &metrics_addr.to_string()])
            // Probes are polled on the metrics address; keep the live port off shared ones.
            .args(["--live-addr", "127.0.0.1:0"])
            // E2E_CONTROLLER_LOGLEVEL (e.g. `debug`) for a closer look at a failing test.
            .args([
                "--loglevel",
                &std::env::var("E2E_CONTROLLER_LOGLEVEL").unwrap_or_else(|_| "info".to_owned()),
            ])
            .args(extra_args)
            .env("KUBECONFIG", &cluster.kubeconfig)
            .envs(env.iter().copied())
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut process = Self {
            child,
            log_path,
            metrics_addr,
        };
        process.wait_ready().await?;
        Ok(process)
    }

    /// The text of `/metrics`.
    pub async fn metrics(&self) -> anyhow::Result<String> {
        http_get(self.metrics_addr, "/metrics").await
    }

    /// `GET /metrics` presenting `bearer` (if any): the status code and body, whatever they are
    /// (for `--metrics-auth`).
    pub async fn metrics_as(&self, bearer: Option<&str>) -> anyhow::Result<(u16, String)> {
        http_request(self.metrics_addr, "/metrics", bearer).await
    }

    /// The operating-system process id, while it runs (benchmarks read /proc with it).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The exit status once the process has ended by itself (a replica that lost its Lease
    /// exits, and its pod's kubelet would start it again), `None` while it runs.
    pub fn exit_status(&mut self) -> anyhow::Result<Option<std::process::ExitStatus>> {
        Ok(self.child.try_wait()?)
    }

    /// The process's log so far, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Stops the process with SIGTERM and waits for it to exit.
    pub async fn stop(mut self) -> anyhow::Result<std::process::ExitStatus> {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .context("controller did not exit within 30s of SIGTERM")??;
        Ok(status)
    }

    /// Kills the process with SIGKILL (a crash or an evicted pod: no clean shutdown, no
    /// Lease release) and waits for it to be gone.
    pub async fn kill(mut self) -> anyhow::Result<()> {
        self.child.kill().await.context("killing the controller")?;
        Ok(())
    }

    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!("controller exited with {status} at start:\n{}", self.log());
            }
            if http_get(self.metrics_addr, "/readyz").await.is_ok() {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                anyhow::bail!("controller not ready within 60s:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The controller binary: `$ESO_CONTROLLER_BIN`, or `external-secrets` in the build tree this
/// test was built in (`scripts/test.sh` and `scripts/demo.sh` build it first).
pub fn controller_binary() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os(CONTROLLER_BIN_ENV) {
        return Ok(PathBuf::from(path));
    }
    // Binaries live in <target>/<profile>/, test executables in <target>/<profile>/deps/.
    let executable = std::env::current_exe()?;
    let directory = executable
        .parent()
        .context("locating the build directory of this executable")?;
    let profile_dir = match directory.file_name() {
        Some(name) if name == "deps" => directory.parent().unwrap_or(directory),
        _ => directory,
    };
    let binary = profile_dir.join("external-secrets");
    anyhow::ensure!(
        binary.exists(),
        "the controller binary {} does not exist: build it first (`cargo build --bin \
         external-secrets`, as scripts/test.sh does) or set {CONTROLLER_BIN_ENV}",
        binary.display()
    );
    Ok(binary)
}

/// A loopback address with a port nobody listens on right now.
pub fn free_local_address() -> anyhow::Result<std::net::SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}

/// A minimal HTTP/1.0 GET returning the body of a 200 response.
async fn http_get(address: std::net::SocketAddr, path: &str) -> anyhow::Result<String> {
    let (status, body) = http_request(address, path, None).await?;
    anyhow::ensure!(status == 200, "GET {path}: status {status}");
    Ok(body)
}

/// `GET path` over HTTP/1.0 with an optional bearer token: the status code and the body.
async fn http_request(
    address: std::net::SocketAddr,
    path: &str,
    bearer: Option<&str>,
) -> anyhow::Result<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    let authorization = bearer
        .map(|token| format!("Authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    stream
        .write_all(
            format!("GET {path} HTTP/1.0\r\nHost: {address}\r\n{authorization}\r\n").as_bytes(),
        )
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .context("malformed HTTP response")?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .context("HTTP response without a status code")?;
    Ok((status, body.to_owned()))
}
