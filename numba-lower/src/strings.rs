//! Run-time helpers for `str` values (`model::unicode`): comparison, concatenation,
//! indexing, slicing and search,
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

impl Str {
    /// A string stored as a list item's seven slots (`model::unicode`'s field order).
    ///
    /// # Safety
    /// `w` points to seven slots holding a string.
    pub unsafe fn from_slots(w: *const u64) -> Str {
        // SAFETY: the caller's contract.
        unsafe {
            Str {
                data: *w as *mut u8,
                length: *w.add(1) as i64,
                kind: *w.add(2) as i32,
                is_ascii: *w.add(3) as u32,
                hash: *w.add(4) as i64,
                meminfo: *w.add(5) as *mut MemInfo,
                parent: *w.add(6) as *mut u8,
            }
        }
    }

    /// Store this string into seven slots.
    ///
    /// # Safety
    /// `w` has room for seven words.
    pub unsafe fn to_slots(&self, w: *mut u64) {
        let words = [
            self.data as u64,
            self.length as u64,
            self.kind as u64,
            u64::from(self.is_ascii),
            self.hash as u64,
            self.meminfo as u64,
            self.parent as u64,
        ];
        for (k, x) in words.into_iter().enumerate() {
            // SAFETY: the caller's contract.
            unsafe { *w.add(k) = x };
        }
    }
}

/// Character `i` of PEP 393 data of this kind.
///
/// # Safety
/// `data` holds at least `i + 1` characters of `kind` bytes each.
pub(crate) unsafe fn char_at(data: *const u8, kind: i32, i: usize) -> u32 {
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
pub unsafe fn chars(s: &Str) -> impl Iterator<Item = u32> + '_ {
    // SAFETY: the caller's contract: `length` characters of `kind` bytes.
    (0..s.length.max(0) as usize).map(move |i| unsafe { char_at(s.data, s.kind, i) })
}

/// The smallest PEP 393 kind that holds characters up to `max` (CPython's canonical
/// form).
fn kind_for(max: u32) -> i32 {
    if max < 0x100 {
        1
    } else if max < 0x10000 {
        2
    } else {
        4
    }
}

/// A new string of `n` characters of `kind` into `out`, its data (then a NUL) written
/// from `chars` into a new MemInfo, whose reference `out` takes: 0, or -1 when the
/// size overflows or the allocation failed. Every helper that makes a string ends here.
///
/// # Safety
/// `chars` yields `n` characters that fit `kind` (or none, for a caller that writes the
/// data and the NUL itself); `out` points to writable storage for a string struct.
pub(crate) unsafe fn new_str(
    n: usize,
    kind: i32,
    is_ascii: bool,
    chars: impl Iterator<Item = u32>,
    out: *mut Str,
) -> i32 {
    let Some(bytes) = n.checked_add(1).and_then(|c| c.checked_mul(kind as usize)) else {
        return -1;
    };
    let mi = numba_nrt::NRT_MemInfo_alloc_aligned(bytes, 8);
    if mi.is_null() {
        return -1;
    }
    // SAFETY: the block holds `n + 1` characters of `kind` bytes; the caller's contract.
    unsafe {
        let data = numba_nrt::NRT_MemInfo_data(mi);
        for (i, c) in chars.chain(std::iter::once(0)).enumerate() {
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
            is_ascii: u32::from(is_ascii),
            hash: -1,
            meminfo: mi,
            parent: std::ptr::null_mut(),
        });
    }
    0
}

/// A new kind-1 string of `n` characters that `fill` writes (then a NUL): the fast path
/// for ASCII and Latin-1 results, a straight byte loop or copy.
///
/// # Safety
/// `out` points to writable storage for a string struct.
pub(crate) unsafe fn new_latin1_with(
    n: usize,
    is_ascii: bool,
    fill: impl FnOnce(&mut [u8]),
    out: *mut Str,
) -> i32 {
    let Some(bytes) = n.checked_add(1) else {
        return -1;
    };
    let mi = numba_nrt::NRT_MemInfo_alloc_aligned(bytes, 8);
    if mi.is_null() {
        return -1;
    }
    // SAFETY: the block holds `n + 1` bytes.
    unsafe {
        let data = numba_nrt::NRT_MemInfo_data(mi);
        let body = std::slice::from_raw_parts_mut(data, n);
        fill(body);
        *data.add(n) = 0;
        out.write(Str {
            data,
            length: n as i64,
            kind: 1,
            is_ascii: u32::from(is_ascii),
            hash: -1,
            meminfo: mi,
            parent: std::ptr::null_mut(),
        });
    }
    0
}

