//! NumPy typing: arrays (attributes, methods, indexing, iteration, operators with
//! broadcasting), the `numpy` module's creation functions, ufuncs, `np.dot` and the
//! linear algebra of `np.linalg` (with `np.vdot`, `np.outer`, `np.trace`).
//!
//! Result types follow NumPy's type promotion as Numba applies it (ufunc loops on the
//! arguments' dtypes; integer inputs to float-only functions give `float64`; reductions of
//! small integers accumulate in `int64`/`uint64`). Arrays a function creates are C-ordered.

use numba_ir::{BinOp, UnaryOp};

use crate::context::{BaseContext, FnTemplate};
use crate::conv::{promote_numbers, tuple_items};
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// Parameter names of the functions whose keyword arguments typing accepts.
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "numpy.empty" | "numpy.zeros" | "numpy.ones" => &["shape", "dtype"],
        "numba.carray" | "numba.farray" | "numba_rs.carray" | "numba_rs.farray" => {
            &["ptr", "shape", "dtype"]
        }
        "numpy.full" => &["shape", "fill_value", "dtype"],
        "numpy.empty_like" | "numpy.zeros_like" | "numpy.ones_like" => &["a", "dtype"],
        "numpy.full_like" => &["a", "fill_value", "dtype"],
        "numpy.arange" => &["start", "stop", "step", "dtype"],
        "numpy.linspace" => &["start", "stop", "num"],
        "numpy.dot" | "numpy.vdot" | "numpy.outer" | "numpy.linalg.solve" => &["a", "b"],
        "numpy.linalg.inv"
        | "numpy.linalg.det"
        | "numpy.linalg.slogdet"
        | "numpy.linalg.eig"
        | "numpy.linalg.eigvals"
        | "numpy.linalg.eigh"
        | "numpy.linalg.eigvalsh"
        | "numpy.linalg.qr"
        | "numpy.linalg.cholesky" => &["a"],
        "numpy.linalg.svd" => &["a", "full_matrices"],
        "numpy.linalg.lstsq" => &["a", "b", "rcond"],
        "numpy.linalg.norm" => &["x", "ord"],
        "numpy.linalg.matrix_rank" => &["A", "tol"],
        "numpy.linalg.pinv" => &["a", "rcond"],
        "numpy.trace" => &["a", "offset"],
        "numpy.array" => &["object", "dtype"],
        "numpy.sum" | "numpy.prod" | "numpy.mean" | "numpy.min" | "numpy.max" | "numpy.argmin"
        | "numpy.argmax" => &["a", "axis"],
        "numpy.amax" | "numpy.amin" | "numpy.cumsum" | "numpy.cumprod" => &["a", "axis"],
        "numpy.round" | "numpy.around" | "numpy.round_" => &["a", "decimals"],
        "array.round" => &["decimals"],
        "array.sum" | "array.prod" | "array.mean" | "array.min" | "array.max" | "array.argmin"
        | "array.argmax" => &["axis"],
        "numpy.argsort" => &["a", "kind"],
        "numpy.identity" => &["n", "dtype"],
        "numpy.eye" => &["N", "M", "k", "dtype"],
        "array.argsort" => &["kind"],
        "list.sort" => &["key", "reverse"],
        "sorted" => &["iterable", "key", "reverse"],
        // A ufunc's output array given by keyword (`np.add(a, b, out=c)`): the
        // positional form (NumPy's parameter names).
        k if ufunc_nin(k) == Some(1) => &["x", "out"],
        k if ufunc_nin(k) == Some(2) => &["x1", "x2", "out"],
        _ => {
            return crate::np_random::param_names(key)
                .or_else(|| crate::dicts::param_names(key))
                .or_else(|| crate::lists::param_names(key))
                .or_else(|| crate::numpy_manip::param_names(key))
                .or_else(|| crate::strings::param_names(key))
                .or_else(|| crate::cuda::param_names(key))
        }
    })
}

/// The default of a parameter that keywords may skip over (`np.eye(3, dtype=...)`).
pub fn param_default(key: &str, param: &str) -> Option<numba_bytecode::Constant> {
    use numba_bytecode::Constant;
    match (key, param) {
        ("numpy.eye", "M") => Some(Constant::None),
        ("numpy.eye", "k") => Some(Constant::Int(0)),
        ("numpy.arange", "stop" | "step" | "dtype") => Some(Constant::None),
        ("list.sort" | "sorted", "key") => Some(Constant::None),
        ("list.sort" | "sorted", "reverse") => Some(Constant::Bool(false)),
        ("list.index", "start") => Some(Constant::Int(0)),
        _ => crate::np_random::param_default(key, param)
            .or_else(|| crate::numpy_manip::param_default(key, param))
            .or_else(|| crate::strings::param_default(key, param)),
    }
}

/// The dtype names `numpy` exposes as number classes (`np.float64(x)`, `dtype=np.int32`).
pub const DTYPE_NAMES: &[(&str, TypeId)] = &[
    ("bool_", BOOLEAN),
    ("bool", BOOLEAN),
    ("int8", INT8),
    ("int16", INT16),
    ("int32", INT32),
    ("int64", INT64),
    ("intp", INT64),
    ("uint8", UINT8),
    ("uint16", UINT16),
    ("uint32", UINT32),
    ("uint64", UINT64),
    ("float32", FLOAT32),
    ("float64", FLOAT64),
    ("double", FLOAT64),
    ("complex64", COMPLEX64),
    ("complex128", COMPLEX128),
    // NumPy's C-named aliases (LP64 Linux sizes, as Numba's typeof gives them).
    ("int_", INT64),
    ("long", INT64),
    ("longlong", INT64),
    ("intc", INT32),
    ("short", INT16),
    ("byte", INT8),
    ("uint", UINT64),
    ("uintp", UINT64),
    ("ulong", UINT64),
    ("ulonglong", UINT64),
    ("uintc", UINT32),
    ("ushort", UINT16),
    ("ubyte", UINT8),
    ("single", FLOAT32),
    ("csingle", COMPLEX64),
    ("cdouble", COMPLEX128),
];

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

/// `np.array(obj[, dtype])` of a scalar, a (nested) tuple or an array: a new C array.
pub(crate) fn array_from(a: &[TypeId]) -> Option<Signature> {
    let (obj, dtype) = match a {
        [o] => (*o, None),
        [o, d] => (*o, Some(dtype_arg(*d)?)),
        _ => return None,
    };
    let obj = obj.unliteral();
    let (d, n) = match array_parts(obj) {
        Some((d, n, ..)) => (d, n),
        // Nested lists of numbers: one dimension per level.
        None if crate::lists::list_dtype(obj).is_some() => crate::lists::nested_list_parts(obj)?,
        None => {
            let (shape, leaves) = nested_shape(obj)?;
            let mut d = *leaves.first()?;
            for &l in &leaves[1..] {
                d = promote_dtypes(d, l)?;
            }
            (d, shape.len() as u32)
        }
    };
    let mut args = a.to_vec();
    args[0] = obj;
    Some(sig(
        "numpy.array",
        array(dtype.unwrap_or(d), n, Layout::C),
        args,
    ))
}

/// NumPy's `same_kind` casting between two element types (a ufunc's result into its
/// output array): within a kind any width, or up the order bool < unsigned < signed <
/// float < complex.
pub fn same_kind_cast(from: TypeId, to: TypeId) -> bool {
    let kind = |t: TypeId| {
        if t == BOOLEAN {
            0
        } else if t.is_integer() && !t.is_signed() {
            1
        } else if t.is_integer() {
            2
        } else if t.is_float() {
            3
        } else {
            4
        }
    };
    kind(from) <= kind(to)
}

/// Whether a datetime64 / timedelta64 result stores into an output array of `to`: the
/// same kind (datetime into datetime, timedelta into timedelta) in a unit it converts to
/// exactly (the same or a finer one).
fn datetime_out_cast(from: TypeId, to: TypeId) -> bool {
    match (from.get(), to.get()) {
        (Type::NPDatetime(a), Type::NPDatetime(b))
        | (Type::NPTimedelta(a), Type::NPTimedelta(b)) => crate::npdatetime::factor(a, b).is_some(),
        _ => false,
    }
}

/// A ufunc call with its output array given last (`np.add(a, b, out)`): the inputs typed
/// by `inner`, the result written into `out` (broadcast, cast under `same_kind`), the
/// call's value `out` itself. Other calls are `inner`'s.
pub(crate) fn ufunc_with_out(
    key: &'static str,
    a: &[TypeId],
    nin: usize,
    inner: &dyn Fn(&[TypeId]) -> Option<Signature>,
) -> Option<Signature> {
    if a.len() != nin + 1 {
        return inner(a);
    }
    let out = a[nin];
    let (out_dtype, out_ndim, _, readonly) = array_parts(out)?;
    if readonly {
        return None;
    }
    let s = inner(&a[..nin])?;
    let res = any_element(s.ret)?;
    let in_ndim = s
        .args
        .iter()
        .filter_map(|&t| array_parts(t))
        .map(|p| p.1)
        .max()
        .unwrap_or(0);
    let castable = if crate::npdatetime::is_datetime_like(res)
        || crate::npdatetime::is_datetime_like(out_dtype)
    {
        datetime_out_cast(res, out_dtype)
    } else {
        res.is_scalar() && same_kind_cast(res, out_dtype)
    };
    if in_ndim > out_ndim || !castable {
        return None;
    }
    let mut args = s.args.clone();
    args.push(out);
    Some(sig(key, out, args))
}

/// An array's `(dtype, ndim, layout, readonly)`.
pub fn array_parts(t: TypeId) -> Option<(TypeId, u32, Layout, bool)> {
    match t.get() {
        Type::Array {
            dtype,
            ndim,
            layout,
            readonly,
        } => Some((dtype, ndim, layout, readonly)),
        _ => None,
    }
}

/// Unary ufuncs whose integer inputs give float64 (NumPy's float-only loops).
pub const FLOAT_UFUNCS: &[&str] = &[
    "sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "expm1", "log1p", "exp2", "cbrt",
    "deg2rad", "radians", "rad2deg", "degrees", "rint", "fabs", "spacing",
];

/// Ufuncs NumPy has no complex loops for (a complex argument is a typing error).
pub const REAL_UFUNCS: &[&str] = &[
    "floor",
    "ceil",
    "trunc",
    "cbrt",
    "deg2rad",
    "radians",
    "rad2deg",
    "degrees",
    "fabs",
    "spacing",
    "signbit",
    "arctan2",
    "hypot",
    "copysign",
    "fmod",
    "gcd",
    "lcm",
    "ldexp",
    "logaddexp",
    "logaddexp2",
    "nextafter",
];

/// NumPy 2's second names of ufuncs (`np.acos is np.arccos`): the attribute resolves to
/// the first name's function, as Numba resolves the same object.
pub const UFUNC_ALIASES: &[(&str, &str)] = &[
    ("acos", "arccos"),
    ("acosh", "arccosh"),
    ("asin", "arcsin"),
    ("asinh", "arcsinh"),
    ("atan", "arctan"),
    ("atanh", "arctanh"),
    ("atan2", "arctan2"),
    ("pow", "power"),
    ("bitwise_invert", "invert"),
    ("bitwise_left_shift", "left_shift"),
    ("bitwise_right_shift", "right_shift"),
];

