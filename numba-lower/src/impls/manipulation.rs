//! NumPy's array manipulation functions (typed in numba-typeinfer's `numpy_manip`):
//! joining (`concatenate`, `stack`, `hstack`, `vstack`, `dstack`, `column_stack`), views
//! (`expand_dims`, `flip`, `fliplr`, `flipud`, `transpose`, `asarray`), new arrays (`roll`,
//! `diff`, `unique`, `diag`, `ravel`, `copy`) and counting (`bincount`, `histogram`), as
//! Numba implements them (`numba/np/arrayobj.py`,
//! `numba/np/arraymath.py`), with Numba's error messages.
//!
//! Views share the argument's memory and, being call results, take a new reference to it.
//! Every run-time check happens before anything is allocated, so that raising leaks
//! nothing; temporaries are released before returning.

use inkwell::values::{BasicValueEnum, FloatValue, IntValue, PointerValue, StructValue};
use inkwell::{FloatPredicate, IntPredicate};
use numba_ir::BinOp;
use numba_typeinfer::conv::tuple_items;
use numba_typeinfer::types::*;
use numba_typeinfer::Signature;

use super::array_ops::{
    apply_binop, copy, data_ptr, dim, dtype_of, flat_ptr, get_int, key_name, load_elem, ravel,
    rebuild, shape_of, store_elem, strides_of, transpose, view_with, Loop,
};
use super::arrays::allocate;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

/// An array value with its type.
type Arr<'ctx> = (TypeId, StructValue<'ctx>);

pub(crate) fn register(r: &mut Registry) {
    let f = |k: &str| numba_typeinfer::ImplKey::Function(k.into());
    let any = || Args::Variadic(TypePat::Any);
    r.register(f("numpy.concatenate"), any(), concatenate);
    r.register(f("numpy.stack"), any(), stack);
    r.register(f("numpy.hstack"), any(), hstack);
    r.register(f("numpy.vstack"), any(), vstack);
    r.register(f("numpy.dstack"), any(), dstack);
    r.register(f("numpy.column_stack"), any(), column_stack);
    r.register(f("numpy.expand_dims"), any(), expand_dims);
    for k in ["numpy.flip", "numpy.fliplr", "numpy.flipud"] {
        r.register(f(k), any(), flip);
    }
    r.register(f("numpy.roll"), any(), roll);
    r.register(f("numpy.diff"), any(), diff);
    r.register(f("numpy.unique"), any(), unique);
    r.register(f("numpy.bincount"), any(), bincount);
    r.register(f("numpy.histogram"), any(), histogram);
    r.register(f("numpy.diag"), any(), diag);
    r.register(f("numpy.ravel"), any(), ravel);
    r.register(f("numpy.copy"), any(), copy);
    r.register(f("numpy.asarray"), any(), asarray);
    r.register(f("numpy.lib.stride_tricks.as_strided"), any(), as_strided);
    // `np.transpose(a)` / `(a, None)` reverse the axes; `(a, axes)` permutes them.
    r.register(f("numpy.transpose"), any(), transpose);
    r.register(
        f("numpy.transpose"),
        Args::Exact(vec![TypePat::Any, TypePat::Tuple]),
        permute,
    );
}

// ---------------------------------------------------------------------------
// Small builders
// ---------------------------------------------------------------------------

pub(super) fn int_const<'ctx>(lw: &FnLower<'ctx, '_>, v: i64) -> IntValue<'ctx> {
    lw.ctx.i64_type().const_int(v as u64, true)
}

fn icmp<'ctx>(
    lw: &FnLower<'ctx, '_>,
    p: IntPredicate,
    a: IntValue<'ctx>,
    b: IntValue<'ctx>,
) -> R<IntValue<'ctx>> {
    lw.b.build_int_compare(p, a, b, "").map_err(llvm_err)
}

fn fcmp<'ctx>(
    lw: &FnLower<'ctx, '_>,
    p: FloatPredicate,
    a: FloatValue<'ctx>,
    b: FloatValue<'ctx>,
) -> R<IntValue<'ctx>> {
    lw.b.build_float_compare(p, a, b, "").map_err(llvm_err)
}

pub(super) fn select<'ctx>(
    lw: &FnLower<'ctx, '_>,
    c: IntValue<'ctx>,
    a: IntValue<'ctx>,
    b: IntValue<'ctx>,
) -> R<IntValue<'ctx>> {
    Ok(lw
        .b
        .build_select(c, a, b, "")
        .map_err(llvm_err)?
        .into_int_value())
}

fn fselect<'ctx>(
    lw: &FnLower<'ctx, '_>,
    c: IntValue<'ctx>,
    a: FloatValue<'ctx>,
    b: FloatValue<'ctx>,
) -> R<FloatValue<'ctx>> {
    Ok(lw
        .b
        .build_select(c, a, b, "")
        .map_err(llvm_err)?
        .into_float_value())
}

fn add<'ctx>(lw: &FnLower<'ctx, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    lw.b.build_int_add(a, b, "").map_err(llvm_err)
}

fn sub<'ctx>(lw: &FnLower<'ctx, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    lw.b.build_int_sub(a, b, "").map_err(llvm_err)
}

fn mul<'ctx>(lw: &FnLower<'ctx, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    lw.b.build_int_mul(a, b, "").map_err(llvm_err)
}

fn and<'ctx>(lw: &FnLower<'ctx, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    lw.b.build_and(a, b, "").map_err(llvm_err)
}

fn or<'ctx>(lw: &FnLower<'ctx, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    lw.b.build_or(a, b, "").map_err(llvm_err)
}

fn not<'ctx>(lw: &FnLower<'ctx, '_>, a: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    lw.b.build_not(a, "").map_err(llvm_err)
}

/// `p + bytes`.
fn byte_offset<'ctx>(
    lw: &FnLower<'ctx, '_>,
    p: PointerValue<'ctx>,
    bytes: IntValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    // SAFETY (of the generated code): callers stay inside (or one past) the array.
    unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), p, &[bytes], "")
            .map_err(llvm_err)
    }
}

/// The address of element `i` of a 1-d array.
fn at_1d<'ctx>(
    lw: &FnLower<'ctx, '_>,
    arr: StructValue<'ctx>,
    i: IntValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    let stride = dim(lw, arr, field::STRIDES, 0)?;
    let off = mul(lw, i, stride)?;
    byte_offset(lw, data_ptr(lw, arr)?, off)
}

/// `vals[at]` for a run-time index (`at` in range).
fn pick<'ctx>(
    lw: &FnLower<'ctx, '_>,
    vals: &[IntValue<'ctx>],
    at: IntValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let mut v = vals[0];
    for (d, &x) in vals.iter().enumerate().skip(1) {
        let here = icmp(lw, IntPredicate::EQ, at, int_const(lw, d as i64))?;
        v = select(lw, here, x, v)?;
    }
    Ok(v)
}

fn product<'ctx>(lw: &FnLower<'ctx, '_>, dims: &[IntValue<'ctx>]) -> R<IntValue<'ctx>> {
    let mut n = int_const(lw, 1);
    for &d in dims {
        n = mul(lw, n, d)?;
    }
    Ok(n)
}

/// The `INT64` value of an optional integer argument, or its default.
fn int_arg<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    i: usize,
    default: i64,
) -> R<IntValue<'ctx>> {
    match (a.get(i), sig.args.get(i)) {
        (Some(&v), Some(&t)) if t.unliteral().is_integer() || t == BOOLEAN => {
            Ok(lw.cast(v, t, INT64)?.into_int_value())
        }
        _ => Ok(int_const(lw, default)),
    }
}

/// A negative axis counts from the end; outside `[0, ndim)` is Numba's IndexError.
fn normalize_axis<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    axis: IntValue<'ctx>,
    nd: u32,
    func: &str,
) -> R<IntValue<'ctx>> {
    let n = int_const(lw, i64::from(nd));
    let neg = icmp(lw, IntPredicate::SLT, axis, int_const(lw, 0))?;
    let wrapped = add(lw, axis, n)?;
    let axis = select(lw, neg, wrapped, axis)?;
    // Unsigned: a still-negative axis is out of bounds too.
    let bad = icmp(lw, IntPredicate::UGE, axis, n)?;
    lw.raise_const_if(
        bad,
        "IndexError",
        &[&format!("{func}(): axis out of bounds")],
    )?;
    Ok(axis)
}

