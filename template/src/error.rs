//! Template errors, worded as Go's `text/template` words them (`template: NAME:LINE:COL: ...`)
//! so users can search for them, but unlike Go's they never carry data values: positions,
//! template names, function names and type names only.

use thiserror::Error;

/// Why parsing or executing a template failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// The source is not valid Go template syntax (or names an unknown function). Go's parse
    /// errors print the line only; the column is kept for callers that point at it.
    #[error("template: {name}:{line}: {message}")]
    Parse {
        name: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// Running the template failed (a missing key, a failing function, a limit).
    #[error("template: {name}:{line}:{column}: executing {template:?} at <{node}>: {message}")]
    Execute {
        name: String,
        line: usize,
        column: usize,
        /// The template running when it failed: the source's own, or a `define`d one.
        template: String,
        /// The node being evaluated, as written in the source.
        node: String,
        message: String,
    },
}

impl TemplateError {
    /// What went wrong, without Go's `template: NAME:LINE:` prefix, for callers that name the
    /// template themselves.
    pub fn message(&self) -> &str {
        match self {
            TemplateError::Parse { message, .. } | TemplateError::Execute { message, .. } => {
                message
            }
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
        Located {
            pos,
            message: message.into(),
        }
    }
}

/// The line (1-based) and column of byte offset `pos` in `source`, as Go's template errors
/// report them: the column is the byte offset within the line, counted from 0.
pub fn line_column(source: &str, pos: usize) -> (usize, usize) {
    let before = &source.as_bytes()[..pos.min(source.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let column = match before.iter().rposition(|b| *b == b'\n') {
        Some(newline) => before.len() - newline - 1,
        None => before.len(),
    };
    (line, column)
}

/// Why YAML could not be read as asked (`yaml_to_json`, `yaml_to_string_map`), in the words of
/// go-yaml and sigs.k8s.io/yaml: where parsing failed and which kind of value did not fit,
/// never the content.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum YamlError {
    /// The text is not YAML, or holds what JSON cannot (a non-finite number, an unusable key);
    /// the parser's message says where.
    #[error("error converting YAML to JSON: {0}")]
    Convert(String),
    /// A value of another kind where a map of strings (or a string) was asked for.
    #[error(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {kind} into Go value of type {into}"
    )]
    Unmarshal {
        /// The JSON kind found (`array`, `object`, `string`, `bool`, `number`).
        kind: &'static str,
        /// The Go type asked for.
        into: &'static str,
    },
}
