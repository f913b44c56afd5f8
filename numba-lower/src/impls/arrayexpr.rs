//! Lowering of numba-rewrite's array-expression nodes: `arrayexpr` allocates its result
//! and fills it in one loop that evaluates the node's fused statements on one element of
//! each operand at a time (no temporaries); `arrayexpr_setitem` runs the same loop over a
//! basic-indexed view of an existing array, allocating nothing unless an operand overlaps
//! the destination.
//!
//! Every fused statement is evaluated as the stand-alone element-wise operation would
//! evaluate one element (the same scalar implementations, the same intermediate dtypes),
//! so fusing never changes a result.

use std::collections::HashMap;

use inkwell::values::BasicValueEnum;
use numba_ir::{Expr, ExprId, ExtensionNode, Stmt, VarId};
use numba_rewrite::arrayexpr::{ARRAYEXPR, ARRAYEXPR_SETITEM};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{
    apply_binop, apply_unary, broadcast_shape, broadcast_shape_or, dim, dtype_of, fill_elements,
    map_elements, ufunc_element, Typed,
};
use super::indexing::{conflicts, release, SHAPE_MISMATCH};
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::model::lowered;
use crate::registry::Registry;
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    r.register_extension(ARRAYEXPR, lower_arrayexpr);
    r.register_extension(ARRAYEXPR_SETITEM, lower_setitem);
}

/// The node's fused statements.
fn body(node: &ExtensionNode) -> &[numba_ir::Inst] {
    node.blocks
        .values()
        .next()
        .map(|b| b.body.as_slice())
        .unwrap_or_default()
}

/// The operands as the loop reads them: arrays by type, scalars loaded once.
pub(super) fn load_operands<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    vars: &[VarId],
) -> R<Vec<(TypeId, BasicValueEnum<'ctx>)>> {
    vars.iter()
        .map(|&v| Ok((lowered(lw.ty(v)), lw.load(v)?)))
        .collect()
}

/// `target = arrayexpr(...)`: a new C array of the target's type.
fn lower_arrayexpr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    target: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let target = target.ok_or_else(|| lw.unsupported("an arrayexpr node must be assigned"))?;
    let ret = lowered(lw.ty(target));
    let operands = load_operands(lw, &node.operands)?;
    let v = map_elements(lw, ret, &operands, &mut |lw, elems| {
        eval(lw, node, &node.operands, elems)
    })?;
    Ok(Some(v))
}

/// `out[index] = arrayexpr(...)`: the loop writes the view `out[index]` directly. When
/// an operand's memory overlaps the view other than element for element (a stencil update
/// `u[1:-1] = u[2:] + u[:-2]`), the expression is evaluated into one temporary first and
/// that is copied into the view: one extra array however many operands overlap, as
/// evaluating and then assigning would make.
fn lower_setitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let [out, index, leaves @ ..] = node.operands.as_slice() else {
        return Err(lw.unsupported("malformed arrayexpr_setitem node"));
    };
    // The expression's own type.
    let ret_t = body(node).iter().find_map(|i| match i.stmt {
        Stmt::Return { value } => Some(lowered(lw.ty(value))),
        _ => None,
    });
    let ret_nd = ret_t.map(ndim);
    let (view_t, view, view_dims, operands) =
        selection(lw, *out, *index, leaves, ret_nd, (None, None))?;
    let mut conflict = lw.ctx.bool_type().const_zero();
    for &(t, v) in &operands {
        if t.is_array() {
            let c = conflicts(lw, (view_t, view), t, v.into_struct_value())?;
            conflict = lw.b.build_or(conflict, c, "").map_err(llvm_err)?;
        }
    }
    let direct = lw.new_block("setitem.direct");
    let join = lw.new_block("setitem.done");
    match ret_t.filter(|t| t.is_array()) {
        Some(ret_t) if operands.iter().any(|(t, _)| t.is_array()) => {
            let staged = lw.new_block("setitem.staged");
            lw.b.build_conditional_branch(conflict, staged, direct)
                .map_err(llvm_err)?;
            lw.b.position_at_end(staged);
            let tmp_t = intern(Type::Array {
                dtype: dtype_of(ret_t),
                ndim: ndim(ret_t),
                layout: Layout::C,
                readonly: false,
            });
            let tmp = map_elements(lw, tmp_t, &operands, &mut |lw, elems| {
                eval(lw, node, leaves, elems)
            })?
            .into_struct_value();
            let read = [(tmp_t, tmp.into())];
            let same = same_shape(lw, &read, &view_dims)?;
            fill_elements(lw, (view_t, view), &view_dims, same, &read, &mut |_, e| {
                Ok(e[0])
            })?;
            let mi =
                lw.b.build_extract_value(tmp, field::MEMINFO, "")
                    .map_err(llvm_err)?
                    .into_pointer_value();
            release(lw, mi)?;
            lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
        }
        _ => {
            lw.b.build_unconditional_branch(direct).map_err(llvm_err)?;
        }
    }
    lw.b.position_at_end(direct);
    let same = same_shape(lw, &operands, &view_dims)?;
    fill_elements(
        lw,
        (view_t, view),
        &view_dims,
        same,
        &operands,
        &mut |lw, elems| eval(lw, node, leaves, elems),
    )?;
    lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
    lw.b.position_at_end(join);
    Ok(None)
}

