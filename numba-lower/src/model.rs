//! The data model: how each numba-rs type is represented in LLVM. One place for each fact.

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

/// The LLVM type of a value of `t`, or `None` for types with no runtime data ("ghost"
/// types: none, modules, functions, classes).
pub fn value_type<'ctx>(ctx: &'ctx Context, t: TypeId) -> Option<BasicTypeEnum<'ctx>> {
    Some(match t.get() {
        Type::Boolean => ctx.bool_type().into(),
        Type::Integer { bits: 8, .. } => ctx.i8_type().into(),
        Type::Integer { bits: 16, .. } => ctx.i16_type().into(),
        Type::Integer { bits: 32, .. } => ctx.i32_type().into(),
        Type::Integer { .. } => ctx.i64_type().into(),
        Type::Float { bits: 16 } => ctx.f16_type().into(),
        Type::Float { bits: 32 } => ctx.f32_type().into(),
        Type::Float { .. } => ctx.f64_type().into(),
        Type::RangeState64 => {
            let i = ctx.i64_type().into();
            ctx.struct_type(&[i, i, i], false).into()
        }
        // A pointer to {current, stop, step}: copies of an iterator share its state.
        Type::RangeIter64 => ctx.ptr_type(AddressSpace::default()).into(),
        Type::Pair(a, b) => {
            let a = value_type(ctx, a)?;
            let b = value_type(ctx, b)?;
            ctx.struct_type(&[a, b], false).into()
        }
        Type::UniTuple(e, n) => {
            let e = value_type(ctx, e)?;
            ctx.struct_type(&vec![e; n as usize], false).into()
        }
        Type::Tuple(items) => {
            let tys: Vec<BasicTypeEnum> = items
                .iter()
                .map(|&t| value_type(ctx, t))
                .collect::<Option<_>>()?;
            ctx.struct_type(&tys, false).into()
        }
        _ => return None,
    })
}

/// The range iterator's storage: `{current, stop, step}`.
pub fn range_iter_storage(ctx: &Context) -> inkwell::types::StructType<'_> {
    let i = ctx.i64_type().into();
    ctx.struct_type(&[i, i, i], false)
}

/// Whether values of `t` can cross the uniform entry wrapper (one 8-byte slot).
pub fn is_slot_type(t: TypeId) -> bool {
    t == BOOLEAN
        || matches!(
            t.get(),
            Type::Integer { .. } | Type::Float { bits: 32 | 64 }
        )
}
