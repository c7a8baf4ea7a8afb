//! The target Secret of a sync and writing it (issue 24: no reads on the critical path).
//!
//! What the target holds is first taken from the managed-Secret cache ([`KnownSecrets`]);
//! the Secret is read (GET) only when a decision needs its data or something else changed it:
//! `creationPolicy` Merge/CreateOrMerge (their hash covers other managers' keys, as upstream),
//! another client's edit of its data, another manager's data keys, a changed ExternalSecret
//! spec (the Secret's type is not in the cache), or a write the API server refused with a
//! conflict. A Secret the cache does not know is applied without `force`: if it exists after
//! all with fields someone else set, the server answers 409 and the decision is made again
//! from the Secret as read.

use external_secrets_crds::v1::{ExternalSecret, ExternalSecretCreationPolicy};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams};
use kube::runtime::events::EventType;
use kube::{Api, ResourceExt};
use serde_json::json;

use super::context::EsContext;
use super::error::Error;
use super::inputs::template_sources;
use super::known::Known;
use super::outcome::publish;
use super::secret_meta::{self, SecretMeta};
use super::target;
use crate::controllers::metadata::{owns_exactly, synced_resource_version};
use crate::controllers::template::{SecretData, TemplateSources};

/// The target Secret: where it lives, its name, what the cache knows and, once needed, what
/// the API server holds.
pub struct Target {
    /// Secrets of the ExternalSecret's namespace.
    pub api: Api<Secret>,
    /// The target's name.
    pub name: String,
    namespace: String,
    known: Known,
    read: Option<Option<Secret>>,
}

/// How to judge the target: from what the cache knows, or by reading it.
#[derive(Debug, PartialEq, Eq)]
pub enum Basis {
    /// The cache does not know it: write without force.
    Absent,
    /// Cached metadata suffice.
    Cached,
    /// Read the Secret.
    Read,
}

impl Target {
    /// The target of `es` as the cache knows it; `None` while the cache is not synced.
    pub fn locate(es: &ExternalSecret, context: &EsContext) -> Option<Self> {
        let namespace = es.namespace().unwrap_or_default();
        let name = target::target_name(es);
        let known = context.known.lookup(&namespace, &name);
        if matches!(known, Known::NotSynced) {
            return None;
        }
        Some(Self {
            api: Api::namespaced(context.shared.client.clone(), &namespace),
            name,
            namespace,
            known,
            read: None,
        })
    }

    /// The Secret as the API server holds it (read once per sync).
    pub async fn existing(&mut self) -> Result<Option<&Secret>, Error> {
        if self.read.is_none() {
            let secret = self.api.get_opt(&self.name).await.map_err(Error::Kube)?;
            self.read = Some(secret);
        }
        Ok(self.read.as_ref().and_then(Option::as_ref))
    }

    /// Whether the target exists (a cache miss is confirmed by reading, so nothing is ever
    /// deleted or reported missing because of it).
    pub async fn exists(&mut self) -> Result<bool, Error> {
        if self.read.is_none() && matches!(self.known, Known::Managed(_)) {
            return Ok(true);
        }
        Ok(self.existing().await?.is_some())
    }

    /// Forgets our own write after the Secret was deleted.
    pub fn deleted(&self, context: &EsContext) {
        context.known.forget(&self.namespace, &self.name);
    }

    /// Upstream's `isSecretValid` (see [`target::is_valid`]), from the cache when it can be
    /// trusted.
    pub async fn is_valid(&mut self, es: &ExternalSecret) -> Result<bool, Error> {
        match basis_for_validity(es, &self.known) {
            Some(valid) if self.read.is_none() => Ok(valid),
            _ => Ok(target::is_valid(self.existing().await?, es)),
        }
    }
}

/// Whether the target is valid judged from the cache alone, or `None` when it must be read.
fn basis_for_validity(es: &ExternalSecret, known: &Known) -> Option<bool> {
    match es.spec.target.creation_policy {
        // Never checked (see `target::is_valid`).
        ExternalSecretCreationPolicy::None | ExternalSecretCreationPolicy::Orphan => Some(true),
        ExternalSecretCreationPolicy::Owner => match known {
            // Owner targets always carry the managed label: a miss is a missing target.
            Known::Missing => Some(false),
            Known::Managed(meta) if secret_meta::data_untouched(meta) => Some(cached_valid(meta)),
            _ => None,
        },
        _ => None,
    }
}

/// The managed label and a data-hash annotation, on a Secret whose data is trusted.
fn cached_valid(meta: &SecretMeta) -> bool {
    let labelled = meta
        .metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(target::LABEL_MANAGED))
        .is_some_and(|value| value == "true");
    let hashed = meta
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|annotations| annotations.contains_key(target::ANNOTATION_DATA_HASH));
    labelled && hashed
}

