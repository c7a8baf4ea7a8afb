//! `spec.target.template`, applied as upstream's `ApplyTemplate` does: the template is first
//! checked as upstream's `ValidateSecretTemplate` checks it; the provider data is kept only with
//! `mergePolicy: Merge` or when nothing is templated; `templateFrom` entries apply in order (a
//! ConfigMap's or Secret's items, rendered as `Values` or `KeysAndValues`, then a literal), then
//! `template.data` (which wins); labels and annotations are templates too. The ConfigMaps and
//! Secrets are read first ([`sources`]), from the object's own namespace only, so rendering
//! itself does no I/O.
//! Templates run on the `external-secrets-template` engine with upstream's options: every
//! fetched value is a string and a missing key is an error. Messages name the key and never
//! carry values.

//!
//! Shared by ExternalSecrets (Secret and generic targets), PushSecret `spec.template` and
//! `render`; it sits below the controllers.

mod decode;
mod error;
mod from;
mod sources;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use external_secrets_crds::v1::{ExternalSecretTemplate, TemplateMergePolicy};
use external_secrets_template::{Budget, Delimiters, TemplateError, render_within};

pub use decode::{DecodeError, decode};
pub use error::{Error, Refusal, SourcesError};
pub use from::{render_map, source_items};
pub use sources::sources;

/// The data of a target Secret (or of the provider reads feeding it): key to raw bytes.
pub type SecretData = BTreeMap<String, Vec<u8>>;

/// What a template produces for the target Secret.
#[derive(Debug, Default, PartialEq)]
pub struct Rendered {
    /// The Secret's data.
    pub data: SecretData,
    /// Labels to set (rendered `template.metadata.labels` and templateFrom Labels).
    pub labels: BTreeMap<String, String>,
    /// Annotations to set.
    pub annotations: BTreeMap<String, String>,
}

/// Where an ExternalSecret keeps its template.
pub const TEMPLATE_FIELD: &str = "spec.target.template";

/// The data of the ConfigMaps and Secrets that `templateFrom` entries name, by name.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TemplateSources {
    /// ConfigMaps' data.
    pub config_maps: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// Secrets' data.
    pub secrets: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
}

/// The Secret type the token controller fills with a service account's token (GHSA-fq7h).
pub(crate) const SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
/// The annotation naming the service account whose token a Secret receives.
pub(crate) const SERVICE_ACCOUNT_NAME: &str = "kubernetes.io/service-account.name";
/// The Secret type of bootstrap tokens, which authenticate to the API server.
pub(crate) const BOOTSTRAP_TOKEN: &str = "bootstrap.kubernetes.io/token";

/// Where a `templateFrom` entry writes (upstream compares the target case-insensitively).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Target {
    Data,
    Labels,
    Annotations,
}

pub(crate) fn target(name: &str) -> Option<Target> {
    match name.to_ascii_lowercase().as_str() {
        "" | "data" => Some(Target::Data),
        "labels" => Some(Target::Labels),
        "annotations" => Some(Target::Annotations),
        _ => None,
    }
}

/// Applies `template` to the fetched `data`, with the ConfigMaps and Secrets of `sources`.
pub fn apply(
    template: &ExternalSecretTemplate,
    data: &SecretData,
    sources: &TemplateSources,
) -> Result<Rendered, Error> {
    validate(template)?;
    let templated = !template.data.is_empty() || !template.template_from.is_empty();
    let mut rendered = Rendered::default();
    if template.merge_policy == TemplateMergePolicy::Merge || !templated {
        rendered.data = data.clone();
    }
    for (index, from) in template.template_from.iter().enumerate() {
        from::apply_template_from(from, index, data, sources, &mut rendered)?;
    }
    for (key, source) in &template.data {
        let value = execute(key, source, data)?;
        rendered.set(Target::Data, key.clone(), value);
    }
    if let Some(metadata) = &template.metadata {
        for (key, source) in &metadata.labels {
            let value = execute(key, source, data)?;
            rendered.set(Target::Labels, key.clone(), value);
        }
        for (key, source) in &metadata.annotations {
            let value = execute(key, source, data)?;
            rendered.set(Target::Annotations, key.clone(), value);
        }
    }
    Ok(rendered)
}

