//! Which credentials a store's clients sign with (upstream's `auth.New`), in upstream's order:
//!
//! 1. `auth.jwt`: tokens of the referenced ServiceAccount exchanged through
//!    `AssumeRoleWithWebIdentity` for the role its `eks.amazonaws.com/role-arn` annotation names
//!    (IRSA), with audience `eks.amazonaws.com/audience` (default `sts.amazonaws.com`) plus the
//!    reference's `audiences`;
//! 2. `auth.secretRef`: static keys (and a session token) read from Secrets, under the referent
//!    rules (a ClusterSecretStore reference without a namespace reads the caller's namespace);
//! 3. otherwise the SDK's default chain (the operator's own environment), unless
//!    `--deny-operator-identity` refuses it to SecretStores.
//!
//! Then each of `additionalRoles` is assumed in turn, and `role` last, with `externalID`, the
//! session tags (`sessionTags`, or those `sessionTagsPolicy` builds) and `transitiveTagKeys`.

use std::collections::BTreeMap;

use aws_config::SdkConfig;
use aws_credential_types::Credentials;
use aws_sdk_sts::config::SharedCredentialsProvider;
use external_secrets_crds::generators::AwsAuth as GeneratorAuth;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{
    AwsAuth, AwsAuthSecretRef, AwsJwtAuth, AwsProvider, AwsServiceType, SessionTagsPolicy,
};

use super::endpoints::Endpoints;
use super::sdk::sdk_config;
use super::sts::{AssumeRole, RoleRequest, WebIdentity, WebIdentityRequest};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::store::StoreKind;

/// The SDK configuration of a store: region and the credentials of the last assumed role (or
/// of the base credentials when no role is assumed).
pub(super) async fn configure(
    spec: &AwsProvider,
    credentials: &CredentialResolver,
    endpoints: &Endpoints,
) -> Result<SdkConfig> {
    let auth = spec.auth.as_ref();
    let base = match (
        auth.and_then(|auth| auth.jwt.as_ref()),
        auth.and_then(|auth| auth.secret_ref.as_ref()),
    ) {
        (Some(jwt), _) => {
            let request = web_identity_request(jwt, credentials).await?;
            let unsigned = sdk_config(&spec.region, None).await;
            let sts = endpoints.sts.as_deref();
            let identity = WebIdentity::new(&unsigned, sts, credentials.clone(), request);
            Some(SharedCredentialsProvider::new(identity))
        }
        (None, Some(secret_ref)) => Some(static_keys(secret_ref, credentials).await?),
        (None, None) => {
            credentials.use_operator_identity("aws default credentials")?;
            None
        }
    };
    let mut sdk = sdk_config(&spec.region, base).await;
    let sts = endpoints.sts.as_deref();
    for role_arn in &spec.additional_roles {
        let request = RoleRequest {
            role_arn: role_arn.clone(),
            ..RoleRequest::default()
        };
        sdk = assume(sdk, sts, request);
    }
    if let Some(role_arn) = spec.role.as_deref().filter(|role| !role.is_empty()) {
        let request = RoleRequest {
            role_arn: role_arn.to_owned(),
            external_id: spec.external_id.clone().filter(|id| !id.is_empty()),
            tags: session_tags(spec, credentials),
            transitive_tag_keys: spec.transitive_tag_keys.clone(),
        };
        sdk = assume(sdk, sts, request);
    }
    Ok(sdk)
}

/// The SDK configuration of a generator (`STSSessionToken`, `ECRAuthorizationToken`): the
/// same credentials a store with `region`, `auth` and `role` would have (upstream's
/// `NewGeneratorSession`).
pub(super) async fn generator_config(
    region: &str,
    auth: Option<&GeneratorAuth>,
    role: Option<&str>,
    credentials: &CredentialResolver,
    endpoints: &Endpoints,
) -> Result<SdkConfig> {
    let spec = AwsProvider {
        service: AwsServiceType::SecretsManager,
        auth: auth.map(|auth| AwsAuth {
            secret_ref: auth.secret_ref.clone(),
            jwt: auth.jwt.clone(),
        }),
        role: role.map(str::to_owned),
        region: region.to_owned(),
        additional_roles: Vec::new(),
        external_id: None,
        session_tags: Vec::new(),
        secrets_manager: None,
        transitive_tag_keys: Vec::new(),
        session_tags_policy: SessionTagsPolicy::None,
        custom_session_tags: BTreeMap::new(),
        prefix: None,
    };
    configure(&spec, credentials, endpoints).await
}

