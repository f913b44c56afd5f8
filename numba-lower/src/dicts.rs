//! Run-time helpers for dicts (`DictType`, `model::list`'s layout): CPython 3.11's compact
//! dict (`dictobject.c`): a table of indices probed as CPython probes it, pointing into
//! an array of entries kept in insertion order, so iteration, `popitem` (last in, first
//! out) and the order after deletions are Python's.
//!
//! Keys and values are stored as lists store items (boundary slot form, see
//! `crate::lists`), each entry `[hash tag][key slots][value slots]`. Keys hash and
//! compare by a `sets::KeyProgram` (CPython's `hash` for numbers, strings, tuples);
//! where keys and values hold references is a `lists::RefMap` each. The same functions
//! serve compiled code and numba-py's `typed.Dict`.

use numba_nrt::MemInfo;

use crate::runtime::numba_rs_hash_int;
use crate::sets::{equal_at, hash_at, taggable};

/// A dict's payload, the data of its MemInfo.
#[repr(C)]
pub struct DictPayload {
    /// Live items (`len(d)`).
    pub used: i64,
    /// Entries written so far, live or deleted (the next entry's index).
    pub nentries: i64,
    /// Entries the entry array has room for (CPython's `USABLE_FRACTION` of the table).
    pub usable: i64,
    /// Index-table size minus one (a power of two minus one).
    pub mask: i64,
    /// `mask + 1` indices: [`IX_EMPTY`], [`IX_DUMMY`] or an entry's index.
    pub indices: *mut i32,
    /// `usable` entries of `1 + key_words + value_words` words.
    pub entries: *mut u64,
    /// Slots of a key.
    pub key_words: i64,
    /// Slots of a value.
    pub value_words: i64,
    /// How keys hash and compare (a `sets::KeyProgram`, NUL-terminated).
    pub key: *const u8,
    /// Where keys hold references (a `lists::RefMap`), null when nowhere.
    pub key_refs: *const i32,
    /// Where values hold references, null when nowhere.
    pub value_refs: *const i32,
    /// Index slots holding an entry or a dummy: what makes the table full (a popped
    /// item's slot stays a dummy, so this is not `nentries`; CPython's `dk_usable`).
    pub fill: i64,
}

/// Byte offsets of [`DictPayload`]'s fields the generated code reads (`USED` is where a
/// list keeps its size: `len` of either reads the same word).
pub mod offset {
    pub const USED: u64 = 0;
    pub const KEY_WORDS: u64 = 48;
}

const IX_EMPTY: i32 = -1;
const IX_DUMMY: i32 = -2;
/// The tag word of a deleted entry (a live entry's is its hash with the top bit flipped,
/// never 0 or 1: see `sets::taggable`).
const DELETED: u64 = 1;
const TAG_BIT: u64 = 1 << 63;
const MIN_SIZE: i64 = 8;
const PERTURB_SHIFT: u32 = 5;

/// The next index slot of a probe (CPython's `i = (i*5 + perturb + 1) & mask`, with
/// `perturb` shifted down first).
fn next_slot(i: i64, perturb: &mut u64, mask: i64) -> i64 {
    *perturb >>= PERTURB_SHIFT;
    ((i as u64)
        .wrapping_mul(5)
        .wrapping_add(*perturb)
        .wrapping_add(1) as i64)
        & mask
}

/// `USABLE_FRACTION`: entries a table of `n` indices holds before it grows.
fn usable_fraction(n: i64) -> i64 {
    (n << 1) / 3
}

impl DictPayload {
    fn entry_words(&self) -> usize {
        (1 + self.key_words + self.value_words) as usize
    }

    /// # Safety
    /// `i < usable`.
    unsafe fn entry(&self, i: i64) -> *mut u64 {
        // SAFETY: the caller's contract.
        unsafe { self.entries.add(i as usize * self.entry_words()) }
    }

    /// # Safety
    /// `key` holds a key of this dict's type.
    unsafe fn hash(&self, key: *const u64) -> i64 {
        // SAFETY: the caller's contract.
        unsafe {
            if *self.key == b'i' && *self.key.add(1) == 0 {
                return taggable(numba_rs_hash_int(*key as i64));
            }
            let mut w = key;
            taggable(hash_at(self.key, &mut 0, &mut w))
        }
    }

