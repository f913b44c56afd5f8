//! Every NRT entry point from Rust: refcounts, destructors, external allocators,
//! alignment, the API table, the symbol table and the allocation counters.
//!
//! The counters are process-wide, so every test that allocates holds [`serial`] and
//! measures counter changes between two points inside it.

use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use numba_nrt::*;

static LOCK: Mutex<()> = Mutex::new(());

/// Run one counter-sensitive test at a time (a failed test must not block the others).
fn serial() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counter changes since `before`: (alloc, free, mi_alloc, mi_free).
fn delta(before: AllocationStats) -> (usize, usize, usize, usize) {
    let a = allocation_stats();
    (
        a.alloc - before.alloc,
        a.free - before.free,
        a.mi_alloc - before.mi_alloc,
        a.mi_free - before.mi_free,
    )
}

/// What a destructor saw; its address is the `dtor_info` of the MemInfo under test.
#[derive(Default)]
struct DtorLog {
    calls: AtomicUsize,
    data: AtomicPtr<u8>,
    size: AtomicUsize,
    info: AtomicPtr<c_void>,
}

unsafe extern "C" fn logging_dtor(data: *mut u8, size: usize, info: *mut c_void) {
    // SAFETY: every test installing this destructor passes a live DtorLog as info.
    let log = unsafe { &*info.cast::<DtorLog>() };
    log.calls.fetch_add(1, Ordering::SeqCst);
    log.data.store(data, Ordering::SeqCst);
    log.size.store(size, Ordering::SeqCst);
    log.info.store(info, Ordering::SeqCst);
}

fn log_ptr(log: &DtorLog) -> *mut c_void {
    (log as *const DtorLog).cast_mut().cast()
}

#[test]
fn meminfo_layout_is_numbas() {
    // refct, dtor, dtor_info, data, size, external_allocator: one word each, in that order.
    let w = size_of::<usize>();
    assert_eq!(offset_of!(MemInfo, refct), 0);
    assert_eq!(offset_of!(MemInfo, dtor), w);
    assert_eq!(offset_of!(MemInfo, dtor_info), 2 * w);
    assert_eq!(offset_of!(MemInfo, data), 3 * w);
    assert_eq!(offset_of!(MemInfo, size), 4 * w);
    assert_eq!(offset_of!(MemInfo, external_allocator), 5 * w);
    assert_eq!(size_of::<MemInfo>(), 6 * w);
}

