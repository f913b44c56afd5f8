//! The typing context: how globals, attributes, operators and calls are typed.
//!
//! Operators and builtins are templates registered by key in [`BaseContext`]; a user adds
//! their own with [`BaseContext::register`]. Calls to other jitted functions go through a
//! [`CalleeResolver`] supplied by whoever drives compilation (numba-dispatch).

use indexmap::IndexMap;
use numba_bytecode::Constant;
use numba_ir::{ArrayLayout, BinOp, ConstArray, Global, GlobalKind, UnaryOp};

use crate::conv::{can_convert, unify, Conversion};
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// A typing template for a function key: given argument types, the signature it accepts.
pub trait FunctionTemplate: Send + Sync {
    /// The signature for these argument types, or `None` when they are not accepted.
    fn generic(&self, args: &[TypeId]) -> Option<Signature>;
    /// Human-readable accepted signatures, for error messages.
    fn describe(&self) -> String {
        String::new()
    }
    /// Why `args` are rejected, when the template can say more than "no signature
    /// matched" (the message replaces the generic one).
    fn explain(&self, _args: &[TypeId]) -> Option<String> {
        None
    }
}

/// A threading-layer setter taking one integer, with Numba's message for anything else.
struct IntSetter {
    key: &'static str,
    ret: TypeId,
    need: &'static str,
}

impl FunctionTemplate for IntSetter {
    fn generic(&self, args: &[TypeId]) -> Option<Signature> {
        match args {
            [t] if t.unliteral().is_integer() => Some(Signature {
                ret: self.ret,
                args: vec![t.unliteral()],
                key: ImplKey::Function(self.key.to_string()),
            }),
            _ => None,
        }
    }
    fn describe(&self) -> String {
        "(int)".into()
    }
    fn explain(&self, args: &[TypeId]) -> Option<String> {
        (args.len() == 1).then(|| self.need.to_string())
    }
}

/// What a call to another jitted function resolves to.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// Compiled (or typed): its return type.
    Resolved(TypeId),
    /// A specialisation for other argument types the call's arguments convert to (the
    /// callee's explicit signatures forbid compiling one for them): its return type and
    /// argument types, which the call converts its arguments to.
    Converted { ret: TypeId, args: Vec<TypeId> },
    /// Currently being compiled further up the stack (recursion): return type not known yet.
    InProgress,
    /// The callee asks for these of its arguments (by position) as literal types
    /// (`literally`): the caller passes its literal types, or asks for its own.
    ForceLiteral(Vec<usize>),
}

/// The loop a call to a numba-rs ufunc from jitted code runs: the kernel (a jitted
/// function) with the argument types it was compiled for, applied element by element
/// (vectorize) or to core-dimension views (guvectorize).
#[derive(Debug, Clone, PartialEq)]
pub struct UFuncLoop {
    /// The kernel's dispatcher.
    pub kernel: u64,
    /// The kernel's argument types: a vectorize loop's scalar inputs; a gufunc's
    /// arguments, inputs and outputs (arrays of the core rank, scalars for `()` inputs).
    pub args: Vec<TypeId>,
    /// The kernel's result: a vectorize loop's output element; `none` for a gufunc.
    pub ret: TypeId,
    pub nin: usize,
    pub nout: usize,
    /// A gufunc's core dimensions of each argument (inputs, then outputs), as indices
    /// of the layout's dimension names (`(m,n),(n)->(m)` is `[[0,1],[1],[0]]`); `None`
    /// for vectorize.
    pub core: Option<Vec<Vec<u32>>>,
}

/// Types calls to other jitted functions, compiling them as needed.
pub trait CalleeResolver {
    /// The loop a numba-rs ufunc runs for a call with these argument types (arrays and
    /// scalars, outputs included when passed), chosen among its loops by NumPy's casting
    /// rules or compiled; the error text says why there is none.
    fn resolve_ufunc(&self, _ufunc_id: u64, _args: &[TypeId]) -> Result<UFuncLoop, String> {
        Err("numba-rs ufuncs cannot be called from this compilation".into())
    }
    fn resolve_call(&self, dispatcher_id: u64, args: &[TypeId]) -> Result<CallOutcome, String>;
    /// The function being typed (`dispatcher_id`, `args`) has this return type so far:
    /// callers further down a mutual recursion may use it.
    fn publish_return(&self, _dispatcher_id: u64, _args: &[TypeId], _ret: TypeId) {}
    /// A jitted function's parameters, to bind keyword, omitted and extra positional
    /// arguments.
    fn parameters(&self, _dispatcher_id: u64) -> Option<Parameters> {
        None
    }
    /// Whether the dispatcher sees literal argument types (an extension's overload).
    fn literal_args(&self, _dispatcher_id: u64) -> crate::extension::LiteralArgs {
        crate::extension::LiteralArgs::Never
    }
}

/// A jitted function's parameters as calls bind them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parameters {
    /// The positional parameters' names.
    pub names: Vec<String>,
    /// The default values of the trailing positional parameters.
    pub defaults: Vec<Constant>,
    /// Whether a `*args` parameter follows them: a call's extra positional arguments
    /// are passed as one tuple.
    pub star: bool,
    /// The keyword-only parameters (after `*` or `*args`), each with its default if it
    /// has one; they follow the positional ones (and `*args`) in the callee's arguments.
    pub kwonly: Vec<(String, Option<Constant>)>,
}

impl Parameters {
    /// The parameters a code object declares (no defaults: those live on the function).
    pub fn of_code(code: &numba_bytecode::CodeObject) -> Self {
        Parameters {
            names: code
                .varnames()
                .iter()
                .take(code.argcount as usize)
                .cloned()
                .collect(),
            defaults: Vec::new(),
            star: code.flags & numba_bytecode::code::CO_VARARGS != 0,
            kwonly: code
                .varnames()
                .iter()
                .skip(code.argcount as usize)
                .take(code.kwonlyargcount as usize)
                .map(|n| (n.clone(), None))
                .collect(),
        }
    }
}