/// Many small kind-1 strings made at once (the pieces of a `split`): they share NRT
/// blocks of [`PieceArena::BLOCK`] bytes, each piece holding a reference to its block,
/// so a split of 10^5 words makes a few hundred allocations instead of 10^5. A piece
/// that outlives the others keeps at most one block alive. Pieces larger than a quarter
/// of a block get blocks of their own.
pub(crate) struct PieceArena {
    mi: *mut MemInfo,
    next: *mut u8,
    left: usize,
}

impl PieceArena {
    const BLOCK: usize = 4096;

    pub(crate) fn new() -> Self {
        PieceArena {
            mi: std::ptr::null_mut(),
            next: std::ptr::null_mut(),
            left: 0,
        }
    }

    /// A new kind-1 string holding a copy of `bytes`; nonzero when out of memory.
    ///
    /// # Safety
    /// `out` points to writable storage for a string struct.
    pub(crate) unsafe fn piece(&mut self, bytes: &[u8], out: *mut Str) -> i32 {
        let need = bytes.len() + 1;
        if need > Self::BLOCK / 4 {
            // SAFETY: the caller's contract.
            return unsafe { new_latin1(bytes, out) };
        }
        if self.left < need {
            self.release();
            let mi = numba_nrt::NRT_MemInfo_alloc_aligned(Self::BLOCK, 8);
            if mi.is_null() {
                return -1;
            }
            self.mi = mi;
            // SAFETY: a live MemInfo just allocated.
            self.next = unsafe { numba_nrt::NRT_MemInfo_data(mi) };
            self.left = Self::BLOCK;
        }
        let ascii = bytes.iter().all(|&b| b < 0x80);
        // SAFETY: the block has `need` bytes left at `next`; the piece takes a reference
        // to the block.
        unsafe {
            let data = self.next;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
            *data.add(bytes.len()) = 0;
            self.next = data.add(need);
            self.left -= need;
            numba_nrt::NRT_incref(self.mi);
            out.write(Str {
                data,
                length: bytes.len() as i64,
                kind: 1,
                is_ascii: u32::from(ascii),
                hash: -1,
                meminfo: self.mi,
                parent: std::ptr::null_mut(),
            });
        }
        0
    }

    /// Drop the arena's own reference to its current block (its pieces keep theirs).
    fn release(&mut self) {
        if !self.mi.is_null() {
            // SAFETY: the reference the allocation gave the arena.
            unsafe { numba_nrt::NRT_decref(self.mi) };
            self.mi = std::ptr::null_mut();
            self.left = 0;
        }
    }
}

impl Drop for PieceArena {
    fn drop(&mut self) {
        self.release();
    }
}

/// A new kind-1 string holding a copy of `bytes`.
///
/// # Safety
/// `out` points to writable storage for a string struct.
pub(crate) unsafe fn new_latin1(bytes: &[u8], out: *mut Str) -> i32 {
    let ascii = bytes.iter().all(|&b| b < 0x80);
    // SAFETY: the caller's contract.
    unsafe { new_latin1_with(bytes.len(), ascii, |d| d.copy_from_slice(bytes), out) }
}

/// A new string of these characters, in the smallest kind that holds them.
///
/// # Safety
/// As [`new_str`].
pub unsafe fn new_str_of(chars: &[u32], out: *mut Str) -> i32 {
    let max = chars.iter().copied().max().unwrap_or(0);
    // SAFETY: the caller's contract; the kind holds every character.
    unsafe {
        new_str(
            chars.len(),
            kind_for(max),
            max < 0x80,
            chars.iter().copied(),
            out,
        )
    }
}

static HASH_K0: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static HASH_K1: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Set the SipHash key strings hash with: CPython's `_Py_HashSecret.siphash` (the host
/// reads it, so `hash(s)` in jitted code equals the interpreter's under any
/// `PYTHONHASHSEED`).
pub fn set_hash_secret(k0: u64, k1: u64) {
    use std::sync::atomic::Ordering::Relaxed;
    HASH_K0.store(k0, Relaxed);
    HASH_K1.store(k1, Relaxed);
}

