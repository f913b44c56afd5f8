//! `numpy.random` typing: the functions of NumPy's legacy generator (`RandomState`).
//! The distributions of scalar parameters are one table ([`DISTRIBUTIONS`]: NumPy's
//! parameter names, defaults and checks), which the lowering reads too; each takes an
//! optional `size` (an int or a tuple of ints) and then gives a C-ordered array of that
//! shape (`float64`, or `int64` for the discrete ones). `rand(d0, ...)`/`randn(d0, ...)`
//! take the dimensions themselves; `dirichlet` and `multinomial` take a vector (a float64
//! array or a tuple) and give rows of its length; `choice`, `shuffle` and `permutation`
//! work on an int population or a 1-d (`choice`) / n-d (`shuffle`, `permutation`) array.
//! Lowering is in numba-lower's `impls/random.rs`.

use numba_bytecode::Constant;

use crate::context::{BaseContext, FnTemplate};
use crate::conv::tuple_items;
use crate::numpy::array_parts;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

/// A test of one parameter value that NumPy rejects it on: comparisons that are true
/// for NaN (`U*`, unordered) or false for it (`O*`), and the sign bit of a non-NaN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Test {
    /// `!(v >= x)`.
    Ult(f64),
    /// `!(v > x)`.
    Ule(f64),
    /// `!(v <= x)`.
    Ugt(f64),
    /// `!(v < x)`.
    Uge(f64),
    /// `v <= x` (NaN passes).
    Ole(f64),
    /// `v > x` (NaN passes).
    Ogt(f64),
    /// A set sign bit on a number that is not NaN (`-0.0` too, as NumPy's `signbit`).
    SignBit,
}

/// What a parameter must satisfy: NumPy's `check_constraint` kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    None,
    NonNegative,
    Positive,
    Bounded01,
    BoundedGt01,
    BoundedLt01,
    Gt1,
    Gte1,
    Poisson,
}

/// NumPy's largest legacy Poisson mean (`LONG_MAX - 10 * sqrt(LONG_MAX)`).
const LEGACY_POISSON_LAM_MAX: f64 = 9.223_372_006_484_771e18;

impl Constraint {
    /// The checks, in order: each a set of tests (any one failing) and NumPy's
    /// ValueError message for a parameter called `name`.
    pub fn checks(self, name: &str) -> Vec<(Vec<Test>, String)> {
        use Test::*;
        let one = |tests: Vec<Test>, msg: String| vec![(tests, msg)];
        match self {
            Constraint::None => Vec::new(),
            Constraint::NonNegative => one(vec![SignBit], format!("{name} < 0")),
            Constraint::Positive => one(vec![Ole(0.0)], format!("{name} <= 0")),
            Constraint::Bounded01 => one(
                vec![Ult(0.0), Ugt(1.0)],
                format!("{name} < 0, {name} > 1 or {name} is NaN"),
            ),
            Constraint::BoundedGt01 => one(
                vec![Ule(0.0), Ugt(1.0)],
                format!("{name} <= 0, {name} > 1 or {name} contains NaNs"),
            ),
            Constraint::BoundedLt01 => one(
                vec![Ult(0.0), Uge(1.0)],
                format!("{name} < 0, {name} >= 1 or {name} is NaN"),
            ),
            Constraint::Gt1 => one(vec![Ule(1.0)], format!("{name} <= 1 or {name} is NaN")),
            Constraint::Gte1 => one(vec![Ult(1.0)], format!("{name} < 1 or {name} is NaN")),
            Constraint::Poisson => vec![
                (vec![Ult(0.0)], format!("{name} < 0 or {name} is NaN")),
                (
                    vec![Ogt(LEGACY_POISSON_LAM_MAX)],
                    format!("{name} value too large"),
                ),
            ],
        }
    }
}

/// One scalar parameter of a distribution.
#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    /// The value when omitted; `None` for a required parameter.
    pub default: Option<f64>,
    /// An integer parameter (`binomial`'s `n`, `hypergeometric`'s counts).
    pub int: bool,
    pub check: Constraint,
}

/// A `numpy.random` distribution of scalar parameters and an optional `size`.
#[derive(Debug)]
pub struct Distribution {
    pub name: &'static str,
    /// The generator's name for the draw (`random_sample` draws as `random`).
    pub draw: &'static str,
    pub params: &'static [Param],
    /// Draws integers (`int64`), not floats.
    pub int_result: bool,
}

const fn p(name: &'static str, default: Option<f64>, check: Constraint) -> Param {
    Param {
        name,
        default,
        int: false,
        check,
    }
}

const fn ip(name: &'static str, check: Constraint) -> Param {
    Param {
        name,
        default: None,
        int: true,
        check,
    }
}

