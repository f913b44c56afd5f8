//! Slice objects: `s.start`, `s.stop`, `s.step` (Numba's slice model holds them with the
//! defaults filled in), `s.indices(n)` with Python's semantics, and the same clamping for
//! slicing an array axis (`slice_bounds`).

use inkwell::values::{BasicValueEnum, IntValue, StructValue};
use inkwell::IntPredicate;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn is_slice(t: TypeId) -> bool {
    matches!(t.get(), Type::Slice(_))
}

pub(crate) fn register(r: &mut Registry) {
    for attr in ["start", "stop", "step"] {
        r.register(
            ImplKey::GetAttr(attr.into()),
            Args::Exact(vec![TypePat::Pred(is_slice)]),
            field,
        );
    }
    r.register(
        ImplKey::Function("slice.indices".into()),
        Args::Exact(vec![TypePat::Pred(is_slice), TypePat::Int]),
        indices,
    );
}

fn field<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let k = match &sig.key {
        ImplKey::GetAttr(n) if n == "start" => 0,
        ImplKey::GetAttr(n) if n == "stop" => 1,
        _ => 2,
    };
    lw.b.build_extract_value(a[0].into_struct_value(), k, "")
        .map_err(llvm_err)
}

/// The slice struct's (start, stop, step).
fn fields<'ctx>(
    lw: &FnLower<'ctx, '_>,
    s: StructValue<'ctx>,
) -> R<(IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>)> {
    let get = |k| -> R<IntValue<'ctx>> {
        Ok(lw
            .b
            .build_extract_value(s, k, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    Ok((get(0)?, get(1)?, get(2)?))
}

/// Python's `slice.indices(n)` clamping, for a nonzero step: start and stop with negative
/// values counted from the end, then held in `[0, n]` going up or `[-1, n - 1]` going down.
fn clamp<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (start, stop, step): (IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>),
    n: IntValue<'ctx>,
) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
    let zero_step =
        lw.b.build_int_compare(IntPredicate::EQ, step, step.get_type().const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(zero_step, "ValueError", &["slice step cannot be zero"])?;
    let i64t = lw.ctx.i64_type();
    let zero = i64t.const_zero();
    let b = &lw.b;
    let up = b
        .build_int_compare(IntPredicate::SGT, step, zero, "")
        .map_err(llvm_err)?;
    let n_minus_1 = b
        .build_int_sub(n, i64t.const_int(1, false), "")
        .map_err(llvm_err)?;
    let lo = b
        .build_select(up, zero, i64t.const_all_ones(), "")
        .map_err(llvm_err)?
        .into_int_value();
    let hi = b
        .build_select(up, n, n_minus_1, "")
        .map_err(llvm_err)?
        .into_int_value();
    let one = |x: IntValue<'ctx>| -> R<IntValue<'ctx>> {
        let neg = b
            .build_int_compare(IntPredicate::SLT, x, zero, "")
            .map_err(llvm_err)?;
        let plus_n = b.build_int_add(x, n, "").map_err(llvm_err)?;
        let x = b
            .build_select(neg, plus_n, x, "")
            .map_err(llvm_err)?
            .into_int_value();
        let below = b
            .build_int_compare(IntPredicate::SLT, x, lo, "")
            .map_err(llvm_err)?;
        let x = b
            .build_select(below, lo, x, "")
            .map_err(llvm_err)?
            .into_int_value();
        let above = b
            .build_int_compare(IntPredicate::SGT, x, hi, "")
            .map_err(llvm_err)?;
        Ok(b.build_select(above, hi, x, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    Ok((one(start)?, one(stop)?))
}

/// A slice applied to an axis of length `n`, as views use it: (start, length, step).
pub(super) fn slice_bounds<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    s: StructValue<'ctx>,
    n: IntValue<'ctx>,
) -> R<(IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>)> {
    let bounds = fields(lw, s)?;
    let step = bounds.2;
    let (start, stop) = clamp(lw, bounds, n)?;
    let i64t = lw.ctx.i64_type();
    let zero = i64t.const_zero();
    let one = i64t.const_int(1, false);
    let b = &lw.b;
    let up = b
        .build_int_compare(IntPredicate::SGT, step, zero, "")
        .map_err(llvm_err)?;
    // len = max(0, (stop - start + step -/+ 1) / step)
    let span = b.build_int_sub(stop, start, "").map_err(llvm_err)?;
    let adj = b
        .build_select(up, i64t.const_all_ones(), one, "")
        .map_err(llvm_err)?
        .into_int_value();
    let num = b.build_int_add(span, step, "").map_err(llvm_err)?;
    let num = b.build_int_add(num, adj, "").map_err(llvm_err)?;
    let len = b.build_int_signed_div(num, step, "").map_err(llvm_err)?;
    let pos = b
        .build_int_compare(IntPredicate::SGT, len, zero, "")
        .map_err(llvm_err)?;
    let len = b
        .build_select(pos, len, zero, "")
        .map_err(llvm_err)?
        .into_int_value();
    Ok((start, len, step))
}

/// Python's `slice.indices(length)`: the clamped bounds, a ValueError for a negative
/// length or a zero step.
fn indices<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let s = a[0].into_struct_value();
    let n = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
    let negative =
        lw.b.build_int_compare(IntPredicate::SLT, n, n.get_type().const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(negative, "ValueError", &["length should not be negative"])?;
    let bounds = fields(lw, s)?;
    let step = bounds.2;
    let (start, stop) = clamp(lw, bounds, n)?;
    lw.make_struct(sig.ret, &[start.into(), stop.into(), step.into()])
}