/// Whether every array among `reads` has exactly the shape `dims` (the flat loop's fast
/// path reads them position for position).
fn same_shape<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    reads: &[(TypeId, BasicValueEnum<'ctx>)],
    dims: &[inkwell::values::IntValue<'ctx>],
) -> R<inkwell::values::IntValue<'ctx>> {
    let mut same = lw.ctx.bool_type().const_int(1, false);
    for &(t, v) in reads {
        if !t.is_array() {
            continue;
        }
        if ndim(t) as usize != dims.len() {
            return Ok(lw.ctx.bool_type().const_zero());
        }
        for (d, &want) in dims.iter().enumerate() {
            let got = dim(lw, v.into_struct_value(), field::SHAPE, d as u32)?;
            let eq =
                lw.b.build_int_compare(inkwell::IntPredicate::EQ, got, want, "")
                    .map_err(llvm_err)?;
            same = lw.b.build_and(same, eq, "").map_err(llvm_err)?;
        }
    }
    Ok(same)
}

/// What [`selection`] gives: the view's type, value and shape, and the loaded leaves.
pub(super) type StoreTarget<'ctx> = (
    TypeId,
    inkwell::values::StructValue<'ctx>,
    Vec<inkwell::values::IntValue<'ctx>>,
    Vec<(TypeId, BasicValueEnum<'ctx>)>,
);

/// The selection `out[index]` an in-place store writes (a view: its type, value and
/// shape) and the loaded `leaves`, after checking that the leaves broadcast together to
/// a shape of `ret_nd` axes (the selection's rank when `None`) that fits the selection:
/// the checks evaluating and then assigning would make. `asserts` are Numba's parallel
/// messages for the two checks (the leaves', the store's), raised as AssertionError in
/// place of NumPy's errors.
pub(super) fn selection<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    out: VarId,
    index: VarId,
    leaves: &[VarId],
    ret_nd: Option<u32>,
    asserts: (Option<&str>, Option<&str>),
) -> R<StoreTarget<'ctx>> {
    let (out, index) = (&out, &index);
    let out_t = lowered(lw.ty(*out));
    let idx_t = lowered(lw.ty(*index));
    let view_t = numba_typeinfer::numpy::getitem(out_t, idx_t)
        .filter(|t| t.is_array())
        .ok_or_else(|| lw.unsupported(format!("indexing {out_t} with {idx_t}")))?;
    let gsig = Signature {
        ret: view_t,
        args: vec![out_t, idx_t],
        key: ImplKey::GetItem,
    };
    let arr = lw.load(*out)?;
    let idx = lw.load(*index)?;
    let view = lw.call_impl(&gsig, &[arr, idx])?.into_struct_value();
    let nd = ndim(view_t);
    let view_dims: Vec<_> = (0..nd)
        .map(|d| dim(lw, view, field::SHAPE, d))
        .collect::<R<_>>()?;
    let operands = load_operands(lw, leaves)?;
    // The expression's own shape first (its operands must broadcast together), then
    // that shape into the selection, as evaluating and then assigning would check.
    let ret_nd = ret_nd.unwrap_or(nd);
    if !operands.iter().any(|(t, _)| t.is_array()) {
        return Ok((view_t, view, view_dims, operands));
    }
    let (edims, _) = match asserts.0 {
        Some(msg) => broadcast_shape_or(lw, ret_nd, &operands, ("AssertionError", msg))?,
        None => broadcast_shape(lw, ret_nd, &operands)?,
    };
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let mut bad = lw.ctx.bool_type().const_zero();
    for (k, &e) in edims.iter().enumerate() {
        let want = view_dims[nd as usize - edims.len() + k];
        let eq =
            lw.b.build_int_compare(inkwell::IntPredicate::EQ, e, want, "")
                .map_err(llvm_err)?;
        let is_one =
            lw.b.build_int_compare(inkwell::IntPredicate::EQ, e, one, "")
                .map_err(llvm_err)?;
        let ok = lw.b.build_or(eq, is_one, "").map_err(llvm_err)?;
        let not_ok = lw.b.build_not(ok, "").map_err(llvm_err)?;
        bad = lw.b.build_or(bad, not_ok, "").map_err(llvm_err)?;
    }
    match asserts.1 {
        Some(msg) => lw.raise_const_if(bad, "AssertionError", &[msg])?,
        None => lw.raise_const_if(bad, "ValueError", &[SHAPE_MISMATCH])?,
    }
    Ok((view_t, view, view_dims, operands))
}