    /// # Safety
    /// Both hold keys of this dict's type.
    unsafe fn equal(&self, a: *const u64, b: *const u64) -> bool {
        // SAFETY: the caller's contract.
        unsafe {
            if matches!(*self.key, b'i' | b'u' | b'b') && *self.key.add(1) == 0 {
                return *a == *b;
            }
            let (mut a, mut b) = (a, b);
            equal_at(self.key, &mut 0, &mut a, &mut b)
        }
    }

    /// The index slot and entry of the key equal to `key` (hash `h`), or `None`.
    ///
    /// # Safety
    /// `key` holds a key of this dict's type.
    unsafe fn lookup(&self, key: *const u64, h: i64) -> Option<(i64, i64)> {
        let want = (h as u64) ^ TAG_BIT;
        let mut perturb = h as u64;
        let mut i = h & self.mask;
        // SAFETY: indices are masked into the table; entry indices are below `nentries`.
        unsafe {
            loop {
                let ix = *self.indices.add(i as usize);
                if ix == IX_EMPTY {
                    return None;
                }
                if ix >= 0 {
                    let e = self.entry(i64::from(ix));
                    if *e == want && self.equal(e.add(1), key) {
                        return Some((i, i64::from(ix)));
                    }
                }
                i = next_slot(i, &mut perturb, self.mask);
            }
        }
    }

    /// The first index slot of `h`'s probe that holds no entry.
    ///
    /// # Safety
    /// A live payload whose table has an empty slot.
    unsafe fn free_slot(&self, h: i64) -> i64 {
        let mut perturb = h as u64;
        let mut i = h & self.mask;
        // SAFETY: indices are masked into the table.
        unsafe {
            while *self.indices.add(i as usize) >= 0 {
                i = next_slot(i, &mut perturb, self.mask);
            }
        }
        i
    }

    /// Rebuild with a table of at least `minsize` indices, the live entries packed in
    /// their order. 0, or -1 when out of memory.
    ///
    /// # Safety
    /// A live payload (or one being made: null arrays, no entries).
    unsafe fn resize(&mut self, minsize: i64) -> i32 {
        let mut size = MIN_SIZE;
        while size < minsize {
            size <<= 1;
        }
        if size > i64::from(i32::MAX) {
            return -1;
        }
        let usable = usable_fraction(size);
        let ew = self.entry_words();
        let indices = numba_nrt::NRT_Allocate(size as usize * 4) as *mut i32;
        let entries = numba_nrt::NRT_Allocate(usable as usize * ew * 8) as *mut u64;
        if indices.is_null() || entries.is_null() {
            // SAFETY: null or fresh allocations.
            unsafe {
                numba_nrt::NRT_Free(indices as *mut u8);
                numba_nrt::NRT_Free(entries as *mut u8);
            }
            return -1;
        }
        // SAFETY: the new arrays have the sizes computed; old entries below `nentries`.
        unsafe {
            std::ptr::write_bytes(indices as *mut u8, 0xff, size as usize * 4);
            let (old, old_n) = (self.entries, self.nentries);
            let old_indices = self.indices;
            self.indices = indices;
            self.entries = entries;
            self.mask = size - 1;
            self.usable = usable;
            let mut n = 0;
            for j in 0..old_n {
                let e = old.add(j as usize * ew);
                if *e == DELETED {
                    continue;
                }
                std::ptr::copy_nonoverlapping(e, entries.add(n as usize * ew), ew);
                let h = (*e ^ TAG_BIT) as i64;
                let slot = self.free_slot(h);
                *indices.add(slot as usize) = n as i32;
                n += 1;
            }
            self.nentries = n;
            self.fill = n;
            numba_nrt::NRT_Free(old as *mut u8);
            numba_nrt::NRT_Free(old_indices as *mut u8);
        }
        0
    }

    /// # Safety
    /// Entry `i` is live.
    unsafe fn entry_refs(&self, i: i64, f: unsafe extern "C" fn(*mut MemInfo)) {
        // SAFETY: the caller's contract; the maps describe the key and value.
        unsafe {
            let e = self.entry(i);
            crate::lists::item_refs(self.key_refs, e.add(1), f);
            crate::lists::item_refs(self.value_refs, e.add(1 + self.key_words as usize), f);
        }
    }

