//! Tuples (plain and named), iteration pairs and range states: an LLVM struct of the
//! members' representations.

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{model_of, DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, LowerError, R};

pub struct TupleModel;

/// The member types of a struct-like type.
pub fn members(t: TypeId) -> Vec<TypeId> {
    match t.get() {
        Type::UniTuple(e, n) => vec![e; n as usize],
        Type::Tuple(items) => items,
        Type::Pair(a, b) => vec![a, b],
        // Numba's SliceModel: start, stop, step with the defaults filled in.
        Type::RangeState64 | Type::Slice(_) => vec![INT64; 3],
        Type::Opaque { .. } => super::user::members(t).unwrap_or_default(),
        Type::LiteralStrKeyDict { values, .. } => values,
        _ => namedtuple_fields(t).map(|(f, _)| f).unwrap_or_default(),
    }
}

impl DataModel for TupleModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let tys = members(t)
            .into_iter()
            .map(|m| super::value_type(ctx, m))
            .collect::<R<Vec<_>>>()?;
        Ok(ctx.struct_type(&tys, false).into())
    }
    fn memory_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let tys = members(t)
            .into_iter()
            .map(|m| super::memory_type(ctx, m))
            .collect::<R<Vec<_>>>()?;
        Ok(ctx.struct_type(&tys, false).into())
    }
    fn store_memory<'ctx>(
        &self,
        ctx: &'ctx Context,
        b: &Builder<'ctx>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let st = self.memory_type(ctx, t)?.into_struct_type();
        let sv = v.into_struct_value();
        let mut out = st.get_undef();
        for (i, m) in members(t).into_iter().enumerate() {
            let e = b.build_extract_value(sv, i as u32, "").map_err(llvm_err)?;
            let e = model_of(m)?.store_memory(ctx, b, m, e)?;
            out = b
                .build_insert_value(out, e, i as u32, "")
                .map_err(llvm_err)?
                .into_struct_value();
        }
        Ok(out.into())
    }
    fn load_memory<'ctx>(
        &self,
        ctx: &'ctx Context,
        b: &Builder<'ctx>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let st = self.value_type(ctx, t)?.into_struct_type();
        let sv = v.into_struct_value();
        let mut out = st.get_undef();
        for (i, m) in members(t).into_iter().enumerate() {
            let e = b.build_extract_value(sv, i as u32, "").map_err(llvm_err)?;
            let e = model_of(m)?.load_memory(ctx, b, m, e)?;
            out = b
                .build_insert_value(out, e, i as u32, "")
                .map_err(llvm_err)?
                .into_struct_value();
        }
        Ok(out.into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        let items = members(t)
            .into_iter()
            .map(|m| model_of(m)?.shape(m))
            .collect::<R<Vec<_>>>()?;
        Ok(match t.get() {
            Type::UniTuple(..) | Type::Tuple(_) => Shape::Tuple(items),
            Type::Slice(_) => Shape::Slice,
            Type::NamedTuple { class, .. } | Type::NamedUniTuple { class, .. } => {
                Shape::Named { class, items }
            }
            Type::Opaque { .. } => Shape::Boxed { t, items },
            // Numba's words: a heterogeneous literal dict does not escape.
            Type::LiteralStrKeyDict { .. } => {
                return Err(LowerError::Unsupported {
                    message: format!("cannot convert native {t} to a Python object"),
                    line: 0,
                })
            }
            _ => {
                return Err(LowerError::Unsupported {
                    message: format!("values of type {t} cannot cross into Python"),
                    line: 0,
                })
            }
        })
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let sv = v.into_struct_value();
        for (i, m) in members(t).into_iter().enumerate() {
            let e =
                c.b.build_extract_value(sv, i as u32, "")
                    .map_err(llvm_err)?;
            model_of(m)?.pack(c, m, e, idx)?;
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
        let mut out = st.get_undef();
        for (i, m) in members(t).into_iter().enumerate() {
            let e = model_of(m)?.unpack(c, m, idx)?;
            out =
                c.b.build_insert_value(out, e, i as u32, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        Ok(out.into())
    }
}
