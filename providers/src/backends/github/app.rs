//! GitHub App authentication: an RS256 JWT naming the App (`iss`: its id) is exchanged at
//! `POST /app/installations/{id}/access_tokens` for an installation access token, which every
//! other request carries. The token is kept until a minute before GitHub's `expires_at` (an
//! hour after issue), then renewed, as `ghinstallation` does.

use std::time::{SystemTime, UNIX_EPOCH};

use ring::signature::RsaKeyPair;
use serde::Deserialize;
use tokio::sync::Mutex;

use crate::error::{ProviderError, Result};
use crate::jwt::{KeyError, rsa_key_from_pem, sign_rs256};
use crate::value::SecretValue;

/// JWT lifetime: GitHub accepts at most ten minutes.
const JWT_LIFETIME_SECONDS: i64 = 600;

/// How far back `iat` is set, for clocks running ahead of GitHub's (GitHub's own advice).
const CLOCK_DRIFT_SECONDS: i64 = 60;

/// How long before its expiry a token is renewed.
const RENEW_MARGIN_SECONDS: i64 = 60;

/// An installation token as GitHub returns it.
#[derive(Deserialize)]
pub struct InstallationToken {
    /// The token.
    token: String,
    /// When it stops working (RFC 3339).
    expires_at: String,
}

impl InstallationToken {
    /// Its expiry in Unix seconds; an unreadable one counts as expired (the next call renews).
    fn expiry(&self) -> i64 {
        chrono::DateTime::parse_from_rfc3339(&self.expires_at)
            .map(|expiry| expiry.timestamp())
            .unwrap_or_default()
    }
}

/// The time now in Unix seconds.
fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|elapsed| i64::try_from(elapsed.as_secs()).ok())
        .unwrap_or_default()
}

/// The App's identity and its current installation token.
pub struct AppAuth {
    app_id: i64,
    installation_id: i64,
    key: RsaKeyPair,
    current: Mutex<Option<(SecretValue, i64)>>,
}

impl AppAuth {
    /// The App `app_id`'s installation `installation_id`, signing with the PEM `private_key`
    /// (PKCS#1 as GitHub issues it, or PKCS#8).
    pub fn new(app_id: i64, installation_id: i64, private_key: &[u8]) -> Result<Self> {
        let key = rsa_key_from_pem(private_key).map_err(|failure| {
            let why = match failure {
                KeyError::NoRsaBlock => "invalid key: Key must be a PEM encoded PKCS1 or PKCS8 key",
                KeyError::Unusable => "the private key is not a usable RSA key",
            };
            ProviderError::invalid_config(format!(
                "could not get private key: could not instantiate new installation transport: {why}"
            ))
        })?;
        Ok(Self {
            app_id,
            installation_id,
            key,
            current: Mutex::new(None),
        })
    }

    /// The installation whose token this is.
    pub fn installation_id(&self) -> i64 {
        self.installation_id
    }

    /// A fresh App JWT.
    pub fn jwt(&self) -> Result<String> {
        let now = now_seconds();
        let header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
        let claims = serde_json::json!({
            "iat": now - CLOCK_DRIFT_SECONDS,
            "exp": now + JWT_LIFETIME_SECONDS - CLOCK_DRIFT_SECONDS,
            "iss": self.app_id.to_string(),
        });
        sign_rs256(&self.key, &header, &claims)
            .ok_or_else(|| ProviderError::unavailable("could not sign the GitHub App JWT"))
    }

    /// The current installation token, or one `renew` fetched when there is none still valid.
    pub async fn token<Renew, Renewed>(&self, renew: Renew) -> Result<SecretValue>
    where
        Renew: FnOnce() -> Renewed,
        Renewed: std::future::Future<Output = Result<InstallationToken>>,
    {
        let mut current = self.current.lock().await;
        if let Some((token, expires)) = current.as_ref()
            && *expires - now_seconds() > RENEW_MARGIN_SECONDS
        {
            return Ok(token.clone());
        }
        let fresh = renew().await?;
        let expiry = fresh.expiry();
        let token = SecretValue::from(fresh.token);
        *current = Some((token.clone(), expiry));
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    const KEY: &[u8] = include_bytes!("../../../tests/data/github-app-key.pem");

    #[test]
    fn jwts_name_the_app_and_live_under_ten_minutes() {
        let app = AppAuth::new(42, 7, KEY).unwrap();
        let jwt = app.jwt().unwrap();
        let claims = jwt.split('.').nth(1).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        assert_eq!(claims["iss"], "42");
        let lifetime = claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap();
        assert!(lifetime <= JWT_LIFETIME_SECONDS, "{lifetime}");
    }

    #[test]
    fn keys_that_are_not_rsa_pem_are_configuration_errors() {
        let error = AppAuth::new(1, 2, b"secret-looking-garbage").err().unwrap();
        assert_eq!(error.kind(), crate::error::ErrorKind::InvalidConfig);
        assert!(!error.message().contains("garbage"));
    }

    #[tokio::test]
    async fn tokens_are_reused_until_near_expiry() {
        let app = AppAuth::new(1, 2, KEY).unwrap();
        let issue = |token: &str, minutes: i64| {
            let expiry = chrono::DateTime::from_timestamp(now_seconds() + minutes * 60, 0);
            let fresh = InstallationToken {
                token: token.to_owned(),
                expires_at: expiry.unwrap().to_rfc3339(),
            };
            async move { Ok(fresh) }
        };
        let first = app.token(|| issue("first", 60)).await.unwrap();
        let again = app.token(|| issue("second", 60)).await.unwrap();
        assert_eq!(again.expose(), first.expose());
        let app = AppAuth::new(1, 2, KEY).unwrap();
        app.token(|| issue("short", 0)).await.unwrap();
        let renewed = app.token(|| issue("renewed", 60)).await.unwrap();
        assert_eq!(renewed.expose(), b"renewed");
    }
}