/// How the write of `es`'s target is decided, given what the cache knows.
pub fn basis_for_write(es: &ExternalSecret, known: &Known) -> Basis {
    let policy = es.spec.target.creation_policy;
    if !matches!(
        policy,
        ExternalSecretCreationPolicy::Owner | ExternalSecretCreationPolicy::Orphan
    ) {
        return Basis::Read;
    }
    match known {
        Known::NotSynced => Basis::Read,
        Known::Missing => Basis::Absent,
        Known::Managed(meta) => {
            let unchanged = es.status.as_ref().is_some_and(|status| {
                status.synced_resource_version.as_deref()
                    == Some(synced_resource_version(&es.metadata).as_str())
            });
            let manager = target::field_manager(es);
            if unchanged
                && secret_meta::data_untouched(meta)
                && !secret_meta::others_own_data(meta, &manager)
            {
                Basis::Cached
            } else {
                Basis::Read
            }
        }
    }
}

/// Server-side applies our part of the target Secret, unless it already holds it.
pub async fn write_target(
    es: &ExternalSecret,
    context: &EsContext,
    target: &mut Target,
    data: &SecretData,
) -> Result<(), Error> {
    let sources = template_sources(es, context).await?;
    let basis = match target.read {
        Some(_) => Basis::Read,
        None => basis_for_write(es, &target.known),
    };
    let first = match (&basis, &target.known) {
        (Basis::Absent, _) => {
            let desired = target::desired_secret(es, data, None, &sources)?;
            Some((desired, false, "Created"))
        }
        (Basis::Cached, Known::Managed(meta)) => {
            cached_write(es, meta, data, &sources)?.map(|desired| (desired, true, "Updated"))
        }
        _ => None,
    };
    let Some((desired, force, reason)) = first else {
        return if basis == Basis::Read {
            write_as_read(es, context, target, data, &sources).await
        } else {
            Ok(())
        };
    };
    match apply(es, context, &target.api, &desired, force).await {
        Ok(()) => {
            published(es, context, reason).await;
            Ok(())
        }
        // Someone else's fields (409), or a rule the cache could not see (422: an immutable
        // Secret, a second controller): decide again from the Secret as it is.
        Err(Error::Kube(kube::Error::Api(status))) if matches!(status.code, 409 | 422) => {
            write_as_read(es, context, target, data, &sources).await
        }
        Err(error) => Err(error),
    }
}

/// The apply a trusted cached target needs, or `None` when it already holds our data and
/// metadata (the data-hash of our data alone is the one it carries: no other manager owns data).
fn cached_write(
    es: &ExternalSecret,
    meta: &SecretMeta,
    data: &SecretData,
    sources: &TemplateSources,
) -> Result<Option<Secret>, Error> {
    refuse_other_owner(&meta.metadata, es)?;
    let shell = Secret {
        metadata: meta.metadata.clone(),
        ..Secret::default()
    };
    let desired = target::desired_secret(es, data, Some(&shell), sources)?;
    let hash = |secret: &Secret| {
        secret
            .metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(target::ANNOTATION_DATA_HASH).cloned())
    };
    let current = hash(&shell).is_some() && hash(&shell) == hash(&desired);
    let metadata = owns_exactly(
        &meta.metadata,
        &desired.metadata,
        &target::field_manager(es),
    );
    Ok((!(current && metadata)).then_some(desired))
}

/// Upstream refuses to fight over a target another ExternalSecret controls.
fn refuse_other_owner(metadata: &ObjectMeta, es: &ExternalSecret) -> Result<(), Error> {
    let references = metadata.owner_references.as_deref().unwrap_or_default();
    match target::other_external_secret_owner(references, es) {
        Some(owner) => Err(Error::OwnedByAnother(owner)),
        None => Ok(()),
    }
}

/// The decision as before issue 24, from the Secret as read: ownership, up to date, immutable.
async fn write_as_read(
    es: &ExternalSecret,
    context: &EsContext,
    target: &mut Target,
    data: &SecretData,
    sources: &TemplateSources,
) -> Result<(), Error> {
    let api = target.api.clone();
    let existing = target.existing().await?;
    let desired = target::desired_secret(es, data, existing, sources)?;
    if let Some(existing) = existing {
        refuse_other_owner(&existing.metadata, es)?;
        if target::is_up_to_date(existing, &desired, es) {
            return Ok(());
        }
        if existing.immutable == Some(true) {
            return Err(Error::ImmutableTarget);
        }
    }
    let reason = if existing.is_some() {
        "Updated"
    } else {
        "Created"
    };
    apply(es, context, &api, &desired, true).await?;
    published(es, context, reason).await;
    Ok(())
}

/// Server-side applies `desired` as `es`'s field manager and remembers the result.
async fn apply(
    es: &ExternalSecret,
    context: &EsContext,
    secrets: &Api<Secret>,
    desired: &Secret,
    force: bool,
) -> Result<(), Error> {
    let mut body = serde_json::to_value(desired).map_err(Error::Encode)?;
    body["apiVersion"] = json!("v1");
    body["kind"] = json!("Secret");
    let mut params = PatchParams::apply(&target::field_manager(es));
    params.force = force;
    let written = secrets
        .patch(&target::target_name(es), &params, &Patch::Apply(&body))
        .await
        .map_err(Error::Kube)?;
    context.known.wrote(written);
    Ok(())
}

/// Upstream's event after a write (`Created` or `Updated`).
async fn published(es: &ExternalSecret, context: &EsContext, reason: &str) {
    let note = match reason {
        "Created" => "secret created",
        _ => "secret updated",
    };
    publish(es, context, EventType::Normal, reason, note).await;
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