const fn float(name: &'static str, params: &'static [Param]) -> Distribution {
    Distribution {
        name,
        draw: name,
        params,
        int_result: false,
    }
}

const fn int(name: &'static str, params: &'static [Param]) -> Distribution {
    Distribution {
        name,
        draw: name,
        params,
        int_result: true,
    }
}

const fn alias(name: &'static str, draw: &'static str) -> Distribution {
    Distribution {
        name,
        draw,
        params: &[],
        int_result: false,
    }
}

use Constraint as C;

/// The distributions of NumPy's `RandomState` that take scalar parameters, with NumPy's
/// parameter names, defaults and checks (`mtrand.pyx`).
pub const DISTRIBUTIONS: &[Distribution] = &[
    float("random", &[]),
    alias("random_sample", "random"),
    alias("sample", "random"),
    alias("ranf", "random"),
    float(
        "uniform",
        &[p("low", Some(0.0), C::None), p("high", Some(1.0), C::None)],
    ),
    float("standard_normal", &[]),
    float(
        "normal",
        &[
            p("loc", Some(0.0), C::None),
            p("scale", Some(1.0), C::NonNegative),
        ],
    ),
    float("standard_exponential", &[]),
    float("exponential", &[p("scale", Some(1.0), C::NonNegative)]),
    float(
        "beta",
        &[p("a", None, C::Positive), p("b", None, C::Positive)],
    ),
    float("chisquare", &[p("df", None, C::Positive)]),
    float(
        "f",
        &[p("dfnum", None, C::Positive), p("dfden", None, C::Positive)],
    ),
    float(
        "gamma",
        &[
            p("shape", None, C::NonNegative),
            p("scale", Some(1.0), C::NonNegative),
        ],
    ),
    float("standard_gamma", &[p("shape", None, C::NonNegative)]),
    float(
        "gumbel",
        &[
            p("loc", Some(0.0), C::None),
            p("scale", Some(1.0), C::NonNegative),
        ],
    ),
    float(
        "laplace",
        &[
            p("loc", Some(0.0), C::None),
            p("scale", Some(1.0), C::NonNegative),
        ],
    ),
    float(
        "logistic",
        &[
            p("loc", Some(0.0), C::None),
            p("scale", Some(1.0), C::NonNegative),
        ],
    ),
    float(
        "lognormal",
        &[
            p("mean", Some(0.0), C::None),
            p("sigma", Some(1.0), C::NonNegative),
        ],
    ),
    float(
        "noncentral_chisquare",
        &[p("df", None, C::Positive), p("nonc", None, C::NonNegative)],
    ),
    float(
        "noncentral_f",
        &[
            p("dfnum", None, C::Positive),
            p("dfden", None, C::Positive),
            p("nonc", None, C::NonNegative),
        ],
    ),
    float("pareto", &[p("a", None, C::Positive)]),
    float("power", &[p("a", None, C::Positive)]),
    float("rayleigh", &[p("scale", Some(1.0), C::NonNegative)]),
    float("standard_cauchy", &[]),
    float("standard_t", &[p("df", None, C::Positive)]),
    // Also `left <= mode <= right`, `left < right` (checked with the parameters).
    float(
        "triangular",
        &[
            p("left", None, C::None),
            p("mode", None, C::None),
            p("right", None, C::None),
        ],
    ),
    float(
        "vonmises",
        &[p("mu", None, C::None), p("kappa", None, C::NonNegative)],
    ),
    float(
        "wald",
        &[p("mean", None, C::Positive), p("scale", None, C::Positive)],
    ),
    float("weibull", &[p("a", None, C::NonNegative)]),
    int(
        "binomial",
        &[ip("n", C::NonNegative), p("p", None, C::Bounded01)],
    ),
    int(
        "negative_binomial",
        &[p("n", None, C::Positive), p("p", None, C::Bounded01)],
    ),
    int("poisson", &[p("lam", Some(1.0), C::Poisson)]),
    int("geometric", &[p("p", None, C::BoundedGt01)]),
    int("zipf", &[p("a", None, C::Gt1)]),
    int("logseries", &[p("p", None, C::BoundedLt01)]),
    // Also `ngood + nbad >= nsample` (checked first).
    int(
        "hypergeometric",
        &[
            ip("ngood", C::NonNegative),
            ip("nbad", C::NonNegative),
            ip("nsample", C::Gte1),
        ],
    ),
];

/// The distribution a `numpy.random.<name>` key names.
pub fn distribution(key: &str) -> Option<&'static Distribution> {
    let name = key.strip_prefix("numpy.random.").unwrap_or(key);
    DISTRIBUTIONS.iter().find(|d| d.name == name)
}

