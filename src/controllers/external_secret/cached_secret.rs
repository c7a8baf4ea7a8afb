//! One managed Secret as the managed-Secret cache holds it (issue 24's memory): name, namespace
//! and resource version as they are, and the rest of its trimmed metadata (labels,
//! annotations, owner references, finalizers, the managedFields the decisions read) as one
//! JSON buffer, packed against [`WORDS`] ([`packed_json`]). kube-rs' `ObjectMeta` costs about
//! 2.5 KiB per Secret in a cache (a B-tree node per map, a `String` per field, a copy of the
//! resource version in the cache's key); the buffer is one allocation of a few hundred bytes
//! unpacked and about two hundred packed (most of the rest is the data-hash and uid). It is
//! decoded when a reconcile looks its target up, a few microseconds against the writes that
//! follow. No Secret payload is held.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::Lookup;
use kube::runtime::watcher;

use super::packed_json;
use super::secret_meta::{SecretMeta, trim};

/// The words of a managed Secret's trimmed metadata as this type writes it (field names in
/// their order, the labels, annotations and field paths ExternalSecrets set), for
/// [`packed_json`].
const WORDS: &[u8] = concat!(
    r#"{"annotations":{"reconcile.external-secrets.io/data-hash":""},"#,
    r#""finalizers":["external-secrets.io/"],"#,
    r#""labels":{"reconcile.external-secrets.io/created-by":"","#,
    r#""reconcile.external-secrets.io/managed":"true"},"#,
    r#""managedFields":[{"fieldsV1":["f:metadata
f:labels
f:reconcile.external-secrets.io/created-by","#,
    r#""f:metadata
f:labels
f:reconcile.external-secrets.io/managed","#,
    r#""f:metadata
f:annotations
f:reconcile.external-secrets.io/data-hash","#,
    r#""f:metadata
f:finalizers
","f:data
f:*"],"#,
    r#""manager":"externalsecrets.external-secrets.io/","operation":"Apply"},"#,
    r#"{"fieldsV1":["f:data
f:*"],"manager":"kubectl-edit","operation":"Update"}],"#,
    r#""ownerReferences":[{"apiVersion":"external-secrets.io/v1","blockOwnerDeletion":true,"#,
    r#""controller":true,"kind":"ExternalSecret","name":"","uid":""}]}"#,
)
.as_bytes();

/// A managed Secret's metadata, compacted for the cache (see the module doc).
#[derive(Debug, Clone)]
pub struct CachedSecret {
    name: Box<str>,
    namespace: Box<str>,
    resource_version: Box<str>,
    /// The trimmed metadata without name, namespace and resource version, as JSON.
    rest: Box<[u8]>,
}

impl CachedSecret {
    /// Trims (see [`trim`]) and compacts the metadata of a watched or written Secret.
    pub fn new(mut meta: SecretMeta) -> Self {
        trim(&mut meta);
        let mut metadata = meta.metadata;
        let take = |field: &mut Option<String>| field.take().unwrap_or_default().into();
        let name = take(&mut metadata.name);
        let namespace = take(&mut metadata.namespace);
        let resource_version = take(&mut metadata.resource_version);
        // Encoding a plain `ObjectMeta` cannot fail (string keys, no custom serializers).
        let rest = packed_json::pack(&serde_json::to_vec(&metadata).unwrap_or_default(), WORDS);
        Self {
            name,
            namespace,
            resource_version,
            rest,
        }
    }

    /// The resource version the metadata is of.
    pub fn resource_version(&self) -> &str {
        &self.resource_version
    }

    /// The metadata as kube-rs' type, for the decisions. `None` only if the buffer does not
    /// decode, which a buffer this type encoded always does.
    pub fn metadata(&self) -> Option<SecretMeta> {
        let json = packed_json::unpack(&self.rest, WORDS)?;
        let mut metadata: ObjectMeta = serde_json::from_slice(&json).ok()?;
        metadata.name = Some(self.name.to_string());
        metadata.namespace = Some(self.namespace.to_string());
        metadata.resource_version = Some(self.resource_version.to_string());
        Some(PartialObjectMeta {
            types: None,
            metadata,
            _phantom: std::marker::PhantomData,
        })
    }

    /// The Secret's namespace and name.
    pub fn key(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }
}

/// The cache is keyed by namespace and name only: the key does not keep its own copy of the
/// resource version and uid as a kube-rs resource's would.
impl Lookup for CachedSecret {
    type DynamicType = ();

    fn kind(_: &()) -> Cow<'_, str> {
        "Secret".into()
    }

    fn group(_: &()) -> Cow<'_, str> {
        "".into()
    }

    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }

    fn plural(_: &()) -> Cow<'_, str> {
        "secrets".into()
    }

    fn name(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(&self.name))
    }

    fn namespace(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(&self.namespace))
    }

    fn resource_version(&self) -> Option<Cow<'_, str>> {
        None
    }

    fn uid(&self) -> Option<Cow<'_, str>> {
        None
    }
}