/// Resolution of globals, attributes, operators and calls.
pub trait TypingContext {
    /// The type of a global value.
    fn resolve_global(&self, g: &Global) -> Result<TypeId, String>;
    /// The type of `value.attr`.
    fn resolve_getattr(&self, value: TypeId, attr: &str) -> Option<TypeId>;
    /// A call to a function type (not a dispatcher) with these argument types.
    fn resolve_call(&self, func: TypeId, args: &[TypeId]) -> Option<Signature>;
    fn resolve_binop(&self, op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature>;
    fn resolve_unary(&self, op: UnaryOp, value: TypeId) -> Option<Signature>;
    /// Known signatures of a function type, for error messages.
    fn describe_function(&self, func: TypeId) -> String;
    /// A function's own explanation of why it rejects these argument types.
    fn explain_call(&self, _func: TypeId, _args: &[TypeId]) -> Option<String> {
        None
    }
    fn can_convert(&self, from: TypeId, to: TypeId) -> Option<Conversion> {
        can_convert(from, to)
    }
    fn unify(&self, a: TypeId, b: TypeId) -> Option<TypeId> {
        unify(a, b)
    }
}

/// The type of a constant value.
/// The type of a constant in the IR: ints, bools and strings are literal types, as in
/// Numba (`const(int, 1)` is `Literal[int](1)`).
pub fn typeof_const(c: &Constant) -> Option<TypeId> {
    Some(match c {
        Constant::Bool(b) => intern(Type::BooleanLiteral(*b)),
        Constant::Int(i) => intern(Type::IntegerLiteral(*i)),
        // 2**63 up to 2**64 - 1: Numba's uint64.
        Constant::BigInt { .. } if c.as_u64().is_some() => UINT64,
        Constant::Str(s) => intern(Type::StringLiteral(s.clone())),
        Constant::Bytes(_) => BYTES,
        Constant::Float(_) => FLOAT64,
        Constant::Complex(..) => COMPLEX128,
        Constant::None => NONE,
        Constant::Ellipsis => intern(Type::Ellipsis),
        // Items of a constant tuple are not literal: `(1, 2, 3)` is UniTuple(int64 x 3).
        Constant::Tuple(items) => {
            let tys: Vec<TypeId> = items
                .iter()
                .map(|c| typeof_const(c).map(TypeId::unliteral))
                .collect::<Option<_>>()?;
            tuple_of(&tys)
        }
        _ => return None,
    })
}

/// The dtypes a global array may have: those numba-rs compiles arrays of.
const CONST_ARRAY_DTYPES: &[&str] = &[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
];

/// The type of a global array: `typeof` of the value (dtype, ndim, the layout its flags
/// give) made readonly, as Numba's `typeof_global` types it ("a global array in nopython
/// mode is constant"): writing into it is a typing error.
pub fn typeof_const_array(a: &ConstArray) -> Result<TypeId, String> {
    let dtype = CONST_ARRAY_DTYPES
        .contains(&a.dtype.as_str())
        .then(|| from_name(&a.dtype))
        .flatten()
        .or_else(|| crate::npdatetime::parse(&a.dtype))
        // A structured dtype is named by its record type (`Record(x[type=int8;...])`).
        .or_else(|| parse_type(&a.dtype).filter(|t| matches!(t.get(), Type::Record { .. })))
        .ok_or_else(|| format!("Unsupported array dtype: {}", a.dtype))?;
    let layout = match a.layout {
        ArrayLayout::C => Layout::C,
        ArrayLayout::F => Layout::F,
        ArrayLayout::A => Layout::A,
    };
    Ok(intern(Type::Array {
        dtype,
        ndim: a.shape.len() as u32,
        layout,
        readonly: true,
    }))
}

/// The type of a global NumPy scalar (a 0-d capture): its dtype, as Numba's typeof
/// gives it, among the dtypes numba-rs compiles.
pub fn typeof_const_scalar(a: &ConstArray) -> Result<TypeId, String> {
    CONST_ARRAY_DTYPES
        .contains(&a.dtype.as_str())
        .then(|| from_name(&a.dtype))
        .flatten()
        .filter(|t| t.is_scalar())
        .or_else(|| crate::npdatetime::parse(&a.dtype))
        .ok_or_else(|| format!("Cannot determine Numba type of <class 'numpy.{}'>", a.dtype))
}

/// The type of a global bound to a value frozen into the code: a constant, an array or
/// a tuple of these (its items unliteral and its arrays readonly, as Numba types a global
/// tuple holding arrays). `None` for the other kinds of global.
pub fn typeof_global_value(kind: &GlobalKind) -> Option<Result<TypeId, String>> {
    Some(match kind {
        GlobalKind::Const(c) => typeof_const(c)
            .ok_or_else(|| format!("Cannot determine Numba type of constant {}", c.py_repr())),
        GlobalKind::Array(a) => typeof_const_array(a),
        GlobalKind::Scalar(a) => typeof_const_scalar(a),
        GlobalKind::Tuple(items) => items
            .iter()
            .map(|k| {
                typeof_global_value(k)
                    .unwrap_or_else(|| {
                        Err("a tuple global holds a value numba-rs cannot freeze".into())
                    })
                    .map(TypeId::unliteral)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|tys| tuple_of(&tys)),
        GlobalKind::Slice(a, b, c) => Ok(intern(Type::SliceLiteral(*a, *b, *c))),
        // A jitted function held in a frozen tuple.
        GlobalKind::Dispatcher { id, name } => Ok(intern(Type::Dispatcher {
            id: *id,
            name: name.clone(),
        })),
        _ => return None,
    })
}

/// A template from a closure.
pub struct FnTemplate<F>(pub F, pub &'static str);

impl<F> FunctionTemplate for FnTemplate<F>
where
    F: Fn(&[TypeId]) -> Option<Signature> + Send + Sync,
{
    fn generic(&self, args: &[TypeId]) -> Option<Signature> {
        (self.0)(args)
    }
    fn describe(&self) -> String {
        self.1.to_string()
    }
}

/// The default typing context: operators, builtins and `math`, plus user templates.
pub struct BaseContext {
    functions: IndexMap<String, Box<dyn FunctionTemplate>>,
    module_consts: IndexMap<String, TypeId>,
}

impl std::fmt::Debug for BaseContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseContext")
            .field("functions", &self.functions.keys().collect::<Vec<_>>())
            .finish()
    }
}

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

/// The common arithmetic type of numeric operands (bool counts as an integer).
pub fn arith_type(tys: &[TypeId]) -> Option<TypeId> {
    let tys: Vec<TypeId> = tys
        .iter()
        .map(|&t| if t == BOOLEAN { INT64 } else { t })
        .collect();
    if !tys.iter().all(|t| t.is_number()) || tys.is_empty() {
        return None;
    }
    // Numba's `choose_result_int`: integers compute in machine ints, signed when any
    // operand is signed (uint64 with int64 is int64, uint8 with uint8 is uint64).
    if tys.iter().all(|t| t.is_integer()) {
        return Some(if tys.iter().any(|t| t.is_signed()) {
            INT64
        } else {
            UINT64
        });
    }
    let mut acc: Option<TypeId> = None;
    for t in tys {
        let t = if t.is_integer() {
            if t.is_signed() || t.bitwidth() < 64 {
                INT64
            } else {
                UINT64
            }
        } else {
            t
        };
        acc = Some(match acc {
            None => t,
            Some(a) => unify(a, t)?,
        });
    }
    acc
}

/// The type Numba compares (and takes `min`/`max` of) numbers in: [`arith_type`], except
/// that uint64 with a signed integer is float64 (Numba's templates have no mixed-sign
/// integer loop and float64 is the safe conversion of both; `arith_type`'s int64 would
/// read values from 2**63 as negative).
pub fn compare_type(tys: &[TypeId]) -> Option<TypeId> {
    let tys: Vec<TypeId> = tys.iter().map(|t| t.unliteral()).collect();
    let tys = tys.as_slice();
    let signed = tys.iter().any(|t| t.is_integer() && t.is_signed());
    let u64_ = tys.contains(&UINT64);
    if signed && u64_ {
        // The integers as float64, with whatever else is there (a float or complex).
        let mut rest: Vec<TypeId> = tys.iter().filter(|t| !t.is_integer()).copied().collect();
        rest.push(FLOAT64);
        return arith_type(&rest);
    }
    arith_type(tys)
}

impl BaseContext {
    /// The built-in context, made once per process: for lookups that need no
    /// function-specific state (the lowering's scalar helpers). Building one registers
    /// every template, about 60 µs.
    pub fn builtin() -> &'static BaseContext {
        static BUILTIN: std::sync::LazyLock<BaseContext> =
            std::sync::LazyLock::new(BaseContext::default);
        &BUILTIN
    }
}

