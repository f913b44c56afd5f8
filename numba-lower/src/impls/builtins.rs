//! Builtins: `abs`, `bool`/`int`/`float` and NumPy scalar constructors, `min`/`max`,
//! `round`, `range`, `len`, `isinstance`, `enumerate`, `zip`; `print` and `slice` are
//! typed but not lowered yet.

use inkwell::values::BasicValueEnum;
use inkwell::{FloatPredicate, IntPredicate};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::function_of;
use crate::function::FnLower;
use crate::model::{iterator_storage, value_type};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn key(k: &str) -> ImplKey {
    ImplKey::Function(k.into())
}

pub(crate) fn register(r: &mut Registry) {
    r.not_yet(
        key("print"),
        "printing lands with the runtime's string support",
    );
    r.not_yet(key("slice"), "slices land with arrays");
    r.register(key("abs"), Args::Exact(vec![TypePat::IntOrBool]), abs_int);
    r.register(key("abs"), Args::Exact(vec![TypePat::Float]), abs_float);
    r.register(key("bool"), Args::Variadic(TypePat::Any), to_bool);
    for k in ["int", "float", "numberclass"] {
        r.register(key(k), Args::Variadic(TypePat::Number), convert);
    }
    for k in ["min", "max"] {
        r.register(key(k), Args::Variadic(TypePat::Number), min_max);
    }
    r.register(key("round"), Args::Variadic(TypePat::Number), round);
    r.register(key("range"), Args::Variadic(TypePat::IntOrBool), range);
    r.register(
        key("len"),
        Args::Exact(vec![TypePat::Exact(RANGE_STATE64)]),
        len_range,
    );
    r.register(
        key("isinstance"),
        Args::Exact(vec![TypePat::Any, TypePat::Any]),
        isinstance,
    );
    r.register(key("enumerate"), Args::Exact(vec![TypePat::Any]), enumerate);
    r.register(key("zip"), Args::Variadic(TypePat::Any), zip);
}

fn abs_int<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let iv = a[0].into_int_value();
    let n = lw.b.build_int_neg(iv, "").map_err(llvm_err)?;
    let lt =
        lw.b.build_int_compare(IntPredicate::SLT, iv, iv.get_type().const_zero(), "")
            .map_err(llvm_err)?;
    lw.b.build_select(lt, n, iv, "").map_err(llvm_err)
}

fn abs_float<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    Ok(lw.float_unary("fabs", a[0].into_float_value())?.into())
}

fn to_bool<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    match a.first() {
        Some(&v) => Ok(lw.truth(v, sig.args[0])?.into()),
        None => Ok(lw.ctx.bool_type().const_zero().into()),
    }
}

/// `int(x)`, `float(x)`, `np.float32(x)`, ...: a conversion (zero with no argument).
fn convert<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    match a.first() {
        Some(&v) => lw.cast(v, sig.args[0], sig.ret),
        None => Ok(value_type(lw.ctx, sig.ret)?.const_zero()),
    }
}

fn min_max<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let is_min = function_of(&sig.key) == "min";
    let t = sig.args[0];
    let mut acc = a[0];
    for &x in &a[1..] {
        // min keeps the first unless a later one is smaller (Python).
        let better = if t.is_float() {
            let p = if is_min {
                FloatPredicate::OLT
            } else {
                FloatPredicate::OGT
            };
            lw.b.build_float_compare(p, x.into_float_value(), acc.into_float_value(), "")
                .map_err(llvm_err)?
        } else {
            let s = t.is_signed() && t != BOOLEAN;
            let p = match (is_min, s) {
                (true, true) => IntPredicate::SLT,
                (true, false) => IntPredicate::ULT,
                (false, true) => IntPredicate::SGT,
                (false, false) => IntPredicate::UGT,
            };
            lw.b.build_int_compare(p, x.into_int_value(), acc.into_int_value(), "")
                .map_err(llvm_err)?
        };
        acc = lw.b.build_select(better, x, acc, "").map_err(llvm_err)?;
    }
    Ok(acc)
}

