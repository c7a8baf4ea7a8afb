//! Bounds that keep a hostile template from exhausting the controller: templates are written by
//! anyone allowed to create an ExternalSecret, and a render runs inside the reconcile loop.
//! Upstream has only Go's `maxExecDepth` (100000 nested template calls) and otherwise relies on
//! Go's growable stacks; these limits are far above what real templates use.

/// Nesting of control structures and parenthesised pipelines in one template source.
pub const MAX_PARSE_DEPTH: usize = 100;

/// Nesting of evaluation: `{{template}}` calls, control structures and parenthesised pipelines
/// active at once.
pub const MAX_EXEC_DEPTH: usize = 200;

/// Nodes evaluated in one render (a `range` body counts once per iteration).
pub const MAX_STEPS: u64 = 2_000_000;

/// Bytes one template may write (a whole Kubernetes Secret is at most 1 MiB).
pub const MAX_OUTPUT: usize = 8 * 1024 * 1024;

/// Elements a list-producing function may return (`until`, `seq`, `splitList`, ...), and
/// characters `repeat`, `indent` and friends may produce, in units of elements or bytes.
pub const MAX_ITEMS: usize = 1_000_000;

/// Nesting depth of values (lists in lists, maps in maps) that printing and serializing follow.
pub const MAX_VALUE_DEPTH: usize = 100;
