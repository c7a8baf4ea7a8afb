//! `whitelist.rules`: which objects (by name, and namespace for ClusterSecretStores) and which
//! properties may be read, as upstream. With rules, a read must satisfy every filter a rule sets
//! for at least one rule; without rules everything may be read. Patterns are compiled once, when
//! the store is checked or the client built.

use external_secrets_crds::v1::CrdProviderWhitelist;
use regex::Regex;

use crate::error::{ProviderError, Result};
use crate::store::StoreKind;

/// One compiled rule; `None` / empty filters do not constrain.
#[derive(Debug)]
struct Rule {
    name: Option<Regex>,
    namespace: Option<Regex>,
    properties: Vec<Regex>,
}

/// The compiled rules of a store.
#[derive(Debug, Default)]
pub(super) struct Whitelist {
    rules: Vec<Rule>,
}

fn compile(pattern: &str, field: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|error| {
        ProviderError::invalid_config(format!(
            "crd: invalid whitelist.{field} regex {pattern:?}: {error}"
        ))
    })
}

fn non_empty(value: Option<&String>) -> Option<&str> {
    value.map(String::as_str).filter(|text| !text.is_empty())
}

impl Whitelist {
    /// Compiles the rules, refusing rules that set no filter (they would allow everything) and
    /// invalid patterns, with upstream's messages.
    pub(super) fn compile(whitelist: Option<&CrdProviderWhitelist>) -> Result<Self> {
        let Some(whitelist) = whitelist else {
            return Ok(Self::default());
        };
        let mut rules = Vec::with_capacity(whitelist.rules.len());
        for (index, rule) in whitelist.rules.iter().enumerate() {
            let name = non_empty(rule.name.as_ref());
            let namespace = non_empty(rule.namespace.as_ref());
            if name.is_none() && namespace.is_none() && rule.properties.is_empty() {
                return Err(ProviderError::invalid_config(format!(
                    "crd: whitelist.rules[{index}]: whitelist rule must define name, namespace, \
                     or properties"
                )));
            }
            let properties = rule
                .properties
                .iter()
                .enumerate()
                .map(|(position, pattern)| {
                    compile(pattern, &format!("rules[{index}].properties[{position}]"))
                })
                .collect::<Result<Vec<_>>>()?;
            rules.push(Rule {
                name: name
                    .map(|pattern| compile(pattern, &format!("rules[{index}].name")))
                    .transpose()?,
                namespace: namespace
                    .map(|pattern| compile(pattern, &format!("rules[{index}].namespace")))
                    .transpose()?,
                properties,
            });
        }
        Ok(Self { rules })
    }

    /// Whether object `name` in `namespace` (empty for cluster-scoped objects), read with
    /// `property` (`None`: the whole object, as find does), is allowed. Namespace filters only
    /// apply to ClusterSecretStores; a property filter never allows whole-object reads.
    pub(super) fn allows(
        &self,
        store_kind: StoreKind,
        name: &str,
        namespace: &str,
        property: Option<&str>,
    ) -> bool {
        if self.rules.is_empty() {
            return true;
        }
        self.rules.iter().any(|rule| {
            if rule.name.as_ref().is_some_and(|re| !re.is_match(name)) {
                return false;
            }
            if store_kind == StoreKind::ClusterSecretStore
                && let Some(re) = &rule.namespace
                && (namespace.is_empty() || !re.is_match(namespace))
            {
                return false;
            }
            if rule.properties.is_empty() {
                return true;
            }
            property.is_some_and(|property| rule.properties.iter().any(|re| re.is_match(property)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::CrdProviderWhitelistRule;

    fn whitelist(rules: Vec<CrdProviderWhitelistRule>) -> Whitelist {
        Whitelist::compile(Some(&CrdProviderWhitelist { rules })).unwrap()
    }

    fn rule(name: &str, namespace: &str, properties: &[&str]) -> CrdProviderWhitelistRule {
        CrdProviderWhitelistRule {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            properties: properties.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    #[test]
    fn no_rules_allow_everything() {
        let open = Whitelist::compile(None).unwrap();
        assert!(open.allows(StoreKind::SecretStore, "any", "ns", None));
    }

    #[test]
    fn a_read_must_pass_every_filter_of_one_rule() {
        use StoreKind::{ClusterSecretStore, SecretStore};
        let rules = whitelist(vec![
            rule("^db-", "", &["^spec\\.password$"]),
            rule("^app$", "^prod$", &[]),
        ]);
        assert!(rules.allows(SecretStore, "db-main", "x", Some("spec.password")));
        assert!(!rules.allows(SecretStore, "db-main", "x", Some("spec.user")));
        // A rule with property filters never allows reading the whole object.
        assert!(!rules.allows(SecretStore, "db-main", "x", None));
        assert!(rules.allows(ClusterSecretStore, "app", "prod", None));
        assert!(!rules.allows(ClusterSecretStore, "app", "dev", None));
        // Cluster-scoped objects never match a namespace filter.
        assert!(!rules.allows(ClusterSecretStore, "app", "", None));
        // SecretStores ignore namespace filters.
        assert!(rules.allows(SecretStore, "app", "dev", None));
        assert!(!rules.allows(SecretStore, "other", "prod", None));
    }
}
