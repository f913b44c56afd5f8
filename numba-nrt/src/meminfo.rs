//! MemInfo: a reference-counted memory block with a destructor (Numba's `NRT_MemInfo`).
//!
//! A MemInfo made by one of the `NRT_MemInfo_alloc*` functions is one block: the header,
//! then padding up to the requested alignment, then the data. One made by
//! [`NRT_MemInfo_new`] is a header alone (an [`NRT_Allocate`](crate::NRT_Allocate) block)
//! pointing at data someone else owns, which its destructor gives back. Either way the
//! header is freed when the last reference is released, after the destructor ran — through
//! the external allocator when the block came from one.

use std::ffi::c_void;
use std::mem::{align_of, size_of};
use std::sync::atomic::{fence, AtomicUsize, Ordering};

use crate::alloc::{allocate_block, free_block, NRT_ExternalAllocator, MALLOC_ALIGN};
use crate::fatal;

/// Destructor called with the data pointer, the size and `dtor_info` when the refcount
/// drops to zero (Numba's `NRT_dtor_function`).
pub type Destructor = unsafe extern "C" fn(data: *mut u8, size: usize, info: *mut c_void);

/// A reference-counted memory block (Numba's `NRT_MemInfo`); its fields are laid out as
/// Numba's, so generated code may read them at the same offsets.
#[repr(C)]
#[derive(Debug)]
pub struct MemInfo {
    /// Number of owners; the block is destroyed when it drops to zero.
    pub refct: AtomicUsize,
    /// Called with `(data, size, dtor_info)` before the header is freed.
    pub dtor: Option<Destructor>,
    /// The destructor's third argument.
    pub dtor_info: *mut c_void,
    /// The memory managed: inside the block for NRT allocations, the caller's otherwise.
    pub data: *mut u8,
    /// Bytes of data the NRT allocated (0 for memory wrapped by `manage_memory`).
    pub size: usize,
    /// The allocator the block came from; null for the NRT's own.
    pub external_allocator: *mut NRT_ExternalAllocator,
}

/// Alignment of the data of MemInfos allocated without an explicit one (that of `malloc`).
pub const DEFAULT_ALIGN: usize = 16;

/// Write a fresh header (refcount 1) at `mi`, counted in `mi_alloc`.
///
/// # Safety
/// `mi` must be valid for writing a [`MemInfo`] and aligned for it.
unsafe fn init(
    mi: *mut MemInfo,
    data: *mut u8,
    size: usize,
    dtor: Option<Destructor>,
    dtor_info: *mut c_void,
    external_allocator: *mut NRT_ExternalAllocator,
) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        mi.write(MemInfo {
            refct: AtomicUsize::new(1),
            dtor,
            dtor_info,
            data,
            size,
            external_allocator,
        });
    }
    crate::stats::count(crate::stats::Counter::MiAlloc);
}

/// One block holding a header and `size` bytes of data aligned to `align` (0 counts as 1;
/// any other value, power of two or not, is honoured), from `allocator` or the NRT's own.
/// Null when the size overflows or the allocation fails.
///
/// # Safety
/// `allocator` must be null or point to a valid allocator that outlives the MemInfo.
unsafe fn alloc_with(
    size: usize,
    align: usize,
    allocator: *mut NRT_ExternalAllocator,
) -> *mut MemInfo {
    let align = align.max(1);
    let header = size_of::<MemInfo>();
    // Room to move the data up to `align - 1` bytes past the header, unless the NRT's
    // own malloc already puts it there (its blocks are 16-byte aligned and the header is
    // a multiple of 16 bytes): a string's block then costs what Numba's does, and small
    // blocks stay in malloc's fast size classes. External allocators get the slack.
    let slack = if allocator.is_null()
        && MALLOC_ALIGN.is_multiple_of(align)
        && header.is_multiple_of(align)
    {
        0
    } else {
        align - 1
    };
    let Some(total) = header.checked_add(size).and_then(|t| t.checked_add(slack)) else {
        return std::ptr::null_mut();
    };
    // SAFETY: guaranteed by the caller.
    let base = unsafe { allocate_block(total, allocator) };
    if base.is_null() {
        return std::ptr::null_mut();
    }
    // The block spans [base, base + total), so these addresses cannot overflow.
    let start = base.addr() + header;
    let pad = (align - start % align) % align;
    if base.addr() % align_of::<MemInfo>() != 0 || pad > slack {
        // An external allocator that does not keep malloc's alignment promise.
        // SAFETY: base came from allocate_block with this allocator just now.
        unsafe { free_block(base, allocator) };
        return std::ptr::null_mut();
    }
    let mi = base.cast::<MemInfo>();
    // SAFETY: header + pad + size <= total, so the data lies inside the block; the header
    // is at its aligned start.
    unsafe {
        let data = base.add(header + pad);
        init(mi, data, size, None, std::ptr::null_mut(), allocator);
    }
    mi
}

