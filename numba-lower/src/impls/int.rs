//! Integer and boolean operators, with Python's semantics where Numba keeps them: floor
//! division and modulo round toward negative infinity, division by zero raises
//! `ZeroDivisionError` (under the Python error model), `**` is Numba's `int_power`.

use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use numba_ir::{BinOp, UnaryOp};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::{binop_of, unary_of};
use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, ErrorModel, R};

pub(crate) fn register(r: &mut Registry) {
    use BinOp::*;
    let two = || Args::Exact(vec![TypePat::IntOrBool, TypePat::IntOrBool]);
    for op in [
        Add, Sub, Mul, And, Or, Xor, Lt, Le, Gt, Ge, Eq, Ne, LShift, RShift, FloorDiv, Mod,
    ] {
        r.register(ImplKey::BinOp(op), two(), int_binop);
    }
    r.register(
        ImplKey::BinOp(Pow),
        Args::Exact(vec![TypePat::Int, TypePat::Int]),
        int_pow,
    );
    // Enum members compare by value; `.value` is the value.
    let member = || TypePat::Pred(|t| matches!(t.get(), Type::EnumMember { .. }));
    for op in [Eq, Ne] {
        r.register(
            ImplKey::BinOp(op),
            Args::Exact(vec![member(), member()]),
            int_binop,
        );
    }
    r.register(
        ImplKey::GetAttr("value".into()),
        Args::Exact(vec![member()]),
        |_, _, a| Ok(a[0]),
    );
    for op in [UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Invert, UnaryOp::Not] {
        r.register(
            ImplKey::Unary(op),
            Args::Exact(vec![TypePat::IntOrBool]),
            int_unary,
        );
    }
}

fn int_unary<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let v = a[0].into_int_value();
    let r: BasicValueEnum<'ctx> = match unary_of(&sig.key) {
        UnaryOp::Pos => v.into(),
        UnaryOp::Neg => lw.b.build_int_neg(v, "").map_err(llvm_err)?.into(),
        UnaryOp::Invert => lw.b.build_not(v, "").map_err(llvm_err)?.into(),
        UnaryOp::Not => {
            let c = lw.truth(v.into(), sig.args[0])?;
            return Ok(lw.b.build_not(c, "").map_err(llvm_err)?.into());
        }
    };
    // A narrow integer's result widened (see `unary_signature`).
    lw.cast(r, sig.args[0], sig.ret)
}

