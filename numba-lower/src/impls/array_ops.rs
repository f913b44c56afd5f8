//! Whole-array operations on top of `arrays.rs`: basic slicing (views), reductions
//! (`sum`, `prod`, `min`, `max`, `mean`), element-wise operators and NumPy ufuncs
//! (an array with an array of the same shape, or with a scalar), `copy`, and assignment
//! to slices. Each loops over the elements in C order by a flat index; the operation on
//! one element is the registered scalar implementation.

use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, IntValue, PhiValue, PointerValue, StructValue};
use inkwell::IntPredicate;
use numba_ir::{BinOp, UnaryOp};
use numba_typeinfer::conv::tuple_items;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::arrays::allocate;
use crate::function::FnLower;
use crate::model::array::{array_struct, field, ndim};
use crate::model::model_of;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, LowerError, R};

pub(super) fn is_array(t: TypeId) -> bool {
    t.is_array()
}

pub(super) fn dtype_of(t: TypeId) -> TypeId {
    match t.get() {
        Type::Array { dtype, .. } => dtype,
        _ => t,
    }
}

/// Unary and binary ufuncs lowered element-wise, with the scalar operation each applies.
const UNARY_UFUNCS: &[(&str, &str)] = &[
    ("sqrt", "math.sqrt"),
    ("exp", "math.exp"),
    ("log", "math.log"),
    ("log10", "math.log10"),
    ("log2", "math.log2"),
    ("sin", "math.sin"),
    ("cos", "math.cos"),
    ("tan", "math.tan"),
    ("arcsin", "math.asin"),
    ("arccos", "math.acos"),
    ("arctan", "math.atan"),
    ("sinh", "math.sinh"),
    ("cosh", "math.cosh"),
    ("tanh", "math.tanh"),
    ("arcsinh", "math.asinh"),
    ("arccosh", "math.acosh"),
    ("arctanh", "math.atanh"),
    ("floor", "floor"),
    ("ceil", "ceil"),
    ("trunc", "trunc"),
    ("abs", "abs"),
    ("absolute", "abs"),
    ("expm1", "math.expm1"),
    ("log1p", "math.log1p"),
    ("negative", "neg"),
    ("square", "square"),
    ("sign", "sign"),
    ("logical_not", "logical_not"),
    ("exp2", "exp2"),
    ("cbrt", "cbrt"),
    ("deg2rad", "radians"),
    ("radians", "radians"),
    ("rad2deg", "degrees"),
    ("degrees", "degrees"),
    ("rint", "rint"),
    ("fabs", "fabs"),
    ("spacing", "spacing"),
    ("positive", "pos"),
    ("reciprocal", "reciprocal"),
    ("signbit", "signbit"),
];

const BINARY_UFUNCS: &[(&str, &str)] = &[
    ("add", "+"),
    ("subtract", "-"),
    ("multiply", "*"),
    ("divide", "/"),
    ("true_divide", "/"),
    ("power", "**"),
    ("minimum", "min"),
    ("maximum", "max"),
    ("arctan2", "math.atan2"),
    ("hypot", "math.hypot"),
    ("logical_and", "logical_and"),
    ("logical_or", "logical_or"),
    ("logical_xor", "logical_xor"),
    ("copysign", "copysign"),
    ("fmax", "fmax"),
    ("fmin", "fmin"),
    ("fmod", "fmod"),
    ("gcd", "gcd"),
    ("lcm", "lcm"),
    ("ldexp", "math.ldexp"),
    ("logaddexp", "logaddexp"),
    ("logaddexp2", "logaddexp2"),
    ("nextafter", "nextafter"),
    ("float_power", "float_power"),
];

pub(crate) fn register(r: &mut Registry) {
    let array = || TypePat::Pred(is_array);
    for m in ["sum", "prod", "min", "max", "mean"] {
        r.register(
            ImplKey::Function(format!("array.{m}")),
            Args::Exact(vec![array()]),
            reduce,
        );
        r.register(
            ImplKey::Function(format!("numpy.{m}")),
            Args::Exact(vec![array()]),
            reduce,
        );
        for key in [format!("array.{m}"), format!("numpy.{m}")] {
            r.register(
                ImplKey::Function(key),
                Args::Exact(vec![array(), TypePat::Pred(|t| t.is_integer())]),
                reduce_axis,
            );
        }
    }
    r.register(
        ImplKey::Function("array.copy".into()),
        Args::Exact(vec![array()]),
        copy,
    );
    for &op in numba_typeinfer::numpy::ELEMENTWISE_BINOPS {
        r.register(ImplKey::BinOp(op), Args::AnyArg(array()), elementwise_binop);
    }
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![array(), TypePat::Any]),
        array_contains,
    );
    for op in [UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Invert] {
        r.register(
            ImplKey::Unary(op),
            Args::Exact(vec![array()]),
            elementwise_unary,
        );
    }
    for (name, _) in UNARY_UFUNCS {
        r.register(
            ImplKey::Function(format!("numpy.{name}")),
            Args::Exact(vec![TypePat::Any]),
            unary_ufunc,
        );
    }
    for (name, _) in BINARY_UFUNCS {
        r.register(
            ImplKey::Function(format!("numpy.{name}")),
            Args::Exact(vec![TypePat::Any, TypePat::Any]),
            binary_ufunc,
        );
    }
    // A ufunc with its output array given last: computed, then stored into `out`.
    {
        use numba_typeinfer::numpy as tn;
        let out = || TypePat::Pred(is_array);
        let unary = tn::FLOAT_UFUNCS
            .iter()
            .chain(tn::SAME_KIND_UFUNCS)
            .chain(tn::INVERT_UFUNCS)
            .chain(&["isnan", "isinf", "isfinite", "isnat", "conj", "conjugate"]);
        for name in unary {
            r.register(
                ImplKey::Function(format!("numpy.{name}")),
                Args::Exact(vec![TypePat::Any, out()]),
                ufunc_into_out,
            );
        }
        let binary = tn::BINARY_UFUNCS
            .iter()
            .chain(tn::OPERATOR_UFUNCS.iter().map(|(n, _)| n));
        for name in binary {
            r.register(
                ImplKey::Function(format!("numpy.{name}")),
                Args::Exact(vec![TypePat::Any, TypePat::Any, out()]),
                ufunc_into_out,
            );
        }
    }
    // A ufunc that is an operator, called on numbers (on arrays it is typed as the
    // operator itself): the operator under NumPy's rules (`np.floor_divide(7, 0)` is 0).
    for (name, _) in numba_typeinfer::numpy::OPERATOR_UFUNCS {
        r.register(
            ImplKey::Function(format!("numpy.{name}")),
            Args::Exact(vec![TypePat::Any, TypePat::Any]),
            scalar_operator_ufunc,
        );
    }
}

pub(super) fn get_int<'ctx>(
    lw: &FnLower<'ctx, '_>,
    arr: StructValue<'ctx>,
    f: u32,
) -> R<IntValue<'ctx>> {
    Ok(lw
        .b
        .build_extract_value(arr, f, "")
        .map_err(llvm_err)?
        .into_int_value())
}

pub(super) fn dim<'ctx>(
    lw: &FnLower<'ctx, '_>,
    arr: StructValue<'ctx>,
    f: u32,
    d: u32,
) -> R<IntValue<'ctx>> {
    let a =
        lw.b.build_extract_value(arr, f, "")
            .map_err(llvm_err)?
            .into_array_value();
    Ok(lw
        .b
        .build_extract_value(a, d, "")
        .map_err(llvm_err)?
        .into_int_value())
}

/// The array's data pointer.
pub(super) fn data_ptr<'ctx>(
    lw: &FnLower<'ctx, '_>,
    arr: StructValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    Ok(lw
        .b
        .build_extract_value(arr, field::DATA, "")
        .map_err(llvm_err)?
        .into_pointer_value())
}

/// The array's byte strides, one per axis.
pub(super) fn strides_of<'ctx>(
    lw: &FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
) -> R<Vec<IntValue<'ctx>>> {
    (0..ndim(t))
        .map(|d| dim(lw, arr, field::STRIDES, d))
        .collect()
}

/// A counted loop `for i in 0..n`, built in two halves around its body.
pub(crate) struct Loop<'ctx> {
    phi: PhiValue<'ctx>,
    head: BasicBlock<'ctx>,
    done: BasicBlock<'ctx>,
}

impl<'ctx> Loop<'ctx> {
    /// Start the loop; the builder is left in the body, and the index is returned.
    pub(crate) fn begin(
        lw: &mut FnLower<'ctx, '_>,
        n: IntValue<'ctx>,
    ) -> R<(Loop<'ctx>, IntValue<'ctx>)> {
        let i64t = lw.ctx.i64_type();
        let pre =
            lw.b.get_insert_block()
                .ok_or_else(|| LowerError::Llvm("no block".into()))?;
        let head = lw.new_block("loop.head");
        let body = lw.new_block("loop.body");
        let done = lw.new_block("loop.done");
        lw.b.build_unconditional_branch(head).map_err(llvm_err)?;
        lw.b.position_at_end(head);
        let phi = lw.b.build_phi(i64t, "i").map_err(llvm_err)?;
        phi.add_incoming(&[(&i64t.const_zero(), pre)]);
        let i = phi.as_basic_value().into_int_value();
        let more =
            lw.b.build_int_compare(IntPredicate::SLT, i, n, "")
                .map_err(llvm_err)?;
        lw.b.build_conditional_branch(more, body, done)
            .map_err(llvm_err)?;
        lw.b.position_at_end(body);
        Ok((Loop { phi, head, done }, i))
    }

    /// Close the loop; the builder is left after it.
    pub(crate) fn end(self, lw: &mut FnLower<'ctx, '_>) -> R<()> {
        let i64t = lw.ctx.i64_type();
        let i = self.phi.as_basic_value().into_int_value();
        let next =
            lw.b.build_int_add(i, i64t.const_int(1, false), "")
                .map_err(llvm_err)?;
        let latch =
            lw.b.get_insert_block()
                .ok_or_else(|| LowerError::Llvm("no block".into()))?;
        lw.b.build_unconditional_branch(self.head)
            .map_err(llvm_err)?;
        self.phi.add_incoming(&[(&next, latch)]);
        lw.b.position_at_end(self.done);
        Ok(())
    }
}

/// `x, y, z = a` for a 1-d array: its elements as a tuple, after Python's length checks.
pub(crate) fn unpack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    count: u32,
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let n = dim(lw, arr, field::SHAPE, 0)?;
    super::lists::check_unpack_len(lw, n, count)?;
    let dtype = dtype_of(t);
    let mut items = Vec::with_capacity(count as usize);
    for i in 0..count {
        let p = flat_ptr(lw, t, arr, i64t.const_int(u64::from(i), false))?;
        items.push(load_elem(lw, dtype, p)?);
    }
    lw.make_struct(intern(Type::UniTuple(dtype, count)), &items)
}

/// Element `i` of a contiguous array in memory order (C or F).
fn memory_ptr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    i: IntValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    let dtype = dtype_of(t);
    let data = data_ptr(lw, arr)?;
    let elem = model_of(dtype)?.memory_type(lw.ctx, dtype)?;
    // SAFETY (of the generated code): i < nitems.
    unsafe { lw.b.build_gep(elem, data, &[i], "").map_err(llvm_err) }
}

/// The address of element `i` (C order over the array's shape).
pub(crate) fn flat_ptr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    i: IntValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let n = ndim(t);
    // A C-contiguous array's flat index is its element index.
    if matches!(
        t.get(),
        Type::Array {
            layout: numba_typeinfer::types::Layout::C,
            ..
        }
    ) {
        return memory_ptr(lw, t, arr, i);
    }
    let mut rest = i;
    let mut off = i64t.const_zero();
    for d in (0..n).rev() {
        let len = dim(lw, arr, field::SHAPE, d)?;
        let stride = dim(lw, arr, field::STRIDES, d)?;
        let (idx, next) = if d == 0 {
            (rest, rest)
        } else {
            let idx =
                lw.b.build_int_unsigned_rem(rest, len, "")
                    .map_err(llvm_err)?;
            let next =
                lw.b.build_int_unsigned_div(rest, len, "")
                    .map_err(llvm_err)?;
            (idx, next)
        };
        let term = lw.b.build_int_mul(idx, stride, "").map_err(llvm_err)?;
        off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
        rest = next;
    }
    let data = data_ptr(lw, arr)?;
    // SAFETY (of the generated code): i < nitems keeps the offset inside the array.
    unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), data, &[off], "")
            .map_err(llvm_err)
    }
}

/// The LLVM type of one element of `dtype` as an array stores it (a record's bytes).
pub(crate) fn elem_storage<'ctx>(
    ctx: &'ctx inkwell::context::Context,
    dtype: TypeId,
) -> R<inkwell::types::BasicTypeEnum<'ctx>> {
    if numba_typeinfer::records::is_record(dtype) {
        return Ok(crate::model::record::storage_type(ctx, dtype));
    }
    model_of(dtype)?.memory_type(ctx, dtype)
}

/// The element at `p`: loaded, or for a record the reference to its bytes.
pub(crate) fn load_elem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dtype: TypeId,
    p: PointerValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    if numba_typeinfer::records::is_record(dtype) {
        return Ok(p.into());
    }
    let m = model_of(dtype)?;
    let v =
        lw.b.build_load(m.memory_type(lw.ctx, dtype)?, p, "")
            .map_err(llvm_err)?;
    m.load_memory(lw.ctx, &lw.b, dtype, v)
}

pub(crate) fn store_elem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dtype: TypeId,
    p: PointerValue<'ctx>,
    v: BasicValueEnum<'ctx>,
) -> R<()> {
    if let Some(size) = numba_typeinfer::records::size(dtype) {
        // A record's bytes copied (`a[i] = a[j]` may name the same item: memmove).
        let n = lw.ctx.i64_type().const_int(u64::from(size), false);
        lw.b.build_memmove(p, 1, v.into_pointer_value(), 1, n)
            .map_err(llvm_err)?;
        return Ok(());
    }
    let m = model_of(dtype)?;
    let v = m.store_memory(lw.ctx, &lw.b, dtype, v)?;
    lw.b.build_store(p, v).map_err(llvm_err)?;
    Ok(())
}

