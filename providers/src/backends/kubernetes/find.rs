//! `dataFrom.find` over the Secrets of the remote namespace, as upstream: tags are a label
//! selector (and win over a name), otherwise the name regular expression (unanchored) filters
//! the listed Secrets. Each found Secret is returned as the JSON object of its data, keyed by its
//! name (converted by the find's conversion strategy). `find.path` is not supported; like
//! upstream it is ignored when tags or a name are given.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;

use super::read::data_json;
use crate::error::{ProviderError, Result};
use crate::request::{Find, convert_keys};
use crate::value::{SecretMap, SecretValue};

/// How to list and filter.
#[derive(Debug)]
pub(super) enum Query {
    /// List with this label selector.
    Labels(String),
    /// List everything, keep names matching.
    Name(regex::Regex),
}

impl Query {
    /// The query `find` asks for.
    pub(super) fn of(find: &Find) -> Result<Self> {
        if !find.tags.is_empty() {
            return label_selector(&find.tags).map(Query::Labels);
        }
        if let Some(name) = &find.name {
            let matcher = name.matcher()?;
            return Ok(Query::Name(matcher));
        }
        Err(ProviderError::unsupported(
            "find by path is not supported by the kubernetes provider: use name or tags",
        ))
    }

    /// The label selector to list with (empty: all).
    pub(super) fn selector(&self) -> &str {
        match self {
            Query::Labels(selector) => selector,
            Query::Name(_) => "",
        }
    }

    /// The found secrets among `listed`, converted as `find` says.
    pub(super) fn collect(&self, listed: &[Secret], find: &Find) -> Result<SecretMap> {
        let mut found = SecretMap::new();
        for secret in listed {
            let name = secret.metadata.name.clone().unwrap_or_default();
            if let Query::Name(matcher) = self
                && !matcher.is_match(&name)
            {
                continue;
            }
            found.insert(name, SecretValue::new(data_json(secret)?));
        }
        convert_keys(find.conversion_strategy, found)
    }
}

/// `k1=v1,k2=v2`, refusing keys and values that are not valid label keys and values (so no tag
/// can smuggle in another selector term), as upstream's `ValidatedSelectorFromSet`.
fn label_selector(tags: &BTreeMap<String, String>) -> Result<String> {
    let mut terms = Vec::with_capacity(tags.len());
    for (key, value) in tags {
        if !valid_label_key(key) {
            return Err(ProviderError::invalid_request(format!(
                "unable to validate selector tags: invalid label key {key:?}"
            )));
        }
        if !value.is_empty() && !valid_label_name(value) {
            return Err(ProviderError::invalid_request(format!(
                "unable to validate selector tags: invalid label value {value:?} of key {key:?}"
            )));
        }
        terms.push(format!("{key}={value}"));
    }
    Ok(terms.join(","))
}

/// `[prefix/]name`: the prefix a DNS subdomain, the name a label name.
fn valid_label_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => valid_dns_subdomain(prefix) && valid_label_name(name),
        None => valid_label_name(key),
    }
}

/// At most 63 characters of `[A-Za-z0-9_.-]`, starting and ending alphanumeric.
fn valid_label_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
}

/// At most 253 characters of dot-separated lowercase DNS labels.
fn valid_dns_subdomain(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            let bytes = label.as_bytes();
            !bytes.is_empty()
                && bytes.len() <= 63
                && bytes[0].is_ascii_alphanumeric()
                && bytes[bytes.len() - 1].is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || *byte == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ConversionStrategy;

    #[test]
    fn tags_become_a_validated_label_selector() {
        let tags = BTreeMap::from([
            ("app".to_owned(), "nginx".to_owned()),
            ("example.com/tier".to_owned(), "".to_owned()),
        ]);
        assert_eq!(
            label_selector(&tags).unwrap(),
            "app=nginx,example.com/tier="
        );
        for (key, value) in [("app", "x,other!=y"), ("a b", "x"), ("Example.com/x", "y")] {
            let tags = BTreeMap::from([(key.to_owned(), value.to_owned())]);
            let error = label_selector(&tags).unwrap_err();
            assert!(
                error
                    .message()
                    .starts_with("unable to validate selector tags"),
                "{error}"
            );
        }
    }

    #[test]
    fn tags_win_over_name_and_path_alone_is_unsupported() {
        let mut find = Find::by_name("^db");
        assert!(matches!(Query::of(&find).unwrap(), Query::Name(_)));
        find.tags.insert("app".into(), "db".into());
        assert_eq!(Query::of(&find).unwrap().selector(), "app=db");
        let path = Find {
            path: Some("/x".into()),
            ..Find::default()
        };
        assert_eq!(Query::of(&path).unwrap_err().reason(), "Unsupported");
        assert_eq!(
            Query::of(&Find::by_name("(")).unwrap_err().reason(),
            "InvalidRequest"
        );
    }

    #[test]
    fn found_secrets_are_json_keyed_by_converted_name() {
        let secret = |name: &str| Secret {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.to_owned()),
                ..Default::default()
            },
            data: Some([("token".to_owned(), k8s_openapi::ByteString(b"foo".to_vec()))].into()),
            ..Secret::default()
        };
        let listed = [secret("tls-a"), secret("other"), secret("tls@b")];
        let mut find = Find::by_name("tls");
        find.conversion_strategy = ConversionStrategy::Default;
        let found = Query::of(&find).unwrap().collect(&listed, &find).unwrap();
        let keys: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(keys, ["tls-a", "tls_b"]);
        assert_eq!(found["tls-a"].expose(), br#"{"token":"foo"}"#);
    }
}
