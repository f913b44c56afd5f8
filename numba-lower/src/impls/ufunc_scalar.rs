//! NumPy ufunc loops with no Python scalar function to borrow: `floor`/`ceil`/`trunc`
//! (float to float, whole numbers unchanged), `exp2`, `cbrt`, `rint`,
//! `spacing`, `signbit`, `reciprocal`, `positive`, `radians`/`degrees` (at the element's
//! precision), `copysign`, `fmax`/`fmin`, `fmod`, `gcd`/`lcm`, `logaddexp`/`logaddexp2`,
//! `nextafter` and `float_power`, each as NumPy's (and Numba's `npyfuncs`) computes one
//! element. Inputs arrive with their own types; each loop converts them to the ufunc's
//! loop type first (`ufunc_loop`, `float_result`), as NumPy's type resolution does.

use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use numba_ir::BinOp;
use numba_typeinfer::numpy::{float_result, ufunc_loop};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{apply_binop, apply_unary, Typed};
use crate::function::FnLower;
use crate::{llvm_err, R};

/// The element function `key` of a ufunc when this module computes it, else `None`.
pub(super) fn numpy_scalar<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    key: &str,
    args: &[Typed<'ctx>],
) -> Option<R<Typed<'ctx>>> {
    Some(match (key, args) {
        ("exp2" | "rint", [x]) if x.1.is_complex() => {
            let s = Signature {
                key: ImplKey::Function(format!("npcomplex.{key}")),
                args: vec![x.1],
                ret: x.1,
            };
            lw.call_impl(&s, &[x.0]).map(|v| (v, x.1))
        }
        ("exp2" | "cbrt" | "rint" | "fabs" | "radians" | "degrees" | "spacing", [x]) => {
            unary_float(lw, key, *x)
        }
        // Whole numbers stay as they are; floats round in their own type (Python's
        // `math.floor` would give an int, and NaN or inf has none).
        ("floor" | "ceil" | "trunc", [x]) if !x.1.is_float() => Ok(*x),
        ("floor" | "ceil" | "trunc", [x]) => lw
            .float_unary(key, x.0.into_float_value())
            .map(|r| (r.into(), x.1)),
        ("signbit", [x]) => signbit(lw, *x),
        ("pos", [x]) => apply_unary(lw, numba_ir::UnaryOp::Pos, *x),
        ("reciprocal", [x]) => reciprocal(lw, *x),
        ("fmod", [x, y]) => fmod(lw, *x, *y),
        ("gcd" | "lcm", [x, y]) => gcd_lcm(lw, key, *x, *y),
        // Complex operands: lexicographic, with `minimum`/`maximum` (`array_ops`).
        ("fmax" | "fmin", [x, y]) if !x.1.is_complex() && !y.1.is_complex() => {
            fmax_fmin(lw, key, *x, *y)
        }
        ("float_power", [x, y]) => float_power(lw, *x, *y),
        ("copysign" | "nextafter" | "logaddexp" | "logaddexp2", [x, y]) => {
            binary_float(lw, key, *x, *y)
        }
        _ => return None,
    })
}

/// `x` converted to the float type a float loop computes it in (`float64` for integers).
fn as_float<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (v, t): Typed<'ctx>,
    to: TypeId,
) -> R<FloatValue<'ctx>> {
    Ok(lw.cast(v, t, to)?.into_float_value())
}

fn unary_float<'ctx>(lw: &mut FnLower<'ctx, '_>, key: &str, x: Typed<'ctx>) -> R<Typed<'ctx>> {
    let ft = float_result(x.1);
    let v = as_float(lw, x, ft)?;
    let t = v.get_type();
    let e = llvm_err;
    let r = match key {
        "rint" => lw.float_unary("roundeven", v)?,
        "radians" => {
            let k = t.const_float(std::f64::consts::PI / 180.0);
            lw.b.build_float_mul(v, k, "").map_err(e)?
        }
        "degrees" => {
            let k = t.const_float(180.0 / std::f64::consts::PI);
            lw.b.build_float_mul(v, k, "").map_err(e)?
        }
        // The distance to the next float away from zero (NaN for infinities), through
        // nextafter as Numba's `np_real_spacing_impl`; both zeros step up, as NumPy's.
        "spacing" => {
            let inf = t.const_float(f64::INFINITY);
            let signed = lw.float_binary("copysign", inf, v)?;
            let zero =
                lw.b.build_float_compare(FloatPredicate::OEQ, v, t.const_zero(), "")
                    .map_err(e)?;
            let away =
                lw.b.build_select(zero, inf, signed, "")
                    .map_err(e)?
                    .into_float_value();
            let next = lw.float_binary("nextafter", v, away)?;
            lw.b.build_float_sub(next, v, "").map_err(e)?
        }
        name => lw.float_unary(name, v)?,
    };
    Ok((r.into(), ft))
}

