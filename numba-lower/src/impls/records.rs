//! Records (items of NumPy structured arrays; typing in `numba_typeinfer::records`): a
//! field read or written at its offset from the record's address, a nested array field
//! viewed as a C array over the record's bytes, one field of an array of records viewed
//! as a strided array.
//!
//! Fields of a packed dtype need not be aligned, so their loads and stores say
//! alignment 1.

use inkwell::values::{BasicValueEnum, InstructionValue, PointerValue, StructValue};
use numba_typeinfer::records;
use numba_typeinfer::types::*;

use super::array_ops::view_with;
use crate::function::FnLower;
use crate::model::array::{array_struct, field, ndim};
use crate::model::model_of;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};
use inkwell::values::BasicValue;
use numba_typeinfer::signature::{ImplKey, Signature};

fn string_literal(t: TypeId) -> bool {
    matches!(t.get(), Type::StringLiteral(_))
}

fn record_array(t: TypeId) -> bool {
    matches!(t.get(), Type::Array { dtype, .. } if records::is_record(dtype))
}

pub(crate) fn register(r: &mut Registry) {
    let rec = || TypePat::Pred(records::is_record);
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![rec(), TypePat::Pred(string_literal)]),
        getitem,
    );
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![rec(), TypePat::Pred(string_literal), TypePat::Any]),
        setitem,
    );
    r.register(
        ImplKey::SetAttr(String::new()),
        Args::Exact(vec![rec(), TypePat::Any]),
        setattr,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![
            TypePat::Pred(record_array),
            TypePat::Pred(string_literal),
        ]),
        array_getitem,
    );
}

fn name_of(t: TypeId) -> String {
    match t.get() {
        Type::StringLiteral(s) => s,
        _ => String::new(),
    }
}

fn field_of(lw: &FnLower<'_, '_>, rec_t: TypeId, name: &str) -> R<RecordField> {
    records::field(rec_t, name)
        .ok_or_else(|| lw.unsupported(format!("no field '{name}' in {rec_t}")))
}

/// The address of a field: `offset` bytes into the record.
fn field_ptr<'ctx>(
    lw: &FnLower<'ctx, '_>,
    rec: PointerValue<'ctx>,
    offset: u32,
) -> R<PointerValue<'ctx>> {
    let off = lw.ctx.i64_type().const_int(u64::from(offset), false);
    // SAFETY (of the generated code): the offset is inside the record's bytes.
    unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), rec, &[off], "field")
            .map_err(llvm_err)
    }
}

fn unaligned(inst: Option<InstructionValue<'_>>) -> R<()> {
    if let Some(i) = inst {
        i.set_alignment(1)
            .map_err(|e| crate::LowerError::Llvm(e.to_string()))?;
    }
    Ok(())
}

/// The byte strides of a C-ordered block of `shape` items of `item` bytes.
fn c_strides(item: u64, shape: &[u32]) -> Vec<u64> {
    let mut strides = vec![0u64; shape.len()];
    let mut acc = item;
    for d in (0..shape.len()).rev() {
        strides[d] = acc;
        acc *= u64::from(shape[d]);
    }
    strides
}

/// A C-ordered array struct over a nested array field at `p` (no owner: the record's
/// memory outlives it while the record is used).
fn nested_view<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dtype: TypeId,
    shape: &[u32],
    p: PointerValue<'ctx>,
) -> R<StructValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let item = records::field_size(dtype);
    let n = shape.len() as u32;
    let strides = c_strides(item, shape);
    let nitems: u64 = shape.iter().map(|&d| u64::from(d)).product();
    let dims = |v: Vec<u64>| {
        let vals: Vec<_> = v.iter().map(|&x| i64t.const_int(x, false)).collect();
        i64t.const_array(&vals)
    };
    let st = array_struct(lw.ctx, n);
    let mut out = st.get_undef();
    let fields: [(u32, BasicValueEnum<'ctx>); 7] = [
        (field::MEMINFO, ptr.const_null().into()),
        (field::PARENT, ptr.const_null().into()),
        (field::NITEMS, i64t.const_int(nitems, false).into()),
        (field::ITEMSIZE, i64t.const_int(item, false).into()),
        (field::DATA, p.into()),
        (
            field::SHAPE,
            dims(shape.iter().map(|&d| u64::from(d)).collect()).into(),
        ),
        (field::STRIDES, dims(strides).into()),
    ];
    for (f, v) in fields {
        out =
            lw.b.build_insert_value(out, v, f, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(out)
}

/// The value of field `f` of the record at `rec`.
pub(crate) fn read_field<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    rec: PointerValue<'ctx>,
    f: &RecordField,
) -> R<BasicValueEnum<'ctx>> {
    let p = field_ptr(lw, rec, f.offset)?;
    match f.ty.get() {
        Type::NestedArray { dtype, shape } => Ok(nested_view(lw, dtype, &shape, p)?.into()),
        // A nested record: a reference to its bytes.
        Type::Record { .. } => Ok(p.into()),
        _ => {
            let m = model_of(f.ty)?;
            let v =
                lw.b.build_load(m.memory_type(lw.ctx, f.ty)?, p, &f.name)
                    .map_err(llvm_err)?;
            unaligned(v.as_instruction_value())?;
            m.load_memory(lw.ctx, &lw.b, f.ty, v)
        }
    }
}

