//! NumPy arrays that come in as arguments: indexing (ints with wrap-around, tuples of
//! ints, leading-axis views), item assignment, `shape`/`strides`/`ndim`/`size`/`itemsize`/
//! `nbytes`, `len` and iteration. Arrays that would need allocating (creation, arithmetic,
//! copies) are the next step: their keys stay "not lowered yet" in `numpy.rs`.

use inkwell::values::{BasicValueEnum, IntValue, PointerValue, StructValue};
use inkwell::IntPredicate;
use numba_typeinfer::conv::tuple_items;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::data_ptr;
use crate::function::FnLower;
use crate::model::array::{array_struct, field, ndim};
use crate::model::{iterator_storage, model_of};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn is_array(t: TypeId) -> bool {
    t.is_array()
}

fn int_index(t: TypeId) -> bool {
    t.is_integer() || t == BOOLEAN
}

fn int_tuple(t: TypeId) -> bool {
    tuple_items(t).is_some_and(|items| !items.is_empty() && items.iter().all(|&i| int_index(i)))
}

pub(crate) fn register(r: &mut Registry) {
    // `intrinsic.empty_inferred`: an array comprehension's allocation (numba_ir's
    // comprehension pass), `np.empty` of the inferred dtype.
    for k in [
        "numpy.empty",
        "numpy.zeros",
        "numpy.ones",
        "intrinsic.empty_inferred",
    ] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Variadic(TypePat::Any),
            create,
        );
    }
    r.register(
        ImplKey::GetAttr("flags".into()),
        Args::Exact(vec![TypePat::Pred(is_array)]),
        flags,
    );
    for attr in ["c_contiguous", "f_contiguous", "contiguous"] {
        r.register(
            ImplKey::GetAttr(attr.into()),
            Args::Exact(vec![TypePat::Pred(|t| {
                matches!(t.get(), Type::ArrayFlags(_))
            })]),
            contiguity,
        );
    }
    for k in [
        "numba.carray",
        "numba.farray",
        "numba_rs.carray",
        "numba_rs.farray",
    ] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Variadic(TypePat::Any),
            carray,
        );
    }
    let array = || TypePat::Pred(is_array);
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![array(), TypePat::Pred(int_index)]),
        getitem,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![array(), TypePat::Pred(int_tuple)]),
        getitem,
    );
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![array(), TypePat::Pred(int_index), TypePat::Number]),
        setitem,
    );
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![array(), TypePat::Pred(int_tuple), TypePat::Number]),
        setitem,
    );
    // A datetime64 / timedelta64 stored into an item (converted to the array's unit).
    for index in [TypePat::Pred(int_index), TypePat::Pred(int_tuple)] {
        r.register(
            ImplKey::SetItem,
            Args::Exact(vec![
                array(),
                index,
                TypePat::Pred(numba_typeinfer::npdatetime::is_datetime_like),
            ]),
            setitem,
        );
    }
    // A string (bytes, another item) stored into an item of a character array.
    let text = || {
        TypePat::Pred(|t| {
            matches!(
                t.get(),
                Type::Unicode
                    | Type::StringLiteral(_)
                    | Type::Bytes
                    | Type::CharSeq(_)
                    | Type::UnicodeCharSeq(_)
            )
        })
    };
    for index in [TypePat::Pred(int_index), TypePat::Pred(int_tuple)] {
        r.register(
            ImplKey::SetItem,
            Args::Exact(vec![array(), index, text()]),
            setitem,
        );
    }
    // A record copied into an item (`a[i] = a[j]`, `a[0] = rec`).
    for index in [TypePat::Pred(int_index), TypePat::Pred(int_tuple)] {
        r.register(
            ImplKey::SetItem,
            Args::Exact(vec![
                array(),
                index,
                TypePat::Pred(numba_typeinfer::records::is_record),
            ]),
            setitem,
        );
    }
    // A C pointer stored as its address (`a[0] = ptr` into an integer array).
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![
            array(),
            TypePat::Pred(int_index),
            TypePat::Pred(|t| t.is_pointer()),
        ]),
        setitem,
    );
    for attr in ["shape", "strides", "ndim", "size", "itemsize", "nbytes"] {
        r.register(
            ImplKey::GetAttr(attr.into()),
            Args::Exact(vec![array()]),
            attribute,
        );
    }
    // `a.ctypes` and cffi's `ffi.from_buffer(a)` are the data pointer; `a.ctypes.data`
    // its address.
    r.register(
        ImplKey::Function(numba_typeinfer::cinterop::FROM_BUFFER.into()),
        Args::Exact(vec![array()]),
        data_pointer,
    );
    r.register(
        ImplKey::GetAttr("ctypes".into()),
        Args::Exact(vec![array()]),
        data_pointer,
    );
    r.register(
        ImplKey::GetAttr("data".into()),
        Args::Exact(vec![TypePat::Pred(|t| {
            matches!(t.get(), Type::ArrayCTypes(_))
        })]),
        |lw, _, a| {
            Ok(lw
                .b
                .build_ptr_to_int(a[0].into_pointer_value(), lw.ctx.i64_type(), "addr")
                .map_err(llvm_err)?
                .into())
        },
    );
    r.register(
        ImplKey::Function("len".into()),
        Args::Exact(vec![array()]),
        len,
    );
    r.register(ImplKey::GetIter, Args::Exact(vec![array()]), getiter);
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(
            |t| matches!(t.get(), Type::ArrayIter(a) if a.is_array()),
        )]),
        iternext,
    );
}