/// SipHash-1-3 of `data` (CPython 3.11's `Py_HASH_ALGORITHM`).
fn siphash13(k0: u64, k1: u64, data: &[u8]) -> u64 {
    let mut v0 = k0 ^ 0x736f6d6570736575;
    let mut v1 = k1 ^ 0x646f72616e646f6d;
    let mut v2 = k0 ^ 0x6c7967656e657261;
    let mut v3 = k1 ^ 0x7465646279746573;
    let round = |v0: &mut u64, v1: &mut u64, v2: &mut u64, v3: &mut u64| {
        *v0 = v0.wrapping_add(*v1);
        *v1 = v1.rotate_left(13) ^ *v0;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v3);
        *v3 = v3.rotate_left(16) ^ *v2;
        *v0 = v0.wrapping_add(*v3);
        *v3 = v3.rotate_left(21) ^ *v0;
        *v2 = v2.wrapping_add(*v1);
        *v1 = v1.rotate_left(17) ^ *v2;
        *v2 = v2.rotate_left(32);
    };
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let m = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        v3 ^= m;
        round(&mut v0, &mut v1, &mut v2, &mut v3);
        v0 ^= m;
    }
    let mut last = (data.len() as u64) << 56;
    for (i, &b) in chunks.remainder().iter().enumerate() {
        last |= u64::from(b) << (8 * i);
    }
    v3 ^= last;
    round(&mut v0, &mut v1, &mut v2, &mut v3);
    v0 ^= last;
    v2 ^= 0xff;
    for _ in 0..3 {
        round(&mut v0, &mut v1, &mut v2, &mut v3);
    }
    v0 ^ v1 ^ v2 ^ v3
}

/// CPython's `hash(s)` of PEP 393 data: SipHash-1-3 of the canonical (smallest-kind)
/// bytes; 0 for the empty string; -1 becomes -2.
///
/// # Safety
/// `data` holds `n` characters of `kind` bytes.
pub unsafe fn hash_data(data: *const u8, n: usize, kind: i32) -> i64 {
    use std::sync::atomic::Ordering::Relaxed;
    if n == 0 {
        return 0;
    }
    // SAFETY: the caller's contract.
    let max = unsafe { (0..n).map(|i| char_at(data, kind, i)).max().unwrap_or(0) };
    let want = kind_for(max);
    let (k0, k1) = (HASH_K0.load(Relaxed), HASH_K1.load(Relaxed));
    let h = if want == kind {
        // SAFETY: the caller's contract.
        siphash13(k0, k1, unsafe {
            std::slice::from_raw_parts(data, n * kind as usize)
        })
    } else {
        // A view in a wider kind than its characters need: hash the canonical form.
        let mut bytes = Vec::with_capacity(n * want as usize);
        for i in 0..n {
            // SAFETY: the caller's contract.
            let c = unsafe { char_at(data, kind, i) };
            bytes.extend_from_slice(&c.to_le_bytes()[..want as usize]);
        }
        siphash13(k0, k1, &bytes)
    } as i64;
    if h == -1 {
        -2
    } else {
        h
    }
}

/// `str(i)` of a signed (or, when `unsigned`, unsigned) 64-bit integer.
///
/// # Safety
/// `out` points to writable storage for a string struct.
pub unsafe extern "C" fn numba_rs_str_from_int(v: i64, unsigned: i32, out: *mut Str) -> i32 {
    // Digits written backwards into a stack buffer: no intermediate allocation.
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let negative = unsigned == 0 && v < 0;
    let mut m = if unsigned != 0 {
        v as u64
    } else {
        v.unsigned_abs()
    };
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    let digits = &buf[i..];
    let n = digits.len() + usize::from(negative);
    let sign = negative.then_some(u32::from(b'-'));
    // SAFETY: the caller's contract; ASCII characters.
    unsafe {
        new_str(
            n,
            1,
            true,
            sign.into_iter().chain(digits.iter().map(|&d| u32::from(d))),
            out,
        )
    }
}

