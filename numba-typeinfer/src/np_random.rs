//! `numpy.random` typing: Numba's legacy-generator functions. The distributions take an
//! optional `size` (an int or a non-empty tuple of ints) and then give a C-ordered array of
//! that shape (`float64`, `int64` for `randint`); `rand(d0, ...)`/`randn(d0, ...)` take the
//! dimensions themselves; `choice`, `shuffle` and `permutation` work on an int population
//! or a 1-d (`choice`) / n-d (`shuffle`, `permutation`) array. Lowering is in numba-lower's
//! `impls/random.rs`.

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

/// The float distributions: their scalar parameters and those parameters' defaults.
const FLOAT_DISTRIBUTIONS: &[(&str, &[(&str, f64)])] = &[
    ("random", &[]),
    ("random_sample", &[]),
    ("sample", &[]),
    ("ranf", &[]),
    ("standard_normal", &[]),
    ("standard_exponential", &[]),
    ("normal", &[("loc", 0.0), ("scale", 1.0)]),
    ("uniform", &[("low", 0.0), ("high", 1.0)]),
    ("exponential", &[("scale", 1.0)]),
];

/// Parameter names of the `numpy.random` functions that take keywords.
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    let name = key.strip_prefix("numpy.random.")?;
    Some(match name {
        "random"
        | "random_sample"
        | "sample"
        | "ranf"
        | "standard_normal"
        | "standard_exponential" => &["size"],
        "normal" => &["loc", "scale", "size"],
        "uniform" => &["low", "high", "size"],
        "exponential" => &["scale", "size"],
        "randint" => &["low", "high", "size"],
        "choice" => &["a", "size", "replace"],
        "shuffle" | "permutation" => &["x"],
        "seed" => &["seed"],
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
    FLOAT_DISTRIBUTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, params)| params.iter().find(|(p, _)| *p == param))
        .map(|(_, d)| Constant::Float(*d))
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
        for &(name, params) in FLOAT_DISTRIBUTIONS {
            let key = leak(name);
            let describe: &'static str = Box::leak(
                format!(
                    "({}size=None); size: None, an int or a tuple of ints",
                    params
                        .iter()
                        .map(|(p, d)| format!("{p}={d:?}, "))
                        .collect::<String>()
                )
                .into_boxed_str(),
            );
            let n = params.len();
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        if a.len() > n + 1 || !a.iter().take(n).all(|&t| real_scalar(t)) {
                            return None;
                        }
                        let size = a.get(n).copied();
                        let mut args = vec![FLOAT64; a.len().min(n)];
                        args.extend(size.map(TypeId::unliteral));
                        Some(sig(key, sized(size, FLOAT64)?, args))
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
