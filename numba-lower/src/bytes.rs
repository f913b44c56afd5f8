//! Run-time helpers for `bytes` values (which share `model::unicode`'s layout, one byte
//! per character) and NumPy character-array items: conversions between items and the
//! strings they hold, and the `bytes` methods whose meaning differs from `str`'s (case,
//! character classes and whitespace are ASCII's alone, as CPython's `bytes` has them).
//! Every other `bytes` method is its `str` counterpart over the same bytes.

use numba_nrt::MemInfo;

use crate::str_methods::{str_list_with, whitespace_parts};
use crate::strings::{char_at, new_latin1, new_latin1_with, new_str_of, Str};

/// The string a character-array item holds: its `n` code units of `width` bytes (1 or
/// 4) up to the last non-NUL one (NumPy drops trailing NULs), as a new string into
/// `out`: 0, or -1 when the allocation failed.
///
/// # Safety
/// `data` holds `n` units of `width` bytes; `out` points to writable storage for a
/// string struct.
pub unsafe extern "C" fn numba_rs_charseq_to_str(
    data: *const u8,
    n: i64,
    width: i32,
    out: *mut Str,
) -> i32 {
    let n = n.max(0) as usize;
    // SAFETY: the caller's contract.
    unsafe {
        if width == 1 {
            let b = std::slice::from_raw_parts(data, n);
            let len = b.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            return new_latin1(&b[..len], out);
        }
        let units: Vec<u32> = (0..n)
            .map(|i| (data as *const u32).add(i).read_unaligned())
            .collect();
        let len = units.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        new_str_of(&units[..len], out)
    }
}

/// Store string `s` into a character-array item of `n` units of `width` bytes: its
/// first `n` characters, NUL padded (NumPy truncates a longer value).
///
/// # Safety
/// `s` points to a valid string struct; `data` has room for `n` units of `width` bytes.
pub unsafe extern "C" fn numba_rs_charseq_from_str(
    s: *const Str,
    data: *mut u8,
    n: i64,
    width: i32,
) {
    let n = n.max(0) as usize;
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*s;
        let len = (s.length.max(0) as usize).min(n);
        for i in 0..n {
            let c = if i < len {
                char_at(s.data, s.kind, i)
            } else {
                0
            };
            if width == 1 {
                *data.add(i) = c as u8;
            } else {
                (data as *mut u32).add(i).write_unaligned(c);
            }
        }
    }
}

/// `sep.join(a)` of a 1-d character array: `n` items `stride` bytes apart, each `units`
/// code units of `width` bytes (1 or 4) read up to its trailing NULs. A new string into
/// `out`: 0, or -1 when the allocation failed.
///
/// # Safety
/// `sep` points to a valid string struct; the items lie inside one live array; `out`
/// points to writable storage for a string struct.
pub unsafe extern "C" fn numba_rs_charseq_join(
    sep: *const Str,
    data: *const u8,
    n: i64,
    stride: i64,
    units: i64,
    width: i32,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let sep: Vec<u32> = crate::strings::chars(&*sep).collect();
        let mut r: Vec<u32> = Vec::new();
        for i in 0..n.max(0) {
            if i > 0 {
                r.extend_from_slice(&sep);
            }
            let item = data.offset((i * stride) as isize);
            let unit = |k: usize| {
                if width == 1 {
                    u32::from(*item.add(k))
                } else {
                    (item as *const u32).add(k).read_unaligned()
                }
            };
            let len = (0..units.max(0) as usize)
                .rev()
                .find(|&k| unit(k) != 0)
                .map_or(0, |k| k + 1);
            r.extend((0..len).map(unit));
        }
        new_str_of(&r, out)
    }
}

/// `b[i]` (negative from the end): the byte, or -1 when `i` is out of range.
///
/// # Safety
/// `s` points to a valid kind-1 string struct.
pub unsafe extern "C" fn numba_rs_bytes_getitem(s: *const Str, i: i64) -> i64 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*s;
        let i = if i < 0 { i + s.length } else { i };
        if i < 0 || i >= s.length {
            return -1;
        }
        i64::from(*s.data.add(i as usize))
    }
}

/// # Safety
/// `s` points to a valid kind-1 string struct.
unsafe fn data<'a>(s: *const Str) -> &'a [u8] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts((*s).data, (*s).length.max(0) as usize) }
}

fn ascii_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// `b.lower()`, `upper`, `swapcase`, `title`, `capitalize` by `op` 0 to 4: ASCII letters
/// alone change.
///
/// # Safety
/// `s` points to a valid kind-1 string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_bytes_case(s: *const Str, op: i32, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    let src = unsafe { data(s) };
    let mut v = src.to_vec();
    match op {
        0 => v.make_ascii_lowercase(),
        1 => v.make_ascii_uppercase(),
        2 => v.iter_mut().for_each(|c| {
            if c.is_ascii_alphabetic() {
                *c ^= 0x20;
            }
        }),
        3 => {
            let mut prev_cased = false;
            for c in v.iter_mut() {
                if c.is_ascii_lowercase() && !prev_cased {
                    *c = c.to_ascii_uppercase();
                } else if c.is_ascii_uppercase() && prev_cased {
                    *c = c.to_ascii_lowercase();
                }
                prev_cased = c.is_ascii_alphabetic();
            }
        }
        _ => {
            for (i, c) in v.iter_mut().enumerate() {
                *c = if i == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                };
            }
        }
    }
    // SAFETY: the caller's contract.
    unsafe { new_latin1(&v, out) }
}

