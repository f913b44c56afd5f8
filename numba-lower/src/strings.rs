//! Run-time helpers for `str` values (`model::unicode`): comparison and concatenation,
//! called by the lowering with pointers to string structs laid out as [`Str`].

use numba_nrt::MemInfo;

/// A string value as the generated code lays it out (`model::unicode::struct_type`).
#[repr(C)]
pub struct Str {
    pub data: *mut u8,
    pub length: i64,
    pub kind: i32,
    pub is_ascii: u32,
    pub hash: i64,
    pub meminfo: *mut MemInfo,
    pub parent: *mut u8,
}

/// Character `i` of PEP 393 data of this kind.
///
/// # Safety
/// `data` holds at least `i + 1` characters of `kind` bytes each.
unsafe fn char_at(data: *const u8, kind: i32, i: usize) -> u32 {
    // SAFETY: the caller's contract.
    unsafe {
        match kind {
            1 => u32::from(*data.add(i)),
            2 => u32::from((data as *const u16).add(i).read_unaligned()),
            _ => (data as *const u32).add(i).read_unaligned(),
        }
    }
}

/// The characters of a string.
///
/// # Safety
/// `s` describes valid PEP 393 data.
unsafe fn chars(s: &Str) -> impl Iterator<Item = u32> + '_ {
    // SAFETY: the caller's contract: `length` characters of `kind` bytes.
    (0..s.length.max(0) as usize).map(move |i| unsafe { char_at(s.data, s.kind, i) })
}

/// `a == b`: 1 or 0.
///
/// # Safety
/// Both point to valid string structs.
pub unsafe extern "C" fn numba_rs_str_eq(a: *const Str, b: *const Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let (a, b) = (&*a, &*b);
        if a.length != b.length {
            return 0;
        }
        if a.kind == b.kind {
            let n = a.length.max(0) as usize * a.kind as usize;
            let (x, y) = (
                std::slice::from_raw_parts(a.data, n),
                std::slice::from_raw_parts(b.data, n),
            );
            return i32::from(x == y);
        }
        i32::from(chars(a).eq(chars(b)))
    }
}

/// Compare by code points, as CPython orders strings: -1, 0 or 1.
///
/// # Safety
/// Both point to valid string structs.
pub unsafe extern "C" fn numba_rs_str_cmp(a: *const Str, b: *const Str) -> i32 {
    // SAFETY: the caller's contract.
    let order = unsafe { chars(&*a).cmp(chars(&*b)) };
    match order {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

/// `a + b` into `out`: a new string whose data a new MemInfo owns, in the wider of the
/// two kinds; 0, or -1 when the allocation failed.
///
/// # Safety
/// `a` and `b` point to valid string structs, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_concat(a: *const Str, b: *const Str, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract; the new block holds `n + 1` characters of `kind`.
    unsafe {
        let (a, b) = (&*a, &*b);
        let kind = a.kind.max(b.kind);
        let n = (a.length.max(0) + b.length.max(0)) as usize;
        let mi = numba_nrt::NRT_MemInfo_alloc_aligned((n + 1) * kind as usize, 8);
        if mi.is_null() {
            return -1;
        }
        let data = numba_nrt::NRT_MemInfo_data(mi);
        for (i, c) in chars(a)
            .chain(chars(b))
            .chain(std::iter::once(0))
            .enumerate()
        {
            match kind {
                1 => *data.add(i) = c as u8,
                2 => (data as *mut u16).add(i).write_unaligned(c as u16),
                _ => (data as *mut u32).add(i).write_unaligned(c),
            }
        }
        out.write(Str {
            data,
            length: n as i64,
            kind,
            is_ascii: a.is_ascii & b.is_ascii,
            hash: -1,
            meminfo: mi,
            parent: std::ptr::null_mut(),
        });
        0
    }
}

/// The helpers' symbols, for the JIT engine.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("numba_rs_str_eq", numba_rs_str_eq as *const () as usize),
        ("numba_rs_str_cmp", numba_rs_str_cmp as *const () as usize),
        (
            "numba_rs_str_concat",
            numba_rs_str_concat as *const () as usize,
        ),
    ]
}
