//! Sprig's path functions (Go's `path`; the `os*` variants are the same on Linux, where the
//! controller runs) and `urlParse`/`urlJoin` (Go's `net/url` parsing and `URL.String`).

use std::collections::BTreeMap;

use super::{Arity, Ctx, Entry, FuncError, FuncResult, map, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("base", Arity::Exact(1), |_, a| {
        Ok(Value::str(base(&text(&a[0])?)))
    }),
    ("dir", Arity::Exact(1), |_, a| {
        Ok(Value::str(dir(&text(&a[0])?)))
    }),
    ("clean", Arity::Exact(1), |_, a| {
        Ok(Value::str(clean(&text(&a[0])?)))
    }),
    ("ext", Arity::Exact(1), |_, a| {
        Ok(Value::str(ext(&text(&a[0])?)))
    }),
    ("isAbs", Arity::Exact(1), |_, a| {
        Ok(Value::Bool(string(&a[0])?.starts_with(b"/")))
    }),
    ("osBase", Arity::Exact(1), |_, a| {
        Ok(Value::str(base(&text(&a[0])?)))
    }),
    ("osDir", Arity::Exact(1), |_, a| {
        Ok(Value::str(dir(&text(&a[0])?)))
    }),
    ("osClean", Arity::Exact(1), |_, a| {
        Ok(Value::str(clean(&text(&a[0])?)))
    }),
    ("osExt", Arity::Exact(1), |_, a| {
        Ok(Value::str(ext(&text(&a[0])?)))
    }),
    ("osIsAbs", Arity::Exact(1), |_, a| {
        Ok(Value::Bool(string(&a[0])?.starts_with(b"/")))
    }),
    ("urlParse", Arity::Exact(1), url_parse),
    ("urlJoin", Arity::Exact(1), url_join),
];

