//! `a.view(dtype)`: the same memory read as another dtype. Equal item sizes keep shape
//! and strides; otherwise the last axis must be contiguous and is rescaled, with NumPy's
//! errors when it is not or when its byte length does not divide.

use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{data_ptr, dim, dtype_of, is_array, rebuild, view_with};
use super::arrays::itemsize;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    r.register(
        ImplKey::Function("array.view".into()),
        Args::Exact(vec![TypePat::Pred(is_array), TypePat::Any]),
        view,
    );
}

fn view<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, ret) = (sig.args[0], sig.ret);
    let arr = a[0].into_struct_value();
    let (old, new) = (itemsize(dtype_of(t)), itemsize(dtype_of(ret)));
    let n = ndim(t);
    let i64t = lw.ctx.i64_type();
    let mut shape: Vec<IntValue<'ctx>> = (0..n)
        .map(|d| dim(lw, arr, field::SHAPE, d))
        .collect::<R<_>>()?;
    let mut strides: Vec<IntValue<'ctx>> = (0..n)
        .map(|d| dim(lw, arr, field::STRIDES, d))
        .collect::<R<_>>()?;
    let mut out = rebuild(lw, arr, &shape, &strides)?;
    if old != new {
        if n == 0 {
            // NumPy's (and Numba's) run-time ValueError; the view is never made.
            let yes = lw.ctx.bool_type().const_all_ones();
            lw.raise_const_if(
                yes,
                "ValueError",
                &["Changing the dtype of a 0d array is only supported if the itemsize is unchanged"],
            )?;
            return Ok(out.into());
        }
        let last = (n - 1) as usize;
        let contiguous =
            lw.b.build_int_compare(
                IntPredicate::EQ,
                strides[last],
                i64t.const_int(old, false),
                "",
            )
            .map_err(llvm_err)?;
        let single =
            lw.b.build_int_compare(IntPredicate::EQ, shape[last], i64t.const_int(1, false), "")
                .map_err(llvm_err)?;
        let ok = lw.b.build_or(contiguous, single, "").map_err(llvm_err)?;
        let bad = lw.b.build_not(ok, "").map_err(llvm_err)?;
        lw.raise_const_if(
            bad,
            "ValueError",
            &["To change to a dtype of a different size, the last axis must be contiguous"],
        )?;
        if new < old && old % new != 0 {
            // NumPy's check for a smaller item that does not divide the old one.
            let yes = lw.ctx.bool_type().const_all_ones();
            lw.raise_const_if(
                yes,
                "ValueError",
                &["When changing to a smaller dtype, its size must be a divisor of the size of original dtype"],
            )?;
        }
        let bytes =
            lw.b.build_int_mul(shape[last], i64t.const_int(old, false), "")
                .map_err(llvm_err)?;
        let rem =
            lw.b.build_int_unsigned_rem(bytes, i64t.const_int(new, false), "")
                .map_err(llvm_err)?;
        let uneven =
            lw.b.build_int_compare(IntPredicate::NE, rem, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(
            uneven,
            "ValueError",
            &["When changing to a larger dtype, its size must be a divisor of the total size in bytes of the last axis of the array."],
        )?;
        shape[last] =
            lw.b.build_int_unsigned_div(bytes, i64t.const_int(new, false), "")
                .map_err(llvm_err)?;
        strides[last] = i64t.const_int(new, false);
        let data = data_ptr(lw, arr)?;
        out = view_with(lw, arr, data, &shape, &strides)?;
    }
    let out: BasicValueEnum<'ctx> =
        lw.b.build_insert_value(out, i64t.const_int(new, false), field::ITEMSIZE, "")
            .map_err(llvm_err)?
            .into_struct_value()
            .into();
    // A call returns a new reference: the view shares the array's.
    lw.incref(ret, out)?;
    Ok(out)
}
