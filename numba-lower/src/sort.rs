//! The sort helpers generated code calls for `a.sort()`, `np.sort` and `argsort`: one run of
//! `n` elements at a byte stride, ordered as NumPy orders them (NaN last). Rust's own sorts
//! do the work: pattern-defeating quicksort for values, a stable merge sort for indices (a
//! stable order is a valid `quicksort` result and is exactly `mergesort`'s).

use std::cmp::Ordering;

/// Element kinds, as the lowering passes them (`dtype_code`).
#[derive(Clone, Copy)]
#[repr(i32)]
pub enum SortKind {
    Bool = 0,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

impl SortKind {
    fn from_code(code: i32) -> Option<SortKind> {
        use SortKind::*;
        [Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64]
            .get(usize::try_from(code).ok()?)
            .copied()
    }
}

/// Total order with NaN after every number, as NumPy sorts floats.
trait Key: Copy {
    fn order(a: &Self, b: &Self) -> Ordering;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn order(a: &Self, b: &Self) -> Ordering {
                a.cmp(b)
            }
        }
    )*};
}
int_key!(u8, i8, i16, i32, i64, u16, u32, u64);

macro_rules! float_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn order(a: &Self, b: &Self) -> Ordering {
                match (a.is_nan(), b.is_nan()) {
                    (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
                    (x, y) => x.cmp(&y),
                }
            }
        }
    )*};
}
float_key!(f32, f64);

/// # Safety
/// `data + i * stride` for `i < n` must be valid, aligned `T`s.
unsafe fn gather<T: Key>(data: *const u8, n: usize, stride: isize) -> Vec<T> {
    (0..n)
        // SAFETY: guaranteed by the caller.
        .map(|i| unsafe { data.offset(i as isize * stride).cast::<T>().read() })
        .collect()
}

/// # Safety
/// As for [`gather`], and the elements must be writable.
unsafe fn sort_run<T: Key>(data: *mut u8, n: usize, stride: isize) {
    if stride == std::mem::size_of::<T>() as isize {
        // SAFETY: a contiguous run of n valid Ts.
        let run = unsafe { std::slice::from_raw_parts_mut(data.cast::<T>(), n) };
        run.sort_unstable_by(T::order);
        return;
    }
    // SAFETY: guaranteed by the caller.
    let mut v = unsafe { gather::<T>(data, n, stride) };
    v.sort_unstable_by(T::order);
    for (i, x) in v.into_iter().enumerate() {
        // SAFETY: guaranteed by the caller.
        unsafe { data.offset(i as isize * stride).cast::<T>().write(x) };
    }
}

/// # Safety
/// As for [`gather`]; `out` holds `n` writable `i64`s.
unsafe fn argsort_run<T: Key>(data: *const u8, n: usize, stride: isize, out: *mut i64) {
    // SAFETY: guaranteed by the caller.
    let v = unsafe { gather::<T>(data, n, stride) };
    let mut idx: Vec<i64> = (0..n as i64).collect();
    idx.sort_by(|&a, &b| T::order(&v[a as usize], &v[b as usize]));
    // SAFETY: out holds n i64s.
    unsafe { std::ptr::copy_nonoverlapping(idx.as_ptr(), out, n) };
}

macro_rules! dispatch {
    ($code:expr, $f:ident, $($arg:expr),*) => {
        match SortKind::from_code($code) {
            Some(SortKind::Bool | SortKind::U8) => $f::<u8>($($arg),*),
            Some(SortKind::I8) => $f::<i8>($($arg),*),
            Some(SortKind::I16) => $f::<i16>($($arg),*),
            Some(SortKind::I32) => $f::<i32>($($arg),*),
            Some(SortKind::I64) => $f::<i64>($($arg),*),
            Some(SortKind::U16) => $f::<u16>($($arg),*),
            Some(SortKind::U32) => $f::<u32>($($arg),*),
            Some(SortKind::U64) => $f::<u64>($($arg),*),
            Some(SortKind::F32) => $f::<f32>($($arg),*),
            Some(SortKind::F64) => $f::<f64>($($arg),*),
            // The lowering only passes the codes above.
            None => {}
        }
    };
}

