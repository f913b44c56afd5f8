//! The `str` methods' run-time side, with CPython 3.11's semantics: case mapping and
//! character classes from `unicode_db` (generated from CPython itself), searching,
//! padding, stripping, splitting and joining. The lowering (`impls::unicode`) calls each
//! as `numba_rs_str_<method>(self, args..., out) -> status`, strings by pointer; the
//! status is 0, -1 for a failed allocation, or one of [`Status`]'s errors.

use numba_nrt::MemInfo;

use crate::lists::ListPayload;
use crate::strings::{chars, new_str_of, Str};
use crate::unicode_db as db;

/// The errors a method raises, by the status it returns (the lowering's table of
/// exception classes and messages follows this order).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    SubstringNotFound = 1,
    EmptySeparator = 2,
    FillCharNotOneChar = 3,
}

/// Each [`Status`]'s exception class and message, by status - 1.
pub const ERRORS: &[(&str, &str)] = &[
    ("ValueError", "substring not found"),
    ("ValueError", "empty separator"),
    (
        "TypeError",
        "The fill character must be exactly one character long",
    ),
];

/// Bytes of one string item in a list (its seven slots).
pub const STR_SLOTS: usize = 7;

/// The flags of code point `c` (`unicode_db`'s bits).
pub fn flags(c: u32) -> u16 {
    // Latin-1 (most text) from a table; the rest by binary search over the ranges.
    static LATIN1: std::sync::LazyLock<[u16; 256]> =
        std::sync::LazyLock::new(|| std::array::from_fn(|c| search_flags(c as u32)));
    if c < 256 {
        return LATIN1[c as usize];
    }
    search_flags(c)
}

fn search_flags(c: u32) -> u16 {
    use std::cmp::Ordering;
    match db::FLAG_RANGES.binary_search_by(|&(a, b, _)| {
        if b < c {
            Ordering::Less
        } else if a > c {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }) {
        Ok(i) => db::FLAG_RANGES[i].2,
        Err(_) => 0,
    }
}

fn has(c: u32, f: u16) -> bool {
    flags(c) & f != 0
}

/// Which case mapping.
#[derive(Clone, Copy)]
enum Map {
    Lower,
    Upper,
    Title,
    Fold,
}

/// Push `c`'s full mapping (one to three characters).
fn push_mapped(c: u32, m: Map, out: &mut Vec<u32>) {
    if c < 0x80 {
        let lower = (b'A' as u32..=b'Z' as u32).contains(&c);
        let upper = (b'a' as u32..=b'z' as u32).contains(&c);
        out.push(match m {
            Map::Lower | Map::Fold if lower => c + 32,
            Map::Upper | Map::Title if upper => c - 32,
            _ => c,
        });
        return;
    }
    match db::CASES.binary_search_by_key(&c, |e| e.0) {
        Ok(i) => {
            let e = db::CASES[i];
            let v = match m {
                Map::Lower => e.1,
                Map::Upper => e.2,
                Map::Title => e.3,
                Map::Fold => e.4,
            };
            if v & db::EXPANSION != 0 {
                let x = db::EXPANSIONS[(v & !db::EXPANSION) as usize];
                out.extend(x.iter().copied().filter(|&ch| ch != 0));
            } else {
                out.push(v);
            }
        }
        Err(_) => out.push(c),
    }
}

/// Lowercase `s[i]`, with CPython's final-sigma rule for U+03A3.
fn push_lower_at(s: &[u32], i: usize, out: &mut Vec<u32>) {
    if s[i] != 0x3A3 {
        push_mapped(s[i], Map::Lower, out);
        return;
    }
    let cased = |c: u32| has(c, db::CASED);
    let ignorable = |c: u32| has(c, db::CASE_IGNORABLE);
    let mut j = i;
    while j > 0 && ignorable(s[j - 1]) {
        j -= 1;
    }
    let mut final_sigma = j > 0 && cased(s[j - 1]);
    if final_sigma {
        let mut k = i + 1;
        while k < s.len() && ignorable(s[k]) {
            k += 1;
        }
        final_sigma = k == s.len() || !cased(s[k]);
    }
    out.push(if final_sigma { 0x3C2 } else { 0x3C3 });
}

/// # Safety
/// `s` points to a valid string struct.
unsafe fn read(s: *const Str) -> Vec<u32> {
    // SAFETY: the caller's contract.
    unsafe { chars(&*s).collect() }
}

/// # Safety
/// `s` points to a valid string struct.
unsafe fn is_ascii(s: *const Str) -> bool {
    // SAFETY: the caller's contract.
    unsafe { (*s).is_ascii != 0 }
}

/// The bytes of an ASCII string.
///
/// # Safety
/// `s` points to a valid kind-1 string struct.
unsafe fn ascii_bytes<'a>(s: *const Str) -> &'a [u8] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts((*s).data, (*s).length.max(0) as usize) }
}

/// A new string from characters, in the smallest kind.
///
/// # Safety
/// `out` points to writable storage for a string struct.
unsafe fn emit(chars: &[u32], out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { new_str_of(chars, out) }
}