impl Default for BaseContext {
    fn default() -> Self {
        let mut ctx = BaseContext {
            functions: IndexMap::new(),
            module_consts: IndexMap::new(),
        };
        ctx.install_builtins();
        ctx.install_number_builtins();
        ctx.install_exception_intrinsics();
        ctx.install_cmath();
        ctx.install_random();
        ctx.install_operator_module();
        crate::cinterop::install(&mut ctx);
        ctx.install_numpy_random();
        ctx.install_np_generator();
        ctx.install_numpy();
        ctx.install_linalg();
        ctx.install_iterables();
        ctx.install_dicts();
        ctx.install_typed_lists();
        ctx.install_jitclass();
        ctx.install_cuda();
        ctx
    }
}

impl BaseContext {
    /// Register (or replace) the template for a function key. Globals resolve to keys as
    /// `name` for builtins and `module.name` for module functions.
    pub fn register(&mut self, key: impl Into<String>, template: Box<dyn FunctionTemplate>) {
        self.functions.insert(key.into(), template);
    }

    /// Remove and return the template of a key (to wrap it in another).
    pub fn take_template(&mut self, key: &str) -> Option<Box<dyn FunctionTemplate>> {
        self.functions.shift_remove(key)
    }

    /// Register a numeric constant attribute of a module (`math.pi`).
    pub fn register_module_const(&mut self, key: impl Into<String>, ty: TypeId) {
        self.module_consts.insert(key.into(), ty);
    }

    /// Whether a function key has a template.
    pub fn has_function(&self, key: &str) -> bool {
        self.functions.contains_key(key)
    }

    /// Every registered function key, in registration order (for tidy tests that pair
    /// typing keys with lowering implementations).
    pub fn function_keys(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }

    fn install_builtins(&mut self) {
        // `type(x)` of a number: its class (`type(x)(0)` makes a number of x's type), as
        // Numba's `TypeBuiltin` gives a NumberClass.
        self.register(
            "type",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [t] if t.unliteral().is_scalar() => Some(sig(
                        "type",
                        intern(Type::NumberClass(t.unliteral())),
                        vec![t.unliteral()],
                    )),
                    _ => None,
                },
                "(number)",
            )),
        );
        let unary_float = |key: &'static str| {
            FnTemplate(
                move |a: &[TypeId]| match a {
                    [t] if t.is_scalar() && !t.is_complex() => {
                        Some(sig(key, FLOAT64, vec![FLOAT64]))
                    }
                    _ => None,
                },
                "(float64,) -> float64",
            )
        };
        for name in [
            "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
            "tanh", "log10", "log2", "log1p", "expm1", "fabs", "erf", "erfc", "gamma", "lgamma",
            "asinh", "acosh", "atanh", "degrees", "radians", "exp2", "cbrt",
        ] {
            let key: &'static str = Box::leak(format!("math.{name}").into_boxed_str());
            self.register(key, Box::new(unary_float(key)));
        }
        for name in ["floor", "ceil", "trunc"] {
            let key: &'static str = Box::leak(format!("math.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [t] if t.is_integer() || *t == BOOLEAN => {
                            Some(sig(key, INT64, vec![INT64]))
                        }
                        [t] if t.is_float() => Some(sig(key, INT64, vec![FLOAT64])),
                        _ => None,
                    },
                    "(float64,) -> int64",
                )),
            );
        }
        for name in ["isnan", "isinf", "isfinite"] {
            let key: &'static str = Box::leak(format!("math.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [t] if t.is_scalar() && !t.is_complex() => {
                            Some(sig(key, BOOLEAN, vec![FLOAT64]))
                        }
                        _ => None,
                    },
                    "(float64,) -> bool",
                )),
            );
        }
        for (name, doc) in [
            ("pow", "(float64, float64) -> float64"),
            ("atan2", "(float64, float64) -> float64"),
            ("hypot", "(float64, float64) -> float64"),
            ("copysign", "(float64, float64) -> float64"),
            ("fmod", "(float64, float64) -> float64"),
        ] {
            let key: &'static str = Box::leak(format!("math.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x, y]
                            if x.is_scalar()
                                && y.is_scalar()
                                && !x.is_complex()
                                && !y.is_complex() =>
                        {
                            Some(sig(key, FLOAT64, vec![FLOAT64, FLOAT64]))
                        }
                        _ => None,
                    },
                    doc,
                )),
            );
        }
        for c in ["pi", "e", "tau", "inf", "nan"] {
            self.register_module_const(format!("math.{c}"), FLOAT64);
        }
        for c in ["pi", "e", "inf", "nan"] {
            self.register_module_const(format!("numpy.{c}"), FLOAT64);
        }
        self.register_module_const("numpy.newaxis", NONE);
        self.register(
            "abs",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [t] if t.is_integer() || *t == BOOLEAN => {
                        let r = arith_type(&[*t])?;
                        Some(sig("abs", r, vec![r]))
                    }
                    [t] if t.is_float() => Some(sig("abs", *t, vec![*t])),
                    [t] if matches!(t.get(), Type::NPTimedelta(_)) => {
                        Some(sig("abs", *t, vec![*t]))
                    }
                    [t] if t.is_complex() => {
                        let r = if *t == COMPLEX64 { FLOAT32 } else { FLOAT64 };
                        Some(sig("abs", r, vec![*t]))
                    }
                    _ => None,
                },
                "(int64,) -> int64, (float64,) -> float64",
            )),
        );
        for (key, ret) in [("bool", BOOLEAN), ("int", INT64), ("float", FLOAT64)] {
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| conversion_sig(key, ret, a),
                    "(number,)",
                )),
            );
        }
        // `operator.truth(x)` is `bool(x)`.
        self.register(
            "operator.truth",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [_] => conversion_sig("bool", BOOLEAN, a),
                    _ => None,
                },
                "(object,)",
            )),
        );
        // `prange` is `range` to typing and to serial lowering; the parfor pass finds
        // its loops by the callee's key.
        // `numba.prange` too: code written for Numba reaches it as `numba.prange`.
        // An array comprehension's `range` under `parallel=` becomes the internal prange
        // (numba_ir::comprehension).
        for key in [
            "range",
            "numba_rs.prange",
            "numba.prange",
            "numba_rs.internal_prange",
        ] {
            self.register(
                key,
                Box::new(FnTemplate(
                    |a: &[TypeId]| {
                        let ok = (1..=3).contains(&a.len())
                            && a.iter().all(|t| t.is_integer() || *t == BOOLEAN);
                        ok.then(|| sig("range", RANGE_STATE64, vec![INT64; a.len()]))
                    },
                    "(int64,), (int64, int64), (int64, int64, int64)",
                )),
            );
        }
        // The threading layer's setters, callable from jitted code (as in Numba, whose
        // chunk sizes are C `unsigned int`s).
        for (key, alias, ret, need) in [
            (
                "numba_rs.set_num_threads",
                "numba.set_num_threads",
                NONE,
                "The number of threads specified must be an integer",
            ),
            (
                "numba_rs.set_parallel_chunksize",
                "numba.set_parallel_chunksize",
                UINT32,
                "The parallel chunksize must be an integer",
            ),
        ] {
            for name in [key, alias] {
                self.register(name, Box::new(IntSetter { key, ret, need }));
            }
        }
        for name in [
            "numba_rs.get_parallel_chunksize",
            "numba.get_parallel_chunksize",
        ] {
            self.register(
                name,
                Box::new(FnTemplate(
                    |a: &[TypeId]| {
                        a.is_empty()
                            .then(|| sig("numba_rs.get_parallel_chunksize", UINT32, vec![]))
                    },
                    "()",
                )),
            );
        }
        // The threading layer's queries, callable from jitted code (as in Numba).
        for (key, alias) in [
            ("numba_rs.get_num_threads", "numba.get_num_threads"),
            ("numba_rs.get_thread_id", "numba.get_thread_id"),
        ] {
            for name in [key, alias] {
                self.register(
                    name,
                    Box::new(FnTemplate(
                        move |a: &[TypeId]| a.is_empty().then(|| sig(key, INT64, vec![])),
                        "()",
                    )),
                );
            }
        }
        for key in ["min", "max"] {
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        // `min(array)`: the array's element type; `min(tuple)`: the
                        // items' common type.
                        if let [x] = a {
                            if let Some(items) = crate::conv::tuple_items(*x) {
                                let items: Vec<TypeId> =
                                    items.iter().map(|i| i.unliteral()).collect();
                                // Complex numbers are not ordered (Python's TypeError).
                                if items.is_empty()
                                    || !items.iter().all(|i| i.is_scalar() && !i.is_complex())
                                {
                                    return None;
                                }
                                let r = if items.iter().all(|&t| t == BOOLEAN) {
                                    BOOLEAN
                                } else {
                                    compare_type(&items)?
                                };
                                return Some(sig(key, r, vec![*x]));
                            }
                            let (d, ..) = crate::numpy::array_parts(*x)?;
                            return Some(sig(key, d, vec![*x]));
                        }
                        // Two datetimes (timedeltas): the later one in their common unit,
                        // NaT winning (Numba's, after NumPy 1.18).
                        if let [x, y] = a {
                            if crate::npdatetime::is_datetime_like(*x) {
                                let d = crate::npdatetime::binop(BinOp::Lt, *x, *y)?.args[0];
                                return Some(sig(key, d, vec![d, d]));
                            }
                        }
                        if a.len() < 2 || !a.iter().all(|t| t.is_scalar() && !t.is_complex()) {
                            return None;
                        }
                        let r = if a.iter().all(|&t| t == BOOLEAN) {
                            BOOLEAN
                        } else {
                            compare_type(a)?
                        };
                        Some(sig(key, r, vec![r; a.len()]))
                    },
                    "(number, number, ...)",
                )),
            );
        }
        self.register(
            "round",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [t] if t.is_float() => Some(sig("round", INT64, vec![FLOAT64])),
                    [t] if t.is_integer() => Some(sig("round", INT64, vec![INT64])),
                    // round(x, ndigits) keeps the float type.
                    [t, n] if t.is_float() && n.is_integer() => {
                        Some(sig("round", *t, vec![*t, INT64]))
                    }
                    _ => None,
                },
                "(float64,) -> int64, (float64, int64) -> float64",
            )),
        );
    }

    fn function_key(func: TypeId) -> Option<String> {
        match func.get() {
            Type::Function(k) => Some(k),
            Type::NumberClass(t) => Some(match t {
                BOOLEAN => "bool".into(),
                INT64 => "int".into(),
                _ => "float".into(),
            }),
            _ => None,
        }
    }
}

