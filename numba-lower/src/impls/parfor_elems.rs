//! The element-level nodes numba-parfor's NumPy conversion builds parfor bodies from
//! (see `numba_parfor::numpy`): the result's allocation, an array expression evaluated
//! at one flat position, flat loads and stores, and a mean from its sum.
//!
//! They reuse the serial implementations' pieces (broadcast shapes, flat and broadcast
//! addressing, the fused-tree evaluator), so a parallel result equals the serial one
//! element for element.

use inkwell::values::{BasicValueEnum, IntValue, StructValue};
use inkwell::IntPredicate;
use numba_ir::{ExtensionNode, VarId};
use numba_parfor::numpy::{
    ABS2, ARANGE, ARANGE_COUNT, ARGFINISH, ARGSTART, ARGSTEP, ARRAYEXPR_AT, EXTREME, GETFLAT,
    INPLACE_CHECK, LINSPACE, LINSPACE_COUNT, MASKCHECK, MASKSET, MEAN, MINMAX, NONEMPTY,
    PARFOR_ALLOC, PARFOR_EMPTY, PARFOR_SHAPE, SETFLAT, SETVIEW, UNALIAS,
};
use numba_typeinfer::types::*;

use super::array_ops::{
    broadcast_checked, broadcast_ptr, broadcast_shape, broadcast_shape_or, dim, dtype_of, flat_ptr,
    load_elem, mean_of, store_elem, Typed,
};
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::model::{lowered, value_type};
use crate::registry::Registry;
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    r.register_extension(PARFOR_ALLOC, |lw, node, t| lower_alloc(lw, node, t, true));
    r.register_extension(PARFOR_SHAPE, |lw, node, t| lower_alloc(lw, node, t, false));
    r.register_extension(PARFOR_EMPTY, lower_empty);
    r.register_extension(numba_parfor::kernel::REDINIT, lower_redinit);
    r.register_extension(numba_parfor::prange::NDSIZE, lower_ndsize);
    r.register_extension(numba_parfor::prange::UNRAVEL, lower_unravel);
    r.register_extension(ARRAYEXPR_AT, lower_at);
    r.register_extension(GETFLAT, lower_getflat);
    r.register_extension(SETFLAT, lower_setflat);
    r.register_extension(MEAN, lower_mean);
    r.register_extension(ABS2, lower_abs2);
    r.register_extension(numba_parfor::hoist::REFILL, lower_refill);
    r.register_extension(LINSPACE_COUNT, lower_linspace_count);
    r.register_extension(LINSPACE, lower_linspace);
    r.register_extension(ARANGE_COUNT, lower_arange_count);
    r.register_extension(ARANGE, lower_arange);
    r.register_extension(INPLACE_CHECK, lower_inplace_check);
    r.register_extension(EXTREME, lower_extreme);
    r.register_extension(MINMAX, lower_minmax);
    r.register_extension(NONEMPTY, lower_nonempty);
    r.register_extension(SETVIEW, lower_setview);
    r.register_extension(UNALIAS, lower_unalias);
    r.register_extension(MASKCHECK, lower_maskcheck);
    r.register_extension(MASKSET, lower_maskset);
    r.register_extension(ARGSTART, lower_argstart);
    r.register_extension(ARGSTEP, lower_argstep);
    r.register_extension(ARGFINISH, lower_argfinish);
    r.register_extension(numba_parfor::asserts::ASSERT_EQUIV, lower_assert_equiv);
    r.register_extension(numba_parfor::numpy::MASKED, lower_masked);
}

/// `assert_equiv(arrays...)`: Numba's AssertionError (attr `msg`) unless each operand has
/// the first one's size at its axis (attr `axes`: an axis per operand, `*` for the whole
/// shape).
fn lower_assert_equiv<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let (Some(msg), Some(axes)) = (attr(node, "msg"), attr(node, "axes")) else {
        return Err(lw.unsupported(format!("malformed {} node", node.kind)));
    };
    let axes: Vec<&str> = axes.split(',').collect();
    if axes.len() != node.operands.len() {
        return Err(lw.unsupported(format!("malformed {} node", node.kind)));
    }
    let mut sizes: Vec<Vec<IntValue<'ctx>>> = Vec::new();
    for (&v, axis) in node.operands.iter().zip(&axes) {
        let t = lowered(lw.ty(v));
        let a = lw.load(v)?.into_struct_value();
        let picked: Vec<u32> = match axis.parse::<u32>() {
            Ok(d) if d < ndim(t) => vec![d],
            Ok(_) => return Err(lw.unsupported(format!("malformed {} node", node.kind))),
            Err(_) => (0..ndim(t)).collect(),
        };
        sizes.push(
            picked
                .into_iter()
                .map(|d| dim(lw, a, field::SHAPE, d))
                .collect::<R<_>>()?,
        );
    }
    let mut bad = lw.ctx.bool_type().const_zero();
    let first = sizes.first().cloned().unwrap_or_default();
    for other in &sizes[1..] {
        if other.len() != first.len() {
            bad = lw.ctx.bool_type().const_int(1, false);
            continue;
        }
        for (&x, &y) in first.iter().zip(other) {
            let ne =
                lw.b.build_int_compare(IntPredicate::NE, x, y, "")
                    .map_err(llvm_err)?;
            bad = lw.b.build_or(bad, ne, "").map_err(llvm_err)?;
        }
    }
    lw.raise_const_if(bad, "AssertionError", &[msg])?;
    Ok(None)
}