/// `sdk` signing with the credentials of `request`'s role, assumed with `sdk`'s credentials.
fn assume(sdk: SdkConfig, sts_endpoint: Option<&str>, request: RoleRequest) -> SdkConfig {
    let role = AssumeRole::new(&sdk, sts_endpoint, request);
    sdk.into_builder()
        .credentials_provider(SharedCredentialsProvider::new(role))
        .build()
}

/// The ServiceAccount annotation naming the role a web identity is exchanged for.
const ROLE_ARN_ANNOTATION: &str = "eks.amazonaws.com/role-arn";
/// The ServiceAccount annotation naming the token's audience.
const AUDIENCE_ANNOTATION: &str = "eks.amazonaws.com/audience";
/// The token's audience when the ServiceAccount names none.
const DEFAULT_AUDIENCE: &str = "sts.amazonaws.com";

/// The role, ServiceAccount and audiences of `jwt`, read from the ServiceAccount's annotations
/// now, so a missing ServiceAccount or role fails the client at once.
async fn web_identity_request(
    jwt: &AwsJwtAuth,
    credentials: &CredentialResolver,
) -> Result<WebIdentityRequest> {
    let account = jwt.service_account_ref.as_ref().ok_or_else(|| {
        ProviderError::invalid_config("invalid Auth.JWT.ServiceAccountRef: it must be set")
    })?;
    // A namespaced store's own namespace always applies (upstream ignores the field there).
    let namespace = match credentials.store().kind {
        StoreKind::ClusterSecretStore => account.namespace.clone(),
        StoreKind::SecretStore => None,
    };
    let annotations = credentials
        .service_account_annotations(&account.name, namespace.as_deref(), Referent::Allowed)
        .await?;
    let role_arn = annotations
        .get(ROLE_ARN_ANNOTATION)
        .filter(|role| !role.is_empty())
        .ok_or_else(|| {
            let resolved = credentials
                .namespace_for(namespace.as_deref(), Referent::Allowed)
                .unwrap_or_default();
            ProviderError::invalid_config(format!(
                "an IAM role must be associated with service account {} (namespace: {resolved})",
                account.name
            ))
        })?;
    let audience = annotations
        .get(AUDIENCE_ANNOTATION)
        .filter(|audience| !audience.is_empty())
        .map_or(DEFAULT_AUDIENCE, String::as_str);
    let audiences = std::iter::once(audience.to_owned())
        .chain(account.audiences.iter().cloned())
        .collect();
    Ok(WebIdentityRequest {
        role_arn: role_arn.clone(),
        service_account: account.name.clone(),
        namespace,
        audiences,
    })
}

/// The access key id, secret access key and optional session token of `secret_ref`.
async fn static_keys(
    secret_ref: &AwsAuthSecretRef,
    credentials: &CredentialResolver,
) -> Result<SharedCredentialsProvider> {
    let secret_access_key = key_text(
        credentials,
        secret_ref.secret_access_key_secret_ref.as_ref(),
        "SecretAccessKey",
    )
    .await?;
    let access_key_id = key_text(
        credentials,
        secret_ref.access_key_id_secret_ref.as_ref(),
        "accessKeyID",
    )
    .await?;
    let session_token = match &secret_ref.session_token_secret_ref {
        Some(selector) => Some(key_text(credentials, Some(selector), "SessionToken").await?),
        None => None,
    };
    let keys = Credentials::new(
        access_key_id,
        secret_access_key,
        session_token,
        None,
        "SecretRef",
    );
    Ok(SharedCredentialsProvider::new(keys))
}

/// The text `selector` names (`what`, for messages: upstream's names of the three keys).
async fn key_text(
    credentials: &CredentialResolver,
    selector: Option<&SecretKeySelector>,
    what: &str,
) -> Result<String> {
    let selector = selector.ok_or_else(|| {
        ProviderError::invalid_config(format!("could not fetch {what} secret: it must be set"))
    })?;
    let value = credentials
        .selected(selector, Referent::Allowed)
        .await
        .map_err(|error| error.context(format!("could not fetch {what} secret")))?;
    String::from_utf8(value.into_bytes()).map_err(|_| {
        ProviderError::invalid_config(format!(
            "could not fetch {what} secret: the value is not UTF-8 text"
        ))
    })
}

