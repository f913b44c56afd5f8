//! `a.flat` and `np.ndenumerate(a)`: the array itself, walked element by element in C
//! order whatever its layout. `a.flat[i]` reads and writes element `i` of that order;
//! iterating `a.flat` yields the elements, `np.ndenumerate(a)` yields `(index, element)`.

use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{dim, dtype_of, flat_ptr, get_int, is_array, load_elem, store_elem};
use super::indexing::checked_index;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn is_flat(t: TypeId) -> bool {
    matches!(t.get(), Type::NumpyFlat(_))
}

fn flat_iter(t: TypeId) -> bool {
    matches!(t.get(), Type::ArrayIter(a) if a.flat_array().is_some())
}

pub(crate) fn register(r: &mut Registry) {
    let flat = || TypePat::Pred(is_flat);
    r.register(
        ImplKey::GetAttr("flat".into()),
        Args::Exact(vec![TypePat::Pred(is_array)]),
        same,
    );
    for key in ["numpy.ndindex", "numba_rs.pndindex", "numba.pndindex"] {
        r.register(
            ImplKey::Function(key.into()),
            Args::Variadic(TypePat::Any),
            ndindex,
        );
    }
    r.register(
        ImplKey::Function("numpy.ndenumerate".into()),
        Args::Exact(vec![TypePat::Pred(is_array)]),
        ndenumerate,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![flat(), TypePat::Int]),
        getitem,
    );
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![flat(), TypePat::Int, TypePat::Number]),
        setitem,
    );
    r.register(
        ImplKey::Function("len".into()),
        Args::Exact(vec![flat()]),
        len,
    );
    // The iterator's state is the array's: the array iterator's constructor serves.
    r.register(
        ImplKey::GetIter,
        Args::Exact(vec![TypePat::Pred(|t| t.flat_array().is_some())]),
        super::arrays::getiter,
    );
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(flat_iter)]),
        iternext,
    );
}

/// The wrapper is the array's own value (`a.flat` is an attribute: the variable it is
/// assigned to takes its own reference).
fn same<'ctx>(
    _lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    Ok(a[0])
}

/// `np.ndenumerate(a)` is a call, and calls return new references: it takes one on `a`.
fn ndenumerate<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.incref(sig.ret, a[0])?;
    Ok(a[0])
}

/// The array behind a flat type, and the element at C-order position `i` (wrapped when
/// negative; out of range is an IndexError, as NumPy's flat indexing always checks).
fn element_ptr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<(TypeId, inkwell::values::PointerValue<'ctx>)> {
    let arr_t = sig.args[0]
        .flat_array()
        .ok_or_else(|| lw.unsupported("flat indexing"))?;
    let arr = a[0].into_struct_value();
    let n = get_int(lw, arr, field::NITEMS)?;
    let i = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
    let i = checked_index(lw, i, n, "index out of bounds")?;
    Ok((arr_t, flat_ptr(lw, arr_t, arr, i)?))
}

fn getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (arr_t, p) = element_ptr(lw, sig, a)?;
    load_elem(lw, dtype_of(arr_t), p)
}

fn setitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (arr_t, p) = element_ptr(lw, sig, a)?;
    let dtype = dtype_of(arr_t);
    let v = lw.cast(a[2], sig.args[2], dtype)?;
    store_elem(lw, dtype, p, v)?;
    Ok(lw.ghost())
}

/// `np.ndindex(*shape)`: a storage-less array of the shape (NumPy's ValueError for a
/// negative dimension), which the flat iterator walks for its positions only.
fn ndindex<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let Type::NdIndex(arr_t) = sig.ret.get() else {
        return Err(lw.unsupported("expected an ndindex"));
    };
    let mut dims = Vec::new();
    for (&t, &v) in sig.args.iter().zip(a) {
        dims.extend(super::array_ops::dims_of(lw, t, v)?);
    }
    Ok(super::arrays::shape_only(lw, arr_t, &dims)?.into())
}

/// The multi-index of C-order position `i` in the shape of `arr` (of type `t`).
pub(super) fn unravel<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: inkwell::values::StructValue<'ctx>,
    i: inkwell::values::IntValue<'ctx>,
) -> R<Vec<inkwell::values::IntValue<'ctx>>> {
    let nd = ndim(t) as usize;
    let mut coords = vec![lw.ctx.i64_type().const_zero(); nd];
    let mut rest = i;
    for d in (1..nd).rev() {
        let len = dim(lw, arr, field::SHAPE, d as u32)?;
        coords[d] =
            lw.b.build_int_unsigned_rem(rest, len, "")
                .map_err(llvm_err)?;
        rest =
            lw.b.build_int_unsigned_div(rest, len, "")
                .map_err(llvm_err)?;
    }
    if nd > 0 {
        coords[0] = rest;
    }
    Ok(coords)
}

fn len<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    Ok(get_int(lw, a[0].into_struct_value(), field::NITEMS)?.into())
}

fn iternext<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::ArrayIter(src) = t.get() else {
        return Err(lw.unsupported("expected a flat iterator"));
    };
    let arr_t = src
        .flat_array()
        .ok_or_else(|| lw.unsupported("expected a flat iterator"))?;
    let (i, valid, arr) = super::arrays::step_cursor(lw, t, a[0], arr_t, |lw, arr| {
        get_int(lw, arr, field::NITEMS)
    })?;
    // An exhausted iterator reads nothing: the load is guarded by the validity.
    let read = lw.new_block("flat.read");
    let done = lw.new_block("flat.done");
    let from =
        lw.b.get_insert_block()
            .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
    lw.b.build_conditional_branch(valid, read, done)
        .map_err(llvm_err)?;
    lw.b.position_at_end(read);
    let dtype = dtype_of(arr_t);
    // An ndindex has no elements to read: its items are the positions.
    let x = if matches!(src.get(), Type::NdIndex(_)) {
        lw.ctx.i64_type().const_zero().into()
    } else {
        let p = flat_ptr(lw, arr_t, arr, i)?;
        load_elem(lw, dtype, p)?
    };
    let item = match src.get() {
        Type::NdEnumerate(_) | Type::NdIndex(_) => {
            let coords = unravel(lw, arr_t, arr, i)?;
            let members = crate::model::members(sig.ret);
            let item_t = members[0];
            let vals: Vec<BasicValueEnum<'ctx>> = coords.into_iter().map(Into::into).collect();
            if matches!(src.get(), Type::NdIndex(_)) {
                lw.make_struct(item_t, &vals)?
            } else {
                let idx_t = crate::model::members(item_t)[0];
                let idx = lw.make_struct(idx_t, &vals)?;
                lw.make_struct(item_t, &[idx, x])?
            }
        }
        _ => x,
    };
    let read_end =
        lw.b.get_insert_block()
            .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    let phi = lw.b.build_phi(item.get_type(), "item").map_err(llvm_err)?;
    // What an exhausted iterator yields: zeros.
    let zero = crate::model::value_type(lw.ctx, crate::model::members(sig.ret)[0])?.const_zero();
    phi.add_incoming(&[(&item, read_end), (&zero, from)]);
    lw.make_struct(sig.ret, &[phi.as_basic_value(), valid.into()])
}
