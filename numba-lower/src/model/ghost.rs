//! Types with no runtime data (None, modules, functions, classes, literal strings): an
//! empty struct in registers and nothing across the boundary.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{LowerError, R};

pub struct GhostModel;

impl DataModel for GhostModel {
    fn is_ghost(&self) -> bool {
        true
    }
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.struct_type(&[], false).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        match t.get() {
            // A jitted function passed as an argument is known by its type.
            Type::NoneType | Type::Omitted(_) | Type::Dispatcher { .. } => Ok(Shape::None),
            // A number class or dtype (`np.int32`, `np.dtype('f4')`), `...`: known by
            // their type.
            Type::StringLiteral(_)
            | Type::SliceLiteral(..)
            | Type::NumberClass(_)
            | Type::DType(_)
            | Type::Ellipsis => Ok(Shape::Literal(t)),
            _ => Err(LowerError::Unsupported {
                message: format!("values of type {t} cannot cross into Python"),
                line: 0,
            }),
        }
    }
    fn pack<'ctx>(
        &self,
        _c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        _v: BasicValueEnum<'ctx>,
        _idx: &mut u32,
    ) -> R<()> {
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        _idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        Ok(c.ctx.const_struct(&[], false).into())
    }
}
