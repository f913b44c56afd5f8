//! Typing of the builtins over numbers and tuples that are not operators: `divmod`, `pow`,
//! `hash`, `sum`, `min`/`max` of a tuple, `reversed(range)`, and `math.frexp`,
//! `math.ldexp`, `math.gcd`. Their lowering is under the same names in numba-lower's
//! `impls/builtins.rs` and `impls/math.rs`.

use numba_ir::BinOp;

use crate::context::{arith_type, binop_signature, BaseContext, FnTemplate};
use crate::conv::tuple_items;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

/// The common type of a tuple's scalar items (bool counts as int, as Python adds them).
fn tuple_arith(t: TypeId) -> Option<TypeId> {
    let items = tuple_items(t)?;
    if items.is_empty() || !items.iter().all(|i| i.unliteral().is_scalar()) {
        return None;
    }
    let items: Vec<TypeId> = items.iter().map(|i| i.unliteral()).collect();
    arith_type(&items)
}

/// The keys `literally` is typed under: the function itself (an intrinsic global), and
/// as an attribute of the `numba` or `numba_rs` module.
pub const LITERALLY_KEYS: &[&str] = &[
    "intrinsic.literally",
    "numba.literally",
    "numba_rs.literally",
];

impl BaseContext {
    /// `try`/`except`: the intrinsics the interpreter calls (`numba.core.unsafe.eh`).
    pub(crate) fn install_exception_intrinsics(&mut self) {
        // `literally(x)`: the identity on a literal argument (a non-literal one is
        // handled by the inference engine, which asks for it as a literal).
        for key in LITERALLY_KEYS {
            self.register(
                *key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] if x.is_literal() => Some(sig(key, *x, vec![*x])),
                        _ => None,
                    },
                    "(literal)",
                )),
            );
        }
        for (name, ret) in [
            ("mark_try_block", NONE),
            ("end_try_block", NONE),
            ("exception_check", BOOLEAN),
        ] {
            let key: &'static str = Box::leak(format!("intrinsic.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| a.is_empty().then(|| sig(key, ret, vec![])),
                    "()",
                )),
            );
        }
        // Array comprehensions (numba_ir::comprehension): the length of what the loop
        // iterates (`len` of it); the allocation's dtype is inferred from the stores
        // (`infer.rs`).
        self.register(
            "intrinsic.length_of_iterator",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.is_array()
                        || tuple_items(*x).is_some()
                        || *x == RANGE_STATE64
                        || matches!(x.get(), Type::List { .. } | Type::Set { .. }) =>
                    {
                        Some(sig("intrinsic.length_of_iterator", INTP, vec![*x]))
                    }
                    _ => None,
                },
                "(range,), (array,), (tuple,), (list,), (set,)",
            )),
        );
        // A `functools.reduce` loop's iterable under `parallel=` (numba_ir::reduce): the
        // iterable itself.
        self.register(
            "intrinsic.reduce_source",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => Some(sig(
                        "intrinsic.reduce_source",
                        x.unliteral(),
                        vec![x.unliteral()],
                    )),
                    _ => None,
                },
                "(iterable,)",
            )),
        );
        self.register(
            "intrinsic.empty_inferred",
            Box::new(FnTemplate(|_: &[TypeId]| None, "(shape tuple,)")),
        );
        self.register(
            "intrinsic.exception_match",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [v, cls] if matches!(cls.get(), Type::ExceptionClass(_)) => {
                        Some(sig("intrinsic.exception_match", BOOLEAN, vec![*v, *cls]))
                    }
                    _ => None,
                },
                "(exception, exception class)",
            )),
        );
    }

    pub(crate) fn install_number_builtins(&mut self) {
        self.register(
            "divmod",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y] if x.is_scalar() && y.is_scalar() => {
                        let t = arith_type(&[*x, *y]).filter(|t| !t.is_complex())?;
                        Some(sig("divmod", intern(Type::UniTuple(t, 2)), vec![t, t]))
                    }
                    _ => None,
                },
                "(number, number)",
            )),
        );
        self.register(
            "pow",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y] => {
                        let s = binop_signature(BinOp::Pow, *x, *y)?;
                        Some(sig("pow", s.ret, s.args))
                    }
                    [x, y, m] if [x, y, m].iter().all(|t| t.is_integer() || **t == BOOLEAN) => {
                        Some(sig("pow", INT64, vec![INT64; 3]))
                    }
                    _ => None,
                },
                "(number, number), (int, int, int)",
            )),
        );
        // `str(x)`, `ord(c)`, `chr(i)` (Numba's unicode overloads).
        self.register(
            "str",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [] => Some(sig("str", UNICODE, vec![])),
                    [x] if crate::strings::text_kind(*x) == Some(UNICODE) => {
                        Some(sig("str", UNICODE, vec![UNICODE]))
                    }
                    // `str(b)` of bytes is its repr.
                    [x] if crate::strings::text_kind(*x) == Some(BYTES) => {
                        Some(sig("str", UNICODE, vec![BYTES]))
                    }
                    [x] if x.unliteral().is_integer()
                        || x.unliteral() == BOOLEAN
                        || x.unliteral().is_float() =>
                    {
                        Some(sig("str", UNICODE, vec![x.unliteral()]))
                    }
                    _ => None,
                },
                "(), (str | int | bool | float,)",
            )),
        );
        // `repr(x)` / `ascii(x)` of strings, bytes and numbers (f-strings' `!r`, `!a`).
        for key in ["repr", "ascii"] {
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] if crate::strings::text_kind(*x).is_some() => {
                            Some(sig(key, UNICODE, vec![crate::strings::text_kind(*x)?]))
                        }
                        [x] if x.unliteral().is_integer()
                            || x.unliteral() == BOOLEAN
                            || x.unliteral().is_float() =>
                        {
                            Some(sig(key, UNICODE, vec![x.unliteral()]))
                        }
                        _ => None,
                    },
                    "(str | bytes | int | bool | float,)",
                )),
            );
        }
        // `bytes(b)` of bytes or an `S` array's item (Numba's `charseq_bytes`).
        self.register(
            "bytes",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if crate::strings::text_kind(*x) == Some(BYTES) => {
                        Some(sig("bytes", BYTES, vec![BYTES]))
                    }
                    _ => None,
                },
                "(bytes,)",
            )),
        );
        // `format(x, spec)`: Python's format-spec mini-language for numbers and strings.
        self.register(
            "format",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    // Strings (character-array items as the strings they hold) and
                    // numbers.
                    let value = |x: TypeId| {
                        let x = crate::strings::held_text(x.unliteral());
                        (x == UNICODE || x.is_integer() || x == BOOLEAN || x.is_float())
                            .then_some(x)
                    };
                    match a {
                        [x] => Some(sig("format", UNICODE, vec![value(*x)?])),
                        [x, s] if s.unliteral() == UNICODE => {
                            Some(sig("format", UNICODE, vec![value(*x)?, UNICODE]))
                        }
                        _ => None,
                    }
                },
                "(str | int | bool | float, str)",
            )),
        );
        self.register(
            "ord",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if crate::strings::text_kind(*x) == Some(UNICODE) => {
                        Some(sig("ord", INT64, vec![UNICODE]))
                    }
                    _ => None,
                },
                "(str,)",
            )),
        );
        self.register(
            "chr",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.unliteral().is_integer() => Some(sig("chr", UNICODE, vec![INT64])),
                    _ => None,
                },
                "(int,)",
            )),
        );
        self.register(
            "hash",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.is_scalar() && !x.is_complex() => Some(sig("hash", INT64, vec![*x])),
                    // datetime64 / timedelta64: their int64 count (Numba's; NumPy 2.2
                    // refuses a generic timedelta at run time).
                    [x] if crate::npdatetime::is_datetime_like(*x) => {
                        Some(sig("hash", INT64, vec![*x]))
                    }
                    // Strings and bytes (character-array items as what they hold).
                    [x] if crate::strings::text_kind(*x).is_some() => {
                        Some(sig("hash", INT64, vec![crate::strings::text_kind(*x)?]))
                    }
                    // Complex numbers, strings and tuples hash as CPython's.
                    [x] if crate::sets::hashable(x.unliteral()) => {
                        Some(sig("hash", INT64, vec![x.unliteral()]))
                    }
                    _ => None,
                },
                "(int | float | bool | complex | str | tuple,)",
            )),
        );
        self.register(
            "sum",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [t] => {
                        let r = tuple_arith(*t)?;
                        Some(sig("sum", r, vec![*t]))
                    }
                    [t, start] if start.is_scalar() => {
                        let r = arith_type(&[tuple_arith(*t)?, *start])?;
                        Some(sig("sum", r, vec![*t, r]))
                    }
                    _ => None,
                },
                "(tuple,), (tuple, start)",
            )),
        );
        self.register(
            "tuple",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [] => Some(sig("tuple", intern(Type::Tuple(Vec::new())), Vec::new())),
                    // A tuple stays itself (what `(*t, x)` and `f(x, *t)` build on).
                    [t] if crate::conv::tuple_items(*t).is_some() => {
                        Some(sig("tuple", *t, vec![*t]))
                    }
                    _ => None,
                },
                "(), (tuple,)",
            )),
        );
        self.register(
            "reversed",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [r] if *r == RANGE_STATE64 => {
                        Some(sig("reversed", RANGE_STATE64, vec![RANGE_STATE64]))
                    }
                    // A list's items in reverse order (iterated from a reversed copy).
                    [l] => match l.get() {
                        Type::List { dtype, .. } => {
                            Some(sig("list.reversed", crate::lists::list_of(dtype), vec![*l]))
                        }
                        _ => None,
                    },
                    _ => None,
                },
                "(range,), (list,)",
            )),
        );
        self.register(
            "math.frexp",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.is_scalar() && !x.is_complex() => Some(sig(
                        "math.frexp",
                        tuple_of(&[FLOAT64, INT64]),
                        vec![FLOAT64],
                    )),
                    _ => None,
                },
                "(float64,) -> Tuple(float64, int64)",
            )),
        );
        self.register(
            "math.ldexp",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, e] if x.is_scalar() && !x.is_complex() && e.is_integer() => {
                        Some(sig("math.ldexp", FLOAT64, vec![FLOAT64, INT64]))
                    }
                    _ => None,
                },
                "(float64, int64) -> float64",
            )),
        );
        self.register(
            "math.gcd",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y]
                        if (x.is_integer() || *x == BOOLEAN)
                            && (y.is_integer() || *y == BOOLEAN) =>
                    {
                        Some(sig("math.gcd", INT64, vec![INT64, INT64]))
                    }
                    _ => None,
                },
                "(int64, int64) -> int64",
            )),
        );
    }
}

