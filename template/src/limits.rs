//! Bounds that keep a hostile template from exhausting the controller: templates are written by
//! anyone allowed to create an ExternalSecret (or a webhook store), and a render runs inside the
//! reconcile loop. Upstream has only Go's `maxExecDepth` (100000 nested template calls) and
//! otherwise relies on Go's growable stacks and the API server's object size limit; these
//! limits are far above what real templates use, and exceeding one fails the render with an
//! error naming the limit.
//!
//! Time is bounded by [`MAX_STEPS`] (tree nodes visited) together with [`MAX_WORK`] (data the
//! function calls touch); memory by [`MAX_OUTPUT`], [`MAX_ITEMS`] and [`MAX_WORK`] (every value
//! a function builds is charged before the next call), stack depth by [`MAX_PARSE_DEPTH`],
//! [`MAX_EXEC_DEPTH`] and [`MAX_VALUE_DEPTH`].

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

/// Work units one render may spend in function calls and printing. A call costs 1 plus the
/// size of its arguments and of its result, a printed value its size; size is 1 per value
/// plus 1 per [`BYTES_PER_UNIT`] bytes of string, followed into lists and maps (a value shared
/// in several places counts each time). Functions doing more than linear work charge it too
/// (`uniq`, `without`), and the costly cryptographic ones charge [`COSTLY_CALL`].
pub const MAX_WORK: u64 = 50_000_000;

/// String bytes per work unit.
pub const BYTES_PER_UNIT: u64 = 16;

/// What a call of a costly function costs (bcrypt hashing, PKCS#12 key derivation with up to a
/// million iterations, RSA private-key operations): at most 100 of them per render.
pub const COSTLY_CALL: u64 = MAX_WORK / 100;