    /// Insert a key known to be absent (its references taken here). 0, or -1 when out
    /// of memory.
    ///
    /// # Safety
    /// A live payload; `key` and `value` hold a key and a value of its types.
    unsafe fn insert_new(&mut self, key: *const u64, value: *const u64, h: i64) -> i32 {
        // SAFETY: the caller's contract; the table grows before it is full.
        unsafe {
            if self.fill >= self.usable && self.resize(self.used * 3) != 0 {
                return -1;
            }
            let slot = self.free_slot(h);
            let n = self.nentries;
            let e = self.entry(n);
            *e = (h as u64) ^ TAG_BIT;
            let kw = self.key_words as usize;
            std::ptr::copy_nonoverlapping(key, e.add(1), kw);
            std::ptr::copy_nonoverlapping(value, e.add(1 + kw), self.value_words as usize);
            self.entry_refs(n, numba_nrt::NRT_incref);
            *self.indices.add(slot as usize) = n as i32;
            self.nentries += 1;
            self.fill += 1;
            self.used += 1;
        }
        0
    }

    /// Remove the live entry `ix` found at index slot `slot`, without releasing what
    /// it holds.
    ///
    /// # Safety
    /// The slot holds `ix`, a live entry.
    unsafe fn unlink(&mut self, slot: i64, ix: i64) {
        // SAFETY: the caller's contract.
        unsafe {
            *self.indices.add(slot as usize) = IX_DUMMY;
            *self.entry(ix) = DELETED;
        }
        self.used -= 1;
    }
}

unsafe extern "C" fn dict_dtor(data: *mut u8, _size: usize, _info: *mut std::ffi::c_void) {
    // SAFETY: the MemInfo's data is the payload this module made.
    unsafe {
        let p = &mut *(data as *mut DictPayload);
        if !p.key_refs.is_null() || !p.value_refs.is_null() {
            for i in 0..p.nentries {
                if *p.entry(i) != DELETED {
                    p.entry_refs(i, numba_nrt::NRT_decref);
                }
            }
        }
        numba_nrt::NRT_Free(p.indices as *mut u8);
        numba_nrt::NRT_Free(p.entries as *mut u8);
        numba_nrt::NRT_Free(data);
    }
}

fn non_empty(refs: *const i32) -> *const i32 {
    // SAFETY: a ref map starts with its count.
    if refs.is_null() || unsafe { *refs } == 0 {
        std::ptr::null()
    } else {
        refs
    }
}

/// A new empty dict with room for `n_keys` keys before it grows: keys of `key_words`
/// slots described by `key` (a key program) and `key_refs`, values of `value_words`
/// slots with `value_refs` (ref maps, null for none). Null when out of memory.
///
/// # Safety
/// `key` and the maps (if not null) are valid and outlive the dict.
pub unsafe extern "C" fn numba_rs_dict_new(
    key_words: i64,
    value_words: i64,
    key: *const u8,
    key_refs: *const i32,
    value_refs: *const i32,
    n_keys: i64,
) -> *mut MemInfo {
    let payload = numba_nrt::NRT_Allocate(size_of::<DictPayload>()) as *mut DictPayload;
    if payload.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a fresh allocation of the payload's size; `resize` makes the first table.
    unsafe {
        payload.write(DictPayload {
            used: 0,
            nentries: 0,
            usable: 0,
            mask: -1,
            indices: std::ptr::null_mut(),
            entries: std::ptr::null_mut(),
            key_words,
            value_words,
            key,
            key_refs: non_empty(key_refs),
            value_refs: non_empty(value_refs),
            fill: 0,
        });
        // CPython's `new_dict_with_presize`: a table whose usable part holds n_keys.
        let minsize = (n_keys.max(0) * 3 + 1) / 2;
        if (*payload).resize(minsize) != 0 {
            numba_nrt::NRT_Free(payload as *mut u8);
            return std::ptr::null_mut();
        }
        let mi = numba_nrt::NRT_MemInfo_new(
            payload as *mut u8,
            size_of::<DictPayload>(),
            Some(dict_dtor),
            std::ptr::null_mut(),
        );
        if mi.is_null() {
            numba_nrt::NRT_Free((*payload).indices as *mut u8);
            numba_nrt::NRT_Free((*payload).entries as *mut u8);
            numba_nrt::NRT_Free(payload as *mut u8);
        }
        mi
    }
}

