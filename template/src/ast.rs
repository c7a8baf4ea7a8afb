//! The parse tree of a Go template, mirroring Go's `text/template/parse` nodes. `Display`
//! prints a node as Go does in `executing "k" at <...>` error messages.

use std::fmt;

/// A sequence of nodes.
pub type List = Vec<Node>;

/// A statement-level node.
#[derive(Debug, Clone)]
pub enum Node {
    /// Literal text, copied to the output.
    Text(String),
    /// `{{ pipeline }}`: prints the value unless the pipeline declares variables.
    Action(Pipe),
    /// `{{if}}`, `{{with}}`, `{{range}}`.
    Control(Control),
    /// `{{template "name" pipeline}}` (also the call half of `{{block}}`).
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipe>,
    },
    /// `{{break}}` inside a range.
    Break,
    /// `{{continue}}` inside a range.
    Continue,
}

/// Which control structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlKind {
    If,
    With,
    Range,
}

/// `{{if|with|range pipeline}} list {{else}} else_list {{end}}`.
#[derive(Debug, Clone)]
pub struct Control {
    pub kind: ControlKind,
    pub pipe: Pipe,
    pub list: List,
    pub else_list: Option<List>,
}

/// A pipeline: optional variable declarations, then commands joined by `|`.
#[derive(Debug, Clone)]
pub struct Pipe {
    pub pos: usize,
    /// Declared or assigned variables (`$x :=`, `$k, $v :=`, `$x =`).
    pub decl: Vec<String>,
    /// `=` rather than `:=`.
    pub is_assign: bool,
    pub cmds: Vec<Command>,
}

/// One command of a pipeline: an operand and its arguments.
#[derive(Debug, Clone)]
pub struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

/// A number literal as Go's parser keeps it: the text and the int/float readings.
#[derive(Debug, Clone)]
pub struct Number {
    pub text: String,
    pub int: Option<i64>,
    pub float: Option<f64>,
}

/// An operand.
#[derive(Debug, Clone)]
pub enum Arg {
    /// `.a.b`.
    Field { pos: usize, names: Vec<String> },
    /// `$x.a.b` (`$` alone is the data root).
    Variable {
        pos: usize,
        name: String,
        fields: Vec<String>,
    },
    /// `(pipeline).a.b` or another operand followed by fields.
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: Vec<String>,
    },
    /// A function name.
    Identifier { pos: usize, name: String },
    /// `.`.
    Dot(usize),
    /// `nil`.
    Nil(usize),
    /// `true` / `false`.
    Bool(usize, bool),
    /// A number or character constant.
    Number(usize, Number),
    /// A string literal: its source text and value.
    String {
        pos: usize,
        text: String,
        value: Vec<u8>,
    },
    /// A parenthesised pipeline.
    Pipe(Box<Pipe>),
}

impl Arg {
    /// Where the operand starts.
    pub fn pos(&self) -> usize {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Chain { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Bool(pos, _)
            | Arg::Number(pos, _)
            | Arg::String { pos, .. } => *pos,
            Arg::Pipe(pipe) => pipe.pos,
        }
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field { names, .. } => names.iter().try_for_each(|name| write!(f, ".{name}")),
            Arg::Variable { name, fields, .. } => {
                write!(f, "{name}")?;
                fields.iter().try_for_each(|field| write!(f, ".{field}"))
            }
            Arg::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Arg::Pipe(_) => write!(f, "{node}")?,
                    other => write!(f, "{other}")?,
                }
                fields.iter().try_for_each(|field| write!(f, ".{field}"))
            }
            Arg::Identifier { name, .. } => write!(f, "{name}"),
            Arg::Dot(_) => write!(f, "."),
            Arg::Nil(_) => write!(f, "nil"),
            Arg::Bool(_, value) => write!(f, "{value}"),
            Arg::Number(_, number) => write!(f, "{}", number.text),
            Arg::String { text, .. } => write!(f, "{text}"),
            Arg::Pipe(pipe) => write!(f, "({pipe})"),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, arg) in self.args.iter().enumerate() {
            if index > 0 {
                write!(f, " ")?;
            }
            write!(f, "{arg}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            write!(
                f,
                "{} {} ",
                self.decl.join(", "),
                if self.is_assign { "=" } else { ":=" }
            )?;
        }
        for (index, cmd) in self.cmds.iter().enumerate() {
            if index > 0 {
                write!(f, " | ")?;
            }
            write!(f, "{cmd}")?;
        }
        Ok(())
    }
}