#[test]
fn alloc_acquire_release_refcount_and_counters() {
    let _g = serial();
    let before = allocation_stats();
    let mi = NRT_MemInfo_alloc(100, 32);
    assert!(!mi.is_null());
    // SAFETY: mi is live until its last release below.
    unsafe {
        assert_eq!(NRT_MemInfo_refcount(mi), 1);
        assert_eq!(NRT_MemInfo_size(mi), 100);
        assert!(NRT_MemInfo_external_allocator(mi).is_null());
        let data = NRT_MemInfo_data(mi);
        assert_eq!(data.addr() % 32, 0);
        assert!(data.addr() >= mi.addr() + size_of::<MemInfo>());
        data.write_bytes(7, 100);
        assert_eq!(delta(before), (1, 0, 1, 0));

        NRT_MemInfo_acquire(mi);
        NRT_incref(mi);
        assert_eq!(NRT_MemInfo_refcount(mi), 3);
        NRT_MemInfo_release(mi);
        NRT_decref(mi);
        assert_eq!(NRT_MemInfo_refcount(mi), 1);
        // Releases that leave a reference free nothing.
        assert_eq!(delta(before), (1, 0, 1, 0));
        assert!(std::slice::from_raw_parts(data, 100)
            .iter()
            .all(|&b| b == 7));
        NRT_MemInfo_release(mi);
    }
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn alignment_is_honoured() {
    let _g = serial();
    let before = allocation_stats();
    for align in [0usize, 1, 2, 3, 8, 16, 24, 32, 48, 64, 100, 128, 4096] {
        for size in [0usize, 1, 7, 1000] {
            let a = NRT_MemInfo_alloc(size, align);
            let b = NRT_MemInfo_alloc_aligned(size, align as u32);
            let c = NRT_MemInfo_alloc_safe_aligned(size, align as u32);
            for mi in [a, b, c] {
                assert!(!mi.is_null(), "align {align} size {size}");
                // SAFETY: mi is a fresh MemInfo, released once here.
                unsafe {
                    let data = NRT_MemInfo_data(mi);
                    assert_eq!(data.addr() % align.max(1), 0, "align {align} size {size}");
                    assert!(data.addr() >= mi.addr() + size_of::<MemInfo>());
                    assert_eq!(NRT_MemInfo_size(mi), size);
                    data.write_bytes(0x42, size);
                    NRT_MemInfo_release(mi);
                }
            }
        }
    }
    let n = 13 * 4 * 3;
    assert_eq!(delta(before), (n, n, n, n));
}

#[test]
fn too_large_is_null_and_uncounted() {
    let _g = serial();
    let before = allocation_stats();
    assert!(NRT_MemInfo_alloc(usize::MAX, 8).is_null());
    assert!(NRT_MemInfo_alloc(usize::MAX - 100, 1).is_null());
    assert!(NRT_MemInfo_alloc(isize::MAX as usize, 64).is_null());
    assert!(NRT_MemInfo_alloc_aligned(usize::MAX - 40, 4096).is_null());
    assert!(NRT_MemInfo_alloc_safe_aligned(usize::MAX, 16).is_null());
    assert!(nrt_allocate(usize::MAX).is_null());
    assert!(NRT_Allocate(usize::MAX).is_null());
    assert!(NRT_Allocate(isize::MAX as usize).is_null());
    assert_eq!(delta(before), (0, 0, 0, 0));
}

#[test]
fn safe_aligned_fills_and_has_a_destructor() {
    let _g = serial();
    let mi = NRT_MemInfo_alloc_safe_aligned(64, 32);
    assert!(!mi.is_null());
    // SAFETY: mi is live until released.
    unsafe {
        let data = NRT_MemInfo_data(mi);
        assert_eq!(data.addr() % 32, 0);
        assert!(std::slice::from_raw_parts(data, 64)
            .iter()
            .all(|&b| b == 0xCB));
        assert!((*mi).dtor.is_some());
        NRT_MemInfo_release(mi);
    }
}

#[test]
fn new_runs_destructor_once_with_data_size_and_info() {
    let _g = serial();
    let before = allocation_stats();
    let mut buf = vec![0u8; 40];
    let log = DtorLog::default();
    // SAFETY: logging_dtor only records its arguments; log outlives the MemInfo.
    let mi = unsafe { NRT_MemInfo_new(buf.as_mut_ptr(), 40, Some(logging_dtor), log_ptr(&log)) };
    assert!(!mi.is_null());
    // The header is one NRT allocation; the data is not the NRT's.
    assert_eq!(delta(before), (1, 0, 1, 0));
    // SAFETY: mi is live until its last release.
    unsafe {
        assert_eq!(NRT_MemInfo_data(mi), buf.as_mut_ptr());
        assert_eq!(NRT_MemInfo_size(mi), 40);
        assert_eq!(NRT_MemInfo_refcount(mi), 1);
        assert_eq!((*mi).dtor_info, log_ptr(&log));
        NRT_MemInfo_acquire(mi);
        NRT_MemInfo_acquire(mi);
        NRT_MemInfo_release(mi);
        NRT_MemInfo_release(mi);
        assert_eq!(log.calls.load(Ordering::SeqCst), 0);
        NRT_MemInfo_release(mi);
    }
    assert_eq!(log.calls.load(Ordering::SeqCst), 1);
    assert_eq!(log.data.load(Ordering::SeqCst), buf.as_mut_ptr());
    assert_eq!(log.size.load(Ordering::SeqCst), 40);
    assert_eq!(log.info.load(Ordering::SeqCst), log_ptr(&log));
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn new_without_destructor_frees_only_the_header() {
    let _g = serial();
    let before = allocation_stats();
    let mut x = 5u64;
    // SAFETY: no destructor.
    let mi = unsafe { NRT_MemInfo_new((&raw mut x).cast(), 8, None, std::ptr::null_mut()) };
    assert!(!mi.is_null());
    // SAFETY: mi is live until released.
    unsafe { NRT_decref(mi) };
    assert_eq!(x, 5);
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn call_dtor_destroys_whatever_the_refcount() {
    let _g = serial();
    let before = allocation_stats();
    let log = DtorLog::default();
    // SAFETY: logging_dtor only records; log outlives the MemInfo.
    let mi = unsafe {
        NRT_MemInfo_new(
            std::ptr::dangling_mut(),
            0,
            Some(logging_dtor),
            log_ptr(&log),
        )
    };
    // SAFETY: mi is live; nothing uses it after call_dtor.
    unsafe {
        NRT_MemInfo_acquire(mi);
        assert_eq!(NRT_MemInfo_refcount(mi), 2);
        NRT_MemInfo_call_dtor(mi);
    }
    assert_eq!(log.calls.load(Ordering::SeqCst), 1);
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn null_is_ignored_and_refcount_reports_error() {
    let _g = serial();
    let before = allocation_stats();
    let null = std::ptr::null_mut();
    // SAFETY: every one of these accepts null.
    unsafe {
        NRT_incref(null);
        NRT_decref(null);
        NRT_MemInfo_acquire(null);
        NRT_MemInfo_release(null);
        NRT_MemInfo_call_dtor(null);
        NRT_Free(std::ptr::null_mut());
        assert_eq!(NRT_MemInfo_refcount(null), usize::MAX);
        // As Numba's: a MemInfo without data reports the error value too.
        let mi = NRT_MemInfo_new(std::ptr::null_mut(), 0, None, std::ptr::null_mut());
        assert_eq!(NRT_MemInfo_refcount(mi), usize::MAX);
        NRT_MemInfo_release(mi);
    }
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn plain_allocate_and_free() {
    let _g = serial();
    let before = allocation_stats();
    let p = NRT_Allocate(100);
    assert!(!p.is_null());
    assert_eq!(p.addr() % 16, 0);
    // SAFETY: p is 100 bytes from NRT_Allocate, freed once.
    unsafe {
        p.write_bytes(1, 100);
        NRT_Free(p);
    }
    let q = NRT_Allocate(0);
    assert!(!q.is_null());
    // SAFETY: q is from NRT_Allocate.
    unsafe { NRT_Free(q) };
    assert_eq!(delta(before), (2, 2, 0, 0));
}

/// A MemInfo pointer handed to other threads (its refcount is atomic).
#[derive(Clone, Copy)]
struct SendPtr(*mut MemInfo);
// SAFETY: the tests only touch the MemInfo through the NRT's atomic entry points.
unsafe impl Send for SendPtr {}
impl SendPtr {
    fn get(self) -> *mut MemInfo {
        self.0
    }
}

#[test]
fn refcount_is_atomic_across_threads() {
    let _g = serial();
    let before = allocation_stats();
    let log = Arc::new(DtorLog::default());
    // SAFETY: logging_dtor only records; the Arc keeps log alive past the MemInfo.
    let mi = unsafe {
        NRT_MemInfo_new(
            std::ptr::dangling_mut(),
            0,
            Some(logging_dtor),
            log_ptr(&log),
        )
    };
    let shared = SendPtr(mi);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mi = shared.get();
                for _ in 0..20_000 {
                    // SAFETY: the main thread's reference keeps mi alive throughout.
                    unsafe {
                        NRT_MemInfo_acquire(mi);
                        NRT_incref(mi);
                        NRT_decref(mi);
                        NRT_MemInfo_release(mi);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker thread panicked");
    }
    // SAFETY: mi is still live with the main thread's reference.
    unsafe {
        assert_eq!(NRT_MemInfo_refcount(mi), 1);
        assert_eq!(log.calls.load(Ordering::SeqCst), 0);
        NRT_MemInfo_release(mi);
    }
    assert_eq!(log.calls.load(Ordering::SeqCst), 1);
    assert_eq!(delta(before), (1, 1, 1, 1));
}

/// An external allocator from Rust that records every call.
#[derive(Default)]
struct ExtState {
    mallocs: AtomicUsize,
    frees: AtomicUsize,
    sizes: Mutex<Vec<usize>>,
    /// Returned pointer -> (real base, layout).
    live: Mutex<HashMap<usize, (*mut u8, Layout)>>,
    /// The bytes of the last block freed, read just before it went.
    last_freed: Mutex<Vec<u8>>,
    /// Return null from malloc.
    fail: AtomicBool,
    /// Return blocks one byte off malloc's alignment.
    misalign: AtomicBool,
}

unsafe extern "C" fn ext_malloc(size: usize, opaque: *mut c_void) -> *mut u8 {
    // SAFETY: the tests pass a live ExtState as opaque_data.
    let st = unsafe { &*opaque.cast::<ExtState>() };
    st.mallocs.fetch_add(1, Ordering::SeqCst);
    st.sizes.lock().expect("sizes").push(size);
    if st.fail.load(Ordering::SeqCst) {
        return std::ptr::null_mut();
    }
    let skew = usize::from(st.misalign.load(Ordering::SeqCst));
    let layout = Layout::from_size_align(size + skew + 1, 16).expect("layout");
    // SAFETY: non-zero size.
    let base = unsafe { std::alloc::alloc(layout) };
    assert!(!base.is_null());
    // SAFETY: skew <= 1 < the block's size.
    let p = unsafe { base.add(skew) };
    st.live
        .lock()
        .expect("live")
        .insert(p.addr(), (base, layout));
    p
}

unsafe extern "C" fn ext_free(ptr: *mut u8, opaque: *mut c_void) {
    // SAFETY: the tests pass a live ExtState as opaque_data.
    let st = unsafe { &*opaque.cast::<ExtState>() };
    st.frees.fetch_add(1, Ordering::SeqCst);
    let (base, layout) = st
        .live
        .lock()
        .expect("live")
        .remove(&ptr.addr())
        .expect("free of a pointer this allocator never returned");
    // SAFETY: base/layout are the allocation made by ext_malloc, freed once.
    unsafe {
        *st.last_freed.lock().expect("freed") =
            std::slice::from_raw_parts(base, layout.size()).to_vec();
        std::alloc::dealloc(base, layout);
    }
}

fn allocator_for(st: &ExtState) -> NRT_ExternalAllocator {
    NRT_ExternalAllocator {
        malloc: Some(ext_malloc),
        realloc: None,
        free: Some(ext_free),
        opaque_data: (st as *const ExtState).cast_mut().cast(),
    }
}

#[test]
fn external_allocator_gets_the_block_and_frees_it() {
    let _g = serial();
    let before = allocation_stats();
    let st = ExtState::default();
    let mut a = allocator_for(&st);
    // SAFETY: `a` and `st` outlive the MemInfo.
    unsafe {
        let mi = NRT_MemInfo_alloc_external(100, &mut a);
        assert!(!mi.is_null());
        assert_eq!(st.mallocs.load(Ordering::SeqCst), 1);
        // One block: the header and at least the data.
        let asked = st.sizes.lock().expect("sizes")[0];
        assert!(asked >= size_of::<MemInfo>() + 100);
        assert!(st.live.lock().expect("live").contains_key(&mi.addr()));
        assert_eq!(NRT_MemInfo_external_allocator(mi), &raw mut a);
        assert_eq!(NRT_MemInfo_size(mi), 100);
        let data = NRT_MemInfo_data(mi);
        assert_eq!(data.addr() % DEFAULT_ALIGN, 0);
        assert!(data.addr() + 100 <= mi.addr() + asked);
        data.write_bytes(3, 100);
        NRT_MemInfo_acquire(mi);
        NRT_MemInfo_release(mi);
        assert_eq!(st.frees.load(Ordering::SeqCst), 0);
        NRT_MemInfo_release(mi);
    }
    assert_eq!(st.frees.load(Ordering::SeqCst), 1);
    assert!(st.live.lock().expect("live").is_empty());
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn external_aligned_and_safe_variants() {
    let _g = serial();
    let before = allocation_stats();
    let st = ExtState::default();
    let mut a = allocator_for(&st);
    // SAFETY: `a` and `st` outlive the MemInfos.
    unsafe {
        for align in [1u32, 8, 64, 256, 96] {
            let mi = NRT_MemInfo_alloc_aligned_external(50, align, &mut a);
            assert!(!mi.is_null());
            assert_eq!(NRT_MemInfo_data(mi).addr() % align as usize, 0);
            NRT_MemInfo_data(mi).write_bytes(9, 50);
            NRT_MemInfo_release(mi);
        }
        // The safe variant fills with 0xCB and leaves 0xDE behind at destruction: the
        // allocator's free sees the data overwritten.
        let mi = NRT_MemInfo_alloc_safe_aligned_external(24, 32, &mut a);
        assert!(!mi.is_null());
        let data = NRT_MemInfo_data(mi);
        assert_eq!(data.addr() % 32, 0);
        assert!(std::slice::from_raw_parts(data, 24)
            .iter()
            .all(|&b| b == 0xCB));
        let off = data.addr() - mi.addr();
        NRT_MemInfo_release(mi);
        let freed = st.last_freed.lock().expect("freed").clone();
        assert!(freed[off..off + 24].iter().all(|&b| b == 0xDE));
    }
    assert_eq!(st.mallocs.load(Ordering::SeqCst), 6);
    assert_eq!(st.frees.load(Ordering::SeqCst), 6);
    assert_eq!(delta(before), (6, 6, 6, 6));
}

#[test]
fn external_allocator_failures_give_null() {
    let _g = serial();
    let before = allocation_stats();
    let st = ExtState::default();
    let mut a = allocator_for(&st);
    // SAFETY: `a` and `st` outlive every call.
    unsafe {
        // malloc returns null.
        st.fail.store(true, Ordering::SeqCst);
        assert!(NRT_MemInfo_alloc_external(10, &mut a).is_null());
        assert_eq!(st.mallocs.load(Ordering::SeqCst), 1);
        st.fail.store(false, Ordering::SeqCst);
        // A block not aligned for the header is handed straight back.
        st.misalign.store(true, Ordering::SeqCst);
        assert!(NRT_MemInfo_alloc_external(10, &mut a).is_null());
        assert_eq!(st.mallocs.load(Ordering::SeqCst), 2);
        assert_eq!(st.frees.load(Ordering::SeqCst), 1);
        st.misalign.store(false, Ordering::SeqCst);
        // An allocator without malloc or free is refused before any call.
        let mut no_free = NRT_ExternalAllocator { free: None, ..a };
        assert!(NRT_MemInfo_alloc_external(10, &mut no_free).is_null());
        let mut no_malloc = NRT_ExternalAllocator { malloc: None, ..a };
        assert!(NRT_MemInfo_alloc_external(10, &mut no_malloc).is_null());
        assert_eq!(st.mallocs.load(Ordering::SeqCst), 2);
        // The size overflowing is caught before the allocator is asked.
        assert!(NRT_MemInfo_alloc_external(usize::MAX, &mut a).is_null());
        assert_eq!(st.mallocs.load(Ordering::SeqCst), 2);
    }
    // The refused misaligned block was counted in and out.
    assert_eq!(delta(before), (1, 1, 0, 0));
    assert!(st.live.lock().expect("live").is_empty());
}

#[test]
fn external_with_null_allocator_uses_the_nrt() {
    let _g = serial();
    let before = allocation_stats();
    // SAFETY: a null allocator means the NRT's own.
    unsafe {
        let mi = NRT_MemInfo_alloc_external(8, std::ptr::null_mut());
        assert!(!mi.is_null());
        assert!(NRT_MemInfo_external_allocator(mi).is_null());
        NRT_MemInfo_release(mi);
    }
    assert_eq!(delta(before), (1, 1, 1, 1));
}

static MANAGED_CALLS: AtomicUsize = AtomicUsize::new(0);
static MANAGED_LAST: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

unsafe extern "C" fn managed(data: *mut u8) {
    MANAGED_CALLS.fetch_add(1, Ordering::SeqCst);
    MANAGED_LAST.store(data, Ordering::SeqCst);
}

#[test]
fn api_table_is_numbas_and_works() {
    let _g = serial();
    let api = NRT_get_api();
    assert!(!api.is_null());
    assert_eq!(api, NRT_get_api(), "one static table");
    // The field order of nrt_external.h.
    let w = size_of::<usize>();
    assert_eq!(offset_of!(NRT_api_functions, allocate), 0);
    assert_eq!(offset_of!(NRT_api_functions, allocate_external), w);
    assert_eq!(offset_of!(NRT_api_functions, manage_memory), 2 * w);
    assert_eq!(offset_of!(NRT_api_functions, acquire), 3 * w);
    assert_eq!(offset_of!(NRT_api_functions, release), 4 * w);
    assert_eq!(offset_of!(NRT_api_functions, get_data), 5 * w);
    assert_eq!(size_of::<NRT_api_functions>(), 6 * w);
    assert_eq!(offset_of!(NRT_ExternalAllocator, opaque_data), 3 * w);
    assert_eq!(size_of::<NRT_ExternalAllocator>(), 4 * w);

    let before = allocation_stats();
    // SAFETY: the table is static; every MemInfo is released once.
    unsafe {
        let api = &*api;
        assert_eq!(
            api.acquire as usize,
            NRT_MemInfo_acquire as *const () as usize
        );
        assert_eq!(
            api.release as usize,
            NRT_MemInfo_release as *const () as usize
        );
        assert_eq!(
            api.get_data as usize,
            NRT_MemInfo_data as *const () as usize
        );
        assert_eq!(
            api.allocate_external as usize,
            NRT_MemInfo_alloc_external as *const () as usize
        );

        let mi = (api.allocate)(33);
        assert!(!mi.is_null());
        assert_eq!(NRT_MemInfo_size(mi), 33);
        assert_eq!((api.get_data)(mi).addr() % DEFAULT_ALIGN, 0);
        (api.release)(mi);

        let mut x = [0u8; 4];
        let calls = MANAGED_CALLS.load(Ordering::SeqCst);
        let mi = (api.manage_memory)(x.as_mut_ptr(), Some(managed));
        assert!(!mi.is_null());
        assert_eq!((api.get_data)(mi), x.as_mut_ptr());
        assert_eq!(NRT_MemInfo_size(mi), 0);
        (api.acquire)(mi);
        (api.release)(mi);
        assert_eq!(MANAGED_CALLS.load(Ordering::SeqCst), calls);
        (api.release)(mi);
        assert_eq!(MANAGED_CALLS.load(Ordering::SeqCst), calls + 1);
        assert_eq!(MANAGED_LAST.load(Ordering::SeqCst), x.as_mut_ptr());

        // Without a destructor only the header goes.
        let mi = (api.manage_memory)(x.as_mut_ptr(), None);
        (api.release)(mi);
        assert_eq!(MANAGED_CALLS.load(Ordering::SeqCst), calls + 1);
    }
    assert_eq!(delta(before), (3, 3, 3, 3));
}

#[test]
fn runtime_symbols_cover_every_entry_point() {
    let syms = runtime_symbols();
    let names: Vec<&str> = syms.iter().map(|(n, _)| *n).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "duplicate names: {names:?}");
    let find = |name: &str| {
        syms.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, a)| *a)
            .unwrap_or_else(|| panic!("{name} missing from runtime_symbols()"))
    };
    for (name, addr) in [
        ("NRT_Allocate", NRT_Allocate as *const () as usize),
        ("NRT_Free", NRT_Free as *const () as usize),
        ("NRT_MemInfo_alloc", NRT_MemInfo_alloc as *const () as usize),
        (
            "NRT_MemInfo_alloc_aligned",
            NRT_MemInfo_alloc_aligned as *const () as usize,
        ),
        (
            "NRT_MemInfo_alloc_safe_aligned",
            NRT_MemInfo_alloc_safe_aligned as *const () as usize,
        ),
        (
            "NRT_MemInfo_alloc_external",
            NRT_MemInfo_alloc_external as *const () as usize,
        ),
        (
            "NRT_MemInfo_alloc_aligned_external",
            NRT_MemInfo_alloc_aligned_external as *const () as usize,
        ),
        (
            "NRT_MemInfo_alloc_safe_aligned_external",
            NRT_MemInfo_alloc_safe_aligned_external as *const () as usize,
        ),
        ("NRT_MemInfo_new", NRT_MemInfo_new as *const () as usize),
        (
            "NRT_MemInfo_acquire",
            NRT_MemInfo_acquire as *const () as usize,
        ),
        (
            "NRT_MemInfo_release",
            NRT_MemInfo_release as *const () as usize,
        ),
        (
            "NRT_MemInfo_call_dtor",
            NRT_MemInfo_call_dtor as *const () as usize,
        ),
        ("NRT_incref", NRT_incref as *const () as usize),
        ("NRT_decref", NRT_decref as *const () as usize),
        ("NRT_MemInfo_data", NRT_MemInfo_data as *const () as usize),
        ("NRT_MemInfo_size", NRT_MemInfo_size as *const () as usize),
        (
            "NRT_MemInfo_refcount",
            NRT_MemInfo_refcount as *const () as usize,
        ),
        (
            "NRT_MemInfo_external_allocator",
            NRT_MemInfo_external_allocator as *const () as usize,
        ),
        ("NRT_get_api", NRT_get_api as *const () as usize),
        (
            "nrt_unresolved_abort",
            nrt_unresolved_abort as *const () as usize,
        ),
        (
            "numba_rs_parallel_for",
            numba_nrt::numba_rs_parallel_for as *const () as usize,
        ),
        (
            "numba_rs_get_num_threads",
            numba_nrt::numba_rs_get_num_threads as *const () as usize,
        ),
        (
            "numba_rs_get_thread_id",
            numba_nrt::numba_rs_get_thread_id as *const () as usize,
        ),
        (
            "numba_rs_parfor_scratch",
            numba_nrt::numba_rs_parfor_scratch as *const () as usize,
        ),
        (
            "numba_rs_parfor_scratch_free",
            numba_nrt::numba_rs_parfor_scratch_free as *const () as usize,
        ),
        (
            "numba_rs_set_num_threads",
            numba_nrt::numba_rs_set_num_threads as *const () as usize,
        ),
        (
            "numba_rs_set_parallel_chunksize",
            numba_nrt::numba_rs_set_parallel_chunksize as *const () as usize,
        ),
        (
            "numba_rs_get_parallel_chunksize",
            numba_nrt::numba_rs_get_parallel_chunksize as *const () as usize,
        ),
        // The scheduler under Numba's names.
        (
            "do_scheduling_signed",
            numba_nrt::numba_rs_parfor_divisions as *const () as usize,
        ),
        (
            "do_scheduling_unsigned",
            numba_nrt::numba_rs_parfor_divisions as *const () as usize,
        ),
        // Data: the inline threshold parallel launches read.
        (
            numba_nrt::parallel::INLINE_WORK_SYMBOL,
            numba_nrt::parallel::inline_work_address(),
        ),
    ] {
        assert_eq!(find(name), addr, "{name}");
    }
    assert_eq!(syms.len(), 31);
}

#[test]
fn header_is_shipped_and_declares_the_table_in_order() {
    let path = include_dir().join("nrt_external.h");
    let on_disk = std::fs::read_to_string(&path).expect("include/nrt_external.h is readable");
    assert_eq!(on_disk, NRT_EXTERNAL_H);
    let pos = |needle: &str| {
        NRT_EXTERNAL_H
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} not in nrt_external.h"))
    };
    let fields = [
        "(*allocate)(",
        "(*allocate_external)(",
        "(*manage_memory)(",
        "(*acquire)(",
        "(*release)(",
        "(*get_data)(",
        "} NRT_api_functions;",
    ];
    let at: Vec<usize> = fields.iter().map(|f| pos(f)).collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "fields out of order: {at:?}"
    );
    let alloc_fields = [
        "NRT_external_malloc_func malloc;",
        "NRT_external_realloc_func realloc;",
        "NRT_external_free_func free;",
        "void *opaque_data;",
    ];
    let at: Vec<usize> = alloc_fields.iter().map(|f| pos(f)).collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "allocator fields out of order: {at:?}"
    );
    pos("const NRT_api_functions *NRT_get_api(void);");
}

/// Set in the child process of [`unresolved_abort_aborts_with_its_message`].
const CALL_ABORT: &str = "NUMBA_NRT_TEST_CALL_UNRESOLVED_ABORT";

#[test]
fn unresolved_abort_aborts_with_its_message() {
    if std::env::var_os(CALL_ABORT).is_some() {
        // The child: call it as a JIT call through an unresolved symbol would, with
        // arguments it does not take.
        // SAFETY: the function takes no arguments; extra ones are ignored by the C ABI.
        let f: unsafe extern "C" fn(u64, u64, *const u8) -> i32 =
            unsafe { std::mem::transmute(nrt_unresolved_abort as extern "C" fn() -> !) };
        // SAFETY: see above; it never returns.
        unsafe { f(1, 2, std::ptr::null()) };
        unreachable!("nrt_unresolved_abort returned");
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "unresolved_abort_aborts_with_its_message",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CALL_ABORT, "1")
        .output()
        .expect("run the test binary again");
    assert!(!out.status.success(), "the child should have aborted");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(6),
            "SIGABRT expected: {:?}",
            out.status
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(UNRESOLVED_SYMBOL_MESSAGE),
        "stderr of the child: {stderr}"
    );
    assert!(stderr.contains("unresolved symbol"));
}

/// Counters live per thread: blocks made on threads that have exited and freed on
/// another (and the reverse) still balance in the totals, exactly.
#[test]
fn counters_balance_across_threads_that_exit() {
    let _g = serial();
    let before = allocation_stats();
    // Made on four short-lived threads, freed here.
    let made: Vec<usize> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let p = NRT_MemInfo_alloc(64, 16) as usize;
                let q = NRT_Allocate(32) as usize;
                // SAFETY: q came from NRT_Allocate just now.
                unsafe { NRT_Free(q as *mut u8) };
                p
            })
            .join()
            .unwrap()
        })
        .collect();
    assert_eq!(delta(before), (8, 4, 4, 0));
    // Made here, freed on threads that then exit.
    let here: Vec<usize> = (0..3).map(|_| NRT_MemInfo_alloc(8, 8) as usize).collect();
    let handles: Vec<_> = made
        .into_iter()
        .chain(here)
        // SAFETY: each MemInfo is live with refcount 1; its last release frees it.
        .map(|p| std::thread::spawn(move || unsafe { NRT_MemInfo_release(p as *mut MemInfo) }))
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(delta(before), (11, 11, 7, 7));
}
