//! A method bound to its receiver (`z.conjugate`): represented as the receiver itself, so
//! the call passes it as the first argument.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{model_of, DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{LowerError, R};

pub struct BoundModel;

fn this(t: TypeId) -> TypeId {
    match t.get() {
        Type::BoundFunction { this, .. } => super::lowered(this),
        _ => t,
    }
}

impl DataModel for BoundModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        model_of(this(t))?.value_type(ctx, this(t))
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Err(LowerError::Unsupported {
            message: format!("bound methods ({t}) cannot cross into Python"),
            line: 0,
        })
    }
    fn pack<'ctx>(
        &self,
        _c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        _v: BasicValueEnum<'ctx>,
        _idx: &mut u32,
    ) -> R<()> {
        Err(self
            .shape(t)
            .err()
            .unwrap_or(LowerError::Llvm("bound method".into())))
    }
    fn unpack<'ctx>(
        &self,
        _c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        _idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        Err(self
            .shape(t)
            .err()
            .unwrap_or(LowerError::Llvm("bound method".into())))
    }
}
