//! Splitting a template into text and actions, and actions into tokens (Go's lexer rules for
//! the supported subset: trim markers, comments, quoted and raw strings, numbers, fields).

use super::Value;

/// A token of an action.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Dot,
    Root,
    Variable(String),
    Declare,
    Assign,
    Comma,
    Field(String),
    Ident(String),
    Literal(Value),
    Pipe,
    Open,
    Close,
}

/// Text pieces and the token lists of actions, with trim markers applied.
pub(super) enum Piece {
    Text(String),
    Action(Vec<(Token, bool)>),
}

pub(super) fn split_actions(source: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = source;
    let mut trim_next_text = false;
    loop {
        let Some(start) = rest.find("{{") else {
            push_text(&mut pieces, rest, trim_next_text);
            return Ok(pieces);
        };
        let mut inner = &rest[start + 2..];
        let trim_before = inner.starts_with('-') && inner[1..].starts_with(char::is_whitespace);
        let mut text = &rest[..start];
        if trim_before {
            text = text.trim_end();
            inner = &inner[1..];
        }
        push_text(&mut pieces, text, trim_next_text);
        let end = find_action_end(inner).ok_or("unclosed action")?;
        let mut content = &inner[..end];
        trim_next_text =
            content.ends_with('-') && content[..content.len() - 1].ends_with(char::is_whitespace);
        if trim_next_text {
            content = &content[..content.len() - 1];
        }
        rest = &inner[end + 2..];
        let trimmed = content.trim();
        if trimmed.starts_with("/*") {
            if !trimmed.ends_with("*/") {
                return Err("unclosed comment".to_owned());
            }
            continue;
        }
        pieces.push(Piece::Action(lex(content)?));
    }
}

fn push_text(pieces: &mut Vec<Piece>, text: &str, trim_start: bool) {
    let text = if trim_start { text.trim_start() } else { text };
    if !text.is_empty() {
        pieces.push(Piece::Text(text.to_owned()));
    }
}

/// The offset of the `}}` closing an action, skipping quoted strings.
fn find_action_end(inner: &str) -> Option<usize> {
    let bytes = inner.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'"' => {
                index += 1;
                while index < bytes.len() && bytes[index] != b'"' {
                    index += if bytes[index] == b'\\' { 2 } else { 1 };
                }
            }
            b'`' => {
                index += 1;
                while index < bytes.len() && bytes[index] != b'`' {
                    index += 1;
                }
            }
            b'}' if bytes.get(index + 1) == Some(&b'}') => return Some(index),
            _ => {}
        }
        index += 1;
    }
    None
}

/// Tokens of one action, each with whether whitespace preceded it.
fn lex(content: &str) -> Result<Vec<(Token, bool)>, String> {
    let mut tokens = Vec::new();
    let characters: Vec<char> = content.chars().collect();
    let mut index = 0;
    let mut spaced = true;
    while index < characters.len() {
        let character = characters[index];
        if character.is_whitespace() {
            spaced = true;
            index += 1;
            continue;
        }
        let is_ident = |c: char| c.is_alphanumeric() || c == '_';
        let take_ident = |from: usize| {
            let mut end = from;
            while end < characters.len() && is_ident(characters[end]) {
                end += 1;
            }
            (characters[from..end].iter().collect::<String>(), end)
        };
        let token = match character {
            '|' => {
                index += 1;
                Token::Pipe
            }
            '(' => {
                index += 1;
                Token::Open
            }
            ')' => {
                index += 1;
                Token::Close
            }
            '.' => {
                let (name, end) = take_ident(index + 1);
                index = end.max(index + 1);
                if name.is_empty() {
                    Token::Dot
                } else {
                    Token::Field(name)
                }
            }
            '$' => {
                let (name, end) = take_ident(index + 1);
                index = end.max(index + 1);
                if name.is_empty() {
                    Token::Root
                } else {
                    Token::Variable(name)
                }
            }
            ':' if characters.get(index + 1) == Some(&'=') => {
                index += 2;
                Token::Declare
            }
            '=' => {
                index += 1;
                Token::Assign
            }
            ',' => {
                index += 1;
                Token::Comma
            }
            '"' => {
                let (text, end) = lex_quoted(&characters, index)?;
                index = end;
                Token::Literal(Value::Str(text))
            }
            '`' => {
                let close = characters[index + 1..]
                    .iter()
                    .position(|c| *c == '`')
                    .ok_or("unterminated raw string")?;
                let text = characters[index + 1..index + 1 + close].iter().collect();
                index += close + 2;
                Token::Literal(Value::Str(text))
            }
            c if c.is_ascii_digit()
                || (c == '-' && characters.get(index + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let (digits, end) = take_ident(index + 1);
                let text = format!("{c}{digits}");
                index = end;
                Token::Literal(Value::Int(
                    text.parse()
                        .map_err(|_| format!("bad number syntax: {text}"))?,
                ))
            }
            c if is_ident(c) => {
                let (name, end) = take_ident(index);
                index = end;
                match name.as_str() {
                    "true" => Token::Literal(Value::Bool(true)),
                    "false" => Token::Literal(Value::Bool(false)),
                    "nil" => Token::Literal(Value::Nil),
                    _ => Token::Ident(name),
                }
            }
            other => return Err(format!("unexpected {other:?} in action")),
        };
        tokens.push((token, spaced));
        spaced = false;
    }
    Ok(tokens)
}

fn lex_quoted(characters: &[char], start: usize) -> Result<(String, usize), String> {
    let mut text = String::new();
    let mut index = start + 1;
    loop {
        let character = *characters.get(index).ok_or("unterminated quoted string")?;
        index += 1;
        match character {
            '"' => return Ok((text, index)),
            '\\' => {
                let escape = *characters.get(index).ok_or("unterminated quoted string")?;
                index += 1;
                let hex = |count: usize, index: &mut usize| -> Result<char, String> {
                    let digits: String = characters
                        .get(*index..*index + count)
                        .ok_or("bad escape")?
                        .iter()
                        .collect();
                    *index += count;
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| "bad escape".to_owned())
                };
                text.push(match escape {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    '\\' => '\\',
                    '"' => '"',
                    '\'' => '\'',
                    'x' => hex(2, &mut index)?,
                    'u' => hex(4, &mut index)?,
                    'U' => hex(8, &mut index)?,
                    other => return Err(format!("unknown escape \\{other}")),
                });
            }
            other => text.push(other),
        }
    }
}
