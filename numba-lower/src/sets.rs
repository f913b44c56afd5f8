//! Run-time helpers for sets (`model::set`): an open-addressing hash table with
//! CPython's probing (`setobject.c`: a few linear probes, then the perturbed walk) and
//! growth, so that a set of small integers iterates in the order CPython's would.
//!
//! Items are stored as lists store theirs (boundary slot form, see `crate::lists`). What
//! hashing and equality need to know of the item type is a [`KeyProgram`]: one byte per
//! slot kind, with tuples bracketed, emitted by the lowering as a module constant and
//! derived by numba-py from the same shape. Numbers and tuples hash as CPython's `hash`
//! does; strings hash by their code points (a set's own order only: `hash(str)` itself is
//! the strings issue's).

use numba_nrt::MemInfo;

use crate::callconv::{Leaf, Shape};
use crate::runtime::{numba_rs_hash_double, numba_rs_hash_int};

/// A set's payload, the data of its MemInfo.
#[repr(C)]
pub struct SetPayload {
    /// Items in the set.
    pub used: i64,
    /// Used and deleted entries (what makes the table full).
    pub fill: i64,
    /// Table size minus one (a power of two minus one).
    pub mask: i64,
    /// Bytes per item.
    pub item_bytes: i64,
    /// `mask + 1` entries of [`ENTRY_HEADER`] bytes then the item.
    pub table: *mut u8,
    /// Set when jitted code changed a reflected set.
    pub dirty: i64,
    /// Where items hold references (a `lists::RefMap`); null when nowhere.
    pub refs: *const i32,
    /// How items hash and compare (a [`KeyProgram`], NUL-terminated).
    pub key: *const u8,
    /// Where `pop` looks first (CPython's `finger`).
    pub finger: i64,
}

/// Byte offset of [`SetPayload::dirty`], for the lowering.
pub const DIRTY_OFFSET: u64 = 40;

/// An entry's tag word: [`EMPTY`], [`DUMMY`], or a used entry's hash with its top bit
/// flipped (Numba's 16-byte entries for an int set, where a separate state word made
/// them 24: a third more memory to clear and miss in). The two hashes that would tag as
/// `EMPTY`/`DUMMY` (-2^63 and -2^63+1, which no int or float hashes to) are moved.
const ENTRY_HEADER: i64 = 8;
const EMPTY: u64 = 0;
const DUMMY: u64 = 1;
const TAG_BIT: u64 = 1 << 63;

fn tag(h: i64) -> u64 {
    (h as u64) ^ TAG_BIT
}

fn untag(t: u64) -> i64 {
    (t ^ TAG_BIT) as i64
}

fn is_used(t: u64) -> bool {
    t > DUMMY
}

/// `h`, moved off the two values whose tags are the markers.
pub(crate) fn taggable(h: i64) -> i64 {
    if tag(h) <= DUMMY {
        i64::MIN + 2
    } else {
        h
    }
}
const MIN_SIZE: i64 = 8;
const LINEAR_PROBES: i64 = 9;
const PERTURB_SHIFT: u32 = 5;

/// The slot kinds of an item: `i` signed integer, `u` unsigned 64-bit integer, `f`
/// float, `b` bool, `c` complex (two slots), `s` string (seven slots), `(`...`)` a
/// tuple, NUL-terminated.
pub type KeyProgram = Vec<u8>;

/// The key program of items of this shape, or `None` when sets cannot hold them.
pub fn key_program(shape: &Shape) -> Option<KeyProgram> {
    fn walk(s: &Shape, out: &mut Vec<u8>) -> Option<()> {
        match s {
            Shape::Leaf(Leaf::Bool, _) => out.push(b'b'),
            Shape::Leaf(
                Leaf::Int {
                    bits: 64,
                    signed: false,
                },
                _,
            ) => out.push(b'u'),
            Shape::Leaf(Leaf::Int { .. }, _) => out.push(b'i'),
            Shape::Leaf(Leaf::Float, _) => out.push(b'f'),
            Shape::Complex(_) => out.push(b'c'),
            // An enum member is its integer value.
            Shape::Enum(_) => out.push(b'i'),
            // Bytes hash and compare as one-byte-kind strings of the same data do.
            Shape::Unicode | Shape::Bytes => out.push(b's'),
            Shape::Tuple(items) | Shape::Named { items, .. } => {
                out.push(b'(');
                for i in items {
                    walk(i, out)?;
                }
                out.push(b')');
            }
            _ => return None,
        }
        Some(())
    }
    let mut out = Vec::new();
    walk(shape, &mut out)?;
    out.push(0);
    Some(out)
}