/// Python's `repr(x)` of a float: the shortest string that reads back as `x`, in
/// positional notation for exponents from -4 to 15 and scientific notation otherwise
/// (`1e+16`, `1.5e-05`), with `.0` on integral values, and `nan`/`inf`/`-inf`.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's `{:e}` finds how many digits the shortest round-trip form needs; printing
    // that many digits correctly rounded (ties to even, as CPython's dtoa breaks them)
    // gives CPython's choice where two strings of that length read back as `x`.
    let shortest = format!("{:e}", x);
    let ndigits = shortest
        .split('e')
        .next()
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_digit)
        .count()
        .max(1);
    let sci = format!("{:.*e}", ndigits - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

/// `str(x)` of a float (its `repr`).
///
/// # Safety
/// `out` points to writable storage for a string struct.
pub unsafe extern "C" fn numba_rs_str_from_float(v: f64, out: *mut Str) -> i32 {
    let chars: Vec<u32> = float_repr(v).bytes().map(u32::from).collect();
    // SAFETY: the caller's contract.
    unsafe { new_str_of(&chars, out) }
}

/// `chr(i)`: 1 when `i` is outside `range(0x110000)`.
///
/// # Safety
/// `out` points to writable storage for a string struct.
pub unsafe extern "C" fn numba_rs_str_chr(i: i64, out: *mut Str) -> i32 {
    if !(0..0x110000).contains(&i) {
        return 1;
    }
    // SAFETY: the caller's contract.
    unsafe { new_str_of(&[i as u32], out) }
}

/// `ord(c)`: the code point, or -1 when `c` is not one character.
///
/// # Safety
/// `s` points to a valid string struct.
pub unsafe extern "C" fn numba_rs_str_ord(s: *const Str) -> i64 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*s;
        if s.length != 1 {
            return -1;
        }
        i64::from(char_at(s.data, s.kind, 0))
    }
}

/// `hash(s)`.
///
/// # Safety
/// `s` points to a valid string struct.
pub unsafe extern "C" fn numba_rs_str_hash(s: *const Str) -> i64 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*s;
        if s.hash != -1 {
            return s.hash;
        }
        hash_data(s.data, s.length.max(0) as usize, s.kind)
    }
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
    // SAFETY: the caller's contract. Strings of one kind compare as slices of their code
    // units (a memcmp for kind 1), as CPython compares them.
    let order = unsafe {
        let (a, b) = (&*a, &*b);
        let (an, bn) = (a.length.max(0) as usize, b.length.max(0) as usize);
        match (a.kind, b.kind) {
            (1, 1) => {
                std::slice::from_raw_parts(a.data, an).cmp(std::slice::from_raw_parts(b.data, bn))
            }
            (2, 2) if units_aligned::<u16>(a, b) => {
                std::slice::from_raw_parts(a.data as *const u16, an)
                    .cmp(std::slice::from_raw_parts(b.data as *const u16, bn))
            }
            (4, 4) if units_aligned::<u32>(a, b) => {
                std::slice::from_raw_parts(a.data as *const u32, an)
                    .cmp(std::slice::from_raw_parts(b.data as *const u32, bn))
            }
            _ => chars(a).cmp(chars(b)),
        }
    };
    match order {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

/// Whether both strings' data is aligned for code units of type `T`.
fn units_aligned<T>(a: &Str, b: &Str) -> bool {
    let align = std::mem::align_of::<T>();
    (a.data as usize).is_multiple_of(align) && (b.data as usize).is_multiple_of(align)
}

/// `a + b` into `out`, in the wider of the two kinds: 0, or -1 when the allocation
/// failed.
///
/// # Safety
/// `a` and `b` point to valid string structs, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_concat(a: *const Str, b: *const Str, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let (a, b) = (&*a, &*b);
        let n = (a.length.max(0) + b.length.max(0)) as usize;
        let ascii = a.is_ascii & b.is_ascii != 0;
        let kind = a.kind.max(b.kind);
        if a.kind == b.kind {
            // One kind: the data is copied as bytes (the common case in a loop of `+`).
            let (ab, bb) = (
                a.length.max(0) as usize * kind as usize,
                b.length.max(0) as usize * kind as usize,
            );
            let status = new_str(n, kind, ascii, std::iter::empty(), out);
            if status == 0 {
                let data = (*out).data;
                std::ptr::copy_nonoverlapping(a.data, data, ab);
                std::ptr::copy_nonoverlapping(b.data, data.add(ab), bb);
                // The NUL after the last character.
                std::ptr::write_bytes(data.add(ab + bb), 0, kind as usize);
            }
            return status;
        }
        new_str(n, kind, ascii, chars(a).chain(chars(b)), out)
    }
}

