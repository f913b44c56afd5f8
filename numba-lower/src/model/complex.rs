//! `complex64` / `complex128`: `{real, imag}` of the matching float, two boundary slots.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, R};

pub struct ComplexModel;

/// The float type of a complex type's parts.
pub fn part_type(t: TypeId) -> TypeId {
    if t == COMPLEX64 {
        FLOAT32
    } else {
        FLOAT64
    }
}

impl DataModel for ComplexModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let f: BasicTypeEnum = if t == COMPLEX64 {
            ctx.f32_type().into()
        } else {
            ctx.f64_type().into()
        };
        Ok(ctx.struct_type(&[f, f], false).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Ok(Shape::Complex(t))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let sv = v.into_struct_value();
        for i in 0..2 {
            let part = c.b.build_extract_value(sv, i, "").map_err(llvm_err)?;
            let d =
                c.b.build_float_cast(part.into_float_value(), c.ctx.f64_type(), "")
                    .map_err(llvm_err)?;
            c.b.build_store(c.slot(*idx)?, d).map_err(llvm_err)?;
            *idx += 1;
        }
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let st = self.value_type(c.ctx, t)?.into_struct_type();
        let ft = super::value_type(c.ctx, part_type(t))?.into_float_type();
        let mut agg = st.get_undef();
        for i in 0..2 {
            let d =
                c.b.build_load(c.ctx.f64_type(), c.slot(*idx)?, "")
                    .map_err(llvm_err)?
                    .into_float_value();
            *idx += 1;
            let p = c.b.build_float_cast(d, ft, "").map_err(llvm_err)?;
            agg =
                c.b.build_insert_value(agg, p, i, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        Ok(agg.into())
    }
}
