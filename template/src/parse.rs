//! The parser of Go's `text/template`, following `text/template/parse` rule by rule: actions,
//! pipelines with declarations, `if`/`else if`/`with`/`else with`/`range`/`break`/`continue`,
//! `define`, `template`, `block`, variable scoping, and the parse-time checks Go makes
//! (unknown functions, undefined variables, non-executable pipeline stages).

use std::collections::BTreeMap;

use super::ast::{Arg, Command, Control, ControlKind, List, Node, Pipe};
use super::error::Located;
use super::lex::{Keyword, Kind, Token, lex};
use super::limits::MAX_PARSE_DEPTH;
use super::literal::{parse_number, unquote_string};

/// The parsed templates of one source: its own tree and the ones it `define`s.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    pub trees: BTreeMap<String, List>,
}

/// Parses `source` as the template `name`, with the given delimiters.
pub fn parse(name: &str, source: &str, left: &str, right: &str) -> Result<Templates, Located> {
    let tokens = lex(source, left, right)?;
    let mut parser = Parser {
        tokens,
        index: 0,
        vars: vec!["$".into()],
        range_depth: 0,
        depth: 0,
        templates: Templates::default(),
    };
    let root = parser.parse_top()?;
    parser.add(name, root, 0)?;
    Ok(parser.templates)
}

enum Item {
    Node(Node),
    End(usize),
    Else(usize),
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    index: usize,
    vars: Vec<String>,
    range_depth: usize,
    depth: usize,
    templates: Templates,
}

fn describe(token: &Token<'_>) -> String {
    match token.kind {
        Kind::Eof => "EOF".into(),
        Kind::Keyword(_) => format!("<{}>", token.text),
        Kind::RightDelim | Kind::LeftDelim => format!("{:?}", token.text.trim_start_matches('-')),
        Kind::Space => "space".into(),
        _ => format!("{:?}", token.text),
    }
}