/// Marks a string block made to grow (its MemInfo's `dtor_info`, unused by plain NRT
/// blocks): [`numba_rs_str_append`] made it.
static GROWABLE: u8 = 0;

/// A growable block's data starts with the count of characters committed so far (by
/// the longest string in it); the characters follow.
const COMMITTED: usize = 8;

/// The committed count and the capacity in characters (room for a NUL kept) of the
/// growable block `a`'s characters start, if they do.
///
/// # Safety
/// `a` is a valid string struct.
unsafe fn growable_block(a: &Str) -> Option<(&std::sync::atomic::AtomicI64, usize)> {
    if a.meminfo.is_null() || !a.parent.is_null() {
        return None;
    }
    // SAFETY: a live string's MemInfo.
    let m = unsafe { &*a.meminfo };
    let marked = std::ptr::eq(m.dtor_info as *const u8, &GROWABLE);
    // SAFETY: a growable block's data is at least COMMITTED bytes.
    if !marked || unsafe { m.data.add(COMMITTED) } != a.data {
        return None;
    }
    let cap = ((m.size - COMMITTED) / a.kind as usize).checked_sub(1)?;
    // SAFETY: the block's first word is its committed count, 8-byte aligned.
    Some((
        unsafe { &*(m.data as *const std::sync::atomic::AtomicI64) },
        cap,
    ))
}

/// Write the characters of `s` as `kind`-byte code units at `dst`.
///
/// # Safety
/// `dst` has room for `s.length` units of `kind` bytes; `kind >= s.kind`.
unsafe fn write_chars(dst: *mut u8, kind: i32, s: &Str) {
    let n = s.length.max(0) as usize;
    // SAFETY: the caller's contract.
    unsafe {
        if s.kind == kind {
            std::ptr::copy_nonoverlapping(s.data, dst, n * kind as usize);
            return;
        }
        for (i, c) in chars(s).enumerate() {
            match kind {
                1 => *dst.add(i) = c as u8,
                2 => (dst as *mut u16).add(i).write_unaligned(c as u16),
                _ => (dst as *mut u32).add(i).write_unaligned(c),
            }
        }
    }
}

/// `a + b` into `out` where the result replaces `a` (`s = s + piece`), taking over the
/// caller's reference to `a` when it succeeds: 0, or -1 when the allocation failed
/// (`a` then untouched). When `a` is the longest string of a growable block with room
/// left, `b`'s characters go in after it and `out` holds `a`'s reference to the block:
/// strings are immutable and every other holder of the block reads only its own
/// shorter prefix, so aliases (`t = s` before the append) stay intact and the count of
/// references is never relied on. Otherwise a new growable block, half as large again
/// as needed, so that a loop of appends copies each character a bounded number of
/// times (CPython's in-place resize, without needing to own the only reference), and
/// `a` is released.
///
/// # Safety
/// `a` and `b` point to valid string structs, the caller owning a reference to `a`;
/// `out` points to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_append(a: *const Str, b: *const Str, out: *mut Str) -> i32 {
    use std::sync::atomic::Ordering;
    // SAFETY: the caller's contract.
    unsafe {
        let (a, b) = (&*a, &*b);
        let (la, lb) = (a.length.max(0) as usize, b.length.max(0) as usize);
        let n = la + lb;
        let ascii = u32::from(a.is_ascii & b.is_ascii != 0);
        if b.kind <= a.kind {
            if let Some((committed, cap)) = growable_block(a) {
                // Claim the room after `a`: only the longest string may (`b` may be `a`
                // or a prefix of it: it lies before the room).
                if n <= cap
                    && committed
                        .compare_exchange(la as i64, n as i64, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    let k = a.kind as usize;
                    write_chars(a.data.add(la * k), a.kind, b);
                    std::ptr::write_bytes(a.data.add(n * k), 0, k);
                    out.write(Str {
                        data: a.data,
                        length: n as i64,
                        kind: a.kind,
                        is_ascii: ascii,
                        hash: -1,
                        meminfo: a.meminfo,
                        parent: std::ptr::null_mut(),
                    });
                    return 0;
                }
            }
        }
        let kind = a.kind.max(b.kind);
        let cap = n.saturating_add(n / 2).saturating_add(16);
        let Some(bytes) = cap
            .checked_add(1)
            .and_then(|c| c.checked_mul(kind as usize))
            .and_then(|c| c.checked_add(COMMITTED))
        else {
            return -1;
        };
        let mi = numba_nrt::NRT_MemInfo_alloc_aligned(bytes, 8);
        if mi.is_null() {
            return -1;
        }
        (*mi).dtor_info = &GROWABLE as *const u8 as *mut std::ffi::c_void;
        let block = numba_nrt::NRT_MemInfo_data(mi);
        (block as *mut i64).write(n as i64);
        let data = block.add(COMMITTED);
        let k = kind as usize;
        write_chars(data, kind, a);
        write_chars(data.add(la * k), kind, b);
        std::ptr::write_bytes(data.add(n * k), 0, k);
        // `b` may be `a`: both are copied before `a` goes.
        numba_nrt::NRT_decref(a.meminfo);
        out.write(Str {
            data,
            length: n as i64,
            kind,
            is_ascii: ascii,
            hash: -1,
            meminfo: mi,
            parent: std::ptr::null_mut(),
        });
        0
    }
}