pub(super) fn apply_binop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: BinOp,
    (x, xt): (BasicValueEnum<'ctx>, TypeId),
    (y, yt): (BasicValueEnum<'ctx>, TypeId),
) -> R<(BasicValueEnum<'ctx>, TypeId)> {
    // Integers whose NumPy loop is float64 (uint64 with a signed integer) compute in it,
    // as NumPy's loop does; Python's rules would take int64 and read 2**63 up as negative.
    if xt.is_integer() && yt.is_integer() {
        if let Some(t) = numba_typeinfer::numpy::ufunc_loop(xt, yt).filter(|t| t.is_float()) {
            let x = lw.cast(x, xt, t)?;
            let y = lw.cast(y, yt, t)?;
            return apply_binop(lw, op, (x, t), (y, t));
        }
    }
    if matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
        && (xt.is_complex() || yt.is_complex())
    {
        return complex_order(lw, op, (x, xt), (y, yt));
    }
    let sig = numba_typeinfer::context::binop_signature(op, xt, yt)
        .ok_or_else(|| lw.unsupported(format!("no operator {} on {xt} and {yt}", op.symbol())))?;
    let x = lw.cast(x, xt, sig.args[0])?;
    let y = lw.cast(y, yt, sig.args[1])?;
    // NumPy's integer power loop refuses negative exponents (Python's int power would
    // go to float, or raise ZeroDivisionError for 0).
    if op == BinOp::Pow && sig.args[1].is_integer() && sig.args[1].is_signed() {
        let e = y.into_int_value();
        let neg =
            lw.b.build_int_compare(IntPredicate::SLT, e, e.get_type().const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(
            neg,
            "ValueError",
            &["Integers to negative integer powers are not allowed."],
        )?;
    }
    if matches!(op, BinOp::LShift | BinOp::RShift)
        && sig.args[0].is_integer()
        && sig.args[0] == sig.args[1]
    {
        let r = numpy_shift(lw, op, x.into_int_value(), y.into_int_value(), sig.args[0])?;
        return Ok((r, sig.args[0]));
    }
    Ok((lw.call_impl(&sig, &[x, y])?, sig.ret))
}

/// NumPy's shift loops (`npy_lshift` / `npy_rshift`): the count read as unsigned, so a
/// negative or too large count shifts everything out (0, or -1 for a negative value
/// shifted right) instead of raising as Python's shift of ints does.
fn numpy_shift<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: BinOp,
    a: IntValue<'ctx>,
    count: IntValue<'ctx>,
    t: TypeId,
) -> R<BasicValueEnum<'ctx>> {
    let it = a.get_type();
    let bits = u64::from(it.get_bit_width());
    let e = llvm_err;
    let big =
        lw.b.build_int_compare(IntPredicate::UGE, count, it.const_int(bits, false), "")
            .map_err(e)?;
    let sh =
        lw.b.build_select(big, it.const_zero(), count, "")
            .map_err(e)?
            .into_int_value();
    let signed = t.is_signed();
    Ok(if op == BinOp::LShift {
        let v = lw.b.build_left_shift(a, sh, "").map_err(e)?;
        lw.b.build_select(big, it.const_zero(), v, "").map_err(e)?
    } else {
        let v = lw.b.build_right_shift(a, sh, signed, "").map_err(e)?;
        let fill = if signed {
            let neg =
                lw.b.build_int_compare(IntPredicate::SLT, a, it.const_zero(), "")
                    .map_err(e)?;
            lw.b.build_select(neg, it.const_all_ones(), it.const_zero(), "")
                .map_err(e)?
                .into_int_value()
        } else {
            it.const_zero()
        };
        lw.b.build_select(big, fill, v, "").map_err(e)?
    })
}

/// NumPy's order of complex numbers (its ufunc loops): by real part, then imaginary
/// part; any comparison with NaN is false.
fn complex_order<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: BinOp,
    (x, xt): (BasicValueEnum<'ctx>, TypeId),
    (y, yt): (BasicValueEnum<'ctx>, TypeId),
) -> R<(BasicValueEnum<'ctx>, TypeId)> {
    use inkwell::FloatPredicate as P;
    let t = numba_typeinfer::numpy::ufunc_loop(xt, yt)
        .filter(|t| t.is_complex())
        .unwrap_or(COMPLEX128);
    let (x, y) = (lw.cast(x, xt, t)?, lw.cast(y, yt, t)?);
    let part = |lw: &FnLower<'ctx, '_>, v: BasicValueEnum<'ctx>, i: u32| {
        lw.b.build_extract_value(v.into_struct_value(), i, "")
            .map_err(llvm_err)
            .map(|p| p.into_float_value())
    };
    let (xr, xi, yr, yi) = (
        part(lw, x, 0)?,
        part(lw, x, 1)?,
        part(lw, y, 0)?,
        part(lw, y, 1)?,
    );
    let (strict, last) = match op {
        BinOp::Lt => (P::OLT, P::OLT),
        BinOp::Le => (P::OLT, P::OLE),
        BinOp::Gt => (P::OGT, P::OGT),
        _ => (P::OGT, P::OGE),
    };
    let b = &lw.b;
    let real_decides = b
        .build_float_compare(strict, xr, yr, "")
        .map_err(llvm_err)?;
    let real_equal = b
        .build_float_compare(P::OEQ, xr, yr, "")
        .map_err(llvm_err)?;
    let imag = b.build_float_compare(last, xi, yi, "").map_err(llvm_err)?;
    let tie = b.build_and(real_equal, imag, "").map_err(llvm_err)?;
    let r = b.build_or(real_decides, tie, "").map_err(llvm_err)?;
    Ok((r.into(), BOOLEAN))
}

/// A value with its type.
pub(super) type Typed<'ctx> = (BasicValueEnum<'ctx>, TypeId);

/// The operation applied to the elements at one position.
pub(super) type ElementOp<'f, 'ctx, 'a> =
    &'f mut dyn FnMut(&mut FnLower<'ctx, 'a>, &[Typed<'ctx>]) -> R<Typed<'ctx>>;

/// A new array of type `ret` whose element `i` is `f(element i of each operand)`.
pub(super) fn map_elements<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    ret: TypeId,
    operands: &[(TypeId, BasicValueEnum<'ctx>)],
    f: ElementOp<'_, 'ctx, 'a>,
) -> R<BasicValueEnum<'ctx>> {
    map_elements_or(
        lw,
        ret,
        operands,
        f,
        ("ValueError", "operands could not be broadcast together"),
    )
}

/// [`map_elements`] raising `err` (class, message) when the operands do not broadcast.
pub(super) fn map_elements_or<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    ret: TypeId,
    operands: &[(TypeId, BasicValueEnum<'ctx>)],
    f: ElementOp<'_, 'ctx, 'a>,
    err: (&str, &str),
) -> R<BasicValueEnum<'ctx>> {
    // Every array operand 0-d: Numba types the result as a scalar (NumPy's too).
    if !ret.is_array() {
        if operands.iter().any(|(t, _)| ndim(*t) > 0) {
            return Err(lw.unsupported(format!("an element-wise result of type {ret}")));
        }
        let mut elems = Vec::with_capacity(operands.len());
        for &(t, v) in operands {
            if t.is_array() {
                let d = dtype_of(t);
                let zero = lw.ctx.i64_type().const_zero();
                let p = flat_ptr(lw, t, v.into_struct_value(), zero)?;
                elems.push((load_elem(lw, d, p)?, d));
            } else {
                elems.push((v, t));
            }
        }
        let (r, rt) = f(lw, &elems)?;
        return lw.cast(r, rt, ret);
    }
    let (dims, all_same) = broadcast_shape_or(lw, ndim(ret), operands, err)?;
    let out = allocate(lw, ret, &dims)?;
    // An element that raises (`a ** -2` on integers) releases the half-filled result.
    lw.temps.push((ret, out.into()));
    let filled = fill_elements(lw, (ret, out), &dims, all_same, operands, f);
    lw.temps.pop();
    filled?;
    Ok(out.into())
}

