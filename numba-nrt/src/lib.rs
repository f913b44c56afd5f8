//! # numba-nrt
//!
//! The runtime JIT-compiled code calls (seed 004), Numba's NRT in Rust:
//!
//! - [`MemInfo`]: a memory block with an atomic reference count, its data pointer and size,
//!   an optional destructor with its `dtor_info`, and the external allocator it came from;
//!   laid out as Numba's `NRT_MemInfo`.
//! - Making them: [`NRT_MemInfo_alloc`] (the `(size, align)` call generated code emits),
//!   [`NRT_MemInfo_alloc_aligned`], [`NRT_MemInfo_alloc_safe_aligned`] (0xCB / 0xDE fills
//!   for debugging), [`NRT_MemInfo_alloc_external`] and its aligned variants over an
//!   [`NRT_ExternalAllocator`], and [`NRT_MemInfo_new`] wrapping existing data with a
//!   destructor.
//! - Owning them: [`NRT_MemInfo_acquire`] / [`NRT_MemInfo_release`] (Numba's: release
//!   drops a reference and destroys at zero), the same as [`NRT_incref`] / [`NRT_decref`]
//!   that the compiler emits; [`NRT_MemInfo_call_dtor`] destroys at once. Queries:
//!   [`NRT_MemInfo_data`], [`NRT_MemInfo_size`], [`NRT_MemInfo_refcount`],
//!   [`NRT_MemInfo_external_allocator`].
//! - Plain memory: [`NRT_Allocate`] / [`NRT_Free`].
//! - The allocation counters (alloc, free, mi_alloc, mi_free), always on, that tests use to
//!   prove no leak ([`allocation_stats`]); counted per thread and summed on reading
//!   (`stats`), so counting costs no locked instruction.
//! - The C API for externally compiled code: the [`NRT_api_functions`] table as in Numba's
//!   `nrt_external.h`, [`NRT_get_api`], and the header itself (`include/nrt_external.h`,
//!   [`NRT_EXTERNAL_H`], [`include_dir`]).
//! - [`nrt_unresolved_abort`], the target of symbols left unresolved in JIT code.
//! - [`runtime_symbols`], the (name, address) table numba-lower maps into the JIT.
//! - [`stack_guard`]: calls into compiled code that turn running out of stack into a
//!   status (Python's `RecursionError`) instead of a crash.
//! - [`parallel`]: the thread pool that runs parfor bodies (`parallel=True`), with
//!   Numba's thread-count, thread-id and chunk-size API.
//!
//! Plain Rust with `extern "C"` entry points so lowered code and C can call them; a leaf
//! crate. Not here: refcount pruning (numba-lower), CPython adapters (numba-py), resizable
//! (`varsize`) buffers, a replaceable system allocator.
//!
//! # Example
//!
//! What compiled code does with an array's buffer: allocate a MemInfo, take and drop
//! references, and free it on the last release; the counters see exactly one block and
//! one MemInfo come and go.
//!
//! ```rust
//! use numba_nrt::*;
//!
//! let before = allocation_stats();
//! let mi = NRT_MemInfo_alloc(100, 32);
//! assert!(!mi.is_null());
//! // SAFETY: `mi` is live until its last release below.
//! unsafe {
//!     assert_eq!(NRT_MemInfo_refcount(mi), 1);
//!     assert_eq!(NRT_MemInfo_size(mi), 100);
//!     assert_eq!(NRT_MemInfo_data(mi).addr() % 32, 0);
//!     NRT_incref(mi);
//!     assert_eq!(NRT_MemInfo_refcount(mi), 2);
//!     NRT_decref(mi);
//!     let live = allocation_stats();
//!     assert_eq!((live.mi_alloc - before.mi_alloc, live.mi_free - before.mi_free), (1, 0));
//!     NRT_MemInfo_release(mi); // the last reference: destroyed and freed
//! }
//! let after = allocation_stats();
//! assert_eq!(after.alloc - before.alloc, after.free - before.free);
//! assert_eq!((after.mi_alloc - before.mi_alloc, after.mi_free - before.mi_free), (1, 1));
//! ```

mod alloc;
mod api;
mod meminfo;
pub mod parallel;
pub mod stack_guard;
mod stats;

use std::io::Write;

