//! The `oracle` provider: secrets of an Oracle Cloud Infrastructure Vault, over OCI's REST APIs
//! with signed requests.
//!
//! Behaviour follows upstream's `providers/v1/oracle`:
//!
//! * A key is a secret's name in the store's `vault`; `version` is a stage (`CURRENT`,
//!   `PENDING`, `LATEST`, `PREVIOUS`, `DEPRECATED`); `property` a gjson path into the value;
//!   `dataFrom.extract` reads the value as a JSON object of strings.
//! * `dataFrom.find` lists the vault's secrets in `compartment` (across pages) and keeps those
//!   whose name matches `find.name`, or, without a name, that carry any one of `find.tags` as a
//!   free-form tag; secrets scheduled for deletion are skipped.
//! * PushSecret needs `encryptionKey` (`SecretStore must reference encryption key`): a missing
//!   secret is created in `vault` and `compartment` with that key, an existing one gets a new
//!   version unless it already holds the value. Delete schedules the secret's deletion (already
//!   scheduled or missing: nothing to do).
//! * Auth: `auth` (user principal) signs every request with the user's API key (a Secret's
//!   `privatekey`, its `fingerprint`, `user` and `tenancy` OCIDs) per OCI's HTTP signature
//!   scheme (see `signer`); `principalType: InstancePrincipal`, also used when `auth` is not
//!   set, signs with a session key federated for the compute instance's identity (see
//!   `instance`); `principalType: Workload` with one exchanged at the OKE proxymux for the
//!   pod's (or `serviceAccountRef`'s) service-account token (see `workload`). Both fall back to
//!   the operator's own identity (without `serviceAccountRef`), which
//!   `--deny-operator-identity` refuses to SecretStores.
//! * `validate` reads the vault from Key Management: refused credentials fail the store, OCI's
//!   `NotAuthorizedOrNotFound` leaves it Ready but unvalidated, as upstream.
//!
mod api;
mod client;
mod error;
mod instance;
mod session;
mod signer;
mod workload;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{OracleAuth, OraclePrincipalType, OracleProvider};

use self::api::{Api, Principal, http_client};
use self::client::OracleClient;
use self::instance::InstancePrincipal;
use self::signer::Signer;
use self::workload::WorkloadIdentity;
use crate::client::SharedClient;
use crate::credentials::{CredentialResolver, Referent, check_selector_namespace};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;
use crate::value::SecretValue;

/// The `oracle` backend.
#[derive(Debug, Clone, Copy)]
pub struct Oracle;

#[async_trait]
impl Provider for Oracle {
    type Spec = OracleProvider;
    const NAME: &'static str = "oracle";

    fn validate_store(&self, spec: &OracleProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &OracleProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        if spec.vault.is_empty() {
            return Err(ProviderError::invalid_config("missing Vault"));
        }
        if spec.region.is_empty() {
            return Err(ProviderError::invalid_config("missing Region"));
        }
        let http = http_client()?;
        let setup = |error: ProviderError| error.context("cannot setup new oracle client");
        let principal = match (&spec.principal_type, &spec.auth) {
            (Some(OraclePrincipalType::Workload), _) => Principal::Workload(
                WorkloadIdentity::new(&context.credentials, spec.service_account_ref.as_ref())
                    .map_err(setup)?,
            ),
            (Some(OraclePrincipalType::InstancePrincipal), _) | (_, None) => {
                context
                    .credentials
                    .use_operator_identity("oracle instance principal")?;
                Principal::Instance(InstancePrincipal::new(http.clone()).await.map_err(setup)?)
            }
            (_, Some(auth)) => Principal::User(user_signer(auth, &context.credentials).await?),
        };
        let api = Api::new(&spec.region, http, principal)?;
        Ok(Arc::new(OracleClient::new(
            api,
            spec.vault.clone(),
            spec.compartment.clone().unwrap_or_default(),
            spec.encryption_key.clone().unwrap_or_default(),
        )))
    }
}

/// The signer of user-principal `auth`: its API key Secret read with upstream's messages.
async fn user_signer(auth: &OracleAuth, credentials: &CredentialResolver) -> Result<Signer> {
    let setup = |error: ProviderError| error.context("cannot setup new oracle client");
    let private_key = read(credentials, &auth.secret_ref.privatekey)
        .await
        .map_err(setup)?;
    if private_key.is_empty() {
        return Err(setup(ProviderError::invalid_config("missing PrivateKey")));
    }
    let fingerprint = read(credentials, &auth.secret_ref.fingerprint)
        .await
        .map_err(setup)?;
    if fingerprint.is_empty() {
        return Err(setup(ProviderError::invalid_config("missing Fingerprint")));
    }
    if auth.user.is_empty() {
        return Err(setup(ProviderError::invalid_config("missing User ID")));
    }
    if auth.tenancy.is_empty() {
        return Err(setup(ProviderError::invalid_config("missing Tenancy ID")));
    }
    let fingerprint = fingerprint.expose_str().ok_or_else(|| {
        setup(ProviderError::invalid_config(
            "the fingerprint is not UTF-8 text",
        ))
    })?;
    Signer::new(&auth.tenancy, &auth.user, fingerprint, private_key.expose())
}

/// One credential of the API key Secret, with upstream's messages.
async fn read(
    credentials: &CredentialResolver,
    selector: &SecretKeySelector,
) -> Result<SecretValue> {
    let name = selector.name.as_deref().unwrap_or_default();
    if name.is_empty() {
        return Err(ProviderError::invalid_config(
            "invalid oracle SecretStore resource: missing oracle APIKey",
        ));
    }
    credentials
        .secret_key(
            name,
            selector.key.as_deref().unwrap_or_default(),
            selector.namespace.as_deref(),
            Referent::Allowed,
        )
        .await
        .map_err(|error| error.context("could not fetch SecretAccessKey secret"))
}

/// Upstream's `ValidateStore`, returning its message.
fn validate_store(spec: &OracleProvider, store: &StoreId) -> std::result::Result<(), String> {
    if spec.vault.is_empty() {
        return Err("vault cannot be empty".into());
    }
    if spec.region.is_empty() {
        return Err("region cannot be empty".into());
    }
    let Some(auth) = &spec.auth else {
        return Ok(());
    };
    if auth.user.is_empty() {
        return Err("user cannot be empty".into());
    }
    if auth.tenancy.is_empty() {
        return Err("tenant cannot be empty".into());
    }
    for (what, selector) in [
        ("privateKey", &auth.secret_ref.privatekey),
        ("fingerprint", &auth.secret_ref.fingerprint),
    ] {
        if selector.name.as_deref().unwrap_or_default().is_empty() {
            return Err(format!("{what}.name cannot be empty"));
        }
        if selector.key.as_deref().unwrap_or_default().is_empty() {
            return Err(format!("{what}.key cannot be empty"));
        }
        check_selector_namespace(store, selector.namespace.as_deref(), Referent::Forbidden)?;
    }
    if let Some(account) = &spec.service_account_ref {
        check_selector_namespace(store, account.namespace.as_deref(), Referent::Allowed)
            .map_err(|error| format!("invalid ServiceAccountRef: {error}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