/// A process-lifetime copy of a key program (for sets numba-py makes).
pub fn interned_key_program(p: KeyProgram) -> *const u8 {
    static PROGRAMS: std::sync::Mutex<Vec<&'static [u8]>> = std::sync::Mutex::new(Vec::new());
    let mut all = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(x) = all.iter().find(|x| x[..] == p[..]) {
        return x.as_ptr();
    }
    let leaked: &'static [u8] = Box::leak(p.into_boxed_slice());
    all.push(leaked);
    leaked.as_ptr()
}

const XXPRIME_1: u64 = 11400714785074694791;
const XXPRIME_2: u64 = 14029467366897019727;
const XXPRIME_5: u64 = 2870177450012600261;

/// Hash the item whose slots start at `w`, walking the program from `*pc`; advances
/// both. Tuples hash as CPython 3.11's `tuplehash`.
///
/// # Safety
/// `w` holds an item the program describes.
pub(crate) unsafe fn hash_at(prog: *const u8, pc: &mut usize, w: &mut *const u64) -> i64 {
    // SAFETY: the caller's contract.
    unsafe {
        let op = *prog.add(*pc);
        *pc += 1;
        match op {
            b'i' | b'b' => {
                let h = numba_rs_hash_int(**w as i64);
                *w = w.add(1);
                h
            }
            b'u' => {
                let v = **w;
                *w = w.add(1);
                let m = (1u64 << 61) - 1;
                (v % m) as i64
            }
            b'f' => {
                let h = numba_rs_hash_double(f64::from_bits(**w));
                *w = w.add(1);
                h
            }
            b'c' => {
                let re = numba_rs_hash_double(f64::from_bits(**w)) as u64;
                let im = numba_rs_hash_double(f64::from_bits(*w.add(1))) as u64;
                *w = w.add(2);
                let h = re.wrapping_add(im.wrapping_mul(1000003)) as i64;
                if h == -1 {
                    -2
                } else {
                    h
                }
            }
            b's' => {
                let s = str_of(*w);
                *w = w.add(7);
                // CPython's own string hash, so string sets iterate as CPython's do.
                crate::strings::hash_data(s.0, s.1, s.2 as i32)
            }
            b'(' => {
                let mut acc = XXPRIME_5;
                let mut n = 0u64;
                while *prog.add(*pc) != b')' {
                    let lane = hash_at(prog, pc, w) as u64;
                    acc = acc.wrapping_add(lane.wrapping_mul(XXPRIME_2));
                    acc = acc.rotate_left(31);
                    acc = acc.wrapping_mul(XXPRIME_1);
                    n += 1;
                }
                *pc += 1;
                acc = acc.wrapping_add(n ^ (XXPRIME_5 ^ 3527539));
                if acc == u64::MAX {
                    1546275796
                } else {
                    acc as i64
                }
            }
            _ => 0,
        }
    }
}

/// A string item's data, length and kind from its seven slots.
///
/// # Safety
/// `w` points at a string's slots (`model::unicode` field order).
unsafe fn str_of(w: *const u64) -> (*const u8, usize, u64) {
    use crate::model::unicode::field;
    // SAFETY: the caller's contract.
    unsafe {
        (
            *w.add(field::DATA as usize) as *const u8,
            *w.add(field::LENGTH as usize) as usize,
            *w.add(field::KIND as usize),
        )
    }
}

/// # Safety
/// `data` holds more than `i` characters of `kind` bytes.
unsafe fn char_at(data: *const u8, kind: u64, i: usize) -> u32 {
    // SAFETY: the caller's contract.
    unsafe {
        match kind {
            1 => u32::from(*data.add(i)),
            2 => u32::from((data as *const u16).add(i).read_unaligned()),
            _ => (data as *const u32).add(i).read_unaligned(),
        }
    }
}