/// NumPy broadcasting of the array operands to `nd` axes (shapes aligned on the right; an
/// axis of length 1 stretches): the shape, raising Numba's ValueError when the operands
/// do not broadcast, and whether every array operand has exactly that shape.
pub(super) fn broadcast_shape<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    nd: u32,
    operands: &[(TypeId, BasicValueEnum<'ctx>)],
) -> R<(Vec<IntValue<'ctx>>, IntValue<'ctx>)> {
    broadcast_shape_or(
        lw,
        nd,
        operands,
        ("ValueError", "operands could not be broadcast together"),
    )
}

/// [`broadcast_shape`], raising `error` (a class and its message) when the operands do
/// not broadcast: a parfor's allocation raises Numba's array-analysis AssertionError.
pub(super) fn broadcast_shape_or<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    nd: u32,
    operands: &[(TypeId, BasicValueEnum<'ctx>)],
    error: (&str, &str),
) -> R<(Vec<IntValue<'ctx>>, IntValue<'ctx>)> {
    broadcast_checked(lw, nd, operands, error, false)
}

/// [`broadcast_shape_or`]; with `exact`, an axis of length 1 does not stretch either
/// (Numba's array-analysis assertion: every operand's axis equals the result's).
pub(super) fn broadcast_checked<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    nd: u32,
    operands: &[(TypeId, BasicValueEnum<'ctx>)],
    (class, message): (&str, &str),
    exact: bool,
) -> R<(Vec<IntValue<'ctx>>, IntValue<'ctx>)> {
    if !operands.iter().any(|(t, _)| t.is_array()) {
        return Err(lw.unsupported("an element-wise operation needs an array"));
    }
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let mut dims = vec![one; nd as usize];
    for &(t, v) in operands.iter().filter(|(t, _)| t.is_array()) {
        let k = nd - ndim(t);
        for d in k..nd {
            let od = dim(lw, v.into_struct_value(), field::SHAPE, d - k)?;
            let is_one =
                lw.b.build_int_compare(IntPredicate::EQ, dims[d as usize], one, "")
                    .map_err(llvm_err)?;
            dims[d as usize] =
                lw.b.build_select(is_one, od, dims[d as usize], "")
                    .map_err(llvm_err)?
                    .into_int_value();
        }
    }
    let mut bad = lw.ctx.bool_type().const_zero();
    let mut all_same = lw.ctx.bool_type().const_int(1, false);
    for &(t, v) in operands.iter().filter(|(t, _)| t.is_array()) {
        let k = nd - ndim(t);
        if k > 0 {
            all_same = lw.ctx.bool_type().const_zero();
        }
        for d in k..nd {
            let od = dim(lw, v.into_struct_value(), field::SHAPE, d - k)?;
            let same =
                lw.b.build_int_compare(IntPredicate::EQ, od, dims[d as usize], "")
                    .map_err(llvm_err)?;
            let ok = if exact {
                same
            } else {
                let is_one =
                    lw.b.build_int_compare(IntPredicate::EQ, od, one, "")
                        .map_err(llvm_err)?;
                lw.b.build_or(same, is_one, "").map_err(llvm_err)?
            };
            let not_ok = lw.b.build_not(ok, "").map_err(llvm_err)?;
            bad = lw.b.build_or(bad, not_ok, "").map_err(llvm_err)?;
            all_same = lw.b.build_and(all_same, same, "").map_err(llvm_err)?;
        }
    }
    lw.raise_const_if(bad, class, &[message])?;
    Ok((dims, all_same))
}

/// Store `f(elements of the operands at position i)` into every element `i` (C order) of
/// `dst`, whose shape is `dims`; every array operand broadcasts to `dims`. When
/// `all_same` holds (every array operand has the shape `dims`) and every array is C
/// contiguous, a flat loop LLVM can vectorise; otherwise a loop nest over the axes, each
/// operand addressed by its strides (0 along a stretched axis), with no division per
/// element.
pub(super) fn fill_elements<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    (dst_t, dst): (TypeId, StructValue<'ctx>),
    dims: &[IntValue<'ctx>],
    all_same: IntValue<'ctx>,
    operands: &[(TypeId, BasicValueEnum<'ctx>)],
    f: ElementOp<'_, 'ctx, 'a>,
) -> R<()> {
    // Every array contiguous in the same order (all C, or all F: an F result of F
    // operands): position `i` in memory is the same element in each.
    let layout_of = |t: TypeId| match t.get() {
        Type::Array { layout, .. } => Some(layout),
        _ => None,
    };
    let order = layout_of(dst_t).filter(|l| {
        matches!(
            l,
            numba_typeinfer::types::Layout::C | numba_typeinfer::types::Layout::F
        )
    });
    let same_order = order.is_some()
        && operands
            .iter()
            .all(|&(t, _)| !t.is_array() || layout_of(t) == order);
    if !same_order {
        return fill_nest(lw, (dst_t, dst), dims, operands, f);
    }
    let n = get_int(lw, dst, field::NITEMS)?;
    let dtype = dtype_of(dst_t);
    let fast = lw.new_block("bcast.same");
    let general = lw.new_block("bcast.general");
    let join = lw.new_block("bcast.done");
    lw.b.build_conditional_branch(all_same, fast, general)
        .map_err(llvm_err)?;
    lw.b.position_at_end(general);
    fill_nest(lw, (dst_t, dst), dims, operands, f)?;
    lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
    lw.b.position_at_end(fast);
    let (lp, i) = Loop::begin(lw, n)?;
    let mut elems = Vec::new();
    for &(t, v) in operands {
        if t.is_array() {
            let p = memory_ptr(lw, t, v.into_struct_value(), i)?;
            elems.push((load_elem(lw, dtype_of(t), p)?, dtype_of(t)));
        } else {
            elems.push((v, t));
        }
    }
    // Element operations follow NumPy: `x / 0` is inf, not a ZeroDivisionError.
    let (r, rt) = lw.with_numpy_errors(|lw| f(lw, &elems))?;
    let r = lw.cast(r, rt, dtype)?;
    let p = memory_ptr(lw, dst_t, dst, i)?;
    store_elem(lw, dtype, p, r)?;
    lp.end(lw)?;
    lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
    lw.b.position_at_end(join);
    Ok(())
}

/// [`fill_elements`] as a loop nest over `dims` (C order): each array operand's row is
/// addressed by the sum of index times stride over the outer axes (aligned on the right,
/// a stretched axis of length 1 taking stride 0); along the last axis, a loop indexing
/// elements when every operand's row is contiguous (which LLVM vectorises, as for slices
/// of a C array), else stepping by the strides.
fn fill_nest<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    (dst_t, dst): (TypeId, StructValue<'ctx>),
    dims: &[IntValue<'ctx>],
    operands: &[(TypeId, BasicValueEnum<'ctx>)],
    f: ElementOp<'_, 'ctx, 'a>,
) -> R<()> {
    let i64t = lw.ctx.i64_type();
    let nd = dims.len() as u32;
    let dtype = dtype_of(dst_t);
    // Per array operand (the destination last): its data, its dtype and each axis's
    // stride in the nest (None: the operand does not have the axis).
    struct Addressed<'ctx> {
        data: PointerValue<'ctx>,
        dtype: TypeId,
        strides: Vec<Option<IntValue<'ctx>>>,
    }
    let addressed_of =
        |lw: &mut FnLower<'ctx, 'a>, t: TypeId, arr: StructValue<'ctx>| -> R<Addressed<'ctx>> {
            let k = nd - ndim(t).min(nd);
            let mut strides = vec![None; nd as usize];
            for d in k..nd {
                let len = dim(lw, arr, field::SHAPE, d - k)?;
                let stride = dim(lw, arr, field::STRIDES, d - k)?;
                let stretched =
                    lw.b.build_int_compare(IntPredicate::EQ, len, i64t.const_int(1, false), "")
                        .map_err(llvm_err)?;
                strides[d as usize] = Some(
                    lw.b.build_select(stretched, i64t.const_zero(), stride, "")
                        .map_err(llvm_err)?
                        .into_int_value(),
                );
            }
            Ok(Addressed {
                data: data_ptr(lw, arr)?,
                dtype: dtype_of(t),
                strides,
            })
        };
    let mut arrays: Vec<Addressed<'ctx>> = Vec::new();
    for &(t, v) in operands {
        if t.is_array() {
            arrays.push(addressed_of(lw, t, v.into_struct_value())?);
        }
    }
    arrays.push(addressed_of(lw, dst_t, dst)?);
    // Whether every row is contiguous: the last axis's stride is the itemsize.
    let mut unit = lw.ctx.bool_type().const_int(1, false);
    if nd > 0 {
        for a in &arrays {
            if let Some(s) = a.strides[nd as usize - 1] {
                let size = i64t.const_int(super::arrays::itemsize(a.dtype), false);
                let eq =
                    lw.b.build_int_compare(IntPredicate::EQ, s, size, "")
                        .map_err(llvm_err)?;
                unit = lw.b.build_and(unit, eq, "").map_err(llvm_err)?;
            }
        }
    }
    let outer = nd.saturating_sub(1) as usize;
    let mut loops = Vec::with_capacity(outer);
    let mut idx = Vec::with_capacity(outer);
    for &n in &dims[..outer] {
        let (lp, i) = Loop::begin(lw, n)?;
        loops.push(lp);
        idx.push(i);
    }
    // Each array's row start.
    let mut rows = Vec::with_capacity(arrays.len());
    for a in &arrays {
        let mut off = i64t.const_zero();
        for (i, s) in idx.iter().zip(&a.strides) {
            if let Some(s) = s {
                let term = lw.b.build_int_mul(*i, *s, "").map_err(llvm_err)?;
                off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
            }
        }
        // SAFETY (of the generated code): every index is below its axis's length.
        rows.push(unsafe {
            lw.b.build_gep(lw.ctx.i8_type(), a.data, &[off], "row")
                .map_err(llvm_err)?
        });
    }
    // One element at `j` along the last axis (None: a 0-d nest's single element).
    let mut element =
        |lw: &mut FnLower<'ctx, 'a>, j: Option<IntValue<'ctx>>, contiguous: bool| -> R<()> {
            let mut ptrs = Vec::with_capacity(arrays.len());
            for (a, &row) in arrays.iter().zip(&rows) {
                let last = if nd > 0 {
                    a.strides[nd as usize - 1]
                } else {
                    None
                };
                ptrs.push(match (j, last) {
                    (Some(j), Some(_)) if contiguous => {
                        let elem = model_of(a.dtype)?.memory_type(lw.ctx, a.dtype)?;
                        // SAFETY (of the generated code): j is below the row's length.
                        unsafe { lw.b.build_gep(elem, row, &[j], "").map_err(llvm_err)? }
                    }
                    (Some(j), Some(s)) => {
                        let off = lw.b.build_int_mul(j, s, "").map_err(llvm_err)?;
                        // SAFETY (of the generated code): as above.
                        unsafe {
                            lw.b.build_gep(lw.ctx.i8_type(), row, &[off], "")
                                .map_err(llvm_err)?
                        }
                    }
                    _ => row,
                });
            }
            let mut elems = Vec::with_capacity(operands.len());
            let mut k = 0;
            for &(t, v) in operands {
                if t.is_array() {
                    elems.push((load_elem(lw, dtype_of(t), ptrs[k])?, dtype_of(t)));
                    k += 1;
                } else {
                    elems.push((v, t));
                }
            }
            // Element operations follow NumPy: `x / 0` is inf, not a ZeroDivisionError.
            let (r, rt) = lw.with_numpy_errors(|lw| f(lw, &elems))?;
            let r = lw.cast(r, rt, dtype)?;
            store_elem(lw, dtype, ptrs[k], r)
        };
    if nd == 0 {
        element(lw, None, false)?;
    } else {
        let n = dims[nd as usize - 1];
        let contiguous = lw.new_block("nest.contiguous");
        let strided = lw.new_block("nest.strided");
        let join = lw.new_block("nest.row.done");
        lw.b.build_conditional_branch(unit, contiguous, strided)
            .map_err(llvm_err)?;
        for (block, is_unit) in [(contiguous, true), (strided, false)] {
            lw.b.position_at_end(block);
            let (lp, j) = Loop::begin(lw, n)?;
            element(lw, Some(j), is_unit)?;
            lp.end(lw)?;
            lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
        }
        lw.b.position_at_end(join);
    }
    for lp in loops.into_iter().rev() {
        lp.end(lw)?;
    }
    Ok(())
}

/// The address of the element of `arr` (of type `t`) that position `i` of a C-ordered
/// result of shape `dims` reads under broadcasting.
pub(super) fn broadcast_ptr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    dims: &[IntValue<'ctx>],
    i: IntValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let nd = dims.len() as u32;
    let k = nd - ndim(t);
    let mut rest = i;
    let mut off = i64t.const_zero();
    for d in (0..nd).rev() {
        let idx =
            lw.b.build_int_unsigned_rem(rest, dims[d as usize], "")
                .map_err(llvm_err)?;
        rest =
            lw.b.build_int_unsigned_div(rest, dims[d as usize], "")
                .map_err(llvm_err)?;
        if d < k {
            continue;
        }
        let od = dim(lw, arr, field::SHAPE, d - k)?;
        let stride = dim(lw, arr, field::STRIDES, d - k)?;
        let stretched =
            lw.b.build_int_compare(IntPredicate::EQ, od, i64t.const_int(1, false), "")
                .map_err(llvm_err)?;
        let idx =
            lw.b.build_select(stretched, i64t.const_zero(), idx, "")
                .map_err(llvm_err)?
                .into_int_value();
        let term = lw.b.build_int_mul(idx, stride, "").map_err(llvm_err)?;
        off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
    }
    let data = data_ptr(lw, arr)?;
    // SAFETY (of the generated code): broadcast indices stay inside the operand.
    unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), data, &[off], "")
            .map_err(llvm_err)
    }
}

fn elementwise_binop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = super::binop_of(&sig.key);
    map_elements(
        lw,
        sig.ret,
        &[(sig.args[0], a[0]), (sig.args[1], a[1])],
        &mut |lw, e| apply_binop(lw, op, e[0], e[1]),
    )
}

fn elementwise_unary<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = match sig.key {
        ImplKey::Unary(op) => op,
        _ => return Err(lw.unsupported("array unary operator")),
    };
    map_elements(lw, sig.ret, &[(sig.args[0], a[0])], &mut |lw, e| {
        apply_unary(lw, op, e[0])
    })
}

/// A unary operator on one element, as NumPy applies it (`~` on a boolean is `not`).
pub(super) fn apply_unary<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: UnaryOp,
    (x, xt): Typed<'ctx>,
) -> R<Typed<'ctx>> {
    if op == UnaryOp::Invert && xt == BOOLEAN {
        let v = lw.b.build_not(x.into_int_value(), "").map_err(llvm_err)?;
        return Ok((v.into(), BOOLEAN));
    }
    let s = numba_typeinfer::context::unary_signature(op, xt)
        .ok_or_else(|| lw.unsupported(format!("no unary {} on {xt}", op.operator_name())))?;
    let x = lw.cast(x, xt, s.args[0])?;
    Ok((lw.call_impl(&s, &[x])?, s.ret))
}

/// The scalar function of a ufunc on one element.
pub(crate) fn scalar_call<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    key: &str,
    args: &[(BasicValueEnum<'ctx>, TypeId)],
) -> R<(BasicValueEnum<'ctx>, TypeId)> {
    let op = match key {
        "+" => Some(BinOp::Add),
        "-" => Some(BinOp::Sub),
        "*" => Some(BinOp::Mul),
        "/" => Some(BinOp::TrueDiv),
        "**" => Some(BinOp::Pow),
        _ => None,
    };
    if let Some(op) = op {
        return apply_binop(lw, op, args[0], args[1]);
    }
    if let Some(r) = super::ufunc_scalar::numpy_scalar(lw, key, args) {
        return r;
    }
    // `np.minimum(float_array, complex_array)`: both in their common type first, as
    // NumPy's loop for the pair takes them.
    if let ("min" | "max" | "fmin" | "fmax", [(a, ta), (b, tb)]) = (key, args) {
        let inexact = |t: &TypeId| t.is_complex() || t.is_float();
        // Only between floats and complex numbers: Numba gives complex numbers no order
        // against integers (`np.clip(complex_array, 0, 1)` is its TypingError).
        if ta != tb && inexact(ta) && inexact(tb) {
            if let Some(common) = numba_typeinfer::conv::unify(*ta, *tb) {
                let a = lw.cast(*a, *ta, common)?;
                let b = lw.cast(*b, *tb, common)?;
                return scalar_call(lw, key, &[(a, common), (b, common)]);
            }
        }
    }
    match key {
        "neg" => return apply_unary(lw, UnaryOp::Neg, args[0]),
        "square" => return apply_binop(lw, BinOp::Mul, args[0], args[0]),
        "sign" => return sign(lw, args[0]),
        // NumPy's logical ufuncs: the truth of each operand, a bool.
        "logical_not" | "logical_and" | "logical_or" | "logical_xor" => {
            let mut t = Vec::new();
            for &(v, ty) in args {
                t.push(lw.truth(v, ty)?);
            }
            let e = llvm_err;
            let r = match key {
                "logical_not" => lw.b.build_not(t[0], "").map_err(e)?,
                "logical_and" => lw.b.build_and(t[0], t[1], "").map_err(e)?,
                "logical_or" => lw.b.build_or(t[0], t[1], "").map_err(e)?,
                _ => lw.b.build_xor(t[0], t[1], "").map_err(e)?,
            };
            return Ok((r.into(), BOOLEAN));
        }
        // Complex min/max in lexicographic order, as Numba's reductions and NumPy's
        // loops compare them: `minimum`/`maximum` propagate a NaN (either part), `fmin`/
        // `fmax` ignore one.
        "min" | "max" | "fmin" | "fmax" if args[0].1.is_complex() && args[0].1 == args[1].1 => {
            let (a, t) = args[0];
            let (b, _) = args[1];
            let part = |lw: &FnLower<'ctx, '_>, v: BasicValueEnum<'ctx>, k| -> R<_> {
                Ok(lw
                    .b
                    .build_extract_value(v.into_struct_value(), k, "")
                    .map_err(llvm_err)?
                    .into_float_value())
            };
            let (ar, ai, br, bi) = (
                part(lw, a, 0)?,
                part(lw, a, 1)?,
                part(lw, b, 0)?,
                part(lw, b, 1)?,
            );
            let pred = if key == "min" || key == "fmin" {
                inkwell::FloatPredicate::OLT
            } else {
                inkwell::FloatPredicate::OGT
            };
            let cmp = |lw: &FnLower<'ctx, '_>, p, x, y| {
                lw.b.build_float_compare(p, x, y, "").map_err(llvm_err)
            };
            let real_better = cmp(lw, pred, br, ar)?;
            let real_same = cmp(lw, inkwell::FloatPredicate::OEQ, br, ar)?;
            let imag_better = cmp(lw, pred, bi, ai)?;
            let tie =
                lw.b.build_and(real_same, imag_better, "")
                    .map_err(llvm_err)?;
            let better = lw.b.build_or(real_better, tie, "").map_err(llvm_err)?;
            let uno = inkwell::FloatPredicate::UNO;
            let a_nan =
                lw.b.build_or(cmp(lw, uno, ar, ar)?, cmp(lw, uno, ai, ai)?, "")
                    .map_err(llvm_err)?;
            let b_nan =
                lw.b.build_or(cmp(lw, uno, br, br)?, cmp(lw, uno, bi, bi)?, "")
                    .map_err(llvm_err)?;
            // NumPy: `maximum` keeps `a` when it is NaN, else takes a NaN `b`; `fmax`
            // keeps `a` when `b` is NaN, else replaces a NaN `a`.
            let (keep_a, prefer_b) = if key.starts_with('f') {
                (b_nan, a_nan)
            } else {
                (a_nan, b_nan)
            };
            let want_b = lw.b.build_or(better, prefer_b, "").map_err(llvm_err)?;
            let not_keep = lw.b.build_not(keep_a, "").map_err(llvm_err)?;
            let take = lw.b.build_and(want_b, not_keep, "").map_err(llvm_err)?;
            let r = lw.b.build_select(take, b, a, "").map_err(llvm_err)?;
            return Ok((r, t));
        }
        // NumPy's minimum/maximum and min/max reductions propagate NaN (Python's min/max
        // would keep whichever operand came first).
        "min" | "max" if args[0].1.is_float() && args[0].1 == args[1].1 => {
            let (a, t) = args[0];
            let (b, _) = args[1];
            let (a, b) = (a.into_float_value(), b.into_float_value());
            let pred = if key == "min" {
                inkwell::FloatPredicate::OLT
            } else {
                inkwell::FloatPredicate::OGT
            };
            let better = lw.b.build_float_compare(pred, b, a, "").map_err(llvm_err)?;
            let nan =
                lw.b.build_float_compare(inkwell::FloatPredicate::UNO, b, b, "")
                    .map_err(llvm_err)?;
            let take = lw.b.build_or(better, nan, "").map_err(llvm_err)?;
            let r = lw.b.build_select(take, b, a, "").map_err(llvm_err)?;
            return Ok((r, t));
        }
        _ => {}
    }
    let tys: Vec<TypeId> = args.iter().map(|a| a.1).collect();
    // On complex numbers a ufunc is the `cmath` function (C99's complex functions, as
    // NumPy's are).
    let cmath;
    let key = match key.strip_prefix("math.") {
        Some(name) if tys.first().is_some_and(|t| t.is_complex()) => {
            use numba_typeinfer::builtins::{CMATH_COMPLEX, NPY_COMPLEX};
            if CMATH_COMPLEX.contains(&name) {
                cmath = format!("cmath.{name}");
            } else if NPY_COMPLEX.contains(&name) {
                cmath = format!("npcomplex.{name}");
            } else {
                cmath = key.to_string();
            }
            cmath.as_str()
        }
        _ => key,
    };
    let typing = numba_typeinfer::BaseContext::builtin();
    let f = intern(Type::Function(key.to_string()));
    let sig = numba_typeinfer::TypingContext::resolve_call(typing, f, &tys).ok_or_else(|| {
        let names: Vec<String> = tys.iter().map(ToString::to_string).collect();
        lw.unsupported(format!("no {key} for ({})", names.join(", ")))
    })?;
    let mut vals = Vec::new();
    for (&(v, t), &to) in args.iter().zip(&sig.args) {
        vals.push(lw.cast(v, t, to)?);
    }
    Ok((lw.call_impl(&sig, &vals)?, sig.ret))
}