/// A watch event of the managed-Secret watch, compacted for the cache.
pub fn compact(event: watcher::Event<SecretMeta>) -> watcher::Event<CachedSecret> {
    match event {
        watcher::Event::Apply(meta) => watcher::Event::Apply(CachedSecret::new(meta)),
        watcher::Event::Delete(meta) => watcher::Event::Delete(CachedSecret::new(meta)),
        watcher::Event::InitApply(meta) => watcher::Event::InitApply(CachedSecret::new(meta)),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_compact_form_decodes_to_the_trimmed_metadata() {
        let meta: SecretMeta = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {
                "name": "db", "namespace": "team", "resourceVersion": "42", "uid": "u-1",
                "labels": {"reconcile.external-secrets.io/managed": "true"},
                "annotations": {"reconcile.external-secrets.io/data-hash": "abc"},
                "ownerReferences": [{"apiVersion": "external-secrets.io/v1",
                                     "kind": "ExternalSecret", "name": "db", "uid": "u-2",
                                     "controller": true}],
                "finalizers": ["example.com/keep"],
                "managedFields": [{"manager": "externalsecrets.external-secrets.io/db",
                                   "operation": "Apply", "fieldsType": "FieldsV1",
                                   "fieldsV1": {"f:data": {"f:password": {}}}}],
            },
        }))
        .unwrap();
        let mut trimmed = meta.clone();
        trim(&mut trimmed);
        let cached = CachedSecret::new(meta);
        assert_eq!(cached.key(), ("team", "db"));
        assert_eq!(cached.resource_version(), "42");
        assert_eq!(cached.metadata().unwrap().metadata, trimmed.metadata);
        assert!(trimmed.metadata.uid.is_none(), "trimming drops the uid");
        assert!(trimmed.metadata.owner_references.is_some());
    }

    /// A typical managed Secret's trimmed metadata packs to under a third of its JSON (the
    /// benchmark's Secrets: 789 bytes of JSON).
    #[test]
    fn typical_metadata_packs_small() {
        let hash = "ab063d367806e2a6921f9b2a425abb6f2b7ab287ead0becad079bbcc";
        let meta: SecretMeta = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {
                "name": "es-50", "namespace": "team", "resourceVersion": "20931",
                "uid": "5f0a7a56-3f55-4d8e-9d1c-0b7e2b0f4c11",
                "creationTimestamp": "2026-11-25T04:27:30Z",
                "labels": {"reconcile.external-secrets.io/created-by": hash,
                           "reconcile.external-secrets.io/managed": "true"},
                "annotations": {"reconcile.external-secrets.io/data-hash": hash},
                "ownerReferences": [{"apiVersion": "external-secrets.io/v1",
                                     "kind": "ExternalSecret", "name": "es-50",
                                     "uid": "9361727a-94f9-434f-abca-3a33055727cc",
                                     "controller": true, "blockOwnerDeletion": true}],
                "managedFields": [{"manager": "externalsecrets.external-secrets.io/es-50",
                                   "operation": "Apply", "fieldsType": "FieldsV1",
                                   "time": "2026-11-25T04:27:30Z",
                                   "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}, "f:c": {}},
                                     "f:metadata": {
                                       "f:annotations": {
                                         "f:reconcile.external-secrets.io/data-hash": {}},
                                       "f:labels": {
                                         "f:reconcile.external-secrets.io/created-by": {},
                                         "f:reconcile.external-secrets.io/managed": {}}},
                                     "f:type": {}}}],
            },
        }))
        .unwrap();
        let cached = CachedSecret::new(meta.clone());
        let mut trimmed = meta;
        trim(&mut trimmed);
        let unpacked = cached.metadata().unwrap().metadata;
        assert_eq!(unpacked, trimmed.metadata);
        let mut rest = unpacked;
        (rest.name, rest.namespace, rest.resource_version) = (None, None, None);
        let json = serde_json::to_vec(&rest).unwrap();
        assert!(
            cached.rest.len() * 3 < json.len(),
            "{} of {}",
            cached.rest.len(),
            json.len()
        );
    }

    #[test]
    fn the_cache_key_holds_no_version() {
        let meta: SecretMeta = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "namespace": "team", "resourceVersion": "7"},
        }))
        .unwrap();
        let reference = CachedSecret::new(meta).to_object_ref(());
        assert_eq!(reference.name, "db");
        assert_eq!(reference.namespace.as_deref(), Some("team"));
        assert!(reference.extra.resource_version.is_none());
    }
}