/// `a.flags`: whether the strides are C-contiguous and Fortran-contiguous, as NumPy
/// reckons them (axes of length 1 ignored; an empty array is both).
fn flags<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let nd = crate::model::array::ndim(t);
    let i64t = lw.ctx.i64_type();
    let bool_t = lw.ctx.bool_type();
    let size =
        lw.b.build_extract_value(arr, field::ITEMSIZE, "")
            .map_err(llvm_err)?
            .into_int_value();
    let mut empty = bool_t.const_zero();
    for d in 0..nd {
        let n = dim(lw, arr, field::SHAPE, d)?;
        let z =
            lw.b.build_int_compare(IntPredicate::EQ, n, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        empty = lw.b.build_or(empty, z, "").map_err(llvm_err)?;
    }
    let mut bits = Vec::new();
    for order in [(0..nd).rev().collect::<Vec<_>>(), (0..nd).collect()] {
        let mut ok = bool_t.const_int(1, false);
        let mut expect = size;
        for d in order {
            let n = dim(lw, arr, field::SHAPE, d)?;
            let st = dim(lw, arr, field::STRIDES, d)?;
            let one =
                lw.b.build_int_compare(IntPredicate::EQ, n, i64t.const_int(1, false), "")
                    .map_err(llvm_err)?;
            let same =
                lw.b.build_int_compare(IntPredicate::EQ, st, expect, "")
                    .map_err(llvm_err)?;
            let fine = lw.b.build_or(one, same, "").map_err(llvm_err)?;
            ok = lw.b.build_and(ok, fine, "").map_err(llvm_err)?;
            expect = lw.b.build_int_mul(expect, n, "").map_err(llvm_err)?;
        }
        let ok = lw.b.build_or(ok, empty, "").map_err(llvm_err)?;
        bits.push(
            lw.b.build_int_z_extend(ok, lw.ctx.i8_type(), "")
                .map_err(llvm_err)?,
        );
    }
    let st = lw
        .ctx
        .struct_type(&[lw.ctx.i8_type().into(), lw.ctx.i8_type().into()], false);
    let mut v = st.get_undef();
    for (k, b) in bits.into_iter().enumerate() {
        v =
            lw.b.build_insert_value(v, b, k as u32, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(v.into())
}

/// `flags.c_contiguous`, `.f_contiguous`, `.contiguous` (C).
fn contiguity<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let k = match &sig.key {
        ImplKey::GetAttr(n) if n == "f_contiguous" => 1,
        _ => 0,
    };
    let b =
        lw.b.build_extract_value(a[0].into_struct_value(), k, "")
            .map_err(llvm_err)?
            .into_int_value();
    Ok(lw
        .b
        .build_int_truncate(b, lw.ctx.bool_type(), "")
        .map_err(llvm_err)?
        .into())
}

/// `numba.carray(ptr, shape[, dtype])` / `farray`: an array over the pointed-to memory,
/// contiguous in C (or Fortran) order, owned by nobody (no MemInfo, as Numba's).
fn carray<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let Type::Array { dtype, layout, .. } = sig.ret.get() else {
        return Err(lw.unsupported("carray() without an array result"));
    };
    let i64t = lw.ctx.i64_type();
    let dims = indices(lw, sig.args[1], a[1])?;
    let size = itemsize(dtype);
    let mut strides = vec![i64t.const_zero(); dims.len()];
    let mut step = i64t.const_int(size, false);
    let order: Vec<usize> = if layout == numba_typeinfer::types::Layout::F {
        (0..dims.len()).collect()
    } else {
        (0..dims.len()).rev().collect()
    };
    for d in order {
        strides[d] = step;
        step = lw.b.build_int_mul(step, dims[d], "").map_err(llvm_err)?;
    }
    let mut n = i64t.const_int(1, false);
    for &d in &dims {
        n = lw.b.build_int_mul(n, d, "").map_err(llvm_err)?;
    }
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let st = crate::model::array::array_struct(lw.ctx, dims.len() as u32);
    let mut v = st.get_undef();
    let fields: [(u32, BasicValueEnum<'ctx>); 5] = [
        (field::MEMINFO, ptr.const_null().into()),
        (field::PARENT, ptr.const_null().into()),
        (field::NITEMS, n.into()),
        (field::ITEMSIZE, i64t.const_int(size, false).into()),
        (field::DATA, a[0]),
    ];
    for (f, x) in fields {
        v =
            lw.b.build_insert_value(v, x, f, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    for (f, vals) in [(field::SHAPE, &dims), (field::STRIDES, &strides)] {
        let mut arr = i64t.array_type(vals.len() as u32).get_undef();
        for (d, &x) in vals.iter().enumerate() {
            arr =
                lw.b.build_insert_value(arr, x, d as u32, "")
                    .map_err(llvm_err)?
                    .into_array_value();
        }
        v =
            lw.b.build_insert_value(v, arr, f, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(v.into())
}

/// `shape[d]` / `strides[d]` of an array value.
fn dim<'ctx>(lw: &FnLower<'ctx, '_>, arr: StructValue<'ctx>, f: u32, d: u32) -> R<IntValue<'ctx>> {
    let a =
        lw.b.build_extract_value(arr, f, "")
            .map_err(llvm_err)?
            .into_array_value();
    Ok(lw
        .b
        .build_extract_value(a, d, "")
        .map_err(llvm_err)?
        .into_int_value())
}

/// The index values of an int or a tuple of ints, as i64.
fn indices<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
) -> R<Vec<IntValue<'ctx>>> {
    match tuple_items(t) {
        Some(items) => {
            let sv = v.into_struct_value();
            let mut out = Vec::new();
            for (i, it) in items.into_iter().enumerate() {
                let x =
                    lw.b.build_extract_value(sv, i as u32, "")
                        .map_err(llvm_err)?;
                out.push(lw.cast(x, it, INT64)?.into_int_value());
            }
            Ok(out)
        }
        None => Ok(vec![lw.cast(v, t, INT64)?.into_int_value()]),
    }
}

/// The address of the sub-array or element at the leading `idx` (negative indices wrap
/// around, as in NumPy; no bounds check, as Numba without `boundscheck`).
fn offset<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    idx: &[IntValue<'ctx>],
) -> R<PointerValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let data = data_ptr(lw, arr)?;
    let mut wrapped_idx = Vec::with_capacity(idx.len());
    for (d, &i) in idx.iter().enumerate() {
        let n = dim(lw, arr, field::SHAPE, d as u32)?;
        let neg =
            lw.b.build_int_compare(IntPredicate::SLT, i, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        let wrapped = lw.b.build_int_add(i, n, "").map_err(llvm_err)?;
        let i =
            lw.b.build_select(neg, wrapped, i, "")
                .map_err(llvm_err)?
                .into_int_value();
        if lw.options.boundscheck {
            // Unsigned comparison: a still-negative index is out of range too.
            let out =
                lw.b.build_int_compare(IntPredicate::UGE, i, n, "")
                    .map_err(llvm_err)?;
            lw.raise_const_if(out, "IndexError", &["index is out of bounds"])?;
        }
        wrapped_idx.push(i);
    }
    // A whole element of a contiguous array: index in elements from the shape, which
    // LLVM can vectorise (Numba does the same for C and F layouts).
    if let Type::Array {
        dtype,
        ndim,
        layout,
        ..
    } = t.get()
    {
        if idx.len() as u32 == ndim && layout != numba_typeinfer::types::Layout::A {
            let order: Vec<u32> = if layout == numba_typeinfer::types::Layout::C {
                (0..ndim).collect()
            } else {
                (0..ndim).rev().collect()
            };
            let mut lin = i64t.const_zero();
            for d in order {
                let n = dim(lw, arr, field::SHAPE, d)?;
                let scaled = lw.b.build_int_mul(lin, n, "").map_err(llvm_err)?;
                lin =
                    lw.b.build_int_add(scaled, wrapped_idx[d as usize], "")
                        .map_err(llvm_err)?;
            }
            let elem = super::array_ops::elem_storage(lw.ctx, dtype)?;
            // SAFETY (of the generated code): valid indices stay inside the array.
            return unsafe { lw.b.build_gep(elem, data, &[lin], "item").map_err(llvm_err) };
        }
    }
    let mut off = i64t.const_zero();
    for (d, &i) in wrapped_idx.iter().enumerate() {
        let stride = dim(lw, arr, field::STRIDES, d as u32)?;
        let term = lw.b.build_int_mul(i, stride, "").map_err(llvm_err)?;
        off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
    }
    // SAFETY (of the generated code): the offset is within the array for valid indices.
    unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), data, &[off], "item")
            .map_err(llvm_err)
    }
}

