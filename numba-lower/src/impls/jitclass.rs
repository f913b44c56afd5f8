//! Jitclass instances (`numba_typeinfer::jitclass`): a reference to a one-item list
//! payload (`crate::lists`) whose item is the record of the fields, each in its
//! boundary slot form. The payload's reference map releases the fields when the last
//! reference goes; numba-py reads and writes fields from Python with the same slot
//! codec.

use inkwell::values::{BasicValueEnum, PointerValue};
use inkwell::AddressSpace;
use numba_typeinfer::jitclass;
use numba_typeinfer::types::*;
use numba_typeinfer::ImplKey;

use crate::callconv::boundary_shape;
use crate::function::FnLower;
use crate::lists::offset;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, LowerError, R};

/// The field of an instance value (`model::list`'s layout) holding the record's address
/// (a list's Python parent slot, which instances do not use).
pub const RECORD: u32 = crate::model::list::field::PARENT;

/// The record type of an instance type: the tuple of its fields' types.
pub fn record_type(inst: TypeId) -> Option<TypeId> {
    let info = jitclass::info(inst)?;
    let tys: Vec<TypeId> = info.fields.iter().map(|(_, t)| *t).collect();
    Some(numba_typeinfer::types::tuple_of(&tys))
}

/// The slot (word) offset of field `i` in the record, and the field's type.
pub fn field_slot(inst: TypeId, attr: &str) -> R<Option<(u64, TypeId)>> {
    let Some(info) = jitclass::info(inst) else {
        return Ok(None);
    };
    let mut at = 0u64;
    for (name, t) in &info.fields {
        if name == attr {
            return Ok(Some((at, *t)));
        }
        at += boundary_shape(*t)?.slots() as u64;
    }
    Ok(None)
}

impl<'ctx> FnLower<'ctx, '_> {
    /// The address of field `attr` of instance `v`, and the field's type.
    fn field_ptr(
        &self,
        inst: TypeId,
        v: BasicValueEnum<'ctx>,
        attr: &str,
    ) -> R<(PointerValue<'ctx>, TypeId)> {
        let (slot, t) = field_slot(inst, attr)?.ok_or_else(|| LowerError::Unsupported {
            message: format!("{inst} has no field '{attr}'"),
            line: self.line,
        })?;
        // The value's second word is the record's address (it never moves: the payload
        // holds one item for life), so a field is one offset away, as in Numba's
        // `{meminfo, data}` instances.
        let data = self
            .b
            .build_extract_value(v.into_struct_value(), RECORD, "record")
            .map_err(llvm_err)?
            .into_pointer_value();
        Ok((self.byte_gep(data, slot * 8)?, t))
    }

    /// `obj.attr` of a jitclass instance: the field's value (borrowed).
    pub(crate) fn instance_getattr(
        &self,
        inst: TypeId,
        v: BasicValueEnum<'ctx>,
        attr: &str,
    ) -> R<BasicValueEnum<'ctx>> {
        let (at, t) = self.field_ptr(inst, v, attr)?;
        self.list_read(t, at)
    }

    /// `obj.attr = x`: `x` (of type `xt`) converted to the field's type; the record takes
    /// a reference to it and releases the value it held.
    pub(crate) fn instance_setattr(
        &mut self,
        inst: TypeId,
        v: BasicValueEnum<'ctx>,
        attr: &str,
        x: BasicValueEnum<'ctx>,
        xt: TypeId,
    ) -> R<()> {
        let (at, t) = self.field_ptr(inst, v, attr)?;
        // A conversion's new value is the statement's temporary (released after it):
        // the record takes a reference of its own either way.
        let new = self.cast(x, xt, t)?;
        let new = self.own_ref(t, new)?;
        let old = self.list_read(t, at)?;
        self.list_write(t, at, new)?;
        self.decref(t, old)
    }
}

pub(crate) fn register(r: &mut Registry) {
    // `_new(instance_type)`: an instance whose fields are all zero (null references,
    // absent optionals), which `__init__` then fills.
    r.register(
        ImplKey::Function(jitclass::NEW.into()),
        Args::Exact(vec![TypePat::Any]),
        |lw, sig, _| {
            let inst = sig.ret;
            let record = record_type(inst).ok_or_else(|| {
                lw.unsupported(format!("{inst} is not a registered jitclass instance"))
            })?;
            let i64t = lw.ctx.i64_type();
            let ptr = lw.ctx.ptr_type(AddressSpace::default());
            let f = lw.runtime_fn(
                "numba_rs_record_new",
                ptr.fn_type(&[i64t.into(), ptr.into()], false),
            );
            let bytes = i64t.const_int(lw.item_bytes(record)?, false);
            let refs = lw.ref_map_ptr(record)?;
            let mi = lw
                .call_value(f, &[bytes.into(), refs.into()])?
                .into_pointer_value();
            let v = lw.list_value(mi)?;
            let p = lw.list_payload(v)?;
            let at = lw.byte_gep(p, offset::DATA)?;
            let data =
                lw.b.build_load(ptr, at, "record")
                    .map_err(llvm_err)?
                    .into_pointer_value();
            Ok(lw
                .b
                .build_insert_value(v.into_struct_value(), data, RECORD, "")
                .map_err(llvm_err)?
                .into_struct_value()
                .into())
        },
    );
}
