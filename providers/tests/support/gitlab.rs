//! The `gitlab` harness: one GitLab contract fake per test process (on a runtime of its own),
//! trusted through the store's `caBundle`, and one fresh project per client.
//!
//! The suite's key `k` is the project variable `k` with `-` written `_` (GitLab keys have no
//! hyphens, and the backend reads `a-b` as `a_b`, as upstream), in the `*` scope.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use contract_fakes::gitlab::{GitlabFake, Owner};
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{GitlabAuth, GitlabProvider, GitlabSecretRef, SecretStoreProvider};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::{Capabilities, SharedClient};

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

/// The access token the fake accepts.
pub const TOKEN: &str = "glpat-token-for-tests";

/// The process's fake GitLab, started on first use.
pub fn fake() -> &'static GitlabFake {
    static FAKE: OnceLock<GitlabFake> = OnceLock::new();
    FAKE.get_or_init(|| super::start_fake("GitLab", || GitlabFake::start(TOKEN)))
}

/// A project or group id no other test uses.
pub fn unique_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1000);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// A gitlab store section on the fake, trusting its CA; `configure` sets project, groups and
/// environment.
pub fn store_provider(configure: impl FnOnce(&mut GitlabProvider)) -> SecretStoreProvider {
    let mut gitlab = GitlabProvider {
        url: Some(fake().server.url.clone()),
        auth: GitlabAuth {
            secret_ref: GitlabSecretRef {
                access_token: Some(SecretKeySelector {
                    name: Some("gitlab".into()),
                    key: Some("token".into()),
                    namespace: None,
                }),
            },
        },
        ca_bundle: Some(k8s_openapi::ByteString(
            fake().server.ca_pem.clone().into_bytes(),
        )),
        ..GitlabProvider::default()
    };
    configure(&mut gitlab);
    SecretStoreProvider {
        gitlab: Some(Box::new(gitlab)),
        ..SecretStoreProvider::default()
    }
}

/// A client of a store configured by `configure`, authenticating with `token`.
pub async fn client(token: &str, configure: impl FnOnce(&mut GitlabProvider)) -> SharedClient {
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, "gitlab", &[], &[("token", token)]);
    let store = secret_store(&unique_name("gitlab"), store_provider(configure));
    client_for(&store, Arc::new(source)).await
}

/// The behaviour suite's view of the backend.
pub struct GitlabHarness;

#[async_trait]
impl Harness for GitlabHarness {
    fn name(&self) -> &'static str {
        "gitlab"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: true,
            delete_removes: false,
        }
    }

    fn remote_name(&self, name: &str) -> String {
        name.replace('-', "_")
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let project = unique_id();
        let fake = fake();
        fake.add_project(project, &format!("suite/project-{project}"), &[]);
        for (key, value) in seed {
            let key = self.remote_name(key);
            assert!(fake.set_variable(Owner::Project(project), &key, value, "*"));
        }
        client(TOKEN, |gitlab| {
            gitlab.project_id = Some(project.to_string())
        })
        .await
    }
}