/// The `bytes` predicates, by `str`'s predicate index (`impls::str_methods`' order:
/// isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable
/// isspace istitle isupper): 1 or 0.
///
/// # Safety
/// `s` points to a valid kind-1 string struct.
pub unsafe extern "C" fn numba_rs_bytes_is(s: *const Str, which: i32) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { data(s) };
    let all = |f: fn(&u8) -> bool| !v.is_empty() && v.iter().all(f);
    let r = match which {
        0 => all(u8::is_ascii_alphanumeric),
        1 => all(u8::is_ascii_alphabetic),
        2 => v.is_ascii(),
        4 => all(u8::is_ascii_digit),
        6 => v.iter().any(u8::is_ascii_lowercase) && !v.iter().any(u8::is_ascii_uppercase),
        9 => all(|c| ascii_space(*c)),
        10 => {
            let (mut cased, mut prev) = (false, false);
            let mut ok = true;
            for c in v {
                if c.is_ascii_uppercase() {
                    ok &= !prev;
                    prev = true;
                    cased = true;
                } else if c.is_ascii_lowercase() {
                    ok &= prev;
                    prev = true;
                    cased = true;
                } else {
                    prev = false;
                }
            }
            ok && cased
        }
        11 => v.iter().any(u8::is_ascii_uppercase) && !v.iter().any(u8::is_ascii_lowercase),
        _ => false,
    };
    i32::from(r)
}

/// `b.split()` (`op` 0) or `b.rsplit()` (`op` 1) on runs of ASCII whitespace, at most
/// `maxsplit` times (< 0: no limit). The new list's MemInfo goes to `out`: 0, or -1
/// when an allocation failed.
///
/// # Safety
/// `s` points to a valid kind-1 string struct; `refs` is the items' reference map.
pub unsafe extern "C" fn numba_rs_bytes_split_ws(
    s: *const Str,
    maxsplit: i64,
    op: i32,
    refs: *const i32,
    out: *mut *mut MemInfo,
) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { data(s) };
    let mut parts: Vec<&[u8]> = Vec::new();
    whitespace_parts(v, ascii_space, maxsplit, op != 0, |a, b| {
        parts.push(&v[a..b])
    });
    if op != 0 {
        parts.reverse();
    }
    // SAFETY: the caller's contract.
    unsafe { emit_list(&parts, refs, out) }
}

/// A new list of bytes values holding these parts.
///
/// # Safety
/// `refs` is the items' reference map; `out` is writable.
unsafe fn emit_list(parts: &[&[u8]], refs: *const i32, out: *mut *mut MemInfo) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let mi = str_list_with(parts.len(), refs, |i, o| new_latin1(parts[i], o));
        if mi.is_null() {
            return -1;
        }
        *out = mi;
    }
    0
}

/// `b.strip()`, `lstrip()`, `rstrip()` by `op` 0/1/2: ASCII whitespace.
///
/// # Safety
/// `s` points to a valid kind-1 string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_bytes_strip_ws(s: *const Str, op: i32, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { data(s) };
    let (mut a, mut b) = (0, v.len());
    if op != 2 {
        while a < b && ascii_space(v[a]) {
            a += 1;
        }
    }
    if op != 1 {
        while b > a && ascii_space(v[b - 1]) {
            b -= 1;
        }
    }
    let part = &v[a..b];
    // SAFETY: the caller's contract.
    unsafe {
        new_latin1_with(
            part.len(),
            part.is_ascii(),
            |d| d.copy_from_slice(part),
            out,
        )
    }
}

/// `b.splitlines(keepends)`: `bytes`' line boundaries, `\n`, `\r` and `\r\n` alone.
///
/// # Safety
/// As [`numba_rs_bytes_split_ws`].
pub unsafe extern "C" fn numba_rs_bytes_splitlines(
    s: *const Str,
    keepends: i32,
    refs: *const i32,
    out: *mut *mut MemInfo,
) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { data(s) };
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let start = i;
        while i < v.len() && v[i] != b'\n' && v[i] != b'\r' {
            i += 1;
        }
        let mut eol = i;
        if i < v.len() {
            i += if v[i] == b'\r' && v.get(i + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            if keepends != 0 {
                eol = i;
            }
        }
        parts.push(&v[start..eol]);
    }
    // SAFETY: the caller's contract.
    unsafe { emit_list(&parts, refs, out) }
}

/// The helpers' symbols for the JIT.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        (
            "numba_rs_charseq_to_str",
            numba_rs_charseq_to_str as *const () as usize,
        ),
        (
            "numba_rs_charseq_from_str",
            numba_rs_charseq_from_str as *const () as usize,
        ),
        (
            "numba_rs_charseq_join",
            numba_rs_charseq_join as *const () as usize,
        ),
        (
            "numba_rs_bytes_getitem",
            numba_rs_bytes_getitem as *const () as usize,
        ),
        (
            "numba_rs_bytes_case",
            numba_rs_bytes_case as *const () as usize,
        ),
        ("numba_rs_bytes_is", numba_rs_bytes_is as *const () as usize),
        (
            "numba_rs_bytes_split_ws",
            numba_rs_bytes_split_ws as *const () as usize,
        ),
        (
            "numba_rs_bytes_strip_ws",
            numba_rs_bytes_strip_ws as *const () as usize,
        ),
        (
            "numba_rs_bytes_splitlines",
            numba_rs_bytes_splitlines as *const () as usize,
        ),
    ]
}
