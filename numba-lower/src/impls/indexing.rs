//! Array indexing beyond plain integer tuples (Numba's `arrayobj` basic and fancy
//! indexing): slices with steps, `None`/`np.newaxis`, `...`, and one advanced index (a
//! 1-d integer array or boolean mask, or a mask of the array's own shape as the only
//! index), for reading and for assignment. Basic indices give views sharing the array's
//! memory; advanced ones give new C arrays. Assignment broadcasts an array source
//! against the selection, as NumPy does, copying the source first when the two overlap.

use inkwell::values::{BasicValueEnum, IntValue, PointerValue, StructValue};
use inkwell::IntPredicate;
use numba_typeinfer::conv::tuple_items;
use numba_typeinfer::numpy::{index_array, index_items, IndexItem};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{
    data_ptr, dim, dtype_of, fill_elements, flat_ptr, get_int, load_elem, map_elements, rebuild,
    store_elem, view_with, Loop,
};
use super::arrays::allocate;
use super::nonzero::count_true;
use super::slices::slice_bounds;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, LowerError, R};

fn is_array(t: TypeId) -> bool {
    t.is_array()
}

fn items_of(t: TypeId) -> Option<Vec<IndexItem>> {
    index_items(t).into_iter().map(IndexItem::of).collect()
}

/// A basic index other than plain integers (those take the faster `arrays::getitem`).
fn basic(t: TypeId) -> bool {
    items_of(t).is_some_and(|items| {
        items
            .iter()
            .all(|i| !matches!(i, IndexItem::IntArray | IndexItem::BoolArray { .. }))
            && items.iter().any(|i| *i != IndexItem::Int)
            || tuple_items(t).is_some_and(|v| v.is_empty())
    })
}

/// An index with an integer array or a boolean mask in it.
fn advanced(t: TypeId) -> bool {
    items_of(t).is_some_and(|items| {
        items
            .iter()
            .any(|i| matches!(i, IndexItem::IntArray | IndexItem::BoolArray { .. }))
    })
}

/// Any index an array takes.
fn any_index(t: TypeId) -> bool {
    items_of(t).is_some()
}

pub(crate) fn register(r: &mut Registry) {
    let array = || TypePat::Pred(is_array);
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![array(), TypePat::Pred(basic)]),
        getitem_basic,
    );
    // An array (or a 0-d array) source, or a selection that is not one element.
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![array(), TypePat::Pred(basic), TypePat::Any]),
        setitem_basic,
    );
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![array(), TypePat::Pred(any_index), array()]),
        setitem_basic,
    );
    // A tuple of numbers filling a row (`e[i] = (h, h, h)`; typing admits it only where
    // the selection is 1-d).
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![
            array(),
            TypePat::Pred(|t| items_of(t).is_some_and(|i| i.iter().all(|k| *k == IndexItem::Int))),
            TypePat::Pred(|t| tuple_items(t).is_some_and(|v| !v.is_empty())),
        ]),
        setitem_basic,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![array(), TypePat::Pred(advanced)]),
        getitem_fancy,
    );
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![array(), TypePat::Pred(advanced), TypePat::Any]),
        setitem_fancy,
    );
}

/// One index item with its type and value.
#[derive(Clone, Copy)]
struct Item<'ctx> {
    kind: IndexItem,
    ty: TypeId,
    value: BasicValueEnum<'ctx>,
}

fn split_index<'ctx>(
    lw: &FnLower<'ctx, '_>,
    index_t: TypeId,
    index: BasicValueEnum<'ctx>,
) -> R<Vec<Item<'ctx>>> {
    let tys = index_items(index_t);
    let tuple = tuple_items(index_t.unliteral()).is_some();
    let mut out = Vec::with_capacity(tys.len());
    for (k, ty) in tys.into_iter().enumerate() {
        let kind = IndexItem::of(ty).ok_or_else(|| lw.unsupported(format!("index {ty}")))?;
        let value = if tuple {
            lw.b.build_extract_value(index.into_struct_value(), k as u32, "")
                .map_err(llvm_err)?
        } else {
            index
        };
        out.push(Item { kind, ty, value });
    }
    Ok(out)
}

/// The memory a basic index selects: where it starts, and the shape and byte strides of
/// the result's axes. `advanced` is the result axis an advanced item stands on (taken
/// whole here; the fancy loops pick its positions).
struct Selection<'ctx> {
    data: PointerValue<'ctx>,
    shape: Vec<IntValue<'ctx>>,
    strides: Vec<IntValue<'ctx>>,
    advanced: Option<usize>,
}