/// The node's attribute `key`.
fn attr<'a>(node: &'a ExtensionNode, key: &str) -> Option<&'a str> {
    node.attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The node's `op` attribute: `min` or `max`.
fn op_of<'a>(lw: &FnLower<'_, '_>, node: &'a ExtensionNode) -> R<&'a str> {
    node.attrs
        .iter()
        .find(|(k, _)| k == "op")
        .map(|(_, v)| v.as_str())
        .filter(|v| *v == "min" || *v == "max")
        .ok_or_else(|| lw.unsupported(format!("malformed {} node", node.kind)))
}

/// `x = parfor_extreme()`: the largest value of `x`'s type for a `min`, the smallest for
/// a `max` (infinities for floats), so any element replaces it.
fn lower_extreme<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let is_min = op_of(lw, node)? == "min";
    let t = lowered(lw.ty(target));
    extreme(lw, t, is_min).map(Some)
}

/// The start of a `min` (`is_min`) or `max` reduction of `t`: its largest (smallest)
/// value, infinity for floats.
fn extreme<'ctx>(lw: &FnLower<'ctx, '_>, t: TypeId, is_min: bool) -> R<BasicValueEnum<'ctx>> {
    let lt = value_type(lw.ctx, t)?;
    let v: BasicValueEnum<'ctx> = if t.is_float() {
        let inf = if is_min {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
        lt.into_float_type().const_float(inf).into()
    } else if t == BOOLEAN {
        lt.into_int_type()
            .const_int(u64::from(is_min), false)
            .into()
    } else if t.is_integer() {
        let bits = t.bitwidth();
        let it = lt.into_int_type();
        let ones = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let v = match (t.is_signed(), is_min) {
            (true, true) => ones >> 1,
            (true, false) => 1u64 << (bits - 1),
            (false, true) => ones,
            (false, false) => 0,
        };
        it.const_int(v, false).into()
    } else {
        return Err(lw.unsupported(format!("a parallel min/max of {t}")));
    };
    Ok(v)
}

/// `x = parfor_masked(m, e)` (attr `op`): `e` where the mask item `m` is set, else the
/// identity of the reduction `op` (`sum` 0, `prod` 1, `min`/`max` the type's extreme);
/// for `count`, 1 or 0.
fn lower_masked<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let op = attr(node, "op")
        .filter(|v| ["sum", "prod", "min", "max", "count"].contains(v))
        .ok_or_else(|| lw.unsupported(format!("malformed {} node", node.kind)))?;
    let t = lowered(lw.ty(target));
    let mv = operand(lw, node, 0)?;
    let m = lw.load(mv)?;
    let m = lw.cast(m, lowered(lw.ty(mv)), BOOLEAN)?.into_int_value();
    let m =
        lw.b.build_int_compare(IntPredicate::NE, m, m.get_type().const_zero(), "")
            .map_err(llvm_err)?;
    let (on, off) = match op {
        "count" => (
            lw.cast(lw.ctx.i64_type().const_int(1, false).into(), INT64, t)?,
            lw.cast(lw.ctx.i64_type().const_zero().into(), INT64, t)?,
        ),
        _ => {
            let ev = operand(lw, node, 1)?;
            let e = lw.load(ev)?;
            let e = lw.cast(e, lowered(lw.ty(ev)), t)?;
            let off = match op {
                "min" | "max" => extreme(lw, t, op == "min")?,
                "prod" => lw.cast(lw.ctx.i64_type().const_int(1, false).into(), INT64, t)?,
                _ => lw.cast(lw.ctx.i64_type().const_zero().into(), INT64, t)?,
            };
            (e, off)
        }
    };
    Ok(Some(lw.b.build_select(m, on, off, "").map_err(llvm_err)?))
}

