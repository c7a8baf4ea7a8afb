//! Reading one Secrets Manager secret: its value (of a version) and its description.
//!
//! A secret scheduled for deletion still exists in AWS, but reading it fails with
//! `InvalidRequestException`; such a secret reads as absent, told apart from other invalid
//! requests by its `DeletedDate`.

use std::collections::BTreeMap;

use aws_sdk_secretsmanager::error::ProvideErrorMetadata;
use aws_sdk_secretsmanager::operation::describe_secret::DescribeSecretOutput;
use aws_sdk_secretsmanager::primitives::Blob;

use super::SecretsManager;
use crate::backends::aws::error::map_sdk_error;
use crate::error::Result;
use crate::value::SecretValue;

/// Upstream's default version stage.
const CURRENT_STAGE: &str = "AWSCURRENT";

/// Which version of a secret to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Version {
    /// A version stage (`AWSCURRENT`, `AWSPREVIOUS`, a custom label).
    Stage(String),
    /// A version id (`uuid/<id>` in the remote ref).
    Id(String),
}

impl Version {
    /// The version a remote ref's `version` names (none: the current one).
    pub(super) fn parse(version: Option<&str>) -> Self {
        match version.filter(|version| !version.is_empty()) {
            None => Version::Stage(CURRENT_STAGE.to_owned()),
            Some(version) => match version.strip_prefix("uuid/") {
                Some(id) => Version::Id(id.to_owned()),
                None => Version::Stage(version.to_owned()),
            },
        }
    }
}

impl SecretsManager {
    /// The value of `version` of secret `name` (the string, or the bytes of a binary secret);
    /// `None` when the secret or version does not exist, or the secret is being deleted.
    pub(super) async fn value(&self, name: &str, version: &Version) -> Result<Option<SecretValue>> {
        let (stage, id) = match version {
            Version::Stage(stage) => (Some(stage.clone()), None),
            Version::Id(id) => (None, Some(id.clone())),
        };
        let answer = self
            .client
            .get_secret_value()
            .secret_id(name)
            .set_version_stage(stage)
            .set_version_id(id)
            .send()
            .await;
        match answer {
            Ok(output) => Ok(Some(
                payload(output.secret_string(), output.secret_binary()).unwrap_or_default(),
            )),
            Err(error) => match error.code() {
                Some("ResourceNotFoundException") => Ok(None),
                Some("InvalidRequestException" | "InvalidParameterException")
                    if self.is_deleted(name).await? =>
                {
                    Ok(None)
                }
                _ => Err(map_sdk_error(error, format!("cannot get secret {name:?}"))),
            },
        }
    }

    /// The description (tags, versions, deletion date) of secret `name`, `None` if it does not
    /// exist.
    pub(super) async fn describe(&self, name: &str) -> Result<Option<DescribeSecretOutput>> {
        match self.client.describe_secret().secret_id(name).send().await {
            Ok(description) => Ok(Some(description)),
            Err(error) if error.code() == Some("ResourceNotFoundException") => Ok(None),
            Err(error) => Err(map_sdk_error(
                error,
                format!("cannot describe secret {name:?}"),
            )),
        }
    }

    /// Whether secret `name` is gone or scheduled for deletion.
    async fn is_deleted(&self, name: &str) -> Result<bool> {
        Ok(self
            .describe(name)
            .await?
            .is_none_or(|description| description.deleted_date().is_some()))
    }
}

/// A secret's value: its string, or the bytes of a binary secret.
pub(super) fn payload(text: Option<&str>, binary: Option<&Blob>) -> Option<SecretValue> {
    match (text, binary) {
        (Some(text), _) => Some(SecretValue::from(text)),
        (None, Some(binary)) => Some(SecretValue::from(binary.as_ref())),
        (None, None) => None,
    }
}

/// The tags of a described secret.
pub(super) fn tags(description: &DescribeSecretOutput) -> BTreeMap<String, String> {
    description
        .tags()
        .iter()
        .map(|tag| {
            (
                tag.key().unwrap_or_default().to_owned(),
                tag.value().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_stages_unless_prefixed_with_uuid() {
        assert_eq!(Version::parse(None), Version::Stage("AWSCURRENT".into()));
        assert_eq!(
            Version::parse(Some("")),
            Version::Stage("AWSCURRENT".into())
        );
        assert_eq!(
            Version::parse(Some("AWSPREVIOUS")),
            Version::Stage("AWSPREVIOUS".into())
        );
        assert_eq!(
            Version::parse(Some("uuid/0a1b")),
            Version::Id("0a1b".into())
        );
    }
}
