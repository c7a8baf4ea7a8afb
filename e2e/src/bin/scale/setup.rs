//! The cluster under test (a loopback API server in this process, or a kubeconfig's) and how
//! the controller's API requests are counted there: by verb and resource from the controller's
//! own `rest_client_requests_by_resource_total`, so the same table comes from any cluster (the
//! loopback server's counters count the floor's client).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use e2e::bench::requests_by_resource;
use e2e::harness::TestCluster;
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use loopback_apiserver::{LoopbackServer, Options as LoopbackOptions};

/// User-Agent of the benchmark's own requests (setup, polling), so they are not counted as
/// the controller's.
const BENCH_AGENT: &str = "eso-scale-bench";
/// User-Agent of the floor's client.
pub const FLOOR_AGENT: &str = "eso-scale-floor";

/// Where the benchmark runs.
pub struct Bench {
    /// The cluster, its kubeconfig and the benchmark's client.
    pub cluster: TestCluster,
    /// The floor's client (its own User-Agent).
    pub floor_client: Client,
    /// The in-process loopback server, unless a kubeconfig was given.
    loopback: Option<LoopbackServer>,
}

impl Bench {
    /// Connects to the cluster `kubeconfig` names, or starts a loopback API server.
    pub async fn connect(kubeconfig: Option<PathBuf>) -> anyhow::Result<Self> {
        let kubeconfig = kubeconfig.filter(|path| !path.as_os_str().is_empty());
        let (loopback, path) = match kubeconfig {
            Some(path) => (None, path),
            None => {
                let server = LoopbackServer::start(LoopbackOptions::default()).await?;
                let path = server.kubeconfig_path().to_path_buf();
                (Some(server), path)
            }
        };
        let client = client_with_agent(&path, BENCH_AGENT).await?;
        let floor_client = client_with_agent(&path, FLOOR_AGENT).await?;
        Ok(Self {
            cluster: TestCluster {
                client,
                kubeconfig: path,
                loopback: loopback.is_some(),
            },
            floor_client,
            loopback,
        })
    }

    /// What the benchmark runs against, for the report.
    pub fn describe(&self) -> String {
        match &self.loopback {
            Some(_) => "loopback API server (in the benchmark process)".to_owned(),
            None => format!("kubeconfig {}", self.cluster.kubeconfig.display()),
        }
    }

    /// The controller's API requests so far, from `page`, its metrics (counted since that
    /// process started).
    pub fn controller_requests(&self, page: &str) -> Requests {
        Requests::by_verb(requests_by_resource(page).into_iter())
    }

    /// The requests of the floor's client (loopback only).
    pub fn floor_requests(&self) -> Option<Requests> {
        let server = self.loopback.as_ref()?;
        Some(Requests::by_verb(
            server
                .request_counts()
                .into_iter()
                .filter(|(key, _)| key.user_agent == FLOOR_AGENT)
                .map(|(key, count)| ((key.verb, key.resource), count as f64)),
        ))
    }

    /// The baseline for counting a process that starts now: nothing (a new process's metrics
    /// start at zero).
    pub fn baseline_for_new_process(&self) -> Requests {
        Requests::default()
    }
}

/// A client for `kubeconfig` that sends `agent` as its User-Agent.
async fn client_with_agent(kubeconfig: &Path, agent: &'static str) -> anyhow::Result<Client> {
    let parsed = Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("reading kubeconfig {}", kubeconfig.display()))?;
    let mut config = kube::Config::from_custom_kubeconfig(parsed, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("loading kubeconfig {}", kubeconfig.display()))?;
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(agent),
    ));
    Ok(Client::try_from(config)?)
}

/// API requests by `verb resource`.
#[derive(Debug, Clone, Default)]
pub struct Requests {
    counts: BTreeMap<String, f64>,
}

impl Requests {
    fn by_verb(counts: impl Iterator<Item = ((String, String), f64)>) -> Self {
        let mut requests = Self::default();
        for ((verb, resource), count) in counts {
            let label = if resource.is_empty() {
                format!("{verb} (non-resource)")
            } else {
                format!("{verb} {resource}")
            };
            *requests.counts.entry(label).or_default() += count;
        }
        requests
    }

    /// The requests made since `earlier`.
    pub fn since(&self, earlier: &Requests) -> Requests {
        let counts = self
            .counts
            .iter()
            .map(|(label, count)| {
                let before = earlier.counts.get(label).copied().unwrap_or(0.0);
                (label.clone(), count - before)
            })
            .filter(|(_, count)| *count > 0.0)
            .collect();
        Requests { counts }
    }

    /// All requests.
    pub fn total(&self) -> f64 {
        self.counts.values().sum()
    }

    /// Requests that change state (create, update, patch, apply, delete).
    pub fn writes(&self) -> f64 {
        self.counts
            .iter()
            .filter(|(label, _)| {
                let verb = label.split(' ').next().unwrap_or_default();
                matches!(
                    verb,
                    "create" | "update" | "patch" | "apply" | "delete" | "deletecollection"
                )
            })
            .map(|(_, count)| count)
            .sum()
    }

    /// Writes to Secrets.
    pub fn secret_writes(&self) -> f64 {
        let secrets = Requests {
            counts: self
                .counts
                .iter()
                .filter(|(label, _)| label.ends_with(" secrets"))
                .map(|(label, count)| (label.clone(), *count))
                .collect(),
        };
        secrets.writes()
    }

    /// The counts by `verb resource`.
    pub fn labelled(&self) -> Vec<(String, f64)> {
        self.counts
            .iter()
            .map(|(label, count)| (label.clone(), *count))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_told_apart_by_verb_and_differenced() {
        let counts = |patches: f64| {
            Requests::by_verb(
                [
                    (("get".to_owned(), "secrets".to_owned()), 4.0),
                    (("apply".to_owned(), "secrets".to_owned()), patches),
                    (
                        ("apply".to_owned(), "externalsecrets/status".into()),
                        patches,
                    ),
                    (("get".to_owned(), String::new()), 1.0),
                ]
                .into_iter(),
            )
        };
        let (before, after) = (counts(1.0), counts(3.0));
        assert_eq!(after.total(), 11.0);
        assert_eq!(after.writes(), 6.0);
        assert_eq!(after.secret_writes(), 3.0);
        let delta = after.since(&before);
        assert_eq!(delta.total(), 4.0);
        assert_eq!(
            delta.labelled(),
            vec![
                ("apply externalsecrets/status".to_owned(), 2.0),
                ("apply secrets".to_owned(), 2.0),
            ]
        );
    }
}