/// `s[i]` into `out`: 0, 1 when `i` is out of range (after counting a negative index
/// from the end), -1 when the allocation failed.
///
/// # Safety
/// `s` points to a valid string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_getitem(s: *const Str, i: i64, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*s;
        let i = if i < 0 { i + s.length } else { i };
        if i < 0 || i >= s.length {
            return 1;
        }
        new_str_of(&[char_at(s.data, s.kind, i as usize)], out)
    }
}

/// `s[start::step]` taking `len` characters (bounds already clamped by the caller) into
/// `out`, in the smallest kind that holds them: 0, or -1 when the allocation failed.
///
/// # Safety
/// `s` points to a valid string struct whose characters `start + k * step` for `k <
/// len` exist, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_slice(
    s: *const Str,
    start: i64,
    len: i64,
    step: i64,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*s;
        if s.kind == 1 && step == 1 {
            // Latin-1 and contiguous: the bytes copied (kind 1 is already the smallest).
            let n = len.max(0) as usize;
            let bytes = std::slice::from_raw_parts(s.data.add(start as usize), n);
            let ascii = s.is_ascii != 0 || bytes.iter().all(|&c| c < 0x80);
            let status = new_str(n, 1, ascii, std::iter::empty(), out);
            if status == 0 {
                let data = (*out).data;
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, n);
                *data.add(n) = 0;
            }
            return status;
        }
        let picked: Vec<u32> = (0..len.max(0))
            .map(|k| char_at(s.data, s.kind, (start + k * step) as usize))
            .collect();
        new_str_of(&picked, out)
    }
}

/// `s * n` into `out`: `s` repeated `n` times (empty for `n <= 0`): 0, or -1 when the
/// size overflows or the allocation failed.
///
/// # Safety
/// `s` points to a valid string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_str_repeat(s: *const Str, n: i64, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*s;
        let times = n.max(0) as usize;
        let Some(total) = (s.length.max(0) as usize).checked_mul(times) else {
            return -1;
        };
        // The empty string is ASCII, of kind 1.
        let (kind, ascii) = if total == 0 {
            (1, true)
        } else {
            (s.kind, s.is_ascii != 0)
        };
        new_str(total, kind, ascii, (0..times).flat_map(|_| chars(s)), out)
    }
}

