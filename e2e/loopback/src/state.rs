//! The server's mutable state behind one mutex: the object store, the resource registry and
//! the garbage-collection work queue, plus the options shared by every write.

use crate::errors::{ApiError, ApiResult};
use crate::resources::{GroupResource, Registry, ResourceInfo, Special};
use crate::schema::RegexCache;
use crate::store::{Store, object_key};
use serde_json::{Value, json};
use std::sync::Arc;

/// `fieldValidation` query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

/// Options of one write request.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteOptions {
    /// `dryRun=All`: validate and answer, store nothing.
    pub dry_run: bool,
    /// The `fieldManager` query parameter.
    pub field_manager: Option<String>,
    /// The manager used when none is given: the User-Agent up to its first `/`.
    pub default_manager: String,
    pub field_validation: FieldValidation,
    /// `status` for writes to the status subresource.
    pub subresource: Option<String>,
    /// For a JSON, merge or strategic-merge patch: the patched object as JSON. kube-apiserver
    /// rejects such a patch under `fieldValidation=Strict` as 422 Invalid quoting it (its
    /// `patch.go`), where a create or update gets 400 BadRequest.
    pub patched: Option<String>,
}

impl WriteOptions {
    /// Options of writes the server makes itself (garbage collector, namespace controller).
    pub(crate) fn internal() -> Self {
        Self {
            default_manager: "kube-controller-manager".into(),
            ..Self::default()
        }
    }

    /// The field manager recorded for an update.
    pub(crate) fn manager(&self) -> String {
        self.field_manager
            .clone()
            .unwrap_or_else(|| self.default_manager.clone())
    }
}

/// The result of a write.
#[derive(Debug)]
pub(crate) struct Written {
    /// The object as stored (or as it would be, for dry runs).
    pub object: Arc<Value>,
    /// `Warning` headers to send (unknown fields under `fieldValidation=Warn`).
    pub warnings: Vec<String>,
    /// Whether the write created the object (201 instead of 200).
    pub created: bool,
}

/// Work for the garbage collector, run at the end of every write.
#[derive(Debug, Clone)]
pub(crate) enum GcWork {
    /// Re-examine the object with this uid (finalizers) and the dependents of this uid.
    Owner(String),
    /// Re-examine one dependent's owners.
    Dependent(GroupResource, String),
    /// Empty a terminating namespace and finish it when empty.
    Namespace(String),
}

/// Everything behind the lock.
pub(crate) struct State {
    pub store: Store,
    pub registry: Registry,
    pub regexes: RegexCache,
    pub gc_queue: Vec<GcWork>,
    /// PEM of the CA that signs the serving certificate: what kube-controller-manager's
    /// root-CA publisher writes into every namespace's `kube-root-ca.crt`.
    pub root_ca: String,
}

/// Namespaces every cluster has.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

impl State {
    /// A state with the built-in kinds and the system namespaces, whose history is compacted so
    /// that watching from resourceVersion "1" is expired as on any long-running cluster.
    pub(crate) fn new(history_limit: usize, root_ca: String) -> Self {
        let mut state = Self {
            store: Store::new(history_limit),
            registry: Registry::with_builtins(),
            regexes: RegexCache::default(),
            gc_queue: Vec::new(),
            root_ca,
        };
        let namespaces = state
            .registry
            .get("", "v1", "namespaces")
            .expect("namespaces are built in");
        for name in SYSTEM_NAMESPACES {
            let namespace =
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            state
                .create(&namespaces, None, namespace, &WriteOptions::internal())
                .expect("creating a system namespace");
        }
        state.store_bootstrap_policy();
        for (resource, namespaced) in state.registry_resources() {
            state.store.kind_mut(&resource, namespaced);
        }
        state.store.compact_all();
        state
    }

    fn registry_resources(&self) -> Vec<(GroupResource, bool)> {
        let mut resources = Vec::new();
        for (group, versions) in self.registry.groups() {
            for version in versions {
                for info in self.registry.resources_of(group, version) {
                    if info.stored() {
                        resources.push((info.group_resource(), info.namespaced));
                    }
                }
            }
        }
        resources
    }

    /// The key of an object, checking the namespace matches the resource's scope.
    pub(crate) fn key(info: &ResourceInfo, namespace: Option<&str>, name: &str) -> String {
        if info.namespaced {
            object_key(namespace.unwrap_or_default(), name)
        } else {
            object_key("", name)
        }
    }

    /// One object, or 404.
    pub(crate) fn get(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Arc<Value>> {
        self.store
            .get(&info.group_resource(), &Self::key(info, namespace, name))
            .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))
    }

    /// Whether a namespace accepts new objects: it must exist and not be terminating.
    pub(crate) fn check_namespace_open(&self, namespace: &str) -> ApiResult<()> {
        let namespaces = GroupResource {
            group: String::new(),
            resource: "namespaces".into(),
        };
        match self.store.get(&namespaces, &object_key("", namespace)) {
            None => Err(ApiError::not_found("", "namespaces", namespace)),
            Some(object) if crate::meta::is_deleting(&object) => Err(ApiError::forbidden(format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ))),
            Some(_) => Ok(()),
        }
    }

    /// The served resource for an owner reference's apiVersion and kind, if any.
    pub(crate) fn find_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let plurals: Vec<Arc<ResourceInfo>> = self.registry.resources_of(group, version);
        plurals
            .into_iter()
            .find(|info| info.kind == kind && info.special != Special::TokenReview)
    }

    /// Runs queued garbage-collection work until none is left.
    pub(crate) fn drain_gc(&mut self) {
        let mut rounds = 0usize;
        while let Some(work) = self.gc_queue.pop() {
            rounds += 1;
            if rounds > 1_000_000 {
                tracing::error!("garbage collection did not settle");
                self.gc_queue.clear();
                break;
            }
            self.collect(work);
        }
    }
}
