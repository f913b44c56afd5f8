//! `list(T)`, `set(T)` and `DictType[K,V]` (and a dict's views, which are the dict), one
//! layout for all: the
//! container's NRT MemInfo (for a set, its data is `crate::sets`'s payload), and for a
//! list: its NRT MemInfo, whose data is the payload
//! of `crate::lists` (size, capacity, items in their boundary slot form), and the Python
//! list it was unboxed from (null when none: a reflected argument's changes are written
//! back to it). Across the boundary: the two fields, one slot each.

use inkwell::context::Context;
use inkwell::types::{BasicTypeEnum, StructType};
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, LowerError, R};

/// Field indices.
pub mod field {
    pub const MEMINFO: u32 = 0;
    pub const PARENT: u32 = 1;
}

/// The LLVM struct of a list value.
pub fn struct_type(ctx: &Context) -> StructType<'_> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    ctx.struct_type(&[ptr.into(), ptr.into()], false)
}

pub struct ListModel;

impl DataModel for ListModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(struct_type(ctx).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        if let Type::Dict { key, value } = t.get() {
            let part = |p: TypeId| {
                crate::callconv::boundary_shape(p).map_err(|_| LowerError::Unsupported {
                    message: format!("dicts of {p} are not supported by numba-rs yet"),
                    line: 0,
                })
            };
            return Ok(Shape::Dict {
                key: Box::new(part(key)?),
                value: Box::new(part(value)?),
                dict: t,
            });
        }
        // A jitclass instance crosses by reference (numba-py's proxy holds its MemInfo).
        if let Type::ClassInstance { .. } = t.get() {
            return Ok(Shape::Instance(t));
        }
        if let Type::DictView { .. } = t.get() {
            return Err(LowerError::Unsupported {
                message: format!("dict views ({t}) cannot cross into Python"),
                line: 0,
            });
        }
        let (dtype, reflected, set, typed) = match t.get() {
            Type::List {
                dtype,
                reflected,
                typed,
            } => (dtype, reflected, false, typed),
            Type::Set { dtype, reflected } => (dtype, reflected, true, false),
            _ => return Err(LowerError::Llvm(format!("{t} is not a list or a set"))),
        };
        let item = crate::callconv::boundary_shape(dtype).map_err(|_| LowerError::Unsupported {
            message: format!("containers of {dtype} are not supported by numba-rs yet"),
            line: 0,
        })?;
        let item = Box::new(item);
        Ok(if set {
            Shape::Set {
                item,
                dtype,
                reflected,
            }
        } else {
            Shape::List {
                item,
                dtype,
                reflected,
                typed,
            }
        })
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let sv = v.into_struct_value();
        let i64t = c.ctx.i64_type();
        for f in 0..2 {
            let p = c.b.build_extract_value(sv, f, "").map_err(llvm_err)?;
            let w =
                c.b.build_ptr_to_int(p.into_pointer_value(), i64t, "")
                    .map_err(llvm_err)?;
            c.b.build_store(c.slot(*idx + f)?, w).map_err(llvm_err)?;
        }
        *idx += 2;
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let mut sv = struct_type(c.ctx).get_undef();
        let ptr = c.ctx.ptr_type(AddressSpace::default());
        for f in 0..2 {
            let raw =
                c.b.build_load(c.ctx.i64_type(), c.slot(*idx + f)?, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let p = c.b.build_int_to_ptr(raw, ptr, "").map_err(llvm_err)?;
            sv =
                c.b.build_insert_value(sv, p, f, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        *idx += 2;
        Ok(sv.into())
    }
}
