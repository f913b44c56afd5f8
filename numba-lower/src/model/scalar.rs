//! Booleans, integers and floats: one LLVM scalar each, one boundary slot each.

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::{Leaf, Shape};
use crate::{llvm_err, R};

/// `bool`: `i1` in registers, `i8` in memory.
pub struct BoolModel;
/// Signed and unsigned integers of 8 to 64 bits.
pub struct IntModel;
/// `float32` / `float64` (and `float16`).
pub struct FloatModel;

impl DataModel for BoolModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.bool_type().into())
    }
    fn memory_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.i8_type().into())
    }
    fn store_memory<'ctx>(
        &self,
        ctx: &'ctx Context,
        b: &Builder<'ctx>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        Ok(b.build_int_z_extend(v.into_int_value(), ctx.i8_type(), "")
            .map_err(llvm_err)?
            .into())
    }
    fn load_memory<'ctx>(
        &self,
        ctx: &'ctx Context,
        b: &Builder<'ctx>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        Ok(
            b.build_int_truncate(v.into_int_value(), ctx.bool_type(), "")
                .map_err(llvm_err)?
                .into(),
        )
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Ok(Shape::Leaf(Leaf::Bool, t.unliteral()))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let w =
            c.b.build_int_z_extend(v.into_int_value(), c.ctx.i64_type(), "")
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
        let zero = c.ctx.i64_type().const_zero();
        Ok(c.b
            .build_int_compare(inkwell::IntPredicate::NE, raw, zero, "")
            .map_err(llvm_err)?
            .into())
    }
}

/// The LLVM integer type of `bits` bits.
fn int_type(ctx: &Context, bits: u32) -> inkwell::types::IntType<'_> {
    match bits {
        8 => ctx.i8_type(),
        16 => ctx.i16_type(),
        32 => ctx.i32_type(),
        _ => ctx.i64_type(),
    }
}

fn int_bits(t: TypeId) -> (u32, bool) {
    match t.unliteral().get() {
        Type::Integer { bits, signed } => (u32::from(bits), signed),
        _ => (64, true),
    }
}

impl DataModel for IntModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(int_type(ctx, int_bits(t).0).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        let (bits, signed) = int_bits(t);
        Ok(Shape::Leaf(
            Leaf::Int {
                bits: bits as u8,
                signed,
            },
            t.unliteral(),
        ))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let (bits, signed) = int_bits(t);
        let iv = v.into_int_value();
        let w = if bits == 64 {
            iv
        } else if signed {
            c.b.build_int_s_extend(iv, c.ctx.i64_type(), "")
                .map_err(llvm_err)?
        } else {
            c.b.build_int_z_extend(iv, c.ctx.i64_type(), "")
                .map_err(llvm_err)?
        };
        c.b.build_store(c.slot(*idx)?, w).map_err(llvm_err)?;
        *idx += 1;
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let (bits, _) = int_bits(t);
        let raw =
            c.b.build_load(c.ctx.i64_type(), c.slot(*idx)?, "")
                .map_err(llvm_err)?
                .into_int_value();
        *idx += 1;
        if bits == 64 {
            return Ok(raw.into());
        }
        Ok(c.b
            .build_int_truncate(raw, int_type(c.ctx, bits), "")
            .map_err(llvm_err)?
            .into())
    }
}

impl DataModel for FloatModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(match t.get() {
            Type::Float { bits: 16 } => ctx.f16_type().into(),
            Type::Float { bits: 32 } => ctx.f32_type().into(),
            _ => ctx.f64_type().into(),
        })
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Ok(Shape::Leaf(Leaf::Float, t))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        // Every float crosses as a float64 slot.
        let d =
            c.b.build_float_cast(v.into_float_value(), c.ctx.f64_type(), "")
                .map_err(llvm_err)?;
        c.b.build_store(c.slot(*idx)?, d).map_err(llvm_err)?;
        *idx += 1;
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let d =
            c.b.build_load(c.ctx.f64_type(), c.slot(*idx)?, "")
                .map_err(llvm_err)?
                .into_float_value();
        *idx += 1;
        let ft = self.value_type(c.ctx, t)?.into_float_type();
        Ok(c.b.build_float_cast(d, ft, "").map_err(llvm_err)?.into())
    }
}