/// The dimensions with a new axis of length 1 (stride 0) at `axis` (in `0..=len`).
fn insert_axis<'ctx>(
    lw: &FnLower<'ctx, '_>,
    shape: &[IntValue<'ctx>],
    strides: &[IntValue<'ctx>],
    axis: IntValue<'ctx>,
) -> R<(Vec<IntValue<'ctx>>, Vec<IntValue<'ctx>>)> {
    let (one, zero) = (int_const(lw, 1), int_const(lw, 0));
    let n = shape.len();
    let mut out_shape = Vec::with_capacity(n + 1);
    let mut out_strides = Vec::with_capacity(n + 1);
    for j in 0..=n {
        let jc = int_const(lw, j as i64);
        let here = icmp(lw, IntPredicate::EQ, jc, axis)?;
        let before = icmp(lw, IntPredicate::SLT, jc, axis)?;
        // Past the axis, position j holds the input's axis j - 1.
        let (mut s, mut st) = if j > 0 {
            (shape[j - 1], strides[j - 1])
        } else {
            (one, zero)
        };
        if j < n {
            s = select(lw, before, shape[j], s)?;
            st = select(lw, before, strides[j], st)?;
        }
        out_shape.push(select(lw, here, one, s)?);
        out_strides.push(select(lw, here, zero, st)?);
    }
    Ok((out_shape, out_strides))
}

/// The arrays of a tuple argument.
fn tuple_arrays<'ctx>(
    lw: &FnLower<'ctx, '_>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
) -> R<Vec<Arr<'ctx>>> {
    let items = tuple_items(t).ok_or_else(|| lw.unsupported("expected a tuple of arrays"))?;
    let sv = v.into_struct_value();
    items
        .into_iter()
        .enumerate()
        .map(|(k, it)| {
            let x =
                lw.b.build_extract_value(sv, k as u32, "")
                    .map_err(llvm_err)?;
            Ok((it, x.into_struct_value()))
        })
        .collect()
}

/// A view type of `dtype` with `nd` dimensions and any layout.
fn any_layout(dtype: TypeId, nd: u32) -> TypeId {
    array(dtype, nd, Layout::A)
}

/// Copy every element of `src` into `dst` (same shape), converting to `dst`'s dtype: run
/// by run along the last axis, each run walked by its strides.
fn copy_into<'ctx>(lw: &mut FnLower<'ctx, '_>, src: Arr<'ctx>, dst: Arr<'ctx>) -> R<()> {
    let (sd, dd) = (dtype_of(src.0), dtype_of(dst.0));
    let nd = ndim(src.0) as usize;
    let shape = shape_of(lw, src.0, src.1)?;
    let src_strides = strides_of(lw, src.0, src.1)?;
    let dst_strides = strides_of(lw, dst.0, dst.1)?;
    let lead = |lw: &mut FnLower<'ctx, '_>, (t, v): Arr<'ctx>, strides: &[IntValue<'ctx>]| {
        rebuild(lw, v, &shape[..nd - 1], &strides[..nd - 1])
            .map(|l| (any_layout(dtype_of(t), nd as u32 - 1), l))
    };
    let leads = if nd > 1 {
        Some((lead(lw, src, &src_strides)?, lead(lw, dst, &dst_strides)?))
    } else {
        None
    };
    let runs = product(lw, &shape[..nd - 1])?;
    let (outer, r) = Loop::begin(lw, runs)?;
    let (from, to) = match leads {
        Some((ls, ld)) => (flat_ptr(lw, ls.0, ls.1, r)?, flat_ptr(lw, ld.0, ld.1, r)?),
        None => (data_ptr(lw, src.1)?, data_ptr(lw, dst.1)?),
    };
    let (inner, i) = Loop::begin(lw, shape[nd - 1])?;
    let off = mul(lw, i, src_strides[nd - 1])?;
    let p = byte_offset(lw, from, off)?;
    let x = load_elem(lw, sd, p)?;
    let x = lw.cast(x, sd, dd)?;
    let off = mul(lw, i, dst_strides[nd - 1])?;
    let q = byte_offset(lw, to, off)?;
    store_elem(lw, dd, q, x)?;
    inner.end(lw)?;
    outer.end(lw)
}

/// Zero every byte of a new contiguous array.
fn zero_fill<'ctx>(lw: &mut FnLower<'ctx, '_>, arr: StructValue<'ctx>) -> R<()> {
    let n = get_int(lw, arr, field::NITEMS)?;
    let size = get_int(lw, arr, field::ITEMSIZE)?;
    let nbytes = mul(lw, n, size)?;
    let data = data_ptr(lw, arr)?;
    lw.b.build_memset(data, 1, lw.ctx.i8_type().const_zero(), nbytes)
        .map_err(llvm_err)?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Joining arrays
// ---------------------------------------------------------------------------

/// Join `items` (all of `ndim(ret)` dimensions) along `axis` (normalized) into a new array
/// of type `ret`; every other axis must have the same length in every input.
fn join<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    items: &[Arr<'ctx>],
    axis: IntValue<'ctx>,
    ret: TypeId,
) -> R<StructValue<'ctx>> {
    let nd = ndim(ret);
    let shapes: Vec<Vec<IntValue<'ctx>>> = items
        .iter()
        .map(|&(t, v)| shape_of(lw, t, v))
        .collect::<R<_>>()?;
    let mut ret_shape = Vec::with_capacity(nd as usize);
    for d in 0..nd as usize {
        let on_axis = icmp(lw, IntPredicate::EQ, axis, int_const(lw, d as i64))?;
        let first = shapes[0][d];
        let mut total = first;
        let mut mismatch = lw.ctx.bool_type().const_zero();
        for s in &shapes[1..] {
            total = add(lw, total, s[d])?;
            let ne = icmp(lw, IntPredicate::NE, s[d], first)?;
            mismatch = or(lw, mismatch, ne)?;
        }
        let off_axis = not(lw, on_axis)?;
        let bad = and(lw, off_axis, mismatch)?;
        lw.raise_const_if(
            bad,
            "ValueError",
            &[&format!(
                "np.concatenate(): input sizes over dimension {d} do not match"
            )],
        )?;
        ret_shape.push(select(lw, on_axis, total, first)?);
    }
    let out = allocate(lw, ret, &ret_shape)?;
    let out_strides = strides_of(lw, ret, out)?;
    let axis_stride = pick(lw, &out_strides, axis)?;
    let view_t = any_layout(dtype_of(ret), nd);
    // Each input goes into the part of the result that starts where the previous ended.
    let mut data = data_ptr(lw, out)?;
    for (k, &item) in items.iter().enumerate() {
        let dst = view_with(lw, out, data, &shapes[k], &out_strides)?;
        copy_into(lw, item, (view_t, dst))?;
        let len = pick(lw, &shapes[k], axis)?;
        let bytes = mul(lw, len, axis_stride)?;
        data = byte_offset(lw, data, bytes)?;
    }
    Ok(out)
}

/// Join same-shaped `items` along a new axis `axis` (normalized against `ndim(ret)`).
fn stack_along<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    items: &[Arr<'ctx>],
    axis: IntValue<'ctx>,
    ret: TypeId,
) -> R<StructValue<'ctx>> {
    let first = shape_of(lw, items[0].0, items[0].1)?;
    let mut differ = lw.ctx.bool_type().const_zero();
    for &(t, v) in &items[1..] {
        for (d, &x) in shape_of(lw, t, v)?.iter().enumerate() {
            let ne = icmp(lw, IntPredicate::NE, x, first[d])?;
            differ = or(lw, differ, ne)?;
        }
    }
    lw.raise_const_if(
        differ,
        "ValueError",
        &["np.stack(): all input arrays must have the same shape"],
    )?;
    let mut expanded = Vec::with_capacity(items.len());
    for &(t, v) in items {
        let shape = shape_of(lw, t, v)?;
        let strides = strides_of(lw, t, v)?;
        let (sh, st) = insert_axis(lw, &shape, &strides, axis)?;
        let data = data_ptr(lw, v)?;
        let view = view_with(lw, v, data, &sh, &st)?;
        expanded.push((any_layout(dtype_of(t), ndim(t) + 1), view));
    }
    join(lw, &expanded, axis, ret)
}

