//! Run-time helpers for lists (`model::list`): the payload an NRT MemInfo owns, its growth,
//! its destructor, and the item operations that need no knowledge of the item type beyond
//! where its references are.
//!
//! Items are stored in their boundary slot form (`callconv::Shape`, 8 bytes a slot): the
//! generated code reads and writes them with the data model's slot codec, and the
//! boundary boxes and unboxes them with the same code as arguments and results. What the
//! runtime must know of an item, which of its slots hold MemInfo references, is a
//! [`RefMap`] the lowering emits as a constant of the module (and numba-py derives from
//! the same shape), so the destructor releases a list of arrays or of strings.

use std::sync::Mutex;

use numba_nrt::MemInfo;

use crate::callconv::Shape;

/// A list's payload, the data of its MemInfo, as the generated code reads it.
#[repr(C)]
pub struct ListPayload {
    /// Items in the list.
    pub size: i64,
    /// Items the data has room for.
    pub allocated: i64,
    /// Bytes per item (its slots × 8).
    pub item_bytes: i64,
    /// The items, `allocated × item_bytes` bytes (an NRT allocation), or null.
    pub data: *mut u8,
    /// Set when jitted code changed a reflected list: its Python list is rewritten.
    pub dirty: i64,
    /// Where the items' references are (see [`RefMap`]); null when they hold none.
    pub refs: *const i32,
    /// Set by a typed list's `_make_immutable()`: mutations raise `ValueError`.
    pub immutable: i64,
}

impl ListPayload {
    /// A payload of `size` items over `data` (room for `allocated`); an empty map
    /// (`[0]`) is kept as null.
    ///
    /// # Safety
    /// `refs` is null or a valid [`RefMap`].
    unsafe fn fresh(
        size: i64,
        allocated: i64,
        item_bytes: i64,
        data: *mut u8,
        refs: *const i32,
    ) -> ListPayload {
        // SAFETY: the caller's contract.
        let none = refs.is_null() || unsafe { *refs } == 0;
        ListPayload {
            size,
            allocated,
            item_bytes,
            data,
            dirty: 0,
            refs: if none { std::ptr::null() } else { refs },
            immutable: 0,
        }
    }
}

/// Byte offsets of [`ListPayload`]'s fields, for the lowering.
pub mod offset {
    pub const SIZE: u64 = 0;
    pub const ALLOCATED: u64 = 8;
    pub const DATA: u64 = 24;
    pub const DIRTY: u64 = 32;
    pub const IMMUTABLE: u64 = 48;
}

/// Which slots of an item hold MemInfo references: `[count, (slot, flag)...]`, where
/// `flag` is the slot of an optional's presence flag guarding the reference, or -1.
pub type RefMap = Vec<i32>;

/// The [`RefMap`] of items of this shape (`[0]` when they hold no references).
pub fn ref_map(shape: &Shape) -> RefMap {
    fn walk(s: &Shape, at: &mut i32, flag: i32, out: &mut Vec<i32>) {
        match s {
            Shape::Array(_)
            | Shape::List { .. }
            | Shape::Set { .. }
            | Shape::Dict { .. }
            | Shape::Instance(_) => out.extend([*at, flag]),
            Shape::Unicode | Shape::Bytes => {
                out.extend([*at + crate::model::unicode::field::MEMINFO as i32, flag])
            }
            Shape::Tuple(items) | Shape::Named { items, .. } => {
                for i in items {
                    walk(i, at, flag, out);
                }
                return;
            }
            Shape::Optional(inner) => {
                let f = *at;
                *at += 1;
                walk(inner, at, f, out);
                return;
            }
            _ => {}
        }
        *at += s.slots() as i32;
    }
    let mut pairs = Vec::new();
    walk(shape, &mut 0, -1, &mut pairs);
    let mut out = vec![(pairs.len() / 2) as i32];
    out.extend(pairs);
    out
}

/// A process-lifetime copy of a ref map (for lists numba-py makes from Python lists).
pub fn interned_ref_map(map: RefMap) -> *const i32 {
    static MAPS: Mutex<Vec<&'static [i32]>> = Mutex::new(Vec::new());
    let mut maps = MAPS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = maps.iter().find(|m| m[..] == map[..]) {
        return m.as_ptr();
    }
    let leaked: &'static [i32] = Box::leak(map.into_boxed_slice());
    maps.push(leaked);
    leaked.as_ptr()
}