/// `round(x)` (half to even, an int) and `round(x, n)` (Numba's `round_ndigits`: scale by
/// 10**|n|, round half to even, scale back).
fn round<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    if a.len() == 1 {
        if !sig.args[0].is_float() {
            return Ok(a[0]);
        }
        let r = lw.float_unary("roundeven", a[0].into_float_value())?;
        return lw.cast(r.into(), sig.args[0], sig.ret);
    }
    let x = a[0].into_float_value();
    let n = a[1].into_int_value();
    let ft = x.get_type();
    let b = &lw.b;
    let zero = n.get_type().const_zero();
    let neg = b
        .build_int_compare(IntPredicate::SLT, n, zero, "")
        .map_err(llvm_err)?;
    let minus_n = b.build_int_neg(n, "").map_err(llvm_err)?;
    let abs_n = b.build_select(neg, minus_n, n, "").map_err(llvm_err)?;
    let e = b
        .build_signed_int_to_float(abs_n.into_int_value(), ft, "")
        .map_err(llvm_err)?;
    let scale = lw.float_binary("pow", ft.const_float(10.0), e)?;
    let b = &lw.b;
    let up = b.build_float_mul(x, scale, "").map_err(llvm_err)?;
    let down = b.build_float_div(x, scale, "").map_err(llvm_err)?;
    let y = b
        .build_select(neg, down, up, "")
        .map_err(llvm_err)?
        .into_float_value();
    let r = lw.float_unary("roundeven", y)?;
    let b = &lw.b;
    let back_up = b.build_float_div(r, scale, "").map_err(llvm_err)?;
    let back_down = b.build_float_mul(r, scale, "").map_err(llvm_err)?;
    b.build_select(neg, back_down, back_up, "")
        .map_err(llvm_err)
}

fn range<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let (start, stop, step) = match a {
        [stop] => (i64t.const_zero(), stop.into_int_value(), one),
        [start, stop] => (start.into_int_value(), stop.into_int_value(), one),
        [start, stop, step] => (
            start.into_int_value(),
            stop.into_int_value(),
            step.into_int_value(),
        ),
        _ => return Err(lw.unsupported("range() takes 1 to 3 arguments")),
    };
    if a.len() == 3 {
        let z =
            lw.b.build_int_compare(IntPredicate::EQ, step, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(z, "ValueError", &["range() arg 3 must not be zero"])?;
    }
    lw.make_struct(RANGE_STATE64, &[start.into(), stop.into(), step.into()])
}

/// `len(range(start, stop, step))`: CPython's `compute_range_length`.
fn len_range<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let sv = a[0].into_struct_value();
    let b = &lw.b;
    let get = |i| -> R<inkwell::values::IntValue<'ctx>> {
        Ok(b.build_extract_value(sv, i, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    let (start, stop, step) = (get(0)?, get(1)?, get(2)?);
    let i64t = lw.ctx.i64_type();
    let zero = i64t.const_zero();
    let one = i64t.const_int(1, false);
    // n = (stop - start + step - sign(step)) // step, clamped at zero.
    let up = b
        .build_int_compare(IntPredicate::SGT, step, zero, "")
        .map_err(llvm_err)?;
    let sign = b
        .build_select(up, one, i64t.const_all_ones(), "")
        .map_err(llvm_err)?
        .into_int_value();
    let span = b.build_int_sub(stop, start, "").map_err(llvm_err)?;
    let adj = b.build_int_sub(step, sign, "").map_err(llvm_err)?;
    let num = b.build_int_add(span, adj, "").map_err(llvm_err)?;
    let n = b.build_int_signed_div(num, step, "").map_err(llvm_err)?;
    let pos = b
        .build_int_compare(IntPredicate::SGT, n, zero, "")
        .map_err(llvm_err)?;
    b.build_select(pos, n, zero, "").map_err(llvm_err)
}

/// `isinstance(x, cls)` is decided at compile time from `x`'s type.
fn isinstance<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let x = sig.args[0];
    let yes = match sig.args[1].get() {
        Type::NumberClass(c) if c == BOOLEAN => x == BOOLEAN,
        Type::NumberClass(c) if c.is_integer() => x.is_integer() || x == BOOLEAN,
        Type::NumberClass(c) if c.is_float() => x.is_float(),
        Type::NumberClass(c) if c.is_complex() => x.is_complex(),
        _ => false,
    };
    Ok(lw.ctx.bool_type().const_int(u64::from(yes), false).into())
}

/// The iterator over `v` (of type `t`), through the registered `getiter`.
pub(crate) fn iterator_of<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
) -> R<(BasicValueEnum<'ctx>, TypeId)> {
    let it = numba_typeinfer::numpy::getiter(t)
        .ok_or_else(|| lw.unsupported(format!("{t} is not iterable")))?;
    let sig = Signature {
        ret: it,
        args: vec![t],
        key: ImplKey::GetIter,
    };
    Ok((lw.call_impl(&sig, &[v])?, it))
}

fn enumerate<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (inner, _) = iterator_of(lw, sig.args[0], a[0])?;
    let st = iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "enumerate")?;
    let count =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    lw.b.build_store(count, lw.ctx.i64_type().const_zero())
        .map_err(llvm_err)?;
    let it =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    lw.b.build_store(it, inner).map_err(llvm_err)?;
    Ok(storage.into())
}

fn zip<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "zip")?;
    for (i, (&v, &t)) in a.iter().zip(&sig.args).enumerate() {
        let (inner, _) = iterator_of(lw, t, v)?;
        let p =
            lw.b.build_struct_gep(st, storage, i as u32, "")
                .map_err(llvm_err)?;
        lw.b.build_store(p, inner).map_err(llvm_err)?;
    }
    Ok(storage.into())
}
