//! Store validation with upstream's messages.

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{GitlabAuth, GitlabProvider, GitlabSecretRef};

use super::Gitlab;
use crate::client::Capabilities;
use crate::provider::Provider as _;
use crate::store::StoreId;

fn spec() -> GitlabProvider {
    GitlabProvider {
        auth: GitlabAuth {
            secret_ref: GitlabSecretRef {
                access_token: Some(SecretKeySelector {
                    name: Some("gitlab".into()),
                    key: Some("token".into()),
                    namespace: None,
                }),
            },
        },
        project_id: Some("42".into()),
        ..GitlabProvider::default()
    }
}

fn message(spec: &GitlabProvider, store: &StoreId) -> String {
    Gitlab
        .validate_store(spec, store)
        .expect_err("invalid")
        .message()
        .to_owned()
}

fn token(spec: &mut GitlabProvider) -> &mut SecretKeySelector {
    spec.auth.secret_ref.access_token.as_mut().unwrap()
}

#[test]
fn a_complete_store_is_valid_and_read_only() {
    let store = StoreId::secret_store("team", "gitlab");
    Gitlab.validate_store(&spec(), &store).expect("valid");
    let groups_only = GitlabProvider {
        project_id: None,
        group_i_ds: vec!["7".into()],
        ..spec()
    };
    Gitlab.validate_store(&groups_only, &store).expect("valid");
    assert_eq!(Gitlab.capabilities(&spec()), Capabilities::ReadOnly);
}

#[test]
fn refusals_carry_upstreams_messages() {
    let store = StoreId::secret_store("team", "gitlab");
    let nothing = GitlabProvider {
        project_id: Some(String::new()),
        ..spec()
    };
    assert_eq!(
        message(&nothing, &store),
        "projectID and groupIDs must not both be empty"
    );
    let both = GitlabProvider {
        inherit_from_groups: Some(true),
        group_i_ds: vec!["7".into()],
        ..spec()
    };
    assert_eq!(
        message(&both, &store),
        "defining groupIDs and inheritFromGroups = true is not allowed"
    );
    let mut no_key = spec();
    token(&mut no_key).key = None;
    assert_eq!(message(&no_key, &store), "accessToken.key cannot be empty");
    let mut no_name = spec();
    token(&mut no_name).name = Some(String::new());
    assert_eq!(
        message(&no_name, &store),
        "accessToken.name cannot be empty"
    );
    let no_token = GitlabProvider {
        auth: GitlabAuth::default(),
        ..spec()
    };
    assert_eq!(
        message(&no_token, &store),
        "accessToken.key cannot be empty"
    );
}

#[test]
fn namespaces_follow_the_store_kind() {
    let mut other = spec();
    token(&mut other).namespace = Some("other".into());
    assert_eq!(
        message(&other, &StoreId::secret_store("team", "gitlab")),
        "namespace should either be empty or match the namespace of the SecretStore for a \
         namespaced SecretStore"
    );
    let cluster = StoreId::cluster_secret_store("gitlab");
    assert_eq!(
        message(&spec(), &cluster),
        "cluster scope requires namespace"
    );
    Gitlab
        .validate_store(&other, &cluster)
        .expect("named namespace");
}
