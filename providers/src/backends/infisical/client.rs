//! The Infisical client: reads by key (a `/` in the key names a folder), `property` inside JSON
//! values, find over the scope's folder, and push/delete of whole secrets or JSON members (see
//! the backend's module doc for the rules).

use async_trait::async_trait;
use reqwest::{Method, StatusCode};
use serde_json::value::RawValue;
use tokio::sync::Mutex;

use super::api::{Api, Scope, Secret, Target};
use super::auth::Login;
use super::{document, error};
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::{json_property, raw_to_bytes};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// Seconds before expiry at which an access token is renewed.
const RENEW_MARGIN_SECONDS: u64 = 60;

/// Where a store's secrets live (`secretsScope`).
pub struct Settings {
    /// The project slug.
    pub project: String,
    /// The environment slug.
    pub environment: String,
    /// The default folder.
    pub path: String,
    /// Find lists folders below the default one too.
    pub recursive: bool,
    /// Resolve secret references in values.
    pub expand: bool,
    /// The organization slug sent with logins.
    pub organization: Option<String>,
}

/// An access token and when to renew it.
struct Token {
    value: SecretValue,
    renew_at: Option<std::time::Instant>,
}

/// A client of one store.
pub struct InfisicalClient {
    api: Api,
    login: Login,
    settings: Settings,
    token: Mutex<Option<Token>>,
    project_id: Mutex<Option<String>>,
}

impl InfisicalClient {
    /// A client that logs in at once (so a refused login fails the store).
    pub async fn connect(api: Api, login: Login, settings: Settings) -> Result<Self> {
        let client = Self {
            api,
            login,
            settings,
            token: Mutex::new(None),
            project_id: Mutex::new(None),
        };
        client.token().await?;
        Ok(client)
    }

    /// The current access token, logging in again when it is about to expire.
    async fn token(&self) -> Result<String> {
        let mut guard = self.token.lock().await;
        let fresh = guard.as_ref().filter(|token| {
            token
                .renew_at
                .is_none_or(|at| std::time::Instant::now() < at)
        });
        if let Some(token) = fresh.and_then(|token| token.value.expose_str()) {
            return Ok(token.to_owned());
        }
        let token = match &self.login {
            Login::Token(value) => Token {
                value: value.clone(),
                renew_at: None,
            },
            Login::Identity(identity) => {
                let body = identity.body(self.settings.organization.as_deref())?;
                let (value, lifetime) =
                    self.api
                        .login(identity.method, &body)
                        .await
                        .map_err(|failure| {
                            failure
                                .context(format!("failed to authenticate via {}", identity.method))
                        })?;
                let renew_in = lifetime.saturating_sub(RENEW_MARGIN_SECONDS);
                Token {
                    value: SecretValue::new(value),
                    renew_at: (lifetime > 0).then(|| {
                        std::time::Instant::now() + std::time::Duration::from_secs(renew_in)
                    }),
                }
            }
        };
        let text = token
            .value
            .expose_str()
            .map(str::trim)
            .ok_or_else(|| ProviderError::invalid_config("access token is not UTF-8 text"))?
            .to_owned();
        *guard = Some(token);
        Ok(text)
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            project: &self.settings.project,
            environment: &self.settings.environment,
            expand: self.settings.expand,
        }
    }

    /// The secret at `key` (folder and name), `None` when it does not exist.
    async fn fetch(&self, key: &str, imports: bool) -> Result<Option<(String, String, Secret)>> {
        let (path, name) = address(&self.settings.path, key);
        let token = self.token().await?;
        let secret = self
            .api
            .secret(&token, &self.scope(), &path, &name, imports)
            .await?;
        Ok(secret.map(|secret| (path, name, secret)))
    }

    /// Sends a write to the project, resolving (and caching) the project id first; a 404 with
    /// a cached id resolves it again once, as upstream.
    async fn write(
        &self,
        method: Method,
        path: &str,
        name: &str,
        value: Option<&str>,
    ) -> Result<()> {
        let token = self.token().await?;
        for attempt in 0..2 {
            let (project_id, cached) = {
                let mut cached = self.project_id.lock().await;
                match cached.as_ref() {
                    Some(id) if attempt == 0 => (id.clone(), true),
                    _ => {
                        let id = self.api.project_id(&token, &self.settings.project).await?;
                        *cached = Some(id.clone());
                        (id, false)
                    }
                }
            };
            let status = self
                .api
                .write(
                    &token,
                    method.clone(),
                    &Target {
                        project_id: &project_id,
                        environment: &self.settings.environment,
                        path,
                        key: name,
                    },
                    value,
                )
                .await
                .map_err(|failure| failure.context(format!("secret {name:?}")))?;
            if status != StatusCode::NOT_FOUND || method == Method::DELETE {
                return Ok(());
            }
            if !cached {
                break;
            }
        }
        Err(ProviderError::invalid_config(format!(
            "failed to write secret {name:?}: project or folder not found"
        )))
    }
}

/// The folder and name `key` addresses: a key without `/` lives in the default folder; an
/// absolute key names its folder; a relative one a folder below the default one.
fn address(default_path: &str, key: &str) -> (String, String) {
    let Some((folder, name)) = key.rsplit_once('/') else {
        return (default_path.to_owned(), key.to_owned());
    };
    if key.starts_with('/') {
        let folder = if folder.is_empty() { "/" } else { folder };
        return (folder.to_owned(), name.to_owned());
    }
    let joined = format!("{}/{folder}", default_path.trim_end_matches('/'));
    (joined, name.to_owned())
}