/// Whether the items at `a` and `b` are equal, walking the program from `*pc`.
///
/// # Safety
/// Both hold items the program describes.
pub(crate) unsafe fn equal_at(
    prog: *const u8,
    pc: &mut usize,
    a: &mut *const u64,
    b: &mut *const u64,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        let op = *prog.add(*pc);
        *pc += 1;
        let step = |a: &mut *const u64, b: &mut *const u64, n: usize| {
            *a = a.add(n);
            *b = b.add(n);
        };
        match op {
            b'i' | b'b' | b'u' => {
                let eq = **a == **b;
                step(a, b, 1);
                eq
            }
            b'f' => {
                let (x, y) = (f64::from_bits(**a), f64::from_bits(**b));
                // The same NaN is found again (CPython finds the same object).
                let eq = x == y || (**a == **b);
                step(a, b, 1);
                eq
            }
            b'c' => {
                let eq = f64::from_bits(**a) == f64::from_bits(**b)
                    && f64::from_bits(*a.add(1)) == f64::from_bits(*b.add(1));
                step(a, b, 2);
                eq
            }
            b's' => {
                let (x, y) = (str_of(*a), str_of(*b));
                step(a, b, 7);
                x.1 == y.1 && (0..x.1).all(|i| char_at(x.0, x.2, i) == char_at(y.0, y.2, i))
            }
            b'(' => {
                let mut all = true;
                while *prog.add(*pc) != b')' {
                    all &= equal_at(prog, pc, a, b);
                }
                *pc += 1;
                all
            }
            _ => false,
        }
    }
}

impl SetPayload {
    /// # Safety
    /// `i <= mask`.
    unsafe fn entry(&self, i: i64) -> *mut u64 {
        // SAFETY: the caller's contract.
        unsafe {
            self.table
                .add((i * (ENTRY_HEADER + self.item_bytes)) as usize) as *mut u64
        }
    }

    /// # Safety
    /// `item` holds an item of this set's type.
    unsafe fn hash(&self, item: *const u64) -> i64 {
        let mut w = item;
        // SAFETY: the caller's contract.
        unsafe {
            // One signed integer (the common set): no program to walk.
            if *self.key == b'i' && *self.key.add(1) == 0 {
                return taggable(numba_rs_hash_int(*item as i64));
            }
            taggable(hash_at(self.key, &mut 0, &mut w))
        }
    }

    /// # Safety
    /// Both hold items of this set's type.
    unsafe fn equal(&self, a: *const u64, b: *const u64) -> bool {
        let (mut a, mut b) = (a, b);
        // SAFETY: the caller's contract.
        unsafe {
            // One integer or bool slot: the words are equal.
            if matches!(*self.key, b'i' | b'u' | b'b') && *self.key.add(1) == 0 {
                return *a == *b;
            }
            equal_at(self.key, &mut 0, &mut a, &mut b)
        }
    }

    /// The entry holding an item equal to `item` (hash `h`), or the entry where it would
    /// go (the first dummy on the way, else the empty one that ends the probe), and
    /// whether it was found.
    ///
    /// # Safety
    /// `item` holds an item of this set's type; the table has an empty entry.
    unsafe fn lookup(&self, item: *const u64, h: i64) -> (i64, bool) {
        let mask = self.mask;
        let mut perturb = h as u64;
        let mut i = h & mask;
        let mut free = -1;
        let want = tag(h);
        // SAFETY: every index is masked into the table.
        unsafe {
            loop {
                let probes = if i + LINEAR_PROBES <= mask {
                    LINEAR_PROBES
                } else {
                    0
                };
                for j in 0..=probes {
                    let e = self.entry(i + j);
                    match *e {
                        EMPTY => return (if free >= 0 { free } else { i + j }, false),
                        // (`want` is never a marker: a dummy past the first falls through.)
                        DUMMY if free < 0 => free = i + j,
                        t if t == want && self.equal(e.add(1), item) => return (i + j, true),
                        _ => {}
                    }
                }
                perturb >>= PERTURB_SHIFT;
                i = ((i as u64)
                    .wrapping_mul(5)
                    .wrapping_add(1)
                    .wrapping_add(perturb) as i64)
                    & mask;
            }
        }
    }

