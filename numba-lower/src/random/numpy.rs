//! `numpy.random`'s distributions as NumPy's `RandomState` draws them (its "legacy"
//! algorithms, kept unchanged since NumPy 1.16), over the `numpy.random` generator of
//! [`super`]. Seeded alike, a jitted draw gives NumPy's value.
//!
//! A distribution crosses from generated code as its index in [`FLOAT_KINDS`] or
//! [`INT_KINDS`], which the lowering finds by the name numba-typeinfer's table gives;
//! the runtime turns it into the enum once per call, not once per item. Parameters are
//! checked by the caller (the lowering raises NumPy's ValueError first), so the
//! algorithms here assume valid ones.

use super::{with_np, Mt};
/// A float distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Float {
    Random,
    Uniform,
    StandardNormal,
    Normal,
    StandardExponential,
    Exponential,
    Beta,
    Chisquare,
    F,
    Gamma,
    StandardGamma,
    Gumbel,
    Laplace,
    Logistic,
    Lognormal,
    Pareto,
    Power,
    Rayleigh,
    StandardCauchy,
    StandardT,
    Triangular,
    Vonmises,
    Wald,
    Weibull,
    NoncentralChisquare,
    NoncentralF,
}

/// The float distributions by name; a kind is an index here (`numba_rs_np_dist`).
pub const FLOAT_KINDS: &[(&str, Float)] = &[
    ("random", Float::Random),
    ("uniform", Float::Uniform),
    ("standard_normal", Float::StandardNormal),
    ("normal", Float::Normal),
    ("standard_exponential", Float::StandardExponential),
    ("exponential", Float::Exponential),
    ("beta", Float::Beta),
    ("chisquare", Float::Chisquare),
    ("f", Float::F),
    ("gamma", Float::Gamma),
    ("standard_gamma", Float::StandardGamma),
    ("gumbel", Float::Gumbel),
    ("laplace", Float::Laplace),
    ("logistic", Float::Logistic),
    ("lognormal", Float::Lognormal),
    ("pareto", Float::Pareto),
    ("power", Float::Power),
    ("rayleigh", Float::Rayleigh),
    ("standard_cauchy", Float::StandardCauchy),
    ("standard_t", Float::StandardT),
    ("triangular", Float::Triangular),
    ("vonmises", Float::Vonmises),
    ("wald", Float::Wald),
    ("weibull", Float::Weibull),
    ("noncentral_chisquare", Float::NoncentralChisquare),
    ("noncentral_f", Float::NoncentralF),
];

/// An integer distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int {
    Binomial,
    NegativeBinomial,
    Poisson,
    Geometric,
    Zipf,
    Logseries,
    Hypergeometric,
}

/// The integer distributions by name; a kind is an index here (`numba_rs_np_disc`).
pub const INT_KINDS: &[(&str, Int)] = &[
    ("binomial", Int::Binomial),
    ("negative_binomial", Int::NegativeBinomial),
    ("poisson", Int::Poisson),
    ("geometric", Int::Geometric),
    ("zipf", Int::Zipf),
    ("logseries", Int::Logseries),
    ("hypergeometric", Int::Hypergeometric),
];

/// A binomial draw's set-up for one `(n, p)` (see [`Mt::binomial`]).
#[derive(Clone, Copy)]
pub(super) struct Binomial {
    n: i64,
    p: f64,
    /// Drawn with `1 - p` and returned as `n - y`.
    flip: bool,
    how: BinomialHow,
}

#[derive(Clone, Copy)]
enum BinomialHow {
    Inversion { p: f64, q: f64, qn: f64, bound: i64 },
    Btpe(Btpe),
}

/// BTPE's constants for `r = min(p, 1 - p)`.
#[derive(Clone, Copy)]
struct Btpe {
    r: f64,
    q: f64,
    m: i64,
    mf: f64,
    p1: f64,
    xm: f64,
    xl: f64,
    xr: f64,
    c: f64,
    laml: f64,
    lamr: f64,
    p2: f64,
    p3: f64,
    p4: f64,
    nrq: f64,
}