/// Unary ufuncs typed from their input's kind (`floor` of an int gives a float, `abs` of
/// a complex its float, `logical_not` a bool; the rest keep the input's type).
pub const SAME_KIND_UFUNCS: &[&str] = &[
    "abs",
    "absolute",
    "negative",
    "square",
    "floor",
    "ceil",
    "trunc",
    "sign",
    "logical_not",
    "positive",
    "reciprocal",
    "signbit",
];

/// Binary ufuncs, with broadcasting.
pub const BINARY_UFUNCS: &[&str] = &[
    "add",
    "subtract",
    "multiply",
    "power",
    "minimum",
    "maximum",
    "arctan2",
    "divide",
    "true_divide",
    "hypot",
    "logical_and",
    "logical_or",
    "logical_xor",
    "copysign",
    "fmax",
    "fmin",
    "fmod",
    "gcd",
    "lcm",
    "ldexp",
    "logaddexp",
    "logaddexp2",
    "nextafter",
    "float_power",
];

/// Binary ufuncs that are an operator (`np.bitwise_and(a, b)` is `a & b`): typed and
/// lowered as the operator, so that they also fuse into array expressions as it does. The
/// first name of an operator is the ufunc's `__name__` (`np.mod` is `np.remainder`).
pub const OPERATOR_UFUNCS: &[(&str, BinOp)] = &[
    ("bitwise_and", BinOp::And),
    ("bitwise_or", BinOp::Or),
    ("bitwise_xor", BinOp::Xor),
    ("left_shift", BinOp::LShift),
    ("right_shift", BinOp::RShift),
    ("floor_divide", BinOp::FloorDiv),
    ("remainder", BinOp::Mod),
    ("mod", BinOp::Mod),
    ("greater", BinOp::Gt),
    ("greater_equal", BinOp::Ge),
    ("less", BinOp::Lt),
    ("less_equal", BinOp::Le),
    ("equal", BinOp::Eq),
    ("not_equal", BinOp::Ne),
];

/// `np.invert` (`np.bitwise_not`), the `~` operator; on a bool it is `not`, as in NumPy.
pub const INVERT_UFUNCS: &[&str] = &["invert", "bitwise_not"];

/// The ufunc name of an operator's signature (`bitwise_and` for `&`), for reports.
pub fn operator_ufunc_name(key: &ImplKey) -> Option<&'static str> {
    match key {
        ImplKey::BinOp(op) => OPERATOR_UFUNCS
            .iter()
            .find(|(_, o)| o == op)
            .map(|(n, _)| *n),
        ImplKey::Unary(UnaryOp::Invert | UnaryOp::Not) => Some(INVERT_UFUNCS[0]),
        _ => None,
    }
}

/// The number of inputs of the NumPy ufunc a typing key (`numpy.sqrt`) names, if it is
/// one numba-rs types element-wise.
pub fn ufunc_nin(key: &str) -> Option<usize> {
    let name = key.strip_prefix("numpy.")?;
    if FLOAT_UFUNCS.contains(&name) || SAME_KIND_UFUNCS.contains(&name) {
        Some(1)
    } else if BINARY_UFUNCS.contains(&name) {
        Some(2)
    } else {
        None
    }
}

/// The element type a value contributes to a ufunc: an array's dtype or the scalar itself.
fn element(t: TypeId) -> Option<TypeId> {
    let t = t.unliteral();
    match array_parts(t) {
        // Number ufuncs refuse datetime64 / timedelta64 elements (see `any_element`).
        Some((d, ..)) if crate::npdatetime::is_datetime_like(d) => None,
        Some((d, ..)) => Some(d),
        None if t.is_scalar() => Some(t),
        None => None,
    }
}

/// [`element`], datetime64 and timedelta64 values included (for the operations defined
/// on them: the operators, `isnat` & co.).
fn any_element(t: TypeId) -> Option<TypeId> {
    let t = t.unliteral();
    match array_parts(t) {
        Some((d, ..)) => Some(d),
        None if t.is_scalar() || crate::npdatetime::is_datetime_like(t) => Some(t),
        None => None,
    }
}

/// NumPy's promotion of two dtypes, with bool behaving as the smallest integer.
pub fn promote_dtypes(a: TypeId, b: TypeId) -> Option<TypeId> {
    match (a, b) {
        (BOOLEAN, BOOLEAN) => Some(BOOLEAN),
        (BOOLEAN, x) | (x, BOOLEAN) => Some(x),
        _ => promote_numbers(a, b),
    }
}

/// The loop a ufunc picks for two inputs, as Numba's `ufunc_find_matching_loop`: with an
/// integer and an inexact input, the integer may cast "same kind" to the inexact type, so
/// the first loop accepting the inexact input wins (`minimum(int64, float32)` is float32);
/// otherwise NumPy's promotion.
pub fn ufunc_loop(a: TypeId, b: TypeId) -> Option<TypeId> {
    let int_like = |t: TypeId| t.is_integer() || t == BOOLEAN;
    match (int_like(a), int_like(b)) {
        (true, false) if b.is_float() || b.is_complex() => Some(b),
        (false, true) if a.is_float() || a.is_complex() => Some(a),
        _ => promote_dtypes(a, b),
    }
}

/// The result of a ufunc or array operator over `args`: a scalar when no argument is an
/// array or every array is 0-d (Numba's ufunc typing, and NumPy's result), else an array
/// of the broadcast rank ([`ufunc_layout`]).
fn ufunc_result(args: &[TypeId], dtype: TypeId) -> TypeId {
    match broadcast(args, dtype).get() {
        Type::Array { ndim: 0, .. } => dtype,
        _ => broadcast(args, dtype),
    }
}

/// The result of an element-wise operation over `args`: a scalar when no argument is an
/// array, else an array of the broadcast rank laid out as [`ufunc_layout`] says.
fn broadcast(args: &[TypeId], dtype: TypeId) -> TypeId {
    let ndim = args
        .iter()
        .filter_map(|&a| array_parts(a).map(|p| p.1))
        .max();
    match ndim {
        None => dtype,
        Some(n) => array(dtype, n, ufunc_layout(args)),
    }
}

/// The layout of a ufunc's or array operator's new result (Numba's `_handle_inputs`, and
/// what NumPy's `K` order gives for such inputs): Fortran order when no array argument is
/// C-ordered and one is Fortran-ordered, C order otherwise.
pub fn ufunc_layout(args: &[TypeId]) -> Layout {
    let layouts: Vec<Layout> = args
        .iter()
        .filter_map(|&a| array_parts(a).map(|p| p.2))
        .collect();
    if !layouts.contains(&Layout::C) && layouts.contains(&Layout::F) {
        Layout::F
    } else {
        Layout::C
    }
}

/// `float64` for integer inputs to a float-only function, the dtype itself otherwise.
pub fn float_result(d: TypeId) -> TypeId {
    // NumPy's float loops are `e`, `f`, `d`: Numba has no float16, so it takes the first
    // loop the input casts to safely after that one: float32 for bools and 8/16-bit
    // integers, float64 for wider ones.
    if d == BOOLEAN || (d.is_integer() && d.bitwidth() <= 16) {
        FLOAT32
    } else if d.is_integer() {
        FLOAT64
    } else {
        d
    }
}

/// `dtype.kind`, `.char`, `.name`, `.itemsize`, `.str` of a number dtype: NumPy's values,
/// as literal types (constants of the compiled code).
pub fn dtype_attr(d: TypeId, attr: &str) -> Option<TypeId> {
    let (kind, ch) = match d.get() {
        Type::Boolean => ('b', '?'),
        Type::Integer { bits, signed } => {
            let ch = match (bits, signed) {
                (8, true) => 'b',
                (8, false) => 'B',
                (16, true) => 'h',
                (16, false) => 'H',
                (32, true) => 'i',
                (32, false) => 'I',
                (_, true) => 'l',
                (_, false) => 'L',
            };
            (if signed { 'i' } else { 'u' }, ch)
        }
        Type::Float { bits } => ('f', if bits == 32 { 'f' } else { 'd' }),
        Type::Complex { bits } => ('c', if bits == 64 { 'F' } else { 'D' }),
        _ => return None,
    };
    let size = if d == BOOLEAN {
        1
    } else {
        i64::from(d.bitwidth() / 8)
    };
    let text = |s: String| Some(intern(Type::StringLiteral(s)));
    match attr {
        "kind" => text(kind.to_string()),
        "char" => text(ch.to_string()),
        "name" => text(if d == BOOLEAN {
            "bool".into()
        } else {
            d.to_string()
        }),
        "str" => text(format!("{}{kind}{size}", if size == 1 { '|' } else { '<' })),
        "itemsize" | "alignment" => Some(intern(Type::IntegerLiteral(size))),
        _ => None,
    }
}

/// The result of a mean or a NaN-skipping statistic: float64 for integers and bools
/// (NumPy's and Numba's), the float or complex type itself otherwise.
pub fn mean_result(d: TypeId) -> TypeId {
    if d.is_integer() || d == BOOLEAN {
        FLOAT64
    } else {
        d
    }
}

/// Reductions accumulate small integers in 64 bits (Numba's `_expand_integer`).
fn accumulate(d: TypeId) -> TypeId {
    if d == BOOLEAN || (d.is_integer() && d.is_signed()) {
        INT64
    } else if d.is_integer() {
        UINT64
    } else {
        d
    }
}

/// A shape argument: an integer or a tuple of integers; gives the rank.
pub(crate) fn shape_rank(t: TypeId) -> Option<u32> {
    let t = t.unliteral();
    if t.is_integer() {
        return Some(1);
    }
    let items = tuple_items(t)?;
    items
        .iter()
        .all(|i| i.unliteral().is_integer())
        .then_some(items.len() as u32)
}

/// The shape and scalar leaves of a nested tuple (`((1, 2), (3, 4))` is 2 x 2), as
/// `np.array` reads it: every level must be all scalars or all tuples of one shape.
pub fn nested_shape(t: TypeId) -> Option<(Vec<u32>, Vec<TypeId>)> {
    let t = t.unliteral();
    if t.is_scalar() {
        return Some((vec![], vec![t]));
    }
    let items = tuple_items(t)?;
    let mut inner: Option<Vec<u32>> = None;
    let mut leaves = Vec::new();
    for it in &items {
        let (shape, mut l) = nested_shape(*it)?;
        if inner.as_ref().is_some_and(|s| *s != shape) {
            return None;
        }
        inner = Some(shape);
        leaves.append(&mut l);
    }
    let mut shape = vec![items.len() as u32];
    shape.extend(inner.unwrap_or_default());
    Some((shape, leaves))
}

/// A dtype argument: `np.float64`, `np.dtype(...)`-typed values or `float`/`int`/`bool`.
pub(crate) fn dtype_arg(t: TypeId) -> Option<TypeId> {
    // float16 has no arithmetic here (Numba's neither): arrays of it are not made.
    dtype_arg_any(t).filter(|&d| d != FLOAT16)
}

