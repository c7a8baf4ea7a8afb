//! The lexer of Go's `text/template`: text and `{{ ... }}` actions (delimiters configurable),
//! the `{{- ` / ` -}}` trim markers (a dash next to the delimiter, then one space), comments
//! `{{/* ... */}}`, and the tokens inside actions. Positions are byte offsets into the source.

use super::error::Located;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    LeftDelim,
    RightDelim,
    Space,
    Identifier,
    Field,
    Variable,
    String,
    RawString,
    Char,
    Number,
    Bool,
    Nil,
    Dot,
    Pipe,
    LeftParen,
    RightParen,
    Assign,
    Declare,
    Comma,
    /// A printable ASCII character with no meaning in an action (the parser rejects it).
    Other,
    Keyword(Keyword),
    Eof,
}

/// The action keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    Block,
    Break,
    Continue,
    Define,
    Else,
    End,
    If,
    Range,
    Template,
    With,
}

/// One token: its kind, where it starts and its text (for Text: after trimming).
#[derive(Clone, Copy, Debug)]
pub struct Token<'a> {
    pub kind: Kind,
    pub pos: usize,
    pub text: &'a str,
}

/// Splits `source` into tokens; the last one is `Eof`.
pub fn lex<'a>(source: &'a str, left: &str, right: &str) -> Result<Vec<Token<'a>>, Located> {
    Lexer {
        source,
        left,
        right,
        tokens: Vec::new(),
        paren_depth: 0,
    }
    .run()
}

struct Lexer<'a, 'd> {
    source: &'a str,
    left: &'d str,
    right: &'d str,
    tokens: Vec<Token<'a>>,
    paren_depth: i32,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl<'a> Lexer<'a, '_> {
    fn emit(&mut self, kind: Kind, start: usize, end: usize) {
        self.tokens.push(Token {
            kind,
            pos: start,
            text: &self.source[start..end],
        });
    }