/// NumPy's ufunc `name` (`sqrt`, `add`) applied to one element of each input.
pub(super) fn ufunc_element<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    name: &str,
    args: &[Typed<'ctx>],
) -> R<Typed<'ctx>> {
    let table = if args.len() == 1 {
        UNARY_UFUNCS
    } else {
        BINARY_UFUNCS
    };
    let (_, key) = table
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| lw.unsupported(format!("numpy.{name} element-wise")))?;
    scalar_call(lw, key, args)
}

fn ufunc_name(sig: &Signature) -> &str {
    match &sig.key {
        ImplKey::Function(k) => k.strip_prefix("numpy.").unwrap_or(k),
        _ => "",
    }
}

fn unary_ufunc<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = ufunc_name(sig).to_string();
    let (_, key) = UNARY_UFUNCS
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| lw.unsupported(format!("numpy.{name}")))?;
    if !sig.args[0].is_array() {
        // NumPy's rules on numbers too (`np.reciprocal(0.0)` is inf, not an exception).
        let (r, rt) = lw.with_numpy_errors(|lw| scalar_call(lw, key, &[(a[0], sig.args[0])]))?;
        return lw.cast(r, rt, sig.ret);
    }
    map_elements(lw, sig.ret, &[(sig.args[0], a[0])], &mut |lw, e| {
        scalar_call(lw, key, e)
    })
}

fn scalar_operator_ufunc<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = ufunc_name(sig).to_string();
    let op = numba_typeinfer::numpy::OPERATOR_UFUNCS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, op)| *op)
        .ok_or_else(|| lw.unsupported(format!("numpy.{name}")))?;
    let (r, rt) =
        lw.with_numpy_errors(|lw| apply_binop(lw, op, (a[0], sig.args[0]), (a[1], sig.args[1])))?;
    lw.cast(r, rt, sig.ret)
}

fn binary_ufunc<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = ufunc_name(sig).to_string();
    let (_, key) = BINARY_UFUNCS
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| lw.unsupported(format!("numpy.{name}")))?;
    if !sig.args[0].is_array() && !sig.args[1].is_array() {
        // NumPy's rules on numbers too (`np.divide(2.0, 0.0)` is inf, as in Numba).
        let (r, rt) = lw.with_numpy_errors(|lw| {
            scalar_call(lw, key, &[(a[0], sig.args[0]), (a[1], sig.args[1])])
        })?;
        return lw.cast(r, rt, sig.ret);
    }
    map_elements(
        lw,
        sig.ret,
        &[(sig.args[0], a[0]), (sig.args[1], a[1])],
        &mut |lw, e| scalar_call(lw, key, e),
    )
}

/// `np.ufunc(inputs..., out)`: the ufunc's result as without `out` (typed by the same
/// template), stored into `out` as `out[...] = result` stores (broadcast, cast); the
/// value is `out` itself, a new reference. A ufunc with two results (`divmod`) takes
/// two output arrays and gives the pair of them.
pub(crate) fn ufunc_into_out<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let nout = match numba_typeinfer::conv::tuple_items(sig.ret) {
        Some(items) => items.len(),
        None => 1,
    };
    let n = sig.args.len() - nout;
    let key = match &sig.key {
        ImplKey::Function(k) => k.clone(),
        other => return Err(lw.unsupported(format!("{other:?} with an output array"))),
    };
    let typing = numba_typeinfer::BaseContext::builtin();
    let f = intern(Type::Function(key.clone()));
    let inner = numba_typeinfer::TypingContext::resolve_call(typing, f, &sig.args[..n])
        .ok_or_else(|| lw.unsupported(format!("{key} for {:?}", &sig.args[..n])))?;
    let mut vals = Vec::with_capacity(n);
    for ((&v, &t), &to) in a.iter().zip(&sig.args).zip(&inner.args) {
        vals.push(lw.cast(v, t, to)?);
    }
    let result = lw.call_impl(&inner, &vals)?;
    let results: Vec<(BasicValueEnum<'ctx>, TypeId)> = if nout == 1 {
        vec![(result, inner.ret)]
    } else {
        let items = numba_typeinfer::conv::tuple_items(inner.ret)
            .ok_or_else(|| lw.unsupported(format!("{key} giving {}", inner.ret)))?;
        let sv = result.into_struct_value();
        let mut out = Vec::with_capacity(items.len());
        for (i, t) in items.into_iter().enumerate() {
            out.push((
                lw.b.build_extract_value(sv, i as u32, "")
                    .map_err(llvm_err)?,
                t,
            ));
        }
        out
    };
    let mut outs = Vec::with_capacity(nout);
    for (k, (value, vt)) in results.into_iter().enumerate() {
        let out_t = sig.args[n + k];
        let store = Signature {
            ret: NONE,
            args: vec![out_t, intern(Type::Ellipsis), vt],
            key: ImplKey::SetItem,
        };
        let f = lw.registry.lookup(&store)?;
        let ghost = lw.ghost();
        f(lw, &store, &[a[n + k], ghost, value])?;
        lw.incref(out_t, a[n + k])?;
        outs.push(a[n + k]);
    }
    lw.decref(inner.ret, result)?;
    if nout == 1 {
        Ok(outs[0])
    } else {
        lw.make_struct(sig.ret, &outs)
    }
}

/// `sum`, `prod`, `min`, `max`, `mean` over every element.
fn reduce<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = key_name(sig);
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let n = get_int(lw, arr, field::NITEMS)?;
    // `mean` accumulates in its float result type, the others in theirs.
    let acc_t = sig.ret;
    let slot = lw.alloca_in_entry(crate::model::value_type(lw.ctx, acc_t)?, "acc")?;
    let i64t = lw.ctx.i64_type();
    if let Some(msg) = no_identity(name) {
        let empty =
            lw.b.build_int_compare(IntPredicate::EQ, n, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(empty, "ValueError", &[msg])?;
    }
    let first = flat_ptr(lw, t, arr, i64t.const_zero())?;
    let init = start_value(lw, name, dtype, acc_t, first)?;
    lw.b.build_store(slot, init).map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let x = lw.cast(x, dtype, acc_t)?;
    let acc =
        lw.b.build_load(crate::model::value_type(lw.ctx, acc_t)?, slot, "")
            .map_err(llvm_err)?;
    let next = combine(lw, name, acc, x, acc_t)?;
    lw.b.build_store(slot, next).map_err(llvm_err)?;
    lp.end(lw)?;
    let total =
        lw.b.build_load(crate::model::value_type(lw.ctx, acc_t)?, slot, "")
            .map_err(llvm_err)?;
    if name == "mean" {
        // NumPy's mean of nothing is nan (0 / 0), not an error.
        let m = mean_of(lw, total, acc_t, n)?;
        return lw.cast(m, acc_t, sig.ret);
    }
    Ok(total)
}

/// `total / count` in the accumulator's type (float or complex), with IEEE division as
/// NumPy has it: the mean of nothing is nan, not a ZeroDivisionError.
pub(super) fn mean_of<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    total: BasicValueEnum<'ctx>,
    acc_t: TypeId,
    count: IntValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    if acc_t.is_complex() {
        let part = if acc_t == COMPLEX64 { FLOAT32 } else { FLOAT64 };
        let count = lw.cast(count.into(), INT64, part)?.into_float_value();
        let mut out = total.into_struct_value();
        for i in 0..2 {
            let x =
                lw.b.build_extract_value(out, i, "")
                    .map_err(llvm_err)?
                    .into_float_value();
            let q = lw.b.build_float_div(x, count, "mean").map_err(llvm_err)?;
            out =
                lw.b.build_insert_value(out, q, i, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        return Ok(out.into());
    }
    let count = lw.cast(count.into(), INT64, FLOAT64)?.into_float_value();
    let total = lw.cast(total, acc_t, FLOAT64)?.into_float_value();
    let m =
        lw.b.build_float_div(total, count, "mean")
            .map_err(llvm_err)?;
    lw.cast(m.into(), FLOAT64, acc_t)
}

/// The error of `min`/`max` over nothing (they have no identity); `None` for the others.
pub(super) fn no_identity(name: &str) -> Option<&'static str> {
    match name {
        "min" => Some("zero-size array to reduction operation minimum which has no identity"),
        "max" => Some("zero-size array to reduction operation maximum which has no identity"),
        _ => None,
    }
}

/// A reduction's starting value: its identity, or (min/max) the element at `first`.
fn start_value<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    name: &str,
    dtype: TypeId,
    acc_t: TypeId,
    first: PointerValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    match name {
        "sum" | "mean" => lw.cast(i64t.const_zero().into(), INT64, acc_t),
        "prod" => lw.cast(i64t.const_int(1, false).into(), INT64, acc_t),
        _ => {
            let x = load_elem(lw, dtype, first)?;
            lw.cast(x, dtype, acc_t)
        }
    }
}

/// One step of a reduction: `acc (op) x`, both already in the accumulator's type.
fn combine<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    name: &str,
    acc: BasicValueEnum<'ctx>,
    x: BasicValueEnum<'ctx>,
    acc_t: TypeId,
) -> R<BasicValueEnum<'ctx>> {
    let next = match name {
        "sum" | "mean" => apply_binop(lw, BinOp::Add, (acc, acc_t), (x, acc_t))?,
        "prod" => apply_binop(lw, BinOp::Mul, (acc, acc_t), (x, acc_t))?,
        "min" => scalar_call(lw, "min", &[(acc, acc_t), (x, acc_t)])?,
        _ => scalar_call(lw, "max", &[(acc, acc_t), (x, acc_t)])?,
    };
    lw.cast(next.0, next.1, acc_t)
}

/// An array seen as reduced along one axis: the axis's length and byte stride, and the
/// shape and strides of the other axes in order.
struct AxisSplit<'ctx> {
    len: IntValue<'ctx>,
    step: IntValue<'ctx>,
    out_shape: Vec<IntValue<'ctx>>,
    out_strides: Vec<IntValue<'ctx>>,
}

/// `x in a` (Numba's `contains(a, x)`): whether any element equals `x` (NumPy's
/// `(a == x).any()`; NaN is in no array).
fn array_contains<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, xt) = (sig.args[0], sig.args[1]);
    let arr = a[0].into_struct_value();
    let dtype = dtype_of(t);
    let n = get_int(lw, arr, field::NITEMS)?;
    let found = lw.alloca_in_entry(lw.ctx.bool_type().into(), "found")?;
    lw.b.build_store(found, lw.ctx.bool_type().const_zero())
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let e = load_elem(lw, dtype, p)?;
    let (eq, eq_t) = apply_binop(lw, BinOp::Eq, (e, dtype), (a[1], xt))?;
    let hit = lw.truth(eq, eq_t)?;
    let so_far =
        lw.b.build_load(lw.ctx.bool_type(), found, "")
            .map_err(llvm_err)?
            .into_int_value();
    let any = lw.b.build_or(so_far, hit, "").map_err(llvm_err)?;
    lw.b.build_store(found, any).map_err(llvm_err)?;
    lp.end(lw)?;
    lw.b.build_load(lw.ctx.bool_type(), found, "")
        .map_err(llvm_err)
}

/// Check a run-time `axis` (negative counts from the end; out of range is Numba's
/// ValueError) and split the array along it; `None` for a 1-d array (a scalar result).
fn split_axis<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    (axis_v, axis_t): (BasicValueEnum<'ctx>, TypeId),
) -> R<Option<AxisSplit<'ctx>>> {
    let n = ndim(t);
    let i64t = lw.ctx.i64_type();
    let axis = lw.cast(axis_v, axis_t, INT64)?.into_int_value();
    let given = axis;
    let nd = i64t.const_int(u64::from(n), false);
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, axis, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let wrapped = lw.b.build_int_add(axis, nd, "").map_err(llvm_err)?;
    let axis =
        lw.b.build_select(neg, wrapped, axis, "axis")
            .map_err(llvm_err)?
            .into_int_value();
    // Unsigned comparison catches both a still-negative axis and one past the end.
    let bad =
        lw.b.build_int_compare(IntPredicate::UGE, axis, nd, "")
            .map_err(llvm_err)?;
    // NumPy's (and Numba's) AxisError, a ValueError: "axis 2 is out of bounds for array
    // of dimension 2".
    lw.raise_values_if(
        bad,
        "numpy.exceptions.AxisError",
        &[(given.into(), INT64), (nd.into(), INT64)],
    )?;
    if n == 1 {
        return Ok(None);
    }
    // The reduced axis's length and stride, and the other axes in order.
    let shape = shape_of(lw, t, arr)?;
    let strides: Vec<IntValue> = strides_of(lw, t, arr)?;
    let pick = |lw: &mut FnLower<'ctx, '_>, vals: &[IntValue<'ctx>], at: IntValue<'ctx>| {
        let mut v = vals[0];
        for (d, x) in vals.iter().enumerate().skip(1) {
            let here =
                lw.b.build_int_compare(IntPredicate::EQ, at, i64t.const_int(d as u64, false), "")
                    .map_err(llvm_err)?;
            v =
                lw.b.build_select(here, *x, v, "")
                    .map_err(llvm_err)?
                    .into_int_value();
        }
        Ok::<_, LowerError>(v)
    };
    let len = pick(lw, &shape, axis)?;
    let step = pick(lw, &strides, axis)?;
    let mut out_shape = Vec::new();
    let mut out_strides = Vec::new();
    for j in 0..n - 1 {
        let before =
            lw.b.build_int_compare(
                IntPredicate::ULT,
                i64t.const_int(u64::from(j), false),
                axis,
                "",
            )
            .map_err(llvm_err)?;
        let (j, k) = (j as usize, j as usize + 1);
        let s =
            lw.b.build_select(before, shape[j], shape[k], "")
                .map_err(llvm_err)?;
        let st =
            lw.b.build_select(before, strides[j], strides[k], "")
                .map_err(llvm_err)?;
        out_shape.push(s.into_int_value());
        out_strides.push(st.into_int_value());
    }
    Ok(Some(AxisSplit {
        len,
        step,
        out_shape,
        out_strides,
    }))
}

