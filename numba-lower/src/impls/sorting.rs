//! `a.sort()`, `np.sort` and `argsort`: loops over the runs along the last axis, each handed
//! to the sort helpers in `crate::sort` (NumPy's order, NaN last).

use inkwell::values::{BasicValueEnum, IntValue, PointerValue, StructValue};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{
    data_ptr, dim, dtype_of, flat_ptr, get_int, is_array, map_elements, rebuild, Loop,
};
use super::arrays::allocate;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::sort::SortKind;
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    let array = || TypePat::Pred(is_array);
    r.register(
        ImplKey::Function("array.sort".into()),
        Args::Exact(vec![array()]),
        sort_in_place,
    );
    r.register(
        ImplKey::Function("numpy.sort".into()),
        Args::Exact(vec![array()]),
        sorted_copy,
    );
    for key in ["array.argsort", "numpy.argsort"] {
        r.register(
            ImplKey::Function(key.into()),
            Args::Exact(vec![array()]),
            argsort,
        );
        // `kind=` only chooses the algorithm; the helper's stable order suits both kinds.
        r.register(
            ImplKey::Function(key.into()),
            Args::Exact(vec![array(), TypePat::Any]),
            argsort,
        );
    }
}

pub(super) fn kind_code(dtype: TypeId) -> Option<SortKind> {
    Some(match dtype {
        BOOLEAN => SortKind::Bool,
        INT8 => SortKind::I8,
        INT16 => SortKind::I16,
        INT32 => SortKind::I32,
        INT64 => SortKind::I64,
        UINT8 => SortKind::U8,
        UINT16 => SortKind::U16,
        UINT32 => SortKind::U32,
        UINT64 => SortKind::U64,
        FLOAT32 => SortKind::F32,
        FLOAT64 => SortKind::F64,
        _ => return None,
    })
}

/// Sort every run along the last axis of `arr` (type `t`) in place.
fn sort_runs<'ctx>(lw: &mut FnLower<'ctx, '_>, t: TypeId, arr: StructValue<'ctx>) -> R<()> {
    let dtype = dtype_of(t);
    let code = kind_code(dtype).ok_or_else(|| lw.unsupported("sorting this dtype"))?;
    let n = ndim(t);
    let i64t = lw.ctx.i64_type();
    let i32t = lw.ctx.i32_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_sort",
        lw.ctx
            .void_type()
            .fn_type(&[ptr.into(), i64t.into(), i64t.into(), i32t.into()], false),
    );
    let len = dim(lw, arr, field::SHAPE, n - 1)?;
    let stride = dim(lw, arr, field::STRIDES, n - 1)?;
    let code = i32t.const_int(code as u64, false);
    let call = |lw: &mut FnLower<'ctx, '_>, base: PointerValue<'ctx>| -> R<()> {
        lw.b.build_call(
            f,
            &[base.into(), len.into(), stride.into(), code.into()],
            "",
        )
        .map_err(llvm_err)?;
        Ok(())
    };
    if n == 1 {
        let data = data_ptr(lw, arr)?;
        return call(lw, data);
    }
    // The leading axes, as a view whose element i starts run i.
    let shape: Vec<IntValue> = (0..n - 1)
        .map(|d| dim(lw, arr, field::SHAPE, d))
        .collect::<R<_>>()?;
    let strides: Vec<IntValue> = (0..n - 1)
        .map(|d| dim(lw, arr, field::STRIDES, d))
        .collect::<R<_>>()?;
    let mut runs = i64t.const_int(1, false);
    for d in &shape {
        runs = lw.b.build_int_mul(runs, *d, "").map_err(llvm_err)?;
    }
    let lead = rebuild(lw, arr, &shape, &strides)?;
    let lead_t = array(dtype, n - 1, Layout::A);
    let (lp, i) = Loop::begin(lw, runs)?;
    let base = flat_ptr(lw, lead_t, lead, i)?;
    call(lw, base)?;
    lp.end(lw)
}

/// `a.sort()`: in place, along the last axis.
fn sort_in_place<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    sort_runs(lw, sig.args[0], a[0].into_struct_value())?;
    Ok(lw.ghost())
}

/// `np.sort(a)`: a sorted C-contiguous copy.
fn sorted_copy<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let out = map_elements(lw, sig.ret, &[(sig.args[0], a[0])], &mut |_, e| Ok(e[0]))?;
    sort_runs(lw, sig.ret, out.into_struct_value())?;
    Ok(out)
}

/// `a.argsort()` / `np.argsort(a)` of a 1-d array: the indices that sort it.
fn argsort<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let code = kind_code(dtype_of(t)).ok_or_else(|| lw.unsupported("sorting this dtype"))?;
    let n = get_int(lw, arr, field::NITEMS)?;
    let out = allocate(lw, sig.ret, &[n])?;
    let i64t = lw.ctx.i64_type();
    let i32t = lw.ctx.i32_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_argsort",
        lw.ctx.void_type().fn_type(
            &[
                ptr.into(),
                i64t.into(),
                i64t.into(),
                i32t.into(),
                ptr.into(),
            ],
            false,
        ),
    );
    let (src, dst) = (data_ptr(lw, arr)?, data_ptr(lw, out)?);
    let stride = dim(lw, arr, field::STRIDES, 0)?;
    lw.b.build_call(
        f,
        &[
            src.into(),
            n.into(),
            stride.into(),
            i32t.const_int(code as u64, false).into(),
            dst.into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    Ok(out.into())
}