fn concatenate<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let items = tuple_arrays(lw, sig.args[0], a[0])?;
    let axis = int_arg(lw, sig, a, 1, 0)?;
    let axis = normalize_axis(lw, axis, ndim(sig.ret), "np.concatenate")?;
    Ok(join(lw, &items, axis, sig.ret)?.into())
}

fn stack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let items = tuple_arrays(lw, sig.args[0], a[0])?;
    let axis = int_arg(lw, sig, a, 1, 0)?;
    let axis = normalize_axis(lw, axis, ndim(sig.ret), "np.stack")?;
    Ok(stack_along(lw, &items, axis, sig.ret)?.into())
}

/// 0-d arrays seen as 1-d arrays of one element (NumPy's `atleast_1d`, which the stacking
/// functions apply first); views, so nothing is allocated.
fn at_least_1d<'ctx>(lw: &mut FnLower<'ctx, '_>, items: Vec<Arr<'ctx>>) -> R<Vec<Arr<'ctx>>> {
    items
        .into_iter()
        .map(|(t, v)| {
            if ndim(t) > 0 {
                return Ok((t, v));
            }
            let one = int_const(lw, 1);
            let size = get_int(lw, v, field::ITEMSIZE)?;
            let data = data_ptr(lw, v)?;
            let view = view_with(lw, v, data, &[one], &[size])?;
            Ok((any_layout(dtype_of(t), 1), view))
        })
        .collect()
}

/// `np.hstack`: 1-d arrays join end to end, others along their second axis.
fn hstack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let items = tuple_arrays(lw, sig.args[0], a[0])?;
    let items = at_least_1d(lw, items)?;
    let axis = int_const(lw, i64::from(ndim(items[0].0) > 1));
    Ok(join(lw, &items, axis, sig.ret)?.into())
}

/// `np.vstack`: 1-d arrays become the rows of a 2-d array; others join along axis 0.
fn vstack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let items = tuple_arrays(lw, sig.args[0], a[0])?;
    let items = at_least_1d(lw, items)?;
    let axis = int_const(lw, 0);
    Ok(if ndim(items[0].0) == 1 {
        stack_along(lw, &items, axis, sig.ret)?
    } else {
        join(lw, &items, axis, sig.ret)?
    }
    .into())
}

/// `np.dstack`: join along the third axis, 1-d arrays as `(1, n, 1)` and 2-d ones as
/// `(r, c, 1)`.
fn dstack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let items = tuple_arrays(lw, sig.args[0], a[0])?;
    let items = at_least_1d(lw, items)?;
    let nd = ndim(items[0].0);
    if nd == 1 {
        // Stacked as columns `(n, k)`, then seen as `(1, n, k)` (the view takes over the
        // new array's reference).
        let Type::Array { dtype, layout, .. } = sig.ret.get() else {
            return Err(lw.unsupported("np.dstack of non-arrays"));
        };
        let cols_t = array(dtype, 2, layout);
        let one = int_const(lw, 1);
        let cols = stack_along(lw, &items, one, cols_t)?;
        let shape = shape_of(lw, cols_t, cols)?;
        let strides = strides_of(lw, cols_t, cols)?;
        let (sh, st) = insert_axis(lw, &shape, &strides, int_const(lw, 0))?;
        let data = data_ptr(lw, cols)?;
        return Ok(view_with(lw, cols, data, &sh, &st)?.into());
    }
    let axis = int_const(lw, 2);
    Ok(if nd == 2 {
        stack_along(lw, &items, axis, sig.ret)?
    } else {
        join(lw, &items, axis, sig.ret)?
    }
    .into())
}

/// `np.column_stack`: 1-d arrays as columns `(n, 1)`, 2-d arrays as they are, joined
/// along axis 1.
fn column_stack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let items = tuple_arrays(lw, sig.args[0], a[0])?;
    let one = int_const(lw, 1);
    let mut cols = Vec::with_capacity(items.len());
    for (t, v) in items {
        if ndim(t) == 2 {
            cols.push((t, v));
            continue;
        }
        let n = dim(lw, v, field::SHAPE, 0)?;
        let s = dim(lw, v, field::STRIDES, 0)?;
        let data = data_ptr(lw, v)?;
        let view = view_with(lw, v, data, &[n, one], &[s, int_const(lw, 0)])?;
        cols.push((any_layout(dtype_of(t), 2), view));
    }
    Ok(join(lw, &cols, one, sig.ret)?.into())
}

// ---------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------

/// `np.expand_dims(a, axis)`: a view with a new axis of length 1.
fn expand_dims<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let axis = int_arg(lw, sig, a, 1, 0)?;
    let axis = normalize_axis(lw, axis, ndim(sig.ret), "np.expand_dims")?;
    let shape = shape_of(lw, t, arr)?;
    let strides = strides_of(lw, t, arr)?;
    let (sh, st) = insert_axis(lw, &shape, &strides, axis)?;
    let data = data_ptr(lw, arr)?;
    let out = view_with(lw, arr, data, &sh, &st)?;
    lw.incref(sig.ret, out.into())?;
    Ok(out.into())
}

/// `np.flip` (every axis), `np.fliplr` (axis 1), `np.flipud` (axis 0): views that walk
/// those axes backwards.
fn flip<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let nd = ndim(t) as usize;
    let axes: Vec<usize> = match key_name(sig) {
        "fliplr" => vec![1],
        "flipud" => vec![0],
        _ => (0..nd).collect(),
    };
    let shape = shape_of(lw, t, arr)?;
    let mut strides = strides_of(lw, t, arr)?;
    let zero = int_const(lw, 0);
    let mut off = zero;
    for d in axes {
        // The last element along the axis becomes the first (none for an empty axis).
        let nonempty = icmp(lw, IntPredicate::SGT, shape[d], zero)?;
        let last = sub(lw, shape[d], int_const(lw, 1))?;
        let bytes = mul(lw, last, strides[d])?;
        let bytes = select(lw, nonempty, bytes, zero)?;
        off = add(lw, off, bytes)?;
        strides[d] = lw.b.build_int_neg(strides[d], "").map_err(llvm_err)?;
    }
    let data = data_ptr(lw, arr)?;
    let data = byte_offset(lw, data, off)?;
    let out = view_with(lw, arr, data, &shape, &strides)?;
    lw.incref(sig.ret, out.into())?;
    Ok(out.into())
}

/// `np.transpose(a, axes)`: a view with the axes permuted.
fn permute<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let nd = ndim(t);
    let n = int_const(lw, i64::from(nd));
    let zero = int_const(lw, 0);
    let items = tuple_items(sig.args[1]).ok_or_else(|| lw.unsupported("transpose axes"))?;
    let tup = a[1].into_struct_value();
    let mut axes = Vec::with_capacity(items.len());
    let mut out_of_bounds = lw.ctx.bool_type().const_zero();
    for (k, it) in items.into_iter().enumerate() {
        let x =
            lw.b.build_extract_value(tup, k as u32, "")
                .map_err(llvm_err)?;
        let x = lw.cast(x, it, INT64)?.into_int_value();
        let neg = icmp(lw, IntPredicate::SLT, x, zero)?;
        let wrapped = add(lw, x, n)?;
        let x = select(lw, neg, wrapped, x)?;
        let bad = icmp(lw, IntPredicate::UGE, x, n)?;
        out_of_bounds = or(lw, out_of_bounds, bad)?;
        axes.push(x);
    }
    lw.raise_const_if(
        out_of_bounds,
        "ValueError",
        &["axis is out of bounds for array of given dimension"],
    )?;
    let mut repeated = lw.ctx.bool_type().const_zero();
    for i in 0..axes.len() {
        for j in i + 1..axes.len() {
            let same = icmp(lw, IntPredicate::EQ, axes[i], axes[j])?;
            repeated = or(lw, repeated, same)?;
        }
    }
    lw.raise_const_if(repeated, "ValueError", &["repeated axis in transpose"])?;
    let shape = shape_of(lw, t, arr)?;
    let strides = strides_of(lw, t, arr)?;
    let mut sh = Vec::with_capacity(axes.len());
    let mut st = Vec::with_capacity(axes.len());
    for &x in &axes {
        sh.push(pick(lw, &shape, x)?);
        st.push(pick(lw, &strides, x)?);
    }
    let data = data_ptr(lw, arr)?;
    let out = view_with(lw, arr, data, &sh, &st)?;
    lw.incref(sig.ret, out.into())?;
    Ok(out.into())
}