pub use alloc::{
    allocation_stats, tune_malloc, AllocationStats, ExternalFree, ExternalMalloc, ExternalRealloc,
    NRT_Allocate, NRT_ExternalAllocator, NRT_Free, NRT_Reallocate,
};
pub use api::{
    include_dir, nrt_allocate, nrt_manage_memory, ManagedDestructor, NRT_api_functions,
    NRT_get_api, NRT_EXTERNAL_H,
};
pub use meminfo::{
    Destructor, MemInfo, NRT_MemInfo_acquire, NRT_MemInfo_alloc, NRT_MemInfo_alloc_aligned,
    NRT_MemInfo_alloc_aligned_external, NRT_MemInfo_alloc_external, NRT_MemInfo_alloc_safe_aligned,
    NRT_MemInfo_alloc_safe_aligned_external, NRT_MemInfo_call_dtor, NRT_MemInfo_data,
    NRT_MemInfo_external_allocator, NRT_MemInfo_new, NRT_MemInfo_refcount, NRT_MemInfo_release,
    NRT_MemInfo_size, NRT_decref, NRT_incref, DEFAULT_ALIGN,
};
pub use parallel::{
    numba_rs_get_num_threads, numba_rs_get_parallel_chunksize, numba_rs_get_thread_id,
    numba_rs_parallel_for, numba_rs_parfor_divisions, numba_rs_parfor_scratch,
    numba_rs_parfor_scratch_free, numba_rs_set_num_threads, numba_rs_set_parallel_chunksize,
};

/// Report a broken runtime invariant on stderr and abort the process.
pub(crate) fn fatal(msg: &str) -> ! {
    // Nothing more can be done if stderr is gone.
    let _ = writeln!(std::io::stderr(), "Fatal numba-rs NRT error: {msg}");
    std::process::abort()
}

/// The message [`nrt_unresolved_abort`] prints.
pub const UNRESOLVED_SYMBOL_MESSAGE: &str = "numba-rs jitted function aborted due to unresolved \
     symbol: it called a function that was never compiled (e.g. one of a pair of mutually \
     recursive functions whose compilation failed)";

/// What a symbol left unresolved in JIT code points at until the function it names is
/// compiled (Numba's `nrt_unresolved_abort`): reports [`UNRESOLVED_SYMBOL_MESSAGE`] on
/// stderr and aborts. It takes no arguments, so calling it with any is harmless.
///
/// (Numba's raises `RuntimeError` through its calling convention instead; that needs the
/// exception record of numba-lower's convention, which this leaf crate does not know.)
#[no_mangle]
pub extern "C" fn nrt_unresolved_abort() -> ! {
    fatal(UNRESOLVED_SYMBOL_MESSAGE)
}

/// The runtime functions generated code may call, by symbol name, for mapping into a JIT
/// (Python loads extension modules with `RTLD_LOCAL`, so they cannot be found by name).
pub fn runtime_symbols() -> Vec<(&'static str, usize)> {
    macro_rules! symbols {
        ($($f:ident),* $(,)?) => {
            vec![$((stringify!($f), $f as *const () as usize)),*]
        };
    }
    // The scheduler under Numba's names, as its parfor launches call it (and as tests
    // reading the LLVM look for): `_unsigned` for loops whose index starts at a known
    // non-negative constant, `_signed` otherwise. Both take a range length, which is
    // never negative, so one function serves both.
    let scheduler = numba_rs_parfor_divisions as *const () as usize;
    let mut table = vec![
        ("do_scheduling_signed", scheduler),
        ("do_scheduling_unsigned", scheduler),
    ];
    table.extend(symbols![
        NRT_Allocate,
        NRT_Free,
        NRT_MemInfo_alloc,
        NRT_MemInfo_alloc_aligned,
        NRT_MemInfo_alloc_safe_aligned,
        NRT_MemInfo_alloc_external,
        NRT_MemInfo_alloc_aligned_external,
        NRT_MemInfo_alloc_safe_aligned_external,
        NRT_MemInfo_new,
        NRT_MemInfo_acquire,
        NRT_MemInfo_release,
        NRT_MemInfo_call_dtor,
        NRT_incref,
        NRT_decref,
        NRT_MemInfo_data,
        NRT_MemInfo_size,
        NRT_MemInfo_refcount,
        NRT_MemInfo_external_allocator,
        NRT_get_api,
        nrt_unresolved_abort,
        numba_rs_parallel_for,
        numba_rs_get_num_threads,
        numba_rs_get_thread_id,
        numba_rs_parfor_scratch,
        numba_rs_parfor_scratch_free,
        numba_rs_set_num_threads,
        numba_rs_set_parallel_chunksize,
        numba_rs_get_parallel_chunksize,
    ]);
    // Data: the inline threshold generated code loads (by name, so that code saved to
    // an on-disk cache finds it in the next process).
    table.push((
        parallel::INLINE_WORK_SYMBOL,
        parallel::inline_work_address(),
    ));
    table
}
