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

use super::pointer::PointerModel;
use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::R;

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
    // One slot holding the address: the pointer model's codec.
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        PointerModel.pack(c, t, v, idx)
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        PointerModel.unpack(c, t, idx)
    }
}