/// `a.sum(axis)` and friends: the reduction along one axis, into a new C array with that
/// axis dropped (a scalar for a 1-d array). The axis is a runtime integer; negative values
/// count from the end and anything outside the array is a ValueError, as in Numba.
fn reduce_axis<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = key_name(sig);
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let n = ndim(t);
    let i64t = lw.ctx.i64_type();
    let mut single = sig.clone();
    single.args.truncate(1);
    let Some(AxisSplit {
        len,
        step,
        out_shape,
        out_strides,
    }) = split_axis(lw, t, arr, (a[1], sig.args[1]))?
    else {
        return reduce(lw, &single, &a[..1]);
    };
    let acc_t = dtype_of(sig.ret);
    // Checked before allocating, so that raising leaks nothing.
    if let Some(msg) = no_identity(name) {
        let mut out_n = i64t.const_int(1, false);
        for d in &out_shape {
            out_n = lw.b.build_int_mul(out_n, *d, "").map_err(llvm_err)?;
        }
        let empty =
            lw.b.build_int_compare(IntPredicate::EQ, len, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        let some =
            lw.b.build_int_compare(IntPredicate::SGT, out_n, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        let bad = lw.b.build_and(empty, some, "").map_err(llvm_err)?;
        lw.raise_const_if(bad, "ValueError", &[msg])?;
    }
    let out = allocate(lw, sig.ret, &out_shape)?;
    let outer_t = array(dtype, n - 1, Layout::A);
    let outer = rebuild(lw, arr, &out_shape, &out_strides)?;
    let out_n = get_int(lw, out, field::NITEMS)?;

    let element = |lw: &mut FnLower<'ctx, '_>, base: PointerValue<'ctx>, k: IntValue<'ctx>| {
        let off = lw.b.build_int_mul(k, step, "").map_err(llvm_err)?;
        // SAFETY (of the generated code): k < len keeps the offset inside the array.
        let p = unsafe {
            lw.b.build_gep(lw.ctx.i8_type(), base, &[off], "")
                .map_err(llvm_err)?
        };
        let x = load_elem(lw, dtype, p)?;
        lw.cast(x, dtype, acc_t)
    };
    let finish =
        |lw: &mut FnLower<'ctx, '_>, total: BasicValueEnum<'ctx>| -> R<BasicValueEnum<'ctx>> {
            if name != "mean" {
                return Ok(total);
            }
            mean_of(lw, total, acc_t, len)
        };
    // Walk memory in order: along the axis innermost when its stride is the smallest (row
    // sums of a C array), else over the result innermost, accumulating in place (column
    // sums), as Numba's `result += a[i]` does.
    let abs = |lw: &mut FnLower<'ctx, '_>, x: IntValue<'ctx>| -> R<IntValue<'ctx>> {
        let neg = lw.b.build_int_neg(x, "").map_err(llvm_err)?;
        let lt =
            lw.b.build_int_compare(IntPredicate::SLT, x, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        Ok(lw
            .b
            .build_select(lt, neg, x, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    let step_abs = abs(lw, step)?;
    let last_abs = abs(lw, out_strides[out_strides.len() - 1])?;
    let axis_inner =
        lw.b.build_int_compare(IntPredicate::ULE, step_abs, last_abs, "")
            .map_err(llvm_err)?;
    let by_axis = lw.new_block("reduce.by_axis");
    let by_out = lw.new_block("reduce.by_out");
    let joined = lw.new_block("reduce.done");
    lw.b.build_conditional_branch(axis_inner, by_axis, by_out)
        .map_err(llvm_err)?;

    lw.b.position_at_end(by_axis);
    let slot = lw.alloca_in_entry(crate::model::value_type(lw.ctx, acc_t)?, "acc")?;
    let (outer_loop, o) = Loop::begin(lw, out_n)?;
    let base = flat_ptr(lw, outer_t, outer, o)?;
    let first = start_value(lw, name, dtype, acc_t, base)?;
    lw.b.build_store(slot, first).map_err(llvm_err)?;
    let (inner, k) = Loop::begin(lw, len)?;
    let x = element(lw, base, k)?;
    let acc =
        lw.b.build_load(crate::model::value_type(lw.ctx, acc_t)?, slot, "")
            .map_err(llvm_err)?;
    let next = combine(lw, name, acc, x, acc_t)?;
    lw.b.build_store(slot, next).map_err(llvm_err)?;
    inner.end(lw)?;
    let total =
        lw.b.build_load(crate::model::value_type(lw.ctx, acc_t)?, slot, "")
            .map_err(llvm_err)?;
    let total = finish(lw, total)?;
    let dst = flat_ptr(lw, sig.ret, out, o)?;
    store_elem(lw, acc_t, dst, total)?;
    outer_loop.end(lw)?;
    lw.b.build_unconditional_branch(joined).map_err(llvm_err)?;

    lw.b.position_at_end(by_out);
    let (seed, o) = Loop::begin(lw, out_n)?;
    let base = flat_ptr(lw, outer_t, outer, o)?;
    let first = start_value(lw, name, dtype, acc_t, base)?;
    let dst = flat_ptr(lw, sig.ret, out, o)?;
    store_elem(lw, acc_t, dst, first)?;
    seed.end(lw)?;
    // min/max start from element 0, which the seed already holds.
    let skip = u64::from(no_identity(name).is_some());
    let rest =
        lw.b.build_int_sub(len, i64t.const_int(skip, false), "")
            .map_err(llvm_err)?;
    let (along, k) = Loop::begin(lw, rest)?;
    let k =
        lw.b.build_int_add(k, i64t.const_int(skip, false), "")
            .map_err(llvm_err)?;
    let (over, o) = Loop::begin(lw, out_n)?;
    let base = flat_ptr(lw, outer_t, outer, o)?;
    let x = element(lw, base, k)?;
    let dst = flat_ptr(lw, sig.ret, out, o)?;
    let acc = load_elem(lw, acc_t, dst)?;
    let next = combine(lw, name, acc, x, acc_t)?;
    store_elem(lw, acc_t, dst, next)?;
    over.end(lw)?;
    along.end(lw)?;
    if name == "mean" {
        let (scale, o) = Loop::begin(lw, out_n)?;
        let dst = flat_ptr(lw, sig.ret, out, o)?;
        let acc = load_elem(lw, acc_t, dst)?;
        let m = finish(lw, acc)?;
        store_elem(lw, acc_t, dst, m)?;
        scale.end(lw)?;
    }
    lw.b.build_unconditional_branch(joined).map_err(llvm_err)?;
    lw.b.position_at_end(joined);
    Ok(out.into())
}

/// `a.copy()`: a new C-contiguous array with the same elements.
pub(super) fn copy<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    map_elements(lw, sig.ret, &[(sig.args[0], a[0])], &mut |_, e| Ok(e[0]))
}

/// More of NumPy: creation by value and range, `*_like`, `fill`, `astype`, `ravel`/
/// `flatten`, `reshape`, `T`/`transpose`, `argmin`/`argmax`, `cumsum`/`cumprod`.
pub(crate) fn register_more(r: &mut Registry) {
    let array = || TypePat::Pred(is_array);
    let f = |k: &str| ImplKey::Function(k.into());
    r.register(f("numpy.full"), Args::Variadic(TypePat::Any), full);
    for k in [
        "numpy.empty_like",
        "numpy.zeros_like",
        "numpy.ones_like",
        "numpy.full_like",
    ] {
        r.register(f(k), Args::Variadic(TypePat::Any), like);
    }
    r.register(f("numpy.arange"), Args::Variadic(TypePat::Any), arange);
    for k in ["numpy.eye", "numpy.identity"] {
        r.register(f(k), Args::Variadic(TypePat::Any), eye);
    }
    r.register(
        f("array.fill"),
        Args::Exact(vec![array(), TypePat::Number]),
        fill,
    );
    r.register(
        f("array.astype"),
        Args::Exact(vec![array(), TypePat::Any]),
        copy,
    );
    r.register(f("array.ravel"), Args::Exact(vec![array()]), ravel);
    r.register(f("array.flatten"), Args::Exact(vec![array()]), flatten);
    r.register(f("array.reshape"), Args::Variadic(TypePat::Any), reshape);
    r.register(
        ImplKey::GetAttr("T".into()),
        Args::Exact(vec![array()]),
        transpose,
    );
    r.register(f("array.transpose"), Args::Exact(vec![array()]), transpose);
    r.register(f("array.item"), Args::Exact(vec![array()]), item);
    // A real array is its own real part (borrowed, like every attribute).
    r.register(
        ImplKey::GetAttr("real".into()),
        Args::Exact(vec![TypePat::Pred(|t| {
            is_array(t) && !dtype_of(t).is_complex()
        })]),
        |_, _, a| Ok(a[0]),
    );
    for part in ["real", "imag"] {
        r.register(
            ImplKey::GetAttr(part.into()),
            Args::Exact(vec![TypePat::Pred(|t| {
                is_array(t) && dtype_of(t).is_complex()
            })]),
            complex_part,
        );
    }
    for k in [
        "array.argmin",
        "array.argmax",
        "numpy.argmin",
        "numpy.argmax",
    ] {
        r.register(f(k), Args::Exact(vec![array()]), argminmax);
        r.register(
            f(k),
            Args::Exact(vec![array(), TypePat::Pred(|t| t.is_integer())]),
            argminmax_axis,
        );
    }
    for k in [
        "array.cumsum",
        "array.cumprod",
        "numpy.nancumsum",
        "numpy.nancumprod",
    ] {
        r.register(f(k), Args::Exact(vec![array()]), cumulative);
    }
}

pub(super) fn key_name(sig: &Signature) -> &str {
    match &sig.key {
        ImplKey::Function(k) => k.rsplit('.').next().unwrap_or(""),
        _ => "",
    }
}

/// Store `v` (of type `vt`) into every element of the new array `arr` of type `t`.
fn fill_all<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    v: BasicValueEnum<'ctx>,
    vt: TypeId,
) -> R<()> {
    super::indexing::assign_into(lw, t, arr, vt, v)
}

pub(super) fn shape_of<'ctx>(
    lw: &FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
) -> R<Vec<IntValue<'ctx>>> {
    (0..ndim(t))
        .map(|d| dim(lw, arr, field::SHAPE, d))
        .collect()
}

/// The dimensions an int or a tuple of ints gives.
pub(super) fn dims_of<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
) -> R<Vec<IntValue<'ctx>>> {
    match tuple_items(t) {
        Some(items) => {
            let sv = v.into_struct_value();
            let mut out = Vec::new();
            for (i, it) in items.into_iter().enumerate() {
                let x =
                    lw.b.build_extract_value(sv, i as u32, "")
                        .map_err(llvm_err)?;
                out.push(lw.cast(x, it, INT64)?.into_int_value());
            }
            Ok(out)
        }
        None => Ok(vec![lw.cast(v, t, INT64)?.into_int_value()]),
    }
}

fn full<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dims = dims_of(lw, sig.args[0], a[0])?;
    let out = allocate(lw, sig.ret, &dims)?;
    fill_all(lw, sig.ret, out, a[1], sig.args[1])?;
    Ok(out.into())
}

fn like<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    // A scalar is a 0-d array here.
    let dims = if sig.args[0].is_array() {
        shape_of(lw, sig.args[0], a[0].into_struct_value())?
    } else {
        Vec::new()
    };
    let out = allocate(lw, sig.ret, &dims)?;
    let i64t = lw.ctx.i64_type();
    match key_name(sig) {
        "zeros_like" => fill_all(lw, sig.ret, out, i64t.const_zero().into(), INT64)?,
        "ones_like" => fill_all(lw, sig.ret, out, i64t.const_int(1, false).into(), INT64)?,
        "full_like" => fill_all(lw, sig.ret, out, a[1], sig.args[1])?,
        _ => {}
    }
    Ok(out.into())
}

/// `np.eye(N, M=None, k=0)` / `np.identity(n)`: ones on the k-th diagonal, zeros elsewhere.
fn eye<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let int = |lw: &mut FnLower<'ctx, '_>, i: usize| -> R<Option<IntValue<'ctx>>> {
        match (a.get(i), sig.args.get(i)) {
            (Some(v), Some(&t)) if t.is_integer() => {
                Ok(Some(lw.cast(*v, t, INT64)?.into_int_value()))
            }
            _ => Ok(None),
        }
    };
    let n = int(lw, 0)?.ok_or_else(|| lw.unsupported("np.eye without a size"))?;
    let is_eye = key_name(sig) == "eye";
    let m = if is_eye { int(lw, 1)? } else { None }.unwrap_or(n);
    let k = if is_eye { int(lw, 2)? } else { None }.unwrap_or(i64t.const_zero());
    let out = allocate(lw, sig.ret, &[n, m])?;
    fill_all(lw, sig.ret, out, i64t.const_zero().into(), INT64)?;
    let one = lw.cast(i64t.const_int(1, false).into(), INT64, dtype_of(sig.ret))?;
    // Row i holds its one at column i + k, when that column exists.
    let (lp, i) = Loop::begin(lw, n)?;
    let j = lw.b.build_int_add(i, k, "").map_err(llvm_err)?;
    let lo =
        lw.b.build_int_compare(IntPredicate::SGE, j, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let hi =
        lw.b.build_int_compare(IntPredicate::SLT, j, m, "")
            .map_err(llvm_err)?;
    let inside = lw.b.build_and(lo, hi, "").map_err(llvm_err)?;
    let set = lw.new_block("eye.set");
    let next = lw.new_block("eye.next");
    lw.b.build_conditional_branch(inside, set, next)
        .map_err(llvm_err)?;
    lw.b.position_at_end(set);
    let row = lw.b.build_int_mul(i, m, "").map_err(llvm_err)?;
    let at = lw.b.build_int_add(row, j, "").map_err(llvm_err)?;
    let p = flat_ptr(lw, sig.ret, out, at)?;
    store_elem(lw, dtype_of(sig.ret), p, one)?;
    lw.b.build_unconditional_branch(next).map_err(llvm_err)?;
    lw.b.position_at_end(next);
    lp.end(lw)?;
    Ok(out.into())
}

fn fill<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    fill_all(lw, sig.args[0], a[0].into_struct_value(), a[1], sig.args[1])?;
    Ok(lw.ghost())
}