impl Binomial {
    fn new(n: i64, p: f64) -> Binomial {
        let flip = p > 0.5;
        let r = if flip { 1.0 - p } else { p };
        let q = 1.0 - r;
        let nf = n as f64;
        let how = if r * nf <= 30.0 {
            let qn = (nf * q.ln()).exp();
            let np = nf * r;
            let bound = nf.min(np + 10.0 * (np * q + 1.0).sqrt()) as i64;
            BinomialHow::Inversion { p: r, q, qn, bound }
        } else {
            let fm = nf * r + r;
            let m = fm.floor() as i64;
            let mf = m as f64;
            let p1 = (2.195 * (nf * r * q).sqrt() - 4.6 * q).floor() + 0.5;
            let xm = mf + 0.5;
            let xl = xm - p1;
            let xr = xm + p1;
            let c = 0.134 + 20.5 / (15.3 + mf);
            let a = (fm - xl) / (fm - xl * r);
            let laml = a * (1.0 + a / 2.0);
            let a = (xr - fm) / (xr * q);
            let lamr = a * (1.0 + a / 2.0);
            let p2 = p1 * (1.0 + 2.0 * c);
            let p3 = p2 + c / laml;
            let p4 = p3 + c / lamr;
            BinomialHow::Btpe(Btpe {
                r,
                q,
                m,
                mf,
                p1,
                xm,
                xl,
                xr,
                c,
                laml,
                lamr,
                p2,
                p3,
                p4,
                nrq: nf * r * q,
            })
        };
        Binomial { n, p, flip, how }
    }
}

impl Mt {
    fn std_exponential(&mut self) -> f64 {
        -(1.0 - self.next_double()).ln()
    }

