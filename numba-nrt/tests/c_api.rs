//! The C API from C: `tests/c/nrt_api_user.c` is compiled with `cc` (or `$CC`) against the
//! shipped `include/nrt_external.h` into a shared library, loaded with `dlopen`, handed
//! `NRT_get_api()`, and drives the runtime through the table alone. CI has gcc; without a
//! C compiler these tests fail, saying so.
#![cfg(unix)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

use numba_nrt::*;

// libdl, part of the C library std links against.
extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

/// `RTLD_NOW` on Linux and macOS alike.
const RTLD_NOW: c_int = 2;

static LOCK: Mutex<()> = Mutex::new(());

/// One test at a time: the counters and the C library's own counters are process-wide.
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

/// The last `dlerror()` message.
fn dl_error() -> String {
    // SAFETY: dlerror returns null or a C string valid until the next dl call.
    unsafe {
        let e = dlerror();
        if e.is_null() {
            "unknown error".to_string()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// Compile the C user into a shared library (once per test process); its path.
fn build_library() -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/nrt_api_user.c");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("libnrt_api_user-{}.so", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let result = Command::new(&cc)
        .args([
            "-shared", "-fPIC", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I",
        ])
        .arg(include_dir())
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output();
    let output = match result {
        Ok(o) => o,
        Err(e) => panic!(
            "the C API test needs a C compiler, but `{cc}` could not be run ({e}); \
             install gcc (or set CC to a C compiler)"
        ),
    };
    assert!(
        output.status.success(),
        "`{cc}` failed to compile {} against include/nrt_external.h:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// The loaded C library.
struct CLib(*mut c_void);
// SAFETY: a dlopen handle may be used from any thread.
unsafe impl Send for CLib {}
unsafe impl Sync for CLib {}

fn lib() -> &'static CLib {
    static LIB: OnceLock<CLib> = OnceLock::new();
    LIB.get_or_init(|| {
        let path = build_library();
        let c_path = CString::new(path.to_string_lossy().into_owned()).expect("no NUL in path");
        // SAFETY: c_path is a C string; the library has no constructors.
        let handle = unsafe { dlopen(c_path.as_ptr(), RTLD_NOW) };
        assert!(
            !handle.is_null(),
            "dlopen {}: {}",
            path.display(),
            dl_error()
        );
        CLib(handle)
    })
}

/// The C function `name`, as the function pointer type `F`.
///
/// # Safety
/// `F` must be the function's true type.
unsafe fn sym<F: Copy>(name: &str) -> F {
    assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
    let c_name = CString::new(name).expect("no NUL in symbol name");
    // SAFETY: a live handle and a C string.
    let p = unsafe { dlsym(lib().0, c_name.as_ptr()) };
    assert!(!p.is_null(), "dlsym {name}: {}", dl_error());
    // SAFETY: the caller names the function's type; sizes checked above.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

type Api = *const NRT_api_functions;

fn counter(name: &str) -> i32 {
    // SAFETY: the counters are `int f(void)`.
    unsafe { sym::<unsafe extern "C" fn() -> c_int>(name)() }
}

#[test]
fn c_header_layout_matches_rust() {
    let _g = serial();
    let mut v = [0usize; 12];
    // SAFETY: `size_t user_layout(size_t *out, size_t n)` writes at most n values.
    let n = unsafe {
        sym::<unsafe extern "C" fn(*mut usize, usize) -> usize>("user_layout")(
            v.as_mut_ptr(),
            v.len(),
        )
    };
    assert_eq!(n, v.len());
    let rust = [
        size_of::<NRT_api_functions>(),
        offset_of!(NRT_api_functions, allocate),
        offset_of!(NRT_api_functions, allocate_external),
        offset_of!(NRT_api_functions, manage_memory),
        offset_of!(NRT_api_functions, acquire),
        offset_of!(NRT_api_functions, release),
        offset_of!(NRT_api_functions, get_data),
        size_of::<NRT_ExternalAllocator>(),
        offset_of!(NRT_ExternalAllocator, malloc),
        offset_of!(NRT_ExternalAllocator, realloc),
        offset_of!(NRT_ExternalAllocator, free),
        offset_of!(NRT_ExternalAllocator, opaque_data),
    ];
    assert_eq!(v, rust);
}

#[test]
fn c_allocate_acquire_release_balances() {
    let _g = serial();
    let before = allocation_stats();
    // SAFETY: `int user_allocate(const NRT_api_functions *, size_t)`.
    let rc = unsafe {
        sym::<unsafe extern "C" fn(Api, usize) -> c_int>("user_allocate")(NRT_get_api(), 1000)
    };
    assert_eq!(rc, 0, "check {rc} failed in user_allocate");
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn c_manage_memory_runs_the_c_destructor_once() {
    let _g = serial();
    let before = allocation_stats();
    let calls = counter("user_dtor_calls");
    // SAFETY: `int user_manage_memory(const NRT_api_functions *)`.
    let rc =
        unsafe { sym::<unsafe extern "C" fn(Api) -> c_int>("user_manage_memory")(NRT_get_api()) };
    assert_eq!(rc, 0, "check {rc} failed in user_manage_memory");
    assert_eq!(counter("user_dtor_calls"), calls + 1);
    // The header was the NRT's allocation; the data was C's, freed by its destructor.
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn c_allocate_external_goes_through_the_c_allocator() {
    let _g = serial();
    let before = allocation_stats();
    let (mallocs, frees) = (counter("user_ext_mallocs"), counter("user_ext_frees"));
    // SAFETY: `int user_allocate_external(const NRT_api_functions *, size_t)`.
    let rc = unsafe {
        sym::<unsafe extern "C" fn(Api, usize) -> c_int>("user_allocate_external")(
            NRT_get_api(),
            200,
        )
    };
    assert_eq!(rc, 0, "check {rc} failed in user_allocate_external");
    assert_eq!(counter("user_ext_mallocs"), mallocs + 1);
    assert_eq!(counter("user_ext_frees"), frees + 1);
    assert_eq!(delta(before), (1, 1, 1, 1));
}

#[test]
fn c_wrapped_memory_released_from_rust() {
    let _g = serial();
    let before = allocation_stats();
    let calls = counter("user_dtor_calls");
    // SAFETY: `NRT_MemInfo *user_wrap(const NRT_api_functions *, size_t)`; the returned
    // reference is ours and released below.
    unsafe {
        let mi =
            sym::<unsafe extern "C" fn(Api, usize) -> *mut MemInfo>("user_wrap")(NRT_get_api(), 64);
        assert!(!mi.is_null());
        assert_eq!(NRT_MemInfo_refcount(mi), 1);
        assert_eq!(NRT_MemInfo_size(mi), 0);
        let data = NRT_MemInfo_data(mi);
        assert!(std::slice::from_raw_parts(data, 64)
            .iter()
            .all(|&b| b == 0x11));
        NRT_MemInfo_acquire(mi);
        assert_eq!(NRT_MemInfo_refcount(mi), 2);
        ((*NRT_get_api()).release)(mi);
        assert_eq!(NRT_MemInfo_refcount(mi), 1);
        assert_eq!(counter("user_dtor_calls"), calls);
        NRT_decref(mi);
        assert_eq!(counter("user_dtor_calls"), calls + 1);
        let last = sym::<unsafe extern "C" fn() -> *mut u8>("user_dtor_last")();
        assert_eq!(last, data);
    }
    assert_eq!(delta(before), (1, 1, 1, 1));
}