/// A new ASCII string of `src` mapped byte by byte.
///
/// # Safety
/// `out` points to writable storage for a string struct.
unsafe fn emit_ascii_map(src: &[u8], f: fn(&u8) -> u8, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract; ASCII maps to ASCII.
    unsafe {
        crate::strings::new_latin1_with(
            src.len(),
            true,
            |d| {
                for (o, b) in d.iter_mut().zip(src) {
                    *o = f(b);
                }
            },
            out,
        )
    }
}

macro_rules! case_method {
    ($name:ident, $doc:literal, $body:expr) => {
        #[doc = $doc]
        ///
        /// # Safety
        /// `s` points to a valid string struct, `out` to writable storage for one.
        pub unsafe extern "C" fn $name(s: *const Str, out: *mut Str) -> i32 {
            // SAFETY: the caller's contract.
            unsafe {
                let v = read(s);
                let f: fn(&[u32]) -> Vec<u32> = $body;
                emit(&f(&v), out)
            }
        }
    };
}

fn lower_all(v: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(v.len());
    for i in 0..v.len() {
        push_lower_at(v, i, &mut out);
    }
    out
}

fn map_all(v: &[u32], m: Map) -> Vec<u32> {
    let mut out = Vec::with_capacity(v.len());
    for &c in v {
        push_mapped(c, m, &mut out);
    }
    out
}

/// `s.lower()`.
///
/// # Safety
/// `s` points to a valid string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_lower(s: *const Str, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        if is_ascii(s) {
            return emit_ascii_map(ascii_bytes(s), u8::to_ascii_lowercase, out);
        }
        emit(&lower_all(&read(s)), out)
    }
}

/// `s.upper()`.
///
/// # Safety
/// `s` points to a valid string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_upper(s: *const Str, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        if is_ascii(s) {
            return emit_ascii_map(ascii_bytes(s), u8::to_ascii_uppercase, out);
        }
        emit(&map_all(&read(s), Map::Upper), out)
    }
}

case_method!(numba_rs_str_casefold, "`s.casefold()`.", |v| map_all(
    v,
    Map::Fold
));

case_method!(
    numba_rs_str_swapcase,
    "`s.swapcase()`: uppercase letters lowered (final sigma too), lowercase raised.",
    |v| {
        let mut out = Vec::with_capacity(v.len());
        for i in 0..v.len() {
            if has(v[i], db::UPPER) {
                push_lower_at(v, i, &mut out);
            } else if has(v[i], db::LOWER) {
                push_mapped(v[i], Map::Upper, &mut out);
            } else {
                out.push(v[i]);
            }
        }
        out
    }
);

case_method!(
    numba_rs_str_title,
    "`s.title()`: a character after a cased one lowered, any other titlecased.",
    |v| {
        let mut out = Vec::with_capacity(v.len());
        let mut previous_cased = false;
        for i in 0..v.len() {
            if previous_cased {
                push_lower_at(v, i, &mut out);
            } else {
                push_mapped(v[i], Map::Title, &mut out);
            }
            previous_cased = has(v[i], db::CASED);
        }
        out
    }
);

case_method!(
    numba_rs_str_capitalize,
    "`s.capitalize()`: the first character titlecased, the rest lowered.",
    |v| {
        let mut out = Vec::with_capacity(v.len());
        for i in 0..v.len() {
            if i == 0 {
                push_mapped(v[0], Map::Title, &mut out);
            } else {
                push_lower_at(v, i, &mut out);
            }
        }
        out
    }
);

/// The character-class predicates, by number (the lowering's order): 0 isalnum,
/// 1 isalpha, 2 isascii, 3 isdecimal, 4 isdigit, 5 isidentifier, 6 islower,
/// 7 isnumeric, 8 isprintable, 9 isspace, 10 istitle, 11 isupper. 1 or 0.
///
/// # Safety
/// `s` points to a valid string struct.
pub unsafe extern "C" fn numba_rs_str_is(s: *const Str, which: i32) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let all = |f: u16| !v.is_empty() && v.iter().all(|&c| has(c, f));
    let r = match which {
        0 => {
            let any = db::ALPHA | db::DECIMAL | db::DIGIT | db::NUMERIC;
            all(any) && v.iter().all(|&c| has(c, any))
        }
        1 => all(db::ALPHA),
        2 => v.iter().all(|&c| c < 0x80),
        3 => all(db::DECIMAL),
        4 => all(db::DIGIT),
        5 => {
            !v.is_empty()
                && has(v[0], db::XID_START)
                && v[1..].iter().all(|&c| has(c, db::XID_CONTINUE))
        }
        6 => {
            let mut cased = false;
            for &c in &v {
                if has(c, db::UPPER | db::TITLE) {
                    return 0;
                }
                cased |= has(c, db::LOWER);
            }
            cased
        }
        7 => all(db::NUMERIC),
        8 => v.iter().all(|&c| has(c, db::PRINTABLE)),
        9 => all(db::SPACE),
        10 => {
            let (mut cased, mut previous) = (false, false);
            for &c in &v {
                if has(c, db::UPPER | db::TITLE) {
                    if previous {
                        return 0;
                    }
                    previous = true;
                    cased = true;
                } else if has(c, db::LOWER) {
                    if !previous {
                        return 0;
                    }
                    previous = true;
                    cased = true;
                } else {
                    previous = false;
                }
            }
            cased
        }
        _ => {
            let mut cased = false;
            for &c in &v {
                if has(c, db::LOWER | db::TITLE) {
                    return 0;
                }
                cased |= has(c, db::UPPER);
            }
            cased
        }
    };
    i32::from(r)
}