/// The destructor of the "safe" allocations: overwrite the data with 0xDE before it goes.
unsafe extern "C" fn safe_dtor(data: *mut u8, size: usize, _info: *mut c_void) {
    // SAFETY: data is the MemInfo's own `size` bytes, still allocated.
    unsafe { data.write_bytes(0xDE, size) };
}

/// [`alloc_with`], then the data filled with 0xCB and [`safe_dtor`] installed.
///
/// # Safety
/// As [`alloc_with`].
unsafe fn alloc_safe_with(
    size: usize,
    align: usize,
    allocator: *mut NRT_ExternalAllocator,
) -> *mut MemInfo {
    // SAFETY: guaranteed by the caller.
    let mi = unsafe { alloc_with(size, align, allocator) };
    // SAFETY: a non-null mi is a fresh MemInfo with `size` bytes of data.
    if let Some(m) = unsafe { mi.as_mut() } {
        // SAFETY: the data is `size` bytes inside the fresh block.
        unsafe { m.data.write_bytes(0xCB, size) };
        m.dtor = Some(safe_dtor);
    }
    mi
}

/// Allocate a MemInfo with `size` bytes of data aligned to `align` (refcount 1). The
/// signature generated code calls; `align` of 0 counts as 1.
///
/// Returns null when the size is too large or memory is exhausted.
#[no_mangle]
pub extern "C" fn NRT_MemInfo_alloc(size: usize, align: usize) -> *mut MemInfo {
    // SAFETY: no external allocator.
    unsafe { alloc_with(size, align, std::ptr::null_mut()) }
}

/// Allocate a MemInfo with `size` bytes of data aligned to `align` (Numba's
/// `NRT_MemInfo_alloc_aligned`); null on failure.
#[no_mangle]
pub extern "C" fn NRT_MemInfo_alloc_aligned(size: usize, align: u32) -> *mut MemInfo {
    NRT_MemInfo_alloc(size, align as usize)
}

/// As [`NRT_MemInfo_alloc_aligned`], for debugging memory errors: the data starts filled
/// with 0xCB and is overwritten with 0xDE when the MemInfo is destroyed.
#[no_mangle]
pub extern "C" fn NRT_MemInfo_alloc_safe_aligned(size: usize, align: u32) -> *mut MemInfo {
    // SAFETY: no external allocator.
    unsafe { alloc_safe_with(size, align as usize, std::ptr::null_mut()) }
}

/// Allocate a MemInfo and `size` bytes of data (aligned to [`DEFAULT_ALIGN`]) in one block
/// from `allocator` (the NRT's own when null); the block goes back through its `free`.
/// Null on failure, or when the allocator lacks `malloc` or `free`.
///
/// # Safety
/// `allocator` must be null or point to a valid [`NRT_ExternalAllocator`] that outlives
/// the MemInfo; its `malloc` must behave as C's (memory aligned for any object).
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_alloc_external(
    size: usize,
    allocator: *mut NRT_ExternalAllocator,
) -> *mut MemInfo {
    // SAFETY: guaranteed by the caller.
    unsafe { alloc_with(size, DEFAULT_ALIGN, allocator) }
}

/// As [`NRT_MemInfo_alloc_external`] with the data aligned to `align`. (Numba has only the
/// "safe" variant, [`NRT_MemInfo_alloc_safe_aligned_external`].)
///
/// # Safety
/// As [`NRT_MemInfo_alloc_external`].
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_alloc_aligned_external(
    size: usize,
    align: u32,
    allocator: *mut NRT_ExternalAllocator,
) -> *mut MemInfo {
    // SAFETY: guaranteed by the caller.
    unsafe { alloc_with(size, align as usize, allocator) }
}

/// As [`NRT_MemInfo_alloc_safe_aligned`], from an external allocator.
///
/// # Safety
/// As [`NRT_MemInfo_alloc_external`].
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_alloc_safe_aligned_external(
    size: usize,
    align: u32,
    allocator: *mut NRT_ExternalAllocator,
) -> *mut MemInfo {
    // SAFETY: guaranteed by the caller.
    unsafe { alloc_safe_with(size, align as usize, allocator) }
}

/// Wrap existing memory in a new MemInfo (refcount 1) whose destructor `dtor` is called
/// with `(data, size, dtor_info)` when the last reference is released. The header is an
/// NRT allocation; the data is not. Null when the header cannot be allocated.
///
/// # Safety
/// `dtor`, if any, must be sound to call once with these arguments at release time.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_new(
    data: *mut u8,
    size: usize,
    dtor: Option<Destructor>,
    dtor_info: *mut c_void,
) -> *mut MemInfo {
    let mi = crate::NRT_Allocate(size_of::<MemInfo>()).cast::<MemInfo>();
    if mi.is_null() {
        return mi;
    }
    // SAFETY: an NRT_Allocate block is 16-byte aligned and large enough.
    unsafe { init(mi, data, size, dtor, dtor_info, std::ptr::null_mut()) };
    mi
}