/// Parameter names of the `numpy.random` functions that take keywords.
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    static NAMES: std::sync::LazyLock<std::collections::HashMap<&'static str, Vec<&'static str>>> =
        std::sync::LazyLock::new(|| {
            DISTRIBUTIONS
                .iter()
                .map(|d| {
                    let mut names: Vec<&'static str> = d.params.iter().map(|p| p.name).collect();
                    names.push("size");
                    (d.name, names)
                })
                .collect()
        });
    let name = key.strip_prefix("numpy.random.")?;
    if let Some(names) = NAMES.get(name) {
        return Some(names.as_slice());
    }
    Some(match name {
        "randint" => &["low", "high", "size"],
        "choice" => &["a", "size", "replace"],
        "shuffle" | "permutation" => &["x"],
        "seed" => &["seed"],
        "dirichlet" => &["alpha", "size"],
        "multinomial" => &["n", "pvals", "size"],
        _ => return None,
    })
}

/// The defaults keywords may skip over (`normal(size=3)` is `normal(0.0, 1.0, 3)`).
pub fn param_default(key: &str, param: &str) -> Option<Constant> {
    let name = key.strip_prefix("numpy.random.")?;
    if param == "size" || (name == "randint" && param == "high") {
        return Some(Constant::None);
    }
    if name == "choice" && param == "replace" {
        return Some(Constant::Bool(true));
    }
    distribution(name)?
        .params
        .iter()
        .find(|p| p.name == param)?
        .default
        .map(Constant::Float)
}

/// What a `size` argument asks for: `Some(None)` for a scalar (`None`), `Some(Some(ndim))`
/// for an array (an int, or a tuple of ints; `()` is a 0-d array, as in NumPy); `None`
/// when it is not a size.
fn size_rank(t: TypeId) -> Option<Option<u32>> {
    let t = t.unliteral();
    if t == NONE {
        return Some(None);
    }
    if t.is_integer() {
        return Some(Some(1));
    }
    let items = tuple_items(t)?;
    items
        .iter()
        .all(|i| i.unliteral().is_integer())
        .then_some(Some(items.len() as u32))
}

/// The result for a `size`: the scalar type, or a C-ordered array of `dtype`.
fn sized(size: Option<TypeId>, dtype: TypeId) -> Option<TypeId> {
    Some(match size.map(size_rank) {
        None | Some(Some(None)) => dtype,
        Some(Some(Some(n))) => array(dtype, n, Layout::C),
        Some(None) => return None,
    })
}

fn real_scalar(t: TypeId) -> bool {
    t.is_integer() || t.is_float()
}

/// A vector parameter: a 1-d float64 array or a tuple of real numbers.
fn vector_param(t: TypeId) -> bool {
    match array_parts(t) {
        Some((d, 1, ..)) => d == FLOAT64,
        Some(_) => false,
        None => {
            tuple_items(t).is_some_and(|items| items.iter().all(|&i| real_scalar(i.unliteral())))
        }
    }
}

fn int_scalar(t: TypeId) -> bool {
    t.is_integer() || t == BOOLEAN
}

fn leak(name: &str) -> &'static str {
    Box::leak(format!("numpy.random.{name}").into_boxed_str())
}

