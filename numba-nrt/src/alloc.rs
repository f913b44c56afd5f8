//! Plain allocations and the allocation counters.
//!
//! Every block the NRT hands out — a [`NRT_Allocate`] block, a MemInfo header with its
//! data, a header alone for [`crate::NRT_MemInfo_new`], a block from an external allocator
//! — counts one `alloc` when it is obtained and one `free` when it is given back; MemInfo
//! headers also count `mi_alloc` / `mi_free`. Numba only counts when stats are enabled; here
//! they are always on, counted per thread (`stats`) so that counting costs no locked
//! instruction. Unlike Numba, a failed allocation is not counted, so the counters
//! balance exactly when nothing leaks.

use std::ffi::c_void;

use crate::stats::{count, Counter};

/// Allocation counters, as `rtsys.get_allocation_stats()` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocationStats {
    /// Blocks obtained (plain, MemInfo, external).
    pub alloc: usize,
    /// Blocks given back.
    pub free: usize,
    /// MemInfo headers initialised.
    pub mi_alloc: usize,
    /// MemInfo headers destroyed.
    pub mi_free: usize,
}

/// The current counters.
pub fn allocation_stats() -> AllocationStats {
    let [alloc, free, mi_alloc, mi_free] = crate::stats::totals();
    AllocationStats {
        alloc,
        free,
        mi_alloc,
        mi_free,
    }
}

/// `malloc` of an external allocator: `size` bytes, or null (C99 `malloc` semantics).
pub type ExternalMalloc = unsafe extern "C" fn(size: usize, opaque_data: *mut c_void) -> *mut u8;
/// `realloc` of an external allocator (unused by the NRT so far, kept for the layout).
pub type ExternalRealloc =
    unsafe extern "C" fn(ptr: *mut u8, new_size: usize, opaque_data: *mut c_void) -> *mut u8;
/// `free` of an external allocator.
pub type ExternalFree = unsafe extern "C" fn(ptr: *mut u8, opaque_data: *mut c_void);

/// An allocator supplied from outside (Numba's `NRT_ExternalAllocator`, C name
/// `struct ExternalMemAllocator`): three functions and the opaque pointer passed to each.
///
/// A MemInfo allocated through one keeps a pointer to it and gives its block back through
/// `free`, so the allocator must outlive every MemInfo allocated with it. The functions are
/// nullable in C; the NRT refuses (returns null) an allocator whose `malloc` or `free` is
/// null.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NRT_ExternalAllocator {
    pub malloc: Option<ExternalMalloc>,
    pub realloc: Option<ExternalRealloc>,
    pub free: Option<ExternalFree>,
    pub opaque_data: *mut c_void,
}

extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
}

/// Keep freed memory in glibc's heap between calls (process start-up, once): an mmap
/// threshold of 32 MiB and a trim threshold of 64 MiB, the values glibc's own dynamic
/// thresholds reach after the process frees a large block. Without them, a call that
/// makes and frees a few hundred thousand small strings (a `split` of 1 MB) gave its heap
/// back to the system as it returned and page-faulted it in again on the next call: 14
/// to 80 `brk` calls a call, half of split's time (`docs/measurements.md`). A threshold
/// the user set (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`) is left alone.
/// Nothing happens off glibc.
pub fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(
                param: std::os::raw::c_int,
                value: std::os::raw::c_int,
            ) -> std::os::raw::c_int;
        }
        const M_TRIM_THRESHOLD: std::os::raw::c_int = -1;
        const M_MMAP_THRESHOLD: std::os::raw::c_int = -3;
        let user_set = ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
        if !user_set {
            // SAFETY: mallopt only changes glibc's tuning parameters.
            unsafe {
                mallopt(M_MMAP_THRESHOLD, 32 << 20);
                mallopt(M_TRIM_THRESHOLD, 64 << 20);
            }
        }
    }
}

/// The alignment C's `malloc` guarantees on the 64-bit targets numba-rs builds for
/// (`alignof(max_align_t)`).
pub(crate) const MALLOC_ALIGN: usize = 16;

/// Allocate `size` bytes of plain memory (Numba's `NRT_Allocate`): C's `malloc`, so
/// 16-byte aligned, with nothing in front (small blocks stay in malloc's smallest size
/// classes, as Numba's do), counted in `alloc`. Returns null when memory is exhausted.
#[no_mangle]
pub extern "C" fn NRT_Allocate(size: usize) -> *mut u8 {
    // SAFETY: malloc takes any size; a zero-byte request asks for one so that a non-null
    // result is always a distinct block.
    let p = unsafe { malloc(size.max(1)) } as *mut u8;
    if !p.is_null() {
        count(Counter::Alloc);
    }
    p
}

/// Free a block from [`NRT_Allocate`], counted in `free`.
///
/// # Safety
/// `ptr` must be null or a block from [`NRT_Allocate`] not freed before.
#[no_mangle]
pub unsafe extern "C" fn NRT_Free(ptr: *mut u8) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: the caller guarantees ptr came from NRT_Allocate (C's malloc).
    unsafe { free(ptr as *mut c_void) };
    count(Counter::Free);
}

/// Resize a block from [`NRT_Allocate`] to `size` bytes, keeping its contents (the
/// allocator may grow it in place); a null `ptr` allocates. The counters are unchanged
/// (one block before, one after). Null when memory is exhausted: `ptr` is then intact.
///
/// # Safety
/// `ptr` must be null or a live block from [`NRT_Allocate`].
#[no_mangle]
pub unsafe extern "C" fn NRT_Reallocate(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        return NRT_Allocate(size);
    }
    // SAFETY: ptr is a live malloc block; realloc keeps it intact when it fails.
    unsafe { realloc(ptr as *mut c_void, size.max(1)) as *mut u8 }
}

/// Obtain `size` bytes from `allocator`, or from [`NRT_Allocate`] when it is null (Numba's
/// `NRT_Allocate_External`). Counted in `alloc` on success; null on failure.
///
/// # Safety
/// `allocator` must be null or point to a valid [`NRT_ExternalAllocator`].
pub(crate) unsafe fn allocate_block(
    size: usize,
    allocator: *const NRT_ExternalAllocator,
) -> *mut u8 {
    // SAFETY: guaranteed by the caller.
    let Some(a) = (unsafe { allocator.as_ref() }) else {
        return NRT_Allocate(size);
    };
    let (Some(malloc), Some(_)) = (a.malloc, a.free) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the allocator's contract is C's malloc.
    let p = unsafe { malloc(size, a.opaque_data) };
    if !p.is_null() {
        count(Counter::Alloc);
    }
    p
}

/// Give back a block from [`allocate_block`] with the same `allocator`; counted in `free`.
///
/// # Safety
/// `ptr` must come from [`allocate_block`] with this `allocator` and not be freed before.
pub(crate) unsafe fn free_block(ptr: *mut u8, allocator: *const NRT_ExternalAllocator) {
    // SAFETY: guaranteed by the caller.
    match unsafe { allocator.as_ref() } {
        // SAFETY: ptr is an NRT_Allocate block.
        None => unsafe { NRT_Free(ptr) },
        Some(a) => {
            // allocate_block only succeeds when `free` is set; if the caller has cleared it
            // since, the block cannot be given back and stays counted as live.
            if let Some(free) = a.free {
                // SAFETY: ptr came from this allocator's malloc.
                unsafe { free(ptr, a.opaque_data) };
                count(Counter::Free);
            }
        }
    }
}