    /// Marsaglia and Tsang for shape > 1, Johnk-style rejection below 1.
    fn std_gamma(&mut self, shape: f64) -> f64 {
        if shape == 1.0 {
            return self.std_exponential();
        }
        if shape == 0.0 {
            return 0.0;
        }
        if shape < 1.0 {
            loop {
                let u = self.next_double();
                let v = self.std_exponential();
                if u <= 1.0 - shape {
                    let x = u.powf(1.0 / shape);
                    if x <= v {
                        return x;
                    }
                } else {
                    let y = -((1.0 - u) / shape).ln();
                    let x = (1.0 - shape + shape * y).powf(1.0 / shape);
                    if x <= v + y {
                        return x;
                    }
                }
            }
        }
        let b = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * b).sqrt();
        loop {
            let (x, v) = loop {
                let x = self.gauss();
                let v = 1.0 + c * x;
                if v > 0.0 {
                    break (x, v);
                }
            };
            let v = v * v * v;
            let u = self.next_double();
            if u < 1.0 - 0.0331 * (x * x) * (x * x) {
                return b * v;
            }
            if u.ln() < 0.5 * x * x + b * (1.0 - v + v.ln()) {
                return b * v;
            }
        }
    }

    fn chisquare(&mut self, df: f64) -> f64 {
        2.0 * self.std_gamma(df / 2.0)
    }

    fn beta(&mut self, a: f64, b: f64) -> f64 {
        if a <= 1.0 && b <= 1.0 {
            // Johnk's algorithm, in logs when both powers underflow.
            loop {
                let u = self.next_double();
                let v = self.next_double();
                let x = u.powf(1.0 / a);
                let y = v.powf(1.0 / b);
                if x + y <= 1.0 {
                    if x + y > 0.0 {
                        return x / (x + y);
                    }
                    let (mut lx, mut ly) = (u.ln() / a, v.ln() / b);
                    let m = if lx > ly { lx } else { ly };
                    lx -= m;
                    ly -= m;
                    return (lx - (lx.exp() + ly.exp()).ln()).exp();
                }
            }
        }
        let ga = self.std_gamma(a);
        let gb = self.std_gamma(b);
        ga / (ga + gb)
    }

    fn noncentral_chisquare(&mut self, df: f64, nonc: f64) -> f64 {
        if nonc == 0.0 {
            return self.chisquare(df);
        }
        if 1.0 < df {
            let chi2 = self.chisquare(df - 1.0);
            let n = self.gauss() + nonc.sqrt();
            return chi2 + n * n;
        }
        let i = self.poisson(nonc / 2.0);
        let out = self.chisquare(df + 2.0 * i as f64);
        if nonc.is_nan() {
            f64::NAN
        } else {
            out
        }
    }

    fn vonmises(&mut self, mu: f64, kappa: f64) -> f64 {
        use std::f64::consts::PI;
        if kappa.is_nan() {
            return f64::NAN;
        }
        if kappa < 1e-8 {
            return PI * (2.0 * self.next_double() - 1.0);
        }
        let s = if kappa < 1e-5 {
            1.0 / kappa + kappa
        } else {
            let r = 1.0 + (1.0 + 4.0 * kappa * kappa).sqrt();
            let rho = (r - (2.0 * r).sqrt()) / (2.0 * kappa);
            (1.0 + rho * rho) / (2.0 * rho)
        };
        let w = loop {
            let u = self.next_double();
            let z = (PI * u).cos();
            let w = (1.0 + s * z) / (s + z);
            let y = kappa * (s - w);
            let v = self.next_double();
            if y * (2.0 - y) - v >= 0.0 || (y / v).ln() + 1.0 - y >= 0.0 {
                break w;
            }
        };
        let u = self.next_double();
        let mut result = w.acos();
        if u < 0.5 {
            result = -result;
        }
        result += mu;
        let neg = result < 0.0;
        let m = (result.abs() + PI) % (2.0 * PI) - PI;
        if neg {
            -m
        } else {
            m
        }
    }

    fn wald(&mut self, mean: f64, scale: f64) -> f64 {
        let mu_2l = mean / (2.0 * scale);
        let y = self.gauss();
        let y = mean * y * y;
        let x = mean + mu_2l * (y - (4.0 * scale * y + y * y).sqrt());
        let u = self.next_double();
        if u <= mean / (mean + x) {
            x
        } else {
            mean * mean / x
        }
    }

    fn triangular(&mut self, left: f64, mode: f64, right: f64) -> f64 {
        let base = right - left;
        let leftbase = mode - left;
        let ratio = leftbase / base;
        let leftprod = leftbase * base;
        let rightprod = (right - mode) * base;
        let u = self.next_double();
        if u <= ratio {
            left + (u * leftprod).sqrt()
        } else {
            right - ((1.0 - u) * rightprod).sqrt()
        }
    }

    /// One draw of `kind` with parameters `a`, `b`, `c` (in NumPy's order; those a
    /// distribution lacks are ignored).
    fn np_dist(&mut self, kind: Float, a: f64, b: f64, c: f64) -> f64 {
        match kind {
            Float::Random => self.next_double(),
            Float::Uniform => a + (b - a) * self.next_double(),
            Float::StandardNormal => self.gauss(),
            Float::Normal => a + b * self.gauss(),
            Float::StandardExponential => self.std_exponential(),
            Float::Exponential => a * self.std_exponential(),
            Float::Beta => self.beta(a, b),
            Float::Chisquare => self.chisquare(a),
            Float::F => (self.chisquare(a) * b) / (self.chisquare(b) * a),
            Float::Gamma => b * self.std_gamma(a),
            Float::StandardGamma => self.std_gamma(a),
            Float::Gumbel => loop {
                let u = 1.0 - self.next_double();
                if u < 1.0 {
                    break a - b * (-u.ln()).ln();
                }
            },
            Float::Laplace => loop {
                let u = self.next_double();
                if u >= 0.5 {
                    break a - b * (2.0 - u - u).ln();
                }
                if u > 0.0 {
                    break a + b * (u + u).ln();
                }
            },
            Float::Logistic => loop {
                let u = self.next_double();
                if u > 0.0 {
                    break a + b * (u / (1.0 - u)).ln();
                }
            },
            Float::Lognormal => (a + b * self.gauss()).exp(),
            Float::Pareto => (self.std_exponential() / a).exp() - 1.0,
            Float::Power => (1.0 - (-self.std_exponential()).exp()).powf(1.0 / a),
            Float::Rayleigh => a * (-2.0 * (-self.next_double()).ln_1p()).sqrt(),
            Float::StandardCauchy => self.gauss() / self.gauss(),
            Float::StandardT => {
                let num = self.gauss();
                let denom = self.std_gamma(a / 2.0);
                (a / 2.0).sqrt() * num / denom.sqrt()
            }
            Float::Triangular => self.triangular(a, b, c),
            Float::Vonmises => self.vonmises(a, b),
            Float::Wald => self.wald(a, b),
            Float::Weibull => {
                if a == 0.0 {
                    0.0
                } else {
                    self.std_exponential().powf(1.0 / a)
                }
            }
            Float::NoncentralChisquare => self.noncentral_chisquare(a, b),
            Float::NoncentralF => {
                let t = self.noncentral_chisquare(a, c) * b;
                t / (self.chisquare(b) * a)
            }
        }
    }

    fn poisson(&mut self, lam: f64) -> i64 {
        if lam >= 10.0 {
            return self.poisson_ptrs(lam);
        }
        if lam == 0.0 {
            return 0;
        }
        let enlam = (-lam).exp();
        let mut x = 0;
        let mut prod = 1.0;
        loop {
            prod *= self.next_double();
            if prod > enlam {
                x += 1;
            } else {
                return x;
            }
        }
    }

    /// Hörmann's transformed rejection (PTRS).
    fn poisson_ptrs(&mut self, lam: f64) -> i64 {
        let slam = lam.sqrt();
        let loglam = lam.ln();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let invalpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = self.next_double() - 0.5;
            let v = self.next_double();
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + lam + 0.43).floor() as i64;
            if us >= 0.07 && v <= vr {
                return k;
            }
            if k < 0 || (us < 0.013 && v > us) {
                continue;
            }
            if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
                <= -lam + k as f64 * loglam - loggam(k as f64 + 1.0)
            {
                return k;
            }
        }
    }

    /// NumPy's binomial: inversion for a small mean, else BTPE, on `min(p, 1 - p)`. The
    /// set-up of the last `(n, p)` is kept (NumPy's `binomial_t`), so a run of draws with
    /// the same parameters computes it once.
    fn binomial(&mut self, n: i64, p: f64) -> i64 {
        let b = match self.binomial {
            Some(b) if b.n == n && b.p.to_bits() == p.to_bits() => b,
            _ => {
                let b = Binomial::new(n, p);
                self.binomial = Some(b);
                b
            }
        };
        let y = match &b.how {
            BinomialHow::Inversion { p, q, qn, bound } => {
                self.binomial_inversion(n, *p, *q, *qn, *bound)
            }
            BinomialHow::Btpe(t) => self.binomial_btpe(n, t),
        };
        if b.flip {
            n - y
        } else {
            y
        }
    }

    fn binomial_inversion(&mut self, n: i64, p: f64, q: f64, qn: f64, bound: i64) -> i64 {
        let mut x = 0;
        let mut px = qn;
        let mut u = self.next_double();
        while u > px {
            x += 1;
            if x > bound {
                x = 0;
                px = qn;
                u = self.next_double();
            } else {
                u -= px;
                px = ((n - x + 1) as f64 * p * px) / (x as f64 * q);
            }
        }
        x
    }

    /// Kachitvichyanukul and Schmeiser's BTPE, with the legacy Stirling terms (the
    /// last two added, not subtracted) that keep NumPy's stream.
    fn binomial_btpe(&mut self, n: i64, t: &Btpe) -> i64 {
        let Btpe {
            r,
            q,
            m,
            mf,
            p1,
            xm,
            xl,
            xr,
            c,
            laml,
            lamr,
            p2,
            p3,
            p4,
            nrq,
        } = *t;
        let stirling = |x: f64, x2: f64| {
            (13680.0 - (462.0 - (132.0 - (99.0 - 140.0 / x2) / x2) / x2) / x2) / x / 166320.0
        };
        'draw: loop {
            let u = self.next_double() * p4;
            let mut v = self.next_double();
            let y;
            if u <= p1 {
                break 'draw (xm - p1 * v + u).floor() as i64;
            } else if u <= p2 {
                let x = xl + (u - p1) / c;
                v = v * c + 1.0 - (mf - x + 0.5).abs() / p1;
                if v > 1.0 {
                    continue;
                }
                y = x.floor() as i64;
            } else if u <= p3 {
                y = (xl + v.ln() / laml).floor() as i64;
                if y < 0 || v == 0.0 {
                    continue;
                }
                v *= (u - p2) * laml;
            } else {
                y = (xr - v.ln() / lamr).floor() as i64;
                if y > n || v == 0.0 {
                    continue;
                }
                v *= (u - p3) * lamr;
            }
            let k = (y - m).abs();
            if !(k > 20 && (k as f64) < nrq / 2.0 - 1.0) {
                // Explicit evaluation of the ratio of probabilities.
                let s = r / q;
                let a = s * (n as f64 + 1.0);
                let mut f = 1.0;
                if m < y {
                    for i in m + 1..=y {
                        f *= a / i as f64 - s;
                    }
                } else if m > y {
                    for i in y + 1..=m {
                        f /= a / i as f64 - s;
                    }
                }
                if v > f {
                    continue;
                }
                break 'draw y;
            }
            // Squeezing with the bounds of the log of the ratio.
            let kf = k as f64;
            let rho =
                (kf / nrq) * ((kf * (kf / 3.0 + 0.625) + 0.166_666_666_666_666_66) / nrq + 0.5);
            let t = -kf * kf / (2.0 * nrq);
            let big_a = v.ln();
            if big_a < t - rho {
                break 'draw y;
            }
            if big_a > t + rho {
                continue;
            }
            let x1 = y as f64 + 1.0;
            let f1 = mf + 1.0;
            let z = n as f64 + 1.0 - mf;
            let w = n as f64 - y as f64 + 1.0;
            let bound = xm * (f1 / x1).ln()
                + (n as f64 - mf + 0.5) * (z / w).ln()
                + (y - m) as f64 * (w * r / (x1 * q)).ln()
                + stirling(f1, f1 * f1)
                + stirling(z, z * z)
                + stirling(x1, x1 * x1)
                + stirling(w, w * w);
            if big_a > bound {
                continue;
            }
            break 'draw y;
        }
    }

    fn geometric(&mut self, p: f64) -> i64 {
        if p >= 0.333_333_333_333_333_3 {
            // Search.
            let mut x = 1;
            let (mut sum, mut prod) = (p, p);
            let q = 1.0 - p;
            let u = self.next_double();
            while u > sum {
                prod *= q;
                sum += prod;
                x += 1;
            }
            x
        } else {
            ((-self.next_double()).ln_1p() / (1.0 - p).ln()).ceil() as i64
        }
    }

    fn zipf(&mut self, a: f64) -> i64 {
        let am1 = a - 1.0;
        let b = 2f64.powf(am1);
        loop {
            let u = 1.0 - self.next_double();
            let v = self.next_double();
            let x = u.powf(-1.0 / am1).floor();
            // Values beyond a long are rejected: the distribution truncated there.
            if x > i64::MAX as f64 || x < 1.0 {
                continue;
            }
            let t = (1.0 + 1.0 / x).powf(am1);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b {
                return x as i64;
            }
        }
    }

    fn logseries(&mut self, p: f64) -> i64 {
        let r = (1.0 - p).ln();
        loop {
            let v = self.next_double();
            if v >= p {
                return 1;
            }
            let u = self.next_double();
            let q = 1.0 - (r * u).exp();
            if v <= q * q {
                let result = (1.0 + v.ln() / q.ln()).floor() as i64;
                if result < 1 || v == 0.0 {
                    continue;
                }
                return result;
            }
            return if v >= q { 1 } else { 2 };
        }
    }

    fn hypergeometric(&mut self, good: i64, bad: i64, sample: i64) -> i64 {
        if sample > 10 {
            self.hypergeometric_hrua(good, bad, sample)
        } else if sample > 0 {
            self.hypergeometric_hyp(good, bad, sample)
        } else {
            0
        }
    }

    fn hypergeometric_hyp(&mut self, good: i64, bad: i64, sample: i64) -> i64 {
        let d1 = bad + good - sample;
        let d2 = bad.min(good) as f64;
        let mut y = d2;
        let mut k = sample;
        while y > 0.0 {
            let u = self.next_double();
            y -= (u + y / (d1 + k) as f64).floor() as i64 as f64;
            k -= 1;
            if k == 0 {
                break;
            }
        }
        let z = (d2 - y) as i64;
        if good > bad {
            sample - z
        } else {
            z
        }
    }

    /// Stadlober's HRUA ratio-of-uniforms, with Frohne's corrections.
    fn hypergeometric_hrua(&mut self, good: i64, bad: i64, sample: i64) -> i64 {
        const D1: f64 = 1.715_527_769_921_413_5;
        const D2: f64 = 0.898_916_162_058_898_8;
        let mingoodbad = good.min(bad);
        let popsize = good + bad;
        let maxgoodbad = good.max(bad);
        let m = sample.min(popsize - sample);
        let d4 = mingoodbad as f64 / popsize as f64;
        let d5 = 1.0 - d4;
        let d6 = m as f64 * d4 + 0.5;
        let d7 =
            ((popsize - m) as f64 * sample as f64 * d4 * d5 / (popsize - 1) as f64 + 0.5).sqrt();
        let d8 = D1 * d7 + D2;
        let d9 = ((m + 1) as f64 * (mingoodbad + 1) as f64 / (popsize + 2) as f64).floor() as i64;
        let lg = |z: i64| {
            loggam((z + 1) as f64)
                + loggam((mingoodbad - z + 1) as f64)
                + loggam((m - z + 1) as f64)
                + loggam((maxgoodbad - m + z + 1) as f64)
        };
        let d10 = lg(d9);
        let d11 = ((m.min(mingoodbad) as f64) + 1.0).min((d6 + 16.0 * d7).floor());
        let mut z = loop {
            let x = self.next_double();
            let y = self.next_double();
            let w = d6 + d8 * (y - 0.5) / x;
            if w < 0.0 || w >= d11 {
                continue;
            }
            let z = w.floor() as i64;
            let t = d10 - lg(z);
            if x * (4.0 - x) - 3.0 <= t {
                break z;
            }
            if x * (x - t) >= 1.0 {
                continue;
            }
            if 2.0 * x.ln() <= t {
                break z;
            }
        };
        if good > bad {
            z = m - z;
        }
        if m < sample {
            z = good - z;
        }
        z
    }

    /// One draw of `kind`: float parameters `a`, `b` and int ones `i`,
    /// `j`, `k`, in NumPy's order within each kind (`binomial(n=i, p=a)`,
    /// `hypergeometric(i, j, k)`).
    fn np_disc(&mut self, kind: Int, a: f64, b: f64, i: i64, j: i64, k: i64) -> i64 {
        match kind {
            Int::Binomial => self.binomial(i, a),
            Int::NegativeBinomial => {
                let y = (1.0 - b) / b * self.std_gamma(a);
                self.poisson(y)
            }
            Int::Poisson => self.poisson(a),
            Int::Geometric => self.geometric(a),
            Int::Zipf => self.zipf(a),
            Int::Logseries => self.logseries(a),
            Int::Hypergeometric => self.hypergeometric(i, j, k),
        }
    }
}