impl Rendered {
    pub(crate) fn set(&mut self, target: Target, key: String, value: Vec<u8>) {
        let text = || String::from_utf8_lossy(&value).into_owned();
        match target {
            Target::Data => {
                self.data.insert(key, value);
            }
            Target::Labels => {
                self.labels.insert(key, text());
            }
            Target::Annotations => {
                self.annotations.insert(key, text());
            }
        }
    }
}

/// Upstream's `ValidateSecretTemplate`: no bootstrap tokens, no service-account token bound
/// through the template, `templateFrom` targets only Data, Annotations or Labels.
fn validate(template: &ExternalSecretTemplate) -> Result<(), Error> {
    let mut refusals = Vec::new();
    match template.r#type.as_deref() {
        Some(SERVICE_ACCOUNT_TOKEN) => {
            let annotated = template
                .metadata
                .as_ref()
                .is_some_and(|metadata| metadata.annotations.contains_key(SERVICE_ACCOUNT_NAME));
            let annotates = template
                .template_from
                .iter()
                .any(|from| target(&from.target) == Some(Target::Annotations));
            if annotated {
                refusals.push(Refusal::TokenAnnotation);
            } else if annotates {
                refusals.push(Refusal::TokenAnnotationsTarget);
            }
        }
        Some(BOOTSTRAP_TOKEN) => refusals.push(Refusal::BootstrapToken),
        _ => {}
    }
    for from in &template.template_from {
        if target(&from.target).is_none() {
            refusals.push(Refusal::Target(from.target.clone()));
        }
    }
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(refusals))
    }
}

/// The delimiters of target templates (`--template-left-delimiter` and
/// `--template-right-delimiter`), set once at start-up; `{{ }}` until then.
static DELIMITERS: OnceLock<Delimiters> = OnceLock::new();

/// Sets the template delimiters for the process, as upstream's flags do (process-wide there
/// too). Later calls change nothing.
pub fn set_delimiters(left: &str, right: &str) {
    let _ = DELIMITERS.set(Delimiters {
        left: left.to_owned(),
        right: right.to_owned(),
    });
}

tokio::task_local! {
    /// The template budget of the reconcile running on this task (see [`budgeted`]).
    static BUDGET: Budget;
}

/// Runs `reconcile` with one template budget ([`Budget`]) for every template it renders:
/// `template.data`, each `templateFrom` item and literal, labels, annotations, generic
/// targets and `rewrite.transform`, so an object with many templates gets the time and
/// memory of one (issue 23) and one reconcile cannot stall its worker with them.
pub async fn budgeted<F: Future>(reconcile: F) -> F::Output {
    BUDGET.scope(Budget::default(), reconcile).await
}

/// Calls `render` with the budget of the running reconcile ([`budgeted`]), or a budget of
/// its own outside one (the `render` command, tests).
pub fn with_budget<R>(render: impl Fn(&Budget) -> R) -> R {
    BUDGET
        .try_with(&render)
        .unwrap_or_else(|_| render(&Budget::default()))
}

/// Parses and runs one template; `key` names it in errors, as upstream's messages do.
pub fn execute(key: &str, source: &str, data: &SecretData) -> Result<Vec<u8>, Error> {
    let delimiters = DELIMITERS.get().cloned().unwrap_or_default();
    // Upstream wraps twice: its `execute` says which step failed, its scope functions
    // (`valueScopeApply`, `mapScopeApply`) wrap that again.
    let rendered = with_budget(|budget| render_within(key, source, data, &delimiters, budget));
    rendered.map_err(|source| Error::Execute {
        key: key.to_owned(),
        step: match source {
            TemplateError::Parse { .. } => "parse",
            TemplateError::Execute { .. } => "execute",
        },
        source: Box::new(source),
    })
}