/// `np.arange(stop)`, `(start, stop)`, `(start, stop, step)`, each with an optional
/// dtype (None bounds skipped), as Numba's `np_arange` computes it ([`arange_work`],
/// [`arange_count`], [`arange_at`]; the parallel version shares them).
fn arange<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(sig.ret);
    let nbounds = sig.args.len().min(3);
    let bounds: Vec<(BasicValueEnum<'ctx>, TypeId)> = a[..nbounds]
        .iter()
        .zip(&sig.args[..nbounds])
        .filter(|(_, t)| **t != NONE)
        .map(|(v, t)| (*v, *t))
        .collect();
    let work = arange_work(&bounds.iter().map(|b| b.1).collect::<Vec<_>>());
    let mut vals = Vec::new();
    for (v, t) in bounds {
        vals.push(lw.cast(v, t, work)?);
    }
    let zero = lw.cast(lw.ctx.i64_type().const_zero().into(), INT64, work)?;
    let one = lw.cast(lw.ctx.i64_type().const_int(1, false).into(), INT64, work)?;
    // By position, as NumPy's `arange(start, stop=None, step=None)`: without a stop the
    // first bound is the stop (`np.arange(7, step=2)`).
    let given = |k: usize| sig.args.get(k).is_some_and(|&t| t != NONE) && k < nbounds;
    let (start, stop, step) = match (vals.as_slice(), given(1), given(2)) {
        ([stop], _, _) => (zero, *stop, one),
        ([start, stop], true, false) => (*start, *stop, one),
        ([stop, step], false, true) => (zero, *stop, *step),
        ([start, stop, step], _, _) => (*start, *stop, *step),
        _ => return Err(lw.unsupported("arange takes 1 to 3 bounds")),
    };
    let n = arange_count(lw, (start, stop, step), work)?;
    let out = allocate(lw, sig.ret, &[n])?;
    let (lp, i) = Loop::begin(lw, n)?;
    let v = arange_at(lw, (start, step), i, work)?;
    let v = lw.cast(v, work, dtype)?;
    let p = flat_ptr(lw, sig.ret, out, i)?;
    store_elem(lw, dtype, p, v)?;
    lp.end(lw)?;
    Ok(out.into())
}

/// The type `np.arange` computes in: complex128 when a bound is complex, float64 when
/// one is a float, int64 otherwise.
pub(super) fn arange_work(bounds: &[TypeId]) -> TypeId {
    if bounds.iter().any(|t| t.is_complex()) {
        COMPLEX128
    } else if bounds.iter().any(|t| t.is_float()) {
        FLOAT64
    } else {
        INT64
    }
}

/// `max(ceil((stop - start) / step), 0)` (for complex bounds, the smaller of the real
/// and imaginary parts' ceilings); a zero step raises ZeroDivisionError, as NumPy does.
pub(super) fn arange_count<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (start, stop, step): (
        BasicValueEnum<'ctx>,
        BasicValueEnum<'ctx>,
        BasicValueEnum<'ctx>,
    ),
    work: TypeId,
) -> R<IntValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let n = if work == INT64 {
        let is_zero =
            lw.b.build_int_compare(
                IntPredicate::EQ,
                step.into_int_value(),
                i64t.const_zero(),
                "",
            )
            .map_err(llvm_err)?;
        lw.raise_const_if(is_zero, "ZeroDivisionError", &["division by zero"])?;
        // ceil(a / b) = -((-a) // b)
        let span =
            lw.b.build_int_sub(stop.into_int_value(), start.into_int_value(), "")
                .map_err(llvm_err)?;
        let neg = lw.b.build_int_neg(span, "").map_err(llvm_err)?;
        let (fl, _) = apply_binop(lw, BinOp::FloorDiv, (neg.into(), INT64), (step, INT64))?;
        lw.b.build_int_neg(fl.into_int_value(), "")
            .map_err(llvm_err)?
    } else {
        let (span, _) = apply_binop(lw, BinOp::Sub, (stop, work), (start, work))?;
        let (q, _) = apply_binop(lw, BinOp::TrueDiv, (span, work), (step, work))?;
        let ceil_int = |lw: &mut FnLower<'ctx, '_>, x: BasicValueEnum<'ctx>| -> R<IntValue<'ctx>> {
            let c = lw.float_unary("ceil", x.into_float_value())?;
            Ok(lw.cast(c.into(), FLOAT64, INT64)?.into_int_value())
        };
        if work == COMPLEX128 {
            let q = q.into_struct_value();
            let re = lw.b.build_extract_value(q, 0, "").map_err(llvm_err)?;
            let im = lw.b.build_extract_value(q, 1, "").map_err(llvm_err)?;
            let (nr, ni) = (ceil_int(lw, re)?, ceil_int(lw, im)?);
            let lt =
                lw.b.build_int_compare(IntPredicate::SLT, ni, nr, "")
                    .map_err(llvm_err)?;
            lw.b.build_select(lt, ni, nr, "")
                .map_err(llvm_err)?
                .into_int_value()
        } else {
            ceil_int(lw, q)?
        }
    };
    let pos =
        lw.b.build_int_compare(IntPredicate::SGT, n, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    Ok(lw
        .b
        .build_select(pos, n, i64t.const_zero(), "")
        .map_err(llvm_err)?
        .into_int_value())
}

/// Element `i` of an arange: `start + i * step`, in the work type.
pub(super) fn arange_at<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (start, step): (BasicValueEnum<'ctx>, BasicValueEnum<'ctx>),
    i: IntValue<'ctx>,
    work: TypeId,
) -> R<BasicValueEnum<'ctx>> {
    let fi = lw.cast(i.into(), INT64, work)?;
    let (off, ot) = apply_binop(lw, BinOp::Mul, (fi, work), (step, work))?;
    let (v, vt) = apply_binop(lw, BinOp::Add, (start, work), (off, ot))?;
    lw.cast(v, vt, work)
}

/// A 1-d C copy of every element in C order.
pub(super) fn flatten<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let src_t = sig.args[0];
    let src = a[0].into_struct_value();
    let n = get_int(lw, src, field::NITEMS)?;
    let out = allocate(lw, sig.ret, &[n])?;
    let dtype = dtype_of(src_t);
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, src_t, src, i)?;
    let x = load_elem(lw, dtype, p)?;
    let q = flat_ptr(lw, sig.ret, out, i)?;
    store_elem(lw, dtype_of(sig.ret), q, x)?;
    lp.end(lw)?;
    Ok(out.into())
}

/// `a.ravel()` / `np.ravel(a)`: a view of a C-ordered array (NumPy's and Numba's), a C
/// copy of any other.
pub(super) fn ravel<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let src_t = sig.args[0];
    let c_layout = matches!(
        src_t.get(),
        Type::Array {
            layout: numba_typeinfer::types::Layout::C,
            ..
        }
    );
    if !c_layout {
        return flatten(lw, sig, a);
    }
    let src = a[0].into_struct_value();
    let n = get_int(lw, src, field::NITEMS)?;
    let size = get_int(lw, src, field::ITEMSIZE)?;
    let view = rebuild(lw, src, &[n], &[size])?;
    lw.incref(sig.ret, view.into())?;
    Ok(view.into())
}

/// `a.reshape(shape)` / `a.reshape(d0, d1, ...)`: a C-ordered view of a contiguous array
/// (a copy first otherwise); one dimension may be negative (inferred).
fn reshape<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let src_t = sig.args[0];
    let mut dims = Vec::new();
    for (&v, &t) in a[1..].iter().zip(&sig.args[1..]) {
        dims.extend(dims_of(lw, t, v)?);
    }
    let i64t = lw.ctx.i64_type();
    let src = a[0].into_struct_value();
    let c_layout = matches!(
        src_t.get(),
        Type::Array {
            layout: numba_typeinfer::types::Layout::C,
            ..
        }
    );
    let nitems = get_int(lw, src, field::NITEMS)?;
    // Numba's `normalize_reshape_value`: one negative dimension (any negative value, as
    // in NumPy) is inferred from the others.
    let zero = i64t.const_zero();
    let one = i64t.const_int(1, false);
    let mut known = one;
    let mut negatives = zero;
    let mut is_negs = Vec::with_capacity(dims.len());
    for &d in &dims {
        let is_neg =
            lw.b.build_int_compare(IntPredicate::SLT, d, zero, "")
                .map_err(llvm_err)?;
        let factor =
            lw.b.build_select(is_neg, one, d, "")
                .map_err(llvm_err)?
                .into_int_value();
        known = lw.b.build_int_mul(known, factor, "").map_err(llvm_err)?;
        let count =
            lw.b.build_int_z_extend(is_neg, i64t, "")
                .map_err(llvm_err)?;
        negatives = lw.b.build_int_add(negatives, count, "").map_err(llvm_err)?;
        is_negs.push(is_neg);
    }
    let several =
        lw.b.build_int_compare(IntPredicate::UGT, negatives, one, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(several, "ValueError", &["multiple negative shape values"])?;
    let safe_known = {
        let z =
            lw.b.build_int_compare(IntPredicate::EQ, known, zero, "")
                .map_err(llvm_err)?;
        lw.b.build_select(z, one, known, "")
            .map_err(llvm_err)?
            .into_int_value()
    };
    let inferred =
        lw.b.build_int_signed_div(nitems, safe_known, "")
            .map_err(llvm_err)?;
    let mut final_dims = Vec::new();
    let mut product = one;
    for (&d, &is_neg) in dims.iter().zip(&is_negs) {
        let x =
            lw.b.build_select(is_neg, inferred, d, "")
                .map_err(llvm_err)?
                .into_int_value();
        product = lw.b.build_int_mul(product, x, "").map_err(llvm_err)?;
        final_dims.push(x);
    }
    let bad =
        lw.b.build_int_compare(IntPredicate::NE, product, nitems, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        bad,
        "ValueError",
        &["total size of new array must be unchanged"],
    )?;
    // A non-C array is copied into C order after the checks (the copy is a new reference, the
    // view of it takes over that reference).
    let (base, owned) = if c_layout {
        (src, false)
    } else {
        let n = get_int(lw, src, field::NITEMS)?;
        let flat_t = intern(Type::Array {
            dtype: dtype_of(src_t),
            ndim: 1,
            layout: numba_typeinfer::types::Layout::C,
            readonly: false,
        });
        let out = allocate(lw, flat_t, &[n])?;
        let (lp, i) = Loop::begin(lw, n)?;
        let p = flat_ptr(lw, src_t, src, i)?;
        let x = load_elem(lw, dtype_of(src_t), p)?;
        let q = flat_ptr(lw, flat_t, out, i)?;
        store_elem(lw, dtype_of(src_t), q, x)?;
        lp.end(lw)?;
        (out, true)
    };
    let k = final_dims.len();
    let size = get_int(lw, base, field::ITEMSIZE)?;
    let mut strides = vec![size; k];
    for d in (0..k.saturating_sub(1)).rev() {
        strides[d] =
            lw.b.build_int_mul(strides[d + 1], final_dims[d + 1], "")
                .map_err(llvm_err)?;
    }
    let out = rebuild(lw, base, &final_dims, &strides)?;
    // A call returns a new reference: a view of the argument takes one; a copy already
    // holds its own.
    if !owned {
        lw.incref(sig.ret, out.into())?;
    }
    Ok(out.into())
}

/// An array struct over `base`'s memory with new dimensions.
pub(super) fn rebuild<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    base: StructValue<'ctx>,
    shape: &[IntValue<'ctx>],
    strides: &[IntValue<'ctx>],
) -> R<StructValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let k = shape.len() as u32;
    let mut out = array_struct(lw.ctx, k).get_undef();
    for f in [
        field::MEMINFO,
        field::PARENT,
        field::NITEMS,
        field::ITEMSIZE,
        field::DATA,
    ] {
        let x = lw.b.build_extract_value(base, f, "").map_err(llvm_err)?;
        out =
            lw.b.build_insert_value(out, x, f, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    let mut sa = i64t.array_type(k).get_undef();
    let mut ta = i64t.array_type(k).get_undef();
    for d in 0..k as usize {
        sa =
            lw.b.build_insert_value(sa, shape[d], d as u32, "")
                .map_err(llvm_err)?
                .into_array_value();
        ta =
            lw.b.build_insert_value(ta, strides[d], d as u32, "")
                .map_err(llvm_err)?
                .into_array_value();
    }
    out =
        lw.b.build_insert_value(out, sa, field::SHAPE, "")
            .map_err(llvm_err)?
            .into_struct_value();
    Ok(lw
        .b
        .build_insert_value(out, ta, field::STRIDES, "")
        .map_err(llvm_err)?
        .into_struct_value())
}

/// An array struct over `data` with these dimensions (and their element count), owned
/// by `base`'s MemInfo and parent: every view is one of these.
pub(crate) fn view_with<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    base: StructValue<'ctx>,
    data: PointerValue<'ctx>,
    shape: &[IntValue<'ctx>],
    strides: &[IntValue<'ctx>],
) -> R<StructValue<'ctx>> {
    let out = rebuild(lw, base, shape, strides)?;
    let mut n = lw.ctx.i64_type().const_int(1, false);
    for &d in shape {
        n = lw.b.build_int_mul(n, d, "").map_err(llvm_err)?;
    }
    let out =
        lw.b.build_insert_value(out, n, field::NITEMS, "")
            .map_err(llvm_err)?
            .into_struct_value();
    Ok(lw
        .b
        .build_insert_value(out, data, field::DATA, "")
        .map_err(llvm_err)?
        .into_struct_value())
}

/// `a.T` / `a.transpose()`: the axes reversed (a view).
pub(super) fn transpose<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let n = ndim(t);
    let mut shape = Vec::new();
    let mut strides = Vec::new();
    for d in (0..n).rev() {
        shape.push(dim(lw, arr, field::SHAPE, d)?);
        strides.push(dim(lw, arr, field::STRIDES, d)?);
    }
    let out = rebuild(lw, arr, &shape, &strides)?;
    // `a.transpose()` is a call (a new reference); `a.T` an attribute (borrowed).
    if matches!(sig.key, ImplKey::Function(_)) {
        lw.incref(sig.ret, out.into())?;
    }
    Ok(out.into())
}

/// `a.item()`: the one element of a size-1 array.
fn item<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let n = get_int(lw, arr, field::NITEMS)?;
    let i64t = lw.ctx.i64_type();
    let bad =
        lw.b.build_int_compare(IntPredicate::NE, n, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        bad,
        "ValueError",
        &["item(): can only convert an array of size 1 to a Python scalar"],
    )?;
    let p = flat_ptr(lw, t, arr, i64t.const_zero())?;
    load_elem(lw, dtype_of(t), p)
}