/// Apply `f` to every MemInfo reference item `i`'s slots hold.
///
/// # Safety
/// `p` is a live payload with more than `i` items; `refs` is null or a valid map.
unsafe fn for_each_ref(p: &ListPayload, i: i64, f: unsafe extern "C" fn(*mut MemInfo)) {
    // SAFETY: the caller's contract: the map and the item are valid.
    unsafe {
        item_refs(
            p.refs,
            p.data.add((i * p.item_bytes) as usize) as *const u64,
            f,
        )
    }
}

/// Apply `f` to every MemInfo reference the item at `item` holds, as `refs` (a
/// [`RefMap`], or null for none) places them: what lists and sets (and the boundary,
/// which takes a reference per item it boxes) do to their items.
///
/// # Safety
/// `refs` is null or a valid map of the item at `item`.
pub unsafe fn item_refs(refs: *const i32, item: *const u64, f: unsafe extern "C" fn(*mut MemInfo)) {
    if refs.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe {
        for k in 0..*refs as usize {
            let slot = *refs.add(1 + 2 * k);
            let flag = *refs.add(2 + 2 * k);
            if flag >= 0 && *item.add(flag as usize) & 1 == 0 {
                continue;
            }
            f(*item.add(slot as usize) as *mut MemInfo);
        }
    }
}

/// A one-item payload whose item (every slot zeroed) lives in the same block as the
/// payload and its MemInfo: a jitclass instance's record (`impls::jitclass`). One
/// allocation per instance, and the MemInfo's count sits next to the fields it guards.
/// Null when out of memory.
///
/// # Safety
/// `refs` is null or a valid [`RefMap`] living as long as the record.
pub unsafe extern "C" fn numba_rs_record_new(item_bytes: i64, refs: *const i32) -> *mut MemInfo {
    let item = item_bytes.max(0) as usize;
    let mi = numba_nrt::NRT_MemInfo_alloc_aligned(size_of::<ListPayload>() + item, 8);
    if mi.is_null() {
        return mi;
    }
    // SAFETY: the fresh block holds the payload then `item` bytes.
    unsafe {
        let payload = numba_nrt::NRT_MemInfo_data(mi) as *mut ListPayload;
        let data = (payload as *mut u8).add(size_of::<ListPayload>());
        std::ptr::write_bytes(data, 0, item);
        payload.write(ListPayload::fresh(1, 1, item_bytes, data, refs));
        (*mi).dtor = Some(record_dtor);
    }
    mi
}

/// A record's destructor: its item's references (the block goes with the MemInfo).
unsafe extern "C" fn record_dtor(data: *mut u8, _size: usize, _info: *mut std::ffi::c_void) {
    // SAFETY: the MemInfo's data is the payload `numba_rs_record_new` made.
    unsafe { for_each_ref(&*(data as *const ListPayload), 0, numba_nrt::NRT_decref) }
}

unsafe extern "C" fn list_dtor(data: *mut u8, _size: usize, _info: *mut std::ffi::c_void) {
    // SAFETY: the MemInfo's data is the payload this module made.
    unsafe {
        let p = &mut *(data as *mut ListPayload);
        for i in 0..p.size {
            for_each_ref(p, i, numba_nrt::NRT_decref);
        }
        numba_nrt::NRT_Free(p.data);
        numba_nrt::NRT_Free(data);
    }
}