/// The slice bounds `[start:end]` of a string of `n` characters, as CPython's
/// `ADJUST_INDICES` (None is `i64::MIN`).
fn bounds(n: usize, start: i64, end: i64) -> (usize, usize) {
    let n = n as i64;
    // A start past the end stays there (the search then finds nothing), as CPython's
    // ADJUST_INDICES leaves it; the end is clamped.
    let adjust = |x: i64, none: i64, clamp: bool| -> i64 {
        if x == i64::MIN {
            none
        } else if x < 0 {
            (x + n).max(0)
        } else if clamp {
            x.min(n)
        } else {
            x
        }
    };
    (
        adjust(start, 0, false) as usize,
        adjust(end, n, true) as usize,
    )
}

fn find_in(h: &[u32], n: &[u32], from: usize, to: usize) -> Option<usize> {
    if to < from || to - from < n.len() {
        return None;
    }
    (from..=to - n.len()).find(|&i| h[i..i + n.len()] == *n)
}

fn rfind_in(h: &[u32], n: &[u32], from: usize, to: usize) -> Option<usize> {
    if to < from || to - from < n.len() {
        return None;
    }
    (from..=to - n.len())
        .rev()
        .find(|&i| h[i..i + n.len()] == *n)
}

/// A string's characters read in place (no copy): the searches run over these.
struct View<'a> {
    s: &'a Str,
}

impl View<'_> {
    fn len(&self) -> usize {
        self.s.length.max(0) as usize
    }
    fn at(&self, i: usize) -> u32 {
        // SAFETY: callers index below the length of a valid string.
        unsafe { crate::strings::char_at(self.s.data, self.s.kind, i) }
    }
    /// Whether `n` occurs at `i` (`i + n.len() <= len`).
    fn matches(&self, i: usize, n: &View) -> bool {
        if self.s.kind == 1 && n.s.kind == 1 {
            // SAFETY: both ranges are inside the strings' data.
            unsafe {
                std::slice::from_raw_parts(self.s.data.add(i), n.len())
                    == std::slice::from_raw_parts(n.s.data, n.len())
            }
        } else {
            (0..n.len()).all(|k| self.at(i + k) == n.at(k))
        }
    }
    fn find(&self, n: &View, from: usize, to: usize) -> Option<usize> {
        if to < from || to - from < n.len() {
            return None;
        }
        if n.len() == 0 {
            return Some(from);
        }
        let first = n.at(0);
        if self.s.kind == 1 && n.s.kind == 1 {
            // SAFETY: `from..to` is inside the data.
            let h = unsafe { std::slice::from_raw_parts(self.s.data, to) };
            let first = first as u8;
            let mut i = from;
            while i + n.len() <= to {
                match h[i..=to - n.len()].iter().position(|&b| b == first) {
                    None => return None,
                    Some(k) => {
                        if self.matches(i + k, n) {
                            return Some(i + k);
                        }
                        i += k + 1;
                    }
                }
            }
            return None;
        }
        (from..=to - n.len()).find(|&i| self.at(i) == first && self.matches(i, n))
    }
    fn rfind(&self, n: &View, from: usize, to: usize) -> Option<usize> {
        if to < from || to - from < n.len() {
            return None;
        }
        (from..=to - n.len()).rev().find(|&i| self.matches(i, n))
    }
}

/// `s.find`/`rfind`/`index`/`rindex`/`count`/`startswith`/`endswith(sub, start, end)`
/// by `op`: 0 find, 1 rfind, 2 index, 3 rindex, 4 count, 5 startswith, 6 endswith.
/// The answer goes to `out`; the status is [`Status::SubstringNotFound`] for `index`
/// and `rindex` that find nothing. The strings are read in place.
///
/// # Safety
/// `s` and `sub` point to valid string structs, `out` to a writable i64.
pub unsafe extern "C" fn numba_rs_str_search(
    s: *const Str,
    sub: *const Str,
    start: i64,
    end: i64,
    op: i32,
    out: *mut i64,
) -> i32 {
    // SAFETY: the caller's contract.
    let (h, n) = unsafe { (View { s: &*s }, View { s: &*sub }) };
    let (from, to) = bounds(h.len(), start, end);
    let found = |x: Option<usize>| x.map_or(-1, |i| i as i64);
    let fits = to >= from && to - from >= n.len();
    let r = match op {
        0 | 2 => found(h.find(&n, from, to)),
        1 | 3 => found(h.rfind(&n, from, to)),
        4 => {
            if !fits {
                0
            } else if n.len() == 0 {
                (to - from + 1) as i64
            } else {
                let mut count = 0;
                let mut i = from;
                while let Some(k) = h.find(&n, i, to) {
                    count += 1;
                    i = k + n.len();
                }
                count
            }
        }
        5 => i64::from(fits && h.matches(from, &n)),
        _ => i64::from(fits && h.matches(to - n.len(), &n)),
    };
    // SAFETY: the caller's contract.
    unsafe { *out = r };
    if r < 0 && (op == 2 || op == 3) {
        return Status::SubstringNotFound as i32;
    }
    0
}

