//! The `gitlab` backend against the GitLab contract fake: access-token auth, environment
//! scopes with the wildcard fallback, group variables (configured and inherited), find with the
//! `environment_scope` tag across pages, projects by path, and error kinds.

#![cfg(feature = "gitlab")]

mod support;

use contract_fakes::gitlab::Owner;
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use support::gitlab::{TOKEN, client, fake, unique_id};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

/// A fresh project on the fake; its id.
fn project() -> u64 {
    let id = unique_id();
    fake().add_project(id, &format!("team/project-{id}"), &[]);
    id
}

fn set(owner: Owner, key: &str, value: &str, scope: &str) {
    assert!(fake().set_variable(owner, key, value, scope));
}

/// The queries of the requests whose path contains `fragment`.
fn queries(fragment: &str) -> Vec<String> {
    fake()
        .server
        .requests()
        .into_iter()
        .filter(|request| request.path.contains(fragment))
        .map(|request| request.query.unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn the_token_is_sent_as_private_token_and_a_wrong_one_is_refused() {
    let id = project();
    set(Owner::Project(id), "KEY", "value", "*");
    let denied = client("wrong-token", |g| g.project_id = Some(id.to_string())).await;
    let error = denied.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(error.message().contains("401 Unauthorized"), "{error}");
    assert!(!error.message().contains("wrong-token"), "{error}");
    let error = denied.get_secret(&RemoteRef::new("KEY")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    let allowed = client(TOKEN, |g| g.project_id = Some(id.to_string())).await;
    allowed.validate().await.unwrap();
    assert_eq!(
        text(allowed.get_secret(&RemoteRef::new("KEY")).await.unwrap()),
        "value"
    );
    let request = fake()
        .server
        .requests()
        .into_iter()
        .rev()
        .find(|request| request.path == format!("/api/v4/projects/{id}/variables/KEY"))
        .unwrap();
    let sent = contract_fakes::server::header(&request.headers, "private-token");
    assert_eq!(sent, Some(TOKEN));
}

#[tokio::test]
async fn the_environment_scope_is_asked_first_then_the_wildcard() {
    let id = project();
    set(Owner::Project(id), "DB", "prod-value", "prod");
    set(Owner::Project(id), "DB", "any-value", "*");
    let prod = client(TOKEN, |g| {
        g.project_id = Some(id.to_string());
        g.environment = Some("prod".into());
    })
    .await;
    assert_eq!(
        text(prod.get_secret(&RemoteRef::new("DB")).await.unwrap()),
        "prod-value"
    );
    let dev = client(TOKEN, |g| {
        g.project_id = Some(id.to_string());
        g.environment = Some("dev".into());
    })
    .await;
    assert_eq!(
        text(dev.get_secret(&RemoteRef::new("DB")).await.unwrap()),
        "any-value"
    );
    let asked = queries(&format!("/projects/{id}/variables/DB"));
    assert_eq!(
        asked,
        [
            "filter%5Benvironment_scope%5D=prod",
            "filter%5Benvironment_scope%5D=dev",
            "filter%5Benvironment_scope%5D=*"
        ]
    );
    // Without an environment, GitLab refuses to choose between two scopes.
    let unscoped = client(TOKEN, |g| g.project_id = Some(id.to_string())).await;
    let error = unscoped
        .get_secret(&RemoteRef::new("DB"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error}");
    assert!(!error.message().contains("value"), "{error}");
}

#[tokio::test]
async fn keys_read_hyphens_as_underscores_and_properties_are_json_paths() {
    let id = project();
    set(
        Owner::Project(id),
        "DB_CONFIG",
        r#"{"user":"admin","port":"5432"}"#,
        "*",
    );
    let client = client(TOKEN, |g| g.project_id = Some(id.to_string())).await;
    let user = client
        .get_secret(&RemoteRef::new("DB-CONFIG").with_property("user"))
        .await
        .unwrap();
    assert_eq!(text(user), "admin");
    let map = client
        .get_secret_map(&RemoteRef::new("DB-CONFIG"))
        .await
        .unwrap();
    assert_eq!(
        texts(map),
        [
            ("port".into(), "5432".into()),
            ("user".into(), "admin".into())
        ]
    );
    let missing = client
        .get_secret(&RemoteRef::new("DB_CONFIG").with_property("password"))
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
}

#[tokio::test]
async fn group_variables_are_searched_from_the_last_group_after_the_project() {
    let (first, second) = (unique_id(), unique_id());
    fake().add_group(first, &format!("g-{first}"));
    fake().add_group(second, &format!("g-{second}"));
    let id = project();
    set(Owner::Group(first), "SHARED", "first", "*");
    set(Owner::Group(second), "SHARED", "second", "*");
    set(Owner::Group(first), "ONLY_FIRST", "1", "*");
    set(Owner::Project(id), "OWN", "project", "*");
    let client = client(TOKEN, |g| {
        g.project_id = Some(id.to_string());
        g.group_i_ds = vec![first.to_string(), second.to_string()];
    })
    .await;
    client.validate().await.unwrap();
    let get = |key: &'static str| {
        let client = client.clone();
        async move { client.get_secret(&RemoteRef::new(key)).await }
    };
    assert_eq!(text(get("SHARED").await.unwrap()), "second");
    assert_eq!(text(get("ONLY_FIRST").await.unwrap()), "1");
    assert_eq!(text(get("OWN").await.unwrap()), "project");
    let missing = get("NOWHERE").await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    assert!(!missing.is_temporary());
    // Find reads the groups left to right, then the project.
    set(Owner::Project(id), "SHARED", "project", "*");
    let found = client.get_all_secrets(&Find::by_name(".*")).await.unwrap();
    assert_eq!(
        texts(found),
        [
            ("ONLY_FIRST".into(), "1".into()),
            ("OWN".into(), "project".into()),
            ("SHARED".into(), "project".into())
        ]
    );
}

#[tokio::test]
async fn inherited_groups_are_ordered_by_nesting() {
    let (parent, child) = (unique_id(), unique_id());
    let parent_path = format!("p-{parent}");
    fake().add_group(child, &format!("{parent_path}/child"));
    fake().add_group(parent, &parent_path);
    let id = unique_id();
    fake().add_project(id, &format!("{parent_path}/child/app"), &[child, parent]);
    set(Owner::Group(parent), "LEVEL", "parent", "*");
    set(Owner::Group(child), "LEVEL", "child", "*");
    set(Owner::Group(parent), "TOP", "top", "*");
    let client = client(TOKEN, |g| {
        g.project_id = Some(id.to_string());
        g.inherit_from_groups = Some(true);
    })
    .await;
    client.validate().await.unwrap();
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("LEVEL")).await.unwrap()),
        "child"
    );
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("TOP")).await.unwrap()),
        "top"
    );
    // Find keeps the first (least nested) group's wildcard value, as upstream, unless a later
    // group's value is specific to the environment.
    let found = client.get_all_secrets(&Find::by_name(".*")).await.unwrap();
    assert_eq!(
        texts(found),
        [
            ("LEVEL".into(), "parent".into()),
            ("TOP".into(), "top".into())
        ]
    );
    set(Owner::Group(child), "LEVEL", "child-prod", "prod");
    let found = client
        .get_all_secrets(&Find::by_name("^LEVEL$"))
        .await
        .unwrap();
    assert_eq!(texts(found), [("LEVEL".into(), "child-prod".into())]);
}

