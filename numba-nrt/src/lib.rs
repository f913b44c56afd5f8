//! # numba-nrt
//!
//! The runtime JIT-compiled code calls (seed 004): [`MemInfo`] blocks with an atomic
//! reference count, a destructor and their data, allocated through [`NRT_MemInfo_alloc`] and
//! released by [`NRT_MemInfo_release`] / [`NRT_decref`]; and the allocation counters
//! (alloc, free, mi_alloc, mi_free) that tests use to prove no leak ([`allocation_stats`]).
//!
//! Plain Rust with `extern "C"` entry points so lowered code can call them; a leaf crate.
//! Not yet here: external allocators, `manage_memory`, the C API table and header, refcount
//! pruning (it belongs to numba-lower), and the parallel thread pool.

use std::alloc::{alloc, dealloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

static ALLOC: AtomicUsize = AtomicUsize::new(0);
static FREE: AtomicUsize = AtomicUsize::new(0);
static MI_ALLOC: AtomicUsize = AtomicUsize::new(0);
static MI_FREE: AtomicUsize = AtomicUsize::new(0);

/// Allocation counters, as `rtsys.get_allocation_stats()` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocationStats {
    pub alloc: usize,
    pub free: usize,
    pub mi_alloc: usize,
    pub mi_free: usize,
}

/// The current counters.
pub fn allocation_stats() -> AllocationStats {
    AllocationStats {
        alloc: ALLOC.load(Ordering::SeqCst),
        free: FREE.load(Ordering::SeqCst),
        mi_alloc: MI_ALLOC.load(Ordering::SeqCst),
        mi_free: MI_FREE.load(Ordering::SeqCst),
    }
}

/// Destructor called with the data pointer, the size and `dtor_info` when the refcount
/// drops to zero.
pub type Destructor = unsafe extern "C" fn(data: *mut u8, size: usize, info: *mut u8);

/// A reference-counted memory block (Numba's `NRT_MemInfo`).
#[repr(C)]
#[derive(Debug)]
pub struct MemInfo {
    pub refct: AtomicUsize,
    pub dtor: Option<Destructor>,
    pub dtor_info: *mut u8,
    pub data: *mut u8,
    pub size: usize,
    /// Layout of the whole allocation (header + data), to free it.
    layout: Layout,
}

/// Allocate a MemInfo with `size` bytes of data aligned to `align` (refcount 1).
///
/// Returns null when the size or alignment is invalid or memory is exhausted.
#[no_mangle]
pub extern "C" fn NRT_MemInfo_alloc(size: usize, align: usize) -> *mut MemInfo {
    let align = align
        .max(std::mem::align_of::<MemInfo>())
        .next_power_of_two();
    let header = std::mem::size_of::<MemInfo>().next_multiple_of(align);
    let Some(total) = header.checked_add(size.max(1)) else {
        return std::ptr::null_mut();
    };
    let Ok(layout) = Layout::from_size_align(total, align) else {
        return std::ptr::null_mut();
    };
    // SAFETY: layout has a non-zero size.
    let base = unsafe { alloc(layout) };
    if base.is_null() {
        return std::ptr::null_mut();
    }
    ALLOC.fetch_add(1, Ordering::SeqCst);
    MI_ALLOC.fetch_add(1, Ordering::SeqCst);
    let mi = base.cast::<MemInfo>();
    // SAFETY: base is a fresh allocation large and aligned enough for the header.
    unsafe {
        mi.write(MemInfo {
            refct: AtomicUsize::new(1),
            dtor: None,
            dtor_info: std::ptr::null_mut(),
            data: base.add(header),
            size,
            layout,
        });
    }
    mi
}

/// Increment the refcount.
///
/// # Safety
/// `mi` must be null or a live MemInfo from [`NRT_MemInfo_alloc`].
#[no_mangle]
pub unsafe extern "C" fn NRT_incref(mi: *mut MemInfo) {
    // SAFETY: guaranteed by the caller.
    if let Some(m) = unsafe { mi.as_ref() } {
        m.refct.fetch_add(1, Ordering::Relaxed);
    }
}