fn select<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    items: &[Item<'ctx>],
) -> R<Selection<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let zero = i64t.const_zero();
    let n = ndim(t);
    let consumed: u32 = items
        .iter()
        .map(|i| match i.kind {
            IndexItem::Int | IndexItem::Slice { .. } | IndexItem::IntArray => 1,
            IndexItem::BoolArray { ndim } => ndim,
            IndexItem::Ellipsis | IndexItem::NewAxis => 0,
        })
        .sum();
    if consumed > n {
        return Err(lw.unsupported("too many indices for the array"));
    }
    let mut d = 0u32;
    let mut off = zero;
    let mut sel = Selection {
        data: data_ptr(lw, arr)?,
        shape: Vec::new(),
        strides: Vec::new(),
        advanced: None,
    };
    for it in items {
        match it.kind {
            IndexItem::Int => {
                let len = dim(lw, arr, field::SHAPE, d)?;
                let stride = dim(lw, arr, field::STRIDES, d)?;
                let i = lw
                    .cast(it.value, it.ty.unliteral(), INT64)?
                    .into_int_value();
                let i = wrap_index(lw, i, len)?;
                if lw.options.boundscheck {
                    let out =
                        lw.b.build_int_compare(IntPredicate::UGE, i, len, "")
                            .map_err(llvm_err)?;
                    lw.raise_const_if(out, "IndexError", &["index is out of bounds"])?;
                }
                let term = lw.b.build_int_mul(i, stride, "").map_err(llvm_err)?;
                off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
                d += 1;
            }
            IndexItem::Slice { .. } => {
                let len = dim(lw, arr, field::SHAPE, d)?;
                let stride = dim(lw, arr, field::STRIDES, d)?;
                let (start, count, step) = slice_bounds(lw, it.value.into_struct_value(), len)?;
                let term = lw.b.build_int_mul(start, stride, "").map_err(llvm_err)?;
                off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
                sel.shape.push(count);
                sel.strides
                    .push(lw.b.build_int_mul(stride, step, "").map_err(llvm_err)?);
                d += 1;
            }
            IndexItem::NewAxis => {
                sel.shape.push(i64t.const_int(1, false));
                sel.strides.push(zero);
            }
            IndexItem::Ellipsis => {
                for _ in 0..n - consumed {
                    sel.shape.push(dim(lw, arr, field::SHAPE, d)?);
                    sel.strides.push(dim(lw, arr, field::STRIDES, d)?);
                    d += 1;
                }
            }
            IndexItem::IntArray | IndexItem::BoolArray { ndim: 1 } => {
                sel.advanced = Some(sel.shape.len());
                sel.shape.push(dim(lw, arr, field::SHAPE, d)?);
                sel.strides.push(dim(lw, arr, field::STRIDES, d)?);
                d += 1;
            }
            IndexItem::BoolArray { .. } => {
                return Err(lw.unsupported("a multi-dimensional boolean index with other indices"))
            }
        }
    }
    while d < n {
        sel.shape.push(dim(lw, arr, field::SHAPE, d)?);
        sel.strides.push(dim(lw, arr, field::STRIDES, d)?);
        d += 1;
    }
    // SAFETY (of the generated code): the offset stays within the array for valid indices.
    sel.data = unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), sel.data, &[off], "")
            .map_err(llvm_err)?
    };
    Ok(sel)
}

/// The address of the element `index` selects in `arr` (every axis indexed by an
/// integer; negative indices count from the end), as `cuda.atomic.add(a, i, v)` needs.
pub(crate) fn element_address<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    arr_t: TypeId,
    arr: BasicValueEnum<'ctx>,
    index_t: TypeId,
    index: BasicValueEnum<'ctx>,
) -> R<PointerValue<'ctx>> {
    let items = split_index(lw, index_t, index)?;
    Ok(select(lw, arr_t, arr.into_struct_value(), &items)?.data)
}

/// A negative index counts from the end; anything still outside `0..len` is an
/// IndexError with `message` (checks NumPy always makes: `a.flat[i]`, `np.take`).
pub(super) fn checked_index<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    i: IntValue<'ctx>,
    len: IntValue<'ctx>,
    message: &str,
) -> R<IntValue<'ctx>> {
    let i = wrap_index(lw, i, len)?;
    // Unsigned: a still-negative index is out of range too.
    let out =
        lw.b.build_int_compare(IntPredicate::UGE, i, len, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(out, "IndexError", &[message])?;
    Ok(i)
}

/// A negative index counts from the end.
pub(super) fn wrap_index<'ctx>(
    lw: &FnLower<'ctx, '_>,
    i: IntValue<'ctx>,
    len: IntValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, i, i.get_type().const_zero(), "")
            .map_err(llvm_err)?;
    let wrapped = lw.b.build_int_add(i, len, "").map_err(llvm_err)?;
    Ok(lw
        .b
        .build_select(neg, wrapped, i, "")
        .map_err(llvm_err)?
        .into_int_value())
}

/// `a[i, j:k, ::2, None, ...]`: a view, or the element when every axis is indexed.
fn getitem_basic<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let items = split_index(lw, sig.args[1], a[1])?;
    let sel = select(lw, t, arr, &items)?;
    if !sig.ret.is_array() {
        return load_elem(lw, dtype_of(t), sel.data);
    }
    if ndim(sig.ret) as usize != sel.shape.len() {
        return Err(lw.unsupported("index does not match the array's dimensions"));
    }
    Ok(view_with(lw, arr, sel.data, &sel.shape, &sel.strides)?.into())
}

