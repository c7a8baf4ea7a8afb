//! Other subcommands of the binary under test (`webhook`, `certcontroller`) as child
//! processes, and a plain HTTP probe that reports any status (readiness may say 503).

use anyhow::Context;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

use super::controller_binary;

/// A running `external-secrets <subcommand>` process, killed when dropped.
pub struct ComponentProcess {
    child: Child,
    /// Where the process's log lines go; read it to explain a failure.
    pub log_path: PathBuf,
}

impl ComponentProcess {
    /// Starts `external-secrets <args...>`, with `KUBECONFIG` set to `kubeconfig` when given
    /// and removed otherwise. Returns at once: callers wait for what they need (a probe, an
    /// object).
    pub fn start(args: &[String], kubeconfig: Option<&std::path::Path>) -> anyhow::Result<Self> {
        let binary = controller_binary()?;
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let number = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = args.first().map(String::as_str).unwrap_or("component");
        let log_path = std::env::temp_dir().join(format!(
            "eso-e2e-{name}-{}-{number}.log",
            std::process::id()
        ));
        let log = std::fs::File::create(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        println!("{name} log: {}", log_path.display());
        let mut command = Command::new(&binary);
        command
            .args(args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true);
        match kubeconfig {
            Some(path) => command.env("KUBECONFIG", path),
            None => command.env_remove("KUBECONFIG"),
        };
        let child = command
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        Ok(Self { child, log_path })
    }

    /// The process's log so far, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Fails with the log when the process has exited.
    pub fn ensure_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            anyhow::bail!("process exited with {status}:\n{}", self.log());
        }
        Ok(())
    }

    /// Stops the process with SIGTERM and waits for it to exit.
    pub async fn stop(mut self) -> anyhow::Result<std::process::ExitStatus> {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .context("process did not exit within 30s of SIGTERM")?
            .context("waiting for the process")
    }
}

/// A minimal HTTP/1.0 GET: the status code and body of whatever answers.
pub async fn http_status(
    address: std::net::SocketAddr,
    path: &str,
) -> anyhow::Result<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").as_bytes())
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
