//! The allocation counters behind `rtsys.get_allocation_stats()`.
//!
//! Each thread counts in its own counters, which only it writes: a count is a plain
//! load and store, not a locked read-modify-write. Four shared atomic increments per
//! block made and freed cost more than the small allocation itself (a string built per
//! loop iteration spent half its time in them). A reader sums every live thread's
//! counters and those of threads that have exited (folded in when they exit), under the
//! registry's lock, so the sums balance exactly when nothing leaks.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// One set of counters.
#[derive(Default)]
pub(crate) struct Counters {
    alloc: AtomicUsize,
    free: AtomicUsize,
    mi_alloc: AtomicUsize,
    mi_free: AtomicUsize,
}

/// Which counter an event bumps.
#[derive(Clone, Copy)]
pub(crate) enum Counter {
    /// A block obtained (plain, MemInfo, external).
    Alloc,
    /// A block given back.
    Free,
    /// A MemInfo header initialised.
    MiAlloc,
    /// A MemInfo header destroyed.
    MiFree,
}

impl Counters {
    const fn new() -> Self {
        Counters {
            alloc: AtomicUsize::new(0),
            free: AtomicUsize::new(0),
            mi_alloc: AtomicUsize::new(0),
            mi_free: AtomicUsize::new(0),
        }
    }

    fn get(&self, which: Counter) -> &AtomicUsize {
        match which {
            Counter::Alloc => &self.alloc,
            Counter::Free => &self.free,
            Counter::MiAlloc => &self.mi_alloc,
            Counter::MiFree => &self.mi_free,
        }
    }

    /// Add `other`'s counts into these (shared counters: atomic adds).
    fn absorb(&self, other: &Counters) {
        for which in [
            Counter::Alloc,
            Counter::Free,
            Counter::MiAlloc,
            Counter::MiFree,
        ] {
            self.get(which)
                .fetch_add(other.get(which).load(Relaxed), Relaxed);
        }
    }
}

/// Every live thread's counters.
static LIVE: Mutex<Vec<Arc<Counters>>> = Mutex::new(Vec::new());

/// Counts of exited threads, and counts made while a thread's own counters were gone
/// (allocations freed by destructors that run after its thread-locals'). Changed only
/// with atomic adds.
static RETIRED: Counters = Counters::new();

/// A thread's counters; folded into [`RETIRED`] when the thread exits.
struct Local(Arc<Counters>);

impl Drop for Local {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        RETIRED.absorb(&self.0);
        live.retain(|c| !Arc::ptr_eq(c, &self.0));
    }
}

thread_local! {
    static LOCAL: Local = {
        let c = Arc::new(Counters::default());
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(c.clone());
        Local(c)
    };
}

/// Count one event on this thread.
#[inline]
pub(crate) fn count(which: Counter) {
    let counted = LOCAL.try_with(|l| {
        // Only this thread writes its counters: no read-modify-write needed.
        let c = l.0.get(which);
        c.store(c.load(Relaxed) + 1, Relaxed);
    });
    if counted.is_err() {
        RETIRED.get(which).fetch_add(1, Relaxed);
    }
}

/// The sums over every thread: `(alloc, free, mi_alloc, mi_free)`.
pub(crate) fn totals() -> [usize; 4] {
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let sum = |which: Counter| {
        live.iter()
            .map(|c| c.get(which).load(Relaxed))
            .sum::<usize>()
            + RETIRED.get(which).load(Relaxed)
    };
    [
        sum(Counter::Alloc),
        sum(Counter::Free),
        sum(Counter::MiAlloc),
        sum(Counter::MiFree),
    ]
}