/// `x = parfor_minmax(acc, e)`.
fn lower_minmax<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let op = op_of(lw, node)?;
    let mut args = Vec::with_capacity(2);
    for k in 0..2 {
        let v = operand(lw, node, k)?;
        let t = lowered(lw.ty(v));
        args.push((lw.load(v)?, t));
    }
    let (v, t) = super::array_ops::scalar_call(lw, op, &args)?;
    Ok(Some(lw.cast(v, t, lw.ty(target))?))
}

/// `m = parfor_nonempty(acc, n)`.
fn lower_nonempty<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let op = op_of(lw, node)?;
    let n = load_index(lw, operand(lw, node, 1)?)?;
    let empty =
        lw.b.build_int_compare(IntPredicate::EQ, n, lw.ctx.i64_type().const_zero(), "")
            .map_err(llvm_err)?;
    let msg = super::array_ops::no_identity(op)
        .ok_or_else(|| lw.unsupported(format!("malformed {} node", node.kind)))?;
    lw.raise_const_if(empty, "ValueError", &[msg])?;
    let acc = operand(lw, node, 0)?;
    let v = lw.load(acc)?;
    Ok(Some(lw.cast(v, lw.ty(acc), lw.ty(target))?))
}

fn target_of(lw: &FnLower<'_, '_>, node: &ExtensionNode, t: Option<VarId>) -> R<VarId> {
    t.ok_or_else(|| lw.unsupported(format!("a {} node must be assigned", node.kind)))
}

fn operand<'ctx>(lw: &FnLower<'ctx, '_>, node: &ExtensionNode, k: usize) -> R<VarId> {
    node.operands
        .get(k)
        .copied()
        .ok_or_else(|| lw.unsupported(format!("malformed {} node", node.kind)))
}

fn load_index<'ctx>(lw: &mut FnLower<'ctx, '_>, v: VarId) -> R<IntValue<'ctx>> {
    let x = lw.load(v)?;
    Ok(lw.cast(x, lw.ty(v), INT64)?.into_int_value())
}

/// `out = parfor_alloc(leaves...)`, or `parfor_shape` (no storage).
fn lower_alloc<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
    storage: bool,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let ret = lowered(lw.ty(target));
    let ops = super::arrayexpr::load_operands(lw, &node.operands)?;
    // Numba's array analysis asserts the leaves' sizes equal (its message names them).
    // A length-1 axis stretches, as in NumPy, unless fusion relied on the equality.
    let exact = attr(node, numba_parfor::shapes::STRICT).is_some();
    let (dims, _) = match attr(node, "assert") {
        Some(msg) => broadcast_checked(lw, ndim(ret), &ops, ("AssertionError", msg), exact)?,
        None => broadcast_shape(lw, ndim(ret), &ops)?,
    };
    let a = if storage {
        super::arrays::allocate(lw, ret, &dims)?
    } else {
        super::arrays::shape_only(lw, ret, &dims)?
    };
    Ok(Some(a.into()))
}

/// `out = parfor_empty(shape...)`: the dimensions of each operand (an int or a tuple of
/// ints) in order.
fn lower_empty<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let ret = lowered(lw.ty(target));
    let mut dims = Vec::new();
    for &v in &node.operands {
        let x = lw.load(v)?;
        dims.extend(super::array_ops::dims_of(lw, lowered(lw.ty(v)), x)?);
    }
    if dims.len() != ndim(ret) as usize {
        return Err(lw.unsupported(format!("a {}-d shape for {ret}", dims.len())));
    }
    // An array fusion left unread keeps its shape (and its errors) without memory.
    if attr(node, numba_parfor::dead::SHAPE_ONLY).is_some() {
        return Ok(Some(super::arrays::shape_only(lw, ret, &dims)?.into()));
    }
    Ok(Some(super::arrays::allocate(lw, ret, &dims)?.into()))
}