/// The sign bit of the float (set for -0.0 and negative NaNs).
fn signbit<'ctx>(lw: &mut FnLower<'ctx, '_>, x: Typed<'ctx>) -> R<Typed<'ctx>> {
    let ft = float_result(x.1);
    let v = as_float(lw, x, ft)?;
    let it = if ft == FLOAT32 {
        lw.ctx.i32_type()
    } else {
        lw.ctx.i64_type()
    };
    let e = llvm_err;
    let i = lw.b.build_bit_cast(v, it, "").map_err(e)?.into_int_value();
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, i, it.const_zero(), "")
            .map_err(e)?;
    Ok((neg.into(), BOOLEAN))
}

/// `1 / x`: integers through double precision and back, as NumPy's integer loops.
fn reciprocal<'ctx>(lw: &mut FnLower<'ctx, '_>, (v, t): Typed<'ctx>) -> R<Typed<'ctx>> {
    // int8's loop on bools: 1/1 is 1 and 1/0 is 0, as NumPy gives them.
    if t == BOOLEAN {
        return Ok((lw.cast(v, t, INT8)?, INT8));
    }
    if t.is_complex() {
        let one = lw.ctx.f64_type().const_float(1.0);
        let one = lw.cast(one.into(), FLOAT64, t)?;
        return apply_binop(lw, BinOp::TrueDiv, (one, t), (v, t));
    }
    let work = if t.is_float() { t } else { FLOAT64 };
    let f = as_float(lw, (v, t), work)?;
    let one = f.get_type().const_float(1.0);
    let r = lw.b.build_float_div(one, f, "").map_err(llvm_err)?;
    let r = lw.cast(r.into(), work, t)?;
    Ok((r, t))
}

/// The loop type of a binary ufunc's inputs, both converted to it.
fn loop_args<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    x: Typed<'ctx>,
    y: Typed<'ctx>,
    float: bool,
) -> R<(BasicValueEnum<'ctx>, BasicValueEnum<'ctx>, TypeId)> {
    let mut t = ufunc_loop(x.1, y.1)
        .ok_or_else(|| lw.unsupported(format!("no NumPy loop for ({}, {})", x.1, y.1)))?;
    if float {
        t = float_result(t);
    }
    Ok((lw.cast(x.0, x.1, t)?, lw.cast(y.0, y.1, t)?, t))
}

fn binary_float<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    key: &str,
    x: Typed<'ctx>,
    y: Typed<'ctx>,
) -> R<Typed<'ctx>> {
    let (a, b, t) = loop_args(lw, x, y, true)?;
    let (a, b) = (a.into_float_value(), b.into_float_value());
    let r = match key {
        "logaddexp" | "logaddexp2" => logaddexp(lw, key == "logaddexp2", a, b)?,
        name => lw.float_binary(name, a, b)?,
    };
    Ok((r.into(), t))
}

