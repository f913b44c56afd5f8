//! The `random` module's generator for JIT-ed code: a Mersenne Twister per thread,
//! seeded as Numba seeds it (`random.seed(n)` is the reference `init_genrand` of the
//! seed's low 32 bits, like NumPy's legacy seeding, not CPython's `init_by_array`), with
//! Numba's conversions (53-bit doubles, CPython's bit order for `getrandbits` and
//! `randrange`, the polar Box–Muller method with a cached second value for `gauss`).
//! Unseeded, each thread's generator starts from an OS-random seed.

use std::cell::RefCell;

mod numpy;
pub use numpy::{
    numba_rs_np_disc, numba_rs_np_disc_fill, numba_rs_np_dist, numba_rs_np_dist_fill,
    numba_rs_np_vector, FLOAT_KINDS, INT_KINDS, VECTOR_DIRICHLET, VECTOR_MULTINOMIAL,
};

const N: usize = 624;
const M: usize = 397;

/// One Mersenne Twister's state. `repr(C)`: compiled code draws 32-bit words inline
/// (`impls::random`), reading `index` at offset 0 and the words from [`MT_WORDS_OFFSET`],
/// and calls [`numba_rs_rnd_twist`] when the words are used up.
#[repr(C)]
pub struct Mt {
    index: usize,
    mt: [u32; N],
    gauss: Option<f64>,
    /// NumPy's cached binomial set-up (a pure function of its `(n, p)` key).
    binomial: Option<numpy::Binomial>,
}

/// Where a state's words start (after `index`).
pub(crate) const MT_WORDS_OFFSET: u64 = std::mem::offset_of!(Mt, mt) as u64;
/// How many words a state holds.
pub(crate) const MT_WORDS: u64 = N as u64;

impl Mt {
    fn seeded(seed: u32) -> Mt {
        let mut mt = [0u32; N];
        let mut s = seed;
        for (pos, slot) in mt.iter_mut().enumerate() {
            *slot = s;
            s = 1_812_433_253u32
                .wrapping_mul(s ^ (s >> 30))
                .wrapping_add(pos as u32 + 1);
        }
        Mt {
            mt,
            index: N,
            gauss: None,
            binomial: None,
        }
    }

    fn twist(&mut self) {
        let mt = &mut self.mt;
        let step = |cur: u32, next: u32, far: u32| {
            let y = (cur & 0x8000_0000) | (next & 0x7fff_ffff);
            far ^ (y >> 1) ^ (if y & 1 == 1 { 0x9908_b0df } else { 0 })
        };
        // The reference recurrence in three runs, without a modulo per word.
        for k in 0..N - M {
            mt[k] = step(mt[k], mt[k + 1], mt[k + M]);
        }
        for k in N - M..N - 1 {
            mt[k] = step(mt[k], mt[k + 1], mt[k + M - N]);
        }
        mt[N - 1] = step(mt[N - 1], mt[0], mt[M - 1]);
        self.index = 0;
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// A double in [0, 1) with 53 random bits.
    fn next_double(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }

    /// `k` random bits (1 ≤ k ≤ 64), the first word's high bits first, as CPython.
    fn bits(&mut self, k: u32) -> u64 {
        if k <= 32 {
            u64::from(self.next_u32() >> (32 - k))
        } else {
            let low = u64::from(self.next_u32());
            let high = u64::from(self.next_u32() >> (64 - k));
            low | (high << 32)
        }
    }
}

fn os_seed() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    h.finish() as u32
}

thread_local! {
    /// The `random` module's generator.
    static STATE: RefCell<Mt> = RefCell::new(Mt::seeded(os_seed()));
    /// `numpy.random`'s generator: a separate state, as in Numba.
    static NP_STATE: RefCell<Mt> = RefCell::new(Mt::seeded(os_seed()));
}

