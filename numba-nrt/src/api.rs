//! The C API for externally compiled code: the `NRT_api_functions` table laid out as in
//! Numba's `nrt_external.h`, [`NRT_get_api`] returning the one static instance, and the
//! header declaring it, shipped in `include/nrt_external.h`.

use std::ffi::c_void;
use std::path::Path;

use crate::alloc::NRT_ExternalAllocator;
use crate::meminfo::{
    MemInfo, NRT_MemInfo_acquire, NRT_MemInfo_alloc_external, NRT_MemInfo_data, NRT_MemInfo_new,
    NRT_MemInfo_release, DEFAULT_ALIGN,
};

/// The destructor `manage_memory` takes: called with the data pointer only (Numba's
/// `NRT_managed_dtor`).
pub type ManagedDestructor = unsafe extern "C" fn(data: *mut u8);

/// The table of NRT functions external C code calls (Numba's `NRT_api_functions`), field
/// for field in the order of `nrt_external.h`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug)]
pub struct NRT_api_functions {
    /// A new MemInfo with `nbytes` of data (a new reference); null on failure.
    pub allocate: unsafe extern "C" fn(nbytes: usize) -> *mut MemInfo,
    /// The same, the block from an external allocator ([`NRT_MemInfo_alloc_external`]).
    pub allocate_external:
        unsafe extern "C" fn(nbytes: usize, allocator: *mut NRT_ExternalAllocator) -> *mut MemInfo,
    /// Wrap memory the caller allocated; `dtor(data)` runs when the last reference goes.
    pub manage_memory:
        unsafe extern "C" fn(data: *mut u8, dtor: Option<ManagedDestructor>) -> *mut MemInfo,
    /// Take a reference.
    pub acquire: unsafe extern "C" fn(mi: *mut MemInfo),
    /// Drop a reference.
    pub release: unsafe extern "C" fn(mi: *mut MemInfo),
    /// The data pointer.
    pub get_data: unsafe extern "C" fn(mi: *mut MemInfo) -> *mut u8,
}

/// The table's `allocate`: a MemInfo with `nbytes` of data aligned to [`DEFAULT_ALIGN`]
/// (Numba's one-argument `NRT_MemInfo_alloc`, whose name our generated code uses for the
/// two-argument [`crate::NRT_MemInfo_alloc`]).
pub extern "C" fn nrt_allocate(nbytes: usize) -> *mut MemInfo {
    crate::NRT_MemInfo_alloc(nbytes, DEFAULT_ALIGN)
}

/// The destructor [`nrt_manage_memory`] installs: calls the managed destructor kept in
/// `dtor_info` with the data.
unsafe extern "C" fn managed_dtor(data: *mut u8, _size: usize, info: *mut c_void) {
    // SAFETY: nrt_manage_memory stored a ManagedDestructor in `info`, never null here.
    unsafe {
        let dtor = std::mem::transmute::<*mut c_void, ManagedDestructor>(info);
        dtor(data);
    }
}

/// The table's `manage_memory`: a MemInfo (size 0, refcount 1) over `data` whose release
/// calls `dtor(data)` — or nothing when `dtor` is null. Null when the header cannot be
/// allocated.
///
/// # Safety
/// `dtor`, if any, must be sound to call once with `data` when the last reference goes.
pub unsafe extern "C" fn nrt_manage_memory(
    data: *mut u8,
    dtor: Option<ManagedDestructor>,
) -> *mut MemInfo {
    // SAFETY: managed_dtor calls `dtor` with `data`, as the caller allows.
    unsafe {
        match dtor {
            Some(d) => NRT_MemInfo_new(data, 0, Some(managed_dtor), d as *const () as *mut c_void),
            None => NRT_MemInfo_new(data, 0, None, std::ptr::null_mut()),
        }
    }
}

static API: NRT_api_functions = NRT_api_functions {
    allocate: nrt_allocate,
    allocate_external: NRT_MemInfo_alloc_external,
    manage_memory: nrt_manage_memory,
    acquire: NRT_MemInfo_acquire,
    release: NRT_MemInfo_release,
    get_data: NRT_MemInfo_data,
};

/// The NRT's function table for external C code; always the same static instance.
#[no_mangle]
pub extern "C" fn NRT_get_api() -> *const NRT_api_functions {
    &API
}

/// The text of `nrt_external.h`, the C header declaring [`NRT_api_functions`],
/// [`NRT_ExternalAllocator`] and [`NRT_get_api`]; embedders can write it out wherever their
/// C build looks.
pub const NRT_EXTERNAL_H: &str = include_str!("../include/nrt_external.h");

/// The directory holding `nrt_external.h` in this crate's source tree (as
/// `numba.extending.include_path()`). It names where the crate was built from, so it only
/// exists on that machine; elsewhere use [`NRT_EXTERNAL_H`].
pub fn include_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}
