//! The token a client uses for its whole life: one login when the client is built, renewals
//! before it expires, revocation when the client is closed.
//!
//! Upstream logs in on every reconcile and revokes the token in `Close` (it leaked a lease per
//! reconcile before: upstream issue #376). Here the client cache keeps a client for as long as
//! its store is unchanged, so the session:
//!
//! * renews a login token (`renew-self`) after two thirds of its lease, as long as a renewal
//!   still grants at least half the lease the token was issued with; otherwise (not renewable,
//!   at its maximum TTL, renewal refused) logs in again and revokes the old token;
//! * after a request is denied, checks the token (`lookup-self`): if the token itself is no
//!   longer valid (revoked, expired, or a rotated `tokenSecretRef`), authenticates again and
//!   retries the request once, so a revoked token does not keep a store failing until it is
//!   edited;
//! * on `close`, revokes the login token (never a `tokenSecretRef` token, which belongs to the
//!   user, nor a batch token, which cannot be revoked) and refuses further requests.

use external_secrets_crds::v1::VaultAuth;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::auth::{Login, Token};
use super::config::AuthMethod;
use super::http::{Call, Reply, Transport};
use crate::credentials::CredentialResolver;
use crate::error::{ErrorKind, ProviderError, Result};
use crate::value::SecretValue;

/// An authenticated connection to Vault.
pub(super) struct Session {
    transport: Transport,
    auth: Option<VaultAuth>,
    credentials: CredentialResolver,
    namespace: Option<String>,
    auth_namespace: Option<String>,
    state: Mutex<State>,
}

enum State {
    Open(Current),
    Closed,
}

struct Current {
    token: Option<Token>,
    /// The lease the current token was issued with by its login.
    issued_lease: std::time::Duration,
    renew_at: Option<Instant>,
}

impl Session {
    /// Authenticates once, so broken credentials fail when the client is built.
    pub(super) async fn open(
        transport: Transport,
        auth: Option<&VaultAuth>,
        credentials: CredentialResolver,
        namespace: Option<String>,
    ) -> Result<Self> {
        let auth_namespace = auth
            .and_then(|auth| auth.namespace.clone())
            .or_else(|| namespace.clone());
        let mut session = Self {
            transport,
            auth: auth.cloned(),
            credentials,
            namespace,
            auth_namespace,
            state: Mutex::new(State::Closed),
        };
        let current = session.authenticate().await?;
        *session.state.get_mut() = State::Open(current);
        Ok(session)
    }

    /// Sends `call` in the store's namespace with the current token, authenticating again and
    /// retrying once if the token turns out to be invalid.
    pub(super) async fn send(&self, call: Call<'_>, action: &str) -> Result<Reply> {
        let token = self.token().await?;
        let first = self.attempt(call.clone(), token.as_ref(), action).await;
        match (first, token) {
            (Err(error), Some(used)) if error.kind() == ErrorKind::PermissionDenied => {
                match self.replace_if_invalid(&used).await? {
                    Some(fresh) => self.attempt(call, Some(&fresh), action).await,
                    None => Err(error),
                }
            }
            (result, _) => result,
        }
    }

    async fn attempt(
        &self,
        mut call: Call<'_>,
        token: Option<&SecretValue>,
        action: &str,
    ) -> Result<Reply> {
        call.namespace = self.namespace.as_deref();
        call.token = token;
        self.transport.send(call, action).await
    }

    /// Checks the credentials: a login token is proof enough while it lives, a static token is
    /// looked up.
    pub(super) async fn validate(&self) -> Result<()> {
        let token = self.token().await?;
        if self.method()?.logs_in() {
            return Ok(());
        }
        self.login().look_up(token.as_ref()).await
    }

    /// Revokes the login token and refuses further requests.
    pub(super) async fn close(&self) -> Result<()> {
        let previous = std::mem::replace(&mut *self.state.lock().await, State::Closed);
        match previous {
            State::Open(Current {
                token: Some(token), ..
            }) if token.revocable => self.login().revoke(&token.value).await,
            _ => Ok(()),
        }
    }

