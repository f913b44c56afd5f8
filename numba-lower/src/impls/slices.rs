//! Slice objects: `s.start`, `s.stop`, `s.step` (Numba's slice model holds them with the
//! defaults filled in) and `s.indices(n)` with Python's semantics.

use inkwell::values::{BasicValueEnum, IntValue};
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

/// Python's `slice.indices(length)`: start and stop clamped into the sequence (negative
/// ones counted from its end), a ValueError for a negative length or a zero step.
fn indices<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let s = a[0].into_struct_value();
    let n = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
    let i64t = lw.ctx.i64_type();
    let zero = i64t.const_zero();
    let get = |lw: &FnLower<'ctx, '_>, k| -> R<IntValue<'ctx>> {
        Ok(lw
            .b
            .build_extract_value(s, k, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    let (start, stop, step) = (get(lw, 0)?, get(lw, 1)?, get(lw, 2)?);
    let negative =
        lw.b.build_int_compare(IntPredicate::SLT, n, zero, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(negative, "ValueError", &["length should not be negative"])?;
    let zero_step =
        lw.b.build_int_compare(IntPredicate::EQ, step, zero, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(zero_step, "ValueError", &["slice step cannot be zero"])?;
    let b = &lw.b;
    let up = b
        .build_int_compare(IntPredicate::SGT, step, zero, "")
        .map_err(llvm_err)?;
    let one = i64t.const_int(1, false);
    let n_minus_1 = b.build_int_sub(n, one, "").map_err(llvm_err)?;
    let lo = b
        .build_select(up, zero, i64t.const_all_ones(), "")
        .map_err(llvm_err)?
        .into_int_value();
    let hi = b
        .build_select(up, n, n_minus_1, "")
        .map_err(llvm_err)?
        .into_int_value();
    let clamp = |x: IntValue<'ctx>| -> R<IntValue<'ctx>> {
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
    let start = clamp(start)?;
    let stop = clamp(stop)?;
    lw.make_struct(sig.ret, &[start.into(), stop.into(), step.into()])
}
