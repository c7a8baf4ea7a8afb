//! One ExternalSecret as the controller's watch cache holds it (issue 24's memory): its
//! metadata as kube-rs' `ObjectMeta` (without managedFields; the watch filter, the queue and
//! ownership read it), what the cache is searched by (target name, store references), and its
//! spec and status as one JSON buffer, packed against [`WORDS`] ([`packed_json`]). The
//! deserialized `ExternalSecret` took about 1.9 KiB per object in the cache (an 832-byte
//! struct, a `Vec` of 192-byte entries and a `String` per field); the buffer is one allocation
//! of a few hundred bytes unpacked and a few dozen to two hundred packed. A reconcile unpacks
//! and decodes it once, a few microseconds against the writes that follow.

use std::borrow::Cow;

use external_secrets_crds::v1::{
    ExternalSecret, ExternalSecretSpec, ExternalSecretStatus, SecretStoreRef,
};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::{Deserialize, Deserializer, Serialize};

use super::{packed_json, read, target};

/// The words of an ExternalSecret's spec and status as this type writes them (field names
/// in their order, well-known values), for [`packed_json`].
const WORDS: &[u8] = concat!(
    r#"{"spec":{"secretStoreRef":{"name":"","kind":"ClusterSecretStore"},"#,
    r#""target":{"name":"","creationPolicy":"Owner","deletionPolicy":"Retain","#,
    r#""template":{"type":"Opaque","engineVersion":"v2","metadata":{"annotations":{},"#,
    r#""labels":{}},"mergePolicy":"Replace","data":{},"templateFrom":[{"configMap":"#,
    r#"{"name":"","items":[{"key":"","templateAs":"Values"}]}}]},"immutable":true},"#,
    r#""refreshPolicy":"Periodic","refreshInterval":"1h0m0s","#,
    r#""data":[{"secretKey":"","remoteRef":{"key":"","property":"","version":"","#,
    r#""conversionStrategy":"Default","decodingStrategy":"None","metadataPolicy":"None"},"#,
    r#""sourceRef":{"storeRef":{"name":"","kind":"SecretStore"},"generatorRef":"#,
    r#"{"apiVersion":"generators.external-secrets.io/v1alpha1","kind":"Password","#,
    r#""name":""}}}],"dataFrom":[{"extract":{"key":""},"find":{"path":"","name":"#,
    r#"{"regexp":""},"tags":{}},"rewrite":[{"regexp":{"source":"","target":""}}]}]},"#,
    r#""status":{"refreshTime":"2026-01-01T00:00:00Z","syncedResourceVersion":"1-","#,
    r#""conditions":[{"type":"Ready","status":"True","reason":"SecretSynced","#,
    r#""message":"secret synced","lastTransitionTime":"2026-01-01T00:00:00Z"}],"#,
    r#""binding":{"name":""}}}"#,
)
.as_bytes();

/// An ExternalSecret compacted for the cache (see the module doc).
#[derive(Debug, Clone)]
pub struct CachedExternalSecret {
    metadata: ObjectMeta,
    /// [`target::target_name`], which related Secrets are matched by.
    target_name: Box<str>,
    /// Every store the ExternalSecret reads from: its default and each entry's `sourceRef`.
    store_refs: Box<[SecretStoreRef]>,
    /// Spec and status, as JSON.
    body: Box<[u8]>,
}

/// The part of an ExternalSecret the buffer holds.
#[derive(Serialize, Deserialize)]
struct Body<S, T> {
    spec: S,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<T>,
}

impl CachedExternalSecret {
    /// Compacts `es`, dropping its managedFields (nothing reads them from a cache).
    pub fn new(es: ExternalSecret) -> Self {
        let target_name = target::target_name(&es).into();
        let store_refs = read::store_references(&es).into();
        let mut metadata = es.metadata;
        metadata.managed_fields = None;
        let body = Body {
            spec: &es.spec,
            status: es.status.as_ref(),
        };
        // Encoding the CRD types cannot fail (string keys, no custom serializers); an empty
        // buffer would fail to decode and be reported by the reconcile.
        let body = packed_json::pack(&serde_json::to_vec(&body).unwrap_or_default(), WORDS);
        Self {
            metadata,
            target_name,
            store_refs,
            body,
        }
    }

    /// The ExternalSecret, decoded for a reconcile.
    pub fn external_secret(&self) -> Result<ExternalSecret, serde_json::Error> {
        let json = packed_json::unpack(&self.body, WORDS).ok_or_else(|| {
            <serde_json::Error as serde::de::Error>::custom("the cached buffer does not unpack")
        })?;
        let body: Body<ExternalSecretSpec, ExternalSecretStatus> = serde_json::from_slice(&json)?;
        Ok(ExternalSecret {
            metadata: self.metadata.clone(),
            spec: body.spec,
            status: body.status,
        })
    }

    /// The name of the ExternalSecret's target Secret.
    pub fn target_name(&self) -> &str {
        &self.target_name
    }

    /// The stores the ExternalSecret reads from.
    pub fn store_refs(&self) -> &[SecretStoreRef] {
        &self.store_refs
    }
}

impl<'de> Deserialize<'de> for CachedExternalSecret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ExternalSecret::deserialize(deserializer).map(Self::new)
    }
}