/// Whether `(v, i)` replaces the accumulated `(b, j)` of an `argmin` (`is_min`) or
/// `argmax` of `dtype`: `i` is a position and `j` is none yet, or `v` is better (NumPy's
/// first NaN wins; a tie keeps the earlier position, as the pairs come in order).
fn arg_takes<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    is_min: bool,
    dtype: TypeId,
    (v, i): (BasicValueEnum<'ctx>, IntValue<'ctx>),
    (b, j): (BasicValueEnum<'ctx>, IntValue<'ctx>),
) -> R<IntValue<'ctx>> {
    use inkwell::FloatPredicate;
    let i64t = lw.ctx.i64_type();
    let none = i64t.const_all_ones();
    let e = llvm_err;
    let has =
        lw.b.build_int_compare(IntPredicate::NE, i, none, "")
            .map_err(e)?;
    let first =
        lw.b.build_int_compare(IntPredicate::EQ, j, none, "")
            .map_err(e)?;
    let better = if dtype.is_float() {
        let (v, b) = (v.into_float_value(), b.into_float_value());
        let pred = if is_min {
            FloatPredicate::OLT
        } else {
            FloatPredicate::OGT
        };
        let strictly = lw.b.build_float_compare(pred, v, b, "").map_err(e)?;
        let v_nan =
            lw.b.build_float_compare(FloatPredicate::UNO, v, v, "")
                .map_err(e)?;
        let b_num =
            lw.b.build_float_compare(FloatPredicate::ORD, b, b, "")
                .map_err(e)?;
        let nan_first = lw.b.build_and(v_nan, b_num, "").map_err(e)?;
        lw.b.build_or(strictly, nan_first, "").map_err(e)?
    } else {
        let signed = dtype.is_signed() && dtype != BOOLEAN;
        let pred = match (is_min, signed) {
            (true, true) => IntPredicate::SLT,
            (true, false) => IntPredicate::ULT,
            (false, true) => IntPredicate::SGT,
            (false, false) => IntPredicate::UGT,
        };
        lw.b.build_int_compare(pred, v.into_int_value(), b.into_int_value(), "")
            .map_err(e)?
    };
    let ok = lw.b.build_or(first, better, "").map_err(e)?;
    lw.b.build_and(has, ok, "").map_err(e)
}

/// The `(value, position)` pair an `argmin`/`argmax` accumulator holds.
fn arg_parts<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    pair: BasicValueEnum<'ctx>,
) -> R<(BasicValueEnum<'ctx>, IntValue<'ctx>)> {
    let p = pair.into_struct_value();
    let v = lw.b.build_extract_value(p, 0, "").map_err(llvm_err)?;
    let i =
        lw.b.build_extract_value(p, 1, "")
            .map_err(llvm_err)?
            .into_int_value();
    Ok((v, i))
}

/// `acc` or `part` (pairs of type `pair_t`), whichever an `argmin`/`argmax` keeps:
/// combining the divisions' partials in order.
pub(crate) fn arg_combine<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    is_min: bool,
    pair_t: TypeId,
    acc: BasicValueEnum<'ctx>,
    part: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let dtype = crate::model::members(pair_t)[0];
    let a = arg_parts(lw, acc)?;
    let p = arg_parts(lw, part)?;
    let take = arg_takes(lw, is_min, dtype, p, a)?;
    lw.b.build_select(take, part, acc, "").map_err(llvm_err)
}

fn arg_op(lw: &FnLower<'_, '_>, node: &ExtensionNode) -> R<bool> {
    match node
        .attrs
        .iter()
        .find(|(k, _)| k == "op")
        .map(|(_, v)| v.as_str())
    {
        Some("argmin") => Ok(true),
        Some("argmax") => Ok(false),
        _ => Err(lw.unsupported(format!("malformed {} node", node.kind))),
    }
}

/// `p = parfor_argstart()`: `(0, -1)`.
fn lower_argstart<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let t = lowered(lw.ty(target_of(lw, node, target)?));
    let dtype = crate::model::members(t)[0];
    let zero = value_type(lw.ctx, dtype)?.const_zero();
    let none = lw.ctx.i64_type().const_all_ones().into();
    Ok(Some(lw.make_struct(t, &[zero, none])?))
}

/// `p = parfor_argstep(p, e, i)`.
fn lower_argstep<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let t = lowered(lw.ty(target_of(lw, node, target)?));
    let is_min = arg_op(lw, node)?;
    let dtype = crate::model::members(t)[0];
    let acc = lw.load(operand(lw, node, 0)?)?;
    let ev = operand(lw, node, 1)?;
    let e = lw.load(ev)?;
    let e = lw.cast(e, lowered(lw.ty(ev)), dtype)?;
    let i = load_index(lw, operand(lw, node, 2)?)?;
    let cand = lw.make_struct(t, &[e, i.into()])?;
    let a = arg_parts(lw, acc)?;
    let take = arg_takes(lw, is_min, dtype, (e, i), a)?;
    Ok(Some(
        lw.b.build_select(take, cand, acc, "").map_err(llvm_err)?,
    ))
}