/// A new empty list with room for `capacity` items of `item_bytes` bytes; `refs` says
/// where their references are (null: none). Null when out of memory.
///
/// # Safety
/// `refs` is null or a valid [`RefMap`] living as long as the list.
pub unsafe extern "C" fn numba_rs_list_new(
    item_bytes: i64,
    capacity: i64,
    refs: *const i32,
) -> *mut MemInfo {
    let payload = numba_nrt::NRT_Allocate(size_of::<ListPayload>()) as *mut ListPayload;
    if payload.is_null() {
        return std::ptr::null_mut();
    }
    let capacity = capacity.max(0);
    let data = if capacity > 0 {
        let d = numba_nrt::NRT_Allocate((capacity * item_bytes) as usize);
        if d.is_null() {
            // SAFETY: allocated above.
            unsafe { numba_nrt::NRT_Free(payload as *mut u8) };
            return std::ptr::null_mut();
        }
        d
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: `payload` is a fresh allocation of the right size.
    unsafe {
        payload.write(ListPayload::fresh(0, capacity, item_bytes, data, refs));
        let refs_none = std::ptr::null_mut();
        let mi = numba_nrt::NRT_MemInfo_new(
            payload as *mut u8,
            size_of::<ListPayload>(),
            Some(list_dtor),
            refs_none,
        );
        if mi.is_null() {
            numba_nrt::NRT_Free(data);
            numba_nrt::NRT_Free(payload as *mut u8);
        }
        mi
    }
}

/// Make room for at least `n` items, growing as CPython's `list_resize` does:
/// 0, or -1 when out of memory (the list is unchanged).
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_list_reserve(p: *mut ListPayload, n: i64) -> i32 {
    // SAFETY: the caller's contract.
    let p = unsafe { &mut *p };
    if n <= p.allocated {
        return 0;
    }
    // CPython 3.11's `list_resize`: about 1/8 more, rounded to a multiple of 4.
    let mut want = (n + (n >> 3) + 6) & !3;
    if n - p.size > want - n {
        want = (n + 3) & !3;
    }
    let Some(bytes) = want.checked_mul(p.item_bytes) else {
        return -1;
    };
    // SAFETY: `data` is null or the payload's NRT block; realloc keeps the items.
    let d = unsafe { numba_nrt::NRT_Reallocate(p.data, bytes as usize) };
    if d.is_null() {
        return -1;
    }
    p.data = d;
    p.allocated = want;
    0
}

/// Take a reference to every MemInfo items `start..stop` hold (after copying them).
///
/// # Safety
/// `p` is a live payload holding those items.
pub unsafe extern "C" fn numba_rs_list_acquire(p: *const ListPayload, start: i64, stop: i64) {
    // SAFETY: the caller's contract.
    unsafe {
        for i in start..stop {
            for_each_ref(&*p, i, numba_nrt::NRT_incref);
        }
    }
}

/// Drop the references items `start..stop` hold (before overwriting or removing them).
///
/// # Safety
/// `p` is a live payload holding those items.
pub unsafe extern "C" fn numba_rs_list_release(p: *const ListPayload, start: i64, stop: i64) {
    // SAFETY: the caller's contract.
    unsafe {
        for i in start..stop {
            for_each_ref(&*p, i, numba_nrt::NRT_decref);
        }
    }
}

/// Item `i`'s address.
///
/// # Safety
/// `p` is a live payload with room for item `i`.
unsafe fn item(p: &ListPayload, i: i64) -> *mut u8 {
    // SAFETY: the caller's contract.
    unsafe { p.data.add((i * p.item_bytes) as usize) }
}

/// A new list of the `len` items `start, start + step, ...` of `src`, each a new
/// reference; null when out of memory.
///
/// # Safety
/// `src` is a live payload holding those items.
pub unsafe extern "C" fn numba_rs_list_copy_range(
    src: *const ListPayload,
    start: i64,
    len: i64,
    step: i64,
) -> *mut MemInfo {
    // SAFETY: the caller's contract; the new list has room for `len` items.
    unsafe {
        let s = &*src;
        let mi = numba_rs_list_new(s.item_bytes, len, s.refs);
        if mi.is_null() {
            return mi;
        }
        let d = &mut *(numba_nrt::NRT_MemInfo_data(mi) as *mut ListPayload);
        for k in 0..len.max(0) {
            std::ptr::copy_nonoverlapping(
                item(s, start + k * step),
                item(d, k),
                s.item_bytes as usize,
            );
        }
        d.size = len.max(0);
        numba_rs_list_acquire(d, 0, d.size);
        mi
    }
}

/// Append every item of `src` (which may be `dst`) to `dst`, each a new reference:
/// 0, or -1 when out of memory.
///
/// # Safety
/// Both are live payloads of the same item type.
pub unsafe extern "C" fn numba_rs_list_extend_list(
    dst: *mut ListPayload,
    src: *const ListPayload,
) -> i32 {
    // SAFETY: the caller's contract; `reserve` makes room first (and may move `src`'s
    // data when it is `dst`, so its address is read after).
    unsafe {
        let n = (*src).size;
        let old = (*dst).size;
        if numba_rs_list_reserve(dst, old + n) != 0 {
            return -1;
        }
        let d = &mut *dst;
        std::ptr::copy(item(&*src, 0), item(d, old), (n * d.item_bytes) as usize);
        d.size = old + n;
        numba_rs_list_acquire(d, old, old + n);
        d.dirty = 1;
    }
    0
}

/// Write `n` copies of the `bytes` bytes at `src` to `dst`, doubling the copied prefix
/// (a few large copies rather than `n` small ones).
///
/// # Safety
/// `dst` has room for `n * bytes` bytes; `src` holds `bytes` bytes outside that range.
unsafe fn fill_repeated(dst: *mut u8, src: *const u8, bytes: usize, n: usize) {
    if n == 0 || bytes == 0 {
        return;
    }
    // SAFETY: the caller's contract; every copy stays inside the first `n * bytes`.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, bytes);
        let total = n * bytes;
        let mut done = bytes;
        while done < total {
            let chunk = done.min(total - done);
            std::ptr::copy_nonoverlapping(dst, dst.add(done), chunk);
            done += chunk;
        }
    }
}