fn dtype_arg_any(t: TypeId) -> Option<TypeId> {
    match t.get() {
        Type::NumberClass(d) | Type::DType(d) => Some(d),
        // `dtype='int32'`, as Numba accepts a constant string.
        // Also NumPy's character codes and short names ('i4', 'f8', 'c16', '?').
        Type::StringLiteral(s) => DTYPE_NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, d)| *d)
            .or_else(|| char_code(&s))
            .or_else(|| crate::types::from_name(&s).filter(|t| t.is_scalar()))
            .or_else(|| crate::npdatetime::parse_dtype_str(&s)),
        _ => None,
    }
}

/// A NumPy one-character type code (`'d'`, `'l'`, `'?'`, ...) on a 64-bit Linux target.
fn char_code(s: &str) -> Option<TypeId> {
    Some(match s {
        "?" => BOOLEAN,
        "b" => INT8,
        "B" => UINT8,
        "h" => INT16,
        "H" => UINT16,
        "i" => INT32,
        "I" => UINT32,
        "l" | "q" | "p" => INT64,
        "L" | "Q" | "P" => UINT64,
        "f" => FLOAT32,
        "d" => FLOAT64,
        "F" => COMPLEX64,
        "D" => COMPLEX128,
        _ => return None,
    })
}

/// An array's parts, or a scalar seen as a 0-d array (`np.zeros_like(3.0)`).
fn array_or_scalar_parts(t: TypeId) -> Option<(TypeId, u32, Layout, bool)> {
    let t = t.unliteral();
    array_parts(t).or_else(|| t.is_scalar().then_some((t, 0, Layout::C, false)))
}

/// A new C array of `dtype` and `ndim` axes.
fn this_c(dtype: TypeId, ndim: u32) -> TypeId {
    array(dtype, ndim, Layout::C)
}

/// `np.round(x, decimals=0)` and its spellings, on numbers and arrays (same dtype).
fn round_sig(key: &'static str, a: &[TypeId]) -> Option<Signature> {
    let (x, rest) = a.split_first()?;
    let x = x.unliteral();
    if !(x.is_array() || x.is_scalar()) || rest.len() > 1 {
        return None;
    }
    let mut args = vec![x];
    if let Some(d) = rest.first() {
        if !d.unliteral().is_integer() {
            return None;
        }
        args.push(d.unliteral());
    }
    let ret = match array_parts(x) {
        Some((d, n, ..)) => array(d, n, Layout::C),
        None if x == BOOLEAN => return None,
        None => x,
    };
    Some(sig(key, ret, args))
}

/// `np.clip(a, a_min, a_max)` / `a.clip(a_min, a_max)`.
fn clip_sig(a: &[TypeId]) -> Option<Signature> {
    match a {
        [x, lo, hi] if x.is_array() => {
            let d = element(*x)?;
            // A bound may be None (that side is not clipped), a scalar or an
            // array broadcast against `x`.
            let bound = |t: TypeId| -> Option<TypeId> {
                if t.unliteral() == NONE {
                    Some(d)
                } else {
                    element(t)
                }
            };
            if [d, bound(*lo)?, bound(*hi)?].iter().any(|t| t.is_complex()) {
                return None;
            }
            let args: Vec<TypeId> = a.iter().map(|t| t.unliteral()).collect();
            let shaped: Vec<TypeId> = args.iter().copied().filter(|&t| t != NONE).collect();
            Some(sig("numpy.clip", broadcast(&shaped, d), args))
        }
        _ => None,
    }
}

/// The array methods typed so far; each is the function key `array.<name>`.
pub const ARRAY_METHODS: &[&str] = &[
    // Typed by numba-py's overload (`FALLBACK_OVERLOADS`); the native templates only
    // name it.
    "repeat",
    "sum",
    "min",
    "max",
    "mean",
    "prod",
    "copy",
    "reshape",
    "astype",
    "fill",
    "argmin",
    "argmax",
    "cumsum",
    "cumprod",
    "ravel",
    "flatten",
    "transpose",
    "var",
    "std",
    "all",
    "any",
    "sort",
    "argsort",
    "item",
    "nonzero",
    "view",
    "dot",
    "clip",
    "round",
    "take",
    "conj",
    "conjugate",
];

/// Dtypes the sort helpers order (NumPy's order, NaN last).
pub(crate) fn sortable(d: TypeId) -> bool {
    d == BOOLEAN || d.is_integer() || d == FLOAT32 || d == FLOAT64
}

/// The `kind=` of `argsort`, as Numba accepts it.
fn sort_kind(t: TypeId) -> bool {
    matches!(t.get(), Type::StringLiteral(k) if k == "quicksort" || k == "mergesort")
}

/// The type of `array.attr` (attributes and bound methods).
pub fn array_attr(this: TypeId, attr: &str) -> Option<TypeId> {
    let (dtype, ndim, layout, readonly) = array_parts(this)?;
    Some(match attr {
        "shape" | "strides" => intern(Type::UniTuple(INTP, ndim)),
        "ndim" | "size" | "itemsize" | "nbytes" => INTP,
        "dtype" => intern(Type::DType(dtype)),
        "ctypes" => intern(Type::ArrayCTypes(this)),
        "flat" => intern(Type::NumpyFlat(this)),
        "flags" => intern(Type::ArrayFlags(this)),
        "T" => intern(Type::Array {
            dtype,
            ndim,
            layout: match layout {
                Layout::C if ndim > 1 => Layout::F,
                Layout::F if ndim > 1 => Layout::C,
                other => other,
            },
            readonly,
        }),
        "real" if !dtype.is_complex() => this,
        // A complex array's parts are strided views of its memory.
        "real" | "imag" if dtype.is_complex() => intern(Type::Array {
            dtype: if dtype == COMPLEX64 { FLOAT32 } else { FLOAT64 },
            ndim,
            layout: Layout::A,
            readonly,
        }),
        m if ARRAY_METHODS.contains(&m) => intern(Type::BoundFunction {
            key: format!("array.{attr}"),
            this,
        }),
        _ => return None,
    })
}

/// Numba's message for an array method given arguments it refuses, where it has one.
pub fn array_explain(key: &str, this: TypeId, args: &[TypeId]) -> Option<String> {
    let (dtype, ..) = array_parts(this)?;
    match (key, args) {
        ("array.astype", [d]) => match d.get() {
            Type::Unicode => {
                Some("array.astype if dtype is a string it must be constant".to_string())
            }
            _ => {
                let to = dtype_arg(*d)?;
                Some(format!(
                    "astype({to}) not supported on {this}: cannot convert from {dtype} to {to}"
                ))
            }
        },
        _ => None,
    }
}

/// A call of an array method (`key` is `array.<name>`).
pub fn array_method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    let (dtype, ndim, layout, readonly) = array_parts(this)?;
    // datetime64 / timedelta64 arrays: the methods that move elements without reading
    // them as numbers (the arithmetic ones would treat NaT as a number).
    if crate::npdatetime::is_datetime_like(dtype)
        && !matches!(
            key,
            "array.item"
                | "array.view"
                | "array.astype"
                | "array.min"
                | "array.max"
                | "array.copy"
                | "array.reshape"
                | "array.ravel"
                | "array.flatten"
                | "array.transpose"
                | "array.fill"
        )
    {
        return None;
    }
    let with_this = |ret: TypeId| {
        let mut all = vec![this];
        all.extend_from_slice(args);
        sig(key, ret, all)
    };
    let c_array = |d: TypeId, n: u32| array(d, n, Layout::C);
    match (key, args) {
        ("array.sum" | "array.prod" | "array.cumsum" | "array.cumprod", []) => {
            let r = accumulate(dtype);
            Some(with_this(
                if key == "array.cumsum" || key == "array.cumprod" {
                    c_array(r, 1)
                } else {
                    r
                },
            ))
        }
        // Complex arrays reduce to their min/max in lexicographic order (real part, then
        // imaginary), as Numba's `npy_min`/`npy_max`; the arg-reductions have no order.
        ("array.argmin" | "array.argmax", _) if dtype.is_complex() => None,
        ("array.min" | "array.max", []) => Some(with_this(dtype)),
        ("array.item", []) => Some(with_this(dtype)),
        // A view as another dtype: same axes; a different item size rescales the last
        // (checked at run time), so only C keeps its layout.
        ("array.view", [dt]) => {
            let d = dtype_arg(*dt)?;
            let same_size = d.bitwidth().max(8) == dtype.bitwidth().max(8);
            let layout = if same_size || layout == Layout::C {
                layout
            } else {
                Layout::A
            };
            Some(sig(
                key,
                intern(Type::Array {
                    dtype: d,
                    ndim,
                    layout,
                    readonly,
                }),
                vec![this, *dt],
            ))
        }
        // `a.dot(b)` is `np.dot(a, b)` (the same key, so the same lowering).
        ("array.dot", [b]) => matmul(this, *b, "numpy.dot"),
        ("array.clip", [lo, hi]) => clip_sig(&[this, *lo, *hi]),
        ("array.take", [i]) => crate::numpy_misc::take(key, this, *i),
        ("array.conj" | "array.conjugate", []) => crate::numpy_misc::conj(key, this),
        ("array.round", []) => Some(with_this(this_c(dtype, ndim))),
        ("array.round", [d]) if d.unliteral().is_integer() => {
            Some(sig(key, this_c(dtype, ndim), vec![this, d.unliteral()]))
        }
        // NumPy 2 refuses 0-d arrays (numba-rs's overload in `_npmethods` says so).
        ("array.nonzero", []) if ndim > 0 => {
            Some(with_this(intern(Type::UniTuple(c_array(INTP, 1), ndim))))
        }
        // Sorting is along the last axis, in place.
        ("array.sort", []) if sortable(dtype) && !readonly => Some(with_this(NONE)),
        ("array.argsort", []) if sortable(dtype) && ndim == 1 => Some(with_this(c_array(INTP, 1))),
        ("array.argsort", [kind]) if sortable(dtype) && ndim == 1 && sort_kind(*kind) => {
            Some(with_this(c_array(INTP, 1)))
        }
        // A reduction along one axis drops that axis; a 1-d array gives a scalar, as in
        // Numba.
        ("array.sum" | "array.prod" | "array.mean" | "array.min" | "array.max", [axis])
            if axis.unliteral().is_integer() =>
        {
            let r = match key {
                "array.sum" | "array.prod" => accumulate(dtype),
                "array.mean" => mean_result(dtype),
                _ => dtype,
            };
            let ret = if ndim == 1 { r } else { c_array(r, ndim - 1) };
            Some(sig(key, ret, vec![this, axis.unliteral()]))
        }
        ("array.var" | "array.std", []) => Some(with_this(FLOAT64)),
        ("array.all" | "array.any", []) => Some(with_this(BOOLEAN)),
        ("array.argmin" | "array.argmax", []) => Some(with_this(INTP)),
        ("array.argmin" | "array.argmax", [axis]) if axis.unliteral().is_integer() => {
            let ret = if ndim == 1 {
                INTP
            } else {
                c_array(INTP, ndim - 1)
            };
            Some(sig(key, ret, vec![this, axis.unliteral()]))
        }
        ("array.mean", []) => Some(with_this(mean_result(dtype))),
        ("array.copy", []) => Some(with_this(c_array(dtype, ndim))),
        ("array.flatten", []) => Some(with_this(c_array(dtype, 1))),
        // A C array's ravel is (in Numba) a view, so it keeps readonly; a copy is writeable.
        ("array.ravel", []) => Some(with_this(intern(Type::Array {
            dtype,
            ndim: 1,
            layout: Layout::C,
            readonly: readonly && layout == Layout::C,
        }))),
        ("array.transpose", []) => array_attr(this, "T").map(with_this),
        ("array.fill", [v]) if element(*v).is_some() && !readonly => Some(with_this(NONE)),
        // NumPy's order 'K': an F-ordered array stays F-ordered (the copy is laid out
        // by its type).
        // Numba converts numbers into numbers only (a record dtype is its own).
        ("array.astype", [d])
            if matches!(dtype_arg(*d)?.get(), Type::Record { .. }) && dtype_arg(*d)? != dtype =>
        {
            None
        }
        ("array.astype", [d]) => Some(with_this(array(
            dtype_arg(*d)?,
            ndim,
            if layout == Layout::F {
                Layout::F
            } else {
                Layout::C
            },
        ))),
        ("array.reshape", shape) if layout != Layout::A || ndim == 1 => {
            let rank = match shape {
                [one] => shape_rank(*one)?,
                many if many.iter().all(|t| t.unliteral().is_integer()) => many.len() as u32,
                _ => return None,
            };
            // A view of the array: a readonly array's reshape is readonly (Numba's
            // `ary.copy(ndim=...)`).
            Some(with_this(intern(Type::Array {
                dtype,
                ndim: rank,
                layout: Layout::C,
                readonly,
            })))
        }
        _ => None,
    }
}

