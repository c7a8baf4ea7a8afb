//! Template errors. Messages follow upstream's wording (`unable to parse template at key K`,
//! `unable to execute template at key K`, Go's `template: K:LINE:COL: ...`) so users can search
//! for them, but unlike Go's they never carry secret values: positions, key names, function names
//! and type names only.

use thiserror::Error;

/// Why rendering a template failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// The template source is not valid Go template syntax (or names an unknown function).
    #[error("unable to parse template at key {key}: template: {key}:{line}:{column}: {message}")]
    Parse { key: String, line: usize, column: usize, message: String },
    /// Running the template failed (a missing key, a failing function, a limit).
    #[error(
        "unable to execute template at key {key}: template: {key}:{line}:{column}: executing {key:?} at <{node}>: {message}"
    )]
    Execute { key: String, line: usize, column: usize, node: String, message: String },
    /// A `templateFrom` ConfigMap the controller fetched lacks a listed key.
    #[error("error in configmap {name}: missing key {key}")]
    ConfigMapKeyMissing { name: String, key: String },
    /// A `templateFrom` Secret the controller fetched lacks a listed key.
    #[error("error in secret {name}: missing key {key}")]
    SecretKeyMissing { name: String, key: String },
    /// A `templateFrom` source was not handed to [`super::apply`].
    #[error("{kind} {name} referenced by templateFrom was not fetched")]
    SourceMissing { kind: &'static str, name: String },
    /// A `KeysAndValues` template did not render to a YAML map of strings.
    #[error("could not unmarshal template to 'map[string][]byte' at key {key}: {message}")]
    NotAStringMap { key: String, message: String },
    /// `valuesDecodingStrategy` could not decode a rendered value.
    #[error("failed to decode rendered template value for key {key}: {message}")]
    Decode { key: String, message: String },
    /// The template asks for something upstream refuses for Secrets (privileged types,
    /// targets other than Data, Annotations, Labels).
    #[error("{0}")]
    NotAllowed(String),
}

impl TemplateError {
    /// A bounded PascalCase reason for conditions and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            TemplateError::Parse { .. } => "TemplateParseError",
            TemplateError::Execute { .. } => "TemplateExecuteError",
            TemplateError::ConfigMapKeyMissing { .. }
            | TemplateError::SecretKeyMissing { .. }
            | TemplateError::SourceMissing { .. } => "TemplateSourceError",
            TemplateError::NotAStringMap { .. } | TemplateError::Decode { .. } => {
                "TemplateResultError"
            }
            TemplateError::NotAllowed(_) => "TemplateNotAllowed",
        }
    }
}

/// An error at a byte offset of a template source, before it is given its key and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub pos: usize,
    pub message: String,
}

impl Located {
    /// An error at `pos`.
    pub fn new(pos: usize, message: impl Into<String>) -> Located {
        Located { pos, message: message.into() }
    }
}

/// The 1-based line and column (in characters) of byte offset `pos` in `source`.
pub fn line_column(source: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(source.len());
    while !source.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &source[..pos];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |tail| tail.chars().count()) + 1;
    (line, column)
}