fn with<T>(f: impl FnOnce(&mut Mt) -> T) -> T {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

fn with_np<T>(f: impl FnOnce(&mut Mt) -> T) -> T {
    NP_STATE.with(|s| f(&mut s.borrow_mut()))
}

impl Mt {
    /// A value in `[0, max]` as NumPy's `random_interval` draws it (its legacy `randint`,
    /// `shuffle` and `choice` too): the low bits of a 32-bit word (or of a 64-bit value,
    /// the high word first, when `max` needs more) under the smallest mask covering `max`,
    /// redrawn until in range. `max == 0` draws nothing.
    fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = u64::MAX >> max.leading_zeros();
        loop {
            let v = if max <= u64::from(u32::MAX) {
                u64::from(self.next_u32()) & mask
            } else {
                let high = u64::from(self.next_u32());
                let low = u64::from(self.next_u32());
                ((high << 32) | low) & mask
            };
            if v <= max {
                return v;
            }
        }
    }

    /// `randint(low, high)`: `None` for an empty range.
    fn randint(&mut self, low: i64, high: i64) -> Option<i64> {
        let n = i128::from(high) - i128::from(low);
        if n <= 0 {
            return None;
        }
        let r = self.interval((n - 1) as u64);
        Some((i128::from(low) + i128::from(r)) as i64)
    }

    /// NumPy's legacy shuffle of `n` items: for `i` from `n - 1` down to 1, `swap(i, j)`
    /// with `j` drawn in `[0, i]`.
    fn shuffle(&mut self, n: i64, mut swap: impl FnMut(usize, usize)) {
        for i in (1..n.max(0) as u64).rev() {
            let j = self.interval(i);
            swap(i as usize, j as usize);
        }
    }

    /// CPython's `shuffle`: for `i` from `n - 1` down to 1, `swap(i, j)` with `j`
    /// drawn as `randbelow(i + 1)` (the bit length of `i + 1` bits, redrawn until below).
    fn shuffle_python(&mut self, n: i64, mut swap: impl FnMut(usize, usize)) {
        for i in (1..n.max(0) as u64).rev() {
            let m = i + 1;
            let k = 64 - m.leading_zeros();
            let j = loop {
                let r = self.bits(k);
                if r < m {
                    break r;
                }
            };
            swap(i as usize, j as usize);
        }
    }

    /// The polar method with a cached second value (NumPy's legacy `gauss` too).
    fn gauss(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        let (x1, x2, r2) = loop {
            let x1 = 2.0 * self.next_double() - 1.0;
            let x2 = 2.0 * self.next_double() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                break (x1, x2, r2);
            }
        };
        let f = (-2.0 * r2.ln() / r2).sqrt();
        self.gauss = Some(f * x1);
        f * x2
    }
}

/// `np.random.seed(n)`.
pub extern "C" fn numba_rs_np_seed(seed: i64) {
    with_np(|s| *s = Mt::seeded(seed as u32));
}

/// `np.random.randint(low, high)`; sets `*bad` when `low >= high`.
///
/// # Safety
/// `bad` must be valid for a write.
pub unsafe extern "C" fn numba_rs_np_randint(low: i64, high: i64, bad: *mut i64) -> i64 {
    match with_np(|s| s.randint(low, high)) {
        Some(r) => r,
        None => {
            // SAFETY: guaranteed by the caller.
            unsafe { *bad = 1 };
            0
        }
    }
}

/// `n` values of `randint(low, high)` into `out`; the caller has checked `low < high`
/// when `n > 0` (an empty range writes nothing).
///
/// # Safety
/// `out` must be valid for `n` writes of `i64`.
pub unsafe extern "C" fn numba_rs_np_randint_fill(low: i64, high: i64, out: *mut i64, n: i64) {
    with_np(|s| {
        for i in 0..n.max(0) as usize {
            let Some(r) = s.randint(low, high) else {
                return;
            };
            // SAFETY: guaranteed by the caller.
            unsafe { out.add(i).write(r) };
        }
    });
}

/// `np.random.shuffle(x)`: the items along the first axis of a strided array, permuted
/// in place as NumPy's legacy `shuffle` permutes them.
///
/// # Safety
/// `shape` and `strides` must hold `ndim >= 1` values describing an array of
/// `itemsize`-byte elements at `data`, valid for reads and writes.
pub unsafe extern "C" fn numba_rs_np_shuffle(
    data: *mut u8,
    ndim: i64,
    shape: *const i64,
    strides: *const i64,
    itemsize: i64,
) {
    // SAFETY: guaranteed by the caller.
    unsafe { shuffle_items(data, ndim, shape, strides, itemsize, false) }
}

/// `random.shuffle(x)` on an array: as [`numba_rs_np_shuffle`], with the `random`
/// module's generator and CPython's `shuffle` (`j = randbelow(i + 1)` from `getrandbits`).
///
/// # Safety
/// As [`numba_rs_np_shuffle`].
pub unsafe extern "C" fn numba_rs_rnd_shuffle(
    data: *mut u8,
    ndim: i64,
    shape: *const i64,
    strides: *const i64,
    itemsize: i64,
) {
    // SAFETY: guaranteed by the caller.
    unsafe { shuffle_items(data, ndim, shape, strides, itemsize, true) }
}

