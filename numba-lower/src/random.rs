//! The `random` module's generator for JIT-ed code: a Mersenne Twister per thread,
//! seeded as Numba seeds it (`random.seed(n)` is the reference `init_genrand` of the
//! seed's low 32 bits, like NumPy's legacy seeding, not CPython's `init_by_array`), with
//! Numba's conversions (53-bit doubles, CPython's bit order for `getrandbits` and
//! `randrange`, the polar Box–Muller method with a cached second value for `gauss`).
//! Unseeded, each thread's generator starts from an OS-random seed.

use std::cell::RefCell;

const N: usize = 624;
const M: usize = 397;

struct Mt {
    mt: [u32; N],
    index: usize,
    gauss: Option<f64>,
}

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
        }
    }

    fn twist(&mut self) {
        let mt = &mut self.mt;
        for k in 0..N {
            let y = (mt[k] & 0x8000_0000) | (mt[(k + 1) % N] & 0x7fff_ffff);
            let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
            mt[k] = mt[(k + M) % N] ^ (y >> 1) ^ mag;
        }
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
    /// `k` random bits (1 ≤ k ≤ 64) as NumPy takes them: the low bits of each word, the
    /// high word first.
    fn np_bits(&mut self, k: u32) -> u64 {
        let masked = |s: &mut Mt, k: u32| u64::from(s.next_u32()) & (u64::MAX >> (64 - k));
        if k <= 32 {
            masked(self, k)
        } else {
            let high = masked(self, k - 32);
            let low = u64::from(self.next_u32());
            low | (high << 32)
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

/// `np.random.random()`.
pub extern "C" fn numba_rs_np_random() -> f64 {
    with_np(Mt::next_double)
}

/// A standard normal deviate from NumPy's generator.
pub extern "C" fn numba_rs_np_gauss() -> f64 {
    with_np(Mt::gauss)
}

/// `np.random.randint(low, high)`; sets `*bad` when `low >= high`.
///
/// # Safety
/// `bad` must be valid for a write.
pub unsafe extern "C" fn numba_rs_np_randint(low: i64, high: i64, bad: *mut i64) -> i64 {
    let n = i128::from(high) - i128::from(low);
    if n <= 0 || n > i128::from(u64::MAX) {
        // SAFETY: guaranteed by the caller.
        unsafe { *bad = 1 };
        return 0;
    }
    let n = n as u64;
    if n == 1 {
        return low;
    }
    let k = 64 - (n - 1).leading_zeros();
    let r = with_np(|s| loop {
        let r = s.np_bits(k);
        if r < n {
            break r;
        }
    });
    (i128::from(low) + i128::from(r)) as i64
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
        (
            "numba_rs_np_random",
            numba_rs_np_random as *const () as usize,
        ),
        ("numba_rs_np_gauss", numba_rs_np_gauss as *const () as usize),
        (
            "numba_rs_np_randint",
            numba_rs_np_randint as *const () as usize,
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
    fn seeded_stream_is_numpys_legacy_stream() {
        // np.random.seed(42); np.random.random_sample() == 0.3745401188473625
        numba_rs_rnd_seed(42);
        assert_eq!(numba_rs_rnd_random(), 0.374_540_118_847_362_5);
    }
}