#[tokio::test]
async fn find_follows_pages_and_the_environment_scope_tag() {
    let id = project();
    for index in 0..150 {
        set(Owner::Project(id), &format!("VAR_{index:03}"), "v", "*");
    }
    set(Owner::Project(id), "SCOPED", "prod", "prod");
    set(Owner::Project(id), "SCOPED", "any", "*");
    set(Owner::Project(id), "STAGING", "staging", "staging");
    let client = client(TOKEN, |g| g.project_id = Some(id.to_string())).await;
    let all = client
        .get_all_secrets(&Find::by_name("^VAR_"))
        .await
        .unwrap();
    assert_eq!(all.len(), 150);
    let pages = queries(&format!("/projects/{id}/variables"));
    assert!(
        pages.contains(&"page=2&per_page=100".to_owned()),
        "{pages:?}"
    );
    let mut tagged = Find::by_name("^S");
    tagged
        .tags
        .insert("environment_scope".into(), "prod".into());
    let found = client.get_all_secrets(&tagged).await.unwrap();
    assert_eq!(texts(found), [("SCOPED".into(), "prod".into())]);
    let pathed = Find {
        path: Some("x".into()),
        ..Find::by_name(".*")
    };
    let error = client.get_all_secrets(&pathed).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
}

#[tokio::test]
async fn projects_by_path_and_missing_projects() {
    let id = unique_id();
    let path = format!("team/by-path-{id}");
    fake().add_project(id, &path, &[]);
    set(Owner::Project(id), "KEY", "by-path", "*");
    let by_path = client(TOKEN, |g| g.project_id = Some(path.clone())).await;
    assert_eq!(
        text(by_path.get_secret(&RemoteRef::new("KEY")).await.unwrap()),
        "by-path"
    );
    let encoded = format!("/api/v4/projects/team%2Fby-path-{id}/variables/KEY");
    assert!(fake().server.requests().iter().any(|r| r.path == encoded));
    // A project GitLab does not know is a configuration error, never "not found".
    let missing = client(TOKEN, |g| g.project_id = Some("no/such-project".into())).await;
    let error = missing
        .get_secret(&RemoteRef::new("KEY"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.message().contains("404 Project Not Found"), "{error}");
}

#[tokio::test]
async fn pushes_are_not_implemented() {
    let id = project();
    let client = client(TOKEN, |g| g.project_id = Some(id.to_string())).await;
    let push = external_secrets_providers::request::PushRequest::single(
        [("k".to_owned(), SecretValue::from("v"))].into(),
        "k",
        "KEY",
    );
    let error = client.push_secret(&push).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert_eq!(
        error.message(),
        "PushSecret is not implemented by the gitlab provider"
    );
}