/// The items along the first axis permuted in place, by NumPy's legacy algorithm or
/// (`python`) CPython's.
///
/// # Safety
/// As [`numba_rs_np_shuffle`].
unsafe fn shuffle_items(
    data: *mut u8,
    ndim: i64,
    shape: *const i64,
    strides: *const i64,
    itemsize: i64,
    python: bool,
) {
    let ndim = ndim.max(1) as usize;
    // SAFETY: guaranteed by the caller.
    let (shape, strides) = unsafe {
        (
            std::slice::from_raw_parts(shape, ndim),
            std::slice::from_raw_parts(strides, ndim),
        )
    };
    // The byte offsets of every element of one item (a sub-array when ndim > 1).
    let mut offsets = vec![0isize];
    for d in 1..ndim {
        let step = strides[d] as isize;
        offsets = (0..shape[d].max(0) as isize)
            .flat_map(|k| offsets.iter().map(move |o| o + k * step))
            .collect();
    }
    let size = itemsize.max(0) as usize;
    let mut tmp = vec![0u8; size];
    let stride0 = strides[0] as isize;
    let swap = |i: usize, j: usize| {
        if i == j {
            return;
        }
        for &o in &offsets {
            // SAFETY: both items lie inside the array (i, j < shape[0]); the copies go
            // through `tmp`, so items that overlap (stride 0) stay sound.
            unsafe {
                let p = data.offset(i as isize * stride0 + o);
                let q = data.offset(j as isize * stride0 + o);
                std::ptr::copy(p, tmp.as_mut_ptr(), size);
                std::ptr::copy(q, p, size);
                std::ptr::copy(tmp.as_ptr(), q, size);
            }
        }
    };
    if python {
        with(|s| s.shuffle_python(shape[0], swap));
    } else {
        with_np(|s| s.shuffle(shape[0], swap));
    }
}

/// `np.random.permutation(n)`: `0..n` shuffled into `out`.
///
/// # Safety
/// `out` must be valid for `n` writes of `i64`.
pub unsafe extern "C" fn numba_rs_np_permutation(out: *mut i64, n: i64) {
    let n = n.max(0);
    // SAFETY: guaranteed by the caller.
    let items = unsafe { std::slice::from_raw_parts_mut(out, n as usize) };
    for (i, x) in items.iter_mut().enumerate() {
        *x = i as i64;
    }
    with_np(|s| s.shuffle(n, |i, j| items.swap(i, j)));
}

/// `np.random.choice`: `m` samples of a population of `n` items into `out` (contiguous
/// `itemsize`-byte items). With `src` null the population is `0..n` (`int64` items);
/// otherwise item `k` is at `src + k * stride`. With replacement each sample is
/// `randint(0, n)`; without, the population is permuted as `permutation(n)` permutes it
/// and the first `m` are taken (Numba's and NumPy's legacy draws). The caller has checked
/// `n > 0` when `m > 0`, and `m <= n` without replacement.
///
/// # Safety
/// `out` must be valid for `m * itemsize` bytes of writes; a non-null `src` for reads of
/// `n` items.
pub unsafe extern "C" fn numba_rs_np_choice(
    src: *const u8,
    stride: i64,
    itemsize: i64,
    n: i64,
    out: *mut u8,
    m: i64,
    replace: i64,
) {
    let m = m.max(0) as usize;
    let size = itemsize.max(0) as usize;
    let put = |k: usize, j: i64| {
        // SAFETY: guaranteed by the caller (k < m, 0 <= j < n).
        unsafe {
            let dst = out.add(k * size);
            if src.is_null() {
                dst.cast::<i64>().write_unaligned(j);
            } else {
                std::ptr::copy_nonoverlapping(src.offset(j as isize * stride as isize), dst, size);
            }
        }
    };
    if replace != 0 {
        with_np(|s| {
            for k in 0..m {
                match s.randint(0, n) {
                    Some(j) => put(k, j),
                    None => return,
                }
            }
        });
    } else {
        let mut idx: Vec<i64> = (0..n.max(0)).collect();
        with_np(|s| s.shuffle(n, |i, j| idx.swap(i, j)));
        for (k, &j) in idx.iter().take(m).enumerate() {
            put(k, j);
        }
    }
}