/// The `cmath` functions Numba supports that map a number to a complex number.
pub const CMATH_COMPLEX: &[&str] = &[
    "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh",
];

/// NumPy's complex loops that have no `cmath` function (`np.log2`, `np.expm1`, ...), typed
/// under `npcomplex.<name>` for the ufunc lowering (no Python module has these names).
pub const NPY_COMPLEX: &[&str] = &["log2", "expm1", "log1p", "exp2", "rint"];

/// The complex functions the runtime's `numba_rs_cmath` computes, by operation number.
pub fn complex_fn_index(name: &str) -> Option<usize> {
    CMATH_COMPLEX
        .iter()
        .chain(NPY_COMPLEX)
        .position(|n| *n == name)
}

impl BaseContext {
    pub(crate) fn install_cmath(&mut self) {
        let complex_of = |t: TypeId| {
            if t == COMPLEX64 {
                COMPLEX64
            } else {
                COMPLEX128
            }
        };
        let keys = CMATH_COMPLEX
            .iter()
            .map(|n| format!("cmath.{n}"))
            .chain(NPY_COMPLEX.iter().map(|n| format!("npcomplex.{n}")));
        for key in keys {
            let key: &'static str = Box::leak(key.into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [z] if z.is_scalar() => {
                            let c = complex_of(*z);
                            Some(sig(key, c, vec![c]))
                        }
                        _ => None,
                    },
                    "(complex,) -> complex",
                )),
            );
        }
        for (name, ret) in [
            ("isnan", BOOLEAN),
            ("isinf", BOOLEAN),
            ("isfinite", BOOLEAN),
            ("phase", FLOAT64),
        ] {
            let key: &'static str = Box::leak(format!("cmath.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [z] if z.is_scalar() => Some(sig(key, ret, vec![COMPLEX128])),
                        _ => None,
                    },
                    "(complex,)",
                )),
            );
        }
        self.register(
            "cmath.polar",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [z] if z.is_scalar() => Some(sig(
                        "cmath.polar",
                        intern(Type::UniTuple(FLOAT64, 2)),
                        vec![COMPLEX128],
                    )),
                    _ => None,
                },
                "(complex,) -> UniTuple(float64 x 2)",
            )),
        );
        self.register(
            "cmath.rect",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [r, phi]
                        if r.is_scalar()
                            && phi.is_scalar()
                            && !r.is_complex()
                            && !phi.is_complex() =>
                    {
                        Some(sig("cmath.rect", COMPLEX128, vec![FLOAT64, FLOAT64]))
                    }
                    _ => None,
                },
                "(float64, float64) -> complex128",
            )),
        );
        for c in ["pi", "e", "tau", "inf", "nan"] {
            self.register_module_const(format!("cmath.{c}"), FLOAT64);
        }
        for c in ["infj", "nanj"] {
            self.register_module_const(format!("cmath.{c}"), COMPLEX128);
        }
    }
}