/// The first index of `needle` in `hay`, or -1 (`str.find`; `in` tests it).
///
/// # Safety
/// Both point to valid string structs.
pub unsafe extern "C" fn numba_rs_str_find(hay: *const Str, needle: *const Str) -> i64 {
    // SAFETY: the caller's contract: every index read is below the string's length.
    unsafe {
        let (h, n) = (&*hay, &*needle);
        let (hn, nn) = (h.length.max(0), n.length.max(0));
        if h.kind == 1 && n.kind == 1 {
            let hb = std::slice::from_raw_parts(h.data, hn as usize);
            let nb = std::slice::from_raw_parts(n.data, nn as usize);
            if nb.is_empty() {
                return 0;
            }
            return hb
                .windows(nb.len())
                .position(|w| w == nb)
                .map_or(-1, |p| p as i64);
        }
        (0..=hn - nn)
            .find(|&at| {
                (0..nn).all(|k| {
                    char_at(h.data, h.kind, (at + k) as usize)
                        == char_at(n.data, n.kind, k as usize)
                })
            })
            .unwrap_or(-1)
    }
}

/// The helpers' symbols, for the JIT engine.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("numba_rs_str_hash", numba_rs_str_hash as *const () as usize),
        (
            "numba_rs_str_from_int",
            numba_rs_str_from_int as *const () as usize,
        ),
        (
            "numba_rs_str_from_float",
            numba_rs_str_from_float as *const () as usize,
        ),
        ("numba_rs_str_chr", numba_rs_str_chr as *const () as usize),
        ("numba_rs_str_ord", numba_rs_str_ord as *const () as usize),
        ("numba_rs_str_eq", numba_rs_str_eq as *const () as usize),
        ("numba_rs_str_cmp", numba_rs_str_cmp as *const () as usize),
        (
            "numba_rs_str_concat",
            numba_rs_str_concat as *const () as usize,
        ),
        (
            "numba_rs_str_append",
            numba_rs_str_append as *const () as usize,
        ),
        (
            "numba_rs_str_getitem",
            numba_rs_str_getitem as *const () as usize,
        ),
        (
            "numba_rs_str_slice",
            numba_rs_str_slice as *const () as usize,
        ),
        ("numba_rs_str_find", numba_rs_str_find as *const () as usize),
        (
            "numba_rs_str_repeat",
            numba_rs_str_repeat as *const () as usize,
        ),
    ]
}

/// Make a string held in its seven slots (`model::unicode` field order) own its data:
/// when it borrows it (no MemInfo: a Python `str` or `bytes` unboxed for a call), a copy
/// in a new MemInfo, whose reference the slots take. What a container that outlives the
/// call (numba-py's `typed.Dict`) stores. 0, or -1 when out of memory.
///
/// # Safety
/// `f` holds a string's seven slots describing valid data.
pub unsafe fn own_slots(f: &mut [u64]) -> i32 {
    use crate::model::unicode::field;
    if f[field::MEMINFO as usize] != 0 {
        // SAFETY: the caller's contract: a live MemInfo: one more owner.
        unsafe { numba_nrt::NRT_incref(f[field::MEMINFO as usize] as *mut MemInfo) };
        return 0;
    }
    let (data, n, kind) = (
        f[field::DATA as usize] as *const u8,
        f[field::LENGTH as usize] as usize,
        f[field::KIND as usize] as i32,
    );
    let mut out = std::mem::MaybeUninit::<Str>::uninit();
    // SAFETY: the caller's contract: `n` characters of `kind` bytes at `data`.
    unsafe {
        let chars = (0..n).map(|i| char_at(data, kind, i));
        if new_str(
            n,
            kind,
            f[field::IS_ASCII as usize] != 0,
            chars,
            out.as_mut_ptr(),
        ) != 0
        {
            return -1;
        }
        let s = out.assume_init();
        f[field::DATA as usize] = s.data as u64;
        f[field::MEMINFO as usize] = s.meminfo as u64;
        f[field::PARENT as usize] = 0;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_is_pythons() {
        // Hand-checked against CPython 3.11's repr.
        for (x, want) in [
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (123.0, "123.0"),
            (-0.0, "-0.0"),
            (1e-4, "0.0001"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (1e15, "1000000000000000.0"),
            (-2.5, "-2.5"),
            (204366253598380.12, "204366253598380.12"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(float_repr(x), want);
        }
    }

    #[test]
    fn siphash13_matches_the_reference_vector() {
        // SipHash-1-3 of the empty message under key 00 01 .. 0f (the reference
        // implementation's vector, as CPython's test_hash uses it).
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        assert_eq!(siphash13(k0, k1, b""), 0xabac0158050fc4dc);
    }
}
