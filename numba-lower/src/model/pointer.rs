//! C pointers (`float64*`, `void*`): an LLVM `ptr`; across the CPython boundary the
//! address as an unsigned 64-bit integer.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::{Leaf, Shape};
use crate::{llvm_err, R};

pub struct PointerModel;

impl DataModel for PointerModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.ptr_type(AddressSpace::default()).into())
    }
    fn shape(&self, _t: TypeId) -> R<Shape> {
        Ok(Shape::Leaf(
            Leaf::Int {
                bits: 64,
                signed: false,
            },
            UINT64,
        ))
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