/// The binary operators applied element-wise to arrays (NumPy's ufunc operators, Numba's
/// `supported_array_operators`): what [`array_binop`] types, numba-lower lowers
/// element-wise and numba-rewrite fuses.
pub const ELEMENTWISE_BINOPS: &[BinOp] = &[
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::TrueDiv,
    BinOp::FloorDiv,
    BinOp::Mod,
    BinOp::Pow,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
    BinOp::LShift,
    BinOp::RShift,
];

/// NumPy's casting order of kinds for `same_kind`: bool < unsigned < signed < float <
/// complex; a value may be cast to its own kind or a later one (any width).
fn kind_rank(t: TypeId) -> u8 {
    if t == BOOLEAN {
        0
    } else if t.is_integer() && !t.is_signed() {
        1
    } else if t.is_integer() {
        2
    } else if t.is_float() {
        3
    } else {
        4
    }
}

/// `array op= x`: NumPy's in-place operator writes the result into the array itself
/// (`np.add(a, x, out=a)`), so the statement's value is the left array, of its own type.
/// The result dtype must cast to the array's under `same_kind` (a Python scalar is weak:
/// an int fits any integer array, as in NumPy 2); otherwise NumPy's UFuncTypeError text.
/// Signatures whose result is not an array pass through unchanged.
pub fn inplace_array_binop(op: BinOp, sig: Signature, rhs: TypeId) -> Result<Signature, String> {
    let lhs = sig.args.first().copied().unwrap_or(sig.ret).unliteral();
    let Type::Array { dtype: into, .. } = lhs.get() else {
        return Ok(sig);
    };
    let out = match sig.ret.get() {
        Type::Array { dtype, .. } => dtype,
        // A 0-d target: the operator's result is typed as a scalar.
        _ if sig.ret.is_scalar() => sig.ret,
        _ => return Ok(sig),
    };
    // In-place matrix multiplication stays a new array (NumPy has no `@=` for arrays).
    if op == BinOp::MatMul {
        return Ok(sig);
    }
    let rank = |t: TypeId| match kind_rank(t) {
        1 => 2,
        k => k,
    };
    let weak = !rhs.is_array() && rank(rhs.unliteral()) <= rank(into);
    if !(weak || kind_rank(out) <= kind_rank(into)) {
        let ufunc = match op {
            BinOp::Add => "add",
            BinOp::Sub => "subtract",
            BinOp::Mul => "multiply",
            BinOp::TrueDiv => "divide",
            BinOp::FloorDiv => "floor_divide",
            BinOp::Mod => "remainder",
            BinOp::Pow => "power",
            BinOp::LShift => "left_shift",
            BinOp::RShift => "right_shift",
            BinOp::And => "bitwise_and",
            BinOp::Or => "bitwise_or",
            BinOp::Xor => "bitwise_xor",
            other => other.operator_name(),
        };
        return Err(format!(
            "Cannot cast ufunc '{ufunc}' output from dtype('{out}') to dtype('{into}') with casting rule 'same_kind'"
        ));
    }
    Ok(Signature {
        ret: lhs,
        key: ImplKey::Function(inplace_key(op)),
        ..sig
    })
}

/// The key of an in-place operator on an array: `operator.iadd`, `operator.iand`, ...
pub fn inplace_key(op: BinOp) -> String {
    format!("operator.i{}", op.operator_name().trim_end_matches('_'))
}

/// `array op x` / `x op array` with broadcasting; `None` when neither side is an array.
pub fn array_binop(op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    if !lhs.is_array() && !rhs.is_array() {
        return None;
    }
    let (a, b) = (any_element(lhs)?, any_element(rhs)?);
    // datetime64 / timedelta64 elements: the scalar operator's rules per element.
    if crate::npdatetime::is_datetime_like(a) || crate::npdatetime::is_datetime_like(b) {
        let ret = crate::npdatetime::binop(op, a, b)?.ret;
        return Some(Signature {
            ret: ufunc_result(&[lhs, rhs], ret),
            args: vec![lhs.unliteral(), rhs.unliteral()],
            key: ImplKey::BinOp(op),
        });
    }
    let promoted = ufunc_loop(a, b)?;
    let dtype = match op {
        // Numba's operators do not order complex elements (its `np.less` & co. do:
        // `complex_order_ufunc`).
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge if promoted.is_complex() => return None,
        BinOp::Lt | BinOp::Le | BinOp::Eq | BinOp::Ne | BinOp::Gt | BinOp::Ge => BOOLEAN,
        BinOp::TrueDiv => float_result(promoted),
        BinOp::And | BinOp::Or | BinOp::Xor => {
            if !(promoted.is_integer() || promoted == BOOLEAN) {
                return None;
            }
            promoted
        }
        // NumPy has no bool loops for these: bools take the int8 ones.
        BinOp::LShift | BinOp::RShift | BinOp::FloorDiv | BinOp::Mod | BinOp::Pow
            if promoted == BOOLEAN =>
        {
            INT8
        }
        BinOp::LShift | BinOp::RShift => {
            if !promoted.is_integer() {
                return None;
            }
            promoted
        }
        // NumPy's TypeError: "numpy boolean subtract, the `-` operator, is not supported".
        BinOp::Sub if promoted == BOOLEAN => return None,
        BinOp::FloorDiv | BinOp::Mod if promoted.is_complex() => return None,
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::FloorDiv | BinOp::Mod | BinOp::Pow => {
            promoted
        }
        BinOp::MatMul => return matmul(lhs, rhs, "matmul"),
        BinOp::Is | BinOp::IsNot | BinOp::In => return None,
    };
    Some(Signature {
        ret: ufunc_result(&[lhs, rhs], dtype),
        args: vec![lhs.unliteral(), rhs.unliteral()],
        key: ImplKey::BinOp(op),
    })
}

/// `np.less(a, b)` & co. with complex arrays: NumPy's loops order complex numbers by real
/// part, then imaginary part (as Numba's ufuncs do, though not its operators); the
/// element-wise lowering compares them so.
fn complex_order_ufunc(op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    if !matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
        return None;
    }
    if !lhs.is_array() && !rhs.is_array() {
        return None;
    }
    let promoted = ufunc_loop(element(lhs)?, element(rhs)?)?;
    promoted.is_complex().then(|| Signature {
        ret: ufunc_result(&[lhs, rhs], BOOLEAN),
        args: vec![lhs, rhs],
        key: ImplKey::BinOp(op),
    })
}

/// `-a`, `+a`, `~a`, `not a` on an array.
pub fn array_unary(op: UnaryOp, value: TypeId) -> Option<Signature> {
    let (dtype, ..) = array_parts(value)?;
    let ret = match op {
        UnaryOp::Neg | UnaryOp::Pos if matches!(dtype.get(), Type::NPDatetime(_)) => return None,
        UnaryOp::Neg | UnaryOp::Pos => ufunc_result(&[value], dtype),
        UnaryOp::Invert if dtype.is_integer() || dtype == BOOLEAN => ufunc_result(&[value], dtype),
        // `not array` is the truth value of the array, an error for size > 1 in NumPy.
        _ => return None,
    };
    Some(Signature {
        ret,
        args: vec![value],
        key: ImplKey::Unary(op),
    })
}

/// `np.dot` / `@` on 1-d and 2-d float or complex arrays.
fn matmul(a: TypeId, b: TypeId, key: &str) -> Option<Signature> {
    let (da, na, ..) = array_parts(a)?;
    let (db, nb, ..) = array_parts(b)?;
    let d = promote_dtypes(da, db)?;
    if !(d.is_float() || d.is_complex()) || da != db {
        return None;
    }
    let ret = match (na, nb) {
        (1, 1) => d,
        (2, 1) | (1, 2) => array(d, 1, Layout::C),
        (2, 2) => array(d, 2, Layout::C),
        _ => return None,
    };
    Some(Signature {
        ret,
        args: vec![a, b],
        key: if key == "matmul" {
            ImplKey::BinOp(BinOp::MatMul)
        } else {
            ImplKey::Function(key.to_string())
        },
    })
}

/// One item of an array index, as Numba's `get_array_index_type` classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexItem {
    /// An integer: drops its axis.
    Int,
    /// A slice (`has_step`: a third bound was given).
    Slice { has_step: bool },
    /// `...`: as many full slices as the other items leave.
    Ellipsis,
    /// `None` / `np.newaxis`: a new axis of length 1.
    NewAxis,
    /// An integer array (advanced: the result is a copy).
    IntArray,
    /// A boolean array (advanced: the positions where it is true).
    BoolArray { ndim: u32 },
}

impl IndexItem {
    /// How `t`, one item of an index, indexes an array.
    pub fn of(t: TypeId) -> Option<IndexItem> {
        let t = t.unliteral();
        Some(match t.get() {
            // Not a bool (`a[True]` adds an axis in NumPy; Numba rejects it).
            Type::Integer { .. } => IndexItem::Int,
            Type::Slice(n) => IndexItem::Slice { has_step: n == 3 },
            Type::Ellipsis => IndexItem::Ellipsis,
            Type::NoneType => IndexItem::NewAxis,
            Type::Array { dtype, ndim: 1, .. } if dtype.is_integer() => IndexItem::IntArray,
            Type::Array {
                dtype: BOOLEAN,
                ndim,
                ..
            } if ndim >= 1 => IndexItem::BoolArray { ndim },
            _ => return None,
        })
    }
}

/// The items of an index: a tuple's, or the index itself.
pub fn index_items(index: TypeId) -> Vec<TypeId> {
    let idx = index.unliteral();
    match idx.get() {
        Type::UniTuple(..) | Type::Tuple(_) => tuple_items(idx).unwrap_or_default(),
        _ => vec![idx],
    }
}