/// `as_strided(x, shape, strides)`: `x`'s data pointer under the given dimensions (a new
/// reference to `x`'s memory). A `None` shape or strides is `x`'s own.
fn as_strided<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let own_shape = shape_of(lw, t, arr)?;
    let own_strides = strides_of(lw, t, arr)?;
    let mut dims = |k: usize, own: Vec<IntValue<'ctx>>| -> R<Vec<IntValue<'ctx>>> {
        let Some(items) = tuple_items(sig.args[k]) else {
            return Ok(own);
        };
        let tup = a[k].into_struct_value();
        let mut out = Vec::with_capacity(items.len());
        for (i, it) in items.into_iter().enumerate() {
            let x =
                lw.b.build_extract_value(tup, i as u32, "")
                    .map_err(llvm_err)?;
            out.push(lw.cast(x, it, INT64)?.into_int_value());
        }
        Ok(out)
    };
    let shape = dims(1, own_shape)?;
    let strides = dims(2, own_strides)?;
    let data = data_ptr(lw, arr)?;
    let out = view_with(lw, arr, data, &shape, &strides)?;
    lw.incref(sig.ret, out.into())?;
    Ok(out.into())
}

/// `np.asarray(a)`: the array itself (a new reference), or a converted copy when a
/// different `dtype` is asked for.
fn asarray<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    if dtype_of(sig.ret) == dtype_of(sig.args[0]) {
        lw.incref(sig.ret, a[0])?;
        return Ok(a[0]);
    }
    let mut one = sig.clone();
    one.args.truncate(1);
    copy(lw, &one, &a[..1])
}

// ---------------------------------------------------------------------------
// New arrays
// ---------------------------------------------------------------------------

/// `np.roll(a, shift)`: the elements in C order moved `shift` places along, wrapping
/// around; the result has `a`'s shape.
fn roll<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let shift = int_arg(lw, sig, a, 1, 0)?;
    let shape = shape_of(lw, t, arr)?;
    let out = allocate(lw, sig.ret, &shape)?;
    let n = get_int(lw, out, field::NITEMS)?;
    // shift mod n, in [0, n) (n = 0 moves nothing).
    let zero = int_const(lw, 0);
    let empty = icmp(lw, IntPredicate::EQ, n, zero)?;
    let m = select(lw, empty, int_const(lw, 1), n)?;
    let r = lw.b.build_int_signed_rem(shift, m, "").map_err(llvm_err)?;
    let neg = icmp(lw, IntPredicate::SLT, r, zero)?;
    let up = add(lw, r, m)?;
    let r = select(lw, neg, up, r)?;
    let dtype = dtype_of(t);
    // Elements [0, n - r) move up by r; the last r wrap around to the front.
    let kept = sub(lw, n, r)?;
    for (count, from, to) in [(kept, zero, r), (r, kept, zero)] {
        let (lp, i) = Loop::begin(lw, count)?;
        let src = add(lw, i, from)?;
        let p = flat_ptr(lw, t, arr, src)?;
        let x = load_elem(lw, dtype, p)?;
        let dst = add(lw, i, to)?;
        let q = flat_ptr(lw, sig.ret, out, dst)?;
        store_elem(lw, dtype, q, x)?;
        lp.end(lw)?;
    }
    Ok(out.into())
}

/// `later - earlier` in `dtype`, as Numba's `np.diff` stores it (wrapping for integers;
/// for bools, whether they differ).
fn difference<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dtype: TypeId,
    later: BasicValueEnum<'ctx>,
    earlier: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    if dtype == BOOLEAN {
        return Ok(lw
            .b
            .build_xor(later.into_int_value(), earlier.into_int_value(), "")
            .map_err(llvm_err)?
            .into());
    }
    let (d, dt) = apply_binop(lw, BinOp::Sub, (later, dtype), (earlier, dtype))?;
    lw.cast(d, dt, dtype)
}

/// `np.diff(a, n=1)`: the n-th differences along the last axis.
fn diff<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let dtype = dtype_of(t);
    let order = int_arg(lw, sig, a, 1, 1)?;
    let zero = int_const(lw, 0);
    let one = int_const(lw, 1);
    let negative = icmp(lw, IntPredicate::SLT, order, zero)?;
    lw.raise_const_if(
        negative,
        "ValueError",
        &["diff(): order must be non-negative"],
    )?;
    let nd = ndim(t) as usize;
    let shape = shape_of(lw, t, arr)?;
    let strides = strides_of(lw, t, arr)?;
    let size = shape[nd - 1];
    let left = sub(lw, size, order)?;
    let some = icmp(lw, IntPredicate::SGT, left, zero)?;
    let out_len = select(lw, some, left, zero)?;
    let mut out_shape = shape[..nd - 1].to_vec();
    out_shape.push(out_len);
    let out = allocate(lw, sig.ret, &out_shape)?;
    let total = get_int(lw, out, field::NITEMS)?;

    let as_copy = lw.new_block("diff.copy");
    let check = lw.new_block("diff.check");
    let work_bb = lw.new_block("diff.work");
    let done = lw.new_block("diff.done");
    let is_zero = icmp(lw, IntPredicate::EQ, order, zero)?;
    lw.b.build_conditional_branch(is_zero, as_copy, check)
        .map_err(llvm_err)?;

    // n == 0: a copy.
    lw.b.position_at_end(as_copy);
    copy_into(lw, (t, arr), (sig.ret, out))?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;

    lw.b.position_at_end(check);
    let nonempty = icmp(lw, IntPredicate::SGT, total, zero)?;
    lw.b.build_conditional_branch(nonempty, work_bb, done)
        .map_err(llvm_err)?;

    // Each run along the last axis is differenced in a scratch row, n times over.
    lw.b.position_at_end(work_bb);
    let work_t = array(dtype, 1, Layout::C);
    let work = allocate(lw, work_t, &[size])?;
    let runs = product(lw, &shape[..nd - 1])?;
    // Run r starts at element r of the leading axes.
    let lead = if nd > 1 {
        Some(rebuild(lw, arr, &shape[..nd - 1], &strides[..nd - 1])?)
    } else {
        None
    };
    let step = strides[nd - 1];
    let (runs_loop, r) = Loop::begin(lw, runs)?;
    let base = match lead {
        Some(lead) => flat_ptr(lw, any_layout(dtype, nd as u32 - 1), lead, r)?,
        None => data_ptr(lw, arr)?,
    };
    let size_m1 = sub(lw, size, one)?;
    let (first, i) = Loop::begin(lw, size_m1)?;
    let off = mul(lw, i, step)?;
    let p0 = byte_offset(lw, base, off)?;
    let p1 = byte_offset(lw, p0, step)?;
    let x0 = load_elem(lw, dtype, p0)?;
    let x1 = load_elem(lw, dtype, p1)?;
    let d = difference(lw, dtype, x1, x0)?;
    let w = flat_ptr(lw, work_t, work, i)?;
    store_elem(lw, dtype, w, d)?;
    first.end(lw)?;
    let more = sub(lw, order, one)?;
    let (again, k) = Loop::begin(lw, more)?;
    // Pass k + 1 leaves size - k - 2 differences to take.
    let len = sub(lw, size_m1, k)?;
    let len = sub(lw, len, one)?;
    let (inner, i) = Loop::begin(lw, len)?;
    let w0 = flat_ptr(lw, work_t, work, i)?;
    let i1 = add(lw, i, one)?;
    let w1 = flat_ptr(lw, work_t, work, i1)?;
    let x0 = load_elem(lw, dtype, w0)?;
    let x1 = load_elem(lw, dtype, w1)?;
    let d = difference(lw, dtype, x1, x0)?;
    store_elem(lw, dtype, w0, d)?;
    inner.end(lw)?;
    again.end(lw)?;
    let row = mul(lw, r, out_len)?;
    let (out_loop, i) = Loop::begin(lw, out_len)?;
    let w = flat_ptr(lw, work_t, work, i)?;
    let x = load_elem(lw, dtype, w)?;
    let at = add(lw, row, i)?;
    let q = flat_ptr(lw, sig.ret, out, at)?;
    store_elem(lw, dtype, q, x)?;
    out_loop.end(lw)?;
    runs_loop.end(lw)?;
    lw.decref(work_t, work.into())?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;

    lw.b.position_at_end(done);
    Ok(out.into())
}