impl BaseContext {
    /// `numpy.random`: Numba's legacy generator functions.
    pub(crate) fn install_numpy_random(&mut self) {
        self.register(
            "numpy.random.seed",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [t] if int_scalar(*t) => Some(sig("numpy.random.seed", NONE, vec![INT64])),
                    _ => None,
                },
                "(seed: int)",
            )),
        );
        for d in DISTRIBUTIONS {
            let key = leak(d.name);
            let describe: &'static str = Box::leak(
                format!(
                    "({}size=None); size: None, an int or a tuple of ints",
                    d.params
                        .iter()
                        .map(|p| match (p.default, p.int) {
                            (Some(v), _) => format!("{}={v:?}, ", p.name),
                            (None, true) => format!("{}: int, ", p.name),
                            (None, false) => format!("{}: float, ", p.name),
                        })
                        .collect::<String>()
                )
                .into_boxed_str(),
            );
            let n = d.params.len();
            let required = d.params.iter().filter(|p| p.default.is_none()).count();
            let ret = if d.int_result { INT64 } else { FLOAT64 };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        if a.len() > n + 1 || a.len() < required {
                            return None;
                        }
                        let mut args = Vec::with_capacity(a.len());
                        for (p, &t) in d.params.iter().zip(a) {
                            let ok = if p.int { int_scalar(t) } else { real_scalar(t) };
                            if !ok {
                                return None;
                            }
                            args.push(if p.int { INT64 } else { FLOAT64 });
                        }
                        let size = a.get(n).copied();
                        args.extend(size.map(TypeId::unliteral));
                        Some(sig(key, sized(size, ret)?, args))
                    },
                    describe,
                )),
            );
        }
        // `rand(d0, d1, ...)` and `randn(d0, d1, ...)`: a scalar without dimensions.
        for name in ["rand", "randn"] {
            let key = leak(name);
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        if !a.iter().all(|t| t.is_integer()) {
                            return None;
                        }
                        let ret = if a.is_empty() {
                            FLOAT64
                        } else {
                            array(FLOAT64, a.len() as u32, Layout::C)
                        };
                        Some(sig(key, ret, vec![INT64; a.len()]))
                    },
                    "(d0: int, d1: int, ...)",
                )),
            );
        }
        // `randint(high)`, `randint(low, high)`, `randint(low, high, size)`; `high=None`
        // means `[0, low)`, as in NumPy.
        self.register(
            "numpy.random.randint",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let (low, high, size) = match a {
                        [l] => (*l, None, None),
                        [l, h] => (*l, Some(*h), None),
                        [l, h, s] => (*l, Some(*h), Some(*s)),
                        _ => return None,
                    };
                    if !int_scalar(low) || !high.is_none_or(|h| h == NONE || int_scalar(h)) {
                        return None;
                    }
                    let mut args = vec![INT64];
                    args.extend(high.map(|h| if h == NONE { NONE } else { INT64 }));
                    args.extend(size.map(TypeId::unliteral));
                    Some(sig("numpy.random.randint", sized(size, INT64)?, args))
                },
                "(low: int, high: int = None, size=None)",
            )),
        );
        // `choice(a, size=None, replace=True)`: Numba's signature, without `p`.
        self.register(
            "numpy.random.choice",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let (pop, rest) = a.split_first()?;
                    if rest.len() > 2 {
                        return None;
                    }
                    let (pop, dtype) = if pop.is_integer() {
                        (INT64, INT64)
                    } else {
                        match array_parts(*pop)? {
                            (d, 1, ..) => (*pop, d),
                            _ => return None,
                        }
                    };
                    let size = rest.first().copied();
                    let mut args = vec![pop];
                    args.extend(size.map(TypeId::unliteral));
                    if let Some(&r) = rest.get(1) {
                        if !int_scalar(r) {
                            return None;
                        }
                        args.push(BOOLEAN);
                    }
                    Some(sig("numpy.random.choice", sized(size, dtype)?, args))
                },
                "(a: int or 1-d array, size=None, replace=True)",
            )),
        );
        // `dirichlet(alpha, size=None)` and `multinomial(n, pvals, size=None)`: rows of
        // `len(alpha)` (`len(pvals)`) items, one per position of `size`.
        for (name, dtype) in [("dirichlet", FLOAT64), ("multinomial", INT64)] {
            let key = leak(name);
            let describe = if name == "dirichlet" {
                "(alpha: 1-d float64 array or tuple of floats, size=None)"
            } else {
                "(n: int, pvals: 1-d float64 array or tuple of floats, size=None)"
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        let (lead, vector, size) = match (name, a) {
                            ("dirichlet", [v]) => (None, *v, None),
                            ("dirichlet", [v, s]) => (None, *v, Some(*s)),
                            ("multinomial", [n, v]) => (Some(*n), *v, None),
                            ("multinomial", [n, v, s]) => (Some(*n), *v, Some(*s)),
                            _ => return None,
                        };
                        if lead.is_some_and(|n| !int_scalar(n)) || !vector_param(vector) {
                            return None;
                        }
                        let rank = match size.map(size_rank) {
                            None | Some(Some(None)) => 1,
                            Some(Some(Some(n))) => n + 1,
                            Some(None) => return None,
                        };
                        let mut args: Vec<TypeId> = lead.map(|_| INT64).into_iter().collect();
                        args.push(vector.unliteral());
                        args.extend(size.map(TypeId::unliteral));
                        Some(sig(key, array(dtype, rank, Layout::C), args))
                    },
                    describe,
                )),
            );
        }
        self.register(
            "numpy.random.shuffle",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => match array_parts(*x)? {
                        (_, n, _, false) if n >= 1 => {
                            Some(sig("numpy.random.shuffle", NONE, vec![*x]))
                        }
                        _ => None,
                    },
                    _ => None,
                },
                "(x: writable array)",
            )),
        );
        self.register(
            "numpy.random.permutation",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.is_integer() => Some(sig(
                        "numpy.random.permutation",
                        array(INT64, 1, Layout::C),
                        vec![INT64],
                    )),
                    [x] => {
                        let (d, n, ..) = array_parts(*x)?;
                        (n >= 1).then(|| {
                            sig("numpy.random.permutation", array(d, n, Layout::C), vec![*x])
                        })
                    }
                    _ => None,
                },
                "(x: int or array)",
            )),
        );
    }
}