/// `l * n` as a new list (empty for `n <= 0`); null when out of memory.
///
/// # Safety
/// `src` is a live payload.
pub unsafe extern "C" fn numba_rs_list_repeat(src: *const ListPayload, n: i64) -> *mut MemInfo {
    // SAFETY: the caller's contract.
    unsafe {
        let s = &*src;
        let n = n.max(0);
        let Some(total) = s.size.checked_mul(n) else {
            return std::ptr::null_mut();
        };
        let mi = numba_rs_list_new(s.item_bytes, total, s.refs);
        if mi.is_null() {
            return mi;
        }
        let d = &mut *(numba_nrt::NRT_MemInfo_data(mi) as *mut ListPayload);
        fill_repeated(d.data, s.data, (s.size * s.item_bytes) as usize, n as usize);
        d.size = total;
        numba_rs_list_acquire(d, 0, total);
        mi
    }
}

/// `l *= n`: the items repeated in place (cleared for `n <= 0`): 0, or -1 when out of
/// memory.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_list_imul(p: *mut ListPayload, n: i64) -> i32 {
    // SAFETY: the caller's contract.
    unsafe {
        if n <= 0 {
            numba_rs_list_clear(p);
            return 0;
        }
        let size = (*p).size;
        let Some(total) = size.checked_mul(n) else {
            return -1;
        };
        if numba_rs_list_reserve(p, total) != 0 {
            return -1;
        }
        let d = &mut *p;
        let bytes = (size * d.item_bytes) as usize;
        let first = std::slice::from_raw_parts(d.data, bytes).to_vec();
        fill_repeated(d.data, first.as_ptr(), bytes, n as usize);
        d.size = total;
        numba_rs_list_acquire(d, size, total);
        d.dirty = 1;
    }
    0
}

/// Open a gap at `i` (0 ≤ i ≤ size): the items from `i` on move one place right and
/// the size grows by one; the caller writes the new item. 0, or -1 when out of memory.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_list_open_gap(p: *mut ListPayload, i: i64) -> i32 {
    // SAFETY: the caller's contract; `reserve` makes room for one more item.
    unsafe {
        let size = (*p).size;
        if numba_rs_list_reserve(p, size + 1) != 0 {
            return -1;
        }
        let d = &mut *p;
        std::ptr::copy(
            item(d, i),
            item(d, i + 1),
            ((size - i) * d.item_bytes) as usize,
        );
        d.size = size + 1;
        d.dirty = 1;
    }
    0
}