/// Store `v` (of type `vt`) into field `f` of the record at `rec`.
pub(crate) fn write_field<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    rec: PointerValue<'ctx>,
    f: &RecordField,
    v: BasicValueEnum<'ctx>,
    vt: TypeId,
) -> R<()> {
    let p = field_ptr(lw, rec, f.offset)?;
    match f.ty.get() {
        Type::NestedArray { dtype, shape } => {
            // An array (broadcast) or a scalar written into every element.
            let view = nested_view(lw, dtype, &shape, p)?;
            let view_t = records::value_type(f.ty);
            super::indexing::assign_into(lw, view_t, view, vt, v)
        }
        Type::Record { size, .. } => {
            let n = lw.ctx.i64_type().const_int(u64::from(size), false);
            lw.b.build_memmove(p, 1, v.into_pointer_value(), 1, n)
                .map_err(llvm_err)?;
            Ok(())
        }
        _ => {
            let x = lw.cast(v, vt, f.ty)?;
            let m = model_of(f.ty)?;
            let x = m.store_memory(lw.ctx, &lw.b, f.ty, x)?;
            let st = lw.b.build_store(p, x).map_err(llvm_err)?;
            unaligned(Some(st))
        }
    }
}

fn getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let f = field_of(lw, sig.args[0], &name_of(sig.args[1]))?;
    read_field(lw, a[0].into_pointer_value(), &f)
}

fn setitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let f = field_of(lw, sig.args[0], &name_of(sig.args[1]))?;
    write_field(lw, a[0].into_pointer_value(), &f, a[2], sig.args[2])?;
    Ok(lw.ghost())
}

fn setattr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::SetAttr(name) = &sig.key else {
        return Err(lw.unsupported("a record store without a field name"));
    };
    let f = field_of(lw, sig.args[0], name)?;
    write_field(lw, a[0].into_pointer_value(), &f, a[1], sig.args[1])?;
    Ok(lw.ghost())
}

/// `a.x` / `a['x']` of an array of records: a view of field `name` (borrowed, as other
/// views are).
pub(crate) fn array_field<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    arr_t: TypeId,
    arr: StructValue<'ctx>,
    name: &str,
) -> R<BasicValueEnum<'ctx>> {
    let Type::Array { dtype, .. } = arr_t.get() else {
        return Err(lw.unsupported("a field view of a non-array"));
    };
    let f = field_of(lw, dtype, name)?;
    let i64t = lw.ctx.i64_type();
    let n = ndim(arr_t);
    let mut shape = Vec::new();
    let mut strides = Vec::new();
    for d in 0..n {
        for (k, out) in [(field::SHAPE, &mut shape), (field::STRIDES, &mut strides)] {
            let dims = lw.b.build_extract_value(arr, k, "").map_err(llvm_err)?;
            let x =
                lw.b.build_extract_value(dims.into_array_value(), d, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            out.push(x);
        }
    }
    let (elem, sub) = match f.ty.get() {
        Type::NestedArray { dtype, shape } => (dtype, shape),
        _ => (f.ty, Vec::new()),
    };
    let item = records::field_size(elem);
    let sub_strides = c_strides(item, &sub);
    for (d, s) in sub.iter().zip(sub_strides) {
        shape.push(i64t.const_int(u64::from(*d), false));
        strides.push(i64t.const_int(s, false));
    }
    let data =
        lw.b.build_extract_value(arr, field::DATA, "")
            .map_err(llvm_err)?
            .into_pointer_value();
    let data = field_ptr(lw, data, f.offset)?;
    let out = view_with(lw, arr, data, &shape, &strides)?;
    Ok(lw
        .b
        .build_insert_value(out, i64t.const_int(item, false), field::ITEMSIZE, "")
        .map_err(llvm_err)?
        .into_struct_value()
        .into())
}

fn array_getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    array_field(
        lw,
        sig.args[0],
        a[0].into_struct_value(),
        &name_of(sig.args[1]),
    )
}