/// The element or view of `arr` (of type `t`) at `idx`, of type `ret`.
fn at<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    idx: &[IntValue<'ctx>],
    ret: TypeId,
) -> R<BasicValueEnum<'ctx>> {
    let p = offset(lw, t, arr, idx)?;
    if !ret.is_array() {
        return super::array_ops::load_elem(lw, ret, p);
    }
    // A view over the remaining axes: same owner, data moved, leading axes dropped.
    let (n, k) = (ndim(t), idx.len() as u32);
    let st = array_struct(lw.ctx, n - k);
    let i64t = lw.ctx.i64_type();
    let mut out = st.get_undef();
    for f in [field::MEMINFO, field::PARENT, field::ITEMSIZE] {
        let x = lw.b.build_extract_value(arr, f, "").map_err(llvm_err)?;
        out =
            lw.b.build_insert_value(out, x, f, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    out =
        lw.b.build_insert_value(out, p, field::DATA, "")
            .map_err(llvm_err)?
            .into_struct_value();
    let mut nitems = i64t.const_int(1, false);
    for f in [field::SHAPE, field::STRIDES] {
        let mut dims = i64t.array_type(n - k).get_undef();
        for d in k..n {
            let x = dim(lw, arr, f, d)?;
            if f == field::SHAPE {
                nitems = lw.b.build_int_mul(nitems, x, "").map_err(llvm_err)?;
            }
            dims =
                lw.b.build_insert_value(dims, x, d - k, "")
                    .map_err(llvm_err)?
                    .into_array_value();
        }
        out =
            lw.b.build_insert_value(out, dims, f, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(lw
        .b
        .build_insert_value(out, nitems, field::NITEMS, "")
        .map_err(llvm_err)?
        .into_struct_value()
        .into())
}

fn getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let idx = indices(lw, sig.args[1], a[1])?;
    at(lw, sig.args[0], a[0].into_struct_value(), &idx, sig.ret)
}

fn setitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let Type::Array {
        dtype, readonly, ..
    } = sig.args[0].get()
    else {
        return Err(lw.unsupported("setitem on a non-array"));
    };
    if readonly {
        return Err(lw.unsupported("cannot assign to a read-only array"));
    }
    let idx = indices(lw, sig.args[1], a[1])?;
    if idx.len() as u32 != ndim(sig.args[0]) {
        // A sub-array: every element of it gets the value.
        return super::indexing::setitem_basic(lw, sig, a);
    }
    let p = offset(lw, sig.args[0], a[0].into_struct_value(), &idx)?;
    let v = lw.cast(a[2], sig.args[2], dtype)?;
    super::array_ops::store_elem(lw, dtype, p, v)?;
    Ok(lw.ghost())
}

/// An array's data pointer.
fn data_pointer<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.b.build_extract_value(a[0].into_struct_value(), field::DATA, "data")
        .map_err(llvm_err)
}