    /// The token to send, renewed or replaced first when due.
    async fn token(&self) -> Result<Option<SecretValue>> {
        let mut state = self.state.lock().await;
        let State::Open(current) = &mut *state else {
            return Err(ProviderError::unavailable("the vault client is closed"));
        };
        if current.renew_at.is_some_and(|at| Instant::now() >= at) {
            let replacement = self.refreshed(current).await?;
            *current = replacement;
        }
        Ok(current.token.as_ref().map(|token| token.value.clone()))
    }

    /// `current` renewed, or replaced by a new login (the old token then revoked).
    async fn refreshed(&self, current: &Current) -> Result<Current> {
        let Some(old) = &current.token else {
            return self.authenticate().await;
        };
        if old.renewable {
            match self.login().renew(&old.value).await {
                Ok(renewed) if renewed.lease * 2 >= current.issued_lease => {
                    tracing::debug!(
                        lease_seconds = renewed.lease.as_secs(),
                        "renewed the vault token"
                    );
                    let token = Token {
                        revocable: old.revocable,
                        ..renewed
                    };
                    return Ok(schedule(token, current.issued_lease));
                }
                Ok(_) => tracing::debug!("the vault token reached its maximum ttl, logging in"),
                Err(error) => tracing::debug!(
                    reason = error.reason(),
                    "renewing the vault token failed, logging in"
                ),
            }
        }
        let fresh = self.authenticate().await?;
        self.revoke_replaced(old).await;
        Ok(fresh)
    }

    /// After a denial with `used`: `None` if the token is still valid (the denial is a policy
    /// matter), otherwise the token to retry with.
    async fn replace_if_invalid(&self, used: &SecretValue) -> Result<Option<SecretValue>> {
        let mut state = self.state.lock().await;
        let State::Open(current) = &mut *state else {
            return Ok(None);
        };
        let current_value = current.token.as_ref().map(|token| &token.value);
        if current_value != Some(used) {
            // Another call replaced it meanwhile.
            return Ok(current_value.cloned());
        }
        match self.login().look_up(Some(used)).await {
            Err(error) if error.kind() == ErrorKind::PermissionDenied => {}
            _ => return Ok(None),
        }
        let fresh = self.authenticate().await?;
        let value = fresh.token.as_ref().map(|token| token.value.clone());
        if value.as_ref() == Some(used) {
            return Ok(None);
        }
        tracing::info!("the vault token is no longer valid, authenticated again");
        *current = fresh;
        Ok(value)
    }

    async fn revoke_replaced(&self, old: &Token) {
        if !old.revocable {
            return;
        }
        if let Err(error) = self.login().revoke(&old.value).await {
            tracing::debug!(
                reason = error.reason(),
                "revoking the replaced vault token failed"
            );
        }
    }

    /// A new token by the configured method.
    async fn authenticate(&self) -> Result<Current> {
        Ok(match self.login().token(self.method()?).await? {
            Some(token) => {
                let issued = token.lease;
                schedule(token, issued)
            }
            None => Current {
                token: None,
                issued_lease: std::time::Duration::ZERO,
                renew_at: None,
            },
        })
    }

    fn method(&self) -> Result<AuthMethod<'_>> {
        AuthMethod::of(self.auth.as_ref())
    }

    fn login(&self) -> Login<'_> {
        Login {
            transport: &self.transport,
            credentials: &self.credentials,
            namespace: self.auth_namespace.as_deref(),
        }
    }
}

/// `token` with its renewal due after two thirds of its lease (never, for a lease of zero).
fn schedule(token: Token, issued_lease: std::time::Duration) -> Current {
    let renew_at = (!token.lease.is_zero()).then(|| Instant::now() + token.lease * 2 / 3);
    Current {
        token: Some(token),
        issued_lease,
        renew_at,
    }
}