/// `a[index] = x` for a basic index: one element, or every element of the selection
/// from a scalar or a broadcast array.
pub(super) fn setitem_basic<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let (res, _) = index_array(t, sig.args[1])
        .ok_or_else(|| lw.unsupported(format!("indexing {t} with {}", sig.args[1])))?;
    let arr = a[0].into_struct_value();
    let items = split_index(lw, sig.args[1], a[1])?;
    let sel = select(lw, t, arr, &items)?;
    let (src_t, src) = (sig.args[2], a[2]);
    if !res.is_array() {
        // One element, from a scalar or a 0-d array.
        let v = if src_t.is_array() {
            if ndim(src_t) != 0 {
                return Err(lw.unsupported("assigning an array to one element"));
            }
            let p = data_ptr(lw, src.into_struct_value())?;
            let x = load_elem(lw, dtype_of(src_t), p)?;
            lw.cast(x, dtype_of(src_t), dtype)?
        } else {
            lw.cast(src, src_t, dtype)?
        };
        store_elem(lw, dtype, sel.data, v)?;
        return Ok(lw.ghost());
    }
    let dst = view_with(lw, arr, sel.data, &sel.shape, &sel.strides)?;
    let view_t = intern(Type::Array {
        dtype,
        ndim: sel.shape.len() as u32,
        layout: Layout::A,
        readonly: false,
    });
    assign_into(lw, view_t, dst, src_t, src)?;
    Ok(lw.ghost())
}

/// The byte range `[lo, hi)` an array's elements occupy (empty for an empty array).
fn extent<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
    let i64t = lw.ctx.i64_type();
    let zero = i64t.const_zero();
    let one = i64t.const_int(1, false);
    let data = data_ptr(lw, arr)?;
    let base = lw.b.build_ptr_to_int(data, i64t, "").map_err(llvm_err)?;
    let (mut lo, mut hi) = (base, base);
    let mut empty = lw.ctx.bool_type().const_zero();
    for d in 0..ndim(t) {
        let len = dim(lw, arr, field::SHAPE, d)?;
        let stride = dim(lw, arr, field::STRIDES, d)?;
        let is0 =
            lw.b.build_int_compare(IntPredicate::EQ, len, zero, "")
                .map_err(llvm_err)?;
        empty = lw.b.build_or(empty, is0, "").map_err(llvm_err)?;
        let last = lw.b.build_int_sub(len, one, "").map_err(llvm_err)?;
        let span = lw.b.build_int_mul(last, stride, "").map_err(llvm_err)?;
        let neg =
            lw.b.build_int_compare(IntPredicate::SLT, span, zero, "")
                .map_err(llvm_err)?;
        let down =
            lw.b.build_select(neg, span, zero, "")
                .map_err(llvm_err)?
                .into_int_value();
        let up =
            lw.b.build_select(neg, zero, span, "")
                .map_err(llvm_err)?
                .into_int_value();
        lo = lw.b.build_int_add(lo, down, "").map_err(llvm_err)?;
        hi = lw.b.build_int_add(hi, up, "").map_err(llvm_err)?;
    }
    let size = get_int(lw, arr, field::ITEMSIZE)?;
    hi = lw.b.build_int_add(hi, size, "").map_err(llvm_err)?;
    let lo =
        lw.b.build_select(empty, zero, lo, "")
            .map_err(llvm_err)?
            .into_int_value();
    let hi =
        lw.b.build_select(empty, zero, hi, "")
            .map_err(llvm_err)?
            .into_int_value();
    Ok((lo, hi))
}

/// Whether two arrays' memory may overlap.
fn may_overlap<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (at, a): (TypeId, StructValue<'ctx>),
    (bt, b): (TypeId, StructValue<'ctx>),
) -> R<IntValue<'ctx>> {
    let (alo, ahi) = extent(lw, at, a)?;
    let (blo, bhi) = extent(lw, bt, b)?;
    let x =
        lw.b.build_int_compare(IntPredicate::ULT, alo, bhi, "")
            .map_err(llvm_err)?;
    let y =
        lw.b.build_int_compare(IntPredicate::ULT, blo, ahi, "")
            .map_err(llvm_err)?;
    lw.b.build_and(x, y, "").map_err(llvm_err)
}

/// An array source that stays readable while the destination is written: the source
/// itself, or a C copy of it when their memory overlaps. The second value is the
/// MemInfo to release afterwards (null when nothing was copied).
fn unaliased_source<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dst: (TypeId, StructValue<'ctx>),
    src_t: TypeId,
    src: StructValue<'ctx>,
) -> R<(TypeId, StructValue<'ctx>, PointerValue<'ctx>)> {
    let overlap = may_overlap(lw, dst, (src_t, src))?;
    copy_if(lw, overlap, src_t, src)
}

/// An operand of an element-wise loop writing `dst`: itself, or a C copy when its memory
/// overlaps `dst` other than element for element (the same memory with the same shape
/// and strides is safe: each position is read before it is written). The MemInfo to
/// release afterwards is null when nothing was copied.
pub(super) fn unaliased_operand<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dst: (TypeId, StructValue<'ctx>),
    src_t: TypeId,
    src: StructValue<'ctx>,
) -> R<(TypeId, StructValue<'ctx>, PointerValue<'ctx>)> {
    let cond = conflicts(lw, dst, src_t, src)?;
    copy_if(lw, cond, src_t, src)
}