/// Go's `path.Clean`.
pub fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    let mut leading_dotdots = 0;
    for element in path.split('/') {
        match element {
            "" | "." => {}
            ".." => {
                if parts.len() > leading_dotdots {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                    leading_dotdots += 1;
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn base(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let trimmed = path.trim_end_matches('/');
    let last = trimmed.rsplit('/').next().unwrap_or("");
    if last.is_empty() {
        "/".into()
    } else {
        last.into()
    }
}

fn dir(path: &str) -> String {
    let cut = path.rfind('/').map_or(0, |index| index + 1);
    clean(&path[..cut])
}

fn ext(path: &str) -> String {
    let last = path.rsplit('/').next().unwrap_or("");
    last.rfind('.')
        .map_or(String::new(), |index| last[index..].to_owned())
}

fn unescape(text: &str) -> Result<String, FuncError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3).filter(|h| h.len() == 2);
            let value = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(value) = value else {
                return Err("unable to parse url: invalid URL escape".into());
            };
            out.push(value);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The parts of a URL as Go's `net/url` splits them.
#[derive(Default)]
struct Url {
    scheme: String,
    opaque: String,
    userinfo: Option<(String, Option<String>)>,
    host: String,
    path: String,
    query: String,
    fragment: String,
}

fn parse(raw: &str) -> Result<Url, FuncError> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("unable to parse url: net/url: invalid control character in URL".into());
    }
    let mut url = Url::default();
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    url.fragment = unescape(fragment)?;
    let mut rest = rest;
    if let Some(colon) = rest.find(':') {
        let candidate = &rest[..colon];
        let valid = candidate
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && candidate
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if colon == 0 {
            return Err("unable to parse url: missing protocol scheme".into());
        }
        if valid {
            url.scheme = candidate.to_ascii_lowercase();
            rest = &rest[colon + 1..];
        }
    }
    let (path_part, query) = rest.split_once('?').unwrap_or((rest, ""));
    url.query = query.to_owned();
    let mut rest = path_part;
    if !rest.starts_with('/') && !url.scheme.is_empty() {
        url.opaque = rest.to_owned();
        return Ok(url);
    }
    if let Some(authority_and_path) = rest.strip_prefix("//") {
        let (authority, path) = match authority_and_path.find('/') {
            Some(index) => authority_and_path.split_at(index),
            None => (authority_and_path, ""),
        };
        let host = match authority.rfind('@') {
            Some(index) => {
                let info = &authority[..index];
                url.userinfo = Some(match info.split_once(':') {
                    Some((user, password)) => (unescape(user)?, Some(unescape(password)?)),
                    None => (unescape(info)?, None),
                });
                &authority[index + 1..]
            }
            None => authority,
        };
        url.host = unescape(host)?;
        rest = path;
    }
    url.path = unescape(rest)?;
    Ok(url)
}

fn escape(text: &str, keep: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric()
            || b"-_.~".contains(&byte)
            || keep.as_bytes().contains(&byte)
        {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn userinfo_string(user: &str, password: Option<&str>) -> String {
    let keep = "$&+,;=";
    let mut out = escape(user, keep);
    if let Some(password) = password {
        out.push(':');
        out.push_str(&escape(password, keep));
    }
    out
}

fn url_parse(ctx: &mut Ctx, args: &[Value]) -> FuncResult {
    let url = parse(&text(&args[0])?)?;
    let hostname = {
        let mut host = url.host.as_str();
        if let Some(colon) = host.rfind(':')
            && host[colon + 1..].bytes().all(|b| b.is_ascii_digit())
        {
            host = &host[..colon];
        }
        host.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
            .to_owned()
    };
    let userinfo = url
        .userinfo
        .as_ref()
        .map_or(String::new(), |(user, password)| {
            userinfo_string(user, password.as_deref())
        });
    let entries: BTreeMap<String, Value> = [
        ("scheme", url.scheme),
        ("host", url.host.clone()),
        ("hostname", hostname),
        ("path", url.path),
        ("query", url.query),
        ("opaque", url.opaque),
        ("fragment", url.fragment),
        ("userinfo", userinfo),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), Value::str(value)))
    .collect();
    Ok(ctx.map(entries))
}

fn url_join(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let dict = map(&args[0])?;
    let dict = dict.borrow();
    let get = |key: &str| -> Result<String, FuncError> {
        match dict.entries.get(key) {
            None => Ok(String::new()),
            Some(Value::Str(bytes)) => Ok(String::from_utf8_lossy(bytes).into_owned()),
            Some(other) => Err(FuncError(format!(
                "unable to parse {key} key, must be of type string, but {} found",
                other.kind_name()
            ))),
        }
    };
    let (scheme, host, path) = (get("scheme")?, get("host")?, get("path")?);
    let (query, opaque, fragment, userinfo) = (
        get("query")?,
        get("opaque")?,
        get("fragment")?,
        get("userinfo")?,
    );
    let mut out = String::new();
    if !scheme.is_empty() {
        out.push_str(&scheme);
        out.push(':');
    }
    if !opaque.is_empty() {
        out.push_str(&opaque);
    } else {
        if (!scheme.is_empty() || !host.is_empty() || !userinfo.is_empty())
            && (!host.is_empty() || !path.is_empty() || !userinfo.is_empty())
        {
            out.push_str("//");
        }
        if !userinfo.is_empty() {
            let parsed = parse(&format!("proto://{userinfo}@host"))?;
            if let Some((user, password)) = parsed.userinfo {
                out.push_str(&userinfo_string(&user, password.as_deref()));
                out.push('@');
            }
        }
        out.push_str(&escape(&host, "!$&'()*+,;=:[]<>\""));
        let escaped_path = escape(&path, "$&+,/:;=@");
        if !escaped_path.is_empty() && !escaped_path.starts_with('/') && !host.is_empty() {
            out.push('/');
        }
        if out.is_empty()
            && escaped_path
                .split('/')
                .next()
                .is_some_and(|s| s.contains(':'))
        {
            out.push_str("./");
        }
        out.push_str(&escaped_path);
    }
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query);
    }
    if !fragment.is_empty() {
        out.push('#');
        out.push_str(&escape(&fragment, "$&+,/:;=?@!()*"));
    }
    Ok(Value::str(out))
}
