//! `is` / `is not`, mostly against `None` (optionals test their flag).

use inkwell::values::BasicValueEnum;
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::binop_of;
use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    for op in [BinOp::Is, BinOp::IsNot] {
        r.register(
            ImplKey::BinOp(op),
            Args::Exact(vec![TypePat::Any, TypePat::Any]),
            is,
        );
    }
}

fn is<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (lt, rt) = (
        crate::model::lowered(sig.args[0]),
        crate::model::lowered(sig.args[1]),
    );
    let bool_t = lw.ctx.bool_type();
    let same = match (lt.get(), rt.get()) {
        (Type::NoneType, Type::NoneType) => bool_t.const_int(1, false),
        (Type::Optional(_), Type::NoneType) | (Type::NoneType, Type::Optional(_)) => {
            let opt = if lt == NONE { a[1] } else { a[0] };
            let valid =
                lw.b.build_extract_value(opt.into_struct_value(), 0, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            lw.b.build_not(valid, "").map_err(llvm_err)?
        }
        (Type::NoneType, _) | (_, Type::NoneType) => bool_t.const_zero(),
        // Booleans are singletons: identity is equality.
        (Type::Boolean, Type::Boolean) => {
            lw.b.build_int_compare(
                inkwell::IntPredicate::EQ,
                a[0].into_int_value(),
                a[1].into_int_value(),
                "",
            )
            .map_err(llvm_err)?
        }
        // Enum members are singletons: identity is equality of their values.
        (Type::EnumMember { .. }, Type::EnumMember { .. }) if lt == rt => {
            lw.b.build_int_compare(
                inkwell::IntPredicate::EQ,
                a[0].into_int_value(),
                a[1].into_int_value(),
                "",
            )
            .map_err(llvm_err)?
        }
        // Lists and sets: the same MemInfo, or unboxed from the same Python object.
        (Type::List { dtype: x, .. }, Type::List { dtype: y, .. })
        | (Type::Set { dtype: x, .. }, Type::Set { dtype: y, .. })
            if x == y =>
        {
            let field = |lw: &FnLower<'ctx, '_>, v: BasicValueEnum<'ctx>, i: u32| {
                lw.b.build_extract_value(v.into_struct_value(), i, "")
                    .map_err(llvm_err)
                    .map(|p| p.into_pointer_value())
            };
            let (m0, m1) = (field(lw, a[0], 0)?, field(lw, a[1], 0)?);
            let (p0, p1) = (field(lw, a[0], 1)?, field(lw, a[1], 1)?);
            let eq = |lw: &FnLower<'ctx, '_>, x, y| {
                lw.b.build_int_compare(inkwell::IntPredicate::EQ, x, y, "")
                    .map_err(llvm_err)
            };
            let same_mi = eq(lw, m0, m1)?;
            let same_parent = eq(lw, p0, p1)?;
            let has_parent = lw.b.build_is_not_null(p0, "").map_err(llvm_err)?;
            let by_parent =
                lw.b.build_and(same_parent, has_parent, "")
                    .map_err(llvm_err)?;
            lw.b.build_or(same_mi, by_parent, "").map_err(llvm_err)?
        }
        _ if lt != rt => bool_t.const_zero(),
        _ => {
            return Err(lw.unsupported(format!(
                "'is' between two values of type {lt} is not supported by numba-rs yet"
            )))
        }
    };
    Ok(if binop_of(&sig.key) == BinOp::Is {
        same.into()
    } else {
        lw.b.build_not(same, "").map_err(llvm_err)?.into()
    })
}