/// `s.center`/`ljust`/`rjust(width, fillchar)` by `op` 0/1/2, and `s.zfill(width)`
/// (`op` 3, `fill` unused).
///
/// # Safety
/// `s` and `fill` (when `op` < 3) point to valid string structs, `out` to writable
/// storage for one.
pub unsafe extern "C" fn numba_rs_str_pad(
    s: *const Str,
    width: i64,
    fill: *const Str,
    op: i32,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let f = if op < 3 {
        // SAFETY: the caller's contract.
        let f = unsafe { read(fill) };
        if f.len() != 1 {
            return Status::FillCharNotOneChar as i32;
        }
        f[0]
    } else {
        u32::from(b'0')
    };
    let width = width.max(0) as usize;
    if width <= v.len() {
        // SAFETY: the caller's contract.
        return unsafe { emit(&v, out) };
    }
    let pad = width - v.len();
    let (left, right) = match op {
        // CPython's `pad(self, left, marg - left)` with `left = marg / 2 + (marg & width & 1)`.
        0 => {
            let left = pad / 2 + (pad & width & 1);
            (left, pad - left)
        }
        1 => (0, pad),
        _ => (pad, 0),
    };
    let mut r = Vec::with_capacity(width);
    r.extend(std::iter::repeat_n(f, left));
    r.extend_from_slice(&v);
    r.extend(std::iter::repeat_n(f, right));
    if op == 3 && !v.is_empty() && (v[0] == u32::from(b'+') || v[0] == u32::from(b'-')) {
        // A sign moves to the front, as CPython's zfill does.
        r[0] = v[0];
        r[pad] = u32::from(b'0');
    }
    // SAFETY: the caller's contract.
    unsafe { emit(&r, out) }
}

/// `s.strip`/`lstrip`/`rstrip(chars)` by `op` 0/1/2; `chars` null strips whitespace.
///
/// # Safety
/// `s` (and `chars` unless null) point to valid string structs, `out` to writable
/// storage for one.
pub unsafe extern "C" fn numba_rs_str_strip(
    s: *const Str,
    set: *const Str,
    op: i32,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let set: Option<Vec<u32>> = if set.is_null() {
        None
    } else {
        // SAFETY: the caller's contract.
        Some(unsafe { read(set) })
    };
    let strip = |c: u32| match &set {
        None => has(c, db::SPACE),
        Some(cs) => cs.contains(&c),
    };
    let mut a = 0;
    let mut b = v.len();
    if op != 2 {
        while a < b && strip(v[a]) {
            a += 1;
        }
    }
    if op != 1 {
        while b > a && strip(v[b - 1]) {
            b -= 1;
        }
    }
    // SAFETY: the caller's contract.
    unsafe { emit(&v[a..b], out) }
}

/// `s.replace(old, new, count)` (`count` < 0: all).
///
/// # Safety
/// The three point to valid string structs, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_replace(
    s: *const Str,
    old: *const Str,
    new: *const Str,
    count: i64,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    let (v, o, n) = unsafe { (read(s), read(old), read(new)) };
    let mut left = if count < 0 {
        usize::MAX
    } else {
        count as usize
    };
    let mut r = Vec::with_capacity(v.len());
    if o.is_empty() {
        // An empty `old` matches before every character and at the end.
        for (i, &c) in v.iter().enumerate() {
            if left > 0 {
                r.extend_from_slice(&n);
                left -= 1;
            }
            r.push(c);
            let _ = i;
        }
        if left > 0 {
            r.extend_from_slice(&n);
        }
    } else {
        let mut i = 0;
        while i < v.len() {
            if left > 0 && i + o.len() <= v.len() && v[i..i + o.len()] == *o {
                r.extend_from_slice(&n);
                i += o.len();
                left -= 1;
            } else {
                r.push(v[i]);
                i += 1;
            }
        }
    }
    // SAFETY: the caller's contract.
    unsafe { emit(&r, out) }
}