/// Whether an element-wise loop writing `dst` would read `src` after writing over it:
/// their memory overlaps other than element for element (the same memory with the same
/// shape and strides is safe: each position is read before it is written).
pub(super) fn conflicts<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (dt, dst): (TypeId, StructValue<'ctx>),
    src_t: TypeId,
    src: StructValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let overlap = may_overlap(lw, (dt, dst), (src_t, src))?;
    Ok(if ndim(dt) == ndim(src_t) {
        let a = data_ptr(lw, dst)?;
        let b = data_ptr(lw, src)?;
        let mut same =
            lw.b.build_int_compare(IntPredicate::EQ, a, b, "")
                .map_err(llvm_err)?;
        for d in 0..ndim(dt) {
            for f in [field::SHAPE, field::STRIDES] {
                let x = dim(lw, dst, f, d)?;
                let y = dim(lw, src, f, d)?;
                let eq =
                    lw.b.build_int_compare(IntPredicate::EQ, x, y, "")
                        .map_err(llvm_err)?;
                same = lw.b.build_and(same, eq, "").map_err(llvm_err)?;
            }
        }
        let differ = lw.b.build_not(same, "").map_err(llvm_err)?;
        lw.b.build_and(overlap, differ, "").map_err(llvm_err)?
    } else {
        overlap
    })
}

/// `src`, or a C copy of it when `cond` holds, with the copy's MemInfo (or null).
fn copy_if<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    overlap: IntValue<'ctx>,
    src_t: TypeId,
    src: StructValue<'ctx>,
) -> R<(TypeId, StructValue<'ctx>, PointerValue<'ctx>)> {
    let copy_t = intern(Type::Array {
        dtype: dtype_of(src_t),
        ndim: ndim(src_t),
        layout: Layout::C,
        readonly: false,
    });
    // The copy is typed A like the source so both arms give one struct type.
    let from =
        lw.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    let copy_bb = lw.new_block("overlap.copy");
    let join = lw.new_block("overlap.done");
    lw.b.build_conditional_branch(overlap, copy_bb, join)
        .map_err(llvm_err)?;
    lw.b.position_at_end(copy_bb);
    let copied =
        map_elements(lw, copy_t, &[(src_t, src.into())], &mut |_, e| Ok(e[0]))?.into_struct_value();
    let mi =
        lw.b.build_extract_value(copied, field::MEMINFO, "")
            .map_err(llvm_err)?
            .into_pointer_value();
    let copy_end =
        lw.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
    lw.b.position_at_end(join);
    let phi = lw.b.build_phi(src.get_type(), "src").map_err(llvm_err)?;
    phi.add_incoming(&[(&src, from), (&copied, copy_end)]);
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let owned = lw.b.build_phi(ptr, "src.owned").map_err(llvm_err)?;
    owned.add_incoming(&[(&ptr.const_null(), from), (&mi, copy_end)]);
    let any_layout = intern(Type::Array {
        dtype: dtype_of(src_t),
        ndim: ndim(src_t),
        layout: Layout::A,
        readonly: false,
    });
    // A C source stays typed C only when no copy was needed; A is right for both.
    let t = if matches!(
        src_t.get(),
        Type::Array {
            layout: Layout::C,
            ..
        }
    ) {
        src_t
    } else {
        any_layout
    };
    Ok((
        t,
        phi.as_basic_value().into_struct_value(),
        owned.as_basic_value().into_pointer_value(),
    ))
}

pub(super) fn release<'ctx>(lw: &mut FnLower<'ctx, '_>, mi: PointerValue<'ctx>) -> R<()> {
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "NRT_decref",
        lw.ctx.void_type().fn_type(&[ptr.into()], false),
    );
    lw.b.build_call(f, &[mi.into()], "").map_err(llvm_err)?;
    Ok(())
}

/// The error NumPy/Numba raise when a source cannot be broadcast to the selection.
pub(super) const SHAPE_MISMATCH: &str = "cannot assign slice from input of different size";

