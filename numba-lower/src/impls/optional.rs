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

/// `==` / `!=` with an optional operand: None equals None alone; two values compare as
/// themselves, their comparison reached only when both are present.
pub(crate) fn register_equality(r: &mut Registry) {
    let opt = || TypePat::Pred(|t| matches!(t.get(), Type::Optional(_)));
    for op in [BinOp::Eq, BinOp::Ne] {
        for args in [vec![opt(), TypePat::Any], vec![TypePat::Any, opt()]] {
            r.register(ImplKey::BinOp(op), Args::Exact(args), optional_eq);
        }
    }
}

fn optional_eq<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = binop_of(&sig.key);
    let bool_t = lw.ctx.bool_type();
    // Each side's presence and value type (none: never present).
    let mut present = Vec::with_capacity(2);
    let mut inner = Vec::with_capacity(2);
    for (&v, &t) in a.iter().zip(&sig.args).take(2) {
        let t = crate::model::lowered(t);
        match t.get() {
            Type::Optional(x) => {
                let sv = v.into_struct_value();
                present.push(
                    lw.b.build_extract_value(sv, 0, "")
                        .map_err(llvm_err)?
                        .into_int_value(),
                );
                inner.push(Some((
                    lw.b.build_extract_value(sv, 1, "").map_err(llvm_err)?,
                    x,
                )));
            }
            Type::NoneType => {
                present.push(bool_t.const_zero());
                inner.push(None);
            }
            _ => {
                present.push(bool_t.const_int(1, false));
                inner.push(Some((v, t)));
            }
        }
    }
    // Not both present: equal exactly when both are absent.
    let same_presence =
        lw.b.build_int_compare(inkwell::IntPredicate::EQ, present[0], present[1], "")
            .map_err(llvm_err)?;
    let first_absent = lw.b.build_not(present[0], "").map_err(llvm_err)?;
    let absent_eq =
        lw.b.build_and(same_presence, first_absent, "")
            .map_err(llvm_err)?;
    let (Some((lv, lt)), Some((rv, rt))) = (inner[0], inner[1]) else {
        return finish(lw, op, absent_eq);
    };
    let no_block = || crate::LowerError::Llvm("no insertion block".into());
    let both =
        lw.b.build_and(present[0], present[1], "")
            .map_err(llvm_err)?;
    let start = lw.b.get_insert_block().ok_or_else(no_block)?;
    let compare_bb = lw.new_block("opt_eq.values");
    let join_bb = lw.new_block("opt_eq.join");
    lw.b.build_conditional_branch(both, compare_bb, join_bb)
        .map_err(llvm_err)?;
    lw.b.position_at_end(compare_bb);
    let vsig = numba_typeinfer::context::binop_signature(BinOp::Eq, lt, rt)
        .ok_or_else(|| lw.unsupported(format!("comparing {lt} with {rt}")))?;
    let l = lw.cast(lv, lt, crate::model::lowered(vsig.args[0]))?;
    let r = lw.cast(rv, rt, crate::model::lowered(vsig.args[1]))?;
    let v = lw.call_impl(&vsig, &[l, r])?;
    let v = lw.truth(v, vsig.ret)?;
    let compared_bb = lw.b.get_insert_block().ok_or_else(no_block)?;
    lw.b.build_unconditional_branch(join_bb).map_err(llvm_err)?;
    lw.b.position_at_end(join_bb);
    let phi = lw.b.build_phi(bool_t, "opt_eq").map_err(llvm_err)?;
    phi.add_incoming(&[(&v, compared_bb), (&absent_eq, start)]);
    finish(lw, op, phi.as_basic_value().into_int_value())
}

fn finish<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: BinOp,
    eq: inkwell::values::IntValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    Ok(if op == BinOp::Ne {
        lw.b.build_not(eq, "").map_err(llvm_err)?.into()
    } else {
        eq.into()
    })
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
        // Arrays of one type (Numba's `array_is`): the same data, shape and strides. A
        // view of the same memory with another shape is another array.
        (Type::Array { .. }, Type::Array { .. }) if lt == rt => {
            use crate::model::array::{field, ndim};
            let (x, y) = (a[0].into_struct_value(), a[1].into_struct_value());
            let get = |lw: &FnLower<'ctx, '_>, v: inkwell::values::StructValue<'ctx>, f: u32| {
                lw.b.build_extract_value(v, f, "").map_err(llvm_err)
            };
            let (dx, dy) = (
                get(lw, x, field::DATA)?.into_pointer_value(),
                get(lw, y, field::DATA)?.into_pointer_value(),
            );
            let mut same =
                lw.b.build_int_compare(inkwell::IntPredicate::EQ, dx, dy, "")
                    .map_err(llvm_err)?;
            for f in [field::SHAPE, field::STRIDES] {
                let (sx, sy) = (
                    get(lw, x, f)?.into_array_value(),
                    get(lw, y, f)?.into_array_value(),
                );
                for d in 0..ndim(lt) {
                    let ex = lw.b.build_extract_value(sx, d, "").map_err(llvm_err)?;
                    let ey = lw.b.build_extract_value(sy, d, "").map_err(llvm_err)?;
                    let eq =
                        lw.b.build_int_compare(
                            inkwell::IntPredicate::EQ,
                            ex.into_int_value(),
                            ey.into_int_value(),
                            "",
                        )
                        .map_err(llvm_err)?;
                    same = lw.b.build_and(same, eq, "").map_err(llvm_err)?;
                }
            }
            same
        }
        // Structref instances: the same MemInfo. A jitclass has no `is` (Numba's
        // LoweringError, worded as Numba words it).
        (Type::ClassInstance { .. }, Type::ClassInstance { .. }) => {
            let structref = |t: TypeId| {
                numba_typeinfer::jitclass::info(t)
                    .is_some_and(|c| c.kind == numba_typeinfer::jitclass::ClassKind::StructRef)
            };
            if !(structref(lt) && structref(rt)) {
                return Err(
                    lw.lowering_error(format!("no default `is` implementation for {lt} and {rt}"))
                );
            }
            let mi = |v: BasicValueEnum<'ctx>| {
                lw.b.build_extract_value(v.into_struct_value(), 0, "")
                    .map_err(llvm_err)
                    .map(|p| p.into_pointer_value())
            };
            let (m0, m1) = (mi(a[0])?, mi(a[1])?);
            lw.b.build_int_compare(inkwell::IntPredicate::EQ, m0, m1, "")
                .map_err(llvm_err)?
        }
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