/// The value stored under `key` (borrowed, in place), or null when absent.
///
/// # Safety
/// `p` is a live payload; `key` holds a key of its type.
pub unsafe extern "C" fn numba_rs_dict_lookup(p: *const DictPayload, key: *const u64) -> *mut u64 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &*p;
        match d.lookup(key, d.hash(key)) {
            Some((_, ix)) => d.entry(ix).add(1 + d.key_words as usize),
            None => std::ptr::null_mut(),
        }
    }
}

/// `d[key] = value`, taking references to what both hold (a key already present keeps
/// its stored key, as CPython's). 0, or -1 when out of memory.
///
/// # Safety
/// `p` is a live payload; `key` and `value` hold a key and a value of its types.
pub unsafe extern "C" fn numba_rs_dict_setitem(
    p: *mut DictPayload,
    key: *const u64,
    value: *const u64,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        let h = d.hash(key);
        if let Some((_, ix)) = d.lookup(key, h) {
            let vw = d.value_words as usize;
            let at = d.entry(ix).add(1 + d.key_words as usize);
            // The new value's references first: it may hold what the old one does.
            crate::lists::item_refs(d.value_refs, value, numba_nrt::NRT_incref);
            crate::lists::item_refs(d.value_refs, at, numba_nrt::NRT_decref);
            std::ptr::copy_nonoverlapping(value, at, vw);
            return 0;
        }
        d.insert_new(key, value, h)
    }
}

/// `d.setdefault(key, default)`: the value under `key` after inserting `default` when
/// absent (borrowed, in place); null when out of memory.
///
/// # Safety
/// As [`numba_rs_dict_setitem`].
pub unsafe extern "C" fn numba_rs_dict_setdefault(
    p: *mut DictPayload,
    key: *const u64,
    default: *const u64,
) -> *mut u64 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        let h = d.hash(key);
        if d.lookup(key, h).is_none() && d.insert_new(key, default, h) != 0 {
            return std::ptr::null_mut();
        }
        numba_rs_dict_lookup(p, key)
    }
}

/// `del d[key]`: 1 when removed (its references released), 0 when absent.
///
/// # Safety
/// `p` is a live payload; `key` holds a key of its type.
pub unsafe extern "C" fn numba_rs_dict_delitem(p: *mut DictPayload, key: *const u64) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        let Some((slot, ix)) = d.lookup(key, d.hash(key)) else {
            return 0;
        };
        d.entry_refs(ix, numba_nrt::NRT_decref);
        d.unlink(slot, ix);
        1
    }
}

/// `d.pop(key)`: 1 with the value's slots written to `out` (its references passing to
/// the caller; the stored key's released), 0 when absent.
///
/// # Safety
/// `p` is a live payload; `key` holds a key of its type; `out` has room for a value.
pub unsafe extern "C" fn numba_rs_dict_pop(
    p: *mut DictPayload,
    key: *const u64,
    out: *mut u64,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        let Some((slot, ix)) = d.lookup(key, d.hash(key)) else {
            return 0;
        };
        let e = d.entry(ix);
        crate::lists::item_refs(d.key_refs, e.add(1), numba_nrt::NRT_decref);
        let kw = d.key_words as usize;
        std::ptr::copy_nonoverlapping(e.add(1 + kw), out, d.value_words as usize);
        d.unlink(slot, ix);
        1
    }
}

