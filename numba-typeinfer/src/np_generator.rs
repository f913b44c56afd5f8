//! `numpy.random.Generator` typing: the type of a Generator passed in from Python
//! ([`Type::NumPyRandomGenerator`]) and the primitive draws its methods are written with
//! (numba-py's `numba_rs._npgenerator` overloads, NumPy's signatures and checks).
//!
//! A primitive calls one of NumPy's own distribution functions (`libnpyrandom`, the
//! code `Generator` itself runs) on the Generator's bit generator, so a jitted draw
//! gives NumPy's value and leaves the bit generator where NumPy would:
//!
//! - `numba_rs._npgen.cont(gen, 'normal', loc, scale)`: `random_normal`, a float64;
//! - `numba_rs._npgen.disc(gen, 'poisson', lam)`: an int64 distribution;
//! - `numba_rs._npgen.cont_f(gen, 'standard_normal_f')`: a float32 draw;
//! - `numba_rs._npgen.bounded(gen, off, rng)` / `bounded_fill(gen, off, rng, out)`:
//!   `random_bounded_uint64_fill` (Lemire's method; 32-bit draws while `rng` fits), or
//!   the fill of the output's width (`random_bounded_uint32_fill`, ..., `_bool_fill`);
//! - `numba_rs._npgen.interval(gen, max)`: `random_interval` (shuffles).
//!
//! Lowering is numba-lower's `impls/npgen.rs`.

use crate::context::{BaseContext, FnTemplate};
use crate::numpy::array_parts;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// How a parameter of a NumPy distribution function is passed in C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CParam {
    Double,
    Int64,
    Float,
}

use CParam::{Double as D, Float as F, Int64 as I};

/// NumPy's continuous distribution functions (`double random_<name>(bitgen_t *, ...)`).
pub const CONTINUOUS: &[(&str, &[CParam])] = &[
    ("standard_uniform", &[]),
    ("standard_normal", &[]),
    ("standard_exponential", &[]),
    ("standard_cauchy", &[]),
    ("normal", &[D, D]),
    ("uniform", &[D, D]),
    ("exponential", &[D]),
    ("standard_gamma", &[D]),
    ("gamma", &[D, D]),
    ("beta", &[D, D]),
    ("chisquare", &[D]),
    ("f", &[D, D]),
    ("pareto", &[D]),
    ("weibull", &[D]),
    ("power", &[D]),
    ("laplace", &[D, D]),
    ("gumbel", &[D, D]),
    ("logistic", &[D, D]),
    ("lognormal", &[D, D]),
    ("rayleigh", &[D]),
    ("standard_t", &[D]),
    ("noncentral_chisquare", &[D, D]),
    ("noncentral_f", &[D, D, D]),
    ("wald", &[D, D]),
    ("vonmises", &[D, D]),
    ("triangular", &[D, D, D]),
];

/// NumPy's float32 distribution functions (`float random_<name>(bitgen_t *, ...)`),
/// `dtype=np.float32` of the methods that take one.
pub const CONTINUOUS_F: &[(&str, &[CParam])] = &[
    ("standard_uniform_f", &[]),
    ("standard_normal_f", &[]),
    ("standard_exponential_f", &[]),
    ("standard_gamma_f", &[F]),
];

/// NumPy's discrete distribution functions (`int64_t random_<name>(bitgen_t *, ...)`;
/// `binomial` also takes NumPy's cache struct, which the lowering provides).
pub const DISCRETE: &[(&str, &[CParam])] = &[
    ("poisson", &[D]),
    ("negative_binomial", &[D, D]),
    ("geometric", &[D]),
    ("zipf", &[D]),
    ("logseries", &[D]),
    ("binomial", &[D, I]),
    ("hypergeometric", &[I, I, I]),
];

/// The C parameters of a distribution function by name (`ret`: FLOAT64, FLOAT32 or
/// INT64, which table).
pub fn params(name: &str, ret: TypeId) -> Option<&'static [CParam]> {
    let table = match ret {
        r if r == INT64 => DISCRETE,
        r if r == FLOAT32 => CONTINUOUS_F,
        _ => CONTINUOUS,
    };
    table.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