    /// Rebuild the table with room for `minused` items. 0, or -1 when out of memory.
    ///
    /// # Safety
    /// A live payload.
    unsafe fn resize(&mut self, minused: i64) -> i32 {
        let mut size = MIN_SIZE;
        while size <= minused {
            size <<= 1;
        }
        let bytes = (size * (ENTRY_HEADER + self.item_bytes)) as usize;
        let table = numba_nrt::NRT_Allocate(bytes);
        if table.is_null() {
            return -1;
        }
        // SAFETY: the new table is zeroed (every entry empty) before items move in.
        unsafe {
            std::ptr::write_bytes(table, 0, bytes);
            let (old, old_mask) = (self.table, self.mask);
            self.table = table;
            self.mask = size - 1;
            self.fill = self.used;
            let eb = (ENTRY_HEADER + self.item_bytes) as usize;
            if !old.is_null() {
                for i in 0..=old_mask {
                    let e = old.add(i as usize * eb) as *const u64;
                    if is_used(*e) {
                        let h = untag(*e);
                        // A fresh table has no dummies and no equal items: the first
                        // empty entry of the probe.
                        let mut perturb = h as u64;
                        let mut j = h & self.mask;
                        'probe: loop {
                            let probes = if j + LINEAR_PROBES <= self.mask {
                                LINEAR_PROBES
                            } else {
                                0
                            };
                            for k in 0..=probes {
                                let d = self.entry(j + k);
                                if *d == EMPTY {
                                    std::ptr::copy_nonoverlapping(e as *const u8, d as *mut u8, eb);
                                    break 'probe;
                                }
                            }
                            perturb >>= PERTURB_SHIFT;
                            j = ((j as u64)
                                .wrapping_mul(5)
                                .wrapping_add(1)
                                .wrapping_add(perturb) as i64)
                                & self.mask;
                        }
                    }
                }
                numba_nrt::NRT_Free(old);
            }
        }
        0
    }

    /// Take or drop the references of the item in entry `i`.
    ///
    /// # Safety
    /// Entry `i` is used.
    unsafe fn item_refs(&self, i: i64, f: unsafe extern "C" fn(*mut MemInfo)) {
        // SAFETY: the caller's contract; the map describes the item.
        unsafe { crate::lists::item_refs(self.refs, self.entry(i).add(1), f) }
    }
}

unsafe extern "C" fn set_dtor(data: *mut u8, _size: usize, _info: *mut std::ffi::c_void) {
    // SAFETY: the MemInfo's data is the payload this module made.
    unsafe {
        let p = &mut *(data as *mut SetPayload);
        // Items without references (numbers) need no walk of the table.
        if !p.refs.is_null() {
            for i in 0..=p.mask {
                if is_used(*p.entry(i)) {
                    p.item_refs(i, numba_nrt::NRT_decref);
                }
            }
        }
        numba_nrt::NRT_Free(p.table);
        numba_nrt::NRT_Free(data);
    }
}

/// A new empty set of items of `item_bytes` bytes, described by `key` (a [`KeyProgram`])
/// and `refs` (a `lists::RefMap`, null when none). Null when out of memory.
///
/// # Safety
/// `key` and `refs` (if not null) are valid and outlive the set.
pub unsafe extern "C" fn numba_rs_set_new(
    item_bytes: i64,
    key: *const u8,
    refs: *const i32,
) -> *mut MemInfo {
    let payload = numba_nrt::NRT_Allocate(size_of::<SetPayload>()) as *mut SetPayload;
    if payload.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a fresh allocation of the payload's size; `resize` makes the first table.
    unsafe {
        payload.write(SetPayload {
            used: 0,
            fill: 0,
            mask: -1,
            item_bytes,
            table: std::ptr::null_mut(),
            dirty: 0,
            refs: if refs.is_null() || *refs == 0 {
                std::ptr::null()
            } else {
                refs
            },
            key,
            finger: 0,
        });
        if (*payload).resize(0) != 0 {
            numba_nrt::NRT_Free(payload as *mut u8);
            return std::ptr::null_mut();
        }
        let mi = numba_nrt::NRT_MemInfo_new(
            payload as *mut u8,
            size_of::<SetPayload>(),
            Some(set_dtor),
            std::ptr::null_mut(),
        );
        if mi.is_null() {
            numba_nrt::NRT_Free((*payload).table);
            numba_nrt::NRT_Free(payload as *mut u8);
        }
        mi
    }
}