/// Whether two sorted neighbours differ (NaNs all count as one value, as in NumPy).
fn distinct<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dtype: TypeId,
    x: BasicValueEnum<'ctx>,
    prev: BasicValueEnum<'ctx>,
) -> R<IntValue<'ctx>> {
    if dtype.is_float() {
        let (x, prev) = (x.into_float_value(), prev.into_float_value());
        let ne = fcmp(lw, FloatPredicate::UNE, x, prev)?;
        let x_nan = fcmp(lw, FloatPredicate::UNO, x, x)?;
        let prev_nan = fcmp(lw, FloatPredicate::UNO, prev, prev)?;
        let both = and(lw, x_nan, prev_nan)?;
        let not_both = not(lw, both)?;
        return and(lw, ne, not_both);
    }
    let (ne, _) = apply_binop(lw, BinOp::Ne, (x, dtype), (prev, dtype))?;
    Ok(ne.into_int_value())
}

/// `np.unique(a)`: the sorted distinct elements, as a 1-d array.
fn unique<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let dtype = dtype_of(t);
    let code = super::sorting::kind_code(dtype)
        .ok_or_else(|| lw.unsupported("np.unique of this dtype"))?;
    let n = get_int(lw, arr, field::NITEMS)?;
    let sorted_t = array(dtype, 1, Layout::C);
    let sorted = allocate(lw, sorted_t, &[n])?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let q = flat_ptr(lw, sorted_t, sorted, i)?;
    store_elem(lw, dtype, q, x)?;
    lp.end(lw)?;
    let i64t = lw.ctx.i64_type();
    let i32t = lw.ctx.i32_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let sort = lw.runtime_fn(
        "numba_rs_sort",
        lw.ctx
            .void_type()
            .fn_type(&[ptr.into(), i64t.into(), i64t.into(), i32t.into()], false),
    );
    let data = data_ptr(lw, sorted)?;
    let size = get_int(lw, sorted, field::ITEMSIZE)?;
    lw.b.build_call(
        sort,
        &[
            data.into(),
            n.into(),
            size.into(),
            i32t.const_int(code as u64, false).into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    let zero = int_const(lw, 0);
    let one = int_const(lw, 1);
    let nonempty = icmp(lw, IntPredicate::SGT, n, zero)?;
    let rest = sub(lw, n, one)?;
    let neighbours = |lw: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>| {
        let p = flat_ptr(lw, sorted_t, sorted, i)?;
        let prev = load_elem(lw, dtype, p)?;
        let i1 = add(lw, i, one)?;
        let q = flat_ptr(lw, sorted_t, sorted, i1)?;
        let x = load_elem(lw, dtype, q)?;
        let new = distinct(lw, dtype, x, prev)?;
        Ok::<_, crate::LowerError>((x, new))
    };
    // Count, allocate, then copy each first occurrence.
    let count_slot = lw.alloca_in_entry(i64t.into(), "unique.count")?;
    let start = select(lw, nonempty, one, zero)?;
    lw.b.build_store(count_slot, start).map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, rest)?;
    let (_, new) = neighbours(lw, i)?;
    let c = lw.b.build_load(i64t, count_slot, "").map_err(llvm_err)?;
    let c = c.into_int_value();
    let bump = lw.b.build_int_z_extend(new, i64t, "").map_err(llvm_err)?;
    let c = add(lw, c, bump)?;
    lw.b.build_store(count_slot, c).map_err(llvm_err)?;
    lp.end(lw)?;
    let count =
        lw.b.build_load(i64t, count_slot, "")
            .map_err(llvm_err)?
            .into_int_value();
    let out = allocate(lw, sig.ret, &[count])?;
    let fill = lw.new_block("unique.fill");
    let done = lw.new_block("unique.done");
    lw.b.build_conditional_branch(nonempty, fill, done)
        .map_err(llvm_err)?;
    lw.b.position_at_end(fill);
    let p = flat_ptr(lw, sorted_t, sorted, zero)?;
    let x = load_elem(lw, dtype, p)?;
    let q = flat_ptr(lw, sig.ret, out, zero)?;
    store_elem(lw, dtype, q, x)?;
    lw.b.build_store(count_slot, one).map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, rest)?;
    let (x, new) = neighbours(lw, i)?;
    let put = lw.new_block("unique.put");
    let next = lw.new_block("unique.next");
    lw.b.build_conditional_branch(new, put, next)
        .map_err(llvm_err)?;
    lw.b.position_at_end(put);
    let j =
        lw.b.build_load(i64t, count_slot, "")
            .map_err(llvm_err)?
            .into_int_value();
    let q = flat_ptr(lw, sig.ret, out, j)?;
    store_elem(lw, dtype, q, x)?;
    let j1 = add(lw, j, one)?;
    lw.b.build_store(count_slot, j1).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(next).map_err(llvm_err)?;
    lw.b.position_at_end(next);
    lp.end(lw)?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    lw.decref(sorted_t, sorted.into())?;
    Ok(out.into())
}

/// `np.diag(v, k=0)`: a 2-d array with `v` on its k-th diagonal, or the k-th diagonal of
/// a 2-d `v` as a new 1-d array.
fn diag<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let dtype = dtype_of(t);
    let k = int_arg(lw, sig, a, 1, 0)?;
    let zero = int_const(lw, 0);
    let k_neg = icmp(lw, IntPredicate::SLT, k, zero)?;
    let minus_k = lw.b.build_int_neg(k, "").map_err(llvm_err)?;
    let above = select(lw, k_neg, zero, k)?;
    let below = select(lw, k_neg, minus_k, zero)?;
    if ndim(t) == 1 {
        let len = dim(lw, arr, field::SHAPE, 0)?;
        let abs_k = add(lw, above, below)?;
        let n = add(lw, len, abs_k)?;
        let out = allocate(lw, sig.ret, &[n, n])?;
        zero_fill(lw, out)?;
        let (lp, i) = Loop::begin(lw, len)?;
        let p = at_1d(lw, arr, i)?;
        let x = load_elem(lw, dtype, p)?;
        let row = add(lw, i, below)?;
        let col = add(lw, i, above)?;
        let at = mul(lw, row, n)?;
        let at = add(lw, at, col)?;
        let q = flat_ptr(lw, sig.ret, out, at)?;
        store_elem(lw, dtype, q, x)?;
        lp.end(lw)?;
        return Ok(out.into());
    }
    let shape = shape_of(lw, t, arr)?;
    let strides = strides_of(lw, t, arr)?;
    let rows = sub(lw, shape[0], below)?;
    let cols = sub(lw, shape[1], above)?;
    let fewer = icmp(lw, IntPredicate::SLT, rows, cols)?;
    let m = select(lw, fewer, rows, cols)?;
    let positive = icmp(lw, IntPredicate::SGT, m, zero)?;
    let m = select(lw, positive, m, zero)?;
    let out = allocate(lw, sig.ret, &[m])?;
    let data = data_ptr(lw, arr)?;
    let (lp, i) = Loop::begin(lw, m)?;
    let r = add(lw, i, below)?;
    let c = add(lw, i, above)?;
    let off_r = mul(lw, r, strides[0])?;
    let off_c = mul(lw, c, strides[1])?;
    let off = add(lw, off_r, off_c)?;
    let p = byte_offset(lw, data, off)?;
    let x = load_elem(lw, dtype, p)?;
    let q = flat_ptr(lw, sig.ret, out, i)?;
    store_elem(lw, dtype, q, x)?;
    lp.end(lw)?;
    Ok(out.into())
}