/// `s.expandtabs(tabsize)`.
///
/// # Safety
/// `s` points to a valid string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_expandtabs(
    s: *const Str,
    tabsize: i64,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let mut r = Vec::with_capacity(v.len());
    let mut column: i64 = 0;
    for &c in &v {
        if c == u32::from(b'\t') {
            if tabsize > 0 {
                let n = tabsize - column % tabsize;
                r.extend(std::iter::repeat_n(u32::from(b' '), n as usize));
                column += n;
            }
        } else {
            r.push(c);
            column += 1;
            if c == u32::from(b'\n') || c == u32::from(b'\r') {
                column = 0;
            }
        }
    }
    // SAFETY: the caller's contract.
    unsafe { emit(&r, out) }
}

/// A new list of `n` strings, item `i` made by `make(i, out)` (a string constructor's
/// status), each a new reference the list takes; null when an allocation failed.
///
/// # Safety
/// `refs` is the string items' reference map; `make` writes a string on success.
pub(crate) unsafe fn str_list_with(
    n: usize,
    refs: *const i32,
    mut make: impl FnMut(usize, *mut Str) -> i32,
) -> *mut MemInfo {
    let width = (STR_SLOTS * 8) as i64;
    // SAFETY: the caller's contract; each item is written into the reserved data.
    unsafe {
        let mi = crate::lists::numba_rs_list_new(width, n as i64, refs);
        if mi.is_null() {
            return mi;
        }
        let p = numba_nrt::NRT_MemInfo_data(mi) as *mut ListPayload;
        for i in 0..n {
            let mut s = std::mem::MaybeUninit::<Str>::uninit();
            if make(i, s.as_mut_ptr()) != 0 {
                (*p).size = i as i64;
                numba_nrt::NRT_decref(mi);
                return std::ptr::null_mut();
            }
            s.assume_init()
                .to_slots((*p).data.add(i * STR_SLOTS * 8) as *mut u64);
        }
        (*p).size = n as i64;
        mi
    }
}

/// A new list of these strings (each in its smallest kind).
///
/// # Safety
/// As [`str_list_with`].
unsafe fn str_list(parts: &[&[u32]], refs: *const i32) -> *mut MemInfo {
    // SAFETY: the caller's contract.
    unsafe { str_list_with(parts.len(), refs, |i, out| new_str_of(parts[i], out)) }
}

/// `s.split(sep, maxsplit)` (`op` 0) or `s.rsplit` (`op` 1); `sep` null splits on runs
/// of whitespace. The new list's MemInfo goes to `out`.
///
/// # Safety
/// `s` (and `sep` unless null) point to valid string structs; `refs` is the string
/// items' reference map; `out` is writable.
pub unsafe extern "C" fn numba_rs_str_split(
    s: *const Str,
    sep: *const Str,
    maxsplit: i64,
    op: i32,
    refs: *const i32,
    out: *mut *mut MemInfo,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        if (*s).kind == 1 && (sep.is_null() || (*sep).kind == 1) && op == 0 {
            return split_latin1(s, sep, maxsplit, refs, out);
        }
    }
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let mut left = if maxsplit < 0 {
        usize::MAX
    } else {
        maxsplit as usize
    };
    let mut parts: Vec<&[u32]> = Vec::new();
    if sep.is_null() {
        whitespace_parts(
            &v,
            |c| has(c, db::SPACE),
            maxsplit,
            op != 0,
            |a, b| parts.push(&v[a..b]),
        );
        if op != 0 {
            parts.reverse();
        }
    } else {
        // SAFETY: the caller's contract.
        let d = unsafe { read(sep) };
        if d.is_empty() {
            return Status::EmptySeparator as i32;
        }
        if op == 0 {
            let mut start = 0;
            let mut i = 0;
            while left > 0 && i + d.len() <= v.len() {
                if v[i..i + d.len()] == *d {
                    parts.push(&v[start..i]);
                    i += d.len();
                    start = i;
                    left -= 1;
                } else {
                    i += 1;
                }
            }
            parts.push(&v[start..]);
        } else {
            let mut end = v.len();
            let mut j = v.len();
            while left > 0 && j >= d.len() {
                if v[j - d.len()..j] == *d {
                    parts.push(&v[j..end]);
                    j -= d.len();
                    end = j;
                    left -= 1;
                } else {
                    j -= 1;
                }
            }
            parts.push(&v[..end]);
            parts.reverse();
        }
    }
    // SAFETY: the caller's contract.
    unsafe {
        let mi = str_list(&parts, refs);
        if mi.is_null() {
            return -1;
        }
        *out = mi;
    }
    0
}

/// Call `part(start, end)` for each part of splitting `v` on runs of `space` (`str.split()`
/// with no separator), at most `maxsplit` splits (< 0: no limit), left to right; from
/// the right (`rsplit`) when `reverse`, the parts then coming last first. After the last
/// split the rest is one part, its inner whitespace kept.
pub(crate) fn whitespace_parts<T: Copy>(
    v: &[T],
    space: impl Fn(T) -> bool,
    maxsplit: i64,
    reverse: bool,
    mut part: impl FnMut(usize, usize),
) {
    let mut left = if maxsplit < 0 {
        usize::MAX
    } else {
        maxsplit as usize
    };
    if !reverse {
        let mut i = 0;
        loop {
            while i < v.len() && space(v[i]) {
                i += 1;
            }
            if i == v.len() {
                break;
            }
            if left == 0 {
                part(i, v.len());
                break;
            }
            let start = i;
            while i < v.len() && !space(v[i]) {
                i += 1;
            }
            part(start, i);
            left = left.saturating_sub(1);
        }
    } else {
        let mut j = v.len();
        loop {
            while j > 0 && space(v[j - 1]) {
                j -= 1;
            }
            if j == 0 {
                break;
            }
            if left == 0 {
                part(0, j);
                break;
            }
            let end = j;
            while j > 0 && !space(v[j - 1]) {
                j -= 1;
            }
            part(j, end);
            left = left.saturating_sub(1);
        }
    }
}