/// `k = parfor_argfinish(p)`.
fn lower_argfinish<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let name = if arg_op(lw, node)? {
        "argmin"
    } else {
        "argmax"
    };
    let acc = lw.load(operand(lw, node, 0)?)?;
    let (_, i) = arg_parts(lw, acc)?;
    let none = lw.ctx.i64_type().const_all_ones();
    let empty =
        lw.b.build_int_compare(IntPredicate::EQ, i, none, "")
            .map_err(llvm_err)?;
    let msg = format!("attempt to get {name} of an empty sequence");
    lw.raise_const_if(empty, "ValueError", &[&msg])?;
    Ok(Some(lw.cast(i.into(), INT64, lw.ty(target))?))
}

/// `v = parfor_setview(out, index, leaves...)` (attr `ndim`: the stored expression's
/// rank): the selection `out[index]` a setitem parfor writes, after the checks the serial
/// store makes (the leaves broadcast together, and into the selection).
fn lower_setview<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let ret_nd = node
        .attrs
        .iter()
        .find(|(k, _)| k == "ndim")
        .and_then(|(_, v)| v.parse().ok());
    let (out, index) = (operand(lw, node, 0)?, operand(lw, node, 1)?);
    let asserts = (attr(node, "assert_leaves"), attr(node, "assert"));
    let (view_t, view, _, _) =
        super::arrayexpr::selection(lw, out, index, &node.operands[2..], ret_nd, asserts)?;
    lw.incref(view_t, view.into())?;
    Ok(Some(lw.cast(view.into(), view_t, lw.ty(target))?))
}

/// `s = parfor_unalias(view, leaf)`: `leaf`, or a copy of it when it overlaps the view
/// other than element for element (a parallel store must not read what another
/// position writes).
fn lower_unalias<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let (dv, sv) = (operand(lw, node, 0)?, operand(lw, node, 1)?);
    let dt = lowered(lw.ty(dv));
    let st = lowered(lw.ty(sv));
    let dst = lw.load(dv)?.into_struct_value();
    let src = lw.load(sv)?.into_struct_value();
    let (t2, v2, mi) = super::indexing::unaliased_operand(lw, (dt, dst), st, src)?;
    // A new reference either way: the leaf's, or the copy's own (released after the
    // increment, a null MemInfo when nothing was copied).
    lw.incref(t2, v2.into())?;
    super::indexing::release(lw, mi)?;
    // Every layout has the one array model: an `A` array holds any of them as it is.
    let want = lowered(lw.ty(target));
    if ndim(want) != ndim(t2) || dtype_of(want) != dtype_of(t2) {
        return Err(lw.unsupported(format!("a {t2} operand as {want}")));
    }
    Ok(Some(v2.into()))
}

/// `parfor_maskcheck(a, mask)`: NumPy's IndexError unless the mask has the array's shape.
fn lower_maskcheck<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let (av, mv) = (operand(lw, node, 0)?, operand(lw, node, 1)?);
    let t = lowered(lw.ty(av));
    let a = lw.load(av)?.into_struct_value();
    let m = lw.load(mv)?.into_struct_value();
    super::indexing::check_mask_shape(lw, t, a, m)?;
    Ok(None)
}

/// `parfor_maskset(a, mask, i, x)`: `a`'s flat element `i` becomes `x` (an array's flat
/// element `i`) where the mask's is true.
fn lower_maskset<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let (av, mv) = (operand(lw, node, 0)?, operand(lw, node, 1)?);
    let i = load_index(lw, operand(lw, node, 2)?)?;
    let xv = operand(lw, node, 3)?;
    let (t, mt) = (lowered(lw.ty(av)), lowered(lw.ty(mv)));
    let a = lw.load(av)?.into_struct_value();
    let m = lw.load(mv)?.into_struct_value();
    let mp = flat_ptr(lw, mt, m, i)?;
    let on = load_elem(lw, dtype_of(mt), mp)?;
    let on = lw.cast(on, dtype_of(mt), BOOLEAN)?.into_int_value();
    let store = lw.new_block("maskset.store");
    let done = lw.new_block("maskset.done");
    lw.b.build_conditional_branch(on, store, done)
        .map_err(llvm_err)?;
    lw.b.position_at_end(store);
    let x = lw.load(xv)?;
    let xt = lowered(lw.ty(xv));
    let (x, xt) = if xt.is_array() {
        let xp = flat_ptr(lw, xt, x.into_struct_value(), i)?;
        (load_elem(lw, dtype_of(xt), xp)?, dtype_of(xt))
    } else {
        (x, xt)
    };
    let x = lw.cast(x, xt, dtype_of(t))?;
    let p = flat_ptr(lw, t, a, i)?;
    store_elem(lw, dtype_of(t), p, x)?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    Ok(None)
}

