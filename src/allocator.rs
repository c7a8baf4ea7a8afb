//! How the process's heap is kept close to what it holds (glibc malloc, which the image's
//! distroless base and the builder link).
//!
//! Why: the controller's caches are many small, long-lived objects, allocated from whichever
//! thread a watch or reconcile ran on. glibc gives each such thread an arena of its own (up to
//! eight per core), lets large freed buffers raise its mmap threshold so later ones land in
//! the arenas too, and keeps freed memory inside the arenas. At 10,000 ExternalSecrets the
//! scale benchmark measured 65 MiB of anonymous memory with glibc's defaults and 54 MiB with
//! these settings (issue 24). So the controller uses one arena (its threads are the runtime's
//! workers, one per core it may use, and they wait on the network far more than on malloc's
//! lock), maps buffers of 512 KiB and more on their own so that freeing them unmaps them
//! (list pages, the `/metrics` page), and now and then returns the free pages inside the arena
//! ([`trim_now_and_then`]).
//!
//! Elsewhere (musl, other systems) nothing is tuned and these functions do nothing.

use std::time::Duration;

/// Buffers at least this large are mapped on their own and unmapped when freed; glibc's
/// default starts at 128 KiB but then grows to whatever was last freed, up to 32 MiB. At
/// 128 KiB the controller spent 7% more CPU mapping and unmapping list pages for 1.3 MiB less.
const MMAP_THRESHOLD: usize = 512 * 1024;

/// Free memory at the top of the arena is returned at once above this; below it, by the
/// periodic trim ([`trim_now_and_then`]), so a buffer freed and allocated again in a burst
/// does not move the heap's end each time.
const TRIM_THRESHOLD: usize = 4 * 1024 * 1024;

/// How often the arena's free memory is looked at.
const TRIM_EVERY: Duration = Duration::from_secs(15);

/// Free memory inside the arena worth a trim: below it the walk is not worth its time.
const TRIM_ABOVE: usize = 4 * 1024 * 1024;

/// Applies the settings; must run before the process starts any thread, because arenas are
/// handed out as threads first allocate.
pub fn configure() {
    glibc::configure(MMAP_THRESHOLD, TRIM_THRESHOLD);
}

/// Returns the arena's free pages to the kernel every [`TRIM_EVERY`] while more than
/// [`TRIM_ABOVE`] is free; runs until dropped.
pub async fn trim_now_and_then() {
    let mut every = tokio::time::interval(TRIM_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let free = glibc::free_in_arenas();
        if free > TRIM_ABOVE {
            let released = glibc::trim();
            tracing::debug!(
                free,
                released,
                "returned the heap's free pages to the kernel"
            );
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::ffi::c_int;

    /// One arena and fixed thresholds: setting either threshold also stops glibc from
    /// raising them on its own.
    pub fn configure(mmap_threshold: usize, trim_threshold: usize) {
        let bytes = |threshold: usize| c_int::try_from(threshold).unwrap_or(c_int::MAX);
        // SAFETY: mallopt only changes malloc's parameters, takes plain integers, and is
        // called from `main` before any other thread exists.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
            libc::mallopt(libc::M_MMAP_THRESHOLD, bytes(mmap_threshold));
            libc::mallopt(libc::M_TRIM_THRESHOLD, bytes(trim_threshold));
        }
    }

    /// Bytes free inside the arenas (not yet returned to the kernel).
    pub fn free_in_arenas() -> usize {
        // SAFETY: mallinfo2 takes no arguments and only reads malloc's state under its locks.
        unsafe { libc::mallinfo2() }.fordblks
    }

    /// Returns every whole free page of the arenas to the kernel; whether any was returned.
    pub fn trim() -> bool {
        // SAFETY: malloc_trim takes malloc's locks itself; 0 keeps no extra padding.
        unsafe { libc::malloc_trim(0) == 1 }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod glibc {
    pub fn configure(_mmap_threshold: usize, _trim_threshold: usize) {}

    pub fn free_in_arenas() -> usize {
        0
    }

    pub fn trim() -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    /// Freed blocks between live ones are returned by a trim: the call reaches glibc, and
    /// glibc reports that it gave pages back.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn trim_returns_free_pages_between_live_blocks() {
        let blocks: Vec<Box<[u8; 1000]>> = (0..20_000).map(|_| Box::new([7u8; 1000])).collect();
        // Keep every hundredth block, so the freed ones sit between live ones, not at the top.
        let kept: Vec<_> = blocks.into_iter().step_by(100).collect();
        assert!(super::glibc::free_in_arenas() > 10 * 1024 * 1024);
        assert!(super::glibc::trim(), "nothing was returned");
        assert!(kept.iter().all(|block| block[999] == 7));
    }
}
