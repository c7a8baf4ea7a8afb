//! The GitLab client: variable lookup over the project and its groups with environment
//! scopes, and find over every variable (see the module doc of the backend for the rules).

use async_trait::async_trait;
use regex::Regex;

use super::api::{Api, Owner, Variable};
use super::{Gitlab, error};
use crate::client::{Capabilities, SecretsClient, ValidationResult, not_implemented};
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::provider::Provider as _;
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The only tag `find.tags` accepts.
const ENVIRONMENT_SCOPE: &str = "environment_scope";

/// A client of one store: its instance, project, groups and environment.
pub struct GitlabClient {
    api: Api,
    project: Option<String>,
    groups: Vec<String>,
    inherit_from_groups: bool,
    environment: Option<String>,
}

impl GitlabClient {
    /// A client reading `project` (if any) and `groups` (or, with `inherit_from_groups`, the
    /// project's groups) with variables scoped to `environment`.
    pub fn new(
        api: Api,
        project: Option<String>,
        groups: Vec<String>,
        inherit_from_groups: bool,
        environment: Option<String>,
    ) -> Self {
        Self {
            api,
            project: project.filter(|project| !project.is_empty()),
            groups,
            inherit_from_groups,
            environment: environment.filter(|environment| !environment.is_empty()),
        }
    }

    /// The groups searched, least nested first: the configured ones, or the project's own
    /// (ordered by the length of their full path, as upstream) with `inheritFromGroups`.
    async fn groups(&self) -> Result<Vec<String>> {
        let Some(project) = self.project.as_deref().filter(|_| self.inherit_from_groups) else {
            return Ok(self.groups.clone());
        };
        let mut groups = self.api.project_groups(project).await?;
        groups.sort_by_key(|group| group.full_path.len());
        Ok(groups.iter().map(|group| group.id.to_string()).collect())
    }

    /// The variable `key` of `owner` in the store's environment, falling back to the `*`
    /// scope when the environment has none of its own.
    async fn scoped(&self, owner: Owner<'_>, key: &str) -> Result<Option<Variable>> {
        let environment = self.environment.as_deref();
        let found = self.api.variable(owner, key, environment).await?;
        if found.is_some() || is_empty_or_wildcard(environment) {
            return Ok(found);
        }
        self.api.variable(owner, key, Some("*")).await
    }

    /// The variable a remote key names: the project's, else the most nested group's holding it.
    async fn variable(&self, key: &str) -> Result<Variable> {
        // GitLab keys have no hyphens; upstream reads `my-key` as `my_key`.
        let key = key.replace('-', "_");
        if let Some(project) = &self.project
            && let Some(variable) = self.scoped(Owner::Project(project), &key).await?
        {
            return Ok(variable);
        }
        for group in self.groups().await?.iter().rev() {
            if let Some(variable) = self.scoped(Owner::Group(group), &key).await? {
                return Ok(variable);
            }
        }
        Err(error::variable_not_found(&key))
    }
}

/// Whether an environment (of the store, a find or a variable) means every environment.
fn is_empty_or_wildcard(environment: Option<&str>) -> bool {
    matches!(environment, None | Some("" | "*"))
}

/// The value of a variable, or of `property` inside its JSON value.
fn extract(variable: &Variable, property: Option<&str>) -> Result<SecretValue> {
    match property.filter(|property| !property.is_empty()) {
        None if variable.value.is_empty() => Err(ProviderError::invalid_data(format!(
            "invalid secret received. no secret string for key: {}",
            variable.key
        ))),
        None => Ok(SecretValue::from(variable.value.as_str())),
        Some(property) => json_property(variable.value.as_bytes(), property)
            .map(SecretValue::new)
            .ok_or_else(|| {
                ProviderError::not_found(format!(
                    "key {property} does not exist in secret {}",
                    variable.key
                ))
            }),
    }
}

/// What a find asks for, checked as upstream: the environment (from the store, or the
/// `environment_scope` tag when the store has none) and the name expression (mandatory).
fn find_filter(find: &Find, store_environment: Option<&str>) -> Result<(Option<String>, Regex)> {
    let mut environment = store_environment.map(str::to_owned);
    if !find.tags.is_empty() {
        let mut tagged = None;
        for (tag, value) in &find.tags {
            if tag != ENVIRONMENT_SCOPE {
                return Err(ProviderError::invalid_request(
                    "'find.tags' only supports 'environment_scope'",
                ));
            }
            tagged = Some(value.clone());
        }
        if !is_empty_or_wildcard(store_environment) && !is_empty_or_wildcard(tagged.as_deref()) {
            return Err(ProviderError::invalid_request(
                "'find.tags' is constrained by 'environment_scope' of the store",
            ));
        }
        environment = tagged;
    }
    if find.path.is_some() {
        return Err(ProviderError::invalid_request(
            "'find.path' is not implemented in the GitLab provider",
        ));
    }
    let name = find
        .name
        .as_ref()
        .ok_or_else(|| ProviderError::invalid_request("'find.name' is mandatory"))?;
    let regex = name.matcher()?;
    Ok((environment, regex))
}

/// Whether `variable` is found (its scope fits `environment`, its key matches), and whether
/// its scope is the wildcard one.
fn matches(variable: &Variable, environment: Option<&str>, name: &Regex) -> (bool, bool) {
    let scope = Some(variable.environment_scope.as_str());
    let wildcard = is_empty_or_wildcard(scope);
    // GitLab's list endpoints cannot filter by scope, so the scopes are compared here.
    let in_scope = wildcard || is_empty_or_wildcard(environment) || scope == environment;
    let found = in_scope && !variable.key.is_empty() && name.is_match(&variable.key);
    (found, wildcard)
}