/// `n = parfor_ndsize(idx)`: the number of positions of a `pndindex` value.
fn lower_ndsize<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let idx = lw.load(operand(lw, node, 0)?)?.into_struct_value();
    let n =
        lw.b.build_extract_value(idx, field::NITEMS, "")
            .map_err(llvm_err)?;
    Ok(Some(n))
}

/// `t = parfor_unravel(idx, k)`: the index tuple at C-order position `k` of the shape.
fn lower_unravel<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let v = operand(lw, node, 0)?;
    let idx = lw.load(v)?.into_struct_value();
    let k = load_index(lw, operand(lw, node, 1)?)?;
    let coords = super::flat::unravel(lw, lowered(lw.ty(v)), idx, k)?;
    let vals: Vec<BasicValueEnum<'ctx>> = coords.into_iter().map(Into::into).collect();
    Ok(Some(lw.make_struct(lowered(lw.ty(target)), &vals)?))
}

/// `acc = parfor_redinit(arr)`: a division's accumulator for an array reduction.
fn lower_redinit<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let t = lowered(lw.ty(target));
    let identity = match node.attrs.iter().find(|(k, _)| k == "op") {
        Some((_, op)) if op == "add" => 0,
        Some((_, op)) if op == "mul" => 1,
        _ => return Err(lw.unsupported("malformed parfor_redinit node")),
    };
    let src = lw.load(operand(lw, node, 0)?)?.into_struct_value();
    let dims: Vec<IntValue<'ctx>> = (0..ndim(t))
        .map(|d| dim(lw, src, field::SHAPE, d))
        .collect::<R<_>>()?;
    let arr = super::arrays::allocate(lw, t, &dims)?;
    let v = lw.ctx.i64_type().const_int(identity, false);
    super::indexing::assign_into(lw, t, arr, INT64, v.into())?;
    Ok(Some(arr.into()))
}

/// `x = arrayexpr_at(out, i, leaves...)`.
fn lower_at<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let out_v = operand(lw, node, 0)?;
    let out_t = lowered(lw.ty(out_v));
    let out = lw.load(out_v)?.into_struct_value();
    let i = load_index(lw, operand(lw, node, 1)?)?;
    // `bind`: the variables the tree names the leaves by, when those are others (a
    // setitem's operands, copied where they overlap the destination).
    let leaves = &node.operands[2..];
    let names: Vec<VarId> = match node.attrs.iter().find(|(k, _)| k == "bind") {
        Some((_, ids)) => {
            let names: Option<Vec<VarId>> = ids
                .split(',')
                .map(|s| s.trim().parse::<u32>().ok().map(VarId))
                .collect();
            match names {
                Some(n) if n.len() == leaves.len() => n,
                _ => return Err(lw.unsupported("malformed arrayexpr_at node")),
            }
        }
        None => leaves.to_vec(),
    };
    let nd = ndim(out_t);
    let dims: Vec<IntValue<'ctx>> = (0..nd)
        .map(|d| dim(lw, out, field::SHAPE, d))
        .collect::<R<_>>()?;
    let mut arrays: Vec<(usize, TypeId, StructValue<'ctx>)> = Vec::new();
    let mut elems: Vec<Typed<'ctx>> = Vec::with_capacity(leaves.len());
    for (k, &v) in leaves.iter().enumerate() {
        let t = lowered(lw.ty(v));
        let x = lw.load(v)?;
        if t.is_array() {
            arrays.push((k, t, x.into_struct_value()));
            elems.push((x, t));
        } else {
            elems.push((x, t));
        }
    }
    // Every array leaf of the result's shape: position i is the leaf's flat position i
    // (the common case, one branch LLVM hoists out of the loop); otherwise broadcast.
    let mut same = lw.ctx.bool_type().const_int(1, false);
    for &(_, t, a) in &arrays {
        if ndim(t) != nd {
            same = lw.ctx.bool_type().const_zero();
            continue;
        }
        for (d, &want) in dims.iter().enumerate() {
            let got = dim(lw, a, field::SHAPE, d as u32)?;
            let eq =
                lw.b.build_int_compare(IntPredicate::EQ, got, want, "")
                    .map_err(llvm_err)?;
            same = lw.b.build_and(same, eq, "").map_err(llvm_err)?;
        }
    }
    let fast = lw.new_block("at.same");
    let general = lw.new_block("at.bcast");
    let join = lw.new_block("at.done");
    lw.b.build_conditional_branch(same, fast, general)
        .map_err(llvm_err)?;
    let mut incoming = Vec::new();
    for (block, flat) in [(fast, true), (general, false)] {
        lw.b.position_at_end(block);
        let mut vals = Vec::with_capacity(arrays.len());
        for &(_, t, a) in &arrays {
            let p = if flat {
                flat_ptr(lw, t, a, i)?
            } else {
                broadcast_ptr(lw, t, a, &dims, i)?
            };
            vals.push(load_elem(lw, dtype_of(t), p)?);
        }
        lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
        let end =
            lw.b.get_insert_block()
                .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
        incoming.push((vals, end));
    }
    lw.b.position_at_end(join);
    for (j, &(k, t, _)) in arrays.iter().enumerate() {
        let dt = dtype_of(t);
        let phi =
            lw.b.build_phi(value_type(lw.ctx, dt)?, "")
                .map_err(llvm_err)?;
        for (vals, bb) in &incoming {
            phi.add_incoming(&[(&vals[j], *bb)]);
        }
        elems[k] = (phi.as_basic_value(), dt);
    }
    let (v, t) = super::arrayexpr::eval(lw, node, &names, &elems)?;
    Ok(Some(lw.cast(v, t, lw.ty(target))?))
}