/// Add the item at `item` (taking references to what it holds): 1 when added, 0 when
/// an equal item was there, -1 when out of memory.
///
/// # Safety
/// `p` is a live payload; `item` holds an item of its type.
pub unsafe extern "C" fn numba_rs_set_add(p: *mut SetPayload, item: *const u64) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &mut *p;
        let h = s.hash(item);
        let (i, found) = s.lookup(item, h);
        if found {
            return 0;
        }
        let e = s.entry(i);
        if *e == EMPTY {
            s.fill += 1;
        }
        *e = tag(h);
        std::ptr::copy_nonoverlapping(
            item as *const u8,
            e.add(1) as *mut u8,
            s.item_bytes as usize,
        );
        s.item_refs(i, numba_nrt::NRT_incref);
        s.used += 1;
        s.dirty = 1;
        if s.fill * 5 >= s.mask * 3 {
            let want = if s.used > 50000 {
                s.used * 2
            } else {
                s.used * 4
            };
            if s.resize(want) != 0 {
                return -1;
            }
        }
        1
    }
}

/// Whether the set holds an item equal to `item`.
///
/// # Safety
/// As [`numba_rs_set_add`].
pub unsafe extern "C" fn numba_rs_set_contains(p: *const SetPayload, item: *const u64) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*p;
        i32::from(s.lookup(item, s.hash(item)).1)
    }
}

/// Remove the item equal to `item` (releasing it): 1 when it was there, else 0.
///
/// # Safety
/// As [`numba_rs_set_add`].
pub unsafe extern "C" fn numba_rs_set_discard(p: *mut SetPayload, item: *const u64) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &mut *p;
        let (i, found) = s.lookup(item, s.hash(item));
        if !found {
            return 0;
        }
        s.item_refs(i, numba_nrt::NRT_decref);
        *s.entry(i) = DUMMY;
        s.used -= 1;
        s.dirty = 1;
        1
    }
}

/// Move some item out into `out` (its references go with it): 0, or 1 when empty.
///
/// # Safety
/// `p` is a live payload; `out` has room for an item.
pub unsafe extern "C" fn numba_rs_set_pop(p: *mut SetPayload, out: *mut u64) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &mut *p;
        if s.used == 0 {
            return 1;
        }
        let mut i = s.finger & s.mask;
        while !is_used(*s.entry(i)) {
            i = (i + 1) & s.mask;
        }
        std::ptr::copy_nonoverlapping(
            s.entry(i).add(1) as *const u8,
            out as *mut u8,
            s.item_bytes as usize,
        );
        *s.entry(i) = DUMMY;
        s.used -= 1;
        s.finger = i + 1;
        s.dirty = 1;
        0
    }
}

/// The next item from entry `*pos` on (advancing `*pos` past it), or null at the end.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_set_next(p: *const SetPayload, pos: *mut i64) -> *const u64 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*p;
        while *pos <= s.mask {
            let e = s.entry(*pos);
            *pos += 1;
            if is_used(*e) {
                return e.add(1);
            }
        }
        std::ptr::null()
    }
}

/// `s.clear()`.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_set_clear(p: *mut SetPayload) {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &mut *p;
        for i in 0..=s.mask {
            if is_used(*s.entry(i)) {
                s.item_refs(i, numba_nrt::NRT_decref);
            }
        }
        std::ptr::write_bytes(
            s.table,
            0,
            ((s.mask + 1) * (ENTRY_HEADER + s.item_bytes)) as usize,
        );
        s.used = 0;
        s.fill = 0;
        s.dirty = 1;
    }
}

/// The items of `p` for which `keep(item)` holds, as a new set; null when out of
/// memory.
///
/// # Safety
/// `p` is a live payload.
unsafe fn filtered(p: *const SetPayload, keep: impl Fn(*const u64) -> bool) -> *mut MemInfo {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*p;
        let mi = numba_rs_set_new(s.item_bytes, s.key, s.refs);
        if mi.is_null() {
            return mi;
        }
        let d = numba_nrt::NRT_MemInfo_data(mi) as *mut SetPayload;
        for i in 0..=s.mask {
            let e = s.entry(i);
            if is_used(*e) && keep(e.add(1)) && numba_rs_set_add(d, e.add(1)) < 0 {
                numba_nrt::NRT_decref(mi);
                return std::ptr::null_mut();
            }
        }
        (*d).dirty = 0;
        mi
    }
}

