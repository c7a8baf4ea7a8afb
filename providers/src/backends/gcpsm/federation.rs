//! Workload identity federation (`auth.workloadIdentityFederation`), as upstream's
//! `workloadIdentityFederation` token source builds Google's "external account" credentials:
//!
//! * exactly one of `credConfig` (an external account credential configuration, the JSON
//!   `gcloud iam workload-identity-pools create-cred-config` writes, from a ConfigMap key),
//!   `serviceAccountRef` (a TokenRequest token of that Kubernetes ServiceAccount) or
//!   `awsSecurityCredentials` (a signed AWS `GetCallerIdentity` request, keys from a Secret);
//!   `audience` is required with the latter two and overrides the configuration's;
//! * the subject token (see `subject`) is exchanged at Google's Security Token Service
//!   (`https://sts.googleapis.com/v1/token`, RFC 8693, form-encoded: grant `token-exchange`,
//!   the audience, scope cloud-platform, requested type `access_token`, the subject token and
//!   its type; HTTP Basic client authentication when the configuration has `client_id`);
//! * then, if a Google service account is to be impersonated (`gcpServiceAccountEmail`, else
//!   the ServiceAccount's `iam.gke.io/gcp-service-account` annotation, else the configuration's
//!   `service_account_impersonation_url`), its token from IAM Credentials.
//!
//! Refused as upstream refuses them: a configuration whose `type` is not `external_account`,
//! whose `token_url` is not Google's STS, whose impersonation URL is not IAM Credentials',
//! executables as credential source, a `credential_source.url` other than
//! `externalTokenEndpoint`; the operator's own mounted token as a file source is ignored.
//! AWS credential sources that read the EC2 metadata server (`credential_source.environment_id`)
//! are refused by this build (use `awsSecurityCredentials`).

use external_secrets_crds::v1::GcpWorkloadIdentityFederation;
use serde::Deserialize;

use super::auth::{Fetched, SCOPE, expires_in, read_answer};
use super::config::Endpoints;
use super::subject::{AwsKeys, Subject, TextFormat};
use super::workload_identity::{
    ACCESS_TOKEN_TYPE, GCP_SA_ANNOTATION, JWT_TOKEN_TYPE, TOKEN_EXCHANGE, impersonate,
};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::value::SecretValue;

/// Google's Security Token Service, the only `token_url` upstream accepts.
pub const STS_TOKEN_URL: &str = "https://sts.googleapis.com/v1/token";
/// The subject token type of a signed AWS request.
pub const AWS_TOKEN_TYPE: &str = "urn:ietf:params:aws:token-type:aws4_request";
/// Upstream's prefix for a federation block that cannot be used.
const INVALID: &str = "invalid workloadIdentityFederation config";
/// The operator's own mounted token, never a subject token (upstream's rule).
const AUTOMOUNTED_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";
/// IAM Credentials' impersonation URL, the only form upstream accepts.
const IMPERSONATION_PREFIX: &str =
    "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/";
const IMPERSONATION_SUFFIX: &str = ":generateAccessToken";
/// Largest credential configuration read.
const MAX_CONFIG_BYTES: usize = 64 * 1024;

/// The fields of an external account credential configuration this build reads.
#[derive(Deserialize, Default)]
struct CredentialFile {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    audience: String,
    #[serde(default)]
    subject_token_type: String,
    #[serde(default)]
    token_url: String,
    #[serde(default)]
    service_account_impersonation_url: String,
    #[serde(default)]
    service_account_impersonation: Impersonation,
    #[serde(default)]
    client_id: String,
    #[serde(default)]
    client_secret: String,
    #[serde(default)]
    credential_source: Option<CredentialSource>,
}

#[derive(Deserialize, Default)]
struct Impersonation {
    #[serde(default)]
    token_lifetime_seconds: u64,
}

/// Where the subject token comes from.
#[derive(Deserialize, Default)]
struct CredentialSource {
    #[serde(default)]
    file: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    environment_id: String,
    #[serde(default)]
    executable: Option<serde_json::Value>,
    #[serde(default)]
    format: Option<SourceFormat>,
}

#[derive(Deserialize, Default)]
struct SourceFormat {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    subject_token_field_name: String,
}