/// The log of the gamma function (NumPy's `random_loggam`, whose exact values the
/// rejection steps above depend on).
fn loggam(x: f64) -> f64 {
    const A: [f64; 10] = [
        8.333_333_333_333_333e-02,
        -2.777_777_777_777_778e-03,
        7.936_507_936_507_937e-04,
        -5.952_380_952_380_952e-04,
        8.417_508_417_508_418e-04,
        -1.917_526_917_526_918e-03,
        6.410_256_410_256_41e-03,
        -2.955_065_359_477_124e-02,
        1.796_443_723_688_307e-01,
        -1.392_432_216_905_9,
    ];
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    let n = if x < 7.0 { (7.0 - x) as i64 } else { 0 };
    let mut x0 = x + n as f64;
    let x2 = (1.0 / x0) * (1.0 / x0);
    let lg2pi = 1.837_877_066_409_345_3;
    let mut gl0 = A[9];
    for a in A[..9].iter().rev() {
        gl0 *= x2;
        gl0 += a;
    }
    let mut gl = gl0 / x0 + 0.5 * lg2pi + (x0 - 0.5) * x0.ln() - x0;
    if x < 7.0 {
        for _ in 1..=n {
            gl -= (x0 - 1.0).ln();
            x0 -= 1.0;
        }
    }
    gl
}