/// Take a reference (Numba's `NRT_MemInfo_acquire`); null is ignored. Aborts when the
/// count was zero (the MemInfo was already released).
///
/// # Safety
/// `mi` must be null or a live MemInfo.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_acquire(mi: *mut MemInfo) {
    // SAFETY: guaranteed by the caller.
    if let Some(m) = unsafe { mi.as_ref() } {
        if m.refct.fetch_add(1, Ordering::Relaxed) == 0 {
            fatal("NRT_MemInfo_acquire: the MemInfo's reference count was zero");
        }
    }
}

/// Drop a reference (Numba's `NRT_MemInfo_release`); at zero the destructor runs and the
/// block is freed ([`NRT_MemInfo_call_dtor`]). Null is ignored. Aborts when the count was
/// already zero.
///
/// # Safety
/// `mi` must be null or a live MemInfo whose reference the caller owns; the caller must
/// not use it afterwards through that reference.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_release(mi: *mut MemInfo) {
    // SAFETY: guaranteed by the caller.
    let Some(m) = (unsafe { mi.as_ref() }) else {
        return;
    };
    match m.refct.fetch_sub(1, Ordering::Release) {
        1 => {
            // Every other owner's writes happen before the destructor sees the data.
            fence(Ordering::Acquire);
            // SAFETY: the count reached zero, so this was the last reference.
            unsafe { NRT_MemInfo_call_dtor(mi) };
        }
        0 => fatal("NRT_MemInfo_release: the MemInfo's reference count was already zero"),
        _ => {}
    }
}

/// Increment the refcount: the call generated code emits; same as [`NRT_MemInfo_acquire`].
///
/// # Safety
/// `mi` must be null or a live MemInfo.
#[no_mangle]
pub unsafe extern "C" fn NRT_incref(mi: *mut MemInfo) {
    // SAFETY: guaranteed by the caller.
    unsafe { NRT_MemInfo_acquire(mi) }
}

/// Decrement the refcount: the call generated code emits; same as [`NRT_MemInfo_release`].
///
/// # Safety
/// As [`NRT_MemInfo_release`].
#[no_mangle]
pub unsafe extern "C" fn NRT_decref(mi: *mut MemInfo) {
    // SAFETY: guaranteed by the caller.
    unsafe { NRT_MemInfo_release(mi) }
}

/// Run the destructor and free the MemInfo now, whatever its refcount (Numba's
/// `NRT_MemInfo_call_dtor`, what a release does at zero). Null is ignored.
///
/// # Safety
/// `mi` must be null or a live MemInfo that nobody uses afterwards.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_call_dtor(mi: *mut MemInfo) {
    // SAFETY: guaranteed by the caller.
    let Some(m) = (unsafe { mi.as_ref() }) else {
        return;
    };
    let allocator = m.external_allocator;
    if let Some(dtor) = m.dtor {
        // SAFETY: the destructor's contract was promised when it was installed.
        unsafe { dtor(m.data, m.size, m.dtor_info) };
    }
    // SAFETY: the header is the start of a block from allocate_block with this allocator
    // (NRT_MemInfo_new's comes from NRT_Allocate, i.e. a null allocator).
    unsafe { free_block(mi.cast::<u8>(), allocator) };
    crate::stats::count(crate::stats::Counter::MiFree);
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

/// The size of a MemInfo's data as allocated (0 for wrapped memory).
///
/// # Safety
/// `mi` must be a live MemInfo.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_size(mi: *mut MemInfo) -> usize {
    // SAFETY: guaranteed by the caller.
    unsafe { (*mi).size }
}

/// The reference count, or `usize::MAX` (C's `(size_t)-1`) when `mi` is null or has no
/// data — as Numba's, which treats a null data pointer as an error.
///
/// # Safety
/// `mi` must be null or a live MemInfo.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_refcount(mi: *mut MemInfo) -> usize {
    // SAFETY: guaranteed by the caller.
    match unsafe { mi.as_ref() } {
        Some(m) if !m.data.is_null() => m.refct.load(Ordering::SeqCst),
        _ => usize::MAX,
    }
}

/// The external allocator a MemInfo came from (null for the NRT's own).
///
/// # Safety
/// `mi` must be a live MemInfo.
#[no_mangle]
pub unsafe extern "C" fn NRT_MemInfo_external_allocator(
    mi: *mut MemInfo,
) -> *mut NRT_ExternalAllocator {
    // SAFETY: guaranteed by the caller.
    unsafe { (*mi).external_allocator }
}