/// `d.popitem()`: the last item inserted, key and value written to `out_key` and
/// `out_value` (their references passing to the caller); 0 when the dict is empty.
///
/// # Safety
/// `p` is a live payload; the outputs have room for a key and a value.
pub unsafe extern "C" fn numba_rs_dict_popitem(
    p: *mut DictPayload,
    out_key: *mut u64,
    out_value: *mut u64,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        if d.used == 0 {
            return 0;
        }
        let mut ix = d.nentries - 1;
        while *d.entry(ix) == DELETED {
            ix -= 1;
        }
        let e = d.entry(ix);
        let kw = d.key_words as usize;
        std::ptr::copy_nonoverlapping(e.add(1), out_key, kw);
        std::ptr::copy_nonoverlapping(e.add(1 + kw), out_value, d.value_words as usize);
        // The index slot pointing at `ix`.
        let h = (*e ^ TAG_BIT) as i64;
        let mut perturb = h as u64;
        let mut slot = h & d.mask;
        while *d.indices.add(slot as usize) != ix as i32 {
            slot = next_slot(slot, &mut perturb, d.mask);
        }
        d.unlink(slot, ix);
        // CPython reuses the popped entry's place.
        d.nentries = ix;
        1
    }
}

/// The next live entry from `*pos` (advancing it): a pointer to its key, the value
/// following after `key_words` slots; null at the end.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_dict_next(p: *const DictPayload, pos: *mut i64) -> *const u64 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &*p;
        while *pos < d.nentries {
            let e = d.entry(*pos);
            *pos += 1;
            if *e != DELETED {
                return e.add(1);
            }
        }
        std::ptr::null()
    }
}

/// `d.clear()`: releases every item; the table shrinks to its first size.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_dict_clear(p: *mut DictPayload) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        for i in 0..d.nentries {
            if *d.entry(i) != DELETED {
                d.entry_refs(i, numba_nrt::NRT_decref);
                *d.entry(i) = DELETED;
            }
        }
        d.used = 0;
        d.resize(0)
    }
}

/// `d.copy()`: a new dict of the same items in the same order (null when out of memory).
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_dict_copy(p: *const DictPayload) -> *mut MemInfo {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &*p;
        let mi = numba_rs_dict_new(
            d.key_words,
            d.value_words,
            d.key,
            d.key_refs,
            d.value_refs,
            d.used,
        );
        if mi.is_null() {
            return mi;
        }
        let q = numba_nrt::NRT_MemInfo_data(mi) as *mut DictPayload;
        if numba_rs_dict_update(q, p) != 0 {
            numba_nrt::NRT_decref(mi);
            return std::ptr::null_mut();
        }
        mi
    }
}

/// `d.update(other)` for a dict of the same types. 0, or -1 when out of memory.
///
/// # Safety
/// Both are live payloads of the same key and value types.
pub unsafe extern "C" fn numba_rs_dict_update(
    p: *mut DictPayload,
    other: *const DictPayload,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let o = &*other;
        let kw = o.key_words as usize;
        let mut pos = 0;
        // Entries are read by position: `p` and `other` may be the same dict.
        while pos < o.nentries {
            let e = o.entry(pos);
            pos += 1;
            if *e == DELETED {
                continue;
            }
            let key: Vec<u64> = std::slice::from_raw_parts(e.add(1), kw).to_vec();
            let value: Vec<u64> =
                std::slice::from_raw_parts(e.add(1 + kw), o.value_words as usize).to_vec();
            if numba_rs_dict_setitem(p, key.as_ptr(), value.as_ptr()) != 0 {
                return -1;
            }
        }
        0
    }
}

/// `a == b`: the same keys, and equal values as `value_prog` (a key program for the
/// value type) compares them. 1 or 0.
///
/// # Safety
/// Both are live payloads of the same types; `value_prog` describes their values.
pub unsafe extern "C" fn numba_rs_dict_equal(
    a: *const DictPayload,
    b: *const DictPayload,
    value_prog: *const u8,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        let (x, y) = (&*a, &*b);
        if x.used != y.used {
            return 0;
        }
        let kw = x.key_words as usize;
        for i in 0..x.nentries {
            let e = x.entry(i);
            if *e == DELETED {
                continue;
            }
            let other = numba_rs_dict_lookup(b, e.add(1));
            if other.is_null() {
                return 0;
            }
            let (mut va, mut vb) = (e.add(1 + kw) as *const u64, other as *const u64);
            if !equal_at(value_prog, &mut 0, &mut va, &mut vb) {
                return 0;
            }
        }
        1
    }
}