/// One value of the float distribution [`FLOAT_KINDS`]`[kind]` (NaN for no such kind).
pub extern "C" fn numba_rs_np_dist(kind: u32, a: f64, b: f64, c: f64) -> f64 {
    match FLOAT_KINDS.get(kind as usize) {
        Some(&(_, k)) => with_np(|s| s.np_dist(k, a, b, c)),
        None => f64::NAN,
    }
}

/// `n` values of a float distribution into `out`, in order (as `size=` fills in C order).
///
/// # Safety
/// `out` must be valid for `n` writes of `f64`.
pub unsafe extern "C" fn numba_rs_np_dist_fill(
    kind: u32,
    a: f64,
    b: f64,
    c: f64,
    out: *mut f64,
    n: i64,
) {
    // The kind is looked up once, not per item.
    let Some(&(_, kind)) = FLOAT_KINDS.get(kind as usize) else {
        return;
    };
    with_np(|s| {
        for i in 0..n.max(0) as usize {
            // SAFETY: guaranteed by the caller.
            unsafe { out.add(i).write(s.np_dist(kind, a, b, c)) };
        }
    });
}

/// One value of the integer distribution [`INT_KINDS`]`[kind]` (0 for no such kind).
pub extern "C" fn numba_rs_np_disc(kind: u32, a: f64, b: f64, i: i64, j: i64, k: i64) -> i64 {
    match INT_KINDS.get(kind as usize) {
        Some(&(_, d)) => with_np(|s| s.np_disc(d, a, b, i, j, k)),
        None => 0,
    }
}