/// Sort `n` elements of kind `code` at `data`, `stride` bytes apart, in place.
///
/// # Safety
/// `data + i * stride` for `i < n` must be valid, aligned, writable elements of that kind.
pub unsafe extern "C" fn numba_rs_sort(data: *mut u8, n: i64, stride: i64, code: i32) {
    let n = usize::try_from(n).unwrap_or(0);
    // SAFETY: guaranteed by the caller.
    unsafe { dispatch!(code, sort_run, data, n, stride as isize) }
}

/// Write into `out` the indices that would sort the run (stable).
///
/// # Safety
/// As for [`numba_rs_sort`] (read only); `out` holds `n` writable `i64`s.
pub unsafe extern "C" fn numba_rs_argsort(
    data: *const u8,
    n: i64,
    stride: i64,
    code: i32,
    out: *mut i64,
) {
    let n = usize::try_from(n).unwrap_or(0);
    // SAFETY: guaranteed by the caller.
    unsafe { dispatch!(code, argsort_run, data, n, stride as isize, out) }
}

/// The helpers by symbol name, with their addresses.
/// The median of `n` float64 values in a scratch buffer (reordered in place): the middle
/// value, or the mean of the two middle ones; NaN when `n` is 0 or any value is NaN, as
/// NumPy's `median`. `nan_seen` is nonzero when the caller saw a NaN while filling the
/// buffer (the copy loop tests each value, saving a pass here).
///
/// # Safety
/// `buf` must hold `n` writable f64 values.
#[no_mangle]
pub unsafe extern "C" fn numba_rs_median(buf: *mut f64, n: i64, nan_seen: i32) -> f64 {
    let Ok(n) = usize::try_from(n) else {
        return f64::NAN;
    };
    if n == 0 || nan_seen != 0 {
        return f64::NAN;
    }
    // SAFETY: guaranteed by the caller.
    let v = unsafe { std::slice::from_raw_parts_mut(buf, n) };
    let mid = n / 2;
    select(v, mid);
    let hi = v[mid];
    if n % 2 == 1 {
        return hi;
    }
    // The largest of the lower half is the other middle value.
    let lo = v[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    lo + (hi - lo) / 2.0
}

/// Put the `k`-th smallest of `v` (no NaN) at `v[k]`, smaller ones before it and larger
/// ones after: quickselect with a median-of-three pivot and Hoare's partition, as Numba's
/// `median` selects (one pass per halving on sorted or reversed data, where Rust's
/// `select_nth_unstable` does much more work), falling back to the standard library's
/// introselect when the pivots keep failing.
fn select(v: &mut [f64], k: usize) {
    let (mut lo, mut hi) = (0usize, v.len() - 1);
    let mut budget = 2 * (usize::BITS - v.len().leading_zeros()) + 16;
    while lo < hi {
        if budget == 0 {
            v[lo..=hi].select_nth_unstable_by(k - lo, f64::total_cmp);
            return;
        }
        budget -= 1;
        let mid = lo + (hi - lo) / 2;
        if v[mid] < v[lo] {
            v.swap(mid, lo);
        }
        if v[hi] < v[lo] {
            v.swap(hi, lo);
        }
        if v[hi] < v[mid] {
            v.swap(hi, mid);
        }
        let pivot = v[mid];
        // Hoare: afterwards v[lo..=j] <= pivot <= v[j+1..=hi], lo <= j < hi.
        let (mut i, mut j) = (lo, hi);
        let p = v.as_mut_ptr();
        loop {
            // SAFETY: both scans stay in [lo, hi]: the first stops at an item >= pivot,
            // and one exists at or before j (the pivot itself in the first round, the
            // item just swapped there later); the second likewise stops at an item
            // <= pivot at or after i. The bounds-checked form was twice as slow.
            unsafe {
                while *p.add(i) < pivot {
                    i += 1;
                }
                while pivot < *p.add(j) {
                    j -= 1;
                }
            }
            if i >= j {
                break;
            }
            v.swap(i, j);
            i += 1;
            j -= 1;
        }
        if i == j {
            // Both scans stopped on one item, so it equals the pivot with nothing larger
            // before it and nothing smaller after it: it is in its final place (on sorted
            // data, the first pass already finds the median, as Numba's Lomuto does).
            if k == j {
                return;
            }
            if k < j {
                hi = j - 1;
            } else {
                lo = j + 1;
            }
        } else if k <= j {
            hi = j;
        } else {
            lo = j + 1;
        }
    }
}

pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("numba_rs_median", numba_rs_median as *const () as usize),
        ("numba_rs_sort", numba_rs_sort as *const () as usize),
        ("numba_rs_argsort", numba_rs_argsort as *const () as usize),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_sort_with_nan_last_at_any_stride() {
        // Every other element of 6: [3, nan, -1, 2] (hand-checked order: -1, 2, 3, nan).
        let mut buf = [3.0f64, 9.0, f64::NAN, 9.0, -1.0, 9.0, 2.0, 9.0];
        // SAFETY: 4 elements 16 bytes apart inside buf.
        unsafe { numba_rs_sort(buf.as_mut_ptr().cast(), 4, 16, SortKind::F64 as i32) };
        assert_eq!([buf[0], buf[2], buf[4]], [-1.0, 2.0, 3.0]);
        assert!(buf[6].is_nan());
        assert!(buf.iter().skip(1).step_by(2).all(|&x| x == 9.0));
    }

    #[test]
    fn select_puts_the_kth_in_place() {
        // Sorted, reversed, constant, sawtooth and pseudo-random data against a full sort.
        let mut x = 12345u64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f64
        };
        for n in [1usize, 2, 3, 4, 5, 10, 101, 1000] {
            let inputs: Vec<Vec<f64>> = vec![
                (0..n).map(|i| i as f64).collect(),
                (0..n).rev().map(|i| i as f64).collect(),
                vec![7.0; n],
                (0..n).map(|i| (i % 7) as f64).collect(),
                (0..n).map(|_| rand()).collect(),
            ];
            for input in inputs {
                let mut sorted = input.clone();
                sorted.sort_by(f64::total_cmp);
                for k in [0, n / 2, n - 1] {
                    let mut v = input.clone();
                    super::select(&mut v, k);
                    assert_eq!(v[k], sorted[k], "n={n} k={k} {input:?}");
                    assert!(v[..k].iter().all(|&a| a <= v[k]));
                    assert!(v[k + 1..].iter().all(|&a| a >= v[k]));
                }
            }
        }
    }

    #[test]
    fn median_of_odd_even_and_nan() {
        let mut odd = [5.0, 1.0, 3.0];
        let mut even = [4.0, 1.0, 3.0, 2.0];
        let mut nan = [1.0, f64::NAN];
        // SAFETY: each buffer holds the count passed.
        unsafe {
            assert_eq!(numba_rs_median(odd.as_mut_ptr(), 3, 0), 3.0);
            assert_eq!(numba_rs_median(even.as_mut_ptr(), 4, 0), 2.5);
            assert!(numba_rs_median(nan.as_mut_ptr(), 2, 1).is_nan());
            assert!(numba_rs_median(nan.as_mut_ptr(), 0, 0).is_nan());
        }
    }

    #[test]
    fn argsort_is_stable() {
        let keys = [2i32, 1, 2, 0, 1];
        let mut out = [0i64; 5];
        // SAFETY: 5 contiguous i32s; out holds 5 i64s.
        unsafe {
            numba_rs_argsort(
                keys.as_ptr().cast(),
                5,
                4,
                SortKind::I32 as i32,
                out.as_mut_ptr(),
            )
        };
        assert_eq!(out, [3, 1, 4, 0, 2]);
    }
}