/// `a.real` / `a.imag` of a complex array: a view of one part of each element (same
/// shape and byte strides, half the item size, the imaginary part one float further on).
/// Borrowed, like every attribute.
pub(super) fn complex_part<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let shape = shape_of(lw, t, arr)?;
    let strides: Vec<IntValue> = strides_of(lw, t, arr)?;
    let mut out = rebuild(lw, arr, &shape, &strides)?;
    let part = if dtype_of(t) == COMPLEX64 { 4 } else { 8 };
    let i64t = lw.ctx.i64_type();
    out =
        lw.b.build_insert_value(out, i64t.const_int(part, false), field::ITEMSIZE, "")
            .map_err(llvm_err)?
            .into_struct_value();
    if matches!(&sig.key, ImplKey::GetAttr(k) if k == "imag") {
        let data = data_ptr(lw, arr)?;
        // SAFETY (of the generated code): the imaginary part lies inside each element.
        let moved = unsafe {
            lw.b.build_gep(lw.ctx.i8_type(), data, &[i64t.const_int(part, false)], "")
                .map_err(llvm_err)?
        };
        out =
            lw.b.build_insert_value(out, moved, field::DATA, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(out.into())
}

/// `argmin` / `argmax`: the flat index of the first extreme element.
fn argminmax<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let n = get_int(lw, arr, field::NITEMS)?;
    let i64t = lw.ctx.i64_type();
    let is_min = key_name(sig) == "argmin";
    let empty =
        lw.b.build_int_compare(IntPredicate::EQ, n, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let msg = format!("attempt to get {} of an empty sequence", key_name(sig));
    lw.raise_const_if(empty, "ValueError", &[&msg])?;
    let best_slot = lw.alloca_in_entry(crate::model::value_type(lw.ctx, dtype)?, "best")?;
    let idx_slot = lw.alloca_in_entry(i64t.into(), "best_index")?;
    let p0 = flat_ptr(lw, t, arr, i64t.const_zero())?;
    let first = load_elem(lw, dtype, p0)?;
    lw.b.build_store(best_slot, first).map_err(llvm_err)?;
    lw.b.build_store(idx_slot, i64t.const_zero())
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let best =
        lw.b.build_load(crate::model::value_type(lw.ctx, dtype)?, best_slot, "")
            .map_err(llvm_err)?;
    let better = arg_better(lw, is_min, (x, best), dtype)?;
    let nb = lw.b.build_select(better, x, best, "").map_err(llvm_err)?;
    lw.b.build_store(best_slot, nb).map_err(llvm_err)?;
    let old = lw.b.build_load(i64t, idx_slot, "").map_err(llvm_err)?;
    let ni =
        lw.b.build_select(better, i.into(), old, "")
            .map_err(llvm_err)?;
    lw.b.build_store(idx_slot, ni).map_err(llvm_err)?;
    lp.end(lw)?;
    lw.b.build_load(i64t, idx_slot, "").map_err(llvm_err)
}

/// Whether `x` replaces `best` in an `argmin`/`argmax` scan: strictly better, or the
/// first NaN (NumPy's arg-reductions stop at the first NaN).
fn arg_better<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    is_min: bool,
    (x, best): (BasicValueEnum<'ctx>, BasicValueEnum<'ctx>),
    dtype: TypeId,
) -> R<IntValue<'ctx>> {
    let op = if is_min { BinOp::Lt } else { BinOp::Gt };
    let (better, _) = apply_binop(lw, op, (x, dtype), (best, dtype))?;
    let better = better.into_int_value();
    if !dtype.is_float() {
        return Ok(better);
    }
    let (xf, bf) = (x.into_float_value(), best.into_float_value());
    let x_nan =
        lw.b.build_float_compare(inkwell::FloatPredicate::UNO, xf, xf, "")
            .map_err(llvm_err)?;
    let best_num =
        lw.b.build_float_compare(inkwell::FloatPredicate::ORD, bf, bf, "")
            .map_err(llvm_err)?;
    let first_nan = lw.b.build_and(x_nan, best_num, "").map_err(llvm_err)?;
    lw.b.build_or(better, first_nan, "").map_err(llvm_err)
}

/// `a.argmin(axis)` / `a.argmax(axis)` (and the `np.` forms): the position of the least or
/// greatest element along the axis, for each position of the others (int64, C order).
fn argminmax_axis<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let is_min = key_name(sig) == "argmin";
    let Some(AxisSplit {
        len,
        step,
        out_shape,
        out_strides,
    }) = split_axis(lw, t, arr, (a[1], sig.args[1]))?
    else {
        let mut single = sig.clone();
        single.args.truncate(1);
        return argminmax(lw, &single, &a[..1]);
    };
    let i64t = lw.ctx.i64_type();
    let empty =
        lw.b.build_int_compare(IntPredicate::EQ, len, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let msg = format!("attempt to get {} of an empty sequence", key_name(sig));
    lw.raise_const_if(empty, "ValueError", &[&msg])?;
    let out = allocate(lw, sig.ret, &out_shape)?;
    let outer_t = array(dtype, ndim(t) - 1, Layout::A);
    let outer = rebuild(lw, arr, &out_shape, &out_strides)?;
    let out_n = get_int(lw, out, field::NITEMS)?;
    let vt = crate::model::value_type(lw.ctx, dtype)?;
    let best_slot = lw.alloca_in_entry(vt, "best")?;
    let idx_slot = lw.alloca_in_entry(i64t.into(), "best_index")?;
    let (outer_loop, o) = Loop::begin(lw, out_n)?;
    let base = flat_ptr(lw, outer_t, outer, o)?;
    let first = load_elem(lw, dtype, base)?;
    lw.b.build_store(best_slot, first).map_err(llvm_err)?;
    lw.b.build_store(idx_slot, i64t.const_zero())
        .map_err(llvm_err)?;
    let (inner, k) = Loop::begin(lw, len)?;
    let off = lw.b.build_int_mul(k, step, "").map_err(llvm_err)?;
    // SAFETY (of the generated code): k < len keeps the offset inside the array.
    let p = unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), base, &[off], "")
            .map_err(llvm_err)?
    };
    let x = load_elem(lw, dtype, p)?;
    let best = lw.b.build_load(vt, best_slot, "").map_err(llvm_err)?;
    let better = arg_better(lw, is_min, (x, best), dtype)?;
    let nb = lw.b.build_select(better, x, best, "").map_err(llvm_err)?;
    lw.b.build_store(best_slot, nb).map_err(llvm_err)?;
    let old = lw.b.build_load(i64t, idx_slot, "").map_err(llvm_err)?;
    let ni =
        lw.b.build_select(better, k.into(), old, "")
            .map_err(llvm_err)?;
    lw.b.build_store(idx_slot, ni).map_err(llvm_err)?;
    inner.end(lw)?;
    let idx = lw.b.build_load(i64t, idx_slot, "").map_err(llvm_err)?;
    let dst = flat_ptr(lw, sig.ret, out, o)?;
    store_elem(lw, INT64, dst, idx)?;
    outer_loop.end(lw)?;
    Ok(out.into())
}

/// `cumsum` / `cumprod`: a new 1-d array of running totals in C order.
fn cumulative<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let n = get_int(lw, arr, field::NITEMS)?;
    let out = allocate(lw, sig.ret, &[n])?;
    let acc_t = dtype_of(sig.ret);
    let i64t = lw.ctx.i64_type();
    let name = key_name(sig);
    let is_sum = name.ends_with("cumsum");
    // nancumsum/nancumprod count a NaN as the operation's identity.
    let skip_nan = name.starts_with("nan") && dtype_of(t).is_float();
    let slot = lw.alloca_in_entry(crate::model::value_type(lw.ctx, acc_t)?, "running")?;
    let init = lw.cast(
        i64t.const_int(u64::from(!is_sum), false).into(),
        INT64,
        acc_t,
    )?;
    lw.b.build_store(slot, init).map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype_of(t), p)?;
    let x = lw.cast(x, dtype_of(t), acc_t)?;
    let x = if skip_nan {
        let xf = x.into_float_value();
        let nan =
            lw.b.build_float_compare(inkwell::FloatPredicate::UNO, xf, xf, "")
                .map_err(llvm_err)?;
        let identity = xf.get_type().const_float(if is_sum { 0.0 } else { 1.0 });
        lw.b.build_select(nan, identity, xf, "").map_err(llvm_err)?
    } else {
        x
    };
    let acc =
        lw.b.build_load(crate::model::value_type(lw.ctx, acc_t)?, slot, "")
            .map_err(llvm_err)?;
    let op = if is_sum { BinOp::Add } else { BinOp::Mul };
    let (next, nt) = apply_binop(lw, op, (acc, acc_t), (x, acc_t))?;
    let next = lw.cast(next, nt, acc_t)?;
    lw.b.build_store(slot, next).map_err(llvm_err)?;
    let q = flat_ptr(lw, sig.ret, out, i)?;
    store_elem(lw, acc_t, q, next)?;
    lp.end(lw)?;
    Ok(out.into())
}

/// Predicates, `where`, `clip`, `linspace`, `var`/`std`, `all`/`any`.
pub(crate) fn register_predicates(r: &mut Registry) {
    let array = || TypePat::Pred(is_array);
    let f = |k: &str| ImplKey::Function(k.into());
    for k in [
        "numpy.isnan",
        "numpy.isinf",
        "numpy.isfinite",
        "numpy.isnat",
    ] {
        r.register(f(k), Args::Exact(vec![TypePat::Any]), predicate);
    }
    r.register(f("numpy.where"), Args::Exact(vec![TypePat::Any; 3]), where_);
    r.register(f("numpy.clip"), Args::Exact(vec![TypePat::Any; 3]), clip);
    r.register(f("array.clip"), Args::Exact(vec![TypePat::Any; 3]), clip);
    for k in ["numpy.round", "numpy.around", "numpy.round_", "array.round"] {
        r.register(f(k), Args::Variadic(TypePat::Any), round_half_even);
    }
    r.register(
        f("numpy.linspace"),
        Args::Variadic(TypePat::Number),
        linspace,
    );
    for k in ["var", "std"] {
        r.register(
            f(&format!("array.{k}")),
            Args::Exact(vec![array()]),
            variance,
        );
        r.register(
            f(&format!("numpy.{k}")),
            Args::Exact(vec![array()]),
            variance,
        );
    }
    for k in ["all", "any"] {
        r.register(
            f(&format!("array.{k}")),
            Args::Exact(vec![array()]),
            all_any,
        );
        r.register(
            f(&format!("numpy.{k}")),
            Args::Exact(vec![array()]),
            all_any,
        );
    }
}

fn predicate<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let key = match key_name(sig) {
        "isnan" | "isnat" => "math.isnan",
        "isinf" => "math.isinf",
        _ => "math.isfinite",
    };
    let t = sig.args[0];
    // Integers are never nan or infinite.
    let on = |lw: &mut FnLower<'ctx, '_>, (x, xt): Typed<'ctx>| -> R<Typed<'ctx>> {
        if numba_typeinfer::npdatetime::is_datetime_like(xt) {
            // NaT is the datetimes' NaN; none is infinite.
            if key == "math.isinf" {
                return Ok((lw.ctx.bool_type().const_zero().into(), BOOLEAN));
            }
            let finite = key == "math.isfinite";
            let r = super::npdatetime::nat_test(lw, x.into_int_value(), finite)?;
            return Ok((r.into(), BOOLEAN));
        }
        if xt.is_float() {
            scalar_call(lw, key, &[(x, xt)])
        } else if xt.is_complex() {
            // Either part (cmath's rules).
            let ckey = key.replacen("math.", "cmath.", 1);
            scalar_call(lw, &ckey, &[(x, xt)])
        } else {
            let v = key == "math.isfinite";
            Ok((
                lw.ctx.bool_type().const_int(u64::from(v), false).into(),
                BOOLEAN,
            ))
        }
    };
    if !t.is_array() {
        let (r, rt) = on(lw, (a[0], t))?;
        return lw.cast(r, rt, sig.ret);
    }
    map_elements(lw, sig.ret, &[(t, a[0])], &mut |lw, e| on(lw, e[0]))
}

fn where_<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let pick = |lw: &mut FnLower<'ctx, '_>, e: &[Typed<'ctx>], out: TypeId| -> R<Typed<'ctx>> {
        let c = lw.truth(e[0].0, e[0].1)?;
        let x = lw.cast(e[1].0, e[1].1, out)?;
        let y = lw.cast(e[2].0, e[2].1, out)?;
        Ok((lw.b.build_select(c, x, y, "").map_err(llvm_err)?, out))
    };
    let out = dtype_of(sig.ret);
    if !sig.ret.is_array() {
        let e: Vec<Typed<'ctx>> = a.iter().copied().zip(sig.args.iter().copied()).collect();
        return Ok(pick(lw, &e, out)?.0);
    }
    let operands: Vec<(TypeId, BasicValueEnum<'ctx>)> =
        sig.args.iter().copied().zip(a.iter().copied()).collect();
    // Numba's `np.where` broadcasts through `np.broadcast_shapes` (its message).
    map_elements_or(
        lw,
        sig.ret,
        &operands,
        &mut |lw, e| pick(lw, e, out),
        (
            "ValueError",
            "shape mismatch: objects cannot be broadcast to a single shape",
        ),
    )
}

fn clip<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let out = dtype_of(sig.ret);
    let (has_lo, has_hi) = (sig.args[1] != NONE, sig.args[2] != NONE);
    if !has_lo && !has_hi {
        // Numba's run-time error (NumPy raises the same at its call).
        lw.raise_const("ValueError", &["array_clip: must set either max or min"])?;
        let next = lw.new_block("clip.unreachable");
        if lw
            .b
            .get_insert_block()
            .is_some_and(|bb| bb.get_terminator().is_none())
        {
            lw.b.build_unconditional_branch(next).map_err(llvm_err)?;
        }
        lw.b.position_at_end(next);
    }
    // None bounds are left out of the element loop.
    let operands: Vec<(TypeId, BasicValueEnum<'ctx>)> = sig
        .args
        .iter()
        .copied()
        .zip(a.iter().copied())
        .filter(|(t, _)| *t != NONE)
        .collect();
    // Float results compare in their own type (NaN propagates); integer ones in the
    // common type of the element and the bounds, so that a bound outside the dtype's range
    // (`clip(uint8, -1, 300)`) clips as NumPy's and Numba's do instead of wrapping.
    let same_type = |lw: &mut FnLower<'ctx, '_>, x: Typed<'ctx>| -> R<Typed<'ctx>> {
        if out.is_float() || out.is_complex() {
            Ok((lw.cast(x.0, x.1, out)?, out))
        } else {
            Ok(x)
        }
    };
    map_elements(lw, sig.ret, &operands, &mut |lw, e| {
        let mut v = same_type(lw, e[0])?;
        let mut k = 1;
        if has_lo {
            let lo = same_type(lw, e[k])?;
            v = scalar_call(lw, "max", &[v, lo])?;
            k += 1;
        }
        if has_hi {
            let hi = same_type(lw, e[k])?;
            v = scalar_call(lw, "min", &[v, hi])?;
        }
        Ok((lw.cast(v.0, v.1, out)?, out))
    })
}

/// Element `i` of `np.linspace(start, stop, num)`: `start + i * step` with
/// `step = (stop - start) / max(num - 1, 1)`, and exactly `stop` at `i == num - 1`, as
/// NumPy sets it. The serial function and the parallel version share it, so both give
/// the same bits.
pub(super) fn linspace_at<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (start, stop): (
        inkwell::values::FloatValue<'ctx>,
        inkwell::values::FloatValue<'ctx>,
    ),
    num: IntValue<'ctx>,
    i: IntValue<'ctx>,
) -> R<inkwell::values::FloatValue<'ctx>> {
    let d = linspace_div(lw, num)?;
    let span = lw.b.build_float_sub(stop, start, "").map_err(llvm_err)?;
    let step = lw.b.build_float_div(span, d.divf, "").map_err(llvm_err)?;
    linspace_step(lw, (start, stop), step, &d, i)
}