/// `bool(x)`, `int(x)`, `float(x)` as Numba types them (`key` and `ret` name which).
fn conversion_sig(key: &'static str, ret: TypeId, a: &[TypeId]) -> Option<Signature> {
    match a {
        [t] if t.is_scalar() && !(t.is_complex() && ret != BOOLEAN) => {
            Some(sig(key, ret, vec![*t]))
        }
        // `int(td)`: the count (as Numba's); `bool(td)`: whether it is
        // nonzero (NaT too, as NumPy).
        [t] if key != "float" && crate::npdatetime::is_datetime_like(*t) => {
            Some(sig(key, ret, vec![INT64]))
        }
        // A list's (a set's, a string's) truth: whether it has items.
        [t] if ret == BOOLEAN
            && matches!(
                t.get(),
                Type::List { .. } | Type::Set { .. } | Type::Dict { .. }
            ) =>
        {
            Some(sig(key, ret, vec![*t]))
        }
        [t] if ret == BOOLEAN && crate::strings::text_kind(*t).is_some() => {
            Some(sig(key, ret, vec![crate::strings::text_kind(*t)?]))
        }
        [] => Some(sig(key, ret, vec![])),
        _ => None,
    }
}

/// Builtins with no template here that a host types through its extension templates
/// (numba-py's `map` and `filter` overloads: generators over CPython's loop).
pub const HOST_TYPED_BUILTINS: &[&str] = &["map", "filter"];