/// Check that `src` (right-aligned) broadcasts to `dims`; leading extra axes of the
/// source must have length 1. Returns the source seen with `dims.len()` axes at most.
fn broadcast_source<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dims: &[IntValue<'ctx>],
    src_t: TypeId,
    src: StructValue<'ctx>,
) -> R<(TypeId, StructValue<'ctx>, IntValue<'ctx>)> {
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let (nd, ns) = (dims.len() as u32, ndim(src_t));
    let mut bad = lw.ctx.bool_type().const_zero();
    let mut same = lw.ctx.bool_type().const_int(u64::from(nd == ns), false);
    for d in 0..ns {
        let s = dim(lw, src, field::SHAPE, d)?;
        let is_one =
            lw.b.build_int_compare(IntPredicate::EQ, s, one, "")
                .map_err(llvm_err)?;
        let ok = if d + nd < ns {
            is_one
        } else {
            let want = dims[(d + nd - ns) as usize];
            let eq =
                lw.b.build_int_compare(IntPredicate::EQ, s, want, "")
                    .map_err(llvm_err)?;
            same = lw.b.build_and(same, eq, "").map_err(llvm_err)?;
            lw.b.build_or(eq, is_one, "").map_err(llvm_err)?
        };
        let not_ok = lw.b.build_not(ok, "").map_err(llvm_err)?;
        bad = lw.b.build_or(bad, not_ok, "").map_err(llvm_err)?;
    }
    lw.raise_const_if(bad, "ValueError", &[SHAPE_MISMATCH])?;
    if ns <= nd {
        return Ok((src_t, src, same));
    }
    // Drop the leading length-1 axes.
    let shape: Vec<IntValue<'ctx>> = (ns - nd..ns)
        .map(|d| dim(lw, src, field::SHAPE, d))
        .collect::<R<_>>()?;
    let strides: Vec<IntValue<'ctx>> = (ns - nd..ns)
        .map(|d| dim(lw, src, field::STRIDES, d))
        .collect::<R<_>>()?;
    let v = rebuild(lw, src, &shape, &strides)?;
    let t = intern(Type::Array {
        dtype: dtype_of(src_t),
        ndim: nd,
        layout: Layout::A,
        readonly: true,
    });
    Ok((t, v, same))
}

/// Write `src` (a scalar, or an array broadcast to the destination's shape) into every
/// element of `dst`, reading a copy of `src` when the two overlap.
pub(super) fn assign_into<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dst_t: TypeId,
    dst: StructValue<'ctx>,
    src_t: TypeId,
    src: BasicValueEnum<'ctx>,
) -> R<()> {
    let dtype = dtype_of(dst_t);
    let n = get_int(lw, dst, field::NITEMS)?;
    if let Some(items) = numba_typeinfer::conv::tuple_items(src_t) {
        // A tuple fills a 1-d selection of its own length, item by item.
        let i64t = lw.ctx.i64_type();
        let wrong =
            lw.b.build_int_compare(
                IntPredicate::NE,
                n,
                i64t.const_int(items.len() as u64, false),
                "",
            )
            .map_err(llvm_err)?;
        lw.raise_const_if(
            wrong,
            "ValueError",
            &["cannot assign slice from input of different size"],
        )?;
        let tuple = src.into_struct_value();
        for (k, &it) in items.iter().enumerate() {
            let x =
                lw.b.build_extract_value(tuple, k as u32, "")
                    .map_err(llvm_err)?;
            let v = lw.cast(x, it, dtype)?;
            let p = flat_ptr(lw, dst_t, dst, i64t.const_int(k as u64, false))?;
            store_elem(lw, dtype, p, v)?;
        }
        return Ok(());
    }
    let dims: Vec<IntValue<'ctx>> = (0..ndim(dst_t))
        .map(|d| dim(lw, dst, field::SHAPE, d))
        .collect::<R<_>>()?;
    if !src_t.is_array() {
        // One loop (a nest over a non-contiguous selection) storing the value.
        let yes = lw.ctx.bool_type().const_int(1, false);
        return fill_elements(
            lw,
            (dst_t, dst),
            &dims,
            yes,
            &[(src_t, src)],
            &mut |_, e| Ok(e[0]),
        );
    }
    let (src_t, src, same) = broadcast_source(lw, &dims, src_t, src.into_struct_value())?;
    let (src_t, src, owned) = unaliased_source(lw, (dst_t, dst), src_t, src)?;
    fill_elements(
        lw,
        (dst_t, dst),
        &dims,
        same,
        &[(src_t, src.into())],
        &mut |_, e| Ok(e[0]),
    )?;
    release(lw, owned)
}

/// The advanced item of a fancy index and how its positions are read.
struct Fancy<'ctx> {
    /// The selection with the advanced axis taken whole.
    sel: Selection<'ctx>,
    /// The selection axis the advanced item stands on.
    axis: usize,
    /// The index array and its type.
    idx_t: TypeId,
    idx: StructValue<'ctx>,
    /// Boolean mask (true) or integer positions.
    mask: bool,
    /// How many positions it selects.
    count: IntValue<'ctx>,
    /// Where the selected axis goes in the result (NumPy moves it first when integer
    /// indices stand apart from it).
    out_axis: usize,
}