/// The calling thread's `random` generator, for code that draws inline. The address
/// is the thread's for as long as it lives; nothing else borrows the state while compiled
/// code runs.
pub extern "C" fn numba_rs_rnd_state() -> *mut Mt {
    STATE.with(|s| s.as_ptr())
}

/// Refill a state's words (they are used up: `index` is past the end).
///
/// # Safety
/// `state` comes from [`numba_rs_rnd_state`] on this thread.
pub unsafe extern "C" fn numba_rs_rnd_twist(state: *mut Mt) {
    // SAFETY: guaranteed by the caller; no other reference to the state is live.
    unsafe { (*state).twist() }
}

/// `random.seed(n)`.
pub extern "C" fn numba_rs_rnd_seed(seed: i64) {
    with(|s| *s = Mt::seeded(seed as u32));
}

/// `random.random()`.
pub extern "C" fn numba_rs_rnd_random() -> f64 {
    with(Mt::next_double)
}

/// `random.getrandbits(k)` for 1 ≤ k ≤ 64 (0 otherwise).
pub extern "C" fn numba_rs_rnd_getrandbits(k: i64) -> u64 {
    if !(1..=64).contains(&k) {
        return 0;
    }
    with(|s| s.bits(k as u32))
}

/// `random.randrange(start, stop, step)`; sets `*bad` for an empty range (or step 0).
///
/// # Safety
/// `bad` must be valid for a write.
pub unsafe extern "C" fn numba_rs_rnd_randrange(
    start: i64,
    stop: i64,
    step: i64,
    bad: *mut i64,
) -> i64 {
    let width = i128::from(stop) - i128::from(start);
    let step128 = i128::from(step);
    let n = match step {
        1 => width,
        s if s > 1 => (width + step128 - 1) / step128,
        s if s < 0 => (width + step128 + 1) / step128,
        _ => 0,
    };
    if n <= 0 || n > i128::from(i64::MAX) {
        // SAFETY: guaranteed by the caller.
        unsafe { *bad = 1 };
        return 0;
    }
    let n = n as u64;
    let k = 64 - n.leading_zeros();
    let r = with(|s| loop {
        let r = s.bits(k);
        if r < n {
            break r;
        }
    });
    (i128::from(start) + i128::from(r as i64) * step128) as i64
}

/// A standard normal deviate (Numba's `gauss`: the polar method, the second value of each
/// pair kept for the next call).
pub extern "C" fn numba_rs_rnd_gauss() -> f64 {
    with(Mt::gauss)
}

/// The distributions over floats, by their index in [`DISTRIBUTIONS`], with Numba's
/// formulas (those of CPython's `random.py`, `gauss` aside).
pub extern "C" fn numba_rs_rnd_dist(kind: u32, a: f64, b: f64, c: f64) -> f64 {
    let name = DISTRIBUTIONS.get(kind as usize).copied().unwrap_or("");
    let triangular = |low: f64, high: f64, c: f64| {
        let mut u = numba_rs_rnd_random();
        let (mut low, mut high, mut c) = (low, high, c);
        if u > c {
            u = 1.0 - u;
            c = 1.0 - c;
            std::mem::swap(&mut low, &mut high);
        }
        low + (high - low) * (u * c).sqrt()
    };
    match name {
        "uniform" => a + (b - a) * numba_rs_rnd_random(),
        "gauss" | "normalvariate" => a + b * numba_rs_rnd_gauss(),
        "lognormvariate" => (a + b * numba_rs_rnd_gauss()).exp(),
        "expovariate" => -(1.0 - numba_rs_rnd_random()).ln() / a,
        "paretovariate" => 1.0 / (1.0 - numba_rs_rnd_random()).powf(1.0 / a),
        "weibullvariate" => a * (-(1.0 - numba_rs_rnd_random()).ln()).powf(1.0 / b),
        "triangular" => triangular(a, b, 0.5),
        "gammavariate" => gamma(a, b),
        "betavariate" => {
            let y = gamma(a, 1.0);
            if y == 0.0 {
                0.0
            } else {
                y / (y + gamma(b, 1.0))
            }
        }
        "vonmisesvariate" => vonmises(a, b),
        "triangular_mode" => {
            if b == a {
                a
            } else {
                triangular(a, b, (c - a) / (b - a))
            }
        }
        _ => f64::NAN,
    }
}