/// `x = parfor_getflat(a, i)`.
fn lower_getflat<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let a = operand(lw, node, 0)?;
    let t = lowered(lw.ty(a));
    let arr = lw.load(a)?.into_struct_value();
    let i = load_index(lw, operand(lw, node, 1)?)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype_of(t), p)?;
    Ok(Some(lw.cast(x, dtype_of(t), lw.ty(target))?))
}

/// `parfor_setflat(a, i, x)`.
fn lower_setflat<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let a = operand(lw, node, 0)?;
    let x = operand(lw, node, 2)?;
    let t = lowered(lw.ty(a));
    let arr = lw.load(a)?.into_struct_value();
    let i = load_index(lw, operand(lw, node, 1)?)?;
    let v = lw.load(x)?;
    let v = lw.cast(v, lw.ty(x), dtype_of(t))?;
    let p = flat_ptr(lw, t, arr, i)?;
    store_elem(lw, dtype_of(t), p, v)?;
    Ok(None)
}

/// `m = parfor_mean(total, n)`.
fn lower_mean<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let total_v = operand(lw, node, 0)?;
    let acc_t = lowered(lw.ty(total_v));
    let total = lw.load(total_v)?;
    let n = load_index(lw, operand(lw, node, 1)?)?;
    let m = mean_of(lw, total, acc_t, n)?;
    let m = lw.cast(m, acc_t, lw.ty(target))?;
    // A standard deviation: the square root of the variance.
    if node.attrs.iter().any(|(k, v)| k == "op" && v == "sqrt") {
        let t = lowered(lw.ty(target));
        let (r, rt) = super::array_ops::scalar_call(lw, "math.sqrt", &[(m, t)])?;
        return Ok(Some(lw.cast(r, rt, t)?));
    }
    Ok(Some(m))
}

/// `n = parfor_linspace_count(num)`: NumPy's ValueError for a negative count.
fn lower_linspace_count<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let _ = target_of(lw, node, target)?;
    let n = load_index(lw, operand(lw, node, 0)?)?;
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, n, lw.ctx.i64_type().const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        neg,
        "ValueError",
        &["Number of samples, -1, must be non-negative."],
    )?;
    Ok(Some(n.into()))
}

/// `x = parfor_linspace(start, stop, num, i)`: element `i`, by the serial function's
/// arithmetic (`array_ops::linspace_at`).
fn lower_linspace<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let t = target_of(lw, node, target)?;
    let dtype = lowered(lw.ty(t));
    let mut ends = Vec::new();
    for k in 0..2 {
        let v = operand(lw, node, k)?;
        let x = lw.load(v)?;
        ends.push(lw.cast(x, lowered(lw.ty(v)), dtype)?);
    }
    let num = load_index(lw, operand(lw, node, 2)?)?;
    let i = load_index(lw, operand(lw, node, 3)?)?;
    let v = super::array_ops::linspace_value(lw, (ends[0], ends[1]), dtype, num, i)?;
    Ok(Some(v))
}

