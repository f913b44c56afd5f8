//! `x ** k` with `k` a constant integer (Numba's `static_power_impl`): square-and-multiply
//! unrolled at compile time, so `x ** 2` is one multiplication. The constant comes from
//! numba-rewrite's `DetectStaticBinops` (`FunctionIR::static_rhs`).

use numba_bytecode::Constant;
use numba_ir::{BinOp, ExprId};
use numba_typeinfer::types::TypeId;

use super::array_ops::{apply_binop, Typed};
use crate::function::FnLower;
use crate::R;

/// Exponents beyond this use the general power (Numba's limit).
const MAX_STATIC_EXPONENT: u64 = 0x10000;

/// `base ** k` unrolled when expression `id` is a `**` with a static integer exponent and
/// the base is a float (any `k`) or an integer (`k >= 0`; negative integer powers keep
/// the run-time implementation and its ZeroDivisionError). `None` when not applicable.
pub(crate) fn static_pow_for<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    id: ExprId,
    op: BinOp,
    (x, xt): Typed<'ctx>,
) -> R<Option<Typed<'ctx>>> {
    if op != BinOp::Pow {
        return Ok(None);
    }
    let k = match lw.ir.static_rhs.get(&id) {
        Some(Constant::Int(k)) => *k,
        Some(Constant::Bool(b)) => i64::from(*b),
        _ => return Ok(None),
    };
    if k.unsigned_abs() > MAX_STATIC_EXPONENT || !(xt.is_float() || (xt.is_integer() && k >= 0)) {
        return Ok(None);
    }
    // The type `**` gives with an integer exponent: the base's arithmetic type.
    let Some(sig) =
        numba_typeinfer::context::binop_signature(BinOp::Pow, xt, numba_typeinfer::types::INT64)
    else {
        return Ok(None);
    };
    let t: TypeId = sig.ret;
    if sig.args[0] != t {
        return Ok(None);
    }
    let base = lw.cast(x, xt, t)?;
    let one = lw.cast(
        lw.ctx.i64_type().const_int(1, false).into(),
        numba_typeinfer::types::INT64,
        t,
    )?;
    let mut acc = (one, t);
    let mut b = (base, t);
    let mut e = k.unsigned_abs();
    loop {
        if e & 1 == 1 {
            acc = apply_binop(lw, BinOp::Mul, acc, b)?;
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        b = apply_binop(lw, BinOp::Mul, b, b)?;
    }
    if k < 0 {
        acc = apply_binop(lw, BinOp::TrueDiv, (one, t), acc)?;
    }
    Ok(Some(acc))
}
