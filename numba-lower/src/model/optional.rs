//! `OptionalType(T)`: `{i1 valid, T}`; across the boundary a flag slot then T's slots.

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{model_of, DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, R};

pub struct OptionalModel;

/// The type an optional wraps.
pub fn inner(t: TypeId) -> TypeId {
    match t.get() {
        Type::Optional(x) => x,
        _ => t,
    }
}

impl DataModel for OptionalModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let v = super::value_type(ctx, inner(t))?;
        Ok(ctx.struct_type(&[ctx.bool_type().into(), v], false).into())
    }
    fn memory_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let v = super::memory_type(ctx, inner(t))?;
        Ok(ctx.struct_type(&[ctx.i8_type().into(), v], false).into())
    }
    fn store_memory<'ctx>(
        &self,
        ctx: &'ctx Context,
        b: &Builder<'ctx>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let sv = v.into_struct_value();
        let flag = b.build_extract_value(sv, 0, "").map_err(llvm_err)?;
        let flag = b
            .build_int_z_extend(flag.into_int_value(), ctx.i8_type(), "")
            .map_err(llvm_err)?;
        let x = b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
        let x = model_of(inner(t))?.store_memory(ctx, b, inner(t), x)?;
        let st = self.memory_type(ctx, t)?.into_struct_type();
        let out = b
            .build_insert_value(st.get_undef(), flag, 0, "")
            .map_err(llvm_err)?;
        Ok(b.build_insert_value(out, x, 1, "")
            .map_err(llvm_err)?
            .into_struct_value()
            .into())
    }
    fn load_memory<'ctx>(
        &self,
        ctx: &'ctx Context,
        b: &Builder<'ctx>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let sv = v.into_struct_value();
        let flag = b.build_extract_value(sv, 0, "").map_err(llvm_err)?;
        let flag = b
            .build_int_truncate(flag.into_int_value(), ctx.bool_type(), "")
            .map_err(llvm_err)?;
        let x = b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
        let x = model_of(inner(t))?.load_memory(ctx, b, inner(t), x)?;
        let st = self.value_type(ctx, t)?.into_struct_type();
        let out = b
            .build_insert_value(st.get_undef(), flag, 0, "")
            .map_err(llvm_err)?;
        Ok(b.build_insert_value(out, x, 1, "")
            .map_err(llvm_err)?
            .into_struct_value()
            .into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        let x = inner(t);
        Ok(Shape::Optional(Box::new(model_of(x)?.shape(x)?)))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let sv = v.into_struct_value();
        let flag = c.b.build_extract_value(sv, 0, "").map_err(llvm_err)?;
        model_of(BOOLEAN)?.pack(c, BOOLEAN, flag, idx)?;
        let x = c.b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
        model_of(inner(t))?.pack(c, inner(t), x, idx)
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let flag = model_of(BOOLEAN)?.unpack(c, BOOLEAN, idx)?;
        let x = model_of(inner(t))?.unpack(c, inner(t), idx)?;
        let st = self.value_type(c.ctx, t)?.into_struct_type();
        let out =
            c.b.build_insert_value(st.get_undef(), flag, 0, "")
                .map_err(llvm_err)?;
        Ok(c.b
            .build_insert_value(out, x, 1, "")
            .map_err(llvm_err)?
            .into_struct_value()
            .into())
    }
}