impl TypingContext for BaseContext {
    fn resolve_global(&self, g: &Global) -> Result<TypeId, String> {
        match &g.kind {
            GlobalKind::Builtin(name) => Ok(match name.as_str() {
                "int" => intern(Type::NumberClass(INT64)),
                "float" => intern(Type::NumberClass(FLOAT64)),
                "bool" => intern(Type::NumberClass(BOOLEAN)),
                other if self.functions.contains_key(other) || HOST_TYPED_BUILTINS.contains(&other) => {
                    intern(Type::Function(other.into()))
                }
                other => return Err(format!("Untyped global name '{other}': the builtin {other} is not supported by numba-rs yet")),
            }),
            GlobalKind::Module(m) => Ok(intern(Type::Module(m.clone()))),
            GlobalKind::ModuleFunction { module, name } => {
                let key = format!("{module}.{name}");
                let dtype = crate::numpy::DTYPE_NAMES.iter().find(|(n, _)| n == name);
                if self.functions.contains_key(&key) {
                    Ok(intern(Type::Function(key)))
                } else if let (Some((_, d)), "numpy") = (dtype, module.as_str()) {
                    Ok(intern(Type::NumberClass(*d)))
                } else {
                    Err(format!("Untyped global name '{name}': {module}.{name} is not supported"))
                }
            }
            GlobalKind::ExceptionClass(n) => Ok(intern(Type::ExceptionClass(n.clone()))),
            GlobalKind::Const(_) | GlobalKind::Array(_) | GlobalKind::Scalar(_) | GlobalKind::Tuple(_) | GlobalKind::Slice(..) => {
                typeof_global_value(&g.kind).unwrap_or_else(|| Err("not a frozen value".into()))
            }
            GlobalKind::Dispatcher { id, name } => Ok(intern(Type::Dispatcher { id: *id, name: name.clone() })),
            GlobalKind::UFunc { id, name, gufunc } => Ok(intern(Type::UFunc { id: *id, name: name.clone(), gufunc: *gufunc })),
                        GlobalKind::EnumClass { name, key, members, int_enum } => Ok(intern(Type::EnumClass {
                name: name.clone(),
                class: key.clone(),
                members: members.clone(),
                int_enum: *int_enum,
            })),
            GlobalKind::NamedTupleClass { name, key, fields } => Ok(intern(Type::NamedTupleClass {
                name: name.clone(),
                class: key.clone(),
                names: fields.clone(),
            })),
            GlobalKind::Opaque { type_name } => Err(format!("Cannot determine Numba type of <class '{type_name}'>")),
            GlobalKind::UserValue { type_code, .. } => Ok(TypeId(*type_code)),
            GlobalKind::CFunction { name, signature, .. } => {
                let (ret, args) = crate::parse_signature(signature)
                    .map_err(|e| format!("the C function {name}: {e}"))?;
                Ok(intern(Type::ExternalFunctionPointer {
                    args,
                    ret: ret.unwrap_or(NONE),
                }))
            }
            GlobalKind::Unsupported { message } => Err(message.clone()),
            // Numba's exception-handling intrinsics (`numba.core.unsafe.eh`).
            GlobalKind::Intrinsic(n) => {
                let key = format!("intrinsic.{n}");
                if self.functions.contains_key(&key)
                    || key.starts_with(crate::extension::INTRINSIC_PREFIX)
                {
                    Ok(intern(Type::Function(key)))
                } else {
                    Err(format!("the {n} intrinsic is not supported by numba-rs"))
                }
            }
            GlobalKind::Undefined => Err("name is not defined".into()),
            // Only object-mode code calls lifted loops.
            GlobalKind::LiftedLoop { .. } => Err("a lifted loop is called from object mode only".into()),
            // `with` blocks are rewritten before typing (`numba_ir::withlift`); a context
            // manager used any other way has no nopython meaning.
            GlobalKind::WithContext(_) => Err("a context manager is only usable in a with statement".into()),
            // A type object used as a value (`Dict.empty(types.int64, types.float64)`):
            // Numba's `NumberClass` for numbers, `typeref[T]` for others.
            GlobalKind::TypeObject { code: Some(code), .. } => {
                let t = TypeId(*code);
                Ok(if t.is_number() || t == BOOLEAN {
                    intern(Type::NumberClass(t))
                } else {
                    intern(Type::TypeRef(t))
                })
            }
            GlobalKind::TypeObject { type_name, .. } => Err(format!("Cannot determine Numba type of <class '{type_name}'>")),
        }
    }

    fn resolve_getattr(&self, value: TypeId, attr: &str) -> Option<TypeId> {
        match value.get() {
            Type::Module(m) if m == "numpy" && (attr == "random" || attr == "linalg") => {
                Some(intern(Type::Module(format!("numpy.{attr}"))))
            }
            // Interned on use only: interning at start-up would renumber every later type.
            Type::Module(m) if m == "numpy.linalg" && attr == "LinAlgError" => Some(intern(
                Type::ExceptionClass("numpy.linalg.LinAlgError".into()),
            )),
            Type::Module(m) if m == "numpy" && Self::numpy_dtype(attr).is_some() => {
                Self::numpy_dtype(attr)
            }
            Type::Module(m)
                if m.starts_with(crate::cuda::MODULE)
                    && crate::cuda::getattr(&m, attr).is_some() =>
            {
                crate::cuda::getattr(&m, attr)
            }
            Type::Module(m) => {
                let attr = match m.as_str() {
                    "numpy" => crate::numpy::UFUNC_ALIASES
                        .iter()
                        .find(|(alias, _)| *alias == attr)
                        .map_or(attr, |(_, name)| name),
                    _ => attr,
                };
                let key = format!("{m}.{attr}");
                if self.functions.contains_key(&key) {
                    Some(intern(Type::Function(key)))
                } else {
                    self.module_consts.get(&key).copied()
                }
            }
            // An array of records: a field's view where no array attribute is so named.
            Type::Array { .. } => crate::numpy::array_attr(value, attr)
                .or_else(|| crate::records::array_field(value, attr)),
            Type::Record { .. } => crate::records::getattr(value, attr),
            Type::ArrayCTypes(_) if attr == "data" => Some(UINT64),
            // `a.dtype.type`: the scalar class (`a.dtype.type(0)` makes an element).
            Type::DType(d) if attr == "type" => Some(intern(Type::NumberClass(d))),
            // `a.dtype.kind` & co.: facts of the dtype, constants of the compiled code (a
            // library branches on `out.dtype.kind`).
            Type::DType(d) => crate::numpy::dtype_attr(d, attr),
            Type::ArrayFlags(_)
                if matches!(attr, "c_contiguous" | "f_contiguous" | "contiguous") =>
            {
                Some(BOOLEAN)
            }
            Type::Complex { bits } if attr == "real" || attr == "imag" => {
                Some(intern(Type::Float { bits: bits / 2 }))
            }
            Type::Complex { .. } | Type::Integer { .. } | Type::Float { .. }
                if attr == "conjugate" =>
            {
                Some(intern(Type::BoundFunction {
                    key: "number.conjugate".into(),
                    this: value,
                }))
            }
            // `x.item()` of a NumPy scalar: the value itself.
            Type::Boolean | Type::Complex { .. } | Type::Integer { .. } | Type::Float { .. }
                if attr == "item" =>
            {
                Some(intern(Type::BoundFunction {
                    key: "number.item".into(),
                    this: value,
                }))
            }
            Type::Integer { .. } | Type::Float { .. } if attr == "imag" => Some(value),
            // A slice's bounds (Numba's defaults filled in) and `s.indices(n)`.
            Type::Slice(_) if matches!(attr, "start" | "stop" | "step") => Some(INT64),
            Type::Slice(_) if attr == "indices" => Some(intern(Type::BoundFunction {
                key: "slice.indices".into(),
                this: value,
            })),
            Type::EnumClass {
                name,
                class,
                members,
                int_enum,
            } => members.iter().any(|(m, _)| m == attr).then(|| {
                intern(Type::EnumMember {
                    name,
                    class,
                    int_enum,
                })
            }),
            Type::EnumMember { .. } if attr == "value" => Some(INT64),
            Type::NamedTuple { .. } | Type::NamedUniTuple { .. } => {
                let (fields, names) = namedtuple_fields(value)?;
                let i = names.iter().position(|n| n == attr)?;
                Some(fields[i])
            }
            Type::Integer { .. } | Type::Float { .. } if attr == "real" => Some(value),
            Type::Generator { .. } => crate::generators::getattr(value, attr),
            // A class's constructor (`Dict.empty` of `numba_rs.typed.Dict`).
            Type::Function(k) if self.functions.contains_key(&format!("{k}.{attr}")) => {
                Some(intern(Type::Function(format!("{k}.{attr}"))))
            }
            Type::List { .. } => crate::lists::getattr(value, attr),
            Type::Set { .. } => crate::sets::getattr(value, attr),
            Type::Dict { .. } => crate::dicts::getattr(value, attr),
            Type::LiteralStrKeyDict { .. } => crate::dicts::literal_getattr(value, attr),
            // A jitclass instance's field (its methods are extension methods).
            Type::ClassInstance { .. } => crate::jitclass::field(value, attr).map(|(_, t)| t),
            // An optional instance's field (a linked node's `next`): read through the
            // value, as Numba's optional attribute access.
            Type::Optional(x) if matches!(x.get(), Type::ClassInstance { .. }) => {
                crate::jitclass::field(x, attr).map(|(_, t)| t)
            }
            // The model's ASCII flag (Numba's `_is_ascii` attribute wrapper).
            Type::Unicode | Type::StringLiteral(_) if attr == "_is_ascii" => Some(UINT32),
            // The cached hash (-1 until computed; a `str` argument brings CPython's).
            Type::Unicode | Type::StringLiteral(_) if attr == "_hash" => Some(INT64),
            Type::Unicode
            | Type::StringLiteral(_)
            | Type::Bytes
            | Type::CharSeq(_)
            | Type::UnicodeCharSeq(_) => crate::strings::getattr(value, attr),
            _ => None,
        }
    }