/// Remove item `i` without releasing it (its reference goes to the caller, as `pop`
/// hands it over, or was released already): the items after it move left.
///
/// # Safety
/// `p` is a live payload holding item `i`.
pub unsafe extern "C" fn numba_rs_list_close_gap(p: *mut ListPayload, i: i64) {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        std::ptr::copy(
            item(d, i + 1),
            item(d, i),
            ((d.size - i - 1) * d.item_bytes) as usize,
        );
        d.size -= 1;
        d.dirty = 1;
    }
}

/// `del l[start:...:step]` of `len` items (`step` may be negative): released, the
/// rest kept in order.
///
/// # Safety
/// `p` is a live payload holding those items.
pub unsafe extern "C" fn numba_rs_list_del_slice(
    p: *mut ListPayload,
    start: i64,
    len: i64,
    step: i64,
) {
    if len <= 0 {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        let (lo, step) = if step < 0 {
            (start + (len - 1) * step, -step)
        } else {
            (start, step)
        };
        let doomed = |i: i64| i >= lo && (i - lo) % step == 0 && (i - lo) / step < len;
        let mut w = lo;
        for r in lo..d.size {
            if doomed(r) {
                numba_rs_list_release(d, r, r + 1);
            } else {
                if w != r {
                    std::ptr::copy_nonoverlapping(item(d, r), item(d, w), d.item_bytes as usize);
                }
                w += 1;
            }
        }
        d.size = w;
        d.dirty = 1;
    }
}

/// `l[start:...:step] = src` for a selection of `len` items: with step 1 any number of
/// items replaces them; an extended slice needs as many as it selects. 0, -1 when out
/// of memory, 1 when the sizes differ (CPython's ValueError).
///
/// # Safety
/// Both are live payloads of the same item type (they may be the same list).
pub unsafe extern "C" fn numba_rs_list_assign_slice(
    dst: *mut ListPayload,
    start: i64,
    len: i64,
    step: i64,
    src: *const ListPayload,
) -> i32 {
    // SAFETY: the caller's contract. The source is copied first, so `l[a:b] = l` works.
    unsafe {
        let copy = numba_rs_list_copy_range(src, 0, (*src).size, 1);
        if copy.is_null() {
            return -1;
        }
        let c = &*(numba_nrt::NRT_MemInfo_data(copy) as *const ListPayload);
        let n = c.size;
        let status = if step == 1 {
            numba_rs_list_del_slice(dst, start, len, 1);
            let mut status = 0;
            for k in 0..n {
                if numba_rs_list_open_gap(dst, start + k) != 0 {
                    status = -1;
                    break;
                }
                let d = &*dst;
                std::ptr::copy_nonoverlapping(
                    item(c, k),
                    item(d, start + k),
                    d.item_bytes as usize,
                );
                numba_rs_list_acquire(d, start + k, start + k + 1);
            }
            status
        } else if n != len {
            1
        } else {
            let d = &mut *dst;
            for k in 0..n {
                let at = start + k * step;
                numba_rs_list_release(d, at, at + 1);
                std::ptr::copy_nonoverlapping(item(c, k), item(d, at), d.item_bytes as usize);
                numba_rs_list_acquire(d, at, at + 1);
            }
            d.dirty = 1;
            0
        };
        numba_nrt::NRT_decref(copy);
        status
    }
}

/// `l.clear()`: every item released.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_list_clear(p: *mut ListPayload) {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        numba_rs_list_release(d, 0, d.size);
        d.size = 0;
        d.dirty = 1;
    }
}

/// `l.reverse()`.
///
/// # Safety
/// `p` is a live payload.
pub unsafe extern "C" fn numba_rs_list_reverse(p: *mut ListPayload) {
    // SAFETY: the caller's contract.
    unsafe {
        let d = &mut *p;
        let b = d.item_bytes as usize;
        let (mut i, mut j) = (0, d.size - 1);
        while i < j {
            std::ptr::swap_nonoverlapping(item(d, i), item(d, j), b);
            i += 1;
            j -= 1;
        }
        d.dirty = 1;
    }
}