/// A copy of the set; null when out of memory.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_set_copy(p: *const SetPayload) -> *mut MemInfo {
    // SAFETY: the caller's contract.
    unsafe { filtered(p, |_| true) }
}

/// The set operations on two sets of one item type, by `op`: 0 union (`a | b`), 1
/// intersection, 2 difference, 3 symmetric difference, as a new set (null when out of
/// memory).
///
/// # Safety
/// Both are live payloads of the same item type.
pub unsafe extern "C" fn numba_rs_set_binop(
    a: *const SetPayload,
    b: *const SetPayload,
    op: i32,
) -> *mut MemInfo {
    // SAFETY: the caller's contract.
    unsafe {
        let r = match op {
            1 => filtered(a, |x| numba_rs_set_contains(b, x) != 0),
            2 | 3 => filtered(a, |x| numba_rs_set_contains(b, x) == 0),
            _ => numba_rs_set_copy(a),
        };
        if r.is_null() || op == 1 || op == 2 {
            return r;
        }
        let d = numba_nrt::NRT_MemInfo_data(r) as *mut SetPayload;
        let s = &*b;
        for i in 0..=s.mask {
            let e = s.entry(i);
            if is_used(*e)
                && (op == 0 || numba_rs_set_contains(a, e.add(1)) == 0)
                && numba_rs_set_add(d, e.add(1)) < 0
            {
                numba_nrt::NRT_decref(r);
                return std::ptr::null_mut();
            }
        }
        (*d).dirty = 0;
        r
    }
}

/// The in-place forms (`|=`, `&=`, `-=`, `^=` and the `*_update` methods), `op` as in
/// [`numba_rs_set_binop`]: 0, or -1 when out of memory.
///
/// # Safety
/// Both are live payloads of the same item type (they may be the same set).
pub unsafe extern "C" fn numba_rs_set_update(
    a: *mut SetPayload,
    b: *const SetPayload,
    op: i32,
) -> i32 {
    // SAFETY: the caller's contract. `b` is copied first when it is `a`.
    unsafe {
        if std::ptr::eq(a, b) {
            match op {
                0 | 1 => return 0,
                _ => {
                    numba_rs_set_clear(a);
                    return 0;
                }
            }
        }
        let s = &*b;
        match op {
            0 => {
                for i in 0..=s.mask {
                    let e = s.entry(i);
                    if is_used(*e) && numba_rs_set_add(a, e.add(1)) < 0 {
                        return -1;
                    }
                }
            }
            1 | 2 => {
                let d = &*a;
                let mut drop = Vec::new();
                for i in 0..=d.mask {
                    let e = d.entry(i);
                    if is_used(*e) && (numba_rs_set_contains(b, e.add(1)) != 0) != (op == 1) {
                        drop.push(i);
                    }
                }
                let d = &mut *a;
                for i in drop {
                    d.item_refs(i, numba_nrt::NRT_decref);
                    *d.entry(i) = DUMMY;
                    d.used -= 1;
                    d.dirty = 1;
                }
            }
            _ => {
                for i in 0..=s.mask {
                    let e = s.entry(i);
                    if !is_used(*e) {
                        continue;
                    }
                    if numba_rs_set_discard(a, e.add(1)) == 0 && numba_rs_set_add(a, e.add(1)) < 0 {
                        return -1;
                    }
                }
            }
        }
    }
    0
}

/// Whether every item of `a` is in `b`.
///
/// # Safety
/// Both are live payloads of the same item type.
pub unsafe extern "C" fn numba_rs_set_issubset(a: *const SetPayload, b: *const SetPayload) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*a;
        if s.used > (*b).used {
            return 0;
        }
        for i in 0..=s.mask {
            let e = s.entry(i);
            if is_used(*e) && numba_rs_set_contains(b, e.add(1)) == 0 {
                return 0;
            }
        }
        1
    }
}

/// Whether `a` and `b` share no item.
///
/// # Safety
/// Both are live payloads of the same item type.
pub unsafe extern "C" fn numba_rs_set_isdisjoint(
    a: *const SetPayload,
    b: *const SetPayload,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*a;
        for i in 0..=s.mask {
            let e = s.entry(i);
            if is_used(*e) && numba_rs_set_contains(b, e.add(1)) != 0 {
                return 0;
            }
        }
        1
    }
}