fn int_binop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    args: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = binop_of(&sig.key);
    let t = sig.args[0];
    let (a, bv) = (args[0].into_int_value(), args[1].into_int_value());
    let signed = t.is_signed() && t != BOOLEAN;
    let it = a.get_type();
    let zero = it.const_zero();
    let pred = |s: IntPredicate, u: IntPredicate| if signed { s } else { u };
    let b = &lw.b;
    let cmp = |p: IntPredicate| -> R<BasicValueEnum<'ctx>> {
        Ok(b.build_int_compare(p, a, bv, "").map_err(llvm_err)?.into())
    };
    Ok(match op {
        BinOp::Add => b.build_int_add(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Sub => b.build_int_sub(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Mul => b.build_int_mul(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::And => b.build_and(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Or => b.build_or(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Xor => b.build_xor(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Lt => cmp(pred(IntPredicate::SLT, IntPredicate::ULT))?,
        BinOp::Le => cmp(pred(IntPredicate::SLE, IntPredicate::ULE))?,
        BinOp::Gt => cmp(pred(IntPredicate::SGT, IntPredicate::UGT))?,
        BinOp::Ge => cmp(pred(IntPredicate::SGE, IntPredicate::UGE))?,
        BinOp::Eq => cmp(IntPredicate::EQ)?,
        BinOp::Ne => cmp(IntPredicate::NE)?,
        BinOp::LShift | BinOp::RShift => {
            let neg = b
                .build_int_compare(IntPredicate::SLT, bv, zero, "")
                .map_err(llvm_err)?;
            lw.raise_const_if(neg, "ValueError", &["negative shift count"])?;
            let b = &lw.b;
            let width = it.const_int(u64::from(it.get_bit_width()), false);
            let big = b
                .build_int_compare(IntPredicate::UGE, bv, width, "")
                .map_err(llvm_err)?;
            let maxsh = it.const_int(u64::from(it.get_bit_width() - 1), false);
            let sh = b
                .build_select(big, maxsh, bv, "")
                .map_err(llvm_err)?
                .into_int_value();
            if op == BinOp::LShift {
                let v = b.build_left_shift(a, sh, "").map_err(llvm_err)?;
                b.build_select(big, zero, v, "").map_err(llvm_err)?
            } else {
                b.build_right_shift(a, sh, signed, "")
                    .map_err(llvm_err)?
                    .into()
            }
        }
        BinOp::FloorDiv | BinOp::Mod => floordiv_mod(lw, op, a, bv, signed)?,
        other => {
            return Err(lw.unsupported(format!(
                "operator '{}' on {t} is not supported by numba-rs yet",
                other.symbol()
            )))
        }
    })
}

/// Python's `//` and `%` on machine integers.
pub(super) fn floordiv_mod<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: BinOp,
    a: IntValue<'ctx>,
    bv: IntValue<'ctx>,
    signed: bool,
) -> R<BasicValueEnum<'ctx>> {
    let it = a.get_type();
    let zero = it.const_zero();
    let is_zero =
        lw.b.build_int_compare(IntPredicate::EQ, bv, zero, "")
            .map_err(llvm_err)?;
    if lw.error_model() == ErrorModel::Python {
        let msg = if op == BinOp::Mod {
            "integer modulo by zero"
        } else {
            "integer division by zero"
        };
        lw.raise_const_if(is_zero, "ZeroDivisionError", &[msg])?;
    }
    let b = &lw.b;
    // Division by zero under the NumPy error model gives 0: divide by 1 and select 0.
    let one = it.const_int(1, false);
    let bv1 = b
        .build_select(is_zero, one, bv, "")
        .map_err(llvm_err)?
        .into_int_value();
    let result: BasicValueEnum = if !signed {
        if op == BinOp::Mod {
            b.build_int_unsigned_rem(a, bv1, "")
                .map_err(llvm_err)?
                .into()
        } else {
            b.build_int_unsigned_div(a, bv1, "")
                .map_err(llvm_err)?
                .into()
        }
    } else {
        // Avoid INT_MIN / -1 overflow (undefined in LLVM): divide by 1 instead and negate,
        // which wraps as Numba's result does.
        let minus1 = b
            .build_int_compare(IntPredicate::EQ, bv1, it.const_all_ones(), "")
            .map_err(llvm_err)?;
        let safe_b = b
            .build_select(minus1, one, bv1, "")
            .map_err(llvm_err)?
            .into_int_value();
        let q = b.build_int_signed_div(a, safe_b, "").map_err(llvm_err)?;
        let r = b.build_int_signed_rem(a, safe_b, "").map_err(llvm_err)?;
        let r_nonzero = b
            .build_int_compare(IntPredicate::NE, r, zero, "")
            .map_err(llvm_err)?;
        let x = b.build_xor(r, safe_b, "").map_err(llvm_err)?;
        let signs_differ = b
            .build_int_compare(IntPredicate::SLT, x, zero, "")
            .map_err(llvm_err)?;
        let adjust = b.build_and(r_nonzero, signs_differ, "").map_err(llvm_err)?;
        if op == BinOp::FloorDiv {
            let q1 = b.build_int_sub(q, one, "").map_err(llvm_err)?;
            let q = b.build_select(adjust, q1, q, "").map_err(llvm_err)?;
            let negq = b.build_int_neg(a, "").map_err(llvm_err)?;
            b.build_select(minus1, negq.into(), q, "")
                .map_err(llvm_err)?
        } else {
            let r1 = b.build_int_add(r, safe_b, "").map_err(llvm_err)?;
            let r = b.build_select(adjust, r1, r, "").map_err(llvm_err)?;
            b.build_select(minus1, zero.into(), r, "")
                .map_err(llvm_err)?
        }
    };
    b.build_select(is_zero, zero.into(), result, "")
        .map_err(llvm_err)
}

/// Numba's `int_power_impl`: repeated squaring; negative exponents give 0 except for bases
/// 1 and -1, and raise ZeroDivisionError for base 0.
fn int_pow<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    args: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let a = args[0].into_int_value();
    let e = lw.cast(args[1], sig.args[1], sig.args[0])?.into_int_value();
    let it = a.get_type();
    let zero = it.const_zero();
    let one = it.const_int(1, false);
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, e, zero, "")
            .map_err(llvm_err)?;
    let a_zero =
        lw.b.build_int_compare(IntPredicate::EQ, a, zero, "")
            .map_err(llvm_err)?;
    let bad = lw.b.build_and(neg, a_zero, "").map_err(llvm_err)?;
    lw.raise_const_if(
        bad,
        "ZeroDivisionError",
        &["0 cannot be raised to a negative power"],
    )?;
    let pre =
        lw.b.get_insert_block()
            .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
    let lp = lw.new_block("pow.loop");
    let body = lw.new_block("pow.body");
    let done = lw.new_block("pow.done");
    let b = &lw.b;
    let abs_e = {
        let ne = b.build_int_neg(e, "").map_err(llvm_err)?;
        b.build_select(neg, ne, e, "")
            .map_err(llvm_err)?
            .into_int_value()
    };
    b.build_unconditional_branch(lp).map_err(llvm_err)?;
    b.position_at_end(lp);
    let r_phi = b.build_phi(it, "r").map_err(llvm_err)?;
    let base_phi = b.build_phi(it, "base").map_err(llvm_err)?;
    let exp_phi = b.build_phi(it, "exp").map_err(llvm_err)?;
    let exp_v = exp_phi.as_basic_value().into_int_value();
    let more = b
        .build_int_compare(IntPredicate::NE, exp_v, zero, "")
        .map_err(llvm_err)?;
    b.build_conditional_branch(more, body, done)
        .map_err(llvm_err)?;
    b.position_at_end(body);
    let r_v = r_phi.as_basic_value().into_int_value();
    let base_v = base_phi.as_basic_value().into_int_value();
    let bit = b.build_and(exp_v, one, "").map_err(llvm_err)?;
    let odd = b
        .build_int_compare(IntPredicate::NE, bit, zero, "")
        .map_err(llvm_err)?;
    let rm = b.build_int_mul(r_v, base_v, "").map_err(llvm_err)?;
    let r_next = b
        .build_select(odd, rm, r_v, "")
        .map_err(llvm_err)?
        .into_int_value();
    let base_next = b.build_int_mul(base_v, base_v, "").map_err(llvm_err)?;
    let exp_next = b
        .build_right_shift(exp_v, one, false, "")
        .map_err(llvm_err)?;
    b.build_unconditional_branch(lp).map_err(llvm_err)?;
    r_phi.add_incoming(&[(&one, pre), (&r_next, body)]);
    base_phi.add_incoming(&[(&a, pre), (&base_next, body)]);
    exp_phi.add_incoming(&[(&abs_e, pre), (&exp_next, body)]);
    b.position_at_end(done);
    let pos_result = r_phi.as_basic_value().into_int_value();
    // Negative exponent: 1/r truncated, i.e. r itself for |a| == 1, else 0.
    let a_is_one = b
        .build_int_compare(IntPredicate::EQ, a, one, "")
        .map_err(llvm_err)?;
    let a_is_m1 = b
        .build_int_compare(IntPredicate::EQ, a, it.const_all_ones(), "")
        .map_err(llvm_err)?;
    let unit = b.build_or(a_is_one, a_is_m1, "").map_err(llvm_err)?;
    let neg_result = b
        .build_select(unit, pos_result, zero, "")
        .map_err(llvm_err)?
        .into_int_value();
    b.build_select(neg, neg_result, pos_result, "")
        .map_err(llvm_err)
}