/// Sort the items of a list of numbers in place, stably, as `list.sort` orders them:
/// `kind` 0 for signed integers and booleans, 1 for unsigned integers, 2 for floats
/// (their slots hold float64 bits); descending when `reverse` (equal items keep their
/// order, as Python's `reverse=True` does).
///
/// # Safety
/// `p` is a live payload of one-slot number items.
pub unsafe extern "C" fn numba_rs_list_sort_numbers(p: *mut ListPayload, kind: i32, reverse: i32) {
    // SAFETY: the caller's contract.
    let items = unsafe {
        let p = &mut *p;
        if p.size < 2 {
            return;
        }
        std::slice::from_raw_parts_mut(p.data as *mut u64, p.size as usize)
    };
    use std::cmp::Ordering;
    // One monomorphic sort per kind and direction (the comparisons inline). Python
    // compares floats with `<` only: NaN is neither less nor greater, so ordering it as
    // equal to everything matches where Python's merges leave it closely.
    let float = |a: &u64, b: &u64| {
        f64::from_bits(*a)
            .partial_cmp(&f64::from_bits(*b))
            .unwrap_or(Ordering::Equal)
    };
    match (kind, reverse != 0) {
        (0, false) => items.sort_by_key(|a| *a as i64),
        (0, true) => items.sort_by_key(|b| std::cmp::Reverse(*b as i64)),
        (1, false) => items.sort(),
        (1, true) => items.sort_by(|a, b| b.cmp(a)),
        (_, false) => items.sort_by(float),
        (_, true) => items.sort_by(|a, b| float(b, a)),
    }
    // SAFETY: the caller's contract.
    unsafe { (*p).dirty = 1 };
}

/// A generated item comparison: nonzero when the item at `a` orders before the item at
/// `b` (Python's `<`). The first two parameters are the native calling convention's
/// return and exception slots, unused by comparisons that cannot raise.
pub type ItemLt = unsafe extern "C" fn(*mut u8, *mut *mut u8, *const u8, *const u8) -> i32;

/// Sort the items of any list in place with a generated `<`, stably (equal items keep
/// their order, in either direction, as Timsort leaves them); descending when `reverse`.
/// Only `<` is asked, as Python's sort asks, so an inconsistent order (NaN inside tuples)
/// cannot make it fail. Items move as whole slots: no reference changes.
///
/// # Safety
/// `p` is a live payload whose items `lt` reads.
pub unsafe extern "C" fn numba_rs_list_sort_by(p: *mut ListPayload, lt: ItemLt, reverse: i32) {
    // SAFETY: the caller's contract.
    let p = unsafe { &mut *p };
    let Ok(n) = usize::try_from(p.size) else {
        return;
    };
    if n < 2 {
        return;
    }
    let width = p.item_bytes as usize;
    let data = p.data;
    let mut ret = [0u64; 8];
    let mut exc: *mut u8 = std::ptr::null_mut();
    // Whether item `x` must come strictly before item `y`.
    let mut before = |x: usize, y: usize| -> bool {
        let (x, y) = if reverse != 0 { (y, x) } else { (x, y) };
        // SAFETY: both indices are below the size; `lt` reads one item at each.
        unsafe {
            lt(
                ret.as_mut_ptr().cast(),
                &mut exc,
                data.add(x * width),
                data.add(y * width),
            ) != 0
        }
    };
    let mut order: Vec<usize> = (0..n).collect();
    stable_sort(&mut order, &mut before);
    // SAFETY: `order` is a permutation of the payload's items.
    unsafe { permute(p, &order) };
}

/// Put the items of `p` in `order` (a permutation of its indices), moving whole slots.
///
/// # Safety
/// `p` is a live payload with `order.len()` items.
unsafe fn permute(p: &mut ListPayload, order: &[usize]) {
    let n = order.len();
    let width = p.item_bytes as usize;
    let data = p.data;
    let mut sorted = vec![0u8; n * width];
    for (k, &i) in order.iter().enumerate() {
        // SAFETY: item `i` is inside the data; row `k` inside `sorted`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.add(i * width),
                sorted.as_mut_ptr().add(k * width),
                width,
            )
        };
    }
    // SAFETY: `sorted` holds exactly the list's `n` items.
    unsafe { std::ptr::copy_nonoverlapping(sorted.as_ptr(), data, n * width) };
    p.dirty = 1;
}