/// Upstream's error for a push location without a key.
fn require_key(remote_key: &str) -> Result<()> {
    if remote_key.is_empty() {
        return Err(ProviderError::invalid_request(
            "remoteKey is required to push a secret to Infisical",
        ));
    }
    Ok(())
}

/// The property of a push location, if one is set.
fn property(remote_ref: &PushRemoteRef) -> Option<&str> {
    remote_ref.property.as_deref().filter(|p| !p.is_empty())
}

#[async_trait]
impl SecretsClient for InfisicalClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let (_, _, secret) = self
            .fetch(&remote_ref.key, true)
            .await?
            .ok_or_else(error::no_secret)?;
        match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
            Some(property) => json_property(secret.secret_value.as_bytes(), property)
                .map(SecretValue::new)
                .ok_or_else(|| error::no_property(property, &remote_ref.key)),
            None => Ok(SecretValue::new(secret.secret_value)),
        }
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.get_secret(remote_ref).await?;
        let members: std::collections::BTreeMap<String, &RawValue> =
            serde_json::from_slice(value.expose()).map_err(|_| {
                ProviderError::invalid_data(format!(
                    "unable to unmarshal secret {}: not a JSON object",
                    remote_ref.key
                ))
            })?;
        Ok(members
            .into_iter()
            .map(|(key, raw)| (key, SecretValue::new(raw_to_bytes(raw))))
            .collect())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        if !find.tags.is_empty() {
            return Err(ProviderError::unsupported("find by tags not supported"));
        }
        let name = find.name.as_ref().map(|name| name.matcher()).transpose()?;
        let token = self.token().await?;
        let secrets = self
            .api
            .secrets(
                &token,
                &self.scope(),
                &self.settings.path,
                self.settings.recursive,
                true,
            )
            .await?;
        Ok(secrets
            .into_iter()
            .filter(|secret| {
                name.as_ref()
                    .is_none_or(|re| re.is_match(&secret.secret_key))
            })
            .filter(|secret| {
                find.path.as_deref().is_none_or(|prefix| {
                    secret
                        .secret_path
                        .as_deref()
                        .unwrap_or_default()
                        .starts_with(prefix)
                })
            })
            .map(|secret| (secret.secret_key, SecretValue::new(secret.secret_value)))
            .collect())
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let remote_key = &request.remote_ref.remote_key;
        require_key(remote_key)?;
        let payload = String::from_utf8(request.value()?.into_bytes()).map_err(|_| {
            ProviderError::invalid_request("Infisical secret values must be UTF-8 text")
        })?;
        let existing = self.fetch(remote_key, false).await?;
        let (path, name) = address(&self.settings.path, remote_key);
        let value = match property(&request.remote_ref) {
            Some(property) => {
                let base = existing.as_ref().map(|(_, _, s)| s.secret_value.as_str());
                document::set(base.unwrap_or("{}"), property, &payload)
                    .map_err(|failure| failure.context(format!("secret {name:?}")))?
            }
            None => payload,
        };
        match existing {
            Some((_, _, secret)) if secret.secret_value == value => Ok(()),
            Some(_) => self.write(Method::PATCH, &path, &name, Some(&value)).await,
            None => self.write(Method::POST, &path, &name, Some(&value)).await,
        }
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        require_key(&remote_ref.remote_key)?;
        let Some((path, name, secret)) = self.fetch(&remote_ref.remote_key, false).await? else {
            return Ok(());
        };
        if let Some(property) = property(remote_ref) {
            match document::remove(&secret.secret_value, property)
                .map_err(|failure| failure.context(format!("secret {name:?}")))?
            {
                document::Removed::Absent => return Ok(()),
                document::Removed::Rest(rest) => {
                    return self.write(Method::PATCH, &path, &name, Some(&rest)).await;
                }
                document::Removed::Empty => {}
            }
        }
        self.write(Method::DELETE, &path, &name, None).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        require_key(&remote_ref.remote_key)?;
        let Some((_, name, secret)) = self.fetch(&remote_ref.remote_key, false).await? else {
            return Ok(false);
        };
        match property(remote_ref) {
            Some(property) => document::contains(&secret.secret_value, property)
                .map_err(|failure| failure.context(format!("secret {name:?}"))),
            None => Ok(true),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        let token = self.token().await?;
        let settings = &self.settings;
        self.api
            .secrets(
                &token,
                &self.scope(),
                &settings.path,
                settings.recursive,
                false,
            )
            .await
            .map_err(|failure| {
                failure.context(format!(
                    "cannot read secrets with provided project scope project:{} environment:{} \
                     secret-path:{} recursive:{}",
                    settings.project, settings.environment, settings.path, settings.recursive
                ))
            })?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        if matches!(self.login, Login::Token(_)) {
            return Ok(());
        }
        let token = self.token.lock().await.take();
        match token.as_ref().and_then(|token| token.value.expose_str()) {
            Some(token) => self.api.revoke(token).await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::address;

    #[test]
    fn keys_with_slashes_name_folders_as_upstream() {
        let at = |default: &str, key: &str| address(default, key);
        assert_eq!(at("/", "db"), ("/".into(), "db".into()));
        assert_eq!(at("/app", "db"), ("/app".into(), "db".into()));
        assert_eq!(at("/", "/foo/bar"), ("/foo".into(), "bar".into()));
        assert_eq!(at("/app", "/top"), ("/".into(), "top".into()));
        assert_eq!(at("/app", "sub/db"), ("/app/sub".into(), "db".into()));
        assert_eq!(at("/", "sub/db"), ("/sub".into(), "db".into()));
    }
}