/// Resolve a fancy index: the selection, then validate the index array (bounds of every
/// integer, the mask's length) and count what it selects, before anything is written.
fn fancy<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    index_t: TypeId,
    index: BasicValueEnum<'ctx>,
) -> R<Fancy<'ctx>> {
    let items = split_index(lw, index_t, index)?;
    let sel = select(lw, t, arr, &items)?;
    let axis = sel
        .advanced
        .ok_or_else(|| lw.unsupported("an advanced index without an index array"))?;
    let pos = items
        .iter()
        .position(|i| matches!(i.kind, IndexItem::IntArray | IndexItem::BoolArray { .. }))
        .ok_or_else(|| lw.unsupported("an advanced index without an index array"))?;
    let it = items[pos];
    // Integer indices and the array form one group unless something else stands between
    // them; then the group's axis goes first (NumPy's rule).
    let grouped: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| {
            matches!(
                i.kind,
                IndexItem::Int | IndexItem::IntArray | IndexItem::BoolArray { .. }
            )
        })
        .map(|(k, _)| k)
        .collect();
    let (first, last) = (grouped[0], grouped[grouped.len() - 1]);
    let apart = items[first..=last].iter().any(|i| {
        !matches!(
            i.kind,
            IndexItem::Int | IndexItem::IntArray | IndexItem::BoolArray { .. }
        )
    });
    let out_axis = if apart { 0 } else { axis };
    let idx = it.value.into_struct_value();
    let idx_t = it.ty;
    let mask = matches!(it.kind, IndexItem::BoolArray { .. });
    let len = sel.shape[axis];
    let n = dim(lw, idx, field::SHAPE, 0)?;
    let count = if mask {
        let ne =
            lw.b.build_int_compare(IntPredicate::NE, n, len, "")
                .map_err(llvm_err)?;
        lw.raise_const_if(
            ne,
            "IndexError",
            &["boolean index did not match indexed array"],
        )?;
        count_true(lw, idx_t, idx)?
    } else {
        // Every position must be in range (NumPy always checks fancy indices).
        let (lp, j) = Loop::begin(lw, n)?;
        let k = position(lw, idx_t, idx, j, len)?;
        let out =
            lw.b.build_int_compare(IntPredicate::UGE, k, len, "")
                .map_err(llvm_err)?;
        lw.raise_const_if(out, "IndexError", &["index is out of bounds"])?;
        lp.end(lw)?;
        n
    };
    Ok(Fancy {
        sel,
        axis,
        idx_t,
        idx,
        mask,
        count,
        out_axis,
    })
}

/// Element `j` of an integer index array, wrapped into `0..len` when negative.
fn position<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    idx_t: TypeId,
    idx: StructValue<'ctx>,
    j: IntValue<'ctx>,
    len: IntValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let p = flat_ptr(lw, idx_t, idx, j)?;
    let d = dtype_of(idx_t);
    let k = load_elem(lw, d, p)?;
    let k = lw.cast(k, d, INT64)?.into_int_value();
    wrap_index(lw, k, len)
}

/// The visit of every selected element in the result's C order: `body` gets the
/// element's address in the source selection and the result's coordinates.
type Visit<'f, 'ctx, 'a> =
    &'f mut dyn FnMut(&mut FnLower<'ctx, 'a>, PointerValue<'ctx>, &[IntValue<'ctx>]) -> R<()>;

fn visit<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    f: &Fancy<'ctx>,
    body: Visit<'_, 'ctx, 'a>,
) -> R<()> {
    let i64t = lw.ctx.i64_type();
    // Result axes: the selection's, with the advanced one moved to `out_axis`.
    let mut order: Vec<usize> = (0..f.sel.shape.len()).filter(|&d| d != f.axis).collect();
    order.insert(f.out_axis, f.axis);
    let counter = lw.alloca_in_entry(i64t.into(), "mask.pos")?;
    struct Level<'ctx> {
        lp: Loop<'ctx>,
        skip: Option<inkwell::basic_block::BasicBlock<'ctx>>,
    }
    let mut levels = Vec::new();
    let mut coords = Vec::new();
    let mut off = i64t.const_zero();
    for &d in &order {
        if d == f.axis {
            let n = dim(lw, f.idx, field::SHAPE, 0)?;
            if f.mask {
                lw.b.build_store(counter, i64t.const_zero())
                    .map_err(llvm_err)?;
            }
            let (lp, j) = Loop::begin(lw, n)?;
            let (src, out, skip) = if f.mask {
                let p = flat_ptr(lw, f.idx_t, f.idx, j)?;
                let m = load_elem(lw, BOOLEAN, p)?.into_int_value();
                let take = lw.new_block("mask.take");
                let skip = lw.new_block("mask.skip");
                lw.b.build_conditional_branch(m, take, skip)
                    .map_err(llvm_err)?;
                lw.b.position_at_end(take);
                let c =
                    lw.b.build_load(i64t, counter, "")
                        .map_err(llvm_err)?
                        .into_int_value();
                let next =
                    lw.b.build_int_add(c, i64t.const_int(1, false), "")
                        .map_err(llvm_err)?;
                lw.b.build_store(counter, next).map_err(llvm_err)?;
                (j, c, Some(skip))
            } else {
                let k = position(lw, f.idx_t, f.idx, j, f.sel.shape[f.axis])?;
                (k, j, None)
            };
            let term =
                lw.b.build_int_mul(src, f.sel.strides[d], "")
                    .map_err(llvm_err)?;
            off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
            coords.push(out);
            levels.push(Level { lp, skip });
        } else {
            let (lp, j) = Loop::begin(lw, f.sel.shape[d])?;
            let term =
                lw.b.build_int_mul(j, f.sel.strides[d], "")
                    .map_err(llvm_err)?;
            off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
            coords.push(j);
            levels.push(Level { lp, skip: None });
        }
    }
    // SAFETY (of the generated code): validated positions stay inside the array.
    let p = unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), f.sel.data, &[off], "")
            .map_err(llvm_err)?
    };
    body(lw, p, &coords)?;
    while let Some(level) = levels.pop() {
        if let Some(skip) = level.skip {
            lw.b.build_unconditional_branch(skip).map_err(llvm_err)?;
            lw.b.position_at_end(skip);
        }
        level.lp.end(lw)?;
    }
    Ok(())
}