/// The number of float arguments of each `random` distribution Numba supports.
const RANDOM_FLOAT_FNS: &[(&str, usize)] = &[
    ("uniform", 2),
    ("gauss", 2),
    ("normalvariate", 2),
    ("lognormvariate", 2),
    ("expovariate", 1),
    ("paretovariate", 1),
    ("weibullvariate", 2),
    ("gammavariate", 2),
    ("betavariate", 2),
    ("vonmisesvariate", 2),
];

impl BaseContext {
    pub(crate) fn install_random(&mut self) {
        let real = |t: &TypeId| (t.is_integer() || t.is_float()) && !t.is_complex();
        let int = |t: &TypeId| t.is_integer() || *t == BOOLEAN;
        self.register(
            "random.seed",
            Box::new(FnTemplate(
                move |a: &[TypeId]| match a {
                    [n] if int(n) => Some(sig("random.seed", NONE, vec![INT64])),
                    _ => None,
                },
                "(int,)",
            )),
        );
        self.register(
            "random.random",
            Box::new(FnTemplate(
                |a: &[TypeId]| a.is_empty().then(|| sig("random.random", FLOAT64, vec![])),
                "()",
            )),
        );
        self.register(
            "random.getrandbits",
            Box::new(FnTemplate(
                move |a: &[TypeId]| match a {
                    [k] if int(k) => Some(sig("random.getrandbits", UINT64, vec![INT64])),
                    _ => None,
                },
                "(int,)",
            )),
        );
        self.register(
            "random.randrange",
            Box::new(FnTemplate(
                move |a: &[TypeId]| {
                    ((1..=3).contains(&a.len()) && a.iter().all(int))
                        .then(|| sig("random.randrange", INT64, vec![INT64; a.len()]))
                },
                "(stop,), (start, stop), (start, stop, step)",
            )),
        );
        self.register(
            "random.randint",
            Box::new(FnTemplate(
                move |a: &[TypeId]| match a {
                    [x, y] if int(x) && int(y) => {
                        Some(sig("random.randint", INT64, vec![INT64, INT64]))
                    }
                    _ => None,
                },
                "(int, int)",
            )),
        );
        for &(name, n) in RANDOM_FLOAT_FNS {
            let key: &'static str = Box::leak(format!("random.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        (a.len() == n && a.iter().all(real))
                            .then(|| sig(key, FLOAT64, vec![FLOAT64; n]))
                    },
                    "(float, ...)",
                )),
            );
        }
        // `random.shuffle(x)` on an array: in place along the first axis (Numba's).
        self.register(
            "random.shuffle",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => match x.get() {
                        Type::Array {
                            ndim,
                            readonly: false,
                            ..
                        } if ndim >= 1 => Some(sig("random.shuffle", NONE, vec![*x])),
                        _ => None,
                    },
                    _ => None,
                },
                "(x: writable array)",
            )),
        );
        self.register(
            "random.triangular",
            Box::new(FnTemplate(
                move |a: &[TypeId]| {
                    ((2..=3).contains(&a.len()) && a.iter().all(real))
                        .then(|| sig("random.triangular", FLOAT64, vec![FLOAT64; a.len()]))
                },
                "(low, high), (low, high, mode)",
            )),
        );
    }
}

