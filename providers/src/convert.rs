//! Conversions from the API types (`external-secrets-crds`) to the provider request types.
//!
//! Empty strings, which upstream's Go types use for "unset", become `None`.

use external_secrets_crds::v1::{
    ExternalSecretConversionStrategy, ExternalSecretDataRemoteRef, ExternalSecretDecodingStrategy,
    ExternalSecretFind, ExternalSecretMetadataPolicy,
};
use external_secrets_crds::v1alpha1::{PushSecretData, PushSecretRemoteRef};
use k8s_openapi::api::core::v1::Secret;

use crate::request::{
    ConversionStrategy, DecodingStrategy, Find, FindName, MetadataPolicy, PushRemoteRef,
    PushRequest, RemoteRef, SourceMetadata,
};
use crate::value::{SecretMap, SecretValue};

fn non_empty(text: Option<&String>) -> Option<String> {
    text.filter(|text| !text.is_empty()).cloned()
}

impl From<Option<ExternalSecretConversionStrategy>> for ConversionStrategy {
    fn from(strategy: Option<ExternalSecretConversionStrategy>) -> Self {
        match strategy {
            None | Some(ExternalSecretConversionStrategy::Default) => ConversionStrategy::Default,
            Some(ExternalSecretConversionStrategy::Unicode) => ConversionStrategy::Unicode,
        }
    }
}

impl From<Option<ExternalSecretDecodingStrategy>> for DecodingStrategy {
    fn from(strategy: Option<ExternalSecretDecodingStrategy>) -> Self {
        match strategy {
            None | Some(ExternalSecretDecodingStrategy::None) => DecodingStrategy::None,
            Some(ExternalSecretDecodingStrategy::Auto) => DecodingStrategy::Auto,
            Some(ExternalSecretDecodingStrategy::Base64) => DecodingStrategy::Base64,
            Some(ExternalSecretDecodingStrategy::Base64Url) => DecodingStrategy::Base64Url,
        }
    }
}

impl From<Option<ExternalSecretMetadataPolicy>> for MetadataPolicy {
    fn from(policy: Option<ExternalSecretMetadataPolicy>) -> Self {
        match policy {
            None | Some(ExternalSecretMetadataPolicy::None) => MetadataPolicy::None,
            Some(ExternalSecretMetadataPolicy::Fetch) => MetadataPolicy::Fetch,
        }
    }
}

impl From<&ExternalSecretDataRemoteRef> for RemoteRef {
    fn from(remote_ref: &ExternalSecretDataRemoteRef) -> Self {
        Self {
            key: remote_ref.key.clone(),
            property: non_empty(remote_ref.property.as_ref()),
            version: non_empty(remote_ref.version.as_ref()),
            metadata_policy: remote_ref.metadata_policy.into(),
            decoding_strategy: remote_ref.decoding_strategy.into(),
            conversion_strategy: remote_ref.conversion_strategy.into(),
        }
    }
}

impl From<&ExternalSecretFind> for Find {
    fn from(find: &ExternalSecretFind) -> Self {
        Self {
            path: non_empty(find.path.as_ref()),
            name: find.name.as_ref().map(|name| FindName {
                regexp: name.regexp.clone().unwrap_or_default(),
            }),
            tags: find.tags.clone(),
            conversion_strategy: find.conversion_strategy.into(),
            decoding_strategy: find.decoding_strategy.into(),
        }
    }
}

impl From<&PushSecretRemoteRef> for PushRemoteRef {
    fn from(remote_ref: &PushSecretRemoteRef) -> Self {
        Self {
            remote_key: remote_ref.remote_key.clone(),
            property: non_empty(remote_ref.property.as_ref()),
        }
    }
}

impl PushRequest {
    /// The request for one `PushSecret.spec.data` entry, with the source Secret's data.
    pub fn from_push_data(data: &PushSecretData, secret_data: SecretMap) -> Self {
        Self {
            secret_data,
            source_metadata: SourceMetadata::default(),
            secret_key: non_empty(data.r#match.secret_key.as_ref()),
            remote_ref: PushRemoteRef::from(&data.r#match.remote_ref),
            metadata: data.metadata.clone(),
        }
    }
}

/// The labels, annotations and type of a source Secret, for
/// [`PushRequest::with_source_metadata`].
pub fn source_metadata(secret: &Secret) -> SourceMetadata {
    SourceMetadata {
        labels: secret.metadata.labels.clone().unwrap_or_default(),
        annotations: secret.metadata.annotations.clone().unwrap_or_default(),
        secret_type: non_empty(secret.type_.as_ref()),
    }
}

/// The data of a Kubernetes Secret as secret values.
pub fn secret_data(secret: &Secret) -> SecretMap {
    secret
        .data
        .iter()
        .flatten()
        .map(|(key, value)| (key.clone(), SecretValue::new(value.0.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::FindName as ApiFindName;

    #[test]
    fn remote_refs_drop_empty_strings_and_default_strategies() {
        let api: ExternalSecretDataRemoteRef = serde_json::from_str(
            r#"{"key":"db","property":"","version":"v2","decodingStrategy":"Base64URL",
                "conversionStrategy":"Unicode","metadataPolicy":"Fetch"}"#,
        )
        .unwrap();
        let remote_ref = RemoteRef::from(&api);
        assert_eq!(remote_ref.key, "db");
        assert_eq!(remote_ref.property, None);
        assert_eq!(remote_ref.version.as_deref(), Some("v2"));
        assert_eq!(remote_ref.decoding_strategy, DecodingStrategy::Base64Url);
        assert_eq!(remote_ref.conversion_strategy, ConversionStrategy::Unicode);
        assert_eq!(remote_ref.metadata_policy, MetadataPolicy::Fetch);
        let plain: ExternalSecretDataRemoteRef = serde_json::from_str(r#"{"key":"k"}"#).unwrap();
        assert_eq!(RemoteRef::from(&plain), RemoteRef::new("k"));
    }

    #[test]
    fn finds_keep_name_and_tags() {
        let api = ExternalSecretFind {
            name: Some(ApiFindName {
                regexp: Some("^db-".into()),
            }),
            tags: [("env".to_owned(), "prod".to_owned())].into(),
            ..ExternalSecretFind::default()
        };
        let find = Find::from(&api);
        assert_eq!(find.name.unwrap().regexp, "^db-");
        assert_eq!(find.tags.get("env").map(String::as_str), Some("prod"));
        assert_eq!(find.path, None);
    }

    #[test]
    fn push_data_becomes_a_push_request() {
        let api: PushSecretData = serde_json::from_str(
            r#"{"match":{"secretKey":"password","remoteRef":{"remoteKey":"db","property":"pw"}},
                "metadata":{"labels":{"a":"b"}}}"#,
        )
        .unwrap();
        let secret = Secret {
            data: Some(
                [(
                    "password".to_owned(),
                    k8s_openapi::ByteString(b"s3cret".to_vec()),
                )]
                .into(),
            ),
            ..Secret::default()
        };
        let request = PushRequest::from_push_data(&api, secret_data(&secret));
        assert_eq!(request.value().unwrap().expose(), b"s3cret");
        assert_eq!(request.remote_ref.remote_key, "db");
        assert_eq!(request.remote_ref.property.as_deref(), Some("pw"));
        assert!(request.metadata.is_some());
    }
}