/// `n` values of an integer distribution into `out`, in order.
///
/// # Safety
/// `out` must be valid for `n` writes of `i64`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn numba_rs_np_disc_fill(
    kind: u32,
    a: f64,
    b: f64,
    i: i64,
    j: i64,
    k: i64,
    out: *mut i64,
    n: i64,
) {
    let Some(&(_, kind)) = INT_KINDS.get(kind as usize) else {
        return;
    };
    with_np(|s| {
        for idx in 0..n.max(0) as usize {
            // SAFETY: guaranteed by the caller.
            unsafe { out.add(idx).write(s.np_disc(kind, a, b, i, j, k)) };
        }
    });
}

/// `dirichlet(alpha, ...)`, for [`numba_rs_np_vector`].
pub const VECTOR_DIRICHLET: u32 = 0;
/// `multinomial(n, pvals, ...)`, for [`numba_rs_np_vector`].
pub const VECTOR_MULTINOMIAL: u32 = 1;

/// NumPy's compensated sum (`kahan_sum`), for `multinomial`'s check of `pvals`.
fn kahan_sum(v: &[f64]) -> f64 {
    let Some((&first, rest)) = v.split_first() else {
        return 0.0;
    };
    let (mut sum, mut c) = (first, 0.0);
    for &x in rest {
        let y = x - c;
        let t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    sum
}

/// The distributions of a vector parameter: `dirichlet` (`kind` [`VECTOR_DIRICHLET`],
/// parameters `alpha`, float rows) and `multinomial` ([`VECTOR_MULTINOMIAL`], `n` and
/// `pvals`, int64 rows), each row of `k` items drawn as NumPy's `RandomState` draws it.
/// The parameter vector is `k` doubles `stride` bytes apart from `p`.
///
/// With `out` null, only checks the parameters: 0 when valid, 1 for a bad value
/// (`alpha <= 0`, or `pvals` outside [0, 1]), 2 when `sum(pvals[:-1]) > 1`, 3 when
/// `n < 0`. Otherwise fills `total` items (whole rows) of `out`, which must be zeroed
/// for `multinomial`, and returns 0.
///
/// # Safety
/// `p` must be valid for `k` reads at that stride, `out` (when not null) for `total`
/// writes of 8 bytes.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn numba_rs_np_vector(
    kind: u32,
    p: *const u8,
    stride: i64,
    k: i64,
    n: i64,
    out: *mut u8,
    total: i64,
) -> i32 {
    let k = k.max(0) as usize;
    // SAFETY: the caller guarantees `k` doubles at `stride`.
    let v: Vec<f64> = (0..k)
        .map(|i| unsafe {
            p.offset(i as isize * stride as isize)
                .cast::<f64>()
                .read_unaligned()
        })
        .collect();
    if out.is_null() {
        return if kind == VECTOR_DIRICHLET {
            i32::from(v.iter().any(|&a| a <= 0.0))
        } else if v.iter().any(|&x| !(0.0..=1.0).contains(&x)) {
            1
        } else if k > 0 && kahan_sum(&v[..k - 1]) > 1.0 + 1e-12 {
            2
        } else if n < 0 {
            3
        } else {
            0
        };
    }
    if k == 0 {
        return 0;
    }
    let rows = total.max(0) as usize / k;
    with_np(|s| {
        for row in 0..rows {
            if kind == VECTOR_DIRICHLET {
                // SAFETY: whole rows of `out` are within `total` items.
                let r =
                    unsafe { std::slice::from_raw_parts_mut(out.cast::<f64>().add(row * k), k) };
                let mut acc = 0.0;
                for (x, &a) in r.iter_mut().zip(&v) {
                    *x = s.std_gamma(a);
                    acc += *x;
                }
                let inv = 1.0 / acc;
                for x in r.iter_mut() {
                    *x *= inv;
                }
            } else {
                // SAFETY: as above.
                let r =
                    unsafe { std::slice::from_raw_parts_mut(out.cast::<i64>().add(row * k), k) };
                let mut remaining_p = 1.0;
                let mut dn = n;
                for j in 0..k - 1 {
                    r[j] = s.binomial(dn, v[j] / remaining_p);
                    dn -= r[j];
                    if dn <= 0 {
                        break;
                    }
                    remaining_p -= v[j];
                }
                if dn > 0 {
                    r[k - 1] = dn;
                }
            }
        }
    });
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(seed: i64, f: impl Fn(&mut Mt) -> f64, n: usize) -> Vec<f64> {
        super::super::numba_rs_np_seed(seed);
        with_np(|s| (0..n).map(|_| f(s)).collect())
    }

    #[test]
    fn gamma_and_beta_are_numpys_legacy_streams() {
        // np.random.seed(1); np.random.gamma(2.5, 2.0, 3)
        assert_eq!(
            draws(1, |s| 2.0 * s.std_gamma(2.5), 3),
            [11.08995290710804, 2.7703470747159855, 2.956999993156403]
        );
        // np.random.seed(1); np.random.beta(0.5, 0.7, 2)  (Johnk's branch)
        assert_eq!(
            draws(1, |s| s.beta(0.5, 0.7), 2),
            [0.21745070332455976, 7.224788993221762e-08]
        );
    }

    #[test]
    fn discrete_draws_are_numpys_legacy_streams() {
        // np.random.seed(2); binomial(1000, 0.4, 3) (BTPE), hypergeometric(100, 200, 50, 3)
        // (HRUA), poisson(25.0, 3) (PTRS), drawn in that order.
        let got = draws(
            2,
            |s| {
                let b: Vec<i64> = (0..3).map(|_| s.binomial(1000, 0.4)).collect();
                let h: Vec<i64> = (0..3).map(|_| s.hypergeometric(100, 200, 50)).collect();
                let p: Vec<i64> = (0..3).map(|_| s.poisson(25.0)).collect();
                assert_eq!(b, [419, 411, 409]);
                assert_eq!(h, [20, 12, 17]);
                assert_eq!(p, [18, 20, 31]);
                0.0
            },
            1,
        );
        assert_eq!(got, [0.0]);
    }

    #[test]
    fn every_typed_distribution_has_a_draw_of_its_kind() {
        for d in numba_typeinfer::np_random::DISTRIBUTIONS {
            let found = if d.int_result {
                INT_KINDS.iter().any(|(k, _)| *k == d.draw)
            } else {
                FLOAT_KINDS.iter().any(|(k, _)| *k == d.draw)
            };
            assert!(found, "{} draws {}", d.name, d.draw);
        }
    }

    #[test]
    fn loggam_matches_the_log_gamma_function() {
        // lgamma(0.5) = log(sqrt(pi)); lgamma(10) = log(9!).
        assert!((loggam(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
        assert!((loggam(10.0) - 362_880f64.ln()).abs() < 1e-12);
        assert_eq!(loggam(2.0), 0.0);
    }
}