fn is_gen(t: TypeId) -> bool {
    t == intern(Type::NumPyRandomGenerator)
}

fn real(t: TypeId) -> bool {
    let t = t.unliteral();
    t.is_integer() || t.is_float() || t == BOOLEAN
}

/// `(gen, 'name', params...)` of a distribution primitive giving `ret`.
fn draw(key: &'static str, ret: TypeId, a: &[TypeId]) -> Option<Signature> {
    let [g, name, rest @ ..] = a else {
        return None;
    };
    let Type::StringLiteral(n) = name.get() else {
        return None;
    };
    let want = params(&n, ret)?;
    if !is_gen(*g) || rest.len() != want.len() || !rest.iter().all(|&t| real(t)) {
        return None;
    }
    let mut args = vec![*g, *name];
    args.extend(want.iter().map(|p| match p {
        D => FLOAT64,
        F => FLOAT32,
        I => INT64,
    }));
    Some(sig(key, ret, args))
}

fn int(t: TypeId) -> bool {
    t.unliteral().is_integer() || t.unliteral() == BOOLEAN
}

impl BaseContext {
    /// The `numba_rs._npgen` primitives `np.random.Generator`'s methods are written with.
    pub(crate) fn install_np_generator(&mut self) {
        // `numba_rs._npgen.new(seed)`: NumPy's `default_rng(seed)` (None: no seed).
        self.register(
            "numba_rs._npgen.new",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [s] if s.unliteral() == NONE || int(*s) => Some(sig(
                        "numba_rs._npgen.new",
                        intern(Type::NumPyRandomGenerator),
                        vec![if s.unliteral() == NONE { NONE } else { INT64 }],
                    )),
                    _ => None,
                },
                "(seed: int or None)",
            )),
        );
        self.register(
            "numba_rs._npgen.cont",
            Box::new(FnTemplate(
                |a: &[TypeId]| draw("numba_rs._npgen.cont", FLOAT64, a),
                "(gen, name: str literal, *params: float)",
            )),
        );
        self.register(
            "numba_rs._npgen.disc",
            Box::new(FnTemplate(
                |a: &[TypeId]| draw("numba_rs._npgen.disc", INT64, a),
                "(gen, name: str literal, *params)",
            )),
        );
        self.register(
            "numba_rs._npgen.cont_f",
            Box::new(FnTemplate(
                |a: &[TypeId]| draw("numba_rs._npgen.cont_f", FLOAT32, a),
                "(gen, name: str literal, *params: float32)",
            )),
        );
        self.register(
            "numba_rs._npgen.bounded",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [g, off, rng] if is_gen(*g) && int(*off) && int(*rng) => Some(sig(
                        "numba_rs._npgen.bounded",
                        INT64,
                        vec![*g, INT64, UINT64],
                    )),
                    _ => None,
                },
                "(gen, off: int, rng: int)",
            )),
        );
        self.register(
            "numba_rs._npgen.bounded_fill",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [g, off, rng, out]
                        if is_gen(*g)
                            && int(*off)
                            && int(*rng)
                            && array_parts(*out).is_some_and(|(d, n, l, ro)| {
                                (d.is_integer() || d == BOOLEAN) && n == 1 && l == Layout::C && !ro
                            }) =>
                    {
                        Some(sig(
                            "numba_rs._npgen.bounded_fill",
                            NONE,
                            vec![*g, INT64, UINT64, *out],
                        ))
                    }
                    _ => None,
                },
                "(gen, off: int, rng: int, out: int64[::1])",
            )),
        );
        self.register(
            "numba_rs._npgen.interval",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [g, m] if is_gen(*g) && int(*m) => {
                        Some(sig("numba_rs._npgen.interval", INT64, vec![*g, UINT64]))
                    }
                    _ => None,
                },
                "(gen, max: int)",
            )),
        );
    }
}