#[async_trait]
impl SecretsClient for GitlabClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let variable = self.variable(&remote_ref.key).await?;
        extract(&variable, remote_ref.property.as_deref())
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.get_secret(remote_ref).await.map_err(|failure| {
            failure.context(format!("error getting secret {}", remote_ref.key))
        })?;
        let object: std::collections::BTreeMap<String, String> =
            serde_json::from_slice(value.expose()).map_err(|failure| {
                ProviderError::invalid_data(format!(
                    "unable to unmarshal secret from JSON: {failure}"
                ))
            })?;
        Ok(object
            .into_iter()
            .map(|(key, value)| (key, SecretValue::from(value)))
            .collect())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let (environment, name) = find_filter(find, self.environment.as_deref())?;
        let environment = environment.as_deref();
        let mut found = SecretMap::new();
        // Groups left to right: a wildcard value does not replace one an earlier group gave
        // (so the least nested group's wins), an environment-specific one does.
        for group in self.groups().await? {
            for variable in self.api.variables(Owner::Group(&group)).await? {
                let (matching, wildcard) = matches(&variable, environment, &name);
                if matching && !(wildcard && found.contains_key(&variable.key)) {
                    found.insert(variable.key, SecretValue::from(variable.value));
                }
            }
        }
        // Project variables override group ones; a project wildcard does not override a
        // project environment-specific value.
        if let Some(project) = &self.project {
            let mut specific = std::collections::BTreeSet::new();
            for variable in self.api.variables(Owner::Project(project)).await? {
                let (matching, wildcard) = matches(&variable, environment, &name);
                if !matching || (wildcard && specific.contains(&variable.key)) {
                    continue;
                }
                if !wildcard {
                    specific.insert(variable.key.clone());
                }
                found.insert(variable.key, SecretValue::from(variable.value));
            }
        }
        Ok(found)
    }

    async fn push_secret(&self, _request: &PushRequest) -> Result<()> {
        Err(not_implemented(Gitlab::NAME, "PushSecret"))
    }

    async fn delete_secret(&self, _remote_ref: &PushRemoteRef) -> Result<()> {
        Err(not_implemented(Gitlab::NAME, "DeleteSecret"))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self.variable(&remote_ref.remote_key).await {
            Ok(_) => Ok(true),
            Err(missing) if missing.is_not_found() => Ok(false),
            Err(failure) => Err(failure),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        if let Some(project) = &self.project {
            self.api.probe(Owner::Project(project)).await?;
        }
        let groups = self.groups().await.map_err(|failure| {
            failure.context("could not verify whether the gitlabClient is valid")
        })?;
        for group in &groups {
            self.api.probe(Owner::Group(group)).await?;
        }
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variable(key: &str, value: &str, scope: &str) -> Variable {
        Variable {
            key: key.to_owned(),
            value: value.to_owned(),
            environment_scope: scope.to_owned(),
        }
    }

    #[test]
    fn find_checks_tags_path_and_name_as_upstream() {
        let message = |find: &Find, store: Option<&str>| {
            find_filter(find, store).unwrap_err().message().to_owned()
        };
        let mut tagged = Find::by_name(".*");
        tagged.tags.insert("team".into(), "a".into());
        assert_eq!(
            message(&tagged, None),
            "'find.tags' only supports 'environment_scope'"
        );
        let mut scoped = Find::by_name(".*");
        scoped.tags.insert(ENVIRONMENT_SCOPE.into(), "prod".into());
        assert_eq!(
            message(&scoped, Some("dev")),
            "'find.tags' is constrained by 'environment_scope' of the store"
        );
        let (environment, _) = find_filter(&scoped, Some("*")).unwrap();
        assert_eq!(environment.as_deref(), Some("prod"));
        let pathed = Find {
            path: Some("x".into()),
            ..Find::by_name(".*")
        };
        assert_eq!(
            message(&pathed, None),
            "'find.path' is not implemented in the GitLab provider"
        );
        assert_eq!(message(&Find::default(), None), "'find.name' is mandatory");
    }

    #[test]
    fn scopes_match_as_upstream() {
        let name = Regex::new("^DB").unwrap();
        let prod = variable("DB", "p", "prod");
        assert_eq!(matches(&prod, Some("prod"), &name), (true, false));
        assert_eq!(matches(&prod, Some("dev"), &name), (false, false));
        assert_eq!(matches(&prod, None, &name), (true, false));
        assert_eq!(
            matches(&variable("DB", "w", "*"), Some("dev"), &name),
            (true, true)
        );
        assert!(!matches(&variable("X", "w", "*"), None, &name).0);
    }

    #[test]
    fn values_and_properties() {
        let json = variable("J", r#"{"a":{"b":"c"}}"#, "*");
        assert_eq!(extract(&json, Some("a.b")).unwrap().expose(), b"c");
        let missing = extract(&json, Some("z")).unwrap_err();
        assert!(missing.is_not_found());
        assert_eq!(missing.message(), "key z does not exist in secret J");
        let empty = extract(&variable("E", "", "*"), None).unwrap_err();
        assert_eq!(
            empty.message(),
            "invalid secret received. no secret string for key: E"
        );
    }
}
