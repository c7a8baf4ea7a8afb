//! The OpenBao provider: `spec.provider.openBao` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use crate::v1::secret_store::vault::VaultKvStoreVersion;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// OpenBaoProvider configures a store to sync secrets using an OpenBao KV backend.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "at most one of the fields in [caBundle caProvider] may be set", "rule": "[has(self.caBundle),has(self.caProvider)].filter(x,x==true).size() <= 1"}]))]
pub struct OpenBaoProvider {
    /// Auth configures how secret-manager authenticates with the OpenBao server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<OpenBaoAuth>,
    /// PEM encoded CA bundle used to validate the OpenBao server certificate. If
    /// this and `caProvider` are not set the system root certificates are used
    /// to validate the TLS connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// The provider for the CA bundle to use to validate OpenBao server
    /// certificate. If this and `caBundle` are not set the system root
    /// certificates are used to validate the TLS connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
    /// Name of the [OpenBao Namespace]. Namespaces is a set of features within
    /// OpenBao that allows OpenBao environments to support secure multi-tenancy.
    /// e.g: "ns1".
    ///
    /// [OpenBao Namespace]: https://openbao.org/docs/concepts/namespaces/
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Server is the connection address for the OpenBao server, e.g: `https://openbao.example.com:8200`.
    pub server: String,
    /// Path is the mount path of the OpenBao KV backend endpoint, e.g:
    /// "secret". The v2 KV secret engine version specific "/data" path suffix
    /// for fetching secrets from OpenBao is optional and will be appended
    /// if not present in specified path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Version is the OpenBao KV secret engine version. This can be either "v1" or
    /// "v2". Version defaults to "v2".
    #[serde(default)]
    pub version: VaultKvStoreVersion,
}

/// OpenBaoAuth is the configuration used to authenticate with an OpenBao server.
/// Currently the following authentication methods are supported: [AppRole],
/// [Token] and [UserPass]
///
/// Additional authentication methods are planned for future releases.
///
///
/// [AppRole]: https://openbao.org/docs/auth/approle/
/// [Token]: https://openbao.org/docs/auth/token/
/// [UserPass]: https://openbao.org/docs/auth/userpass/
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "exactly one of the fields in [appRole tokenSecretRef userPass] must be set", "rule": "[has(self.appRole),has(self.tokenSecretRef),has(self.userPass)].filter(x,x==true).size() == 1"}]))]
pub struct OpenBaoAuth {
    /// AppRole authenticates with OpenBao using the [App Role auth mechanism],
    /// with the role and secret stored in a Kubernetes Secret resource.
    ///
    /// [App Role auth mechanism]: https://openbao.org/docs/auth/approle/
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_role: Option<OpenBaoAppRole>,
    /// Name of the [OpenBao Namespace] to authenticate to. This can be different
    /// than the namespace your secret is in. Namespaces is a set of features
    /// within OpenBao that allows OpenBao environments to support secure
    /// multi-tenancy. e.g: "ns1". This will default to OpenBao.Namespace field
    /// if set, or empty otherwise
    ///
    /// [OpenBao Namespace]: https://openbao.org/docs/concepts/namespaces/
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// TokenSecretRef authenticates with OpenBao by presenting a token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<SecretKeySelector>,
    /// UserPass authenticates with OpenBao by passing a username/password pair
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_pass: Option<OpenBaoUserPassAuth>,
}

/// OpenBaoAppRole authenticates with OpenBao using the [App Role auth
/// mechanism], with the role and secret stored in a Kubernetes Secret resource.
/// The role ID has to be specified either inline via `roleId` or by referencing
/// a secret via `roleRef`.
///
///
/// [App Role auth mechanism]: https://openbao.org/docs/auth/approle/
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("x-kubernetes-validations" = [{"message": "exactly one of the fields in [roleId roleRef] must be set", "rule": "[has(self.roleId),has(self.roleRef)].filter(x,x==true).size() == 1"}]), extend("required" = ["path", "secretRef"]))]
pub struct OpenBaoAppRole {
    /// Path where the App Role authentication backend is mounted
    /// in OpenBao, e.g: "approle"
    #[serde(default = "default_path")]
    pub path: String,
    /// RoleID configured in the App Role authentication backend when setting
    /// up the authentication backend in OpenBao.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub role_id: Option<String>,
    /// Reference to a key in a Secret that contains the App Role ID used
    /// to authenticate with OpenBao.
    /// The `key` field must be specified and denotes which entry within the Secret
    /// resource is used as the app role id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_ref: Option<SecretKeySelector>,
    /// Reference to a key in a Secret that contains the App Role secret used
    /// to authenticate with OpenBao.
    /// The `key` field must be specified and denotes which entry within the Secret
    /// resource is used as the app role secret.
    pub secret_ref: SecretKeySelector,
}

impl Default for OpenBaoAppRole {
    fn default() -> Self {
        Self {
            path: default_path(),
            role_id: Default::default(),
            role_ref: Default::default(),
            secret_ref: Default::default(),
        }
    }
}

/// OpenBaoUserPassAuth authenticates with OpenBao using [UserPass authentication
/// method], with the username and password stored in a Kubernetes Secret
/// resource.
///
/// [UserPass authentication method]: https://openbao.org/docs/auth/userpass/
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("required" = ["path", "username"]))]
pub struct OpenBaoUserPassAuth {
    /// Path where the UserPassword authentication backend is mounted
    /// in OpenBao, e.g: "userpass"
    #[serde(default = "default_path_open_bao_user_pass_auth")]
    pub path: String,
    /// Username is a username used to authenticate using the [UserPass
    /// authentication method]
    ///
    /// [UserPass authentication method]: https://openbao.org/docs/auth/userpass/
    pub username: String,
    /// SecretRef to a key in a Secret resource containing password for the user
    /// used to authenticate with OpenBao using the [UserPass authentication
    /// method]
    ///
    /// [UserPass authentication method]: https://openbao.org/docs/auth/userpass/
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

impl Default for OpenBaoUserPassAuth {
    fn default() -> Self {
        Self {
            path: default_path_open_bao_user_pass_auth(),
            secret_ref: Default::default(),
            username: Default::default(),
        }
    }
}

fn default_path() -> String {
    "approle".to_owned()
}

fn default_path_open_bao_user_pass_auth() -> String {
    "userpass".to_owned()
}
