//! Reading: selections (namespace, label and field selectors), paginated lists with
//! continue tokens, and the JSON encoding of objects and lists at the requested version.
//!
//! Lists always read the current state: a continue token resumes after the last key it
//! returned and reports the first page's resourceVersion, but does not pin a snapshot.

use crate::errors::{ApiError, ApiResult};
use crate::query::Query;
use crate::resources::{ResourceInfo, Special};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::state::State;
use crate::store::object_key;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::Arc;

/// Which objects a list, watch or deletecollection concerns.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

/// Fields beyond `metadata.name`/`metadata.namespace` a kind can be selected by.
fn selectable_fields(info: &ResourceInfo) -> &'static [&'static str] {
    const EVENT_FIELDS: &[&str] = &[
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
        "reason",
        "reportingComponent",
        "reportingController",
        "type",
    ];
    match info.special {
        Special::Secret => &["type"],
        Special::Namespace => &["status.phase"],
        Special::None if info.plural == "events" => EVENT_FIELDS,
        _ => &[],
    }
}

impl Selection {
    /// The selection of a request.
    pub(crate) fn parse(
        info: &ResourceInfo,
        namespace: Option<&str>,
        query: &Query,
    ) -> ApiResult<Self> {
        Ok(Self {
            namespace: namespace.map(str::to_owned),
            labels: LabelSelector::parse(&query.label_selector)?,
            fields: FieldSelector::parse(
                &query.field_selector,
                &info.kind,
                selectable_fields(info),
            )?,
        })
    }

    /// Whether an object is selected.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        if let Some(namespace) = &self.namespace
            && object["metadata"]["namespace"].as_str() != Some(namespace.as_str())
        {
            return false;
        }
        (self.labels.is_empty() || self.labels.matches(object["metadata"].get("labels")))
            && self.fields.matches(object)
    }
}

/// One page of a list.
pub(crate) struct Page {
    pub items: Vec<Arc<Value>>,
    pub resource_version: u64,
    pub continue_token: Option<String>,
}

impl State {
    /// Lists the selected objects, `limit` at a time.
    pub(crate) fn list(
        &self,
        info: &ResourceInfo,
        selection: &Selection,
        limit: Option<usize>,
        continue_token: Option<&str>,
    ) -> ApiResult<Page> {
        let (resource_version, after) = match continue_token {
            Some(token) => decode_continue(token)?,
            None => (self.store.resource_version(), None),
        };
        let mut items = Vec::new();
        let mut continue_with = None;
        if let Some(kind) = self.store.kind(&info.group_resource()) {
            let namespace = if info.namespaced {
                selection.namespace.as_deref()
            } else {
                None
            };
            if let (Some(name), Some(namespace), None) =
                (selection.fields.exact_name(), namespace, &after)
            {
                let key = object_key(namespace, name);
                items.extend(
                    kind.objects
                        .get(&key)
                        .filter(|o| selection.matches(o))
                        .cloned(),
                );
            } else if let (Some(name), false, None) =
                (selection.fields.exact_name(), info.namespaced, &after)
            {
                items.extend(
                    kind.objects
                        .get(&object_key("", name))
                        .filter(|o| selection.matches(o))
                        .cloned(),
                );
            } else {
                let mut last_key: Option<&String> = None;
                for (key, object) in kind.range(namespace, after.as_deref()) {
                    if !selection.matches(object) {
                        continue;
                    }
                    if limit.is_some_and(|limit| items.len() >= limit) {
                        continue_with = last_key.cloned();
                        break;
                    }
                    items.push(object.clone());
                    last_key = Some(key);
                }
            }
        }
        Ok(Page {
            items,
            resource_version,
            continue_token: continue_with.map(|key| encode_continue(resource_version, &key)),
        })
    }
}

fn encode_continue(resource_version: u64, key: &str) -> String {
    URL_SAFE_NO_PAD
        .encode(json!({"v": "meta.k8s.io/v1", "rv": resource_version, "start": key}).to_string())
}

fn decode_continue(token: &str) -> ApiResult<(u64, Option<String>)> {
    let invalid = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| invalid())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    let resource_version = value["rv"].as_u64().ok_or_else(invalid)?;
    let start = value["start"].as_str().ok_or_else(invalid)?.to_owned();
    Ok((resource_version, Some(start)))
}

/// How objects are sent: whole, or as `meta.k8s.io/v1` PartialObjectMetadata (asked for with
/// `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Representation {
    Full,
    Metadata,
}

impl Representation {
    /// The representation an `Accept` header asks for.
    pub(crate) fn from_accept(accept: &str) -> Self {
        if accept
            .split(',')
            .next()
            .is_some_and(|first| first.contains("as=PartialObjectMetadata"))
        {
            Self::Metadata
        } else {
            Self::Full
        }
    }
}

/// Writes an object as the requested version (and representation) serves it.
pub(crate) fn write_object(
    info: &ResourceInfo,
    object: &Value,
    representation: Representation,
    out: &mut Vec<u8>,
) {
    let api_version = info.api_version();
    if representation == Representation::Metadata {
        let partial = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]});
        serde_json::to_writer(&mut *out, &partial).expect("JSON values serialize");
    } else if object["apiVersion"].as_str() == Some(api_version.as_str()) || info.is_review() {
        serde_json::to_writer(&mut *out, object).expect("JSON values serialize");
    } else {
        let mut converted = object.clone();
        converted["apiVersion"] = api_version.into();
        serde_json::to_writer(&mut *out, &converted).expect("JSON values serialize");
    }
}

/// Encodes one object.
pub(crate) fn encode_object(
    info: &ResourceInfo,
    object: &Value,
    representation: Representation,
) -> Bytes {
    let mut out = Vec::with_capacity(512);
    write_object(info, object, representation, &mut out);
    Bytes::from(out)
}

/// Encodes a list page.
pub(crate) fn encode_list(
    info: &ResourceInfo,
    page: &Page,
    representation: Representation,
) -> Bytes {
    let mut metadata = json!({"resourceVersion": page.resource_version.to_string()});
    if let Some(token) = &page.continue_token {
        metadata["continue"] = token.clone().into();
    }
    let (kind, api_version) = match representation {
        Representation::Full => (format!("{}List", info.kind), info.api_version()),
        Representation::Metadata => (
            "PartialObjectMetadataList".to_owned(),
            "meta.k8s.io/v1".to_owned(),
        ),
    };
    let mut out = Vec::with_capacity(256 + page.items.len() * 512);
    out.extend_from_slice(
        format!("{{\"kind\":\"{kind}\",\"apiVersion\":\"{api_version}\",\"metadata\":").as_bytes(),
    );
    serde_json::to_writer(&mut out, &metadata).expect("JSON values serialize");
    out.extend_from_slice(b",\"items\":[");
    for (index, item) in page.items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_object(info, item, representation, &mut out);
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
}

/// Encodes a list of objects that is not paginated (deletecollection's answer).
pub(crate) fn encode_items(
    info: &ResourceInfo,
    items: Vec<Arc<Value>>,
    resource_version: u64,
) -> Bytes {
    encode_list(
        info,
        &Page {
            items,
            resource_version,
            continue_token: None,
        },
        Representation::Full,
    )
}