#[derive(Deserialize)]
struct Exchanged {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

/// A federated token source.
pub(super) struct Federation {
    audience: String,
    subject_token_type: String,
    subject: Subject,
    /// The Google service account to impersonate, if any.
    impersonate: Option<String>,
    /// Requested impersonated token life (0: Google's default hour).
    lifetime: u64,
    client: Option<(String, String)>,
    credentials: CredentialResolver,
    endpoints: Endpoints,
}

impl Federation {
    /// The source `config` describes, reading its ConfigMap, Secret and ServiceAccount now.
    pub(super) async fn new(
        config: &GcpWorkloadIdentityFederation,
        credentials: &CredentialResolver,
        endpoints: &Endpoints,
    ) -> Result<Self> {
        let given = [
            config.cred_config.is_some(),
            config.service_account_ref.is_some(),
            config.aws_security_credentials.is_some(),
        ];
        if given.iter().filter(|given| **given).count() != 1 {
            return Err(ProviderError::invalid_config(format!(
                "{INVALID}: exactly one of credConfig, awsSecurityCredentials or \
                 serviceAccountRef must be provided"
            )));
        }
        let audience = config.audience.clone().filter(|a| !a.is_empty());
        if config.cred_config.is_none() && audience.is_none() {
            return Err(ProviderError::invalid_config(format!(
                "{INVALID}: audience must be provided, when serviceAccountRef or \
                 awsSecurityCredentials is provided"
            )));
        }
        let file = match &config.cred_config {
            Some(reference) => read_config(reference, credentials).await?,
            None => CredentialFile::default(),
        };
        let mut impersonate = None;
        let (subject, token_type) = if let Some(account) = &config.service_account_ref {
            let annotations = credentials
                .service_account_annotations(
                    &account.name,
                    account.namespace.as_deref(),
                    Referent::Allowed,
                )
                .await?;
            impersonate = annotations.get(GCP_SA_ANNOTATION).cloned();
            let subject = Subject::ServiceAccount {
                name: account.name.clone(),
                namespace: account.namespace.clone(),
                audiences: account.audiences.clone(),
            };
            (subject, JWT_TOKEN_TYPE.to_owned())
        } else if let Some(aws) = &config.aws_security_credentials {
            let reference = &aws.aws_credentials_secret_ref;
            let secret = credentials
                .secret(
                    &reference.name,
                    reference.namespace.as_deref(),
                    Referent::Allowed,
                )
                .await
                .map_err(|error| {
                    error.context(format!(
                        "failed to fetch AwsSecurityCredentials secret {:?}",
                        reference.name
                    ))
                })?;
            let keys = AwsKeys::from_secret(secret.data)?;
            let subject = Subject::Aws {
                region: aws.region.clone(),
                keys: Box::new(keys),
            };
            (subject, AWS_TOKEN_TYPE.to_owned())
        } else {
            let subject = source_subject(file.credential_source.as_ref(), config)?;
            (subject, file.subject_token_type.clone())
        };
        let audience = audience.unwrap_or_else(|| file.audience.clone());
        let token_url = if file.token_url.is_empty() {
            STS_TOKEN_URL
        } else {
            &file.token_url
        };
        let mut problems = Vec::new();
        if audience.is_empty() {
            problems.push("audience is empty".to_owned());
        }
        let from_url = impersonated_account(&file.service_account_impersonation_url);
        if !file.service_account_impersonation_url.is_empty() && from_url.is_none() {
            problems.push(format!(
                "service_account_impersonation_url {:?} does not have expected value",
                file.service_account_impersonation_url
            ));
        }
        if token_url != STS_TOKEN_URL {
            problems.push(format!(
                "token_url {token_url:?} must match {STS_TOKEN_URL}"
            ));
        }
        if !problems.is_empty() {
            return Err(ProviderError::invalid_config(format!(
                "invalid external_account config\n{}",
                problems.join("\n")
            )));
        }
        let impersonate = config
            .gcp_service_account_email
            .clone()
            .filter(|email| !email.is_empty())
            .or(impersonate)
            .or(from_url);
        let client = (!file.client_id.is_empty())
            .then(|| (file.client_id.clone(), file.client_secret.clone()));
        Ok(Self {
            audience,
            subject_token_type: if token_type.is_empty() {
                JWT_TOKEN_TYPE.to_owned()
            } else {
                token_type
            },
            subject,
            impersonate,
            lifetime: file.service_account_impersonation.token_lifetime_seconds,
            client,
            credentials: credentials.clone(),
            endpoints: endpoints.clone(),
        })
    }