/// Decrement the refcount, freeing the block (after its destructor) at zero.
///
/// # Safety
/// `mi` must be null or a live MemInfo from [`NRT_MemInfo_alloc`].
#[no_mangle]
pub unsafe extern "C" fn NRT_decref(mi: *mut MemInfo) {
    // SAFETY: guaranteed by the caller.
    let Some(m) = (unsafe { mi.as_ref() }) else {
        return;
    };
    if m.refct.fetch_sub(1, Ordering::AcqRel) == 1 {
        // SAFETY: the count reached zero, so this is the last reference.
        unsafe { NRT_MemInfo_release(mi) };
    }
}

/// Run the destructor and free the block regardless of the refcount.
///
/// # Safety
/// `mi` must be a live MemInfo from [`NRT_MemInfo_alloc`], not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_release(mi: *mut MemInfo) {
    if mi.is_null() {
        return;
    }
    // SAFETY: guaranteed by the caller; the header was written by NRT_MemInfo_alloc.
    unsafe {
        let m = &*mi;
        if let Some(d) = m.dtor {
            d(m.data, m.size, m.dtor_info);
        }
        let layout = m.layout;
        dealloc(mi.cast::<u8>(), layout);
    }
    FREE.fetch_add(1, Ordering::SeqCst);
    MI_FREE.fetch_add(1, Ordering::SeqCst);
}

/// The data pointer of a MemInfo.
///
/// # Safety
/// `mi` must be a live MemInfo.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_data(mi: *mut MemInfo) -> *mut u8 {
    // SAFETY: guaranteed by the caller.
    unsafe { (*mi).data }
}

/// Bytes in front of every [`NRT_Allocate`] block recording its size (so [`NRT_Free`] can
/// rebuild the layout); 16 keeps the data 16-byte aligned.
const RAW_HEADER: usize = 16;

/// Allocate `size` bytes of plain memory (Numba's `NRT_Allocate`), counted in `alloc`.
/// Returns null when memory is exhausted.
#[no_mangle]
pub extern "C" fn NRT_Allocate(size: usize) -> *mut u8 {
    let Some(total) = size.checked_add(RAW_HEADER) else {
        return std::ptr::null_mut();
    };
    let Ok(layout) = Layout::from_size_align(total, RAW_HEADER) else {
        return std::ptr::null_mut();
    };
    // SAFETY: layout has a non-zero size.
    let base = unsafe { alloc(layout) };
    if base.is_null() {
        return std::ptr::null_mut();
    }
    ALLOC.fetch_add(1, Ordering::SeqCst);
    // SAFETY: base is valid for `total` bytes and aligned for usize.
    unsafe {
        base.cast::<usize>().write(total);
        base.add(RAW_HEADER)
    }
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
    // SAFETY: the caller guarantees ptr came from NRT_Allocate, which wrote the total size
    // RAW_HEADER bytes before it.
    unsafe {
        let base = ptr.sub(RAW_HEADER);
        let total = base.cast::<usize>().read();
        dealloc(base, Layout::from_size_align_unchecked(total, RAW_HEADER));
    }
    FREE.fetch_add(1, Ordering::SeqCst);
}

/// The runtime functions generated code may call, by symbol name, for mapping into a JIT
/// (Python loads extension modules with `RTLD_LOCAL`, so they cannot be found by name).
pub fn runtime_symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("NRT_Allocate", NRT_Allocate as *const () as usize),
        ("NRT_Free", NRT_Free as *const () as usize),
        ("NRT_MemInfo_alloc", NRT_MemInfo_alloc as *const () as usize),
        ("NRT_incref", NRT_incref as *const () as usize),
        ("NRT_decref", NRT_decref as *const () as usize),
        ("NRT_MemInfo_data", NRT_MemInfo_data as *const () as usize),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_and_release_balance() {
        let before = allocation_stats();
        let mi = NRT_MemInfo_alloc(100, 32);
        assert!(!mi.is_null());
        // SAFETY: mi is live until the last decref below.
        unsafe {
            let data = NRT_MemInfo_data(mi);
            assert_eq!(data as usize % 32, 0);
            data.write_bytes(7, 100);
            NRT_incref(mi);
            NRT_decref(mi);
            assert_eq!(allocation_stats().mi_free, before.mi_free);
            NRT_decref(mi);
        }
        let after = allocation_stats();
        assert_eq!(after.mi_alloc - before.mi_alloc, 1);
        assert_eq!(after.mi_free - before.mi_free, 1);
    }

    #[test]
    fn invalid_alignment_is_null() {
        assert!(NRT_MemInfo_alloc(usize::MAX, 8).is_null());
    }
}
