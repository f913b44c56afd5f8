//! A user's opaque type (Numba's `OpaqueModel`: a `types.Opaque` subclass with no
//! members registered): an untyped pointer, as in Numba, whose value the type's own
//! code gives meaning (a handle its unbox code made, or null: Numba's dummy value). It
//! crosses the CPython boundary only through the host's box and unbox code
//! ([`Shape::Boxed`]), as the pointer in one slot.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::pointer::PointerModel;
use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::R;

pub struct OpaqueModel;

impl DataModel for OpaqueModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        PointerModel.value_type(ctx, t)
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Ok(Shape::Boxed {
            t,
            items: vec![PointerModel.shape(intern(Type::VoidPtr))?],
        })
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        PointerModel.pack(c, intern(Type::VoidPtr), v, idx)
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        PointerModel.unpack(c, intern(Type::VoidPtr), idx)
    }
}
