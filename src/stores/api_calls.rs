//! The `provider` and `call` labels of `externalsecret_provider_api_calls_count`, as upstream's
//! providers report them (upstream `pkg/constants/constants.go`: `AWS/SecretsManager` +
//! `GetSecretValue`, `HashiCorp/Vault` + `ReadSecretData`, ...). Upstream counts inside each
//! provider, per wire request; here each provider operation is counted once under the wire
//! call that carries it (a read of AWS Secrets Manager is its `GetSecretValue`, a push its
//! `PutSecretValue`). Backends upstream does not instrument (fake, 1Password, CRD, OpenBao)
//! keep their `spec.provider` name and the operation's name, so their calls stay visible.

use external_secrets_crds::v1::{AwsServiceType, SecretStoreProvider};

/// A provider operation the controllers count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation<'a> {
    /// Reading one remote key (`data[]`).
    GetSecret(&'a str),
    /// Reading one remote key as a map (`dataFrom[].extract`).
    GetSecretMap(&'a str),
    /// Listing and reading (`dataFrom[].find`).
    GetAllSecrets,
    /// Writing one remote key (PushSecret).
    PushSecret(&'a str),
    /// Deleting one remote key (PushSecret `deletionPolicy: Delete`).
    DeleteSecret(&'a str),
}

impl Operation<'_> {
    /// The operation's own name, for backends upstream does not instrument.
    fn name(self) -> &'static str {
        match self {
            Self::GetSecret(_) => "GetSecret",
            Self::GetSecretMap(_) => "GetSecretMap",
            Self::GetAllSecrets => "GetAllSecrets",
            Self::PushSecret(_) => "PushSecret",
            Self::DeleteSecret(_) => "DeleteSecret",
        }
    }
}

/// A provider upstream instruments and its wire calls for reading, listing, writing and
/// deleting one secret.
struct Calls {
    provider: &'static str,
    read: &'static str,
    list: &'static str,
    write: &'static str,
    delete: &'static str,
}

impl Calls {
    fn of(&self, operation: Operation<'_>) -> (&'static str, &'static str) {
        use Operation::{DeleteSecret, GetAllSecrets, GetSecret, GetSecretMap, PushSecret};
        let call = match operation {
            GetSecret(_) | GetSecretMap(_) => self.read,
            GetAllSecrets => self.list,
            PushSecret(_) => self.write,
            DeleteSecret(_) => self.delete,
        };
        (self.provider, call)
    }
}

const AWS_SECRETS_MANAGER: Calls = Calls {
    provider: "AWS/SecretsManager",
    read: "GetSecretValue",
    list: "ListSecrets",
    write: "PutSecretValue",
    delete: "DeleteSecret",
};
const AWS_PARAMETER_STORE: Calls = Calls {
    provider: "AWS/ParameterStore",
    read: "GetParameter",
    list: "DescribeParameter",
    write: "PutParameter",
    delete: "DeleteParameter",
};
const GCP_SECRET_MANAGER: Calls = Calls {
    provider: "GCP/SecretManager",
    read: "AccessSecretVersion",
    list: "ListSecrets",
    write: "AddSecretVersion",
    delete: "DeleteSecret",
};
const VAULT: Calls = Calls {
    provider: "HashiCorp/Vault",
    read: "ReadSecretData",
    list: "ListSecrets",
    write: "WriteSecretData",
    delete: "DeleteSecret",
};
const KUBERNETES: Calls = Calls {
    provider: "Kubernetes",
    read: "GetSecret",
    list: "ListSecrets",
    write: "UpdateSecret",
    delete: "DeleteSecret",
};

/// Upstream's `provider` and `call` labels for `operation` on a store of `provider`;
/// `fallback` is the backend's `spec.provider` name, used where upstream has no labels.
pub fn api_call(
    provider: &SecretStoreProvider,
    fallback: &'static str,
    operation: Operation<'_>,
) -> (&'static str, &'static str) {
    let calls = match &provider.aws {
        Some(aws) => match aws.service {
            AwsServiceType::SecretsManager => Some(&AWS_SECRETS_MANAGER),
            AwsServiceType::ParameterStore => Some(&AWS_PARAMETER_STORE),
            AwsServiceType::CertificateManager => None,
        },
        None if provider.gcpsm.is_some() => Some(&GCP_SECRET_MANAGER),
        None if provider.vault.is_some() => Some(&VAULT),
        None if provider.kubernetes.is_some() => Some(&KUBERNETES),
        None => None,
    };
    if let Some(calls) = calls {
        return calls.of(operation);
    }
    if provider.azurekv.is_some() {
        return ("Azure/KeyVault", azure_call(operation));
    }
    if provider.webhook.is_some() {
        return ("Webhook", "HTTPRequest");
    }
    (fallback, operation.name())
}

/// Azure Key Vault's call by the object type the key names (`key/`, `cert/`, else a secret).
fn azure_call(operation: Operation<'_>) -> &'static str {
    use Operation::{DeleteSecret, GetAllSecrets, GetSecret, GetSecretMap, PushSecret};
    let kind = |key: &str| {
        if key.starts_with("key/") {
            0
        } else if key.starts_with("cert/") {
            1
        } else {
            2
        }
    };
    match operation {
        GetAllSecrets => "GetSecret",
        GetSecret(key) | GetSecretMap(key) => ["GetKey", "GetCertificate", "GetSecret"][kind(key)],
        PushSecret(key) => ["ImportKey", "ImportCertificate", "SetSecret"][kind(key)],
        DeleteSecret(key) => ["DeleteKey", "DeleteCertificate", "DeleteSecret"][kind(key)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(
        provider: serde_json::Value,
        operation: Operation<'_>,
    ) -> (&'static str, &'static str) {
        let provider: SecretStoreProvider = serde_json::from_value(provider).unwrap();
        api_call(&provider, "own", operation)
    }

    /// Expected values: upstream `pkg/constants/constants.go` (ProviderAWSSM,
    /// CallAWSSMGetSecretValue, ProviderHCVault, CallHCVaultReadSecretData, ...).
    #[test]
    fn upstream_provider_and_call_labels() {
        let sm = json!({"aws": {"service": "SecretsManager", "region": "eu-west-1"}});
        assert_eq!(
            labels(sm.clone(), Operation::GetSecret("db")),
            ("AWS/SecretsManager", "GetSecretValue")
        );
        assert_eq!(
            labels(sm, Operation::GetAllSecrets),
            ("AWS/SecretsManager", "ListSecrets")
        );
        let ps = json!({"aws": {"service": "ParameterStore", "region": "eu-west-1"}});
        assert_eq!(
            labels(ps.clone(), Operation::GetSecret("/db")),
            ("AWS/ParameterStore", "GetParameter")
        );
        assert_eq!(
            labels(ps, Operation::DeleteSecret("/db")),
            ("AWS/ParameterStore", "DeleteParameter")
        );
        let vault = json!({"vault": {"server": "https://vault", "auth": {}}});
        assert_eq!(
            labels(vault.clone(), Operation::GetSecret("db")),
            ("HashiCorp/Vault", "ReadSecretData")
        );
        assert_eq!(
            labels(vault, Operation::PushSecret("db")),
            ("HashiCorp/Vault", "WriteSecretData")
        );
        let gcp = json!({"gcpsm": {"projectID": "p"}});
        assert_eq!(
            labels(gcp, Operation::GetSecret("db")),
            ("GCP/SecretManager", "AccessSecretVersion")
        );
        let azure = json!({"azurekv": {"vaultUrl": "https://v.vault.azure.net"}});
        assert_eq!(
            labels(azure.clone(), Operation::GetSecret("cert/tls")),
            ("Azure/KeyVault", "GetCertificate")
        );
        assert_eq!(
            labels(azure.clone(), Operation::GetSecret("key/signing")),
            ("Azure/KeyVault", "GetKey")
        );
        assert_eq!(
            labels(azure, Operation::GetSecret("db")),
            ("Azure/KeyVault", "GetSecret")
        );
        let kubernetes = json!({"kubernetes": {"auth": {}, "server": {}}});
        assert_eq!(
            labels(kubernetes, Operation::GetAllSecrets),
            ("Kubernetes", "ListSecrets")
        );
        let webhook = json!({"webhook": {"url": "https://hook"}});
        assert_eq!(
            labels(webhook, Operation::PushSecret("db")),
            ("Webhook", "HTTPRequest")
        );
        // Upstream's fake provider reports no calls; ours keep their own names.
        let fake = json!({"fake": {"data": []}});
        assert_eq!(
            labels(fake, Operation::GetSecret("db")),
            ("own", "GetSecret")
        );
    }
}