/// What `array[index]` gives, as Numba's `get_array_index_type`: the result type (a
/// scalar, a view, or for an advanced index a new C array) and whether the index is
/// advanced. One advanced index (a 1-d integer or boolean array) is supported, or a
/// boolean mask of the array's own shape as the only index (a 1-d result, as NumPy).
pub fn index_array(ary: TypeId, index: TypeId) -> Option<(TypeId, bool)> {
    let (dtype, nd, layout, readonly) = array_parts(ary)?;
    let items: Vec<IndexItem> = index_items(index)
        .into_iter()
        .map(IndexItem::of)
        .collect::<Option<_>>()?;
    let mut ndim = nd as i64;
    let mut advanced = 0;
    let mut left = Vec::new();
    let mut right = Vec::new();
    let mut ellipsis = false;
    let mut newaxes = 0;
    for &it in &items {
        match it {
            IndexItem::Ellipsis if ellipsis => return None,
            IndexItem::Ellipsis => ellipsis = true,
            IndexItem::Int => ndim -= 1,
            IndexItem::NewAxis => {
                ndim += 1;
                newaxes += 1;
            }
            IndexItem::IntArray => advanced += 1,
            IndexItem::BoolArray { ndim: k } => {
                // A mask covering several axes is only the whole array's own mask.
                if k > 1 && !(items.len() == 1 && k == nd) {
                    return None;
                }
                ndim -= i64::from(k) - 1;
                advanced += 1;
            }
            IndexItem::Slice { .. } => {}
        }
        if ellipsis {
            right.push(it);
        } else {
            left.push(it);
        }
    }
    if advanced > 1 {
        return None;
    }
    let n_indices = items.len() as i64 - i64::from(ellipsis) - newaxes;
    let n_indices = n_indices
        + items
            .iter()
            .map(|it| match it {
                IndexItem::BoolArray { ndim } => i64::from(*ndim) - 1,
                _ => 0,
            })
            .sum::<i64>();
    if n_indices > i64::from(nd) || ndim < 0 {
        return None;
    }
    let array_of = |n: i64, layout: Layout, readonly: bool| {
        intern(Type::Array {
            dtype,
            ndim: n as u32,
            layout,
            readonly,
        })
    };
    if advanced == 1 {
        return Some((array_of(ndim, Layout::C, false), true));
    }
    if ndim == 0 {
        return Some((dtype, false));
    }
    if ellipsis {
        right.remove(0);
    }
    let keeps = |it: IndexItem, innermost: bool| match it {
        IndexItem::Ellipsis | IndexItem::Int => true,
        IndexItem::Slice { has_step } => innermost && !has_step,
        _ => false,
    };
    let contiguous = |outer: &[IndexItem]| match outer.split_last() {
        None => true,
        Some((last, rest)) => rest.iter().all(|&t| keeps(t, false)) && keeps(*last, true),
    };
    let layout = match layout {
        Layout::C => {
            if n_indices == i64::from(nd) {
                left.append(&mut right);
            }
            if !right.is_empty() || !contiguous(&left) {
                Layout::A
            } else {
                Layout::C
            }
        }
        Layout::F => {
            if n_indices == i64::from(nd) {
                left.append(&mut right);
                std::mem::swap(&mut left, &mut right);
            }
            right.reverse();
            if !left.is_empty() || !contiguous(&right) {
                Layout::A
            } else {
                Layout::F
            }
        }
        Layout::A => Layout::A,
    };
    Some((array_of(ndim, layout, readonly), false))
}

/// `value[index]` for arrays and tuples.
pub fn getitem(value: TypeId, index: TypeId) -> Option<TypeId> {
    if let Type::NumpyFlat(arr) = value.get() {
        return (index.unliteral().is_integer()).then(|| array_parts(arr).map(|(d, ..)| d))?;
    }
    if value.is_array() {
        return index_array(value, index).map(|(t, _)| t);
    }
    // A tuple indexed by a constant: that element's type.
    if let (Some(items), Type::IntegerLiteral(i)) = (tuple_items(value), index.get()) {
        let n = items.len() as i64;
        let i = if i < 0 { i + n } else { i };
        return usize::try_from(i).ok().and_then(|i| items.get(i).copied());
    }
    // A tuple sliced by constants: the selected items.
    if let (Some(items), Type::SliceLiteral(a, b, c)) = (tuple_items(value), index.get()) {
        let picked = slice_indices((a, b, c), items.len())?;
        let sel: Vec<TypeId> = picked.into_iter().map(|i| items[i]).collect();
        return Some(tuple_of(&sel));
    }
    // A homogeneous tuple indexed at run time.
    if let (Type::UniTuple(e, _), true) = (value.get(), index.unliteral().is_integer()) {
        return Some(e);
    }
    None
}

/// Whether `target[index] = value` types (Numba's `SetItemBuffer`): a scalar into an
/// element or broadcast over a selection, or an array of a convertible dtype.
pub fn setitem_ok(target: TypeId, index: TypeId, value: TypeId) -> bool {
    if let Some(ok) = crate::lists::setitem_ok(target, index, value) {
        return ok;
    }
    if let Type::NumpyFlat(arr) = target.get() {
        return match array_parts(arr) {
            Some((d, _, _, false)) => {
                index.unliteral().is_integer()
                    && crate::conv::can_convert(value.unliteral(), d).is_some()
            }
            _ => false,
        };
    }
    let Some((dtype, _, _, readonly)) = array_parts(target) else {
        return false;
    };
    if readonly {
        return false;
    }
    let Some((res, _)) = index_array(target, index) else {
        return false;
    };
    let v = value.unliteral();
    // A string (bytes, another item) into a character array: stored truncated or NUL
    // padded, as NumPy stores it.
    if matches!(dtype.get(), Type::CharSeq(_) | Type::UnicodeCharSeq(_))
        && crate::strings::text_kind(value).is_some()
    {
        return crate::strings::text_kind(value) == crate::strings::text_kind(dtype);
    }
    match (res.is_array(), array_parts(v)) {
        (true, Some((vd, ..))) => crate::conv::can_convert(vd, dtype).is_some(),
        (false, Some((vd, 0, ..))) => crate::conv::can_convert(vd, dtype).is_some(),
        (false, Some(_)) => false,
        // A tuple of numbers fills a 1-d selection item by item (`out[1:3] = a.shape`).
        (true, None) if !v.is_scalar() && !crate::npdatetime::is_datetime_like(v) => {
            res.is_array()
                && array_parts(res).is_some_and(|p| p.1 == 1)
                && crate::conv::tuple_items(v).is_some_and(|items| {
                    items.iter().all(|&i| {
                        i.unliteral().is_scalar()
                            && crate::conv::can_convert(i.unliteral(), dtype).is_some()
                    })
                })
        }
        // A record (`a[i] = a[j]`, `a[0] = rec`): its bytes copied into the item.
        (false, None) if crate::records::is_record(dtype) => {
            crate::conv::can_convert(v, dtype).is_some()
        }
        // A C pointer converts to an integer element (its address).
        (false, None) if v.is_pointer() => {
            dtype.is_integer() && crate::conv::can_convert(v, dtype).is_some()
        }
        (_, None) => {
            (v.is_scalar() || crate::npdatetime::is_datetime_like(v))
                && crate::conv::can_convert(v, dtype).is_some()
        }
    }
}

/// The iterator type `iter(value)` gives, and what it yields.
pub fn getiter(value: TypeId) -> Option<TypeId> {
    match value.get() {
        Type::RangeState64 => Some(RANGE_ITER64),
        Type::Array { .. } | Type::NumpyFlat(_) | Type::NdEnumerate(_) | Type::NdIndex(_) => {
            Some(intern(Type::ArrayIter(value)))
        }
        Type::Enumerate(_)
        | Type::Zip(_)
        | Type::RangeIter64
        | Type::ArrayIter(_)
        | Type::Generator { .. } => Some(value),
        Type::UniTuple(..) | Type::NamedUniTuple { .. } => Some(intern(Type::ArrayIter(value))),
        // A string yields one-character strings; bytes yield integers.
        Type::Unicode | Type::Bytes => Some(intern(Type::ArrayIter(value))),
        // An empty list is iterable once typing knows what it holds.
        Type::List { dtype, .. } | Type::Set { dtype, .. } if dtype != UNDEFINED => {
            Some(intern(Type::ArrayIter(value)))
        }
        // A dict iterates its keys; a view what it shows.
        Type::Dict { key, .. } if key != UNDEFINED => Some(intern(Type::ArrayIter(value))),
        Type::DictView { dict, .. } if crate::dicts::dict_parts(dict)?.0 != UNDEFINED => {
            Some(intern(Type::ArrayIter(value)))
        }
        _ => None,
    }
}

/// The type an iterator yields.
pub fn iter_yield(it: TypeId) -> Option<TypeId> {
    match it.get() {
        Type::RangeIter64 => Some(INT64),
        Type::ArrayIter(a) => match a.get() {
            Type::UniTuple(e, _)
            | Type::NamedUniTuple { dtype: e, .. }
            | Type::List { dtype: e, .. }
            | Type::Set { dtype: e, .. } => Some(e),
            Type::Dict { key, .. } => Some(key),
            Type::DictView { dict, kind } => crate::dicts::view_item(dict, kind),
            Type::Unicode => Some(UNICODE),
            Type::Bytes => Some(UINT8),
            Type::NumpyFlat(arr) => array_parts(arr).map(|(d, ..)| d),
            Type::NdEnumerate(arr) => {
                let (d, n, ..) = array_parts(arr)?;
                Some(tuple_of(&[intern(Type::UniTuple(INTP, n)), d]))
            }
            Type::NdIndex(arr) => {
                let (_, n, ..) = array_parts(arr)?;
                Some(intern(Type::UniTuple(INTP, n)))
            }
            _ => getitem(a, INTP),
        },
        Type::Enumerate(inner) => Some(tuple_of(&[INTP, iter_yield(inner)?])),
        Type::Zip(inners) => {
            let items: Option<Vec<TypeId>> = inners.iter().map(|&i| iter_yield(i)).collect();
            Some(tuple_of(&items?))
        }
        Type::Generator { yield_type, .. } => Some(yield_type),
        _ => None,
    }
}

/// Whether `t` is an iterator (what `getiter` returns and `next()` takes).
pub fn is_iterator(t: TypeId) -> bool {
    matches!(
        t.get(),
        Type::RangeIter64
            | Type::ArrayIter(_)
            | Type::Enumerate(_)
            | Type::Zip(_)
            | Type::Generator { .. }
    )
}

/// `int`, `float`, `bool`, `complex` and NumPy scalar classes, as `isinstance` takes them.
pub fn is_number_class(t: TypeId) -> bool {
    match t.get() {
        Type::NumberClass(_) => true,
        Type::Function(k) => k == "complex",
        _ => false,
    }
}