/// The session tags of the store's `role` (upstream's `buildSessionTags` for the `Simple` and
/// `Custom` policies): the store's identity and the caller's namespace, plus the custom tags.
fn session_tags(spec: &AwsProvider, credentials: &CredentialResolver) -> Vec<(String, String)> {
    let custom = match spec.session_tags_policy {
        SessionTagsPolicy::None => {
            return spec
                .session_tags
                .iter()
                .map(|tag| (tag.key.clone(), tag.value.clone()))
                .collect();
        }
        SessionTagsPolicy::Simple => BTreeMap::new(),
        SessionTagsPolicy::Custom => spec.custom_session_tags.clone(),
    };
    let store = credentials.store();
    let mut tags: BTreeMap<String, String> = custom
        .into_iter()
        .filter(|(key, value)| !key.is_empty() && !value.is_empty())
        .collect();
    let namespace = credentials.caller_namespace().unwrap_or_default();
    tags.insert("esoNamespace".to_owned(), namespace.to_owned());
    tags.insert("esoStoreName".to_owned(), store.name.clone());
    tags.insert("esoStoreKind".to_owned(), store.kind.as_str().to_owned());
    tags.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::credentials::{MemorySecretSource, OperatorIdentity};
    use crate::store::StoreId;

    fn resolver() -> CredentialResolver {
        let source = Arc::new(MemorySecretSource::default());
        let store = StoreId::cluster_secret_store("shared-aws");
        CredentialResolver::new(source, store, Some("team".into()))
    }

    fn spec(json: serde_json::Value) -> AwsProvider {
        serde_json::from_value(json).unwrap()
    }

    fn pairs(tags: &[(&str, &str)]) -> Vec<(String, String)> {
        tags.iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[tokio::test]
    async fn secret_stores_may_be_denied_the_default_chain() {
        let no_auth = spec(serde_json::json!({"service": "SecretsManager", "region": "eu-west-1"}));
        let denied = |store: StoreId| {
            CredentialResolver::new(
                Arc::new(MemorySecretSource::default()),
                store,
                Some("team".into()),
            )
            .with_operator_identity(OperatorIdentity::DeniedToSecretStores)
        };
        let endpoints = Endpoints::default();
        let error = configure(
            &no_auth,
            &denied(StoreId::secret_store("team", "aws")),
            &endpoints,
        )
        .await
        .unwrap_err();
        assert_eq!(error.kind(), crate::error::ErrorKind::InvalidConfig);
        assert!(
            error
                .message()
                .starts_with("aws default credentials: a SecretStore may not"),
            "{error}"
        );
        let cluster = denied(StoreId::cluster_secret_store("shared-aws"));
        assert!(configure(&no_auth, &cluster, &endpoints).await.is_ok());
        let upstream = resolver();
        assert!(configure(&no_auth, &upstream, &endpoints).await.is_ok());
    }

    #[test]
    fn session_tags_come_from_the_policy() {
        let plain = spec(
            serde_json::json!({"service": "SecretsManager", "region": "eu-west-1",
            "sessionTags": [{"key": "team", "value": "a"}]}),
        );
        assert_eq!(session_tags(&plain, &resolver()), pairs(&[("team", "a")]));

        let simple = spec(
            serde_json::json!({"service": "SecretsManager", "region": "eu-west-1",
            "sessionTags": [{"key": "ignored", "value": "x"}], "sessionTagsPolicy": "Simple"}),
        );
        assert_eq!(
            session_tags(&simple, &resolver()),
            pairs(&[
                ("esoNamespace", "team"),
                ("esoStoreKind", "ClusterSecretStore"),
                ("esoStoreName", "shared-aws"),
            ])
        );

        let custom = spec(
            serde_json::json!({"service": "SecretsManager", "region": "eu-west-1",
            "sessionTagsPolicy": "Custom", "customSessionTags": {"cost": "42", "empty": ""}}),
        );
        assert_eq!(
            session_tags(&custom, &resolver()),
            pairs(&[
                ("cost", "42"),
                ("esoNamespace", "team"),
                ("esoStoreKind", "ClusterSecretStore"),
                ("esoStoreName", "shared-aws"),
            ])
        );
    }
}
