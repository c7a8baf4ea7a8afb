//! Subject tokens of workload identity federation, as Google's external account credentials
//! read them (cloud.google.com/iam/docs/workload-identity-federation-with-other-providers):
//!
//! * a file (`credential_source.file`), read at each exchange, whitespace trimmed;
//! * a URL (`credential_source.url`, with its `headers`), fetched with GET at each exchange;
//!   both as text or as a JSON object whose `subject_token_field_name` holds the token;
//! * a TokenRequest token of a Kubernetes ServiceAccount (`serviceAccountRef`);
//! * a signed AWS STS `GetCallerIdentity` request (`awsSecurityCredentials`): SigV4 over
//!   `POST https://sts.<region>.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15` with
//!   the headers `host`, `x-amz-date`, `x-goog-cloud-target-resource` (the audience) and, for
//!   temporary keys, `x-amz-security-token`; the token is that request as JSON
//!   (`{"url", "method", "headers": [{"key", "value"}]}`, headers sorted), URL-encoded, as
//!   Google documents for AWS.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use serde_json::{Value, json};

use super::workload_identity::{POD_TOKEN, SA_TOKEN_LIFETIME};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::transport::{read_body, transport_error};
use crate::value::{SecretMap, SecretValue};

/// Largest subject token source read.
const MAX_SUBJECT_BYTES: usize = 64 * 1024;

/// How a file or URL holds the token.
pub(super) enum TextFormat {
    /// The whole content.
    Text,
    /// The string field of this name of a JSON object.
    Json(String),
}

/// AWS keys from an `awsSecurityCredentials` Secret.
pub(super) struct AwsKeys {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl AwsKeys {
    /// The keys of a Secret's data (`aws_access_key_id`, `aws_secret_access_key`, optional
    /// `aws_session_token`), as upstream requires them.
    pub(super) fn from_secret(mut data: SecretMap) -> Result<Self> {
        let mut take = |key: &str| {
            data.remove(key)
                .and_then(|value| value.expose_str().map(str::to_owned))
                .filter(|value| !value.is_empty())
        };
        let (Some(access_key_id), Some(secret_access_key)) =
            (take("aws_access_key_id"), take("aws_secret_access_key"))
        else {
            return Err(ProviderError::invalid_config(
                "aws_access_key_id and aws_secret_access_key keys must be present in \
                 AwsSecurityCredentials secret",
            ));
        };
        Ok(Self {
            access_key_id,
            secret_access_key,
            session_token: take("aws_session_token"),
        })
    }
}

/// Where a federated exchange's subject token comes from.
pub(super) enum Subject {
    /// A file on the operator's file system.
    File { path: PathBuf, format: TextFormat },
    /// An HTTP(S) endpoint.
    Url {
        url: reqwest::Url,
        headers: BTreeMap<String, String>,
        format: TextFormat,
    },
    /// A Kubernetes ServiceAccount's TokenRequest token.
    ServiceAccount {
        name: String,
        namespace: Option<String>,
        audiences: Vec<String>,
    },
    /// A signed AWS `GetCallerIdentity` request.
    Aws { region: String, keys: Box<AwsKeys> },
}

impl Subject {
    /// A fresh subject token for an exchange with `audience`.
    pub(super) async fn token(
        &self,
        http: &reqwest::Client,
        credentials: &CredentialResolver,
        audience: &str,
    ) -> Result<SecretValue> {
        match self {
            Self::File { path, format } => {
                let unreadable = |error: std::io::Error| {
                    ProviderError::invalid_config(format!(
                        "cannot read the subject token file {}: {error}",
                        path.display()
                    ))
                };
                // A small local file (size checked first), read as the default chain reads its key.
                let size = std::fs::metadata(path).map_err(unreadable)?.len();
                if size > MAX_SUBJECT_BYTES as u64 {
                    return Err(ProviderError::invalid_config(
                        "the subject token file is too large",
                    ));
                }
                let content = std::fs::read(path).map_err(unreadable)?;
                extract(&content, format)
            }
            Self::Url {
                url,
                headers,
                format,
            } => {
                let action = "cannot get the subject token from credential_source.url";
                let mut request = http.get(url.clone());
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                let response = request
                    .send()
                    .await
                    .map_err(|error| transport_error(action, error))?;
                let status = response.status();
                let body = read_body(response, MAX_SUBJECT_BYTES, action).await?;
                if !status.is_success() {
                    return Err(ProviderError::unavailable(format!(
                        "{action}: status {status}"
                    )));
                }
                extract(&body, format)
            }
            Self::ServiceAccount {
                name,
                namespace,
                audiences,
            } => {
                let token = credentials
                    .service_account_token(
                        name,
                        namespace.as_deref(),
                        audiences,
                        SA_TOKEN_LIFETIME,
                        Referent::Allowed,
                    )
                    .await
                    .map_err(|error| error.context(POD_TOKEN))?;
                Ok(token.token)
            }
            Self::Aws { region, keys } => aws_request(region, keys, audience, SystemTime::now()),
        }
    }
}

/// The token in `content` as `format` says.
fn extract(content: &[u8], format: &TextFormat) -> Result<SecretValue> {
    let token = match format {
        TextFormat::Text => std::str::from_utf8(content)
            .map(|text| text.trim().to_owned())
            .ok(),
        TextFormat::Json(field) => serde_json::from_slice::<Value>(content)
            .ok()
            .and_then(|document| document.get(field)?.as_str().map(str::to_owned)),
    };
    token
        .filter(|token| !token.is_empty())
        .map(SecretValue::new)
        .ok_or_else(|| {
            ProviderError::invalid_data(
                "the subject token source holds no token in the configured format",
            )
        })
}

/// The signed `GetCallerIdentity` request as Google's STS takes it.
fn aws_request(
    region: &str,
    keys: &AwsKeys,
    audience: &str,
    now: SystemTime,
) -> Result<SecretValue> {
    let failed = |problem: String| {
        ProviderError::invalid_config(format!("cannot sign the AWS subject token: {problem}"))
    };
    if region.is_empty()
        || !region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(failed("invalid region".to_owned()));
    }
    let host = format!("sts.{region}.amazonaws.com");
    let url = format!("https://{host}?Action=GetCallerIdentity&Version=2011-06-15");
    let identity = aws_credential_types::Credentials::new(
        &keys.access_key_id,
        &keys.secret_access_key,
        keys.session_token.clone(),
        None,
        "workloadIdentityFederation",
    )
    .into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sts")
        .time(now)
        .settings(SigningSettings::default())
        .build()
        .map_err(|error| failed(error.to_string()))?
        .into();
    let mut headers = vec![
        ("host".to_owned(), host.clone()),
        (
            "x-goog-cloud-target-resource".to_owned(),
            audience.to_owned(),
        ),
    ];
    let signable = SignableRequest::new(
        "POST",
        &url,
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str())),
        SignableBody::Bytes(&[]),
    )
    .map_err(|error| failed(error.to_string()))?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|error| failed(error.to_string()))?
        .into_parts();
    for (name, value) in instructions.headers() {
        let name = if name.eq_ignore_ascii_case("authorization") {
            "Authorization"
        } else {
            name
        };
        headers.push((name.to_owned(), value.to_owned()));
    }
    headers.sort();
    let headers: Vec<Value> = headers
        .into_iter()
        .map(|(key, value)| json!({"key": key, "value": value}))
        .collect();
    let request = json!({"url": url, "method": "POST", "headers": headers}).to_string();
    Ok(SecretValue::new(
        crate::transport::form_body(&[("t", &request)])
            .strip_prefix("t=")
            .unwrap_or_default()
            .to_owned(),
    ))
}