/// Sort a list of strings in place, stably, by code points (descending when
/// `reverse`): the comparisons read the strings where they are, with no generated code.
///
/// # Safety
/// `p` is a live payload of string items (seven slots each).
pub unsafe extern "C" fn numba_rs_list_sort_strings(p: *mut ListPayload, reverse: i32) {
    use crate::strings::Str;
    // SAFETY: the caller's contract.
    let p = unsafe { &mut *p };
    let n = p.size.max(0) as usize;
    if n < 2 {
        return;
    }
    let strs: Vec<Str> = (0..n)
        .map(|i| {
            // SAFETY: item `i` is a string's seven slots.
            unsafe { Str::from_slots((p.data as *const u64).add(i * 7)) }
        })
        .collect();
    // A prefix of each string orders most pairs without reading the strings: unequal
    // prefixes order as the strings do, and equal ones (a NUL and a missing character
    // look alike) compare the strings whole. When every string has one byte per
    // character the prefix is its first eight bytes, else its first three code points
    // (21 bits each).
    let bytes = strs.iter().all(|s| s.kind == 1);
    let prefix = |s: &Str| -> u64 {
        if bytes {
            let n = (s.length.max(0) as usize).min(8);
            let mut b = [0u8; 8];
            // SAFETY: a kind-1 string's first `n <= length` bytes.
            b[..n].copy_from_slice(unsafe { std::slice::from_raw_parts(s.data, n) });
            return u64::from_be_bytes(b);
        }
        // SAFETY: a valid string's first `length` characters.
        let mut cs = unsafe { crate::strings::chars(s) };
        (0..3).fold(0u64, |acc, _| {
            (acc << 21) | u64::from(cs.next().unwrap_or(0))
        })
    };
    let mut keyed: Vec<(u64, usize)> = strs.iter().map(prefix).zip(0..n).collect();
    let order_of = |a: &(u64, usize), b: &(u64, usize)| {
        a.0.cmp(&b.0).then_with(|| {
            // SAFETY: both are valid strings.
            unsafe { crate::strings::numba_rs_str_cmp(&strs[a.1], &strs[b.1]) }.cmp(&0)
        })
    };
    // The standard library's stable sort; reversed comparisons keep equal items in
    // their order, as Python's `reverse=True` does.
    if reverse != 0 {
        keyed.sort_by(|a, b| order_of(b, a));
    } else {
        keyed.sort_by(order_of);
    }
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    // SAFETY: `order` is a permutation of the payload's items.
    unsafe { permute(p, &order) };
}

/// A stable merge sort of `v` by `before` (a strict order): insertion-sorted runs of
/// `RUN`, then bottom-up merges that take from the right run only when its head is
/// strictly before the left one's.
fn stable_sort(v: &mut Vec<usize>, before: &mut impl FnMut(usize, usize) -> bool) {
    const RUN: usize = 16;
    let n = v.len();
    for start in (0..n).step_by(RUN) {
        let end = (start + RUN).min(n);
        for k in start + 1..end {
            let x = v[k];
            let mut j = k;
            while j > start && before(x, v[j - 1]) {
                v[j] = v[j - 1];
                j -= 1;
            }
            v[j] = x;
        }
    }
    let mut src = std::mem::take(v);
    let mut dst = vec![0usize; n];
    let mut width = RUN;
    while width < n {
        for lo in (0..n).step_by(2 * width) {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut a, mut b) = (lo, mid);
            for slot in &mut dst[lo..hi] {
                if b < hi && (a >= mid || before(src[b], src[a])) {
                    *slot = src[b];
                    b += 1;
                } else {
                    *slot = src[a];
                    a += 1;
                }
            }
        }
        std::mem::swap(&mut src, &mut dst);
        width *= 2;
    }
    *v = src;
}