fn is_empty_tree(list: &List) -> bool {
    list.iter()
        .all(|node| matches!(node, Node::Text(text) if text.trim().is_empty()))
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Token<'a> {
        let token = self.tokens[self.index.min(self.tokens.len() - 1)];
        self.index = (self.index + 1).min(self.tokens.len());
        token
    }

    fn backup(&mut self) {
        self.index -= 1;
    }

    fn peek(&self) -> Token<'a> {
        self.tokens[self.index.min(self.tokens.len() - 1)]
    }

    fn next_non_space(&mut self) -> Token<'a> {
        loop {
            let token = self.next();
            if token.kind != Kind::Space {
                return token;
            }
        }
    }

    fn peek_non_space(&mut self) -> Token<'a> {
        let token = self.next_non_space();
        self.backup();
        token
    }

    fn unexpected<T>(&self, token: &Token<'_>, context: &str) -> Result<T, Located> {
        Err(Located::new(
            token.pos,
            format!("unexpected {} in {context}", describe(token)),
        ))
    }

    fn expect(&mut self, kind: Kind, context: &str) -> Result<Token<'a>, Located> {
        let token = self.next_non_space();
        if token.kind != kind {
            return self.unexpected(&token, context);
        }
        Ok(token)
    }

    fn add(&mut self, name: &str, list: List, pos: usize) -> Result<(), Located> {
        match self.templates.trees.get(name) {
            Some(existing) if !is_empty_tree(existing) => {
                if !is_empty_tree(&list) {
                    let message = format!("template: multiple definition of template {name:?}");
                    return Err(Located::new(pos, message));
                }
            }
            _ => {
                self.templates.trees.insert(name.to_owned(), list);
            }
        }
        Ok(())
    }

    fn nest(&mut self, pos: usize) -> Result<(), Located> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            let message = format!("template nests deeper than {MAX_PARSE_DEPTH} levels");
            return Err(Located::new(pos, message));
        }
        Ok(())
    }

    fn parse_top(&mut self) -> Result<List, Located> {
        let mut root = Vec::new();
        while self.peek().kind != Kind::Eof {
            if self.peek().kind == Kind::LeftDelim {
                let start = self.index;
                self.next();
                if self.next_non_space().kind == Kind::Keyword(Keyword::Define) {
                    self.definition()?;
                    continue;
                }
                self.index = start;
            }
            match self.text_or_action()? {
                Item::Node(node) => root.push(node),
                Item::End(pos) => return Err(Located::new(pos, "unexpected {{end}}")),
                Item::Else(pos) => return Err(Located::new(pos, "unexpected {{else}}")),
            }
        }
        Ok(root)
    }

    fn definition(&mut self) -> Result<(), Located> {
        let token = self.next_non_space();
        if !matches!(token.kind, Kind::String | Kind::RawString) {
            return self.unexpected(&token, "define clause");
        }
        let name = self.template_name(&token)?;
        self.expect(Kind::RightDelim, "define clause")?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (list, end) = self.item_list()?;
        self.vars = saved;
        if let Item::Else(pos) = end {
            return Err(Located::new(pos, "unexpected {{else}} in define clause"));
        }
        self.add(&name, list, token.pos)
    }

    fn template_name(&self, token: &Token<'_>) -> Result<String, Located> {
        let bytes = unquote_string(token.text).map_err(|e| Located::new(token.pos, e))?;
        String::from_utf8(bytes).map_err(|_| Located::new(token.pos, "invalid template name"))
    }

    /// Nodes up to the `{{end}}` or `{{else}}` that closes them.
    fn item_list(&mut self) -> Result<(List, Item), Located> {
        let mut list = Vec::new();
        loop {
            if self.peek_non_space().kind == Kind::Eof {
                return Err(Located::new(self.peek_non_space().pos, "unexpected EOF"));
            }
            match self.text_or_action()? {
                Item::Node(node) => list.push(node),
                end => return Ok((list, end)),
            }
        }
    }

    fn text_or_action(&mut self) -> Result<Item, Located> {
        let token = self.next_non_space();
        match token.kind {
            Kind::Text => Ok(Item::Node(Node::Text(token.text.to_owned()))),
            Kind::LeftDelim => self.action(),
            _ => self.unexpected(&token, "input"),
        }
    }

    fn action(&mut self) -> Result<Item, Located> {
        let token = self.next_non_space();
        let node = match token.kind {
            Kind::Keyword(Keyword::Block) => self.block(token.pos)?,
            Kind::Keyword(Keyword::Break) => self.loop_control(token, true)?,
            Kind::Keyword(Keyword::Continue) => self.loop_control(token, false)?,
            Kind::Keyword(Keyword::Else) => {
                let peek = self.peek_non_space();
                if !matches!(peek.kind, Kind::Keyword(Keyword::If | Keyword::With)) {
                    self.expect(Kind::RightDelim, "else")?;
                }
                return Ok(Item::Else(token.pos));
            }
            Kind::Keyword(Keyword::End) => {
                self.expect(Kind::RightDelim, "end")?;
                return Ok(Item::End(token.pos));
            }
            Kind::Keyword(Keyword::If) => self.control(ControlKind::If, token.pos)?,
            Kind::Keyword(Keyword::Range) => self.control(ControlKind::Range, token.pos)?,
            Kind::Keyword(Keyword::With) => self.control(ControlKind::With, token.pos)?,
            Kind::Keyword(Keyword::Template) => self.template_call()?,
            _ => {
                self.backup();
                Node::Action(self.pipeline("command", Kind::RightDelim)?)
            }
        };
        Ok(Item::Node(node))
    }

    fn loop_control(&mut self, token: Token<'_>, is_break: bool) -> Result<Node, Located> {
        let name = if is_break {
            "{{break}}"
        } else {
            "{{continue}}"
        };
        let next = self.next_non_space();
        if next.kind != Kind::RightDelim {
            return self.unexpected(&next, name);
        }
        if self.range_depth == 0 {
            return Err(Located::new(
                token.pos,
                format!("{name} outside {{{{range}}}}"),
            ));
        }
        Ok(if is_break {
            Node::Break
        } else {
            Node::Continue
        })
    }

    fn control(&mut self, kind: ControlKind, pos: usize) -> Result<Node, Located> {
        self.nest(pos)?;
        let mark = self.vars.len();
        let context = match kind {
            ControlKind::If => "if",
            ControlKind::With => "with",
            ControlKind::Range => "range",
        };
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        if kind == ControlKind::Range {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if kind == ControlKind::Range {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        if let Item::Else(_) = next {
            let peek = self.peek();
            let chained = match (kind, peek.kind) {
                (ControlKind::If, Kind::Keyword(Keyword::If)) => Some(ControlKind::If),
                (ControlKind::With, Kind::Keyword(Keyword::With)) => Some(ControlKind::With),
                _ => None,
            };
            if let Some(chained) = chained {
                let token = self.next();
                else_list = Some(vec![self.control(chained, token.pos)?]);
            } else {
                let (list, end) = self.item_list()?;
                if let Item::Else(pos) = end {
                    return Err(Located::new(pos, "expected end; found {{else}}"));
                }
                else_list = Some(list);
            }
        }
        self.vars.truncate(mark);
        self.depth -= 1;
        Ok(Node::Control(Control {
            kind,
            pipe,
            list,
            else_list,
        }))
    }

    fn template_call(&mut self) -> Result<Node, Located> {
        let token = self.next_non_space();
        if !matches!(token.kind, Kind::String | Kind::RawString) {
            return self.unexpected(&token, "template clause");
        }
        let name = self.template_name(&token)?;
        let pipe = if self.next_non_space().kind != Kind::RightDelim {
            self.backup();
            Some(self.pipeline("template clause", Kind::RightDelim)?)
        } else {
            None
        };
        Ok(Node::Template {
            pos: token.pos,
            name,
            pipe,
        })
    }

    fn block(&mut self, pos: usize) -> Result<Node, Located> {
        self.nest(pos)?;
        let token = self.next_non_space();
        if !matches!(token.kind, Kind::String | Kind::RawString) {
            return self.unexpected(&token, "block clause");
        }
        let name = self.template_name(&token)?;
        let pipe = self.pipeline("block clause", Kind::RightDelim)?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let saved_range = std::mem::take(&mut self.range_depth);
        let (list, end) = self.item_list()?;
        self.vars = saved;
        self.range_depth = saved_range;
        if let Item::Else(pos) = end {
            return Err(Located::new(pos, "unexpected {{else}} in block clause"));
        }
        self.add(&name, list, token.pos)?;
        self.depth -= 1;
        Ok(Node::Template {
            pos: token.pos,
            name,
            pipe: Some(pipe),
        })
    }

    fn pipeline(&mut self, context: &str, end: Kind) -> Result<Pipe, Located> {
        let start = self.peek_non_space();
        let mut pipe = Pipe {
            pos: start.pos,
            decl: Vec::new(),
            is_assign: false,
            cmds: Vec::new(),
        };
        self.declarations(&mut pipe, context)?;
        loop {
            let token = self.next_non_space();
            if token.kind == end {
                break;
            }
            match token.kind {
                Kind::Bool
                | Kind::Char
                | Kind::Number
                | Kind::Dot
                | Kind::Field
                | Kind::Identifier
                | Kind::LeftParen
                | Kind::Nil
                | Kind::RawString
                | Kind::String
                | Kind::Variable => {
                    self.backup();
                    pipe.cmds.push(self.command()?);
                }
                _ => return self.unexpected(&token, context),
            }
        }
        if pipe.cmds.is_empty() {
            return Err(Located::new(
                start.pos,
                format!("missing value for {context}"),
            ));
        }
        for (stage, cmd) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                cmd.args[0],
                Arg::Bool(..) | Arg::Dot(_) | Arg::Nil(_) | Arg::Number(..) | Arg::String { .. }
            ) {
                let message = format!("non executable command in pipeline stage {}", stage + 1);
                return Err(Located::new(cmd.pos, message));
            }
        }
        Ok(pipe)
    }

    fn declarations(&mut self, pipe: &mut Pipe, context: &str) -> Result<(), Located> {
        loop {
            let start = self.index;
            let token = self.next_non_space();
            if token.kind != Kind::Variable {
                self.index = start;
                return Ok(());
            }
            let next = self.peek_non_space();
            match next.kind {
                Kind::Assign | Kind::Declare => {
                    self.next_non_space();
                    pipe.is_assign = next.kind == Kind::Assign;
                    if pipe.is_assign && !self.vars.iter().any(|v| v == token.text) {
                        let message = format!("undefined variable {:?}", token.text);
                        return Err(Located::new(token.pos, message));
                    }
                    pipe.decl.push(token.text.to_owned());
                    if !pipe.is_assign {
                        self.vars.push(token.text.to_owned());
                    }
                    return Ok(());
                }
                Kind::Comma if context == "range" && pipe.decl.is_empty() => {
                    self.next_non_space();
                    pipe.decl.push(token.text.to_owned());
                    self.vars.push(token.text.to_owned());
                    if self.peek_non_space().kind != Kind::Variable {
                        return Err(Located::new(
                            next.pos,
                            "range can only initialize variables",
                        ));
                    }
                }
                Kind::Comma => {
                    let message = format!("too many declarations in {context}");
                    return Err(Located::new(next.pos, message));
                }
                _ => {
                    self.index = start;
                    if !pipe.decl.is_empty() {
                        return Err(Located::new(token.pos, "expected := or = after variables"));
                    }
                    return Ok(());
                }
            }
        }
    }

    fn command(&mut self) -> Result<Command, Located> {
        let pos = self.peek_non_space().pos;
        let mut args = Vec::new();
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                args.push(operand);
            }
            let token = self.next();
            match token.kind {
                Kind::Space => continue,
                Kind::RightDelim | Kind::RightParen => self.backup(),
                Kind::Pipe => {}
                _ => return self.unexpected(&token, "operand"),
            }
            break;
        }
        if args.is_empty() {
            return Err(Located::new(pos, "empty command"));
        }
        Ok(Command { pos, args })
    }

    fn operand(&mut self) -> Result<Option<Arg>, Located> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != Kind::Field {
            return Ok(Some(node));
        }
        let mut fields = Vec::new();
        while self.peek().kind == Kind::Field {
            fields.push(self.next().text[1..].to_owned());
        }
        Ok(Some(match node {
            Arg::Field { pos, mut names } => {
                names.extend(fields);
                Arg::Field { pos, names }
            }
            Arg::Variable {
                pos,
                name,
                fields: mut existing,
            } => {
                existing.extend(fields);
                Arg::Variable {
                    pos,
                    name,
                    fields: existing,
                }
            }
            Arg::Bool(..) | Arg::String { .. } | Arg::Number(..) | Arg::Nil(_) | Arg::Dot(_) => {
                let message = format!("unexpected . after term {:?}", node.to_string());
                return Err(Located::new(node.pos(), message));
            }
            other => Arg::Chain {
                pos: other.pos(),
                node: Box::new(other),
                fields,
            },
        }))
    }

    fn term(&mut self) -> Result<Option<Arg>, Located> {
        let token = self.next_non_space();
        let pos = token.pos;
        let arg = match token.kind {
            Kind::Identifier => {
                if !super::functions::exists(token.text) {
                    let message = format!("function {:?} not defined", token.text);
                    return Err(Located::new(pos, message));
                }
                Arg::Identifier {
                    pos,
                    name: token.text.to_owned(),
                }
            }
            Kind::Dot => Arg::Dot(pos),
            Kind::Nil => Arg::Nil(pos),
            Kind::Variable => {
                if !self.vars.iter().any(|v| v == token.text) {
                    let message = format!("undefined variable {:?}", token.text);
                    return Err(Located::new(pos, message));
                }
                Arg::Variable {
                    pos,
                    name: token.text.to_owned(),
                    fields: Vec::new(),
                }
            }
            Kind::Field => Arg::Field {
                pos,
                names: vec![token.text[1..].to_owned()],
            },
            Kind::Bool => Arg::Bool(pos, token.text == "true"),
            Kind::Number | Kind::Char => {
                let number = parse_number(token.text, token.kind == Kind::Char)
                    .map_err(|message| Located::new(pos, message))?;
                Arg::Number(pos, number)
            }
            Kind::LeftParen => {
                self.nest(pos)?;
                let pipe = self.pipeline("parenthesized pipeline", Kind::RightParen)?;
                self.depth -= 1;
                Arg::Pipe(Box::new(pipe))
            }
            Kind::String | Kind::RawString => {
                let value = unquote_string(token.text).map_err(|m| Located::new(pos, m))?;
                Arg::String {
                    pos,
                    text: token.text.to_owned(),
                    value,
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        };
        Ok(Some(arg))
    }
}