fn attribute<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let arr = a[0].into_struct_value();
    let n = ndim(sig.args[0]);
    let i64t = lw.ctx.i64_type();
    let ImplKey::GetAttr(attr) = &sig.key else {
        return Err(lw.unsupported("array attribute"));
    };
    let get = |lw: &FnLower<'ctx, '_>, f| -> R<IntValue<'ctx>> {
        Ok(lw
            .b
            .build_extract_value(arr, f, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    Ok(match attr.as_str() {
        "shape" | "strides" => {
            let f = if attr == "shape" {
                field::SHAPE
            } else {
                field::STRIDES
            };
            let mut vals = Vec::new();
            for d in 0..n {
                vals.push(dim(lw, arr, f, d)?.into());
            }
            lw.make_struct(sig.ret, &vals)?
        }
        "ndim" => i64t.const_int(u64::from(n), false).into(),
        "size" => get(lw, field::NITEMS)?.into(),
        "itemsize" => get(lw, field::ITEMSIZE)?.into(),
        _ => {
            let items = get(lw, field::NITEMS)?;
            let size = get(lw, field::ITEMSIZE)?;
            lw.b.build_int_mul(items, size, "nbytes")
                .map_err(llvm_err)?
                .into()
        }
    })
}

fn len<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    Ok(dim(lw, a[0].into_struct_value(), field::SHAPE, 0)?.into())
}