/// NumPy's `npy_logaddexp`/`npy_logaddexp2`: `log(exp(a) + exp(b))` without overflow
/// (`a + log1p(exp(b - a))` from the larger one; equal infinities give themselves).
fn logaddexp<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    base2: bool,
    a: FloatValue<'ctx>,
    b: FloatValue<'ctx>,
) -> R<FloatValue<'ctx>> {
    let e = llvm_err;
    let t = a.get_type();
    let same =
        lw.b.build_float_compare(FloatPredicate::OEQ, a, b, "")
            .map_err(e)?;
    // Equal inputs: a + log(2) (a + 1 in base 2), also right for infinities.
    let step = if base2 { 1.0 } else { std::f64::consts::LN_2 };
    let at_same =
        lw.b.build_float_add(a, t.const_float(step), "")
            .map_err(e)?;
    let d = lw.b.build_float_sub(a, b, "").map_err(e)?;
    let pos =
        lw.b.build_float_compare(FloatPredicate::OGT, d, t.const_zero(), "")
            .map_err(e)?;
    let big =
        lw.b.build_select(pos, a, b, "")
            .map_err(e)?
            .into_float_value();
    let ad = lw.float_unary("fabs", d)?;
    let neg = lw.b.build_float_neg(ad, "").map_err(e)?;
    let tail = if base2 {
        // log2(1 + 2**-|d|) = log1p(exp2(-|d|)) / ln 2
        let p = lw.float_unary("exp2", neg)?;
        let l = lw.float_unary("log1p", p)?;
        lw.b.build_float_mul(l, t.const_float(std::f64::consts::LOG2_E), "")
            .map_err(e)?
    } else {
        let p = lw.float_unary("exp", neg)?;
        lw.float_unary("log1p", p)?
    };
    let r = lw.b.build_float_add(big, tail, "").map_err(e)?;
    // NaN difference (a NaN input, or inf - inf of opposite signs handled above) gives NaN.
    let ordered =
        lw.b.build_float_compare(FloatPredicate::ORD, d, d, "")
            .map_err(e)?;
    let r = lw.b.build_select(ordered, r, d, "").map_err(e)?;
    Ok(lw
        .b
        .build_select(same, at_same, r.into_float_value(), "")
        .map_err(e)?
        .into_float_value())
}

/// C's `fmod` (the sign of the dividend); integers give 0 for a zero divisor, as NumPy's
/// integer loops (which only warn).
fn fmod<'ctx>(lw: &mut FnLower<'ctx, '_>, x: Typed<'ctx>, y: Typed<'ctx>) -> R<Typed<'ctx>> {
    let (a, b, t) = loop_args(lw, x, y, false)?;
    let e = llvm_err;
    if t.is_float() {
        let r =
            lw.b.build_float_rem(a.into_float_value(), b.into_float_value(), "")
                .map_err(e)?;
        return Ok((r.into(), t));
    }
    let (a, b) = (a.into_int_value(), b.into_int_value());
    let zero = b.get_type().const_zero();
    let is_zero =
        lw.b.build_int_compare(IntPredicate::EQ, b, zero, "")
            .map_err(e)?;
    // A safe divisor for the division itself (its result is discarded when zero); -1 too,
    // so that MIN % -1 does not trap (its remainder is 0).
    let minus_one = b.get_type().const_all_ones();
    let avoid = if t.is_signed() {
        let m1 =
            lw.b.build_int_compare(IntPredicate::EQ, b, minus_one, "")
                .map_err(e)?;
        lw.b.build_or(is_zero, m1, "").map_err(e)?
    } else {
        is_zero
    };
    let one = b.get_type().const_int(1, false);
    let d =
        lw.b.build_select(avoid, one, b, "")
            .map_err(e)?
            .into_int_value();
    let r = if t.is_signed() {
        lw.b.build_int_signed_rem(a, d, "")
    } else {
        lw.b.build_int_unsigned_rem(a, d, "")
    }
    .map_err(e)?;
    let r = lw.b.build_select(avoid, zero, r, "").map_err(e)?;
    Ok((r, t))
}

/// NumPy's `fmax`/`fmin`: a NaN loses to a number.
fn fmax_fmin<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    key: &str,
    x: Typed<'ctx>,
    y: Typed<'ctx>,
) -> R<Typed<'ctx>> {
    let (a, b, t) = loop_args(lw, x, y, false)?;
    let e = llvm_err;
    if t.is_float() {
        // NumPy's loop: `(a >= b || isnan(b)) ? a : b` (`<=` for fmin); signed zeros keep
        // the first operand.
        let (fa, fb) = (a.into_float_value(), b.into_float_value());
        let pred = if key == "fmax" {
            FloatPredicate::OGE
        } else {
            FloatPredicate::OLE
        };
        let keep = lw.b.build_float_compare(pred, fa, fb, "").map_err(e)?;
        let nan_b =
            lw.b.build_float_compare(FloatPredicate::UNO, fb, fb, "")
                .map_err(e)?;
        let keep = lw.b.build_or(keep, nan_b, "").map_err(e)?;
        return Ok((lw.b.build_select(keep, a, b, "").map_err(e)?, t));
    }
    let (a, b) = (a.into_int_value(), b.into_int_value());
    let pred = match (key, t.is_signed() && t != BOOLEAN) {
        ("fmax", true) => IntPredicate::SGT,
        ("fmax", false) => IntPredicate::UGT,
        (_, true) => IntPredicate::SLT,
        (_, false) => IntPredicate::ULT,
    };
    let take_a = lw.b.build_int_compare(pred, a, b, "").map_err(e)?;
    Ok((lw.b.build_select(take_a, a, b, "").map_err(e)?, t))
}