    /// A fresh access token and its expiry.
    pub(super) async fn fetch(&self, http: &reqwest::Client) -> Result<Fetched> {
        let subject = self
            .subject
            .token(http, &self.credentials, &self.audience)
            .await?;
        let body = crate::transport::form_body(&[
            ("audience", &self.audience),
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
            ("scope", SCOPE),
            ("subject_token", subject.expose_str().unwrap_or_default()),
            ("subject_token_type", &self.subject_token_type),
        ]);
        let mut url = self.endpoints.sts.clone();
        url.set_path("v1/token");
        let mut request = http
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        if let Some((id, secret)) = &self.client {
            request = request.basic_auth(id, Some(secret));
        }
        let exchanged: Exchanged =
            read_answer(request, "unable to exchange the subject token").await?;
        match &self.impersonate {
            Some(account) => {
                let lifetime = (self.lifetime > 0).then_some(self.lifetime);
                impersonate(
                    http,
                    &self.endpoints,
                    account,
                    &exchanged.access_token,
                    lifetime,
                )
                .await
            }
            None => Ok((
                SecretValue::new(exchanged.access_token),
                expires_in(exchanged.expires_in),
            )),
        }
    }
}

/// Reads and parses the credential configuration `reference` names.
async fn read_config(
    reference: &external_secrets_crds::v1::ConfigMapReference,
    credentials: &CredentialResolver,
) -> Result<CredentialFile> {
    let name = &reference.name;
    let json = credentials
        .config_map_key(
            name,
            &reference.key,
            reference.namespace.as_deref(),
            Referent::Allowed,
        )
        .await?;
    if json.is_empty() {
        return Err(ProviderError::invalid_config(format!(
            "key {:?} in configmap {name:?} has empty value",
            reference.key
        )));
    }
    if json.len() > MAX_CONFIG_BYTES {
        return Err(ProviderError::invalid_config(format!(
            "external account config in {name:?} is larger than {MAX_CONFIG_BYTES} bytes"
        )));
    }
    let file: CredentialFile = serde_json::from_str(&json).map_err(|_| {
        ProviderError::invalid_config(format!(
            "failed to unmarshal external acccount config in {name:?}"
        ))
    })?;
    if file.kind != "external_account" {
        return Err(ProviderError::invalid_config(format!(
            "invalid credentials: 'type' field is {:?} (expected \"external_account\")",
            file.kind
        )));
    }
    Ok(file)
}

/// The subject a configuration's `credential_source` names, checked as upstream checks it.
fn source_subject(
    source: Option<&CredentialSource>,
    config: &GcpWorkloadIdentityFederation,
) -> Result<Subject> {
    let invalid = |problem: String| {
        ProviderError::invalid_config(format!("invalid external_account config\n{problem}"))
    };
    let source = source
        .filter(|source| source.file != AUTOMOUNTED_TOKEN)
        .ok_or_else(|| {
            invalid("a credential_source (file or url) is required: the operator's own token is never used".to_owned())
        })?;
    if source.executable.is_some() {
        return Err(invalid(
            "credential_source.executable.command is not allowed".to_owned(),
        ));
    }
    if !source.environment_id.is_empty() {
        return Err(ProviderError::unsupported(
            "credential_source.environment_id (AWS metadata credentials) is not supported by \
             this build: use awsSecurityCredentials",
        ));
    }
    let expected_url = config
        .external_token_endpoint
        .as_deref()
        .unwrap_or_default();
    if source.url != expected_url {
        return Err(invalid(format!(
            "credential_source.url {:?} does not match with the configured {expected_url} \
             externalTokenEndpoint",
            source.url
        )));
    }
    let format = match &source.format {
        Some(format) if format.kind == "json" => {
            if format.subject_token_field_name.is_empty() {
                return Err(invalid(
                    "credential_source.format.subject_token_field_name is required for json"
                        .to_owned(),
                ));
            }
            TextFormat::Json(format.subject_token_field_name.clone())
        }
        Some(format) if !format.kind.is_empty() && format.kind != "text" => {
            return Err(invalid(format!(
                "credential_source.format.type {:?} must be text or json",
                format.kind
            )));
        }
        _ => TextFormat::Text,
    };
    if !source.file.is_empty() {
        return Ok(Subject::File {
            path: source.file.clone().into(),
            format,
        });
    }
    if !source.url.is_empty() {
        let url = super::config::parse_url(&source.url, "credential_source.url")?;
        return Ok(Subject::Url {
            url,
            headers: source.headers.clone(),
            format,
        });
    }
    Err(invalid(
        "one of credential_source.file, credential_source.url, credential_source.aws.url or \
         credential_source_environment_id should be provided"
            .to_owned(),
    ))
}

/// The service account of an IAM Credentials impersonation URL.
fn impersonated_account(url: &str) -> Option<String> {
    let account = url
        .strip_prefix(IMPERSONATION_PREFIX)?
        .strip_suffix(IMPERSONATION_SUFFIX)?;
    (!account.is_empty() && !account.contains(['/', '?', '#', ' '])).then(|| account.to_owned())
}