    fn bytes(&self) -> &'a [u8] {
        self.source.as_bytes()
    }

    fn char_at(&self, pos: usize) -> Option<char> {
        self.source.get(pos..).and_then(|rest| rest.chars().next())
    }

    /// Whether a right delimiter (possibly with its trim marker) starts at `pos`: returns
    /// its total length and whether it trims the following text.
    fn at_right_delim(&self, pos: usize) -> Option<(usize, bool)> {
        let rest = &self.bytes()[pos..];
        if rest.len() >= 2
            && is_space(rest[0])
            && rest[1] == b'-'
            && self.source[pos + 2..].starts_with(self.right)
        {
            return Some((2 + self.right.len(), true));
        }
        self.source[pos..]
            .starts_with(self.right)
            .then_some((self.right.len(), false))
    }

    fn skip_space(&self, mut pos: usize) -> usize {
        while pos < self.source.len() && is_space(self.bytes()[pos]) {
            pos += 1;
        }
        pos
    }

    fn run(mut self) -> Result<Vec<Token<'a>>, Located> {
        let mut pos = 0;
        loop {
            let Some(offset) = self.source[pos..].find(self.left) else {
                if pos < self.source.len() {
                    self.emit(Kind::Text, pos, self.source.len());
                }
                break;
            };
            let delim = pos + offset;
            let after = &self.bytes()[delim + self.left.len()..];
            let trim = after.len() >= 2 && after[0] == b'-' && is_space(after[1]);
            let text = &self.source[pos..delim];
            let text = if trim {
                text.trim_end_matches([' ', '\t', '\r', '\n'])
            } else {
                text
            };
            if !text.is_empty() {
                self.emit(Kind::Text, pos, pos + text.len());
            }
            let mut inside = delim + self.left.len() + if trim { 2 } else { 0 };
            if self.source[inside..].starts_with("/*") {
                pos = self.comment(delim, inside)?;
                continue;
            }
            self.emit(Kind::LeftDelim, delim, delim + self.left.len());
            inside = self.action(inside)?;
            pos = inside;
        }
        self.emit(Kind::Eof, self.source.len(), self.source.len());
        Ok(self.tokens)
    }

    fn comment(&mut self, delim: usize, start: usize) -> Result<usize, Located> {
        let Some(end) = self.source[start + 2..].find("*/") else {
            return Err(Located::new(delim, "unclosed comment"));
        };
        let end = start + 2 + end + 2;
        let Some((length, trim)) = self.at_right_delim(end) else {
            return Err(Located::new(delim, "comment ends before closing delimiter"));
        };
        let next = end + length;
        Ok(if trim { self.skip_space(next) } else { next })
    }

    /// Lexes the inside of an action starting at `pos`; returns where the text resumes.
    fn action(&mut self, mut pos: usize) -> Result<usize, Located> {
        loop {
            if let Some((length, trim)) = self.at_right_delim(pos) {
                if self.paren_depth != 0 {
                    return Err(Located::new(pos, "unclosed left paren"));
                }
                let start = if trim { pos + 1 } else { pos };
                self.emit(Kind::RightDelim, start, pos + length);
                let next = pos + length;
                return Ok(if trim { self.skip_space(next) } else { next });
            }
            let Some(c) = self.char_at(pos) else {
                return Err(Located::new(pos, "unclosed action"));
            };
            pos = match c {
                ' ' | '\t' | '\r' | '\n' => self.space(pos),
                '=' => self.single(Kind::Assign, pos),
                ':' if self.source[pos..].starts_with(":=") => {
                    self.emit(Kind::Declare, pos, pos + 2);
                    pos + 2
                }
                ':' => return Err(Located::new(pos, "expected :=")),
                '|' => self.single(Kind::Pipe, pos),
                ',' => self.single(Kind::Comma, pos),
                '"' => self.quoted(pos, '"', Kind::String, "unterminated quoted string")?,
                '\'' => self.quoted(pos, '\'', Kind::Char, "unterminated character constant")?,
                '`' => self.raw(pos)?,
                '$' => self.word(pos, pos + 1, Kind::Variable)?,
                '.' if self.char_at(pos + 1).is_some_and(|c| c.is_ascii_digit()) => {
                    self.number(pos)?
                }
                '.' => self.word(pos, pos + 1, Kind::Field)?,
                '+' | '-' | '0'..='9' => self.number(pos)?,
                '(' => {
                    self.paren_depth += 1;
                    self.single(Kind::LeftParen, pos)
                }
                ')' => {
                    self.paren_depth -= 1;
                    if self.paren_depth < 0 {
                        return Err(Located::new(pos, "unexpected right paren"));
                    }
                    self.single(Kind::RightParen, pos)
                }
                c if is_alphanumeric(c) => self.identifier(pos)?,
                c if c.is_ascii() && !c.is_ascii_control() => self.single(Kind::Other, pos),
                c => {
                    let message = format!("unrecognized character in action: U+{:04X}", c as u32);
                    return Err(Located::new(pos, message));
                }
            };
        }
    }

    fn single(&mut self, kind: Kind, pos: usize) -> usize {
        let length = self.char_at(pos).map_or(1, char::len_utf8);
        self.emit(kind, pos, pos + length);
        pos + length
    }

    fn space(&mut self, start: usize) -> usize {
        let mut end = self.skip_space(start);
        // A space right before `-}}` belongs to the trim marker.
        if end > start && self.at_right_delim(end - 1).is_some_and(|(_, trim)| trim) {
            end -= 1;
            if end == start {
                return end;
            }
        }
        self.emit(Kind::Space, start, end);
        end
    }

    fn at_terminator(&self, pos: usize) -> bool {
        match self.bytes().get(pos) {
            None => true,
            Some(c) if is_space(*c) || b".,|:()".contains(c) => true,
            _ => self.source[pos..].starts_with(self.right),
        }
    }

    fn scan_alphanumeric(&self, mut pos: usize) -> usize {
        while let Some(c) = self.char_at(pos).filter(|c| is_alphanumeric(*c)) {
            pos += c.len_utf8();
        }
        pos
    }

    fn check_terminator(&self, pos: usize) -> Result<(), Located> {
        if self.at_terminator(pos) {
            return Ok(());
        }
        let c = self.char_at(pos).unwrap_or('\0');
        Err(Located::new(
            pos,
            format!("bad character U+{:04X} '{c}'", c as u32),
        ))
    }

    /// `$name` / `.name`, or `$` / `.` alone.
    fn word(&mut self, start: usize, after: usize, kind: Kind) -> Result<usize, Located> {
        if self.at_terminator(after) {
            self.emit(
                if kind == Kind::Field { Kind::Dot } else { kind },
                start,
                after,
            );
            return Ok(after);
        }
        let end = self.scan_alphanumeric(after);
        self.check_terminator(end)?;
        self.emit(kind, start, end);
        Ok(end)
    }

    fn identifier(&mut self, start: usize) -> Result<usize, Located> {
        let end = self.scan_alphanumeric(start);
        self.check_terminator(end)?;
        let kind = match &self.source[start..end] {
            "block" => Kind::Keyword(Keyword::Block),
            "break" => Kind::Keyword(Keyword::Break),
            "continue" => Kind::Keyword(Keyword::Continue),
            "define" => Kind::Keyword(Keyword::Define),
            "else" => Kind::Keyword(Keyword::Else),
            "end" => Kind::Keyword(Keyword::End),
            "if" => Kind::Keyword(Keyword::If),
            "range" => Kind::Keyword(Keyword::Range),
            "template" => Kind::Keyword(Keyword::Template),
            "with" => Kind::Keyword(Keyword::With),
            "true" | "false" => Kind::Bool,
            "nil" => Kind::Nil,
            _ => Kind::Identifier,
        };
        self.emit(kind, start, end);
        Ok(end)
    }

    fn quoted(
        &mut self,
        start: usize,
        quote: char,
        kind: Kind,
        error: &str,
    ) -> Result<usize, Located> {
        let mut pos = start + 1;
        loop {
            match self.char_at(pos) {
                None | Some('\n') => return Err(Located::new(start, error)),
                Some('\\') => match self.char_at(pos + 1) {
                    None | Some('\n') => return Err(Located::new(start, error)),
                    Some(c) => pos += 1 + c.len_utf8(),
                },
                Some(c) if c == quote => break,
                Some(c) => pos += c.len_utf8(),
            }
        }
        self.emit(kind, start, pos + 1);
        Ok(pos + 1)
    }

    fn raw(&mut self, start: usize) -> Result<usize, Located> {
        let Some(end) = self.source[start + 1..].find('`') else {
            return Err(Located::new(start, "unterminated raw quoted string"));
        };
        let end = start + 1 + end + 1;
        self.emit(Kind::RawString, start, end);
        Ok(end)
    }

    /// Go's `scanNumber`: sign, base prefix, digits with `_`, fraction, exponent.
    fn number(&mut self, start: usize) -> Result<usize, Located> {
        let bytes = self.bytes();
        let mut pos = start;
        let accept = |pos: &mut usize, set: &[u8]| {
            if bytes.get(*pos).is_some_and(|c| set.contains(c)) {
                *pos += 1;
                true
            } else {
                false
            }
        };
        let accept_run = |pos: &mut usize, set: &[u8]| {
            while bytes.get(*pos).is_some_and(|c| set.contains(c)) {
                *pos += 1;
            }
        };
        accept(&mut pos, b"+-");
        let mut digits: &[u8] = b"0123456789_";
        if accept(&mut pos, b"0") {
            if accept(&mut pos, b"xX") {
                digits = b"0123456789abcdefABCDEF_";
            } else if accept(&mut pos, b"oO") {
                digits = b"01234567_";
            } else if accept(&mut pos, b"bB") {
                digits = b"01_";
            }
        }
        accept_run(&mut pos, digits);
        if accept(&mut pos, b".") {
            accept_run(&mut pos, digits);
        }
        if digits.len() == 11 && accept(&mut pos, b"eE") {
            accept(&mut pos, b"+-");
            accept_run(&mut pos, b"0123456789_");
        }
        if digits.len() == 23 && accept(&mut pos, b"pP") {
            accept(&mut pos, b"+-");
            accept_run(&mut pos, b"0123456789_");
        }
        accept(&mut pos, b"i");
        if self.char_at(pos).is_some_and(is_alphanumeric) {
            let end = pos + self.char_at(pos).map_or(1, char::len_utf8);
            let message = format!("bad number syntax: {:?}", &self.source[start..end]);
            return Err(Located::new(start, message));
        }
        self.emit(Kind::Number, start, pos);
        Ok(pos)
    }
}
