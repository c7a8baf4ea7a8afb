//! The AWS SDK configuration every client of a store starts from: its region, its credentials
//! (or the SDK's default chain: environment, web identity file, ECS, instance metadata), one
//! process-wide HTTPS client on rustls + ring, and no SDK retries (the store's retry settings
//! apply to every provider call instead, see `crate::retry`).

use std::sync::OnceLock;

use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_sts::config::{SharedCredentialsProvider, SharedHttpClient};
use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};

/// The HTTPS client all AWS clients share (one connection pool), trusting the system roots.
fn http_client() -> SharedHttpClient {
    static CLIENT: OnceLock<SharedHttpClient> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            aws_smithy_http_client::Builder::new()
                .tls_provider(Provider::Rustls(CryptoMode::Ring))
                .build_https()
        })
        .clone()
}

/// The configuration of clients in `region` using `credentials` (`None`: the default chain).
pub(super) async fn sdk_config(
    region: &str,
    credentials: Option<SharedCredentialsProvider>,
) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region.to_owned()))
        .http_client(http_client())
        .retry_config(RetryConfig::disabled());
    if let Some(credentials) = credentials {
        loader = loader.credentials_provider(credentials);
    }
    loader.load().await
}
