//! `a.flags`: the two contiguity bits NumPy's flags report (`{i8 c, i8 f}`), computed
//! from the array's shape and strides when `flags` is read.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{LowerError, R};

pub struct FlagsModel;

fn no_boundary(t: TypeId) -> LowerError {
    LowerError::Unsupported {
        message: format!("values of type {t} cannot cross into Python"),
        line: 0,
    }
}

impl DataModel for FlagsModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let i8t = ctx.i8_type().into();
        Ok(ctx.struct_type(&[i8t, i8t], false).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Err(no_boundary(t))
    }
    fn pack<'ctx>(
        &self,
        _c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        _v: BasicValueEnum<'ctx>,
        _idx: &mut u32,
    ) -> R<()> {
        Err(no_boundary(t))
    }
    fn unpack<'ctx>(
        &self,
        _c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        _idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        Err(no_boundary(t))
    }
}