/// The gamma distribution (CPython's `gammavariate`: Cheng's algorithm for alpha > 1,
/// the exponential for alpha = 1, Kennedy & Gentle's GS below). Callers check that both
/// parameters are positive.
fn gamma(alpha: f64, beta: f64) -> f64 {
    let random = numba_rs_rnd_random;
    if alpha > 1.0 {
        let sg_magic = 1.0 + 4.5f64.ln();
        let ainv = (2.0 * alpha - 1.0).sqrt();
        let bbb = alpha - 4.0f64.ln();
        let ccc = alpha + ainv;
        loop {
            let u1 = random();
            if !(1e-7 < u1 && u1 < 0.9999999) {
                continue;
            }
            let u2 = 1.0 - random();
            let v = (u1 / (1.0 - u1)).ln() / ainv;
            let x = alpha * v.exp();
            let z = u1 * u1 * u2;
            let r = bbb + ccc * v - x;
            if r + sg_magic - 4.5 * z >= 0.0 || r >= z.ln() {
                return x * beta;
            }
        }
    } else if alpha == 1.0 {
        -(1.0 - random()).ln() * beta
    } else {
        let x = loop {
            let u = random();
            let b = (std::f64::consts::E + alpha) / std::f64::consts::E;
            let p = b * u;
            let x = if p <= 1.0 {
                p.powf(1.0 / alpha)
            } else {
                -((b - p) / alpha).ln()
            };
            let u1 = random();
            let accept = if p > 1.0 {
                u1 <= x.powf(alpha - 1.0)
            } else {
                u1 <= (-x).exp()
            };
            if accept {
                break x;
            }
        };
        x * beta
    }
}

/// The von Mises distribution (CPython's `vonmisesvariate`, after Fisher 1993).
fn vonmises(mu: f64, kappa: f64) -> f64 {
    let random = numba_rs_rnd_random;
    let two_pi = 2.0 * std::f64::consts::PI;
    if kappa <= 1e-6 {
        return two_pi * random();
    }
    let s = 0.5 / kappa;
    let r = s + (1.0 + s * s).sqrt();
    let z = loop {
        let u1 = random();
        let z = (std::f64::consts::PI * u1).cos();
        let d = z / (r + z);
        let u2 = random();
        if u2 < 1.0 - d * d || u2 <= (1.0 - d) * d.exp() {
            break z;
        }
    };
    let q = 1.0 / r;
    let f = (q + z) / (1.0 + q * z);
    let theta = if random() > 0.5 {
        mu + f.acos()
    } else {
        mu - f.acos()
    };
    theta.rem_euclid(two_pi)
}

/// The float distributions [`numba_rs_rnd_dist`] computes, and their typing keys' names
/// (`random.<name>`; `triangular_mode` is `triangular` with a mode).
pub const DISTRIBUTIONS: &[&str] = &[
    "uniform",
    "gauss",
    "normalvariate",
    "lognormvariate",
    "expovariate",
    "paretovariate",
    "weibullvariate",
    "triangular",
    "triangular_mode",
    "gammavariate",
    "betavariate",
    "vonmisesvariate",
];

