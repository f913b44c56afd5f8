//! Helpers the generated code calls for work that is simpler in Rust than in LLVM IR
//! (CPython's hash algorithms, `math.frexp`, `math.gcd`, modular `pow`). They reach JIT-ed
//! code through [`symbols`], mapped into each engine with the NRT's symbols, never by a
//! process-wide lookup.

use std::ffi::{c_char, c_int, CStr};

use crate::callconv::ExcInfo;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `print(*values)` from native code: the values' typecodes, their count, and their
/// boundary slots (see `callconv`). The embedder (numba-py) installs a hook that prints
/// through Python's `print`, so output goes to `sys.stdout` exactly as CPython formats it.
/// `end` is what follows the values: [`PRINT_END_NEWLINE`] or [`PRINT_END_SPACE`] (a
/// `print` whose items a user's type prints itself is written in pieces).
pub type PrintHook = unsafe extern "C" fn(types: *const u32, n: u64, slots: *const u64, end: u32);

/// `print`'s values followed by a newline.
pub const PRINT_END_NEWLINE: u32 = 0;
/// `print`'s values followed by a space (more items follow).
pub const PRINT_END_SPACE: u32 = 1;

static PRINT_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Make a MemInfo that owns a reference to a NumPy array (`parent`, whose data is
/// `data`): what a borrowed array argument becomes when compiled code stores it into a
/// container that outlives the call. Installed by the embedder (it takes the GIL).
pub type AdoptHook = unsafe extern "C" fn(parent: *mut u8, data: *mut u8) -> *mut u8;

static ADOPT_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Install the function [`numba_rs_array_adopt`] calls.
pub fn set_adopt_hook(hook: AdoptHook) {
    ADOPT_HOOK.store(hook as usize, Ordering::SeqCst);
}

/// A MemInfo owning a reference to the array `parent` (null without a hook, or when it
/// cannot be made: the value then stays borrowed).
///
/// # Safety
/// `parent` is a live NumPy array whose data is `data`.
pub unsafe extern "C" fn numba_rs_array_adopt(parent: *mut u8, data: *mut u8) -> *mut u8 {
    let hook = ADOPT_HOOK.load(Ordering::SeqCst);
    if hook == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: only `set_adopt_hook` stores a non-zero value, a valid AdoptHook.
    let f: AdoptHook = unsafe { std::mem::transmute::<usize, AdoptHook>(hook) };
    // SAFETY: forwarded from the caller.
    unsafe { f(parent, data) }
}

/// Install the function `print` calls in JIT-ed code.
pub fn set_print_hook(hook: PrintHook) {
    PRINT_HOOK.store(hook as usize, Ordering::SeqCst);
}

/// What JIT-ed `print` calls: the installed hook, or (with none, in Rust-only use) a
/// plain rendering of the typecodes and slots on stdout.
///
/// # Safety
/// `types` and `slots` must be valid for `n` typecodes and their slots.
pub unsafe extern "C" fn numba_rs_print(types: *const u32, n: u64, slots: *const u64, end: u32) {
    let hook = PRINT_HOOK.load(Ordering::SeqCst);
    if hook != 0 {
        // SAFETY: only `set_print_hook` stores a non-zero value, a valid PrintHook.
        let f: PrintHook = unsafe { std::mem::transmute::<usize, PrintHook>(hook) };
        // SAFETY: forwarded from the caller.
        unsafe { f(types, n, slots, end) };
        return;
    }
    // SAFETY: per the contract, types holds n typecodes.
    let tys = unsafe { std::slice::from_raw_parts(types, n as usize) };
    let parts: Vec<String> = tys
        .iter()
        .map(|&t| numba_typeinfer::TypeId(t).to_string())
        .collect();
    print!(
        "{}{}",
        parts.join(" "),
        if end == PRINT_END_SPACE { " " } else { "\n" }
    );
}

/// CPython's `_PyHASH_MODULUS` (2**61 - 1).
const MODULUS: u64 = (1 << 61) - 1;
const BITS: u32 = 61;

extern "C" {
    fn frexp(x: f64, exp: *mut c_int) -> f64;
    fn ldexp(x: f64, exp: c_int) -> f64;
}

/// A C99 `double _Complex` (same classification, hence same passing, on the SysV and
/// AArch64 ABIs).
#[repr(C)]
#[derive(Clone, Copy)]
struct CDouble {
    re: f64,
    im: f64,
}

extern "C" {
    fn csqrt(z: CDouble) -> CDouble;
    fn cexp(z: CDouble) -> CDouble;
    fn clog(z: CDouble) -> CDouble;
    fn csin(z: CDouble) -> CDouble;
    fn ccos(z: CDouble) -> CDouble;
    fn ctan(z: CDouble) -> CDouble;
    fn casin(z: CDouble) -> CDouble;
    fn cacos(z: CDouble) -> CDouble;
    fn catan(z: CDouble) -> CDouble;
    fn csinh(z: CDouble) -> CDouble;
    fn ccosh(z: CDouble) -> CDouble;
    fn ctanh(z: CDouble) -> CDouble;
    fn casinh(z: CDouble) -> CDouble;
    fn cacosh(z: CDouble) -> CDouble;
    fn catanh(z: CDouble) -> CDouble;
}

/// `cmath.<CMATH_COMPLEX[op]>(re + im*j)` into `out[0..2]`, through libm's C99 complex
/// functions.
///
/// # Safety
/// `out` must be valid for two writes.
pub unsafe extern "C" fn numba_rs_cmath(op: u32, re: f64, im: f64, out: *mut f64) {
    let z = CDouble { re, im };
    use numba_typeinfer::builtins::{CMATH_COMPLEX, NPY_COMPLEX};
    let name = CMATH_COMPLEX
        .iter()
        .chain(NPY_COMPLEX)
        .nth(op as usize)
        .copied()
        .unwrap_or("");
    // SAFETY: pure libm functions on a value argument.
    let r = unsafe {
        match name {
            "sqrt" => csqrt(z),
            "exp" => cexp(z),
            "log" => clog(z),
            "log10" => {
                let l = clog(z);
                CDouble {
                    re: l.re / std::f64::consts::LN_10,
                    im: l.im / std::f64::consts::LN_10,
                }
            }
            "sin" => csin(z),
            "cos" => ccos(z),
            "tan" => ctan(z),
            "asin" => casin(z),
            "acos" => cacos(z),
            "atan" => catan(z),
            "sinh" => csinh(z),
            "cosh" => ccosh(z),
            "tanh" => ctanh(z),
            "asinh" => casinh(z),
            "acosh" => cacosh(z),
            "atanh" => catanh(z),
            // NumPy's `nc_log2`, `nc_expm1`, `nc_log1p`, `nc_exp2` (npy_math_complex).
            "log2" => {
                let l = clog(z);
                CDouble {
                    re: l.re / std::f64::consts::LN_2,
                    im: l.im / std::f64::consts::LN_2,
                }
            }
            "expm1" => {
                let a = (z.im / 2.0).sin();
                CDouble {
                    re: z.re.exp_m1() * z.im.cos() - 2.0 * a * a,
                    im: z.re.exp() * z.im.sin(),
                }
            }
            "log1p" => {
                let x = z.re + 1.0;
                CDouble {
                    re: x.hypot(z.im).ln(),
                    im: z.im.atan2(x),
                }
            }
            "exp2" => cexp(CDouble {
                re: z.re * std::f64::consts::LN_2,
                im: z.im * std::f64::consts::LN_2,
            }),
            "rint" => CDouble {
                re: z.re.round_ties_even(),
                im: z.im.round_ties_even(),
            },
            _ => CDouble {
                re: f64::NAN,
                im: f64::NAN,
            },
        }
    };
    // SAFETY: guaranteed by the caller.
    unsafe {
        *out = r.re;
        *out.add(1) = r.im;
    }
}

/// CPython's complex division (`_Py_c_quot`, Smith's algorithm); `None` for a zero
/// divisor.
fn c_quot(a: (f64, f64), b: (f64, f64)) -> Option<(f64, f64)> {
    let (abs_breal, abs_bimag) = (b.0.abs(), b.1.abs());
    if abs_breal >= abs_bimag {
        if abs_breal == 0.0 {
            return None;
        }
        let ratio = b.1 / b.0;
        let denom = b.0 + b.1 * ratio;
        Some(((a.0 + a.1 * ratio) / denom, (a.1 - a.0 * ratio) / denom))
    } else if abs_bimag >= abs_breal {
        let ratio = b.0 / b.1;
        let denom = b.0 * ratio + b.1;
        Some(((a.0 * ratio + a.1) / denom, (a.1 * ratio - a.0) / denom))
    } else {
        Some((f64::NAN, f64::NAN))
    }
}

fn c_mul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// `a ** b` on complex numbers as CPython computes it (`complex_pow`): repeated
/// multiplication for an integral exponent of at most 100, else polar form. Writes the
/// result to `out[0..2]`; returns 1 for zero to a negative or complex power (CPython's
/// ZeroDivisionError), else 0.
///
/// # Safety
/// `out` must be valid for two writes.
pub unsafe extern "C" fn numba_rs_cpow(ar: f64, ai: f64, br: f64, bi: f64, out: *mut f64) -> i32 {
    let a = (ar, ai);
    let r: Option<(f64, f64)> = if bi == 0.0 && br == br.floor() && br.abs() <= 100.0 {
        let n = br as i64;
        let mut r = (1.0, 0.0);
        let mut p = a;
        let mut m = n.unsigned_abs();
        while m > 0 {
            if m & 1 == 1 {
                r = c_mul(r, p);
            }
            m >>= 1;
            if m > 0 {
                p = c_mul(p, p);
            }
        }
        if n < 0 {
            c_quot((1.0, 0.0), r)
        } else {
            Some(r)
        }
    } else if br == 0.0 && bi == 0.0 {
        Some((1.0, 0.0))
    } else if ar == 0.0 && ai == 0.0 {
        if bi != 0.0 || br < 0.0 {
            None
        } else {
            Some((0.0, 0.0))
        }
    } else {
        let vabs = ar.hypot(ai);
        let mut len = vabs.powf(br);
        let at = ai.atan2(ar);
        let mut phase = at * br;
        if bi != 0.0 {
            len /= (at * bi).exp();
            phase += bi * vabs.ln();
        }
        Some((len * phase.cos(), len * phase.sin()))
    };
    let (status, (re, im)) = match r {
        Some(v) => (0, v),
        None => (1, (f64::INFINITY, f64::NAN)),
    };
    // SAFETY: guaranteed by the caller.
    unsafe {
        *out = re;
        *out.add(1) = im;
    }
    status
}

/// `hash(int)` as CPython computes it for a machine integer.
pub extern "C" fn numba_rs_hash_int(x: i64) -> i64 {
    // Most integers are their own hash (|x| below the modulus); -1 is reserved.
    let small = MODULUS as i64;
    if x > -small && x < small {
        return if x == -1 { -2 } else { x };
    }
    let m = i128::from(MODULUS);
    let v = i128::from(x);
    let h = if v >= 0 { v % m } else { -((-v) % m) };
    let h = h as i64;
    if h == -1 {
        -2
    } else {
        h
    }
}

/// `hash(float)` as CPython's `_Py_HashDouble`. A NaN's 3.10+ hash is its object's
/// address, which native values have none of: each NaN hashed gets a value of its own
/// (a counter scrambled by SplitMix64), as distinct NaN objects do (and as Numba does).
pub extern "C" fn numba_rs_hash_double(v: f64) -> i64 {
    if v.is_infinite() {
        return if v > 0.0 { 314_159 } else { -314_159 };
    }
    if v.is_nan() {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let mut z = NEXT
            .fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        return ((z ^ (z >> 31)) >> 2) as i64;
    }
    let mut e: c_int = 0;
    // SAFETY: frexp only writes the exponent through the valid pointer.
    let mut m = unsafe { frexp(v, &mut e) };
    let mut sign: i64 = 1;
    if m < 0.0 {
        sign = -1;
        m = -m;
    }
    let mut x: u64 = 0;
    while m != 0.0 {
        x = ((x << 28) & MODULUS) | (x >> (BITS - 28));
        m *= 268_435_456.0;
        e -= 28;
        let y = m as u64;
        m -= y as f64;
        x += y;
        if x >= MODULUS {
            x -= MODULUS;
        }
    }
    let e = if e >= 0 {
        e % BITS as c_int
    } else {
        BITS as c_int - 1 - ((-1 - e) % BITS as c_int)
    } as u32;
    x = ((x << e) & MODULUS) | (x >> (BITS - e));
    let h = (x as i64).wrapping_mul(sign);
    if h == -1 {
        -2
    } else {
        h
    }
}

/// `math.frexp(x)`: the mantissa, the exponent through `exp`.
///
/// # Safety
/// `exp` must be valid for a write.
pub unsafe extern "C" fn numba_rs_frexp(x: f64, exp: *mut i64) -> f64 {
    let mut e: c_int = 0;
    // SAFETY: e is a valid local.
    let m = unsafe { frexp(x, &mut e) };
    // SAFETY: guaranteed by the caller.
    unsafe { *exp = i64::from(e) };
    m
}

/// `math.ldexp(x, i)` with the exponent clamped to C's int.
pub extern "C" fn numba_rs_ldexp(x: f64, i: i64) -> f64 {
    let i = i.clamp(i64::from(c_int::MIN), i64::from(c_int::MAX)) as c_int;
    // SAFETY: ldexp is a pure libm function.
    unsafe { ldexp(x, i) }
}

/// `math.gcd(a, b)`: non-negative, as Python's.
pub extern "C" fn numba_rs_gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

/// `pow(b, e, m)` with Python's sign convention (the result takes `m`'s sign); returns 0
/// and sets `*bad` when `m` is 0 or `e` is negative (Python then needs a modular inverse,
/// which Numba does not support either).
///
/// # Safety
/// `bad` must be valid for a write.
pub unsafe extern "C" fn numba_rs_pow_mod(b: i64, e: i64, m: i64, bad: *mut i64) -> i64 {
    if m == 0 || e < 0 {
        // SAFETY: guaranteed by the caller.
        unsafe { *bad = 1 };
        return 0;
    }
    let mm = i128::from(m).abs();
    let mut base = i128::from(b).rem_euclid(mm);
    let mut e = e;
    let mut r: i128 = 1 % mm;
    while e > 0 {
        if e & 1 == 1 {
            r = r * base % mm;
        }
        base = base * base % mm;
        e >>= 1;
    }
    if m < 0 && r != 0 {
        r -= mm;
    }
    r as i64
}

/// How a foreign wrapper hands over an exception: the native status, the record (null for
/// a status without one) and [`crate::wrappers::REPORT_LOOP`] (make it the pending Python
/// exception) or [`crate::wrappers::REPORT_UNRAISABLE`] (report it as unraisable). The
/// hook owns the record. Installed by the embedder, which may be called without the GIL.
pub type ErrorReportHook = unsafe extern "C" fn(status: i32, rec: *const ExcInfo, mode: i32);

static ERROR_REPORT_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Install the function wrappers report exceptions through.
pub fn set_error_report_hook(hook: ErrorReportHook) {
    ERROR_REPORT_HOOK.store(hook as usize, Ordering::SeqCst);
}

/// What a ufunc loop or cfunc wrapper calls when the function raised: the installed
/// hook, or (with none, in Rust-only use) a line on stderr; the record is freed either way.
///
/// # Safety
/// `rec` must be null or a record stored by generated code, not freed before.
pub unsafe extern "C" fn numba_rs_report_error(status: i32, rec: *const ExcInfo, mode: i32) {
    let hook = ERROR_REPORT_HOOK.load(Ordering::SeqCst);
    if hook != 0 {
        // SAFETY: only `set_error_report_hook` stores a non-zero value.
        let f: ErrorReportHook = unsafe { std::mem::transmute::<usize, ErrorReportHook>(hook) };
        // SAFETY: forwarded from the caller, which gives up the record.
        unsafe { f(status, rec, mode) };
        return;
    }
    let class = if rec.is_null() {
        String::from("SystemError")
    } else {
        // SAFETY: a live record's class is a NUL-terminated string.
        unsafe { CStr::from_ptr((*rec).class) }
            .to_string_lossy()
            .into_owned()
    };
    eprintln!("exception {class} (status {status}) in a compiled callback");
    // SAFETY: as the caller guarantees.
    unsafe { numba_rs_exc_free(rec) };
}

/// Whether an exception of class `raised` is an instance of class `class` (both class keys
/// as `ExcInfo` records them). Installed by the embedder, who knows the class hierarchy.
pub type ExcMatchHook = unsafe extern "C" fn(raised: *const c_char, class: *const c_char) -> bool;

static EXC_MATCH_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Install the class test `except Class:` uses.
pub fn set_exc_match_hook(hook: ExcMatchHook) {
    EXC_MATCH_HOOK.store(hook as usize, Ordering::SeqCst);
}

/// `except Class:` on the caught record: the installed hook, or (with none) an exact
/// match, `Exception` and `BaseException` catching everything.
///
/// # Safety
/// `rec` must be null or a live record; `class` a NUL-terminated string.
pub unsafe extern "C" fn numba_rs_exc_match(rec: *const ExcInfo, class: *const c_char) -> bool {
    if rec.is_null() {
        return false;
    }
    // SAFETY: guaranteed by the caller.
    let raised = unsafe { (*rec).class };
    let hook = EXC_MATCH_HOOK.load(Ordering::SeqCst);
    if hook != 0 {
        // SAFETY: only `set_exc_match_hook` stores a non-zero value.
        let f: ExcMatchHook = unsafe { std::mem::transmute::<usize, ExcMatchHook>(hook) };
        // SAFETY: both are NUL-terminated strings from generated code.
        return unsafe { f(raised, class) };
    }
    // SAFETY: as above.
    let (r, c) = unsafe { (CStr::from_ptr(raised), CStr::from_ptr(class)) };
    r == c || matches!(c.to_bytes(), b"Exception" | b"BaseException")
}

/// Free an exception record if it was allocated at run time (null and static records are
/// left alone).
///
/// # Safety
/// `rec` must be null or a record stored by generated code, not freed before.
pub unsafe extern "C" fn numba_rs_exc_free(rec: *const ExcInfo) {
    // SAFETY: guaranteed by the caller.
    if !rec.is_null() && unsafe { (*rec).dynamic } != 0 {
        // SAFETY: a dynamic record states its argument types and slots; it holds a
        // reference to each array or string among them, dropped with it.
        unsafe {
            let info = &*rec;
            let slots = std::slice::from_raw_parts(info.args, info.nslots as usize);
            let mut pos = 0;
            for i in 0..info.nargs as usize {
                let t = numba_typeinfer::TypeId(*info.arg_types.add(i));
                if let Ok(shape) = crate::callconv::boundary_shape(t) {
                    crate::callconv::release_slots(&shape, slots, &mut pos);
                }
            }
        }
        // SAFETY: a dynamic record is one NRT_Allocate block.
        unsafe { numba_nrt::NRT_Free(rec as *mut u8) };
    }
}

/// Every helper by symbol name, with its address.
/// C functions the embedder links and hands to the JIT by name (numba-py's NumPy
/// `libnpyrandom` distributions behind `np.random.Generator`): the compiler core never
/// links them itself.
static HOST_SYMBOLS: std::sync::RwLock<Vec<(&'static str, usize)>> =
    std::sync::RwLock::new(Vec::new());

/// Make C functions of the embedder callable by name from generated code (added to
/// every engine made after this call).
pub fn register_host_symbols(symbols: &[(&'static str, usize)]) {
    let mut g = HOST_SYMBOLS.write().unwrap_or_else(|e| e.into_inner());
    for &(name, addr) in symbols {
        if !g.iter().any(|(n, _)| *n == name) {
            g.push((name, addr));
        }
    }
}

/// Whether the embedder registered a C function of this name.
pub fn has_host_symbol(name: &str) -> bool {
    HOST_SYMBOLS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|(n, _)| *n == name)
}

/// The embedder's registered C functions.
/// The host symbols registered after the first `from` (the table only grows).
pub fn host_symbols_from(from: usize) -> Vec<(&'static str, usize)> {
    HOST_SYMBOLS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(from..)
        .map(<[_]>::to_vec)
        .unwrap_or_default()
}

pub fn host_symbols() -> Vec<(&'static str, usize)> {
    HOST_SYMBOLS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("numba_rs_hash_int", numba_rs_hash_int as *const () as usize),
        (
            "numba_rs_hash_double",
            numba_rs_hash_double as *const () as usize,
        ),
        ("numba_rs_frexp", numba_rs_frexp as *const () as usize),
        ("numba_rs_ldexp", numba_rs_ldexp as *const () as usize),
        ("numba_rs_gcd", numba_rs_gcd as *const () as usize),
        ("numba_rs_pow_mod", numba_rs_pow_mod as *const () as usize),
        ("numba_rs_print", numba_rs_print as *const () as usize),
        (
            "numba_rs_array_adopt",
            numba_rs_array_adopt as *const () as usize,
        ),
        (
            "numba_rs_report_error",
            numba_rs_report_error as *const () as usize,
        ),
        ("numba_rs_cmath", numba_rs_cmath as *const () as usize),
        ("numba_rs_cpow", numba_rs_cpow as *const () as usize),
        (
            "numba_rs_exc_match",
            numba_rs_exc_match as *const () as usize,
        ),
        ("numba_rs_exc_free", numba_rs_exc_free as *const () as usize),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_like_cpython() {
        // Values from CPython 3.11: hash(-1), hash(2**61), hash(-2**63), hash(1.5),
        // hash(-0.5), hash(1e300), hash(3.0).
        assert_eq!(numba_rs_hash_int(-1), -2);
        assert_eq!(numba_rs_hash_int(1 << 61), 1);
        assert_eq!(numba_rs_hash_int(i64::MIN), -4);
        assert_eq!(numba_rs_hash_double(1.5), 1_152_921_504_606_846_977);
        assert_eq!(numba_rs_hash_double(-0.5), -1_152_921_504_606_846_976);
        assert_eq!(numba_rs_hash_double(1e300), 1_224_995_262_755_759_164);
        assert_eq!(numba_rs_hash_double(3.0), 3);
    }

    #[test]
    fn gcd_and_pow_mod_like_python() {
        assert_eq!(numba_rs_gcd(-12, 18), 6);
        assert_eq!(numba_rs_gcd(0, 0), 0);
        let mut bad = 0;
        // SAFETY: bad is a valid local.
        unsafe {
            assert_eq!(
                numba_rs_pow_mod(3, 200, 1_000_000_007, &mut bad),
                136_318_165
            );
            assert_eq!(numba_rs_pow_mod(-7, 3, 5, &mut bad), 2);
            assert_eq!(numba_rs_pow_mod(7, 3, -5, &mut bad), -2);
            assert_eq!(bad, 0);
            numba_rs_pow_mod(2, 3, 0, &mut bad);
        }
        assert_eq!(bad, 1);
    }
}