/// Call `part(start, end)` for each part of `split` over bytes `v`: runs of whitespace
/// (`sep` none) or `sep`, at most `maxsplit` splits (< 0: no limit). Status 0, or
/// [`Status::EmptySeparator`].
fn latin1_parts(
    v: &[u8],
    sep: Option<&[u8]>,
    maxsplit: i64,
    mut part: impl FnMut(usize, usize),
) -> i32 {
    let mut left = if maxsplit < 0 {
        usize::MAX
    } else {
        maxsplit as usize
    };
    match sep {
        None => whitespace_parts(v, |c| has(u32::from(c), db::SPACE), maxsplit, false, part),
        Some(d) => {
            if d.is_empty() {
                return Status::EmptySeparator as i32;
            }
            let mut start = 0;
            let mut i = 0;
            while left > 0 && i + d.len() <= v.len() {
                if v[i] == d[0] && v[i..i + d.len()] == *d {
                    part(start, i);
                    i += d.len();
                    start = i;
                    left -= 1;
                } else {
                    i += 1;
                }
            }
            part(start, v.len());
        }
    }
    0
}

/// `split` of a kind-1 string (the common case): one pass counts the parts, so the list
/// is allocated once at its size, and a second copies each byte range into a new
/// string (no buffer of the parts in between: with hundreds of thousands of parts it was
/// megabytes, whose churn made glibc return the heap to the system after every call).
///
/// # Safety
/// As [`numba_rs_str_split`], with `s` (and `sep`) of kind 1.
unsafe fn split_latin1(
    s: *const Str,
    sep: *const Str,
    maxsplit: i64,
    refs: *const i32,
    out: *mut *mut MemInfo,
) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { std::slice::from_raw_parts((*s).data, (*s).length.max(0) as usize) };
    // SAFETY: the caller's contract.
    let d = (!sep.is_null())
        .then(|| unsafe { std::slice::from_raw_parts((*sep).data, (*sep).length.max(0) as usize) });
    let mut n = 0usize;
    let status = latin1_parts(v, d, maxsplit, |_, _| n += 1);
    if status != 0 {
        return status;
    }
    let width = (STR_SLOTS * 8) as i64;
    // SAFETY: `refs` is the caller's; each part is a byte range of `s`, written into the
    // list's reserved items in order.
    unsafe {
        let mi = crate::lists::numba_rs_list_new(width, n as i64, refs);
        if mi.is_null() {
            return -1;
        }
        let p = numba_nrt::NRT_MemInfo_data(mi) as *mut ListPayload;
        let mut filled = 0usize;
        let mut failed = false;
        let mut arena = crate::strings::PieceArena::new();
        latin1_parts(v, d, maxsplit, |a, b| {
            if failed {
                return;
            }
            let mut item = std::mem::MaybeUninit::<Str>::uninit();
            if arena.piece(&v[a..b], item.as_mut_ptr()) != 0 {
                failed = true;
                return;
            }
            item.assume_init()
                .to_slots((*p).data.add(filled * STR_SLOTS * 8) as *mut u64);
            filled += 1;
        });
        (*p).size = filled as i64;
        if failed {
            numba_nrt::NRT_decref(mi);
            return -1;
        }
        *out = mi;
    }
    0
}

/// `s.splitlines(keepends)`: CPython's line boundaries (`\n`, `\r`, `\r\n`, `\v`,
/// `\f`, `\x1c`-`\x1e`, `\x85`, U+2028, U+2029).
///
/// # Safety
/// As [`numba_rs_str_split`].
pub unsafe extern "C" fn numba_rs_str_splitlines(
    s: *const Str,
    keepends: i32,
    refs: *const i32,
    out: *mut *mut MemInfo,
) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let is_break = |c: u32| {
        matches!(
            c,
            0x0A | 0x0B | 0x0C | 0x0D | 0x1C | 0x1D | 0x1E | 0x85 | 0x2028 | 0x2029
        )
    };
    let mut parts: Vec<&[u32]> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let start = i;
        while i < v.len() && !is_break(v[i]) {
            i += 1;
        }
        let mut eol = i;
        if i < v.len() {
            if v[i] == 0x0D && i + 1 < v.len() && v[i + 1] == 0x0A {
                i += 2;
            } else {
                i += 1;
            }
            if keepends != 0 {
                eol = i;
            }
        }
        parts.push(&v[start..eol]);
    }
    // SAFETY: the caller's contract.
    unsafe {
        let mi = str_list(&parts, refs);
        if mi.is_null() {
            return -1;
        }
        *out = mi;
    }
    0
}