pub(super) fn getiter<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "array_iter")?;
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, lw.ctx.i64_type().const_zero())
        .map_err(llvm_err)?;
    let pa =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pa, a[0]).map_err(llvm_err)?;
    Ok(storage.into())
}

fn iternext<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::ArrayIter(arr_t) = t.get() else {
        return Err(lw.unsupported("expected an array iterator"));
    };
    let (i, valid, arr) = step_cursor(lw, t, a[0], arr_t, |lw, arr| dim(lw, arr, field::SHAPE, 0))?;
    let i64t = lw.ctx.i64_type();
    // An exhausted iterator still reads inside the array (its first item, when any).
    let safe =
        lw.b.build_select(valid, i, i64t.const_zero(), "")
            .map_err(llvm_err)?
            .into_int_value();
    let members = crate::model::members(sig.ret);
    let v = at(lw, arr_t, arr, &[safe], members[0])?;
    lw.make_struct(sig.ret, &[v, valid.into()])
}

/// One step of an iterator whose state is `[index, array]` (arrays, `a.flat`,
/// `np.ndenumerate`): loads the index `i` and the array, and stores `i + 1` back when
/// `i < bound(array)`. Returns `(i, i < bound, array)`.
pub(super) fn step_cursor<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    iter_t: TypeId,
    state: BasicValueEnum<'ctx>,
    arr_t: TypeId,
    bound: impl Fn(&mut FnLower<'ctx, '_>, StructValue<'ctx>) -> R<IntValue<'ctx>>,
) -> R<(IntValue<'ctx>, IntValue<'ctx>, StructValue<'ctx>)> {
    let st = iterator_storage(lw.ctx, iter_t)?;
    let storage = state.into_pointer_value();
    let i64t = lw.ctx.i64_type();
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    let pa =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    let i =
        lw.b.build_load(i64t, pi, "")
            .map_err(llvm_err)?
            .into_int_value();
    let arr =
        lw.b.build_load(array_struct(lw.ctx, ndim(arr_t)), pa, "")
            .map_err(llvm_err)?
            .into_struct_value();
    let n = bound(lw, arr)?;
    let valid =
        lw.b.build_int_compare(IntPredicate::SLT, i, n, "")
            .map_err(llvm_err)?;
    let next =
        lw.b.build_int_add(i, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    let newi = lw.b.build_select(valid, next, i, "").map_err(llvm_err)?;
    lw.b.build_store(pi, newi).map_err(llvm_err)?;
    Ok((i, valid, arr))
}

/// The size in bytes of one element of `dtype` in memory (numba-typeinfer's one
/// definition: bools a byte, character items their units, records and nested arrays
/// their bytes).
pub(super) fn itemsize(dtype: TypeId) -> u64 {
    numba_typeinfer::records::field_size(dtype)
}

/// A new C-contiguous array of type `t` and shape `dims`, its memory from the NRT
/// (`NRT_MemInfo_alloc`, 32-byte aligned as Numba's), uninitialised.
pub(crate) fn allocate<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    dims: &[IntValue<'ctx>],
) -> R<StructValue<'ctx>> {
    build_array(lw, t, dims, true)
}