impl BaseContext {
    /// The `numpy` module's functions and the builtins over iterables.
    pub(crate) fn install_numpy(&mut self) {
        self.install_numpy_manip();
        self.install_numpy_misc();
        self.install_dtypes();
        self.install_npdatetime();
        self.install_carray();
        for name in ["empty", "zeros", "ones"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        let (shape, dtype) = match a {
                            [s] => (*s, FLOAT64),
                            [s, d] => (*s, dtype_arg(*d)?),
                            _ => return None,
                        };
                        Some(sig(
                            key,
                            array(dtype, shape_rank(shape)?, Layout::C),
                            a.to_vec(),
                        ))
                    },
                    "(shape,), (shape, dtype)",
                )),
            );
        }
        self.register(
            "numpy.array",
            Box::new(FnTemplate(
                array_from,
                "(scalar, tuple, nested tuple or array), (..., dtype)",
            )),
        );
        self.register(
            "numpy.identity",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let dtype = match a {
                        [n] if n.unliteral().is_integer() => FLOAT64,
                        [n, d] if n.unliteral().is_integer() => dtype_arg(*d)?,
                        _ => return None,
                    };
                    let args: Vec<TypeId> = a.iter().map(|t| t.unliteral()).collect();
                    Some(sig("numpy.identity", array(dtype, 2, Layout::C), args))
                },
                "(n,), (n, dtype)",
            )),
        );
        self.register(
            "numpy.eye",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let int = |t: &TypeId| t.unliteral().is_integer();
                    let (n, rest) = a.split_first()?;
                    if !int(n) || a.len() > 4 {
                        return None;
                    }
                    if let Some(m) = rest.first() {
                        if !(int(m) || *m == NONE) {
                            return None;
                        }
                    }
                    if let Some(k) = rest.get(1) {
                        if !int(k) {
                            return None;
                        }
                    }
                    let dtype = match rest.get(2) {
                        Some(d) => dtype_arg(*d)?,
                        None => FLOAT64,
                    };
                    let args: Vec<TypeId> = a.iter().map(|t| t.unliteral()).collect();
                    Some(sig("numpy.eye", array(dtype, 2, Layout::C), args))
                },
                "(N, M=None, k=0, dtype=float)",
            )),
        );
        self.register(
            "numpy.full",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let (shape, dtype) = match a {
                        [s, v] => (*s, element(*v)?),
                        [s, _, d] => (*s, dtype_arg(*d)?),
                        _ => return None,
                    };
                    Some(sig(
                        "numpy.full",
                        array(dtype, shape_rank(shape)?, Layout::C),
                        a.to_vec(),
                    ))
                },
                "(shape, fill_value), (shape, fill_value, dtype)",
            )),
        );
        for name in ["empty_like", "zeros_like", "ones_like"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        let (arr, dtype) = match a {
                            [x] => (*x, None),
                            [x, d] => (*x, Some(dtype_arg(*d)?)),
                            _ => return None,
                        };
                        let (d, n, l, _) = array_or_scalar_parts(arr)?;
                        let l = if l == Layout::A { Layout::C } else { l };
                        Some(sig(key, array(dtype.unwrap_or(d), n, l), a.to_vec()))
                    },
                    "(array,), (array, dtype)",
                )),
            );
        }
        self.register(
            "numpy.full_like",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let (arr, v, dtype) = match a {
                        [x, v] => (*x, *v, None),
                        [x, v, d] => (*x, *v, Some(dtype_arg(*d)?)),
                        _ => return None,
                    };
                    let (d, n, l, _) = array_or_scalar_parts(arr)?;
                    element(v)?;
                    let l = if l == Layout::A { Layout::C } else { l };
                    let mut args = a.to_vec();
                    args[1] = v.unliteral();
                    Some(sig(
                        "numpy.full_like",
                        array(dtype.unwrap_or(d), n, l),
                        args,
                    ))
                },
                "(array, fill_value), (array, fill_value, dtype)",
            )),
        );
        self.register(
            "numpy.arange",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    // Numba's `np_arange(start, stop=None, step=None, dtype=None)`: the
                    // bounds given (None skipped), then an optional dtype.
                    if a.is_empty() || a.len() > 4 {
                        return None;
                    }
                    let (bounds, dtype) = match a {
                        [b @ .., d] if a.len() == 4 => (b, Some(*d)),
                        b => (b, None),
                    };
                    let mut d = INT64;
                    let mut complex = false;
                    let mut float = false;
                    for t in bounds {
                        let t = t.unliteral();
                        if t == NONE {
                            continue;
                        }
                        if !t.is_scalar() {
                            return None;
                        }
                        complex |= t.is_complex();
                        float |= t.is_float();
                        if !t.is_complex() && !t.is_float() {
                            d = promote_dtypes(d, if t == BOOLEAN { INT64 } else { t })?;
                        }
                    }
                    // Numba's `_arange_dtype`: complex128 or float64 when any bound is.
                    if complex {
                        d = COMPLEX128;
                    } else if float {
                        d = FLOAT64;
                    }
                    match dtype.map(|t| t.unliteral()) {
                        None => {}
                        Some(t) if t == NONE => {}
                        Some(t) => d = dtype_arg(t)?,
                    }
                    let args = a.iter().map(|t| t.unliteral()).collect();
                    Some(sig("numpy.arange", array(d, 1, Layout::C), args))
                },
                "(stop,), (start, stop), (start, stop, step), (start, stop, step, dtype)",
            )),
        );
        // Unary ufuncs: float-only ones give float64 for integers.
        for &name in FLOAT_UFUNCS {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let inner = move |a: &[TypeId]| match a {
                [x] => {
                    let d = float_result(element(*x)?);
                    if d.is_complex() && REAL_UFUNCS.contains(&name) {
                        return None;
                    }
                    Some(sig(key, ufunc_result(a, d), vec![x.unliteral()]))
                }
                _ => None,
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| ufunc_with_out(key, a, 1, &inner),
                    "(number or array, out=None)",
                )),
            );
        }
        for &name in SAME_KIND_UFUNCS {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let inner = move |a: &[TypeId]| match a {
                // Timedeltas: their sign flips and magnitudes (NaT kept).
                [x] if any_element(*x).is_some_and(|d| matches!(d.get(), Type::NPTimedelta(_))) => {
                    let d = any_element(*x)?;
                    matches!(name, "abs" | "absolute" | "negative" | "positive")
                        .then(|| sig(key, ufunc_result(a, d), vec![x.unliteral()]))
                }
                [x] => {
                    let d = element(*x)?;
                    if d.is_complex() && REAL_UFUNCS.contains(&name) {
                        return None;
                    }
                    let d = match name {
                        // Integers and bools are already whole: NumPy 2 (and
                        // Numba) keep their dtype.
                        "floor" | "ceil" | "trunc" => d,
                        "logical_not" | "signbit" => BOOLEAN,
                        // NumPy and Numba have no bool loops for these: int8's.
                        "square" | "reciprocal" | "negative" | "positive" | "sign"
                            if d == BOOLEAN =>
                        {
                            INT8
                        }
                        "abs" | "absolute" if d.is_complex() => {
                            if d == COMPLEX64 {
                                FLOAT32
                            } else {
                                FLOAT64
                            }
                        }
                        _ => d,
                    };
                    Some(sig(key, ufunc_result(a, d), vec![x.unliteral()]))
                }
                _ => None,
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| ufunc_with_out(key, a, 1, &inner),
                    "(number or array, out=None)",
                )),
            );
        }
        // Binary ufuncs with broadcasting.
        for &name in BINARY_UFUNCS {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let inner = move |a: &[TypeId]| match a {
                // datetime64 / timedelta64: the arithmetic ufuncs are their operators.
                [x, y]
                    if [*x, *y].iter().any(|&t| {
                        any_element(t).is_some_and(crate::npdatetime::is_datetime_like)
                    }) =>
                {
                    let op = match name {
                        "add" => BinOp::Add,
                        "subtract" => BinOp::Sub,
                        "multiply" => BinOp::Mul,
                        "divide" | "true_divide" => BinOp::TrueDiv,
                        // The larger / smaller of two of one kind, in their common unit.
                        "maximum" | "minimum" | "fmax" | "fmin" => {
                            let (ex, ey) = (any_element(*x)?, any_element(*y)?);
                            let common = crate::npdatetime::binop(BinOp::Lt, ex, ey)?;
                            let d = common.args[0];
                            return Some(sig(
                                key,
                                ufunc_result(a, d),
                                vec![x.unliteral(), y.unliteral()],
                            ));
                        }
                        _ => return None,
                    };
                    crate::context::binop_signature(op, x.unliteral(), y.unliteral())
                }
                [x, y] => {
                    let (ex, ey) = (element(*x)?, element(*y)?);
                    let d = ufunc_loop(ex, ey)?;
                    if d.is_complex() && REAL_UFUNCS.contains(&name) {
                        return None;
                    }
                    let int_like = |t: TypeId| t.is_integer() || t == BOOLEAN;
                    let d = match name {
                        "arctan2" | "divide" | "true_divide" | "hypot" | "copysign"
                        | "logaddexp" | "logaddexp2" | "nextafter" => float_result(d),
                        "logical_and" | "logical_or" | "logical_xor" => BOOLEAN,
                        // Integer loops only (NumPy's `gcd`/`lcm` have no others).
                        "gcd" | "lcm" if !int_like(d) || d == BOOLEAN => return None,
                        // `ldexp(float, int)`: the float's type.
                        "ldexp" if !int_like(ey) => return None,
                        "ldexp" => float_result(ex),
                        // No bool loops: int8's, as NumPy and Numba.
                        "power" | "fmod" if d == BOOLEAN => INT8,
                        // Always in double precision.
                        "float_power" if d.is_complex() => COMPLEX128,
                        "float_power" => FLOAT64,
                        _ => d,
                    };
                    Some(sig(
                        key,
                        ufunc_result(a, d),
                        vec![x.unliteral(), y.unliteral()],
                    ))
                }
                _ => None,
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| ufunc_with_out(key, a, 2, &inner),
                    "(number or array, number or array, out=None)",
                )),
            );
        }
        // `np.divmod(x, y)`: the pair `(x // y, x % y)`, each as its operator types it.
        self.register(
            "numpy.divmod",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y] if element(*x).is_some() && element(*y).is_some() => {
                        let (x, y) = (x.unliteral(), y.unliteral());
                        let q = crate::context::binop_signature(BinOp::FloorDiv, x, y)?;
                        let r = crate::context::binop_signature(BinOp::Mod, x, y)?;
                        (q.ret == r.ret).then(|| {
                            sig("numpy.divmod", intern(Type::UniTuple(q.ret, 2)), vec![x, y])
                        })
                    }
                    // Both output arrays given: the pair of them.
                    [x, y, o1, o2] => {
                        let s1 = ufunc_with_out("numpy.divmod", &[*x, *y, *o1], 2, &|a| {
                            let (x, y) = (a[0].unliteral(), a[1].unliteral());
                            let q = crate::context::binop_signature(BinOp::FloorDiv, x, y)?;
                            Some(sig("numpy.divmod", q.ret, vec![x, y]))
                        })?;
                        ufunc_with_out("numpy.divmod", &[*x, *y, *o2], 2, &|a| {
                            let (x, y) = (a[0].unliteral(), a[1].unliteral());
                            let r = crate::context::binop_signature(BinOp::Mod, x, y)?;
                            Some(sig("numpy.divmod", r.ret, vec![x, y]))
                        })?;
                        let mut args = s1.args.clone();
                        args.push(*o2);
                        Some(sig("numpy.divmod", tuple_of(&[*o1, *o2]), args))
                    }
                    _ => None,
                },
                "(number or array, number or array)",
            )),
        );
        // Ufuncs that are operators take the operator's typing (and signature key).
        for &(name, op) in OPERATOR_UFUNCS {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let inner = move |a: &[TypeId]| match a {
                // Numbers: a ufunc call of its own (NumPy's rules, no exceptions).
                [x, y] if x.unliteral().is_scalar() && y.unliteral().is_scalar() => {
                    let (x, y) = (x.unliteral(), y.unliteral());
                    // Integers whose NumPy loop is float64 (uint64 with a signed
                    // integer) are typed as that loop.
                    let (l, r) = match ufunc_loop(x, y) {
                        Some(t) if t.is_float() && x.is_integer() && y.is_integer() => (t, t),
                        _ => (x, y),
                    };
                    let s = crate::context::binop_signature(op, l, r)?;
                    Some(sig(key, s.ret, vec![x, y]))
                }
                [x, y] if any_element(*x).is_some() && any_element(*y).is_some() => {
                    crate::context::binop_signature(op, x.unliteral(), y.unliteral())
                        .or_else(|| complex_order_ufunc(op, x.unliteral(), y.unliteral()))
                }
                _ => None,
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| ufunc_with_out(key, a, 2, &inner),
                    "(number or array, number or array, out=None)",
                )),
            );
        }
        for &name in INVERT_UFUNCS {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let inner = move |a: &[TypeId]| match a {
                [x] if x.unliteral() == BOOLEAN => {
                    crate::context::unary_signature(UnaryOp::Not, BOOLEAN)
                }
                [x] if element(*x).is_some() => {
                    crate::context::unary_signature(UnaryOp::Invert, x.unliteral())
                }
                _ => None,
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| ufunc_with_out(key, a, 1, &inner),
                    "(integer or bool, or an array of them; out=None)",
                )),
            );
        }
        self.register(
            "numpy.dot",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y] => matmul(*x, *y, "numpy.dot"),
                    _ => None,
                },
                "(array(float, 1d or 2d), array(float, 1d or 2d))",
            )),
        );
        // `np.sum(a)` and friends are the array methods.
        // Element-wise predicates, `where`, `clip`, `linspace`.
        for name in ["isnan", "isinf", "isfinite", "isnat"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let dt = crate::npdatetime::is_datetime_like;
            let inner = move |a: &[TypeId]| match a {
                // `isnat` is only defined for datetime64 and timedelta64 (NumPy's).
                [x] if name == "isnat" && !any_element(*x).is_some_and(dt) => None,
                [x] if any_element(*x).is_some_and(|d| d.is_scalar() || dt(d)) => {
                    Some(sig(key, ufunc_result(a, BOOLEAN), vec![x.unliteral()]))
                }
                _ => None,
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| ufunc_with_out(key, a, 1, &inner),
                    "(number or array, out=None)",
                )),
            );
        }
        self.register(
            "numpy.nonzero",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => {
                        let s = array_method("array.nonzero", *x, &[])?;
                        Some(sig("numpy.nonzero", s.ret, vec![*x]))
                    }
                    _ => None,
                },
                "(array,)",
            )),
        );
        self.register(
            "numpy.where",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [c] if c.is_array() => {
                        let s = array_method("array.nonzero", *c, &[])?;
                        Some(sig("numpy.where", s.ret, vec![*c]))
                    }
                    // Without an array argument, `_npmethods`' overload takes them as
                    // 0-d arrays.
                    [c, x, y] if a.iter().any(|t| t.is_array()) => {
                        element(*c)?;
                        // NumPy's promotion of the two dtypes (int32 with float32 is
                        // float64), and always an array, 0-d when nothing is one.
                        let d = promote_dtypes(element(*x)?, element(*y)?)?;
                        let args: Vec<TypeId> = a.iter().map(|t| t.unliteral()).collect();
                        let nd = args
                            .iter()
                            .filter_map(|&t| array_parts(t).map(|p| p.1))
                            .max()
                            .unwrap_or(0);
                        // Numba's layout: an F-ordered condition gives an F-ordered
                        // result unless x and y are both arrays of another layout.
                        let layout_of = |t: TypeId| array_parts(t).map(|p| p.2);
                        let f = layout_of(args[0]) == Some(Layout::F)
                            && match (layout_of(args[1]), layout_of(args[2])) {
                                (Some(lx), Some(ly)) => lx == Layout::F && ly == Layout::F,
                                _ => true,
                            };
                        let layout = if f && nd > 1 { Layout::F } else { Layout::C };
                        Some(sig("numpy.where", array(d, nd, layout), args.clone()))
                    }
                    _ => None,
                },
                "(condition, x, y)",
            )),
        );
        self.register(
            "numpy.clip",
            Box::new(FnTemplate(clip_sig, "(array, min or None, max or None)")),
        );
        self.register(
            "numpy.linspace",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let ok = (2..=3).contains(&a.len())
                        && a[..2].iter().all(|t| t.unliteral().is_scalar())
                        && a.get(2).is_none_or(|t| t.unliteral().is_integer());
                    // complex128 when either end is complex, as NumPy and Numba give.
                    let d = if a[..2.min(a.len())].iter().any(|t| t.is_complex()) {
                        COMPLEX128
                    } else {
                        FLOAT64
                    };
                    ok.then(|| {
                        let mut args = vec![d, d];
                        if a.len() == 3 {
                            args.push(INT64);
                        }
                        sig("numpy.linspace", array(d, 1, Layout::C), args)
                    })
                },
                "(start, stop), (start, stop, num)",
            )),
        );
        self.register(
            "numpy.sort",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => {
                        let (dtype, ndim, _, _) = array_parts(*x)?;
                        sortable(dtype)
                            .then(|| sig("numpy.sort", array(dtype, ndim, Layout::C), vec![*x]))
                    }
                    _ => None,
                },
                "(array(int or float),)",
            )),
        );
        self.register(
            "numpy.argsort",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, rest @ ..] => {
                        let s = array_method("array.argsort", *x, rest)?;
                        Some(sig("numpy.argsort", s.ret, s.args))
                    }
                    _ => None,
                },
                "(array(int or float, 1d), kind='quicksort' or 'mergesort')",
            )),
        );
        // NaN-skipping reductions and medians over every element (no complex: Numba's
        // order-based ones reject it, and the sums are not lowered for it).
        for name in [
            "nansum",
            "nanprod",
            "nanmean",
            "nanmin",
            "nanmax",
            "nanvar",
            "nanstd",
            "median",
            "nanmedian",
        ] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] => {
                            let (d, ..) = array_parts(*x)?;
                            // Complex arrays: the NaN-skipping sums, means, orderings and
                            // spreads (a complex is NaN when either part is); no medians.
                            if d.is_complex() && matches!(name, "median" | "nanmedian") {
                                return None;
                            }
                            let ret = match name {
                                "nansum" | "nanprod" => accumulate(d),
                                "nanmin" | "nanmax" => d,
                                "nanvar" | "nanstd" => FLOAT64,
                                _ => mean_result(d),
                            };
                            Some(sig(key, ret, vec![*x]))
                        }
                        _ => None,
                    },
                    "(array(int, float or bool),)",
                )),
            );
        }
        for name in ["var", "std", "all", "any"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let method: &'static str = Box::leak(format!("array.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] => {
                            let s = array_method(method, *x, &[])?;
                            Some(sig(key, s.ret, vec![*x]))
                        }
                        _ => None,
                    },
                    "(array,)",
                )),
            );
        }
        for name in ["sum", "prod", "mean", "min", "max", "argmin", "argmax"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let method: &'static str = Box::leak(format!("array.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] => {
                            let s = array_method(method, *x, &[])?;
                            Some(sig(key, s.ret, vec![*x]))
                        }
                        [x, axis] => {
                            let s = array_method(method, *x, &[*axis])?;
                            Some(sig(key, s.ret, s.args))
                        }
                        _ => None,
                    },
                    "(array, axis=int)",
                )),
            );
        }
        // `np.ndindex(*shape)` / `np.ndindex(shape)`, and Numba's parallel version
        // `numba.pndindex` (a `prange` of index tuples; serially the same iteration).
        for key in ["numpy.ndindex", "numba_rs.pndindex", "numba.pndindex"] {
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        let dims: Vec<TypeId> = match a {
                            [t] if crate::conv::tuple_items(*t).is_some() => {
                                crate::conv::tuple_items(*t)?
                            }
                            _ => a.to_vec(),
                        };
                        let ints = dims.iter().all(|t| t.unliteral().is_integer());
                        (!dims.is_empty() && ints).then(|| {
                            let arr = intern(Type::Array {
                                dtype: INTP,
                                ndim: dims.len() as u32,
                                layout: Layout::C,
                                readonly: false,
                            });
                            let args = a.iter().map(|t| t.unliteral()).collect();
                            sig(key, intern(Type::NdIndex(arr)), args)
                        })
                    },
                    "(int, ...) or (UniTuple(int),)",
                )),
            );
        }
        self.register(
            "numpy.ndenumerate",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.is_array() => Some(sig(
                        "numpy.ndenumerate",
                        intern(Type::NdEnumerate(*x)),
                        vec![*x],
                    )),
                    _ => None,
                },
                "(array,)",
            )),
        );
        for name in ["round", "around", "round_"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| round_sig(key, a),
                    "(number or array, decimals=0)",
                )),
            );
        }
        // Aliases and function forms of array methods: the method's own signature.
        for (name, method) in [
            ("amax", "array.max"),
            ("amin", "array.min"),
            ("cumsum", "array.cumsum"),
            ("cumprod", "array.cumprod"),
        ] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x, rest @ ..] if x.is_array() => array_method(method, *x, rest),
                        _ => None,
                    },
                    "(array, axis=None)",
                )),
            );
        }
        // NaN-skipping running totals: cumsum/cumprod's types, their own keys.
        for name in ["nancumsum", "nancumprod"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let method = if name == "nancumsum" {
                "array.cumsum"
            } else {
                "array.cumprod"
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] if x.is_array() => {
                            let s = array_method(method, *x, &[])?;
                            Some(sig(key, s.ret, vec![*x]))
                        }
                        _ => None,
                    },
                    "(array,)",
                )),
            );
        }
        // `np.shape(a)`, `np.size(a)`, `np.ndim(a)`: the attributes.
        for name in ["shape", "size", "ndim"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] if x.is_array() => Some(Signature {
                            ret: array_attr(*x, name)?,
                            args: vec![*x],
                            key: ImplKey::GetAttr(name.into()),
                        }),
                        _ => None,
                    },
                    "(array,)",
                )),
            );
        }
        // Builtins over iterables.
        self.register(
            "len",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.is_array()
                        || matches!(x.get(), Type::NumpyFlat(_))
                        || tuple_items(*x).is_some()
                        || *x == RANGE_STATE64
                        || x.unliteral() == UNICODE
                        || matches!(
                            x.get(),
                            Type::List { .. }
                                | Type::Set { .. }
                                | Type::Dict { .. }
                                | Type::DictView { .. }
                                | Type::LiteralStrKeyDict { .. }
                        ) =>
                    {
                        Some(sig("len", INTP, vec![*x]))
                    }
                    // `bytes`, and character-array items as the strings they hold.
                    [x] if crate::strings::text_kind(*x).is_some() => {
                        Some(sig("len", INTP, vec![crate::strings::text_kind(*x)?]))
                    }
                    _ => None,
                },
                "(array,), (tuple,), (range,), (str,), (list,)",
            )),
        );
        self.register(
            "enumerate",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => {
                        let it = getiter(x.unliteral())?;
                        Some(sig("enumerate", intern(Type::Enumerate(it)), vec![*x]))
                    }
                    [x, start] if start.unliteral().is_integer() => {
                        let it = getiter(x.unliteral())?;
                        Some(sig(
                            "enumerate",
                            intern(Type::Enumerate(it)),
                            vec![*x, INT64],
                        ))
                    }
                    _ => None,
                },
                "(iterable,), (iterable, start)",
            )),
        );
        self.register(
            "zip",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let its: Option<Vec<TypeId>> =
                        a.iter().map(|x| getiter(x.unliteral())).collect();
                    Some(sig("zip", intern(Type::Zip(its?)), a.to_vec()))
                },
                "(iterable, ...)",
            )),
        );
        self.register(
            "slice",
            Box::new(FnTemplate(
                |a: &[TypeId]| {
                    let ok = a
                        .iter()
                        .all(|t| t.unliteral().is_integer() || t.unliteral() == NONE);

                    match a.len() {
                        1..=3 if ok => {
                            // Bounds are held as int64 (the slice model), whatever width
                            // they arrive in. A None step is a step of 1: a two-member
                            // slice, so views keep their layout (Numba's cases).
                            let args: Vec<TypeId> = a
                                .iter()
                                .map(|t| if t.unliteral() == NONE { NONE } else { INT64 })
                                .collect();
                            let n = if args.len() == 3 && args[2] != NONE {
                                3
                            } else {
                                2
                            };
                            Some(sig("slice", intern(Type::Slice(n)), args))
                        }
                        _ => None,
                    }
                },
                "(stop), (start, stop), (start, stop, step)",
            )),
        );
        self.register(
            "print",
            Box::new(FnTemplate(
                |a: &[TypeId]| Some(sig("print", NONE, a.to_vec())),
                "(*values)",
            )),
        );
        self.register(
            "complex",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] | [x, _] if x.unliteral().is_scalar() => {
                        let args: Vec<TypeId> = a.iter().map(|t| t.unliteral()).collect();
                        args.iter()
                            .all(|t| t.is_scalar())
                            .then(|| sig("complex", COMPLEX128, args))
                    }
                    _ => None,
                },
                "(real,), (real, imag)",
            )),
        );
        // `getattr`/`hasattr` with a constant name are rewritten before typing
        // (`crate::attr_builtins`); a call left (a name not known at compile time)
        // matches no signature.
        for name in ["getattr", "hasattr"] {
            self.register(
                name,
                Box::new(FnTemplate(
                    |_: &[TypeId]| None,
                    "(object, constant name[, default])",
                )),
            );
        }
        // The inference engine answers `isinstance` itself (with Numba's errors); the
        // template gives the same answer to other callers.
        self.register(
            "isinstance",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, classes] => crate::isinstance::decide(*x, *classes).ok().map(|yes| {
                        sig("isinstance", intern(Type::BooleanLiteral(yes)), a.to_vec())
                    }),
                    _ => None,
                },
                "(value, class_or_tuple)",
            )),
        );
    }

    /// `numpy.<attr>` when it is a dtype (`np.float64`) rather than a function.
    pub(crate) fn numpy_dtype(attr: &str) -> Option<TypeId> {
        DTYPE_NAMES
            .iter()
            .find(|(n, _)| *n == attr)
            .map(|&(_, t)| intern(Type::NumberClass(t)))
    }
}