/// `s.partition(sep)` (`op` 0) or `s.rpartition(sep)` (`op` 1) into three strings at
/// `out`.
///
/// # Safety
/// `s` and `sep` point to valid string structs, `out` to storage for three.
pub unsafe extern "C" fn numba_rs_str_partition(
    s: *const Str,
    sep: *const Str,
    op: i32,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    let (v, d) = unsafe { (read(s), read(sep)) };
    if d.is_empty() {
        return Status::EmptySeparator as i32;
    }
    let at = if op == 0 {
        find_in(&v, &d, 0, v.len())
    } else {
        rfind_in(&v, &d, 0, v.len())
    };
    let empty: &[u32] = &[];
    let parts: [&[u32]; 3] = match at {
        Some(i) => [&v[..i], &d, &v[i + d.len()..]],
        None if op == 0 => [&v, empty, empty],
        None => [empty, empty, &v],
    };
    for (k, p) in parts.iter().enumerate() {
        // SAFETY: the caller's contract; on failure the strings made so far are freed.
        unsafe {
            if emit(p, out.add(k)) != 0 {
                for j in 0..k {
                    numba_nrt::NRT_decref((*out.add(j)).meminfo);
                }
                return -1;
            }
        }
    }
    0
}

/// `sep.join(items)` of a list of strings.
///
/// # Safety
/// `sep` points to a valid string struct, `items` to a live list payload of strings,
/// `out` to writable storage for a string struct.
pub unsafe extern "C" fn numba_rs_str_join(
    sep: *const Str,
    items: *const ListPayload,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract: each item is a string's seven slots.
    unsafe {
        let p = &*items;
        let item_at = |i: usize| Str::from_slots(p.data.add(i * STR_SLOTS * 8) as *const u64);
        let n = p.size.max(0) as usize;
        if (*sep).kind == 1 && (0..n).all(|i| item_at(i).kind == 1) {
            // Every piece is kind 1: the result is their bytes copied end to end.
            let d = std::slice::from_raw_parts((*sep).data, (*sep).length.max(0) as usize);
            let total: usize = (0..n)
                .map(|i| item_at(i).length.max(0) as usize)
                .sum::<usize>()
                + d.len() * n.saturating_sub(1);
            let ascii = (*sep).is_ascii != 0 && (0..n).all(|i| item_at(i).is_ascii != 0);
            return crate::strings::new_latin1_with(
                total,
                ascii,
                |buf| {
                    let mut at = 0;
                    for i in 0..n {
                        if i > 0 {
                            buf[at..at + d.len()].copy_from_slice(d);
                            at += d.len();
                        }
                        let it = item_at(i);
                        let b = std::slice::from_raw_parts(it.data, it.length.max(0) as usize);
                        buf[at..at + b.len()].copy_from_slice(b);
                        at += b.len();
                    }
                },
                out,
            );
        }
        let d = read(sep);
        let mut r = Vec::new();
        for i in 0..n {
            if i > 0 {
                r.extend_from_slice(&d);
            }
            r.extend(chars(&item_at(i)));
        }
        emit(&r, out)
    }
}

/// `sep.join(s)` of a string: its characters with `sep` between each two.
///
/// # Safety
/// `sep` and `s` point to valid string structs, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_join_chars(
    sep: *const Str,
    s: *const Str,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    let (d, v) = unsafe { (read(sep), read(s)) };
    let mut r = Vec::with_capacity(v.len() * (d.len() + 1));
    for (i, &c) in v.iter().enumerate() {
        if i > 0 {
            r.extend_from_slice(&d);
        }
        r.push(c);
    }
    // SAFETY: the caller's contract.
    unsafe { emit(&r, out) }
}

/// `repr(s)` (`ascii` 0) or `ascii(s)` (`ascii` 1) of a string, as CPython writes it:
/// single quotes unless the text holds one and no double quote, backslash escapes for
/// the quote, `\\`, `\t`, `\n`, `\r` and unprintable characters (every non-ASCII
/// one too for `ascii`).
///
/// # Safety
/// `s` points to a valid string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_repr(s: *const Str, ascii: i32, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let r = repr_chars(&v, ascii != 0, |c| has(c, db::PRINTABLE));
    // SAFETY: the caller's contract.
    unsafe { emit(&r, out) }
}

/// `repr(b)` of bytes: `b'...'` with CPython's escapes (`\xhh` outside printable ASCII).
///
/// # Safety
/// As [`numba_rs_str_repr`], `s` of kind 1.
pub unsafe extern "C" fn numba_rs_bytes_repr(s: *const Str, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    let v = unsafe { read(s) };
    let mut r = vec![u32::from(b'b')];
    r.extend(repr_chars(&v, true, |c| (0x20..0x7f).contains(&c)));
    // SAFETY: the caller's contract.
    unsafe { emit(&r, out) }
}