/// `hash(x)` of a value stored as slots, described by a key program: CPython's hash of
/// numbers, complex numbers, strings and tuples of them.
///
/// # Safety
/// `prog` is a key program and `item` holds a value it describes.
pub unsafe extern "C" fn numba_rs_hash_slots(prog: *const u8, item: *const u64) -> i64 {
    let mut w = item;
    // SAFETY: the caller's contract.
    unsafe { hash_at(prog, &mut 0, &mut w) }
}

/// Every helper by symbol name, with its address.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        (
            "numba_rs_hash_slots",
            numba_rs_hash_slots as *const () as usize,
        ),
        ("numba_rs_set_new", numba_rs_set_new as *const () as usize),
        ("numba_rs_set_add", numba_rs_set_add as *const () as usize),
        (
            "numba_rs_set_contains",
            numba_rs_set_contains as *const () as usize,
        ),
        (
            "numba_rs_set_discard",
            numba_rs_set_discard as *const () as usize,
        ),
        ("numba_rs_set_pop", numba_rs_set_pop as *const () as usize),
        ("numba_rs_set_next", numba_rs_set_next as *const () as usize),
        (
            "numba_rs_set_clear",
            numba_rs_set_clear as *const () as usize,
        ),
        ("numba_rs_set_copy", numba_rs_set_copy as *const () as usize),
        (
            "numba_rs_set_binop",
            numba_rs_set_binop as *const () as usize,
        ),
        (
            "numba_rs_set_update",
            numba_rs_set_update as *const () as usize,
        ),
        (
            "numba_rs_set_issubset",
            numba_rs_set_issubset as *const () as usize,
        ),
        (
            "numba_rs_set_isdisjoint",
            numba_rs_set_isdisjoint as *const () as usize,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use numba_typeinfer::types::*;

    fn int_set() -> *mut MemInfo {
        let key = interned_key_program(
            key_program(&Shape::Leaf(
                Leaf::Int {
                    bits: 64,
                    signed: true,
                },
                INT64,
            ))
            .unwrap(),
        );
        // SAFETY: a key program for one-slot ints; no references.
        unsafe { numba_rs_set_new(8, key, std::ptr::null()) }
    }

    #[test]
    fn small_ints_iterate_in_cpythons_order() {
        let mi = int_set();
        // SAFETY: a live int set.
        unsafe {
            let p = numba_nrt::NRT_MemInfo_data(mi) as *mut SetPayload;
            let items = [33i64, 1, 17, -5, 8, 1, 100, 9, 2, 64];
            for x in items {
                numba_rs_set_add(p, &x as *const i64 as *const u64);
            }
            let mut pos = 0;
            let mut got = Vec::new();
            loop {
                let at = numba_rs_set_next(p, &mut pos);
                if at.is_null() {
                    break;
                }
                got.push(*at as i64);
            }
            // CPython 3.11: s = set(); s.add(x) for each; list(s).
            assert_eq!(got, vec![64, 33, 1, 2, 100, 8, 9, 17, -5]);
            assert_eq!((*p).used, 9);
            let five = -5i64;
            assert_eq!(
                numba_rs_set_discard(p, &five as *const i64 as *const u64),
                1
            );
            assert_eq!(
                numba_rs_set_contains(p, &five as *const i64 as *const u64),
                0
            );
            numba_nrt::NRT_decref(mi);
        }
    }

    #[test]
    fn tuples_hash_like_cpython() {
        // hash((1, 2.5)) in CPython 3.11 (64-bit).
        let prog = key_program(&Shape::Tuple(vec![
            Shape::Leaf(
                Leaf::Int {
                    bits: 64,
                    signed: true,
                },
                INT64,
            ),
            Shape::Leaf(Leaf::Float, FLOAT64),
        ]))
        .unwrap();
        let item = [1u64, 2.5f64.to_bits()];
        let mut w = item.as_ptr();
        // SAFETY: the item matches the program.
        let h = unsafe { hash_at(prog.as_ptr(), &mut 0, &mut w) };
        assert_eq!(h, 396935360214441795);
    }
}