/// Every helper by symbol name, with its address.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("numba_rs_list_new", numba_rs_list_new as *const () as usize),
        (
            "numba_rs_record_new",
            numba_rs_record_new as *const () as usize,
        ),
        (
            "numba_rs_list_reserve",
            numba_rs_list_reserve as *const () as usize,
        ),
        (
            "numba_rs_list_acquire",
            numba_rs_list_acquire as *const () as usize,
        ),
        (
            "numba_rs_list_release",
            numba_rs_list_release as *const () as usize,
        ),
        (
            "numba_rs_list_copy_range",
            numba_rs_list_copy_range as *const () as usize,
        ),
        (
            "numba_rs_list_extend_list",
            numba_rs_list_extend_list as *const () as usize,
        ),
        (
            "numba_rs_list_repeat",
            numba_rs_list_repeat as *const () as usize,
        ),
        (
            "numba_rs_list_imul",
            numba_rs_list_imul as *const () as usize,
        ),
        (
            "numba_rs_list_open_gap",
            numba_rs_list_open_gap as *const () as usize,
        ),
        (
            "numba_rs_list_close_gap",
            numba_rs_list_close_gap as *const () as usize,
        ),
        (
            "numba_rs_list_del_slice",
            numba_rs_list_del_slice as *const () as usize,
        ),
        (
            "numba_rs_list_assign_slice",
            numba_rs_list_assign_slice as *const () as usize,
        ),
        (
            "numba_rs_list_clear",
            numba_rs_list_clear as *const () as usize,
        ),
        (
            "numba_rs_list_reverse",
            numba_rs_list_reverse as *const () as usize,
        ),
        (
            "numba_rs_list_sort_strings",
            numba_rs_list_sort_strings as *const () as usize,
        ),
        (
            "numba_rs_list_sort_by",
            numba_rs_list_sort_by as *const () as usize,
        ),
        (
            "numba_rs_list_sort_numbers",
            numba_rs_list_sort_numbers as *const () as usize,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use numba_typeinfer::types::*;

    #[test]
    fn stable_sort_keeps_equal_keys_in_order_both_ways() {
        // Keys with many duplicates, lengths around the run size, against the standard
        // library's stable sort (the oracle) of the same indices.
        let mut x = 99u64;
        for n in [0usize, 1, 2, 15, 16, 17, 33, 100, 1000] {
            let keys: Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 7
                })
                .collect();
            let mut got: Vec<usize> = (0..n).collect();
            stable_sort(&mut got, &mut |a, b| keys[a] < keys[b]);
            let mut want: Vec<usize> = (0..n).collect();
            want.sort_by_key(|&i| keys[i]);
            assert_eq!(got, want, "ascending, n={n}");
            let mut got: Vec<usize> = (0..n).collect();
            stable_sort(&mut got, &mut |a, b| keys[b] < keys[a]);
            let mut stable_desc: Vec<usize> = (0..n).collect();
            stable_desc.sort_by_key(|&i| std::cmp::Reverse(keys[i]));
            assert_eq!(got, stable_desc, "descending, n={n}");
        }
    }

    #[test]
    fn ref_maps_name_the_reference_slots() {
        assert_eq!(
            ref_map(&Shape::Leaf(crate::callconv::Leaf::Float, FLOAT64)),
            vec![0]
        );
        let arr = intern(Type::Array {
            dtype: FLOAT64,
            ndim: 1,
            layout: Layout::C,
            readonly: false,
        });
        // (int64, optional(array)): the array's MemInfo is slot 2, guarded by slot 1.
        let s = Shape::Tuple(vec![
            Shape::Leaf(
                crate::callconv::Leaf::Int {
                    bits: 64,
                    signed: true,
                },
                INT64,
            ),
            Shape::Optional(Box::new(Shape::Array(arr))),
        ]);
        assert_eq!(ref_map(&s), vec![1, 2, 1]);
        assert_eq!(ref_map(&Shape::Unicode), vec![1, 5, -1]);
    }

    #[test]
    fn lists_grow_like_cpython() {
        // SAFETY: a list of plain 8-byte items.
        unsafe {
            let mi = numba_rs_list_new(8, 0, std::ptr::null());
            let p = numba_nrt::NRT_MemInfo_data(mi) as *mut ListPayload;
            let mut seen = Vec::new();
            for n in 1..=20 {
                assert_eq!(numba_rs_list_reserve(p, n), 0);
                (*p).size = n;
                if seen.last() != Some(&(*p).allocated) {
                    seen.push((*p).allocated);
                }
            }
            // CPython 3.11's growth for appends: 4, 8, 16, 24.
            assert_eq!(seen, vec![4, 8, 16, 24]);
            numba_nrt::NRT_decref(mi);
        }
    }
}