/// The quoted, escaped text of `repr`: `ascii_only` escapes every character above
/// 0x7f; `printable` says which characters stand as themselves.
fn repr_chars(v: &[u32], ascii_only: bool, printable: impl Fn(u32) -> bool) -> Vec<u32> {
    let squote = u32::from(b'\'');
    let dquote = u32::from(b'"');
    let quote = if v.contains(&squote) && !v.contains(&dquote) {
        dquote
    } else {
        squote
    };
    let mut r = vec![quote];
    let push_str = |r: &mut Vec<u32>, t: &str| r.extend(t.chars().map(u32::from));
    for &c in v {
        match c {
            _ if c == quote || c == u32::from(b'\\') => {
                r.push(u32::from(b'\\'));
                r.push(c);
            }
            0x09 => push_str(&mut r, "\\t"),
            0x0a => push_str(&mut r, "\\n"),
            0x0d => push_str(&mut r, "\\r"),
            _ if c < 0x20 || c == 0x7f => push_str(&mut r, &format!("\\x{c:02x}")),
            _ if c < 0x7f => r.push(c),
            _ if !ascii_only && printable(c) => r.push(c),
            _ if c < 0x100 => push_str(&mut r, &format!("\\x{c:02x}")),
            _ if c < 0x10000 => push_str(&mut r, &format!("\\u{c:04x}")),
            _ => push_str(&mut r, &format!("\\U{c:08x}")),
        }
    }
    r.push(quote);
    r
}

/// Every helper by symbol name, with its address.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        (
            "numba_rs_str_join_chars",
            numba_rs_str_join_chars as *const () as usize,
        ),
        ("numba_rs_str_repr", numba_rs_str_repr as *const () as usize),
        (
            "numba_rs_bytes_repr",
            numba_rs_bytes_repr as *const () as usize,
        ),
        (
            "numba_rs_str_lower",
            numba_rs_str_lower as *const () as usize,
        ),
        (
            "numba_rs_str_upper",
            numba_rs_str_upper as *const () as usize,
        ),
        (
            "numba_rs_str_casefold",
            numba_rs_str_casefold as *const () as usize,
        ),
        (
            "numba_rs_str_swapcase",
            numba_rs_str_swapcase as *const () as usize,
        ),
        (
            "numba_rs_str_title",
            numba_rs_str_title as *const () as usize,
        ),
        (
            "numba_rs_str_capitalize",
            numba_rs_str_capitalize as *const () as usize,
        ),
        ("numba_rs_str_is", numba_rs_str_is as *const () as usize),
        (
            "numba_rs_str_search",
            numba_rs_str_search as *const () as usize,
        ),
        ("numba_rs_str_pad", numba_rs_str_pad as *const () as usize),
        (
            "numba_rs_str_strip",
            numba_rs_str_strip as *const () as usize,
        ),
        (
            "numba_rs_str_replace",
            numba_rs_str_replace as *const () as usize,
        ),
        (
            "numba_rs_str_expandtabs",
            numba_rs_str_expandtabs as *const () as usize,
        ),
        (
            "numba_rs_str_split",
            numba_rs_str_split as *const () as usize,
        ),
        (
            "numba_rs_str_splitlines",
            numba_rs_str_splitlines as *const () as usize,
        ),
        (
            "numba_rs_str_partition",
            numba_rs_str_partition as *const () as usize,
        ),
        ("numba_rs_str_join", numba_rs_str_join as *const () as usize),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_answer_as_cpython_does_for_hand_checked_characters() {
        // 'a' alpha/lower/cased, '5' decimal, '²' digit not decimal, '½' numeric only,
        // U+2028 space and not printable, 'ǅ' titlecase.
        assert!(has('a' as u32, db::ALPHA | db::LOWER) && has('a' as u32, db::CASED));
        assert!(has('5' as u32, db::DECIMAL));
        assert!(has(0xB2, db::DIGIT) && !has(0xB2, db::DECIMAL));
        assert!(has(0xBD, db::NUMERIC) && !has(0xBD, db::DIGIT));
        assert!(has(0x2028, db::SPACE) && !has(0x2028, db::PRINTABLE));
        assert!(has(0x1C5, db::TITLE));
        let mut out = Vec::new();
        push_mapped(0xDF, Map::Upper, &mut out); // 'ß' -> "SS"
        assert_eq!(out, vec![0x53, 0x53]);
        out.clear();
        push_lower_at(&[0x41, 0x3A3], 1, &mut out); // "AΣ": final sigma
        assert_eq!(out, vec![0x3C2]);
    }

    #[test]
    fn bounds_follow_cpython_slice_adjustment() {
        assert_eq!(bounds(5, i64::MIN, i64::MIN), (0, 5));
        assert_eq!(bounds(5, -2, 99), (3, 5));
        assert_eq!(bounds(0, 2, 100), (2, 0));
        assert_eq!(bounds(5, -9, -1), (0, 4));
    }
}
