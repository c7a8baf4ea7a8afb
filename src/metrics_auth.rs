//! `--metrics-auth`: who may read `/metrics`, decided by the API server as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization` does. The bearer token is authenticated with a
//! TokenReview; the user it names must then be allowed `get` on the non-resource URL
//! `/metrics` by a SubjectAccessReview (what a Prometheus ServiceAccount bound to a
//! `nonResourceURLs: ["/metrics"]` ClusterRole has). No token: 401; unknown token: 401; not
//! allowed: 403.
//!
//! Decisions are cached by a SHA-256 of the token (never the token itself) so a scrape every few
//! seconds costs no API requests: allowed for one minute (controller-runtime's authentication
//! cache TTL), denied for 30 seconds (its authorizer's deny TTL), at most 1024 entries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

/// How long an allowed decision is reused.
const ALLOW_TTL: Duration = Duration::from_secs(60);
/// How long a refusal is reused.
const DENY_TTL: Duration = Duration::from_secs(30);
/// The most decisions kept; a full cache starts over.
const MAX_CACHED: usize = 1024;

/// What the API server said about one token, path and verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Allowed,
    Unauthenticated,
    Forbidden,
}

/// Authenticates and authorizes metrics requests through the API server.
pub struct MetricsAuth {
    client: kube::Client,
    cache: Mutex<HashMap<[u8; 32], (Decision, Instant)>>,
}

impl MetricsAuth {
    /// Checks requests with `client`'s TokenReview and SubjectAccessReview calls.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            cache: Mutex::default(),
        }
    }

    async fn decide(&self, token: &str, path: &str, verb: &str) -> Result<Decision, kube::Error> {
        let key = cache_key(token, path, verb);
        let now = Instant::now();
        if let Some((decision, until)) = self.cached(&key)
            && until > now
        {
            return Ok(decision);
        }
        let decision = self.ask(token, path, verb).await?;
        let ttl = if decision == Decision::Allowed {
            ALLOW_TTL
        } else {
            DENY_TTL
        };
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(key, (decision, now + ttl));
        Ok(decision)
    }

    fn cached(&self, key: &[u8; 32]) -> Option<(Decision, Instant)> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.get(key).copied()
    }

    async fn ask(&self, token: &str, path: &str, verb: &str) -> Result<Decision, kube::Error> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_owned()),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let reviewed = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let Some(status) = reviewed
            .status
            .filter(|status| status.authenticated == Some(true))
        else {
            return Ok(Decision::Unauthenticated);
        };
        let user = status.user.unwrap_or_default();
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                groups: user.groups,
                uid: user.uid,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                resource_attributes: None,
            },
            ..SubjectAccessReview::default()
        };
        let answered = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await?;
        let allowed = answered.status.is_some_and(|status| status.allowed);
        Ok(if allowed {
            Decision::Allowed
        } else {
            Decision::Forbidden
        })
    }
}

/// The cache key: a digest of token, path and verb, so the token is never kept.
fn cache_key(token: &str, path: &str, verb: &str) -> [u8; 32] {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    for part in [token, path, verb] {
        context.update(&(part.len() as u64).to_be_bytes());
        context.update(part.as_bytes());
    }
    let mut key = [0; 32];
    key.copy_from_slice(context.finish().as_ref());
    key
}

/// `router` with every route behind the check when `auth` is given (`--metrics-auth`).
pub fn protect(router: Router, auth: Option<Arc<MetricsAuth>>) -> Router {
    match auth {
        Some(auth) => router.route_layer(axum::middleware::from_fn_with_state(auth, guard)),
        None => router,
    }
}

/// The middleware guarding the routes it is layered on.
async fn guard(State(auth): State<Arc<MetricsAuth>>, request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty());
    let Some(token) = token else {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    // controller-runtime's request info: the lower-case HTTP method is the verb.
    let verb = request.method().as_str().to_ascii_lowercase();
    match auth.decide(token, request.uri().path(), &verb).await {
        Ok(Decision::Allowed) => next.run(request).await,
        Ok(Decision::Unauthenticated) => (StatusCode::UNAUTHORIZED, "Unauthorized").into_response(),
        Ok(Decision::Forbidden) => (StatusCode::FORBIDDEN, "Forbidden").into_response(),
        Err(error) => {
            tracing::warn!(%error, "metrics authentication failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Authentication or authorization failed",
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_keys_separate_tokens_paths_and_verbs() {
        let key = cache_key("token", "/metrics", "get");
        assert_eq!(key, cache_key("token", "/metrics", "get"));
        assert_ne!(key, cache_key("other", "/metrics", "get"));
        assert_ne!(key, cache_key("token", "/metrics2", "get"));
        assert_ne!(key, cache_key("token", "/metrics", "post"));
        // Lengths are part of the key: moving a character between parts changes it.
        assert_ne!(cache_key("ab", "c", "get"), cache_key("a", "bc", "get"));
    }
}