/// A linspace's `num - 1`, whether it is positive, and its divisor `max(num - 1, 1)` as
/// a float.
struct LinspaceDiv<'ctx> {
    last: IntValue<'ctx>,
    several: IntValue<'ctx>,
    divf: inkwell::values::FloatValue<'ctx>,
}

fn linspace_div<'ctx>(lw: &mut FnLower<'ctx, '_>, num: IntValue<'ctx>) -> R<LinspaceDiv<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let last =
        lw.b.build_int_sub(num, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    let several =
        lw.b.build_int_compare(IntPredicate::SGT, last, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let div =
        lw.b.build_select(several, last, i64t.const_int(1, false), "")
            .map_err(llvm_err)?
            .into_int_value();
    let divf =
        lw.b.build_signed_int_to_float(div, lw.ctx.f64_type(), "")
            .map_err(llvm_err)?;
    Ok(LinspaceDiv {
        last,
        several,
        divf,
    })
}

/// `start + i * step`, exactly `stop` at `i == num - 1` (when `num > 1`).
fn linspace_step<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (start, stop): (
        inkwell::values::FloatValue<'ctx>,
        inkwell::values::FloatValue<'ctx>,
    ),
    step: inkwell::values::FloatValue<'ctx>,
    d: &LinspaceDiv<'ctx>,
    i: IntValue<'ctx>,
) -> R<inkwell::values::FloatValue<'ctx>> {
    let fi =
        lw.b.build_signed_int_to_float(i, lw.ctx.f64_type(), "")
            .map_err(llvm_err)?;
    let off = lw.b.build_float_mul(fi, step, "").map_err(llvm_err)?;
    let v = lw.b.build_float_add(start, off, "").map_err(llvm_err)?;
    let at_last =
        lw.b.build_int_compare(IntPredicate::EQ, i, d.last, "")
            .map_err(llvm_err)?;
    let at_last = lw.b.build_and(at_last, d.several, "").map_err(llvm_err)?;
    Ok(lw
        .b
        .build_select(at_last, stop, v, "")
        .map_err(llvm_err)?
        .into_float_value())
}

/// `np.linspace(start, stop, num=50)`: `num` evenly spaced values, `stop` included.
fn linspace<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let dtype = dtype_of(sig.ret);
    let num = match a.get(2) {
        Some(v) => v.into_int_value(),
        None => i64t.const_int(50, false),
    };
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, num, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        neg,
        "ValueError",
        &["Number of samples, -1, must be non-negative."],
    )?;
    let out = allocate(lw, sig.ret, &[num])?;
    let (lp, i) = Loop::begin(lw, num)?;
    let v = linspace_value(lw, (a[0], a[1]), dtype, num, i)?;
    let p = flat_ptr(lw, sig.ret, out, i)?;
    store_elem(lw, dtype, p, v)?;
    lp.end(lw)?;
    Ok(out.into())
}

/// Element `i` of a float64 or complex128 linspace (`start`, `stop` of type `dtype`).
pub(super) fn linspace_value<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (start, stop): (BasicValueEnum<'ctx>, BasicValueEnum<'ctx>),
    dtype: TypeId,
    num: IntValue<'ctx>,
    i: IntValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    if dtype != COMPLEX128 {
        return Ok(linspace_at(
            lw,
            (start.into_float_value(), stop.into_float_value()),
            num,
            i,
        )?
        .into());
    }
    // NumPy divides the complex span by `div` with its ufunc's complex division, which
    // multiplies each part by `1 / div`; the rest is each part's own arithmetic.
    let (start, stop) = (start.into_struct_value(), stop.into_struct_value());
    let d = linspace_div(lw, num)?;
    let one = lw.ctx.f64_type().const_float(1.0);
    let scale = lw.b.build_float_div(one, d.divf, "").map_err(llvm_err)?;
    let mut out = start;
    for k in 0..2 {
        let a = lw.b.build_extract_value(start, k, "").map_err(llvm_err)?;
        let b = lw.b.build_extract_value(stop, k, "").map_err(llvm_err)?;
        let (a, b) = (a.into_float_value(), b.into_float_value());
        let span = lw.b.build_float_sub(b, a, "").map_err(llvm_err)?;
        let step = lw.b.build_float_mul(span, scale, "").map_err(llvm_err)?;
        let x = linspace_step(lw, (a, b), step, &d, i)?;
        out =
            lw.b.build_insert_value(out, x, k, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(out.into())
}

/// `var` / `std`: the population variance (mean of squared deviations), nan when empty.
fn variance<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let n = get_int(lw, arr, field::NITEMS)?;
    let f64t = lw.ctx.f64_type();
    // A complex element contributes |x - mean|^2 (Numba's `real(v * conj(v))`): its parts
    // are accumulated apart; a real element has one part.
    let parts = if dtype.is_complex() { 2 } else { 1 };
    let element = |lw: &mut FnLower<'ctx, '_>, i| -> R<Vec<inkwell::values::FloatValue<'ctx>>> {
        let p = flat_ptr(lw, t, arr, i)?;
        let x = load_elem(lw, dtype, p)?;
        if parts == 1 {
            return Ok(vec![lw.cast(x, dtype, FLOAT64)?.into_float_value()]);
        }
        let x = lw.cast(x, dtype, COMPLEX128)?.into_struct_value();
        (0..2)
            .map(|k| {
                Ok(lw
                    .b
                    .build_extract_value(x, k, "")
                    .map_err(llvm_err)?
                    .into_float_value())
            })
            .collect()
    };
    let slots = (0..parts)
        .map(|_| lw.alloca_in_entry(f64t.into(), "acc"))
        .collect::<R<Vec<_>>>()?;
    let count =
        lw.b.build_signed_int_to_float(n, f64t, "")
            .map_err(llvm_err)?;
    // Two passes: the mean, then the squared deviations from it.
    for &s in &slots {
        lw.b.build_store(s, f64t.const_zero()).map_err(llvm_err)?;
    }
    let (lp, i) = Loop::begin(lw, n)?;
    let xs = element(lw, i)?;
    for (&s, x) in slots.iter().zip(xs) {
        let acc =
            lw.b.build_load(f64t, s, "")
                .map_err(llvm_err)?
                .into_float_value();
        let sum = lw.b.build_float_add(acc, x, "").map_err(llvm_err)?;
        lw.b.build_store(s, sum).map_err(llvm_err)?;
    }
    lp.end(lw)?;
    let mut means = Vec::new();
    for &s in &slots {
        let total =
            lw.b.build_load(f64t, s, "")
                .map_err(llvm_err)?
                .into_float_value();
        means.push(
            lw.b.build_float_div(total, count, "mean")
                .map_err(llvm_err)?,
        );
    }
    let ss_slot = slots[0];
    lw.b.build_store(ss_slot, f64t.const_zero())
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let xs = element(lw, i)?;
    let mut acc =
        lw.b.build_load(f64t, ss_slot, "")
            .map_err(llvm_err)?
            .into_float_value();
    for (x, m) in xs.into_iter().zip(&means) {
        let d = lw.b.build_float_sub(x, *m, "").map_err(llvm_err)?;
        let d2 = lw.b.build_float_mul(d, d, "").map_err(llvm_err)?;
        acc = lw.b.build_float_add(acc, d2, "").map_err(llvm_err)?;
    }
    lw.b.build_store(ss_slot, acc).map_err(llvm_err)?;
    lp.end(lw)?;
    let ss =
        lw.b.build_load(f64t, ss_slot, "")
            .map_err(llvm_err)?
            .into_float_value();
    let var = lw.b.build_float_div(ss, count, "var").map_err(llvm_err)?;
    Ok(if key_name(sig) == "std" {
        lw.float_unary("sqrt", var)?.into()
    } else {
        var.into()
    })
}

/// `np.round(x, decimals=0)` (and `around`, `round_`, `a.round`), NumPy's algorithm:
/// scale by `10**decimals`, round half to even, scale back; integers stay integers.
fn round_half_even<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let decimals = match (sig.args.get(1), a.get(1)) {
        (Some(&t), Some(&v)) => lw.cast(v, t, INT64)?.into_int_value(),
        _ => lw.ctx.i64_type().const_zero(),
    };
    let f64t = lw.ctx.f64_type();
    let d =
        lw.b.build_signed_int_to_float(decimals, f64t, "")
            .map_err(llvm_err)?;
    let ten = f64t.const_float(10.0);
    let powi = lw.intrinsic("llvm.pow", &[f64t.into()])?;
    let neg =
        lw.b.build_float_compare(inkwell::FloatPredicate::OLT, d, f64t.const_zero(), "")
            .map_err(llvm_err)?;
    let abs_d = lw.b.build_float_neg(d, "").map_err(llvm_err)?;
    let abs_d =
        lw.b.build_select(neg, abs_d, d, "")
            .map_err(llvm_err)?
            .into_float_value();
    let scale = lw
        .call_value(powi, &[ten.into(), abs_d.into()])?
        .into_float_value();
    // One part: x * s (or x / s for negative decimals), rint, back.
    let part = |lw: &mut FnLower<'ctx, '_>, x: inkwell::values::FloatValue<'ctx>| {
        let up = lw.b.build_float_mul(x, scale, "").map_err(llvm_err)?;
        let down = lw.b.build_float_div(x, scale, "").map_err(llvm_err)?;
        let y =
            lw.b.build_select(neg, down, up, "")
                .map_err(llvm_err)?
                .into_float_value();
        let r = lw.float_unary("roundeven", y)?;
        let back_up = lw.b.build_float_div(r, scale, "").map_err(llvm_err)?;
        let back_down = lw.b.build_float_mul(r, scale, "").map_err(llvm_err)?;
        Ok::<_, LowerError>(
            lw.b.build_select(neg, back_down, back_up, "")
                .map_err(llvm_err)?
                .into_float_value(),
        )
    };
    let one = |lw: &mut FnLower<'ctx, '_>,
               x: BasicValueEnum<'ctx>,
               t: TypeId|
     -> R<BasicValueEnum<'ctx>> {
        if t.is_complex() {
            let wide = lw.cast(x, t, COMPLEX128)?.into_struct_value();
            let mut out = wide;
            for k in 0..2 {
                let p =
                    lw.b.build_extract_value(wide, k, "")
                        .map_err(llvm_err)?
                        .into_float_value();
                let r = part(lw, p)?;
                out =
                    lw.b.build_insert_value(out, r, k, "")
                        .map_err(llvm_err)?
                        .into_struct_value();
            }
            return lw.cast(out.into(), COMPLEX128, t);
        }
        let wide = lw.cast(x, t, FLOAT64)?.into_float_value();
        let r = part(lw, wide)?;
        lw.cast(r.into(), FLOAT64, t)
    };
    let t = sig.args[0];
    if !t.is_array() {
        return one(lw, a[0], t);
    }
    let dt = dtype_of(t);
    map_elements(lw, sig.ret, &[(t, a[0])], &mut |lw, e| {
        Ok((one(lw, e[0].0, dt)?, dt))
    })
}

/// `all` / `any`: the truth of every / some element.
fn all_any<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let n = get_int(lw, arr, field::NITEMS)?;
    let is_all = key_name(sig) == "all";
    let bool_t = lw.ctx.bool_type();
    let slot = lw.alloca_in_entry(bool_t.into(), "truth")?;
    lw.b.build_store(slot, bool_t.const_int(u64::from(is_all), false))
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let tr = lw.truth(x, dtype)?;
    let acc =
        lw.b.build_load(bool_t, slot, "")
            .map_err(llvm_err)?
            .into_int_value();
    let v = if is_all {
        lw.b.build_and(acc, tr, "").map_err(llvm_err)?
    } else {
        lw.b.build_or(acc, tr, "").map_err(llvm_err)?
    };
    lw.b.build_store(slot, v).map_err(llvm_err)?;
    lp.end(lw)?;
    lw.b.build_load(bool_t, slot, "").map_err(llvm_err)
}

/// NumPy's `sign`: -1, 0 or 1 of the input's type (NaN stays NaN); for a complex number,
/// `z / |z|` (NumPy 2), 0 for 0.
fn sign<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (v, t): (BasicValueEnum<'ctx>, TypeId),
) -> R<(BasicValueEnum<'ctx>, TypeId)> {
    let e = llvm_err;
    if t.is_complex() {
        let (re, im) = super::complex::parts(lw, v)?;
        let ft = re.get_type();
        let (h, ht) = scalar_call(lw, "abs", &[(v, t)])?;
        let h = lw.cast(
            h,
            ht,
            if ft == lw.ctx.f32_type() {
                FLOAT32
            } else {
                FLOAT64
            },
        )?;
        let h = h.into_float_value();
        let zero = ft.const_zero();
        let is_zero =
            lw.b.build_float_compare(inkwell::FloatPredicate::OEQ, h, zero, "")
                .map_err(e)?;
        let one = ft.const_float(1.0);
        let d =
            lw.b.build_select(is_zero, one, h, "")
                .map_err(e)?
                .into_float_value();
        let r = lw.b.build_float_div(re, d, "").map_err(e)?;
        let i = lw.b.build_float_div(im, d, "").map_err(e)?;
        return Ok((super::complex::make(lw, t, r, i)?, t));
    }
    if t.is_float() {
        let x = v.into_float_value();
        let ft = x.get_type();
        let (zero, one) = (ft.const_zero(), ft.const_float(1.0));
        let gt =
            lw.b.build_float_compare(inkwell::FloatPredicate::OGT, x, zero, "")
                .map_err(e)?;
        let lt =
            lw.b.build_float_compare(inkwell::FloatPredicate::OLT, x, zero, "")
                .map_err(e)?;
        // Zero comes back as +0 (`x + 0.0`), NaN as NaN.
        let base = lw.b.build_float_add(x, zero, "").map_err(e)?;
        let r =
            lw.b.build_select(lt, ft.const_float(-1.0), base, "")
                .map_err(e)?;
        let r =
            lw.b.build_select(gt, one, r.into_float_value(), "")
                .map_err(e)?;
        return Ok((r, t));
    }
    if t == BOOLEAN {
        return Ok((v, t));
    }
    let x = v.into_int_value();
    let it = x.get_type();
    let zero = it.const_zero();
    let gt_pred = if t.is_signed() {
        IntPredicate::SGT
    } else {
        IntPredicate::UGT
    };
    let gt = lw.b.build_int_compare(gt_pred, x, zero, "").map_err(e)?;
    let gt = lw.b.build_int_z_extend(gt, it, "").map_err(e)?;
    if !t.is_signed() {
        return Ok((gt.into(), t));
    }
    let lt =
        lw.b.build_int_compare(IntPredicate::SLT, x, zero, "")
            .map_err(e)?;
    let lt = lw.b.build_int_z_extend(lt, it, "").map_err(e)?;
    Ok((lw.b.build_int_sub(gt, lt, "").map_err(e)?.into(), t))
}