/// Evaluate the fused statements on one element of each operand (`elems`, in the order of
/// `operands`): the value of the node's result at this position.
pub(super) fn eval<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    operands: &[VarId],
    elems: &[Typed<'ctx>],
) -> R<Typed<'ctx>> {
    let mut env: HashMap<VarId, Typed<'ctx>> = operands
        .iter()
        .copied()
        .zip(elems.iter().copied())
        .collect();
    for inst in body(node) {
        match inst.stmt {
            Stmt::Assign { target, value } => {
                let (v, t) = element_op(lw, value, &env)?;
                // Each intermediate is rounded to its array's dtype, as unfused.
                let dt = dtype_of(lowered(lw.ty(target)));
                env.insert(target, (lw.cast(v, t, dt)?, dt));
            }
            Stmt::Return { value } => {
                return env
                    .get(&value)
                    .copied()
                    .ok_or_else(|| lw.unsupported("arrayexpr result not computed"))
            }
            _ => return Err(lw.unsupported("unexpected statement in an arrayexpr node")),
        }
    }
    Err(lw.unsupported("arrayexpr node without a result"))
}

/// One fused operation on elements.
fn element_op<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    id: ExprId,
    env: &HashMap<VarId, Typed<'ctx>>,
) -> R<Typed<'ctx>> {
    let get = |lw: &FnLower<'ctx, '_>, v: &VarId| {
        env.get(v)
            .copied()
            .ok_or_else(|| lw.unsupported("arrayexpr operand not available"))
    };
    let ir = lw.ir;
    match ir.expr(id) {
        Expr::Var(src) => get(lw, src),
        Expr::BinOp { op, lhs, rhs } => {
            let x = get(lw, lhs)?;
            let y = get(lw, rhs)?;
            if let Some(r) = super::power::static_pow_for(lw, id, *op, x)? {
                return Ok(r);
            }
            apply_binop(lw, *op, x, y)
        }
        Expr::Unary { op, value } => {
            let x = get(lw, value)?;
            apply_unary(lw, *op, x)
        }
        Expr::Call { args, .. } => {
            let key = match lw.typing.calltypes.get(&id).map(|s| &s.key) {
                Some(ImplKey::Function(k)) => k.clone(),
                // A ufunc that is an operator (`np.bitwise_and(a, b)`).
                Some(&ImplKey::BinOp(op)) if args.len() == 2 => {
                    let x = get(lw, &args[0])?;
                    let y = get(lw, &args[1])?;
                    return apply_binop(lw, op, x, y);
                }
                Some(&ImplKey::Unary(op)) if args.len() == 1 => {
                    let x = get(lw, &args[0])?;
                    return apply_unary(lw, op, x);
                }
                _ => return Err(lw.unsupported("untyped call in an arrayexpr node")),
            };
            let name = key.strip_prefix("numpy.").unwrap_or(&key).to_string();
            let vals = args.iter().map(|a| get(lw, a)).collect::<R<Vec<_>>>()?;
            ufunc_element(lw, &name, &vals)
        }
        other => Err(lw.unsupported(format!(
            "`{}` in an arrayexpr node",
            ir.expr_to_string(other)
        ))),
    }
}
