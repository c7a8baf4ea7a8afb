//! Why a template could not be applied, or its ConfigMaps and Secrets read. Each variant names
//! the key, item, field or object at fault and never carries a value; the messages are
//! upstream's, wrapped as upstream wraps them.

use external_secrets_providers::ProviderError;
use external_secrets_template::{TemplateError, YamlError};

use super::decode::DecodeError;

/// Why applying a template (or rendering part of one) failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Upstream's `ValidateSecretTemplate` refused the template; every refusal, one a line.
    #[error("{}", join(.0))]
    Invalid(Vec<Refusal>),
    /// The template of `key` did not parse or run (upstream wraps its `execute` error in the
    /// scope function's).
    #[error(
        "unable to execute template at key {key}: unable to {step} template at key {key}: {source}"
    )]
    Execute {
        /// The key (or `templateFrom[i].literal`, or the item's text) naming the template.
        key: String,
        /// `parse` or `execute`.
        step: &'static str,
        /// The engine's error (boxed: it is large and errors are rare).
        source: Box<TemplateError>,
    },
    /// A `templateFrom` entry names a ConfigMap or Secret that was not read.
    #[error("{kind} {name:?} not found")]
    SourceMissing {
        /// `configmap` or `secret`.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// An item names a key its ConfigMap or Secret does not have.
    #[error("error in {kind} {name}: missing key {key}")]
    MissingItem {
        /// `configmap` or `secret`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The missing key.
        key: String,
    },
    /// A rendered value could not be decoded by `valuesDecodingStrategy`.
    #[error("failed to decode rendered template value for key {key}: {source}")]
    DecodeRendered {
        /// The rendered key.
        key: String,
        /// Why.
        source: DecodeError,
    },
    /// A `KeysAndValues` template rendered bytes that are not UTF-8.
    #[error(
        "could not unmarshal template to 'map[string][]byte': invalid UTF-8 in rendered template"
    )]
    NotUtf8,
    /// A `KeysAndValues` template did not render a map of strings.
    #[error("could not unmarshal template to 'map[string][]byte': {0}")]
    NotAStringMap(#[source] YamlError),
}

/// One refusal of upstream's `ValidateSecretTemplate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A service-account token Secret annotated with the service account's name.
    TokenAnnotation,
    /// A service-account token Secret with a `templateFrom` entry targeting annotations.
    TokenAnnotationsTarget,
    /// A bootstrap token Secret.
    BootstrapToken,
    /// A `templateFrom` target that is not `Data`, `Annotations` or `Labels`.
    Target(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::{BOOTSTRAP_TOKEN, SERVICE_ACCOUNT_NAME, SERVICE_ACCOUNT_TOKEN};
        match self {
            Refusal::TokenAnnotation => write!(
                f,
                "template.type={SERVICE_ACCOUNT_TOKEN:?} with annotation \
                 {SERVICE_ACCOUNT_NAME:?} is not allowed"
            ),
            Refusal::TokenAnnotationsTarget => write!(
                f,
                "template.type={SERVICE_ACCOUNT_TOKEN:?} with templateFrom \
                 target=\"Annotations\" is not allowed"
            ),
            Refusal::BootstrapToken => {
                write!(f, "template.type={BOOTSTRAP_TOKEN:?} is not allowed")
            }
            Refusal::Target(target) => write!(
                f,
                "templateFrom target={target:?} is not allowed when targeting a Secret, must be \
                 one of \"Data\", \"Annotations\" or \"Labels\""
            ),
        }
    }
}

fn join(refusals: &[Refusal]) -> String {
    refusals
        .iter()
        .map(Refusal::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why the ConfigMaps and Secrets a template names could not be read (they may appear later).
#[derive(Debug, thiserror::Error)]
pub enum SourcesError {
    /// Reading it failed; `field` is the `templateFrom` entry's `configMap` or `secret`.
    #[error("{field}: {source}")]
    Read {
        /// E.g. `spec.target.template.templateFrom[0].configMap`.
        field: String,
        /// Why.
        source: ProviderError,
    },
    /// It does not exist.
    #[error("{field}: {kind} {name:?} not found")]
    Missing {
        /// E.g. `spec.target.template.templateFrom[0].secret`.
        field: String,
        /// `configmap` or `secret`.
        kind: &'static str,
        /// Its name.
        name: String,
    },
}