/// The result's shape.
fn result_dims<'ctx>(f: &Fancy<'ctx>) -> Vec<IntValue<'ctx>> {
    let mut dims: Vec<IntValue<'ctx>> = f
        .sel
        .shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != f.axis)
        .map(|(_, &s)| s)
        .collect();
    dims.insert(f.out_axis, f.count);
    dims
}

/// NumPy's IndexError when a whole-array mask's shape is not the array's.
pub(super) fn check_mask_shape<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    mask: StructValue<'ctx>,
) -> R<()> {
    let mut differ = lw.ctx.bool_type().const_zero();
    for d in 0..ndim(t) {
        let x = dim(lw, arr, field::SHAPE, d)?;
        let y = dim(lw, mask, field::SHAPE, d)?;
        let ne =
            lw.b.build_int_compare(IntPredicate::NE, x, y, "")
                .map_err(llvm_err)?;
        differ = lw.b.build_or(differ, ne, "").map_err(llvm_err)?;
    }
    lw.raise_const_if(
        differ,
        "IndexError",
        &["boolean index did not match indexed array"],
    )
}

/// `a[mask]` with a mask of the array's own shape (more than one axis): the elements
/// where it is true, in C order, as a 1-d array.
fn whole_mask<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    arr: StructValue<'ctx>,
    mask: StructValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let (t, mt) = (sig.args[0], sig.args[1]);
    let i64t = lw.ctx.i64_type();
    check_mask_shape(lw, t, arr, mask)?;
    let n = get_int(lw, arr, field::NITEMS)?;
    let count = count_true(lw, mt, mask)?;
    let out = allocate(lw, sig.ret, &[count])?;
    let acc = lw.alloca_in_entry(i64t.into(), "out.pos")?;
    let dtype = dtype_of(t);
    lw.b.build_store(acc, i64t.const_zero()).map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, mt, mask, i)?;
    let m = load_elem(lw, BOOLEAN, p)?.into_int_value();
    let take = lw.new_block("mask.take");
    let skip = lw.new_block("mask.skip");
    lw.b.build_conditional_branch(m, take, skip)
        .map_err(llvm_err)?;
    lw.b.position_at_end(take);
    let src = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, src)?;
    let c =
        lw.b.build_load(i64t, acc, "")
            .map_err(llvm_err)?
            .into_int_value();
    let dst = flat_ptr(lw, sig.ret, out, c)?;
    store_elem(lw, dtype, dst, x)?;
    let c =
        lw.b.build_int_add(c, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.b.build_store(acc, c).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(skip).map_err(llvm_err)?;
    lw.b.position_at_end(skip);
    lp.end(lw)?;
    Ok(out.into())
}

fn whole_mask_index(t: TypeId, index_t: TypeId) -> bool {
    matches!(items_of(index_t).as_deref(), Some([IndexItem::BoolArray { ndim: k }]) if *k > 1 && *k == ndim(t))
}

/// `a[idx]`, `a[mask]`, `a[1:, idx]`: a new C array of the selected elements.
fn getitem_fancy<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    if whole_mask_index(t, sig.args[1]) {
        return whole_mask(lw, sig, arr, a[1].into_struct_value());
    }
    let f = fancy(lw, t, arr, sig.args[1], a[1])?;
    let dims = result_dims(&f);
    if dims.len() as u32 != ndim(sig.ret) {
        return Err(lw.unsupported("index does not match the array's dimensions"));
    }
    let out = allocate(lw, sig.ret, &dims)?;
    let dtype = dtype_of(t);
    let i64t = lw.ctx.i64_type();
    let next = lw.alloca_in_entry(i64t.into(), "out.pos")?;
    lw.b.build_store(next, i64t.const_zero())
        .map_err(llvm_err)?;
    let out_t = sig.ret;
    visit(lw, &f, &mut |lw, p, _| {
        let x = load_elem(lw, dtype, p)?;
        let k =
            lw.b.build_load(i64t, next, "")
                .map_err(llvm_err)?
                .into_int_value();
        let q = flat_ptr(lw, out_t, out, k)?;
        store_elem(lw, dtype, q, x)?;
        let k =
            lw.b.build_int_add(k, i64t.const_int(1, false), "")
                .map_err(llvm_err)?;
        lw.b.build_store(next, k).map_err(llvm_err)?;
        Ok(())
    })?;
    Ok(out.into())
}

