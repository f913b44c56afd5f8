//! Records (items of NumPy structured arrays, Numba's `Record`): a value is the address
//! of the item's bytes, as Numba's record model is, so a field written through it lands
//! in the array. In memory (an array's items) a record is its `size` bytes; across the
//! CPython boundary it is one slot holding the address (an argument's `np.void` data;
//! a result is copied into a new `np.void` by the receiver).

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, R};

pub struct RecordModel;

/// The type of one record item as an array stores it: `[size x i8]`.
pub fn storage_type(ctx: &Context, t: TypeId) -> BasicTypeEnum<'_> {
    let size = numba_typeinfer::records::size(t).unwrap_or(1);
    ctx.i8_type().array_type(size).into()
}

impl DataModel for RecordModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.ptr_type(AddressSpace::default()).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Ok(Shape::Record(t))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let w =
            c.b.build_ptr_to_int(v.into_pointer_value(), c.ctx.i64_type(), "")
                .map_err(llvm_err)?;
        c.b.build_store(c.slot(*idx)?, w).map_err(llvm_err)?;
        *idx += 1;
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let raw =
            c.b.build_load(c.ctx.i64_type(), c.slot(*idx)?, "")
                .map_err(llvm_err)?
                .into_int_value();
        *idx += 1;
        Ok(c.b
            .build_int_to_ptr(raw, c.ctx.ptr_type(AddressSpace::default()), "")
            .map_err(llvm_err)?
            .into())
    }
}