/// The cache's objects are ExternalSecrets to kube-rs: the same kind, API and metadata.
impl Resource for CachedExternalSecret {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(dynamic: &()) -> Cow<'_, str> {
        ExternalSecret::kind(dynamic)
    }

    fn group(dynamic: &()) -> Cow<'_, str> {
        ExternalSecret::group(dynamic)
    }

    fn version(dynamic: &()) -> Cow<'_, str> {
        ExternalSecret::version(dynamic)
    }

    fn plural(dynamic: &()) -> Cow<'_, str> {
        ExternalSecret::plural(dynamic)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An ExternalSecret using most of the spec, with a status.
    fn full() -> serde_json::Value {
        json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {
                "name": "db", "namespace": "team", "uid": "u-1", "generation": 3,
                "resourceVersion": "17", "labels": {"app": "db"},
                "annotations": {"force-sync": "1"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            },
            "spec": {
                "secretStoreRef": {"name": "vault", "kind": "ClusterSecretStore"},
                "refreshInterval": "15m",
                "refreshPolicy": "Periodic",
                "target": {
                    "name": "db-credentials", "creationPolicy": "Merge", "deletionPolicy": "Retain",
                    "immutable": false,
                    "template": {
                        "type": "kubernetes.io/basic-auth", "engineVersion": "v2",
                        "mergePolicy": "Merge",
                        "metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}},
                        "data": {"url": "postgres://{{ .user }}@db"},
                        "templateFrom": [{"configMap": {"name": "tpl",
                                          "items": [{"key": "k", "templateAs": "Values"}]}}],
                    },
                },
                "data": [
                    {"secretKey": "user", "remoteRef": {"key": "db/user", "property": "name",
                     "version": "2", "conversionStrategy": "Default",
                     "decodingStrategy": "Base64", "metadataPolicy": "None"}},
                    {"secretKey": "token", "remoteRef": {"key": "tok"},
                     "sourceRef": {"storeRef": {"name": "aws", "kind": "SecretStore"}}},
                ],
                "dataFrom": [
                    {"extract": {"key": "db/all"}},
                    {"find": {"name": {"regexp": "^db-"}, "tags": {"team": "a"}},
                     "rewrite": [{"regexp": {"source": "db-(.*)", "target": "$1"}}]},
                    {"sourceRef": {"generatorRef": {"apiVersion":
                        "generators.external-secrets.io/v1alpha1", "kind": "Password",
                        "name": "pw"}}},
                ],
            },
            "status": {
                "refreshTime": "2026-11-25T01:00:00Z",
                "syncedResourceVersion": "3-abc",
                "binding": {"name": "db-credentials"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "SecretSynced",
                                "message": "secret synced",
                                "lastTransitionTime": "2026-11-25T01:00:00Z"}],
            },
        })
    }

    #[test]
    fn the_buffer_decodes_to_the_external_secret_without_managed_fields() {
        let es: ExternalSecret = serde_json::from_value(full()).unwrap();
        let cached: CachedExternalSecret = serde_json::from_value(full()).unwrap();
        let mut expected = es.clone();
        expected.metadata.managed_fields = None;
        assert_eq!(cached.external_secret().unwrap(), expected);
        assert_eq!(cached.meta().uid.as_deref(), Some("u-1"));
        assert!(cached.meta().managed_fields.is_none());

        let mut no_status = es;
        no_status.status = None;
        let cached = CachedExternalSecret::new(no_status.clone());
        assert_eq!(cached.external_secret().unwrap().status, None);
        assert_eq!(cached.external_secret().unwrap().spec, no_status.spec);
    }

    /// The spec and status of a typical synced ExternalSecret pack to under a third of
    /// their JSON (the benchmark's objects: 607 bytes of JSON).
    #[test]
    fn a_typical_body_packs_small() {
        let es: ExternalSecret = serde_json::from_value(json!({
            "apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
            "metadata": {"name": "es-38", "namespace": "team"},
            "spec": {
                "secretStoreRef": {"name": "store", "kind": "SecretStore"},
                "target": {"creationPolicy": "Owner", "deletionPolicy": "Retain"},
                "refreshInterval": "20s",
                "data": [
                    {"secretKey": "a", "remoteRef": {"key": "shared/8"}},
                    {"secretKey": "b", "remoteRef": {"key": "shared/9"}},
                    {"secretKey": "c", "remoteRef": {"key": "own/38"}},
                ],
            },
            "status": {
                "refreshTime": "2026-11-25T04:27:51Z",
                "syncedResourceVersion":
                    "1-f47fe3c0b255b6dd8047cdffa772587bb829efe7a1cb70febeda2eb2",
                "conditions": [{"type": "Ready", "status": "True", "reason": "SecretSynced",
                                "message": "secret synced",
                                "lastTransitionTime": "2026-11-25T04:27:30Z"}],
                "binding": {"name": "es-38"},
            },
        }))
        .unwrap();
        let json = serde_json::to_vec(&Body {
            spec: &es.spec,
            status: es.status.as_ref(),
        })
        .unwrap();
        let cached = CachedExternalSecret::new(es.clone());
        assert!(
            cached.body.len() * 3 < json.len(),
            "{} of {}",
            cached.body.len(),
            json.len()
        );
        assert_eq!(cached.external_secret().unwrap(), es);
    }

    #[test]
    fn the_search_fields_are_kept_outside_the_buffer() {
        let cached: CachedExternalSecret = serde_json::from_value(full()).unwrap();
        assert_eq!(cached.target_name(), "db-credentials");
        let names: Vec<_> = cached
            .store_refs()
            .iter()
            .map(|store| store.name.as_deref().unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            ["vault", "aws"],
            "the default and the entry's own store"
        );

        let mut unnamed = full();
        unnamed["spec"]["target"]
            .as_object_mut()
            .unwrap()
            .remove("name");
        let cached: CachedExternalSecret = serde_json::from_value(unnamed).unwrap();
        assert_eq!(
            cached.target_name(),
            "db",
            "the target defaults to the object's name"
        );
    }
}