/// The node's first `k` operands loaded and cast to the arange's work type.
fn arange_operands<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    k: usize,
) -> R<(Vec<BasicValueEnum<'ctx>>, TypeId)> {
    let vars = (0..k)
        .map(|i| operand(lw, node, i))
        .collect::<R<Vec<_>>>()?;
    let types: Vec<TypeId> = vars.iter().map(|&v| lowered(lw.ty(v))).collect();
    let work = super::array_ops::arange_work(&types);
    let mut vals = Vec::new();
    for (v, t) in vars.into_iter().zip(types) {
        let x = lw.load(v)?;
        vals.push(lw.cast(x, t, work)?);
    }
    Ok((vals, work))
}

/// `n = parfor_arange_count(start, stop, step)`.
fn lower_arange_count<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let _ = target_of(lw, node, target)?;
    let (v, work) = arange_operands(lw, node, 3)?;
    let n = super::array_ops::arange_count(lw, (v[0], v[1], v[2]), work)?;
    Ok(Some(n.into()))
}

/// `x = parfor_arange(start, step, i)`: in the work type of `start` and `step`, cast to
/// `x`'s type (the dtype).
fn lower_arange<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let t = target_of(lw, node, target)?;
    let (v, work) = arange_operands(lw, node, 2)?;
    let i = load_index(lw, operand(lw, node, 2)?)?;
    let x = super::array_ops::arange_at(lw, (v[0], v[1]), i, work)?;
    Ok(Some(lw.cast(x, work, lowered(lw.ty(t)))?))
}

/// `parfor_inplace_check(out, value)`: the serial in-place operator's check (the
/// broadcast shape of both must be `out`'s own).
fn lower_inplace_check<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let (ov, vv) = (operand(lw, node, 0)?, operand(lw, node, 1)?);
    let (ot, vt) = (lowered(lw.ty(ov)), lowered(lw.ty(vv)));
    let (o, v) = (lw.load(ov)?, lw.load(vv)?);
    let nr = ndim(ot).max(if vt.is_array() { ndim(vt) } else { 0 });
    let ops = [(ot, o), (vt, v)];
    // Numba's array analysis asserts the operands' sizes equal (its message names them).
    let (dims, _) = match attr(node, "assert") {
        Some(msg) => broadcast_shape_or(lw, nr, &ops, ("AssertionError", msg))?,
        None => broadcast_shape(lw, nr, &ops)?,
    };
    super::inplace::check_output_shape(lw, o.into_struct_value(), ndim(ot), &dims)?;
    Ok(None)
}

/// `parfor_refill(a)`: every element of `a` the node's constant (a hoisted
/// `np.zeros`/`np.ones` array made new for the iteration).
fn lower_refill<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let a = operand(lw, node, 0)?;
    let t = lowered(lw.ty(a));
    let c: i64 = node
        .attrs
        .iter()
        .find(|(k, _)| k == "value")
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| lw.unsupported(format!("malformed {} node", node.kind)))?;
    let arr = lw.load(a)?.into_struct_value();
    let dtype = dtype_of(t);
    let one = lw.ctx.i64_type().const_int(c as u64, true);
    let v = lw.cast(one.into(), INT64, dtype)?;
    let n = super::array_ops::get_int(lw, arr, crate::model::array::field::NITEMS)?;
    let (lp, i) = super::array_ops::Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    store_elem(lw, dtype, p, v)?;
    lp.end(lw)?;
    Ok(None)
}

/// `s = parfor_abs2(d)`: `|d|^2`.
fn lower_abs2<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target_of(lw, node, target)?;
    let d = operand(lw, node, 0)?;
    let dt = lowered(lw.ty(d));
    let v = lw.load(d)?;
    let (sq, st) = if dt.is_complex() {
        let c = v.into_struct_value();
        let part_t = numba_typeinfer::types::intern(numba_typeinfer::types::Type::Float {
            bits: (dt.bitwidth() / 2) as u8,
        });
        let mut parts = Vec::new();
        for k in 0..2 {
            let x = lw.b.build_extract_value(c, k, "").map_err(llvm_err)?;
            parts.push(super::array_ops::scalar_call(lw, "square", &[(x, part_t)])?);
        }
        super::array_ops::scalar_call(lw, "+", &parts)?
    } else {
        super::array_ops::scalar_call(lw, "square", &[(v, dt)])?
    };
    Ok(Some(lw.cast(sq, st, lw.ty(target))?))
}
