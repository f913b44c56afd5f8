//! Iterators (`range_iter64`, `enumerate`, `zip`, iterators over tuples): a pointer to
//! state in the function's frame, so copies of an iterator share its position, as in
//! Python. They never cross the CPython boundary.

use inkwell::context::Context;
use inkwell::types::{BasicTypeEnum, StructType};
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{LowerError, R};

pub struct IterModel;

/// The state an iterator points at:
/// - `range_iter64`: `{current, items left, step}` (Numba's `RangeIter` counts down);
/// - `enumerate(it)`: `{count, it}`;
/// - `zip(a, b, ...)`: `{a, b, ...}`;
/// - `iter(UniTuple)`: `{index, tuple}`.
pub fn iterator_storage(ctx: &Context, t: TypeId) -> R<StructType<'_>> {
    let i64t: BasicTypeEnum = ctx.i64_type().into();
    Ok(match t.get() {
        Type::RangeIter64 => ctx.struct_type(&[i64t, i64t, i64t], false),
        Type::Enumerate(inner) => ctx.struct_type(&[i64t, super::value_type(ctx, inner)?], false),
        Type::Zip(inners) => {
            let tys = inners
                .iter()
                .map(|&i| super::value_type(ctx, i))
                .collect::<R<Vec<_>>>()?;
            ctx.struct_type(&tys, false)
        }
        // A dict's (a view's) iterator: position, the dict, its size when iteration
        // began (CPython's "changed size during iteration" check).
        // A typed list's iterator too (Numba's "list was mutated during iteration").
        Type::ArrayIter(src)
            if matches!(
                src.get(),
                Type::Dict { .. } | Type::DictView { .. } | Type::List { typed: true, .. }
            ) =>
        {
            ctx.struct_type(&[i64t, super::value_type(ctx, src)?, i64t], false)
        }
        Type::ArrayIter(src)
            if matches!(
                src.get(),
                Type::UniTuple(..)
                    | Type::NamedUniTuple { .. }
                    | Type::Unicode
                    | Type::Bytes
                    | Type::List { .. }
                    | Type::Set { .. }
                    | Type::Array { .. }
                    | Type::NumpyFlat(_)
                    | Type::NdEnumerate(_)
                    | Type::NdIndex(_)
            ) =>
        {
            ctx.struct_type(&[i64t, super::value_type(ctx, src)?], false)
        }
        _ => {
            return Err(LowerError::Unsupported {
                message: format!("iterating over {t} is not supported by numba-rs yet"),
                line: 0,
            })
        }
    })
}

impl DataModel for IterModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.ptr_type(AddressSpace::default()).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Err(LowerError::Unsupported {
            message: format!("iterators ({t}) cannot cross into Python"),
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
            .unwrap_or(LowerError::Llvm("iterator".into())))
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
            .unwrap_or(LowerError::Llvm("iterator".into())))
    }
}