    fn resolve_call(&self, func: TypeId, args: &[TypeId]) -> Option<Signature> {
        if let Type::ExceptionClass(name) = func.get() {
            return Some(Signature {
                ret: intern(Type::ExceptionInstance(name.clone())),
                args: args.to_vec(),
                key: ImplKey::Exception(name),
            });
        }
        if let Type::NamedTupleClass { name, class, names } = func.get() {
            if args.len() != names.len() {
                return None;
            }
            let fields: Vec<TypeId> = args.iter().map(|a| a.unliteral()).collect();
            return Some(sig(
                "namedtuple",
                namedtuple_of(&name, &class, &names, &fields),
                fields,
            ));
        }
        if let Type::BoundFunction { key, this } = func.get() {
            if let Some(sig) = crate::generators::method(&key, this, args) {
                return Some(sig);
            }
            if key.starts_with("list.") {
                return crate::lists::method(&key, this, args);
            }
            if key.starts_with("set.") {
                return crate::sets::method(&key, this, args);
            }
            if key.starts_with("dict.") {
                return crate::dicts::method(&key, this, args);
            }
            if key.starts_with("literal_dict.") {
                return crate::dicts::literal_method(&key, this, args);
            }
            if key.starts_with("str.") || key.starts_with("bytes.") {
                return crate::strings::method(&key, this, args);
            }
            if key == "slice.indices" {
                return match args {
                    [n] if n.unliteral().is_integer() => Some(sig(
                        "slice.indices",
                        intern(Type::UniTuple(INT64, 3)),
                        vec![this, INT64],
                    )),
                    _ => None,
                };
            }
            if key == "number.item" {
                return args
                    .is_empty()
                    .then(|| sig("number.item", this, vec![this]));
            }
            if key == "number.conjugate" {
                return args
                    .is_empty()
                    .then(|| sig("number.conjugate", this, vec![this]));
            }
            return crate::numpy::array_method(&key, this, args);
        }
        if let Type::NumberClass(t) = func.get() {
            // `np.float32(x)`: a conversion to that number type.
            if !matches!(t, BOOLEAN | INT64 | FLOAT64) {
                return match args {
                    [x] if x.unliteral().is_scalar() => Some(sig("numberclass", t, vec![*x])),
                    _ => None,
                };
            }
        }
        let key = Self::function_key(func)?;
        self.functions.get(&key)?.generic(args)
    }

    fn resolve_binop(&self, op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
        binop_signature(op, lhs, rhs)
    }

    fn resolve_unary(&self, op: UnaryOp, value: TypeId) -> Option<Signature> {
        unary_signature(op, value)
    }

    fn describe_function(&self, func: TypeId) -> String {
        Self::function_key(func)
            .and_then(|k| self.functions.get(&k).map(|t| t.describe()))
            .unwrap_or_default()
    }
    fn explain_call(&self, func: TypeId, args: &[TypeId]) -> Option<String> {
        if let Type::BoundFunction { key, this } = func.get() {
            if key == "slice.indices" {
                // Numba's NumbaTypeErrors from `resolve_indices`.
                return Some(match args {
                    [t] => format!(
                        "'{}' object cannot be interpreted as an integer",
                        t.unliteral()
                    ),
                    _ => format!(
                        "indices() takes exactly one argument ({} given)",
                        args.len()
                    ),
                });
            }
            if key.starts_with("array.") {
                if let Some(m) = crate::numpy::array_explain(&key, this, args) {
                    return Some(m);
                }
            }
            return crate::sets::explain(&key, this, args)
                .or_else(|| crate::lists::explain(&key, this, args))
                .or_else(|| crate::dicts::explain(&key, this, args))
                .or_else(|| crate::dicts::literal_explain(&key))
                .or_else(|| crate::strings::explain(&key, this, args));
        }
        if let Some(m) = Self::function_key(func).and_then(|k| datetime_ufunc_explain(&k, args)) {
            return Some(m);
        }
        Self::function_key(func).and_then(|k| self.functions.get(&k)?.explain(args))
    }
}

/// Numba's message for `np.add` / `np.subtract` over datetime64 / timedelta64 operands
/// whose units do not combine (`datetime64[ns]` and `timedelta64[M]`).
fn datetime_ufunc_explain(key: &str, args: &[TypeId]) -> Option<String> {
    let (name, op) = match key {
        "numpy.add" => ("add", numba_ir::BinOp::Add),
        "numpy.subtract" => ("subtract", numba_ir::BinOp::Sub),
        _ => return None,
    };
    let elem = |t: TypeId| match crate::numpy::array_parts(t) {
        Some((d, ..)) => d,
        None => t.unliteral(),
    };
    let [a, b] = args else { return None };
    let (x, y) = (elem(*a), elem(*b));
    if !(crate::npdatetime::is_datetime_like(x) && crate::npdatetime::is_datetime_like(y)) {
        return None;
    }
    crate::npdatetime::binop(op, x, y)
        .is_none()
        .then(|| format!("ufunc '{name}' is not supported between {x} and {y}"))
}

/// The built-in typing of a binary operator (what [`BaseContext`] resolves).
pub fn binop_signature(op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    native_binop(op, lhs, rhs).or_else(|| {
        // A user's type that converts implicitly to a number (`can_convert_to`) takes
        // the number's operator, as Numba's own templates come before a library's
        // `@overload(operator.add)`; its operand is cast by the type's `lower_cast`.
        converted_binop(op, lhs, rhs)
    })
}