/// The generator's entry points by symbol name.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        ("numba_rs_rnd_seed", numba_rs_rnd_seed as *const () as usize),
        (
            "numba_rs_rnd_state",
            numba_rs_rnd_state as *const () as usize,
        ),
        (
            "numba_rs_rnd_twist",
            numba_rs_rnd_twist as *const () as usize,
        ),
        (
            "numba_rs_rnd_random",
            numba_rs_rnd_random as *const () as usize,
        ),
        (
            "numba_rs_rnd_getrandbits",
            numba_rs_rnd_getrandbits as *const () as usize,
        ),
        (
            "numba_rs_rnd_randrange",
            numba_rs_rnd_randrange as *const () as usize,
        ),
        (
            "numba_rs_rnd_gauss",
            numba_rs_rnd_gauss as *const () as usize,
        ),
        ("numba_rs_rnd_dist", numba_rs_rnd_dist as *const () as usize),
        ("numba_rs_np_seed", numba_rs_np_seed as *const () as usize),
        ("numba_rs_np_dist", numba_rs_np_dist as *const () as usize),
        (
            "numba_rs_np_dist_fill",
            numba_rs_np_dist_fill as *const () as usize,
        ),
        ("numba_rs_np_disc", numba_rs_np_disc as *const () as usize),
        (
            "numba_rs_np_vector",
            numba_rs_np_vector as *const () as usize,
        ),
        (
            "numba_rs_np_disc_fill",
            numba_rs_np_disc_fill as *const () as usize,
        ),
        (
            "numba_rs_np_randint",
            numba_rs_np_randint as *const () as usize,
        ),
        (
            "numba_rs_np_randint_fill",
            numba_rs_np_randint_fill as *const () as usize,
        ),
        (
            "numba_rs_np_shuffle",
            numba_rs_np_shuffle as *const () as usize,
        ),
        (
            "numba_rs_rnd_shuffle",
            numba_rs_rnd_shuffle as *const () as usize,
        ),
        (
            "numba_rs_np_permutation",
            numba_rs_np_permutation as *const () as usize,
        ),
        (
            "numba_rs_np_choice",
            numba_rs_np_choice as *const () as usize,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_mersenne_twister() {
        // init_genrand(5489): the reference implementation's first outputs.
        let mut m = Mt::seeded(5489);
        assert_eq!(m.next_u32(), 3_499_211_612);
        assert_eq!(m.next_u32(), 581_869_302);
        assert_eq!(m.next_u32(), 3_890_346_734);
    }

    #[test]
    fn numpy_forms_draw_numpys_legacy_values() {
        // np.random.seed(0); np.random.permutation(10)
        numba_rs_np_seed(0);
        let mut p = [0i64; 10];
        // SAFETY: `p` holds 10 items.
        unsafe { numba_rs_np_permutation(p.as_mut_ptr(), 10) };
        assert_eq!(p, [2, 8, 4, 9, 1, 6, 7, 3, 0, 5]);
        // np.random.seed(0); np.random.randint(0, 2**40, 3); np.random.normal(0, 1, 3)
        numba_rs_np_seed(0);
        let mut ints = [0i64; 3];
        // SAFETY: `ints` holds 3 items.
        unsafe { numba_rs_np_randint_fill(0, 1 << 40, ints.as_mut_ptr(), 3) };
        assert_eq!(ints, [741_280_623_151, 506_137_267_392, 291_447_657_211]);
        let mut normals = [0f64; 3];
        // SAFETY: `normals` holds 3 items.
        unsafe { numba_rs_np_dist_fill(3, 0.0, 1.0, 0.0, normals.as_mut_ptr(), 3) };
        assert_eq!(
            normals,
            [
                -2.268_328_201_180_374,
                1.333_545_381_621_896_7,
                -0.842_724_053_829_287_3
            ]
        );
        // np.random.seed(5); np.random.choice(10, 4, replace=False); np.random.random()
        numba_rs_np_seed(5);
        let mut c = [0i64; 4];
        // SAFETY: `c` holds 4 int64 items; the population is 0..10.
        unsafe {
            numba_rs_np_choice(std::ptr::null(), 0, 8, 10, c.as_mut_ptr().cast(), 4, 0);
        }
        assert_eq!(c, [9, 5, 2, 4]);
        assert_eq!(numba_rs_np_dist(0, 0.0, 1.0, 0.0), 0.354_138_042_915_001_4);
    }

    #[test]
    fn shuffle_moves_whole_rows_of_a_strided_array() {
        // A 4x2 int64 array; its rows move as the permutation of 4 moves indices.
        numba_rs_np_seed(3);
        let mut idx = [0i64; 4];
        // SAFETY: `idx` holds 4 items.
        unsafe { numba_rs_np_permutation(idx.as_mut_ptr(), 4) };
        let mut rows: Vec<i64> = (0..8).collect();
        numba_rs_np_seed(3);
        // SAFETY: shape (4, 2) and strides (16, 8) describe `rows`.
        unsafe {
            numba_rs_np_shuffle(
                rows.as_mut_ptr().cast(),
                2,
                [4, 2].as_ptr(),
                [16, 8].as_ptr(),
                8,
            );
        }
        let expected: Vec<i64> = idx.iter().flat_map(|&r| [2 * r, 2 * r + 1]).collect();
        assert_eq!(rows, expected);
    }

    #[test]
    fn seeded_stream_is_numpys_legacy_stream() {
        // np.random.seed(42); np.random.random_sample() == 0.3745401188473625
        numba_rs_rnd_seed(42);
        assert_eq!(numba_rs_rnd_random(), 0.374_540_118_847_362_5);
    }
}