/// A 2-d float or complex array's dtype (Numba's `_check_linalg_matrix`).
fn la_matrix(t: TypeId) -> Option<TypeId> {
    match array_parts(t)? {
        (d, 2, ..) if d.is_float() || d.is_complex() => Some(d),
        _ => None,
    }
}

/// A 1-d or 2-d float or complex array's dtype and rank (`_check_linalg_1_or_2d_matrix`).
fn la_vector_or_matrix(t: TypeId) -> Option<(TypeId, u32)> {
    match array_parts(t)? {
        (d, n @ (1 | 2), ..) if d.is_float() || d.is_complex() => Some((d, n)),
        _ => None,
    }
}

/// The real type of a dtype's precision (`underlying_float`).
fn real_of(d: TypeId) -> TypeId {
    match d {
        FLOAT32 | COMPLEX64 => FLOAT32,
        _ => FLOAT64,
    }
}

/// A scalar parameter Numba compares at run time (`ord`, `tol`, `rcond`, ...).
fn real_param(t: TypeId) -> bool {
    (t.is_scalar() && !t.is_complex()) || t == BOOLEAN
}

/// `np.linalg.*` (and `np.vdot`, `np.outer`, `np.trace`) as Numba types them: float and
/// complex arrays only, results of the input's dtype except where Numba's implementation
/// widens (determinants and traces are 64-bit; norms are float64 except the 2-norm of a
/// vector; `lstsq`'s rank is int32). Layouts are those Numba's implementations return.
fn linalg_signature(name: &str, a: &[TypeId]) -> Option<TypeId> {
    use Layout::{C, F};
    let args: Vec<TypeId> = a.iter().map(|t| t.unliteral()).collect();
    match (name, args.as_slice()) {
        ("inv" | "pinv", [x, rest @ ..]) if rest.len() <= usize::from(name == "pinv") => {
            if rest.iter().any(|&t| !real_param(t)) {
                return None;
            }
            Some(array(la_matrix(*x)?, 2, F))
        }
        ("cholesky", [x]) => Some(array(la_matrix(*x)?, 2, C)),
        ("det", [x]) => Some(if la_matrix(*x)?.is_complex() {
            COMPLEX128
        } else {
            FLOAT64
        }),
        ("slogdet", [x]) => {
            let d = la_matrix(*x)?;
            let sign = if d.is_complex() { COMPLEX128 } else { FLOAT64 };
            Some(tuple_of(&[sign, FLOAT64]))
        }
        ("eig", [x]) => {
            let d = la_matrix(*x)?;
            Some(tuple_of(&[array(d, 1, C), array(d, 2, F)]))
        }
        ("eigvals", [x]) => Some(array(la_matrix(*x)?, 1, C)),
        ("eigh", [x]) => {
            let d = la_matrix(*x)?;
            Some(tuple_of(&[array(real_of(d), 1, C), array(d, 2, F)]))
        }
        ("eigvalsh", [x]) => Some(array(real_of(la_matrix(*x)?), 1, C)),
        ("svd", [x, rest @ ..]) if rest.len() <= 1 && rest.iter().all(|&t| real_param(t)) => {
            let d = la_matrix(*x)?;
            Some(tuple_of(&[
                array(d, 2, F),
                array(real_of(d), 1, C),
                array(d, 2, F),
            ]))
        }
        ("qr", [x]) => {
            let d = la_matrix(*x)?;
            Some(tuple_of(&[array(d, 2, F), array(d, 2, F)]))
        }
        ("solve", [x, y]) => {
            let d = la_matrix(*x)?;
            let (db, nb) = la_vector_or_matrix(*y)?;
            (d == db).then(|| array(d, nb, if nb == 1 { C } else { F }))
        }
        ("lstsq", [x, y, rest @ ..]) if rest.len() <= 1 && rest.iter().all(|&t| real_param(t)) => {
            let d = la_matrix(*x)?;
            let (db, nb) = la_vector_or_matrix(*y)?;
            (d == db).then(|| {
                let r = array(real_of(d), 1, C);
                tuple_of(&[array(d, nb, C), r, INT32, r])
            })
        }
        ("norm", [x, rest @ ..]) if rest.len() <= 1 => {
            let (d, n) = la_vector_or_matrix(*x)?;
            match rest.first() {
                None => Some(if n == 1 { real_of(d) } else { FLOAT64 }),
                Some(&NONE) => Some(if n == 1 { real_of(d) } else { FLOAT64 }),
                Some(&t) if real_param(t) => Some(FLOAT64),
                _ => None,
            }
        }
        ("matrix_rank", [x, rest @ ..]) if rest.len() <= 1 => {
            la_vector_or_matrix(*x)?;
            rest.iter()
                .all(|&t| t == NONE || real_param(t))
                .then_some(INT64)
        }
        _ => None,
    }
}

