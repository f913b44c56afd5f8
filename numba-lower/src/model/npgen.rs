//! `numpy.random.Generator` values (`NumPyRandomGeneratorType`): the address of the
//! Generator's bit generator (NumPy's `bitgen_t`, whose state the draws advance in
//! place) and the Python Generator object, borrowed from the caller for the call.
//! Across the boundary: those two slots; a result is the same Python object.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::pointer::PointerModel;
use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, R};

pub struct NpGeneratorModel;

impl DataModel for NpGeneratorModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let p = ctx.ptr_type(AddressSpace::default());
        Ok(ctx.struct_type(&[p.into(), p.into()], false).into())
    }
    fn shape(&self, _t: TypeId) -> R<Shape> {
        Ok(Shape::NpGenerator)
    }
    // Two slots, each a pointer in the pointer model's codec.
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let sv = v.into_struct_value();
        for k in 0..2 {
            let p = c.b.build_extract_value(sv, k, "").map_err(llvm_err)?;
            PointerModel.pack(c, t, p, idx)?;
        }
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let mut out = self.value_type(c.ctx, t)?.into_struct_type().get_undef();
        for k in 0..2 {
            let p = PointerModel.unpack(c, t, idx)?;
            out =
                c.b.build_insert_value(out, p, k, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        Ok(out.into())
    }
}