/// [`binop_signature`] for numba-rs's own types.
fn native_binop(op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    if let Some(sig) = crate::dtypes::binop(op, lhs, rhs) {
        return Some(sig);
    }
    if !lhs.is_array() && !rhs.is_array() {
        if let Some(sig) = crate::npdatetime::binop(op, lhs, rhs) {
            return Some(sig);
        }
    }
    if let Some(sig) = crate::lists::binop(op, lhs, rhs) {
        return Some(sig);
    }
    if let Some(sig) = crate::sets::binop(op, lhs, rhs) {
        return Some(sig);
    }
    if let Some(sig) = crate::dicts::binop(op, lhs, rhs) {
        return Some(sig);
    }
    // Enum members compare by identity (their values); IntEnum members are ints.
    if let (Type::EnumMember { .. }, Type::EnumMember { .. }) = (lhs.get(), rhs.get()) {
        if lhs == rhs && matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Is | BinOp::IsNot) {
            return Some(Signature {
                ret: BOOLEAN,
                args: vec![lhs, rhs],
                key: ImplKey::BinOp(op),
            });
        }
    }
    if !matches!(op, BinOp::Is | BinOp::IsNot)
        && (is_int_enum_member(lhs) || is_int_enum_member(rhs))
    {
        let l = if is_int_enum_member(lhs) { INT64 } else { lhs };
        let r = if is_int_enum_member(rhs) { INT64 } else { rhs };
        return binop_signature(op, l, r);
    }
    // `==` / `!=` with an optional operand: None equals None alone (CPython's), present
    // values compare as themselves.
    if matches!(op, BinOp::Eq | BinOp::Ne)
        && (matches!(lhs.get(), Type::Optional(_)) || matches!(rhs.get(), Type::Optional(_)))
    {
        let inner = |t: TypeId| match t.get() {
            Type::Optional(x) => x,
            _ => t,
        };
        let (l, r) = (inner(lhs), inner(rhs));
        if l == NONE || r == NONE || binop_signature(BinOp::Eq, l, r).is_some() {
            return Some(Signature {
                ret: BOOLEAN,
                args: vec![lhs, rhs],
                key: ImplKey::BinOp(op),
            });
        }
    }
    // An optional operand stands for its value (None is a TypeError at run time).
    if !matches!(op, BinOp::Is | BinOp::IsNot) {
        if let Type::Optional(x) = lhs.get() {
            return binop_signature(op, x, rhs);
        }
        if let Type::Optional(x) = rhs.get() {
            return binop_signature(op, lhs, x);
        }
    }
    let mk = |ret: TypeId, arg: TypeId| Signature {
        ret,
        args: vec![arg, arg],
        key: ImplKey::BinOp(op),
    };
    if let Some(sig) = crate::strings::text_binop(op, lhs, rhs) {
        return Some(sig);
    }
    match op {
        BinOp::Is | BinOp::IsNot => Some(Signature {
            ret: BOOLEAN,
            args: vec![lhs, rhs],
            key: ImplKey::BinOp(op),
        }),
        // A substring test.
        BinOp::In if lhs.unliteral() == UNICODE && rhs.unliteral() == UNICODE => {
            Some(mk(BOOLEAN, UNICODE))
        }
        // `item in container`: Numba's IR holds `contains(container, item)`.
        BinOp::In => {
            let elems = match crate::numpy::array_parts(lhs) {
                Some((d, ..)) => vec![d],
                None => crate::conv::tuple_items(lhs)?,
            };
            let comparable = elems
                .iter()
                .any(|&e| e == rhs.unliteral() || (e.is_scalar() && rhs.unliteral().is_scalar()));
            comparable.then(|| Signature {
                ret: BOOLEAN,
                args: vec![lhs, rhs.unliteral()],
                key: ImplKey::BinOp(op),
            })
        }
        _ if lhs.is_array() || rhs.is_array() => crate::numpy::array_binop(op, lhs, rhs),
        // `s * n` / `n * s`: the string repeated.
        BinOp::Mul
            if (lhs.unliteral() == UNICODE && rhs.unliteral().is_integer())
                || (lhs.unliteral().is_integer() && rhs.unliteral() == UNICODE) =>
        {
            let arg = |t: TypeId| {
                if t.unliteral() == UNICODE {
                    UNICODE
                } else {
                    INT64
                }
            };
            Some(Signature {
                ret: UNICODE,
                args: vec![arg(lhs), arg(rhs)],
                key: ImplKey::BinOp(op),
            })
        }
        // A string is never equal to a value of another kind (Numba's `unicode_eq`).
        BinOp::Eq | BinOp::Ne
            if (lhs.unliteral() == UNICODE) != (rhs.unliteral() == UNICODE)
                && [lhs, rhs].into_iter().all(|t| {
                    t.is_scalar()
                        || t == NONE
                        || t.unliteral() == UNICODE
                        || matches!(
                            t.get(),
                            Type::UniTuple(..)
                                | Type::Tuple(_)
                                | Type::List { .. }
                                | Type::Set { .. }
                                | Type::Dict { .. }
                        )
                }) =>
        {
            Some(Signature {
                ret: BOOLEAN,
                args: vec![lhs.unliteral(), rhs.unliteral()],
                key: ImplKey::BinOp(op),
            })
        }
        // Strings compare by code points and concatenate (literals as values).
        _ if lhs.unliteral() == UNICODE && rhs.unliteral() == UNICODE => match op {
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                Some(mk(BOOLEAN, UNICODE))
            }
            BinOp::Add => Some(mk(UNICODE, UNICODE)),
            _ => None,
        },
        // Tuples compare element-wise (lexicographically) and concatenate.
        _ if crate::conv::tuple_items(lhs).is_some() && crate::conv::tuple_items(rhs).is_some() => {
            let (l, r) = (
                crate::conv::tuple_items(lhs)?,
                crate::conv::tuple_items(rhs)?,
            );
            let ret = match op {
                BinOp::Eq | BinOp::Ne => BOOLEAN,
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                    let comparable = l.iter().zip(&r).all(|(&a, &b)| ordered_pair(a, b));
                    if !comparable {
                        return None;
                    }
                    BOOLEAN
                }
                BinOp::Add => tuple_of(&[l, r].concat()),
                _ => return None,
            };
            Some(Signature {
                ret,
                args: vec![lhs, rhs],
                key: ImplKey::BinOp(op),
            })
        }
        _ if !lhs.is_scalar() || !rhs.is_scalar() => None,
        BinOp::Lt | BinOp::Le | BinOp::Eq | BinOp::Ne | BinOp::Gt | BinOp::Ge => {
            if lhs == BOOLEAN && rhs == BOOLEAN {
                return Some(mk(BOOLEAN, BOOLEAN));
            }
            let t = compare_type(&[lhs.unliteral(), rhs.unliteral()])?;
            if t.is_complex() && !matches!(op, BinOp::Eq | BinOp::Ne) {
                return None;
            }
            Some(mk(BOOLEAN, t))
        }
        BinOp::And | BinOp::Or | BinOp::Xor => {
            if lhs == BOOLEAN && rhs == BOOLEAN {
                return Some(mk(BOOLEAN, BOOLEAN));
            }
            let t = arith_type(&[lhs, rhs])?;
            t.is_integer().then(|| mk(t, t))
        }
        BinOp::LShift | BinOp::RShift => {
            let t = arith_type(&[lhs, rhs])?;
            t.is_integer().then(|| mk(t, t))
        }
        BinOp::TrueDiv => {
            let t = arith_type(&[lhs, rhs])?;
            let t = if t.is_integer() { FLOAT64 } else { t };
            Some(mk(t, t))
        }
        BinOp::FloorDiv | BinOp::Mod => {
            let t = arith_type(&[lhs, rhs])?;
            (!t.is_complex()).then(|| mk(t, t))
        }
        BinOp::Pow => {
            let base = arith_type(&[lhs])?;
            let exp = arith_type(&[rhs])?;
            // An integer exponent keeps the base's type (Numba's int_power).
            if exp.is_integer() && (base.is_integer() || base.is_float()) {
                Some(Signature {
                    ret: base,
                    args: vec![base, INT64],
                    key: ImplKey::BinOp(op),
                })
            } else {
                // Complex powers too (CPython's algorithm, numba-lower's `power`).
                let t = arith_type(&[lhs, rhs])?;
                Some(mk(t, t))
            }
        }
        BinOp::Add | BinOp::Sub | BinOp::Mul => {
            let t = arith_type(&[lhs, rhs])?;
            Some(mk(t, t))
        }
        BinOp::MatMul => None,
    }
}