/// The `operator` module's functions: the binary and unary operators they are.
const OPERATOR_FNS: &[(&str, Option<BinOp>, Option<numba_ir::UnaryOp>)] = &[
    ("add", Some(BinOp::Add), None),
    ("iadd", Some(BinOp::Add), None),
    ("sub", Some(BinOp::Sub), None),
    ("isub", Some(BinOp::Sub), None),
    ("mul", Some(BinOp::Mul), None),
    ("imul", Some(BinOp::Mul), None),
    ("truediv", Some(BinOp::TrueDiv), None),
    ("itruediv", Some(BinOp::TrueDiv), None),
    ("floordiv", Some(BinOp::FloorDiv), None),
    ("ifloordiv", Some(BinOp::FloorDiv), None),
    ("mod", Some(BinOp::Mod), None),
    ("imod", Some(BinOp::Mod), None),
    ("pow", Some(BinOp::Pow), None),
    ("ipow", Some(BinOp::Pow), None),
    ("lshift", Some(BinOp::LShift), None),
    ("ilshift", Some(BinOp::LShift), None),
    ("rshift", Some(BinOp::RShift), None),
    ("irshift", Some(BinOp::RShift), None),
    ("and_", Some(BinOp::And), None),
    ("iand", Some(BinOp::And), None),
    ("or_", Some(BinOp::Or), None),
    ("ior", Some(BinOp::Or), None),
    ("xor", Some(BinOp::Xor), None),
    ("ixor", Some(BinOp::Xor), None),
    ("lt", Some(BinOp::Lt), None),
    ("le", Some(BinOp::Le), None),
    ("eq", Some(BinOp::Eq), None),
    ("ne", Some(BinOp::Ne), None),
    ("gt", Some(BinOp::Gt), None),
    ("ge", Some(BinOp::Ge), None),
    ("is_", Some(BinOp::Is), None),
    ("is_not", Some(BinOp::IsNot), None),
    ("contains", Some(BinOp::In), None),
    ("neg", None, Some(numba_ir::UnaryOp::Neg)),
    ("pos", None, Some(numba_ir::UnaryOp::Pos)),
    ("invert", None, Some(numba_ir::UnaryOp::Invert)),
    ("inv", None, Some(numba_ir::UnaryOp::Invert)),
    ("not_", None, Some(numba_ir::UnaryOp::Not)),
];

impl BaseContext {
    /// `operator.add(a, b)` and friends: typed (and lowered) as the operators themselves.
    pub(crate) fn install_operator_module(&mut self) {
        for &(name, bin, un) in OPERATOR_FNS {
            let key: &'static str = Box::leak(format!("operator.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match (a, bin, un) {
                        // `operator.iadd(a, x)` of an array writes into `a`, as `a += x`.
                        ([x, y], Some(op), _)
                            if name.starts_with('i')
                                && !matches!(name, "is_" | "is_not")
                                && x.is_array() =>
                        {
                            let s = binop_signature(op, *x, *y)?;
                            crate::numpy::inplace_array_binop(op, s, *y).ok()
                        }
                        ([x, y], Some(op), _) => binop_signature(op, *x, *y),
                        ([x], _, Some(op)) => crate::context::unary_signature(op, *x),
                        _ => None,
                    },
                    "(operands)",
                )),
            );
        }
    }
}