// ---------------------------------------------------------------------------
// Counting
// ---------------------------------------------------------------------------

/// `np.bincount(a, weights=None, minlength=0)`: how often each value occurs in the 1-d
/// non-negative integer array `a` (or the sum of the weights at its positions).
fn bincount<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, arr) = (sig.args[0], a[0].into_struct_value());
    let dtype = dtype_of(t);
    let weights = match (sig.args.get(1), a.get(1)) {
        (Some(&wt), Some(w)) if wt.is_array() => Some((wt, w.into_struct_value())),
        _ => None,
    };
    let minlength = int_arg(lw, sig, a, 2, 0)?;
    let n = dim(lw, arr, field::SHAPE, 0)?;
    let zero = int_const(lw, 0);
    if let Some((_, w)) = weights {
        let wn = dim(lw, w, field::SHAPE, 0)?;
        let differ = icmp(lw, IntPredicate::NE, n, wn)?;
        lw.raise_const_if(
            differ,
            "ValueError",
            &["bincount(): weights and list don't have the same length"],
        )?;
    }
    let negative = icmp(lw, IntPredicate::SLT, minlength, zero)?;
    lw.raise_const_if(
        negative,
        "ValueError",
        &["'minlength' must not be negative"],
    )?;
    let i64t = lw.ctx.i64_type();
    let max_slot = lw.alloca_in_entry(i64t.into(), "bincount.max")?;
    lw.b.build_store(max_slot, int_const(lw, -1))
        .map_err(llvm_err)?;
    let value = |lw: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>| -> R<IntValue<'ctx>> {
        let p = at_1d(lw, arr, i)?;
        let x = load_elem(lw, dtype, p)?;
        Ok(lw.cast(x, dtype, INT64)?.into_int_value())
    };
    let (lp, i) = Loop::begin(lw, n)?;
    let x = value(lw, i)?;
    let neg = icmp(lw, IntPredicate::SLT, x, zero)?;
    lw.raise_const_if(
        neg,
        "ValueError",
        &["bincount(): first argument must be non-negative"],
    )?;
    let m =
        lw.b.build_load(i64t, max_slot, "")
            .map_err(llvm_err)?
            .into_int_value();
    let bigger = icmp(lw, IntPredicate::SGT, x, m)?;
    let m = select(lw, bigger, x, m)?;
    lw.b.build_store(max_slot, m).map_err(llvm_err)?;
    lp.end(lw)?;
    let m =
        lw.b.build_load(i64t, max_slot, "")
            .map_err(llvm_err)?
            .into_int_value();
    let len = add(lw, m, int_const(lw, 1))?;
    let longer = icmp(lw, IntPredicate::SGT, minlength, len)?;
    let len = select(lw, longer, minlength, len)?;
    let out = allocate(lw, sig.ret, &[len])?;
    zero_fill(lw, out)?;
    let out_t = dtype_of(sig.ret);
    let (lp, i) = Loop::begin(lw, n)?;
    let x = value(lw, i)?;
    let q = flat_ptr(lw, sig.ret, out, x)?;
    let cur = load_elem(lw, out_t, q)?;
    let next: BasicValueEnum = match weights {
        Some((wt, w)) => {
            let p = at_1d(lw, w, i)?;
            let wx = load_elem(lw, dtype_of(wt), p)?;
            let wx = lw.cast(wx, dtype_of(wt), FLOAT64)?.into_float_value();
            lw.b.build_float_add(cur.into_float_value(), wx, "")
                .map_err(llvm_err)?
                .into()
        }
        None => add(lw, cur.into_int_value(), int_const(lw, 1))?.into(),
    };
    store_elem(lw, out_t, q, next)?;
    lp.end(lw)?;
    Ok(out.into())
}

/// Every element of `arr` as a float64, C order: `f(lw, i, value)`.
fn for_each_value<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    (t, arr): Arr<'ctx>,
    f: &mut dyn FnMut(&mut FnLower<'ctx, 'a>, FloatValue<'ctx>) -> R<()>,
) -> R<()> {
    let dtype = dtype_of(t);
    let n = get_int(lw, arr, field::NITEMS)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let v = lw.cast(x, dtype, FLOAT64)?.into_float_value();
    f(lw, v)?;
    lp.end(lw)
}

/// `hist[i] += 1`.
fn bump<'ctx>(lw: &mut FnLower<'ctx, '_>, hist: StructValue<'ctx>, i: IntValue<'ctx>) -> R<()> {
    let hist_t = array(INTP, 1, Layout::C);
    let q = flat_ptr(lw, hist_t, hist, i)?;
    let c = load_elem(lw, INTP, q)?.into_int_value();
    let c = add(lw, c, int_const(lw, 1))?;
    store_elem(lw, INTP, q, c.into())
}