/// `a[idx] = x`, `a[mask] = x`: a scalar, or an array broadcast to the selection.
fn setitem_fancy<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let (src_t, src) = (sig.args[2], a[2]);
    if whole_mask_index(t, sig.args[1]) {
        // Treat the array as flat: a C view when it is contiguous, else element by element.
        return setitem_whole_mask(lw, sig, arr, a[1].into_struct_value(), (src_t, src));
    }
    let f = fancy(lw, t, arr, sig.args[1], a[1])?;
    if !src_t.is_array() {
        let v = lw.cast(src, src_t, dtype)?;
        visit(lw, &f, &mut |lw, p, _| store_elem(lw, dtype, p, v))?;
        return Ok(lw.ghost());
    }
    let dims = result_dims(&f);
    let (src_t, s, _) = broadcast_source(lw, &dims, src_t, src.into_struct_value())?;
    let (src_t, s, owned) = unaliased_source(lw, (t, arr), src_t, s)?;
    let sd = dtype_of(src_t);
    let ns = ndim(src_t) as usize;
    let nd = dims.len();
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    visit(lw, &f, &mut |lw, p, coords| {
        // The source element at the result's coordinates, right-aligned, length-1 axes
        // stretched.
        let mut off = i64t.const_zero();
        for d in 0..ns {
            let len = dim(lw, s, field::SHAPE, d as u32)?;
            let stride = dim(lw, s, field::STRIDES, d as u32)?;
            let c = coords[nd - ns + d];
            let stretched =
                lw.b.build_int_compare(IntPredicate::EQ, len, one, "")
                    .map_err(llvm_err)?;
            let c =
                lw.b.build_select(stretched, i64t.const_zero(), c, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let term = lw.b.build_int_mul(c, stride, "").map_err(llvm_err)?;
            off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
        }
        let base = data_ptr(lw, s)?;
        // SAFETY (of the generated code): broadcast coordinates stay inside the source.
        let q = unsafe {
            lw.b.build_gep(lw.ctx.i8_type(), base, &[off], "")
                .map_err(llvm_err)?
        };
        let x = load_elem(lw, sd, q)?;
        let v = lw.cast(x, sd, dtype)?;
        store_elem(lw, dtype, p, v)
    })?;
    release(lw, owned)?;
    Ok(lw.ghost())
}

/// `a[mask] = x` with a mask of the array's shape: a scalar everywhere it is true, or
/// the elements of a 1-d source in order.
fn setitem_whole_mask<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    arr: StructValue<'ctx>,
    mask: StructValue<'ctx>,
    (src_t, src): (TypeId, BasicValueEnum<'ctx>),
) -> R<BasicValueEnum<'ctx>> {
    let (t, mt) = (sig.args[0], sig.args[1]);
    let dtype = dtype_of(t);
    let i64t = lw.ctx.i64_type();
    check_mask_shape(lw, t, arr, mask)?;
    let n = get_int(lw, arr, field::NITEMS)?;
    let scalar = if src_t.is_array() {
        if ndim(src_t) > 1 {
            return Err(lw.unsupported("assigning a multi-dimensional array through a mask"));
        }
        None
    } else {
        Some(lw.cast(src, src_t, dtype)?)
    };
    let acc = lw.alloca_in_entry(i64t.into(), "src.pos")?;
    lw.b.build_store(acc, i64t.const_zero()).map_err(llvm_err)?;
    let (src_len, owned, s) = match scalar {
        Some(_) => (None, None, None),
        None => {
            let sv = src.into_struct_value();
            let (st, sv, owned) = unaliased_source(lw, (t, arr), src_t, sv)?;
            (
                Some(dim(lw, sv, field::SHAPE, 0)?),
                Some(owned),
                Some((st, sv)),
            )
        }
    };
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, mt, mask, i)?;
    let m = load_elem(lw, BOOLEAN, p)?.into_int_value();
    let take = lw.new_block("mask.take");
    let skip = lw.new_block("mask.skip");
    lw.b.build_conditional_branch(m, take, skip)
        .map_err(llvm_err)?;
    lw.b.position_at_end(take);
    let v = match (scalar, s, src_len) {
        (Some(v), _, _) => v,
        (None, Some((st, sv)), Some(len)) => {
            let c =
                lw.b.build_load(i64t, acc, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            // A length-1 source repeats; otherwise it must hold one value per true.
            let single =
                lw.b.build_int_compare(IntPredicate::EQ, len, i64t.const_int(1, false), "")
                    .map_err(llvm_err)?;
            let k =
                lw.b.build_select(single, i64t.const_zero(), c, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let short =
                lw.b.build_int_compare(IntPredicate::UGE, k, len, "")
                    .map_err(llvm_err)?;
            lw.raise_const_if(short, "ValueError", &[SHAPE_MISMATCH])?;
            let q = flat_ptr(lw, st, sv, k)?;
            let x = load_elem(lw, dtype_of(st), q)?;
            let c =
                lw.b.build_int_add(c, i64t.const_int(1, false), "")
                    .map_err(llvm_err)?;
            lw.b.build_store(acc, c).map_err(llvm_err)?;
            lw.cast(x, dtype_of(st), dtype)?
        }
        _ => return Err(LowerError::Llvm("mask assignment without a source".into())),
    };
    let q = flat_ptr(lw, t, arr, i)?;
    store_elem(lw, dtype, q, v)?;
    lw.b.build_unconditional_branch(skip).map_err(llvm_err)?;
    lw.b.position_at_end(skip);
    lp.end(lw)?;
    if let Some(owned) = owned {
        release(lw, owned)?;
    }
    Ok(lw.ghost())
}
