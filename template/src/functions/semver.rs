//! Sprig's `semver` and `semverCompare` with Masterminds/semver v3 rules: `v` prefixes and
//! missing minor/patch accepted, constraints joined by `,`/space (and) and `||` (or), operators
//! `= != > < >= <= ~ ~> ^`, wildcards `x X *`, hyphen ranges, and pre-releases matching only
//! constraints that name one. `semver` returns a map with Go's `Version` accessors as keys
//! (`.Major`, `.Minor`, `.Patch`, `.Prerelease`, `.Metadata`, `.Original`).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{Arity, Entry, FuncError, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("semver", Arity::Exact(1), |ctx, a| {
        let original = text(&a[0])?;
        let version = Version::parse(&original)?;
        let entries: BTreeMap<String, Value> = [
            ("Major", Value::Int(version.major as i64)),
            ("Minor", Value::Int(version.minor as i64)),
            ("Patch", Value::Int(version.patch as i64)),
            ("Prerelease", Value::str(&version.prerelease)),
            ("Metadata", Value::str(&version.metadata)),
            ("Original", Value::str(&original)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        Ok(ctx.map(entries))
    }),
    ("semverCompare", Arity::Exact(2), |_, a| {
        let constraints = parse_constraints(&text(&a[0])?)?;
        let version = Version::parse(&text(&a[1])?)?;
        Ok(Value::Bool(
            constraints
                .iter()
                .any(|group| group.iter().all(|c| c.check(&version))),
        ))
    }),
];

const VERSION: &str = r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const CONSTRAINT_VERSION: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPERATORS: &str = r"(=>|=<|~>|!=|>=|<=|=|>|<|~|\^|)";

static VERSION_REGEX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^{VERSION}$")).expect("valid"));
static CONSTRAINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^\s*{OPERATORS}\s*({CONSTRAINT_VERSION})\s*$")).expect("valid")
});
static FIND: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"{OPERATORS}\s*({CONSTRAINT_VERSION})")).expect("valid"));
static RANGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\s*({CONSTRAINT_VERSION})\s+-\s+({CONSTRAINT_VERSION})\s*"
    ))
    .expect("valid")
});

#[derive(Debug, Clone)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    prerelease: String,
    metadata: String,
}

impl Version {
    fn parse(text: &str) -> Result<Version, FuncError> {
        let captures = VERSION_REGEX
            .captures(text)
            .ok_or_else(|| FuncError::from("Invalid Semantic Version"))?;
        let part = |index: usize| -> Result<u64, FuncError> {
            match captures.get(index) {
                None => Ok(0),
                Some(m) => m
                    .as_str()
                    .trim_start_matches('.')
                    .parse()
                    .map_err(|_| "Invalid Semantic Version".into()),
            }
        };
        Ok(Version {
            major: part(1)?,
            minor: part(2)?,
            patch: part(3)?,
            prerelease: captures
                .get(5)
                .map_or(String::new(), |m| m.as_str().to_owned()),
            metadata: captures
                .get(8)
                .map_or(String::new(), |m| m.as_str().to_owned()),
        })
    }

    fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| compare_prerelease(&self.prerelease, &other.prerelease))
    }
}

fn compare_prerelease(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (a_parts, b_parts): (Vec<&str>, Vec<&str>) =
        (a.split('.').collect(), b.split('.').collect());
    for (x, y) in a_parts.iter().zip(b_parts.iter()) {
        let ordering = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(i), Ok(j)) => i.cmp(&j),
            (Ok(_), Err(_)) => Ordering::Less,
            (Err(_), Ok(_)) => Ordering::Greater,
            _ => x.cmp(y),
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    a_parts.len().cmp(&b_parts.len())
}

struct Constraint {
    operator: String,
    version: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

fn is_x(part: &str) -> bool {
    matches!(part, "x" | "X" | "*")
}

/// Masterminds' errors quote the constraint; these do not, since it may come from secret data.
fn parse_constraints(text: &str) -> Result<Vec<Vec<Constraint>>, FuncError> {
    let rewritten = RANGE.replace_all(text, ">= ${1}, <= ${11}").into_owned();
    rewritten
        .split("||")
        .map(|group| {
            let found: Vec<&str> = FIND.find_iter(group).map(|m| m.as_str()).collect();
            if found.is_empty() && !group.trim().is_empty() {
                return Err(FuncError("improper constraint".into()));
            }
            if found.is_empty() {
                return Ok(vec![Constraint {
                    operator: String::new(),
                    version: Version::parse("0.0.0")?,
                    dirty: true,
                    minor_dirty: false,
                    patch_dirty: false,
                }]);
            }
            found.into_iter().map(parse_constraint).collect()
        })
        .collect()
}

fn parse_constraint(text: &str) -> Result<Constraint, FuncError> {
    let captures = CONSTRAINT
        .captures(text)
        .ok_or_else(|| FuncError("improper constraint".into()))?;
    let get = |index: usize| captures.get(index).map_or("", |m| m.as_str());
    let (major, minor, patch, pre) = (get(3), get(4), get(5), get(6));
    let (mut dirty, mut minor_dirty, mut patch_dirty) = (false, false, false);
    let version = if is_x(major) || major.is_empty() {
        dirty = true;
        format!("0.0.0{pre}")
    } else if is_x(minor.trim_start_matches('.')) {
        dirty = true;
        minor_dirty = true;
        format!("{major}.0.0{pre}")
    } else if is_x(patch.trim_start_matches('.')) {
        dirty = true;
        patch_dirty = true;
        format!("{major}{minor}.0{pre}")
    } else {
        get(2).to_owned()
    };
    Ok(Constraint {
        operator: get(1).to_owned(),
        version: Version::parse(&version)?,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        let c = &self.version;
        if !v.prerelease.is_empty() && c.prerelease.is_empty() {
            return false;
        }
        match self.operator.as_str() {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            "!=" => {
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    if self.minor_dirty {
                        return false;
                    }
                    if c.minor != v.minor {
                        return true;
                    }
                    if self.patch_dirty {
                        return false;
                    }
                }
                v.compare(c) != Ordering::Equal
            }
            ">" => {
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                if self.patch_dirty {
                    return v.minor > c.minor;
                }
                v.compare(c) == Ordering::Greater
            }
            "<" => v.compare(c) == Ordering::Less,
            ">=" | "=>" => v.compare(c) != Ordering::Less,
            "<=" | "=<" => {
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            "~" | "~>" => self.tilde(v),
            _ => self.caret(v),
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        c.patch == v.patch
    }
}