/// `np.histogram(a, bins=10, range=None)`: `(hist, bin_edges)`. With a number of bins, the
/// edges are evenly spaced over the range (the data's when `range` is None) and each value
/// finds its bin as NumPy's does (an estimate corrected against the edges); with an array
/// of edges, by bisection, and the edges are returned as they are.
fn histogram<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let values = (sig.args[0], a[0].into_struct_value());
    let hist_t = array(INTP, 1, Layout::C);
    if let (Some(&bins_t), Some(bins)) = (sig.args.get(1), a.get(1)) {
        if bins_t.is_array() {
            return histogram_edges(lw, sig, values, (bins_t, bins.into_struct_value()));
        }
    }
    let f64t = lw.ctx.f64_type();
    let zero = int_const(lw, 0);
    let nbins = int_arg(lw, sig, a, 1, 10)?;
    let no_bins = icmp(lw, IntPredicate::SLE, nbins, zero)?;
    lw.raise_const_if(
        no_bins,
        "ValueError",
        &["histogram(): `bins` should be a positive integer"],
    )?;
    let range = match (sig.args.get(2), a.get(2)) {
        (Some(&rt), Some(r)) if rt != NONE => Some((rt, r.into_struct_value())),
        _ => None,
    };
    let (first, last) = match range {
        Some((rt, r)) => {
            let items = tuple_items(rt).ok_or_else(|| lw.unsupported("histogram range"))?;
            let mut ends = Vec::new();
            for (k, it) in items.into_iter().enumerate() {
                let x =
                    lw.b.build_extract_value(r, k as u32, "")
                        .map_err(llvm_err)?;
                ends.push(lw.cast(x, it, FLOAT64)?.into_float_value());
            }
            let ordered = fcmp(lw, FloatPredicate::OLE, ends[0], ends[1])?;
            let bad = not(lw, ordered)?;
            lw.raise_const_if(
                bad,
                "ValueError",
                &["histogram(): max must be larger than min in range parameter"],
            )?;
            (ends[0], ends[1])
        }
        None => {
            // The data's range (0..1 when there is none), which must be finite.
            // Two running (min, max) pairs over the even and odd elements: one pair's
            // compare-and-select chain would bound the loop by its latency.
            let bool_t = lw.ctx.bool_type();
            let slots: Vec<_> = (0..4)
                .map(|k| {
                    lw.alloca_in_entry(
                        f64t.into(),
                        if k % 2 == 0 { "hist.min" } else { "hist.max" },
                    )
                })
                .collect::<R<_>>()?;
            let nan_slot = lw.alloca_in_entry(bool_t.into(), "hist.nan")?;
            for (k, &slot) in slots.iter().enumerate() {
                let init = if k % 2 == 0 {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                };
                lw.b.build_store(slot, f64t.const_float(init))
                    .map_err(llvm_err)?;
            }
            lw.b.build_store(nan_slot, bool_t.const_zero())
                .map_err(llvm_err)?;
            let (vt, varr) = values;
            let dtype = dtype_of(vt);
            let n = get_int(lw, varr, field::NITEMS)?;
            let value_at = |lw: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>| -> R<FloatValue<'ctx>> {
                let p = flat_ptr(lw, vt, varr, i)?;
                let x = load_elem(lw, dtype, p)?;
                Ok(lw.cast(x, dtype, FLOAT64)?.into_float_value())
            };
            let update = |lw: &mut FnLower<'ctx, '_>, pair: usize, v: FloatValue<'ctx>| -> R<()> {
                let (lo_slot, hi_slot) = (slots[2 * pair], slots[2 * pair + 1]);
                let lo = lw.b.build_load(f64t, lo_slot, "").map_err(llvm_err)?;
                let hi = lw.b.build_load(f64t, hi_slot, "").map_err(llvm_err)?;
                let (lo, hi) = (lo.into_float_value(), hi.into_float_value());
                let less = fcmp(lw, FloatPredicate::OLT, v, lo)?;
                let more = fcmp(lw, FloatPredicate::OGT, v, hi)?;
                let lo = fselect(lw, less, v, lo)?;
                let hi = fselect(lw, more, v, hi)?;
                lw.b.build_store(lo_slot, lo).map_err(llvm_err)?;
                lw.b.build_store(hi_slot, hi).map_err(llvm_err)?;
                let nan = fcmp(lw, FloatPredicate::UNO, v, v)?;
                let seen =
                    lw.b.build_load(bool_t, nan_slot, "")
                        .map_err(llvm_err)?
                        .into_int_value();
                let seen = or(lw, seen, nan)?;
                lw.b.build_store(nan_slot, seen).map_err(llvm_err)?;
                Ok(())
            };
            let half =
                lw.b.build_int_unsigned_div(n, int_const(lw, 2), "")
                    .map_err(llvm_err)?;
            let (lp, k) = Loop::begin(lw, half)?;
            let i0 =
                lw.b.build_int_mul(k, int_const(lw, 2), "")
                    .map_err(llvm_err)?;
            let i1 = add(lw, i0, int_const(lw, 1))?;
            let v0 = value_at(lw, i0)?;
            let v1 = value_at(lw, i1)?;
            update(lw, 0, v0)?;
            update(lw, 1, v1)?;
            lp.end(lw)?;
            // An odd count leaves the last element.
            let odd =
                lw.b.build_int_unsigned_rem(n, int_const(lw, 2), "")
                    .map_err(llvm_err)?;
            let (tail, _) = Loop::begin(lw, odd)?;
            let last_i = sub(lw, n, int_const(lw, 1))?;
            let v = value_at(lw, last_i)?;
            update(lw, 0, v)?;
            tail.end(lw)?;
            for (a, b) in [(0, 2), (1, 3)] {
                let x =
                    lw.b.build_load(f64t, slots[a], "")
                        .map_err(llvm_err)?
                        .into_float_value();
                let y =
                    lw.b.build_load(f64t, slots[b], "")
                        .map_err(llvm_err)?
                        .into_float_value();
                let pred = if a == 0 {
                    FloatPredicate::OLT
                } else {
                    FloatPredicate::OGT
                };
                let take = fcmp(lw, pred, y, x)?;
                let r = fselect(lw, take, y, x)?;
                lw.b.build_store(slots[a], r).map_err(llvm_err)?;
            }
            let (lo_slot, hi_slot) = (slots[0], slots[1]);
            let n = get_int(lw, values.1, field::NITEMS)?;
            let empty = icmp(lw, IntPredicate::EQ, n, zero)?;
            let lo = lw.b.build_load(f64t, lo_slot, "").map_err(llvm_err)?;
            let hi = lw.b.build_load(f64t, hi_slot, "").map_err(llvm_err)?;
            let lo = fselect(lw, empty, f64t.const_zero(), lo.into_float_value())?;
            let hi = fselect(lw, empty, f64t.const_float(1.0), hi.into_float_value())?;
            let finite = |lw: &FnLower<'ctx, '_>, x: FloatValue<'ctx>| {
                let d = lw.b.build_float_sub(x, x, "").map_err(llvm_err)?;
                fcmp(lw, FloatPredicate::OEQ, d, f64t.const_zero())
            };
            let ok_lo = finite(lw, lo)?;
            let ok_hi = finite(lw, hi)?;
            let ok = and(lw, ok_lo, ok_hi)?;
            let nan =
                lw.b.build_load(lw.ctx.bool_type(), nan_slot, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let no_nan = not(lw, nan)?;
            let ok = and(lw, ok, no_nan)?;
            let bad = not(lw, ok)?;
            lw.raise_const_if(
                bad,
                "ValueError",
                &["histogram(): autodetected range is not finite"],
            )?;
            (lo, hi)
        }
    };
    // An empty range is widened by half on each side, as NumPy does.
    let same = fcmp(lw, FloatPredicate::OEQ, first, last)?;
    let half = f64t.const_float(0.5);
    let wider_lo = lw.b.build_float_sub(first, half, "").map_err(llvm_err)?;
    let wider_hi = lw.b.build_float_add(last, half, "").map_err(llvm_err)?;
    let first = fselect(lw, same, wider_lo, first)?;
    let last = fselect(lw, same, wider_hi, last)?;
    // The edges, as `np.linspace(first, last, bins + 1)` computes them.
    let edges_t = array(FLOAT64, 1, Layout::C);
    let n_edges = add(lw, nbins, int_const(lw, 1))?;
    let edges = allocate(lw, edges_t, &[n_edges])?;
    let nb_f =
        lw.b.build_signed_int_to_float(nbins, f64t, "")
            .map_err(llvm_err)?;
    let span = lw.b.build_float_sub(last, first, "").map_err(llvm_err)?;
    let step = lw.b.build_float_div(span, nb_f, "").map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n_edges)?;
    let fi =
        lw.b.build_signed_int_to_float(i, f64t, "")
            .map_err(llvm_err)?;
    let e = lw.b.build_float_mul(fi, step, "").map_err(llvm_err)?;
    let e = lw.b.build_float_add(e, first, "").map_err(llvm_err)?;
    let is_last = icmp(lw, IntPredicate::EQ, i, nbins)?;
    let e = fselect(lw, is_last, last, e)?;
    let q = flat_ptr(lw, edges_t, edges, i)?;
    store_elem(lw, FLOAT64, q, e.into())?;
    lp.end(lw)?;
    let hist = allocate(lw, hist_t, &[nbins])?;
    zero_fill(lw, hist)?;
    // One multiplication per value (NumPy divides): the estimate is corrected against
    // the edges below either way, so the counts are NumPy's.
    let ratio = lw.b.build_float_div(nb_f, span, "").map_err(llvm_err)?;
    let one = int_const(lw, 1);
    let last_bin = sub(lw, nbins, one)?;
    let edge = |lw: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>| -> R<FloatValue<'ctx>> {
        let p = flat_ptr(lw, edges_t, edges, i)?;
        Ok(load_elem(lw, FLOAT64, p)?.into_float_value())
    };
    let i64t = lw.ctx.i64_type();
    for_each_value(lw, values, &mut |lw, v| {
        // The bin estimate; one branch decides the common case: a bin in range with the
        // value well inside it (floor, not int -> float: that round trip carries a false
        // dependency from one value to the next on x86). Anything else (out of range,
        // NaN, near an edge) takes the slow path, which checks against the edges as
        // NumPy does, so the counts are NumPy's.
        let off = lw.b.build_float_sub(v, first, "").map_err(llvm_err)?;
        let f = lw.b.build_float_mul(off, ratio, "").map_err(llvm_err)?;
        let fl = lw.float_unary("floor", f)?;
        let estimate =
            lw.b.build_float_to_signed_int(fl, i64t, "")
                .map_err(llvm_err)?;
        let frac = lw.b.build_float_sub(f, fl, "").map_err(llvm_err)?;
        let lo_ok = fcmp(lw, FloatPredicate::OGT, frac, f64t.const_float(1e-6))?;
        let hi_ok = fcmp(lw, FloatPredicate::OLT, frac, f64t.const_float(1.0 - 1e-6))?;
        let in_bins = icmp(lw, IntPredicate::ULT, estimate, nbins)?;
        let quick = and(lw, lo_ok, hi_ok)?;
        let quick = and(lw, quick, in_bins)?;
        let quick_bb = lw.new_block("hist.quick");
        let slow_bb = lw.new_block("hist.slow");
        let check_bb = lw.new_block("hist.check");
        let bump_bb = lw.new_block("hist.bump");
        let next = lw.new_block("hist.next");
        lw.b.build_conditional_branch(quick, quick_bb, slow_bb)
            .map_err(llvm_err)?;
        lw.b.position_at_end(quick_bb);
        lw.b.build_unconditional_branch(bump_bb).map_err(llvm_err)?;
        lw.b.position_at_end(slow_bb);
        let in_lo = fcmp(lw, FloatPredicate::OGE, v, first)?;
        let in_hi = fcmp(lw, FloatPredicate::OLE, v, last)?;
        let keep = and(lw, in_lo, in_hi)?;
        lw.b.build_conditional_branch(keep, check_bb, next)
            .map_err(llvm_err)?;
        lw.b.position_at_end(check_bb);
        // In range, so the estimate is within one of the bin (or `nbins` at the end).
        let zero = int_const(lw, 0);
        let neg = icmp(lw, IntPredicate::SLT, estimate, zero)?;
        let idx = select(lw, neg, zero, estimate)?;
        let at_end = icmp(lw, IntPredicate::SGE, idx, nbins)?;
        let idx = select(lw, at_end, last_bin, idx)?;
        let lower = edge(lw, idx)?;
        let below = fcmp(lw, FloatPredicate::OLT, v, lower)?;
        let down = sub(lw, idx, one)?;
        let idx = select(lw, below, down, idx)?;
        let up = add(lw, idx, one)?;
        let upper = edge(lw, up)?;
        let past = fcmp(lw, FloatPredicate::OGE, v, upper)?;
        let not_last = icmp(lw, IntPredicate::NE, idx, last_bin)?;
        let past = and(lw, past, not_last)?;
        let idx = select(lw, past, up, idx)?;
        let check_end =
            lw.b.get_insert_block()
                .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
        lw.b.build_unconditional_branch(bump_bb).map_err(llvm_err)?;
        lw.b.position_at_end(bump_bb);
        let phi = lw.b.build_phi(i64t, "bin").map_err(llvm_err)?;
        phi.add_incoming(&[(&estimate, quick_bb), (&idx, check_end)]);
        bump(lw, hist, phi.as_basic_value().into_int_value())?;
        lw.b.build_unconditional_branch(next).map_err(llvm_err)?;
        lw.b.position_at_end(next);
        Ok(())
    })?;
    lw.make_struct(sig.ret, &[hist.into(), edges.into()])
}

