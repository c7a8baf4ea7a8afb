//! Sprig's regular-expression functions over Go's RE2 syntax (the `regex` crate implements the
//! same syntax and guarantees: linear time, no backreferences). Plain variants fail the render
//! on a bad pattern just as their `must` twins do (Go's `MustCompile` panics); `regexMatch`
//! alone reports `false` instead.

use regex::bytes::{NoExpand, Regex, RegexBuilder};

use super::{Arity, Ctx, Entry, FuncError, FuncResult, int, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("regexMatch", Arity::Exact(2), |_, a| {
        let matched = compile(&a[0])
            .ok()
            .map(|re| Ok::<_, FuncError>(re.is_match(&string(&a[1])?)));
        Ok(Value::Bool(matched.transpose()?.unwrap_or(false)))
    }),
    ("mustRegexMatch", Arity::Exact(2), |_, a| {
        Ok(Value::Bool(compile(&a[0])?.is_match(&string(&a[1])?)))
    }),
    ("regexFindAll", Arity::Exact(3), find_all),
    ("mustRegexFindAll", Arity::Exact(3), find_all),
    ("regexFind", Arity::Exact(2), find),
    ("mustRegexFind", Arity::Exact(2), find),
    ("regexReplaceAll", Arity::Exact(3), |_, a| replace(a, true)),
    ("mustRegexReplaceAll", Arity::Exact(3), |_, a| {
        replace(a, true)
    }),
    ("regexReplaceAllLiteral", Arity::Exact(3), |_, a| {
        replace(a, false)
    }),
    ("mustRegexReplaceAllLiteral", Arity::Exact(3), |_, a| {
        replace(a, false)
    }),
    ("regexSplit", Arity::Exact(3), split),
    ("mustRegexSplit", Arity::Exact(3), split),
    ("regexQuoteMeta", Arity::Exact(1), |_, a| {
        let mut out = Vec::new();
        for byte in string(&a[0])?.iter() {
            if br"\.+*?()|[]{}^$".contains(byte) {
                out.push(b'\\');
            }
            out.push(*byte);
        }
        Ok(Value::str(out))
    }),
];

/// Compiled programs stay small (the `regex` default allows 10 MiB per pattern), so compiling
/// a pattern in every iteration of a loop stays cheap.
const COMPILED_SIZE_LIMIT: usize = 1 << 20;

/// Compiles a pattern; the error leaves the pattern out, since it may come from secret data.
fn compile(pattern: &Value) -> Result<Regex, FuncError> {
    RegexBuilder::new(&text(pattern)?)
        .size_limit(COMPILED_SIZE_LIMIT)
        .dfa_size_limit(COMPILED_SIZE_LIMIT)
        .build()
        .map_err(|_| FuncError("regexp: Compile: error parsing regexp".into()))
}

fn limit(n: i64) -> usize {
    if n < 0 { usize::MAX } else { n as usize }
}

fn find_all(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (re, s, n) = (compile(&args[0])?, string(&args[1])?, int(&args[2])?);
    let found = re
        .find_iter(&s)
        .take(limit(n))
        .map(|m| Value::str(m.as_bytes()))
        .collect();
    Ok(Value::list(found))
}

fn find(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (re, s) = (compile(&args[0])?, string(&args[1])?);
    Ok(Value::str(re.find(&s).map_or(&[][..], |m| m.as_bytes())))
}

fn replace(args: &[Value], expand: bool) -> FuncResult {
    let (re, s, replacement) = (compile(&args[0])?, string(&args[1])?, string(&args[2])?);
    let out = if expand {
        re.replace_all(&s, &replacement[..]).into_owned()
    } else {
        re.replace_all(&s, NoExpand(&replacement)).into_owned()
    };
    super::check_size(out.len())?;
    Ok(Value::str(out))
}

/// Go's `Regexp.Split(s, n)`.
fn split(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (re, s, n) = (compile(&args[0])?, string(&args[1])?, int(&args[2])?);
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    if !re.as_str().is_empty() && s.is_empty() {
        return Ok(Value::list(vec![Value::str("")]));
    }
    let mut parts = Vec::new();
    let (mut begin, mut end) = (0, 0);
    for found in re.find_iter(&s).take(limit(n)) {
        if n > 0 && parts.len() as i64 == n - 1 {
            break;
        }
        end = found.start();
        if found.end() != 0 {
            parts.push(Value::str(&s[begin..end]));
        }
        begin = found.end();
    }
    if end != s.len() {
        parts.push(Value::str(&s[begin..]));
    }
    Ok(Value::list(parts))
}
