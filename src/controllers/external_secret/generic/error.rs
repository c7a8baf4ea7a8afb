//! Why a generic target is not allowed or cannot be built, each variant naming the field,
//! path or object at fault (never a value); the messages are upstream's.

use external_secrets_template::YamlError;

use super::candidate::TokenSecret;
use super::path::PathError;
use crate::controllers::template;

/// Why a generic target is not allowed or cannot be built (all permanent: the spec, or the
/// existing target, must change).
#[derive(Debug, thiserror::Error)]
pub enum GenericError {
    /// `--unsafe-allow-generic-targets` is off.
    #[error("generic targets are disabled. Enable with --unsafe-allow-generic-targets flag")]
    Disabled,
    /// `target.manifest.apiVersion` or `target.manifest.kind` is empty.
    #[error("target.manifest.{0} is required")]
    Required(&'static str),
    /// A template of `spec.target.template` failed.
    #[error(transparent)]
    Template(#[from] template::Error),
    /// A `KeysAndValues` template for a path did not render YAML.
    #[error("could not unmarshal template YAML: {0}")]
    Yaml(#[source] YamlError),
    /// A `templateFrom` target path does not parse.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A rendered value could not be set at its target path.
    #[error("failed to set path {target}: {source}")]
    SetPath {
        /// The target path.
        target: String,
        /// Why.
        source: PathError,
    },
    /// A rendered value could not be set in `data`, `spec`, `labels` or `annotations`.
    #[error("failed to set {field} field on object: {source}")]
    SetField {
        /// E.g. `metadata.labels`.
        field: String,
        /// Why.
        source: Box<GenericError>,
    },
    /// The map at `field` is something else (a template put it there).
    #[error("{0} is not a map")]
    NotAMap(String),
    /// Neither `spec` nor `data` is there to hash.
    #[error("generic target content does not have a spec or data field for content hashing")]
    NoContent,
    /// The target is owned by another ExternalSecret (named `namespace/name`).
    #[error("target is owned by another ExternalSecret: {0}")]
    OwnedByAnother(String),
    /// `creationPolicy: Owner`, but another controller owns the target.
    #[error("Object {namespace}/{name} is already owned by another {kind} controller {owner}")]
    OwnedByController {
        /// The target's namespace.
        namespace: String,
        /// The target's name.
        name: String,
        /// The owner's kind.
        kind: String,
        /// The owner's name.
        owner: String,
    },
    /// The owner references could not be encoded.
    #[error("{0}")]
    Encode(#[source] serde_json::Error),
    /// The rendered object is a service-account token Secret.
    #[error(transparent)]
    TokenSecret(#[from] TokenSecret),
}
