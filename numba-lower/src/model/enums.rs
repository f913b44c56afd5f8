//! Enum members: their integer value (`i64`); at the boundary one slot that Python turns
//! back into the member of the enum class.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{model_of, DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::R;

pub struct EnumMemberModel;

impl DataModel for EnumMemberModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.i64_type().into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        let class = match t.get() {
            Type::EnumMember { class, .. } => class,
            _ => String::new(),
        };
        Ok(Shape::Enum(class))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        model_of(INT64)?.pack(c, INT64, v, idx)
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        model_of(INT64)?.unpack(c, INT64, idx)
    }
}
