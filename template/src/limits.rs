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
//!
//! Steps, output and work are a [`Budget`] that several renders can share: the controller
//! gives every reconcile one, so an object's many templates together stay within one
//! render's limits.

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

/// What is left of the limits for a series of renders that share them: the templates of one
/// object (an ExternalSecret's `template.data`, every `templateFrom` item and literal, its
/// labels and annotations, a generic target's manifest) draw on one budget, so an object with
/// many templates gets no more time or memory than one with a single template. Steps
/// ([`MAX_STEPS`]), written bytes ([`MAX_OUTPUT`]) and work units ([`MAX_WORK`]) are shared;
/// the depth limits and [`MAX_ITEMS`] stay per call. Renders are synchronous, so the budget is
/// a plain cell (`Send`, not `Sync`): one reconcile owns it.
#[derive(Debug)]
pub struct Budget {
    steps: std::cell::Cell<u64>,
    output: std::cell::Cell<usize>,
    work: std::cell::Cell<u64>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            steps: std::cell::Cell::new(MAX_STEPS),
            output: std::cell::Cell::new(MAX_OUTPUT),
            work: std::cell::Cell::new(MAX_WORK),
        }
    }
}

/// The amounts left of a [`Budget`] when a render starts (and what it leaves behind).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Left {
    pub steps: u64,
    pub output: usize,
    pub work: u64,
}

impl Budget {
    /// What is left for the next render.
    pub(crate) fn left(&self) -> Left {
        Left {
            steps: self.steps.get(),
            output: self.output.get(),
            work: self.work.get(),
        }
    }

    /// Records what a render (successful or not) left over.
    pub(crate) fn spent(&self, left: Left) {
        self.steps.set(left.steps);
        self.output.set(left.output);
        self.work.set(left.work);
    }
}