/// Euclid's algorithm on magnitudes (NumPy's `npy_gcd`); `lcm` is `|a / gcd * b|`, 0 when
/// either input is 0.
fn gcd_lcm<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    key: &str,
    x: Typed<'ctx>,
    y: Typed<'ctx>,
) -> R<Typed<'ctx>> {
    let (a, b, t) = loop_args(lw, x, y, false)?;
    let (a, b) = (a.into_int_value(), b.into_int_value());
    let e = llvm_err;
    let abs = |lw: &mut FnLower<'ctx, '_>, v: IntValue<'ctx>| -> R<IntValue<'ctx>> {
        if !t.is_signed() {
            return Ok(v);
        }
        let neg = lw.b.build_int_neg(v, "").map_err(e)?;
        let lt =
            lw.b.build_int_compare(IntPredicate::SLT, v, v.get_type().const_zero(), "")
                .map_err(e)?;
        Ok(lw
            .b
            .build_select(lt, neg, v, "")
            .map_err(e)?
            .into_int_value())
    };
    let (ua, ub) = (abs(lw, a)?, abs(lw, b)?);
    let it = a.get_type();
    // while b != 0: a, b = b, a % b  (unsigned: magnitudes, MIN's is 2**(n-1)).
    let entry = lw.b.get_insert_block().expect("inside a function");
    let head = lw.new_block("gcd_head");
    let body = lw.new_block("gcd_body");
    let done = lw.new_block("gcd_done");
    lw.b.build_unconditional_branch(head).map_err(e)?;
    lw.b.position_at_end(head);
    let pa = lw.b.build_phi(it, "ga").map_err(e)?;
    let pb = lw.b.build_phi(it, "gb").map_err(e)?;
    pa.add_incoming(&[(&ua, entry)]);
    pb.add_incoming(&[(&ub, entry)]);
    let (va, vb) = (
        pa.as_basic_value().into_int_value(),
        pb.as_basic_value().into_int_value(),
    );
    let end =
        lw.b.build_int_compare(IntPredicate::EQ, vb, it.const_zero(), "")
            .map_err(e)?;
    lw.b.build_conditional_branch(end, done, body).map_err(e)?;
    lw.b.position_at_end(body);
    let r = lw.b.build_int_unsigned_rem(va, vb, "").map_err(e)?;
    pa.add_incoming(&[(&vb, body)]);
    pb.add_incoming(&[(&r, body)]);
    lw.b.build_unconditional_branch(head).map_err(e)?;
    lw.b.position_at_end(done);
    if key == "gcd" {
        return Ok((va.into(), t));
    }
    let zero =
        lw.b.build_int_compare(IntPredicate::EQ, va, it.const_zero(), "")
            .map_err(e)?;
    let safe =
        lw.b.build_select(zero, it.const_int(1, false), va, "")
            .map_err(e)?
            .into_int_value();
    let q = lw.b.build_int_unsigned_div(ua, safe, "").map_err(e)?;
    let m = lw.b.build_int_mul(q, ub, "").map_err(e)?;
    Ok((
        lw.b.build_select(zero, it.const_zero(), m, "").map_err(e)?,
        t,
    ))
}

/// `x ** y` in double precision (complex128 for complex inputs), as `np.float_power`.
fn float_power<'ctx>(lw: &mut FnLower<'ctx, '_>, x: Typed<'ctx>, y: Typed<'ctx>) -> R<Typed<'ctx>> {
    let complex = x.1.is_complex() || y.1.is_complex();
    let t = if complex { COMPLEX128 } else { FLOAT64 };
    let a = lw.cast(x.0, x.1, t)?;
    let b = lw.cast(y.0, y.1, t)?;
    apply_binop(lw, BinOp::Pow, (a, t), (b, t))
}