/// Every helper by symbol name, with its address.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("numba_rs_dict_new", numba_rs_dict_new as *const () as usize),
        (
            "numba_rs_dict_lookup",
            numba_rs_dict_lookup as *const () as usize,
        ),
        (
            "numba_rs_dict_setitem",
            numba_rs_dict_setitem as *const () as usize,
        ),
        (
            "numba_rs_dict_setdefault",
            numba_rs_dict_setdefault as *const () as usize,
        ),
        (
            "numba_rs_dict_delitem",
            numba_rs_dict_delitem as *const () as usize,
        ),
        ("numba_rs_dict_pop", numba_rs_dict_pop as *const () as usize),
        (
            "numba_rs_dict_popitem",
            numba_rs_dict_popitem as *const () as usize,
        ),
        (
            "numba_rs_dict_next",
            numba_rs_dict_next as *const () as usize,
        ),
        (
            "numba_rs_dict_clear",
            numba_rs_dict_clear as *const () as usize,
        ),
        (
            "numba_rs_dict_copy",
            numba_rs_dict_copy as *const () as usize,
        ),
        (
            "numba_rs_dict_update",
            numba_rs_dict_update as *const () as usize,
        ),
        (
            "numba_rs_dict_equal",
            numba_rs_dict_equal as *const () as usize,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::callconv::{Leaf, Shape};
    use numba_typeinfer::types::*;

    fn int_dict() -> *mut MemInfo {
        let int = Shape::Leaf(
            Leaf::Int {
                bits: 64,
                signed: true,
            },
            INT64,
        );
        let key = crate::sets::interned_key_program(crate::sets::key_program(&int).unwrap());
        // SAFETY: a key program for one-slot ints; no references.
        unsafe { numba_rs_dict_new(1, 1, key, std::ptr::null(), std::ptr::null(), 0) }
    }

    fn keys(p: *const DictPayload) -> Vec<i64> {
        let mut pos = 0;
        let mut out = Vec::new();
        // SAFETY: a live int dict.
        unsafe {
            loop {
                let at = numba_rs_dict_next(p, &mut pos);
                if at.is_null() {
                    return out;
                }
                out.push(*at as i64);
            }
        }
    }

    #[test]
    fn insertion_order_survives_deletes_and_resizes() {
        let mi = int_dict();
        // SAFETY: a live int dict.
        unsafe {
            let p = numba_nrt::NRT_MemInfo_data(mi) as *mut DictPayload;
            let mut model: Vec<(i64, i64)> = Vec::new();
            // A Python dict driven the same way (checked by hand against CPython 3.11).
            for i in 0..1000i64 {
                let k = (i * 7919) % 331 - 100;
                let v = i;
                numba_rs_dict_setitem(
                    p,
                    &k as *const i64 as *const u64,
                    &v as *const i64 as *const u64,
                );
                match model.iter_mut().find(|(mk, _)| *mk == k) {
                    Some(e) => e.1 = v,
                    None => model.push((k, v)),
                }
                if i % 3 == 0 {
                    let d = (i * 31) % 331 - 100;
                    let had = numba_rs_dict_delitem(p, &d as *const i64 as *const u64);
                    let pos = model.iter().position(|(mk, _)| *mk == d);
                    assert_eq!(had == 1, pos.is_some());
                    if let Some(pos) = pos {
                        model.remove(pos);
                    }
                }
            }
            assert_eq!(keys(p), model.iter().map(|e| e.0).collect::<Vec<_>>());
            assert_eq!((*p).used as usize, model.len());
            for (k, v) in &model {
                let at = numba_rs_dict_lookup(p, k as *const i64 as *const u64);
                assert_eq!(*at as i64, *v);
            }
            let (mut k, mut v) = (0u64, 0u64);
            assert_eq!(numba_rs_dict_popitem(p, &mut k, &mut v), 1);
            assert_eq!((k as i64, v as i64), *model.last().unwrap());
            // Popped slots stay dummies: alternating pops and inserts must still find
            // empty slots (the table grows by its fill, not by its entries).
            for i in 0..10_000i64 {
                let k = 1_000_000 + i;
                numba_rs_dict_setitem(
                    p,
                    &k as *const i64 as *const u64,
                    &k as *const i64 as *const u64,
                );
                assert_eq!(numba_rs_dict_popitem(p, &mut 0u64, &mut 0u64), 1);
            }
            numba_nrt::NRT_decref(mi);
        }
    }
}