/// The built-in typing of a unary operator (what [`BaseContext`] resolves).
pub fn unary_signature(op: UnaryOp, value: TypeId) -> Option<Signature> {
    if let Some(sig) = crate::npdatetime::unary(op, value) {
        return Some(sig);
    }
    // An optional operand stands for its value (None is a TypeError at run time), as
    // in binary operators.
    if let Type::Optional(x) = value.get() {
        if op != UnaryOp::Not {
            return unary_signature(op, x);
        }
    }
    if value.is_array() {
        return crate::numpy::array_unary(op, value);
    }
    // `not s`, `not l`: the container's truth, negated.
    if op == UnaryOp::Not {
        let arg = crate::strings::text_kind(value).or_else(|| {
            matches!(
                value.get(),
                Type::List { .. } | Type::Set { .. } | Type::Dict { .. }
            )
            .then_some(value)
        });
        if let Some(arg) = arg {
            return Some(Signature {
                ret: BOOLEAN,
                args: vec![arg],
                key: ImplKey::Unary(op),
            });
        }
    }
    if !value.is_scalar() {
        return None;
    }
    let (ret, arg) = match op {
        UnaryOp::Not => (BOOLEAN, value),
        UnaryOp::Invert if value == BOOLEAN => (INT64, INT64),
        // Numba negates and inverts a narrow integer in its own width (`-uint8(5)` is
        // 251), then widens the result to 64 bits.
        UnaryOp::Invert | UnaryOp::Neg if value.is_integer() && value.bitwidth() < 64 => {
            (arith_type(&[value])?, value)
        }
        UnaryOp::Invert => {
            let t = arith_type(&[value])?;
            if !t.is_integer() {
                return None;
            }
            (t, t)
        }
        UnaryOp::Neg | UnaryOp::Pos => {
            let t = if value.is_float() || value.is_complex() {
                value
            } else {
                arith_type(&[value])?
            };
            (t, t)
        }
    };
    Some(Signature {
        ret,
        args: vec![arg],
        key: ImplKey::Unary(op),
    })
}

/// Whether `a < b` orders tuple elements of these types: numbers, strings, and tuples or
/// lists of such (Python compares them lexicographically).
fn ordered_pair(a: TypeId, b: TypeId) -> bool {
    let (a, b) = (a.unliteral(), b.unliteral());
    if a.is_scalar() && b.is_scalar() {
        return true;
    }
    if (a == UNICODE && b == UNICODE) || (a == BYTES && b == BYTES) {
        return true;
    }
    if let (Some(x), Some(y)) = (crate::conv::tuple_items(a), crate::conv::tuple_items(b)) {
        return x.iter().zip(&y).all(|(&p, &q)| ordered_pair(p, q));
    }
    matches!(a.get(), Type::List { .. }) && a == b && crate::lists::orderable(a)
}

/// An operator on a user's type that converts implicitly to a number: the operator of the
/// number it converts to (the other operand's type when that is a number, else `int64`,
/// then `float64`, as Numba's first matching integer and float cases), or None (also
/// when neither operand is a user's type).
fn converted_binop(op: BinOp, l: TypeId, r: TypeId) -> Option<Signature> {
    let opaque = |t: TypeId| matches!(t.get(), Type::Opaque { .. });
    if !opaque(l) && !opaque(r) {
        return None;
    }
    let mut targets: Vec<TypeId> = [l, r]
        .into_iter()
        .filter(|t| t.is_number())
        .map(|t| t.unliteral())
        .collect();
    targets.extend([INT64, FLOAT64]);
    for target in targets {
        let conv = |t: TypeId| {
            if !opaque(t) {
                return Some(t);
            }
            crate::conv::can_convert(t, target).map(|_| target)
        };
        let (Some(cl), Some(cr)) = (conv(l), conv(r)) else {
            continue;
        };
        if let Some(sig) = native_binop(op, cl, cr) {
            return Some(sig);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn global_array(
        dtype: &str,
        itemsize: usize,
        shape: Vec<i64>,
        layout: ArrayLayout,
    ) -> GlobalKind {
        let n: i64 = shape.iter().product();
        let data: Arc<[u8]> = vec![0u8; n as usize * itemsize].into();
        GlobalKind::Array(
            ConstArray::new(dtype, itemsize, shape, layout, data).expect("sizes match"),
        )
    }

    #[test]
    fn global_arrays_are_readonly_with_their_layout() {
        // Numba's `typeof_global`: typeof of the value, then `copy(readonly=True)`.
        let ty = |k: &GlobalKind| {
            typeof_global_value(k)
                .expect("a frozen value")
                .expect("typed")
                .to_string()
        };
        assert_eq!(
            ty(&global_array("float64", 8, vec![2, 3], ArrayLayout::C)),
            "readonly array(float64, 2d, C)"
        );
        assert_eq!(
            ty(&global_array("int32", 4, vec![2, 3], ArrayLayout::F)),
            "readonly array(int32, 2d, F)"
        );
        assert_eq!(
            ty(&global_array("uint8", 1, vec![4], ArrayLayout::A)),
            "readonly array(uint8, 1d, A)"
        );
        assert_eq!(
            ty(&global_array("complex64", 8, vec![], ArrayLayout::C)),
            "readonly array(complex64, 0d, C)"
        );
        assert_eq!(
            ty(&global_array("bool", 1, vec![3], ArrayLayout::C)),
            "readonly array(bool, 1d, C)"
        );
        // A tuple holding arrays: its items unliteral, its arrays readonly.
        let pair = GlobalKind::Tuple(vec![
            global_array("int64", 8, vec![3], ArrayLayout::C),
            GlobalKind::Const(Constant::Int(2)),
        ]);
        assert_eq!(ty(&pair), "Tuple(readonly array(int64, 1d, C), int64)");
        assert!(typeof_global_value(&GlobalKind::Module("numpy".into())).is_none());
    }

    #[test]
    fn unsupported_array_dtypes_are_named() {
        let half = global_array("float16", 2, vec![3], ArrayLayout::C);
        assert_eq!(
            typeof_global_value(&half),
            Some(Err("Unsupported array dtype: float16".to_string()))
        );
        let g = Global {
            kind: GlobalKind::Unsupported {
                message: "Unsupported array dtype: object".into(),
            },
            repr: "array([1, 'x'], dtype=object)".into(),
        };
        assert_eq!(
            BaseContext::default().resolve_global(&g),
            Err("Unsupported array dtype: object".to_string())
        );
    }
}