/// An array of type `t` and shape `dims` with no storage (null data and MemInfo, which
/// NRT's decref ignores): what a parfor whose temporary array was removed keeps for the
/// shape. The same size checks as [`allocate`].
pub(crate) fn shape_only<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    dims: &[IntValue<'ctx>],
) -> R<StructValue<'ctx>> {
    build_array(lw, t, dims, false)
}

fn build_array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    dims: &[IntValue<'ctx>],
    storage: bool,
) -> R<StructValue<'ctx>> {
    let Type::Array { dtype, layout, .. } = t.get() else {
        return Err(lw.unsupported("allocating a non-array"));
    };
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let size = i64t.const_int(itemsize(dtype), false);
    let mut nitems = i64t.const_int(1, false);
    // Sizes multiply with overflow checks: a wrapped size would allocate too little.
    let umul = lw.intrinsic("llvm.umul.with.overflow", &[i64t.into()])?;
    let mut overflow = lw.ctx.bool_type().const_zero();
    let mut mul = |lw: &mut FnLower<'ctx, '_>, x: IntValue<'ctx>, y: IntValue<'ctx>| {
        let r = lw
            .call_value(umul, &[x.into(), y.into()])?
            .into_struct_value();
        let v =
            lw.b.build_extract_value(r, 0, "")
                .map_err(llvm_err)?
                .into_int_value();
        let o =
            lw.b.build_extract_value(r, 1, "")
                .map_err(llvm_err)?
                .into_int_value();
        overflow = lw.b.build_or(overflow, o, "").map_err(llvm_err)?;
        Ok::<_, crate::LowerError>(v)
    };
    for &d in dims {
        let neg =
            lw.b.build_int_compare(IntPredicate::SLT, d, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(neg, "ValueError", &["negative dimensions not allowed"])?;
        nitems = mul(lw, nitems, d)?;
    }
    let nbytes = mul(lw, nitems, size)?;
    // Beyond isize::MAX bytes is too big as well, as NumPy has it.
    let negative =
        lw.b.build_int_compare(IntPredicate::SLT, nbytes, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let too_big = lw.b.build_or(overflow, negative, "").map_err(llvm_err)?;
    lw.raise_const_if(
        too_big,
        "ValueError",
        &["array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size."],
    )?;
    let (mi, data) = if storage {
        let alloc = lw.runtime_fn(
            "NRT_MemInfo_alloc",
            ptr.fn_type(&[i64t.into(), i64t.into()], false),
        );
        let mi = lw
            .call_value(alloc, &[nbytes.into(), i64t.const_int(32, false).into()])?
            .into_pointer_value();
        let failed = lw.b.build_is_null(mi, "").map_err(llvm_err)?;
        lw.raise_const_if(
            failed,
            "MemoryError",
            &["Allocation failed (probably too large)."],
        )?;
        let data_fn = lw.runtime_fn("NRT_MemInfo_data", ptr.fn_type(&[ptr.into()], false));
        (mi, lw.call_value(data_fn, &[mi.into()])?)
    } else {
        (ptr.const_null(), ptr.const_null().into())
    };
    // C order (the last axis contiguous) unless the type says F (the first axis).
    let n = dims.len();
    let mut strides = vec![size; n];
    if layout == numba_typeinfer::types::Layout::F {
        for d in 1..n {
            strides[d] =
                lw.b.build_int_mul(strides[d - 1], dims[d - 1], "")
                    .map_err(llvm_err)?;
        }
    } else {
        for d in (0..n.saturating_sub(1)).rev() {
            strides[d] =
                lw.b.build_int_mul(strides[d + 1], dims[d + 1], "")
                    .map_err(llvm_err)?;
        }
    }
    let st = array_struct(lw.ctx, n as u32);
    let mut shape_a = i64t.array_type(n as u32).get_undef();
    let mut strides_a = i64t.array_type(n as u32).get_undef();
    for d in 0..n {
        shape_a =
            lw.b.build_insert_value(shape_a, dims[d], d as u32, "")
                .map_err(llvm_err)?
                .into_array_value();
        strides_a =
            lw.b.build_insert_value(strides_a, strides[d], d as u32, "")
                .map_err(llvm_err)?
                .into_array_value();
    }
    let fields: [BasicValueEnum<'ctx>; 7] = [
        mi.into(),
        ptr.const_null().into(),
        nitems.into(),
        size.into(),
        data,
        shape_a.into(),
        strides_a.into(),
    ];
    let mut out = st.get_undef();
    for (i, f) in fields.into_iter().enumerate() {
        out =
            lw.b.build_insert_value(out, f, i as u32, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(out)
}

/// `np.empty(shape[, dtype])`, `np.zeros(...)`, `np.ones(...)`.
fn create<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dims = indices(lw, sig.args[0], a[0])?;
    let arr = allocate(lw, sig.ret, &dims)?;
    let Type::Array { dtype, .. } = sig.ret.get() else {
        return Err(lw.unsupported("array creation"));
    };
    let name = match &sig.key {
        ImplKey::Function(k) => k.as_str(),
        _ => "",
    };
    let i64t = lw.ctx.i64_type();
    let data = data_ptr(lw, arr)?;
    let nitems =
        lw.b.build_extract_value(arr, field::NITEMS, "")
            .map_err(llvm_err)?
            .into_int_value();
    match name {
        "numpy.zeros" => {
            let nbytes =
                lw.b.build_int_mul(nitems, i64t.const_int(itemsize(dtype), false), "")
                    .map_err(llvm_err)?;
            lw.b.build_memset(data, 32, lw.ctx.i8_type().const_zero(), nbytes)
                .map_err(llvm_err)?;
        }
        "numpy.ones" => {
            let one = lw.cast(i64t.const_int(1, false).into(), INT64, dtype)?;
            let m = model_of(dtype)?;
            let one = m.store_memory(lw.ctx, &lw.b, dtype, one)?;
            let elem_t = m.memory_type(lw.ctx, dtype)?;
            // for i in 0..nitems: data[i] = 1
            let pre =
                lw.b.get_insert_block()
                    .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
            let head = lw.new_block("ones.head");
            let body = lw.new_block("ones.body");
            let done = lw.new_block("ones.done");
            lw.b.build_unconditional_branch(head).map_err(llvm_err)?;
            lw.b.position_at_end(head);
            let i = lw.b.build_phi(i64t, "i").map_err(llvm_err)?;
            let iv = i.as_basic_value().into_int_value();
            let more =
                lw.b.build_int_compare(IntPredicate::SLT, iv, nitems, "")
                    .map_err(llvm_err)?;
            lw.b.build_conditional_branch(more, body, done)
                .map_err(llvm_err)?;
            lw.b.position_at_end(body);
            // SAFETY (of the generated code): i < nitems.
            let p = unsafe {
                lw.b.build_in_bounds_gep(elem_t, data, &[iv], "")
                    .map_err(llvm_err)?
            };
            lw.b.build_store(p, one).map_err(llvm_err)?;
            let next =
                lw.b.build_int_add(iv, i64t.const_int(1, false), "")
                    .map_err(llvm_err)?;
            lw.b.build_unconditional_branch(head).map_err(llvm_err)?;
            i.add_incoming(&[(&i64t.const_zero(), pre), (&next, body)]);
            lw.b.position_at_end(done);
        }
        _ => {}
    }
    Ok(arr.into())
}