impl BaseContext {
    /// `np.linalg`'s functions, `np.vdot`, `np.outer`, `np.trace`, and
    /// `np.pi`/`np.e`/`np.inf`/`np.nan` (`np.linalg.LinAlgError` is resolved in
    /// `resolve_getattr`).
    pub(crate) fn install_linalg(&mut self) {
        // NumPy's float constants (`np.linalg.norm(x, np.inf)`).
        for c in ["pi", "e", "inf", "nan"] {
            self.register_module_const(format!("numpy.{c}"), FLOAT64);
        }
        for name in [
            "inv",
            "solve",
            "det",
            "slogdet",
            "eig",
            "eigvals",
            "eigh",
            "eigvalsh",
            "svd",
            "qr",
            "cholesky",
            "lstsq",
            "norm",
            "matrix_rank",
            "pinv",
        ] {
            let key: &'static str = Box::leak(format!("numpy.linalg.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        let ret = linalg_signature(name, a)?;
                        Some(sig(key, ret, a.iter().map(|t| t.unliteral()).collect()))
                    },
                    "(array(float or complex, 2d), ...)",
                )),
            );
        }
        self.register(
            "numpy.vdot",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y] => {
                        let (dx, nx, ..) = array_parts(*x)?;
                        let (dy, ny, ..) = array_parts(*y)?;
                        (nx == 1 && ny == 1 && dx == dy && (dx.is_float() || dx.is_complex()))
                            .then(|| sig("numpy.vdot", dx, vec![*x, *y]))
                    }
                    _ => None,
                },
                "(array(float or complex, 1d), array(same dtype, 1d))",
            )),
        );
        self.register(
            "numpy.outer",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y] => {
                        let ok = |t: TypeId| match array_parts(t) {
                            Some((d, n, ..)) => n <= 2 && d.is_scalar(),
                            None => t.is_scalar(),
                        };
                        let (x, y) = (x.unliteral(), y.unliteral());
                        if !ok(x) || !ok(y) {
                            return None;
                        }
                        let d = ufunc_loop(element(x)?, element(y)?)?;
                        Some(sig("numpy.outer", array(d, 2, Layout::C), vec![x, y]))
                    }
                    _ => None,
                },
                "(array (up to 2d) or number, array (up to 2d) or number)",
            )),
        );
        self.register(
            "numpy.trace",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, rest @ ..] if rest.len() <= 1 => {
                        let d = la_matrix(*x)?;
                        if !rest.iter().all(|t| t.unliteral().is_integer()) {
                            return None;
                        }
                        let ret = if d.is_complex() { COMPLEX128 } else { FLOAT64 };
                        Some(sig(
                            "numpy.trace",
                            ret,
                            a.iter().map(|t| t.unliteral()).collect(),
                        ))
                    }
                    _ => None,
                },
                "(array(float or complex, 2d), offset=int)",
            )),
        );
    }
}
