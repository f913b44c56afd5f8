//! `a.nonzero()`, `np.nonzero(a)` and one-argument `np.where(a)`: for each axis, a new
//! int64 array of the coordinates of the true (non-zero) elements, in C order.

use inkwell::values::{BasicValueEnum, IntValue};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{dim, dtype_of, flat_ptr, get_int, is_array, load_elem, Loop};
use super::arrays::allocate;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    for k in ["array.nonzero", "numpy.nonzero", "numpy.where"] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![TypePat::Pred(is_array)]),
            nonzero,
        );
    }
}

/// How many elements of `arr` (of type `t`) are true (non-zero), over all of them.
pub(super) fn count_true<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: inkwell::values::StructValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let dtype = dtype_of(t);
    let i64t = lw.ctx.i64_type();
    let n = get_int(lw, arr, field::NITEMS)?;
    let count = lw.alloca_in_entry(i64t.into(), "count")?;
    lw.b.build_store(count, i64t.const_zero())
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let nz = lw.truth(x, dtype)?;
    let nz = lw.b.build_int_z_extend(nz, i64t, "").map_err(llvm_err)?;
    let c =
        lw.b.build_load(i64t, count, "")
            .map_err(llvm_err)?
            .into_int_value();
    let c = lw.b.build_int_add(c, nz, "").map_err(llvm_err)?;
    lw.b.build_store(count, c).map_err(llvm_err)?;
    lp.end(lw)?;
    Ok(lw
        .b
        .build_load(i64t, count, "")
        .map_err(llvm_err)?
        .into_int_value())
}

fn nonzero<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let nd = ndim(t);
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let n = get_int(lw, arr, field::NITEMS)?;
    let truth = |lw: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>| -> R<IntValue<'ctx>> {
        let p = flat_ptr(lw, t, arr, i)?;
        let x = load_elem(lw, dtype, p)?;
        lw.truth(x, dtype)
    };
    // First pass: how many.
    let total = count_true(lw, t, arr)?;
    let count = lw.alloca_in_entry(i64t.into(), "count")?;
    let out_t = intern(Type::Array {
        dtype: INTP,
        ndim: 1,
        layout: Layout::C,
        readonly: false,
    });
    let outs = (0..nd.max(1))
        .map(|_| allocate(lw, out_t, &[total]))
        .collect::<R<Vec<_>>>()?;
    // Second pass: the coordinates of each true element (a 0-d array counts as 1-d).
    let shape = (0..nd)
        .map(|d| dim(lw, arr, field::SHAPE, d))
        .collect::<R<Vec<_>>>()?;
    lw.b.build_store(count, i64t.const_zero())
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let nz = truth(lw, i)?;
    let take = lw.new_block("nonzero.take");
    let skip = lw.new_block("nonzero.skip");
    lw.b.build_conditional_branch(nz, take, skip)
        .map_err(llvm_err)?;
    lw.b.position_at_end(take);
    let c =
        lw.b.build_load(i64t, count, "")
            .map_err(llvm_err)?
            .into_int_value();
    let mut rest = i;
    for d in (0..nd.max(1) as usize).rev() {
        let coord = if nd == 0 {
            i64t.const_zero()
        } else if d == 0 {
            rest
        } else {
            let q =
                lw.b.build_int_unsigned_rem(rest, shape[d], "")
                    .map_err(llvm_err)?;
            rest =
                lw.b.build_int_unsigned_div(rest, shape[d], "")
                    .map_err(llvm_err)?;
            q
        };
        let p = flat_ptr(lw, out_t, outs[d], c)?;
        lw.b.build_store(p, coord).map_err(llvm_err)?;
    }
    let c = lw.b.build_int_add(c, one, "").map_err(llvm_err)?;
    lw.b.build_store(count, c).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(skip).map_err(llvm_err)?;
    lw.b.position_at_end(skip);
    lp.end(lw)?;
    let vals: Vec<BasicValueEnum<'ctx>> = outs.into_iter().map(Into::into).collect();
    lw.make_struct(sig.ret, &vals)
}
