//! Watches: a chunked stream of `{"type":..,"object":..}` lines fed from the per-resource
//! event history. resourceVersion `""`/`"0"` (or `sendInitialEvents=true`) starts with ADDED
//! events for the current objects; a number resumes after it, or yields an ERROR event with a
//! 410 `Expired` Status when it is older than the kept history. Supports bookmarks (including
//! the `k8s.io/initial-events-end` one), `timeoutSeconds`, and selector transitions (an
//! object leaving the selection is reported DELETED, entering it ADDED).

use crate::read::{Representation, Selection, write_object};
use crate::resources::ResourceInfo;
use crate::server::Server;
use crate::store::{Event, EventKind};
use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Default watch duration when the client sets no timeout (kube-apiserver's
/// `--min-request-timeout`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// Events read from the history per lock.
const BATCH: usize = 512;

/// A watch request.
pub(crate) struct WatchRequest {
    pub info: Arc<ResourceInfo>,
    pub selection: Selection,
    pub resource_version: Option<String>,
    pub bookmarks: bool,
    pub send_initial_events: bool,
    pub timeout: Option<Duration>,
    pub representation: Representation,
}

/// Starts a watch; events arrive on the returned channel until it ends.
pub(crate) fn start(server: Arc<Server>, request: WatchRequest) -> mpsc::Receiver<Bytes> {
    let (sender, receiver) = mpsc::channel(64);
    tokio::spawn(run(server, request, sender));
    receiver
}

async fn run(server: Arc<Server>, request: WatchRequest, sender: mpsc::Sender<Bytes>) {
    let resource = request.info.group_resource();
    let deadline = tokio::time::Instant::now() + request.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let requested = request.resource_version.as_deref().unwrap_or("");
    let initial = requested.is_empty() || requested == "0" || request.send_initial_events;
    let opened = {
        let mut state = server.lock();
        let current = state.store.resource_version();
        let kind = state.store.kind_mut(&resource, request.info.namespaced);
        let since = match requested.parse::<u64>() {
            Ok(version) if !initial => version,
            _ => current,
        };
        if since < kind.floor {
            Err(format!("too old resource version: {since} ({current})"))
        } else {
            let snapshot: Vec<Arc<Value>> = if initial {
                kind.range(
                    request
                        .selection
                        .namespace
                        .as_deref()
                        .filter(|_| request.info.namespaced),
                    None,
                )
                .map(|(_, object)| object.clone())
                .filter(|object| request.selection.matches(object))
                .collect()
            } else {
                Vec::new()
            };
            Ok((since, kind.notify.subscribe(), snapshot))
        }
    };
    let (mut since, mut changes, snapshot) = match opened {
        Ok(opened) => opened,
        Err(message) => {
            let _ = sender.send(expired(&message)).await;
            return;
        }
    };
    for object in snapshot {
        if sender
            .send(encode(&request, EventKind::Added, &object))
            .await
            .is_err()
        {
            return;
        }
    }
    if request.send_initial_events && request.bookmarks {
        let bookmark = bookmark(&request, since, true);
        if sender.send(bookmark).await.is_err() {
            return;
        }
    }
    let mut bookmark_timer = tokio::time::interval_at(
        tokio::time::Instant::now() + server.bookmark_interval,
        server.bookmark_interval,
    );
    let mut shutdown = server.shutdown.clone();
    loop {
        let (events, checked, expired_at) = {
            let state = server.lock();
            let current = state.store.resource_version();
            match state.store.kind(&resource) {
                Some(kind) if since < kind.floor => (Vec::new(), current, Some(current)),
                Some(kind) => (kind.events_after(since, BATCH), current, None),
                None => (Vec::new(), current, None),
            }
        };
        if let Some(current) = expired_at {
            let _ = sender
                .send(expired(&format!(
                    "too old resource version: {since} ({current})"
                )))
                .await;
            return;
        }
        let full = events.len() == BATCH;
        for event in &events {
            since = event.resource_version;
            if let Some(line) = filter(&request, event)
                && sender.send(line).await.is_err()
            {
                return;
            }
        }
        if full {
            continue;
        }
        since = since.max(checked);
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = bookmark_timer.tick() => {
                if request.bookmarks && sender.send(bookmark(&request, since, false)).await.is_err() {
                    return;
                }
            }
            _ = tokio::time::sleep_until(deadline) => return,
            _ = crate::server::stopped(&mut shutdown) => return,
            _ = sender.closed() => return,
        }
    }
}

/// The line to send for an event, if the watch selects it.
fn filter(request: &WatchRequest, event: &Event) -> Option<Bytes> {
    let selection = &request.selection;
    let now = selection.matches(&event.object);
    let before = event
        .previous
        .as_ref()
        .is_some_and(|previous| selection.matches(previous));
    match event.kind {
        EventKind::Added if now => Some(shared(request, event)),
        EventKind::Deleted if now || before => Some(shared(request, event)),
        EventKind::Modified => match (before, now) {
            (true, true) => Some(shared(request, event)),
            (false, true) => Some(encode(request, EventKind::Added, &event.object)),
            (true, false) => {
                let mut last = (**event.previous.as_ref()?).clone();
                last["metadata"]["resourceVersion"] = event.resource_version.to_string().into();
                Some(encode(request, EventKind::Deleted, &last))
            }
            (false, false) => None,
        },
        _ => None,
    }
}

/// The event's line, encoded once for every watcher of the stored version.
fn shared(request: &WatchRequest, event: &Event) -> Bytes {
    let api_version = request.info.api_version();
    match request.representation {
        Representation::Metadata => event
            .encoded_metadata
            .get_or_init(|| encode(request, event.kind, &event.object))
            .clone(),
        Representation::Full
            if event.object["apiVersion"].as_str() == Some(api_version.as_str()) =>
        {
            event
                .encoded
                .get_or_init(|| encode(request, event.kind, &event.object))
                .clone()
        }
        Representation::Full => encode(request, event.kind, &event.object),
    }
}

fn encode(request: &WatchRequest, kind: EventKind, object: &Value) -> Bytes {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.name().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    write_object(&request.info, object, request.representation, &mut out);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn bookmark(request: &WatchRequest, resource_version: u64, initial_events_end: bool) -> Bytes {
    let info = &request.info;
    let mut metadata =
        json!({"resourceVersion": resource_version.to_string(), "creationTimestamp": null});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let object = match request.representation {
        Representation::Full => {
            json!({"kind": info.kind, "apiVersion": info.api_version(), "metadata": metadata})
        }
        Representation::Metadata => {
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": metadata})
        }
    };
    let mut line = serde_json::to_vec(&json!({"type": "BOOKMARK", "object": object}))
        .expect("JSON values serialize");
    line.push(b'\n');
    Bytes::from(line)
}

fn expired(message: &str) -> Bytes {
    let status = crate::errors::ApiError::expired(message).to_status();
    let mut line = serde_json::to_vec(&json!({"type": "ERROR", "object": status}))
        .expect("JSON values serialize");
    line.push(b'\n');
    Bytes::from(line)
}