/// `np.histogram(a, bins=edges)`: each value in `[edges[0], edges[-1]]` counted in the
/// last bin whose left edge it reaches (the last bin includes its right edge).
fn histogram_edges<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    values: Arr<'ctx>,
    (bins_t, bins): Arr<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let bins_dtype = dtype_of(bins_t);
    let zero = int_const(lw, 0);
    let one = int_const(lw, 1);
    let edge = |lw: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>| -> R<FloatValue<'ctx>> {
        let p = at_1d(lw, bins, i)?;
        let x = load_elem(lw, bins_dtype, p)?;
        Ok(lw.cast(x, bins_dtype, FLOAT64)?.into_float_value())
    };
    let m = dim(lw, bins, field::SHAPE, 0)?;
    let nbins = sub(lw, m, one)?;
    let some = icmp(lw, IntPredicate::SGT, nbins, zero)?;
    let nbins = select(lw, some, nbins, zero)?;
    // Edges must not decrease (a NaN edge fails too).
    let (lp, i) = Loop::begin(lw, nbins)?;
    let e0 = edge(lw, i)?;
    let i1 = add(lw, i, one)?;
    let e1 = edge(lw, i1)?;
    let ordered = fcmp(lw, FloatPredicate::OLE, e0, e1)?;
    let bad = not(lw, ordered)?;
    lw.raise_const_if(
        bad,
        "ValueError",
        &["histogram(): bins must increase monotonically"],
    )?;
    lp.end(lw)?;
    let hist_t = array(INTP, 1, Layout::C);
    let hist = allocate(lw, hist_t, &[nbins])?;
    zero_fill(lw, hist)?;
    let count = lw.new_block("hist.edges");
    let done = lw.new_block("hist.done");
    lw.b.build_conditional_branch(some, count, done)
        .map_err(llvm_err)?;
    lw.b.position_at_end(count);
    let bin_min = edge(lw, zero)?;
    let bin_max = edge(lw, nbins)?;
    let i64t = lw.ctx.i64_type();
    let lo_slot = lw.alloca_in_entry(i64t.into(), "bisect.lo")?;
    let hi_slot = lw.alloca_in_entry(i64t.into(), "bisect.hi")?;
    let last_bin = sub(lw, nbins, one)?;
    for_each_value(lw, values, &mut |lw, v| {
        let in_lo = fcmp(lw, FloatPredicate::OLE, bin_min, v)?;
        let in_hi = fcmp(lw, FloatPredicate::OLE, v, bin_max)?;
        let keep = and(lw, in_lo, in_hi)?;
        let find = lw.new_block("bisect.start");
        let head = lw.new_block("bisect.head");
        let body = lw.new_block("bisect.body");
        let found = lw.new_block("bisect.found");
        let next = lw.new_block("bisect.next");
        lw.b.build_conditional_branch(keep, find, next)
            .map_err(llvm_err)?;
        lw.b.position_at_end(find);
        lw.b.build_store(lo_slot, zero).map_err(llvm_err)?;
        lw.b.build_store(hi_slot, last_bin).map_err(llvm_err)?;
        lw.b.build_unconditional_branch(head).map_err(llvm_err)?;
        lw.b.position_at_end(head);
        let lo = lw.b.build_load(i64t, lo_slot, "").map_err(llvm_err)?;
        let hi = lw.b.build_load(i64t, hi_slot, "").map_err(llvm_err)?;
        let (lo, hi) = (lo.into_int_value(), hi.into_int_value());
        let more = icmp(lw, IntPredicate::SLT, lo, hi)?;
        lw.b.build_conditional_branch(more, body, found)
            .map_err(llvm_err)?;
        lw.b.position_at_end(body);
        let s = add(lw, lo, hi)?;
        let s = add(lw, s, one)?;
        let mid =
            lw.b.build_right_shift(s, one, false, "")
                .map_err(llvm_err)?;
        let e = edge(lw, mid)?;
        let left = fcmp(lw, FloatPredicate::OLT, v, e)?;
        let below_mid = sub(lw, mid, one)?;
        let hi = select(lw, left, below_mid, hi)?;
        let lo = select(lw, left, lo, mid)?;
        lw.b.build_store(lo_slot, lo).map_err(llvm_err)?;
        lw.b.build_store(hi_slot, hi).map_err(llvm_err)?;
        lw.b.build_unconditional_branch(head).map_err(llvm_err)?;
        lw.b.position_at_end(found);
        let lo = lw.b.build_load(i64t, lo_slot, "").map_err(llvm_err)?;
        bump(lw, hist, lo.into_int_value())?;
        lw.b.build_unconditional_branch(next).map_err(llvm_err)?;
        lw.b.position_at_end(next);
        Ok(())
    })?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    // The edges are returned as they came: the result takes a reference to them.
    lw.incref(bins_t, bins.into())?;
    lw.make_struct(sig.ret, &[hist.into(), bins.into()])
}
