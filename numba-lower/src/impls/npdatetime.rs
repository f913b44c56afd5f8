//! NumPy's `datetime64` / `timedelta64` operators (typed in numba-typeinfer's
//! `npdatetime`): int64 counts of a unit, NaT (`i64::MIN`) absorbing every arithmetic
//! operation and comparing unequal to everything, as NumPy's loops do. Operands arrive
//! converted to the signature's unit ([`convert_unit`], also the casts between units).

use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use numba_ir::{BinOp, UnaryOp};
use numba_typeinfer::npdatetime::{factor, GENERIC, NAT};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::manipulation::{int_const as i64c, select};
use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn is_dt(t: TypeId) -> bool {
    matches!(t.get(), Type::NPDatetime(_) | Type::NPTimedelta(_))
}

pub(crate) fn register(r: &mut Registry) {
    let dt = TypePat::Pred(is_dt);
    // Scalars only: array operands go element-wise through the array operators.
    let forms = || {
        [
            Args::Exact(vec![dt, dt]),
            Args::Exact(vec![dt, TypePat::Number]),
            Args::Exact(vec![TypePat::Number, dt]),
        ]
    };
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::TrueDiv,
        BinOp::FloorDiv,
        BinOp::Mod,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Eq,
        BinOp::Ne,
    ] {
        for args in forms() {
            r.register(ImplKey::BinOp(op), args, binop);
        }
    }
    for op in [UnaryOp::Neg, UnaryOp::Pos] {
        r.register(ImplKey::Unary(op), Args::Exact(vec![dt]), unary);
    }
    // Element-wise: sign flips and magnitudes of timedeltas, larger/smaller of two.
    let dt_or_array = || {
        TypePat::Pred(|t| {
            is_dt(t) || numba_typeinfer::numpy::array_parts(t).is_some_and(|p| is_dt(p.0))
        })
    };
    for k in ["max", "min"] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![dt, dt]),
            extreme,
        );
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![dt_or_array()]),
            reduce,
        );
    }
    for k in [
        "abs",
        "numpy.abs",
        "numpy.absolute",
        "numpy.negative",
        "numpy.positive",
    ] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![dt_or_array()]),
            unary_fn,
        );
    }
    // Two operands only: with an output array the call is `ufunc_into_out`'s.
    for k in ["numpy.maximum", "numpy.minimum", "numpy.fmax", "numpy.fmin"] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![dt_or_array(), TypePat::Any]),
            extreme,
        );
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![TypePat::Any, dt_or_array()]),
            extreme,
        );
    }
    for k in [
        "array.max",
        "array.min",
        "numpy.max",
        "numpy.min",
        "numpy.amax",
        "numpy.amin",
    ] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![dt_or_array()]),
            reduce,
        );
    }
    for k in ["numpy.datetime64", "numpy.timedelta64"] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Variadic(TypePat::Any),
            constructor,
        );
    }
}

/// `np.datetime64('2020-03-01')`, `np.timedelta64(3, 'h')`, `np.datetime64('NaT')`: a
/// count (given, or the constant string read at compile time) of the result's unit.
fn constructor<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    use numba_typeinfer::npdatetime::{parse_datetime, rescale};
    let to = unit_of(sig.ret);
    if let Type::StringLiteral(text) = sig.args[0].get() {
        let (count, own) = parse_datetime(&text)
            .ok_or_else(|| lw.unsupported(format!("the date string {text:?}")))?;
        let v = rescale(count, own, to)
            .ok_or_else(|| lw.unsupported(format!("{text:?} in {}", sig.ret)))?;
        return Ok(i64c(lw, v).into());
    }
    let v = lw.cast(a[0], sig.args[0], INT64)?;
    Ok(v)
}

fn is_nat<'ctx>(lw: &FnLower<'ctx, '_>, v: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    lw.b.build_int_compare(IntPredicate::EQ, v, i64c(lw, NAT), "")
        .map_err(llvm_err)
}

fn unit_of(t: TypeId) -> u8 {
    match t.get() {
        Type::NPDatetime(u) | Type::NPTimedelta(u) => u,
        _ => GENERIC,
    }
}

/// Days from 1970-01-01 to the first day of month `m` (0-based from January 1970),
/// by the proleptic Gregorian calendar (the civil-from-days inverse).
fn days_from_months<'ctx>(lw: &FnLower<'ctx, '_>, months: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    let b = &lw.b;
    let e = llvm_err;
    let c = |v: i64| i64c(lw, v);
    // year and month (March-based, so the leap day ends the year).
    let floor_div = |x: IntValue<'ctx>, d: i64| -> R<IntValue<'ctx>> {
        // floor(x / d) for d > 0.
        let q = b.build_int_signed_div(x, c(d), "").map_err(e)?;
        let r = b.build_int_signed_rem(x, c(d), "").map_err(e)?;
        let neg = b
            .build_int_compare(IntPredicate::SLT, r, c(0), "")
            .map_err(e)?;
        let q1 = b.build_int_sub(q, c(1), "").map_err(e)?;
        Ok(b.build_select(neg, q1, q, "").map_err(e)?.into_int_value())
    };
    let y0 = floor_div(months, 12)?;
    let m0 = b
        .build_int_sub(months, b.build_int_mul(y0, c(12), "").map_err(e)?, "")
        .map_err(e)?; // 0..11, January = 0
    let year = b.build_int_add(y0, c(1970), "").map_err(e)?;
    let month = b.build_int_add(m0, c(1), "").map_err(e)?; // 1..12
                                                           // days_from_civil(year, month, 1).
    let before_march = b
        .build_int_compare(IntPredicate::ULE, month, c(2), "")
        .map_err(e)?;
    let y = b
        .build_int_sub(
            year,
            b.build_int_z_extend(before_march, lw.ctx.i64_type(), "")
                .map_err(e)?,
            "",
        )
        .map_err(e)?;
    let era = floor_div(y, 400)?;
    let yoe = b
        .build_int_sub(y, b.build_int_mul(era, c(400), "").map_err(e)?, "")
        .map_err(e)?;
    let mp = {
        let plus9 = b.build_int_add(month, c(9), "").map_err(e)?;
        let minus3 = b.build_int_sub(month, c(3), "").map_err(e)?;
        b.build_select(before_march, plus9, minus3, "")
            .map_err(e)?
            .into_int_value()
    };
    let doy = b
        .build_int_signed_div(
            b.build_int_add(b.build_int_mul(mp, c(153), "").map_err(e)?, c(2), "")
                .map_err(e)?,
            c(5),
            "",
        )
        .map_err(e)?;
    let doe = {
        let a = b.build_int_mul(yoe, c(365), "").map_err(e)?;
        let bq = b.build_int_signed_div(yoe, c(4), "").map_err(e)?;
        let cq = b.build_int_signed_div(yoe, c(100), "").map_err(e)?;
        let s = b.build_int_add(a, bq, "").map_err(e)?;
        let s = b.build_int_sub(s, cq, "").map_err(e)?;
        b.build_int_add(s, doy, "").map_err(e)?
    };
    let days = b
        .build_int_add(b.build_int_mul(era, c(146_097), "").map_err(e)?, doe, "")
        .map_err(e)?;
    b.build_int_sub(days, c(719_468), "").map_err(e)
}

/// `x // k` rounding toward negative infinity, for a positive constant `k`.
fn floor_div<'ctx>(lw: &mut FnLower<'ctx, '_>, x: IntValue<'ctx>, k: i64) -> R<IntValue<'ctx>> {
    let e = llvm_err;
    let q = lw.b.build_int_signed_div(x, i64c(lw, k), "").map_err(e)?;
    let r = lw.b.build_int_signed_rem(x, i64c(lw, k), "").map_err(e)?;
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, r, i64c(lw, 0), "")
            .map_err(e)?;
    let q1 = lw.b.build_int_sub(q, i64c(lw, 1), "").map_err(e)?;
    Ok(lw
        .b
        .build_select(neg, q1, q, "")
        .map_err(e)?
        .into_int_value())
}

/// `v` (a datetime64/timedelta64 of type `from`) in `to`'s unit: multiplied by the
/// units' ratio, a calendar datetime through its first day; NaT stays NaT.
pub(crate) fn convert_unit<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    v: IntValue<'ctx>,
    from: TypeId,
    to: TypeId,
) -> R<IntValue<'ctx>> {
    let (a, b) = (unit_of(from), unit_of(to));
    if a == b || a == GENERIC || b == GENERIC {
        return Ok(v);
    }
    let nat = is_nat(lw, v)?;
    let converted = if let Some(f) = factor(a, b) {
        lw.b.build_int_mul(v, i64c(lw, f), "").map_err(llvm_err)?
    } else if a <= 1 && b >= 2 {
        // Years or months to days, then to the finer unit (weeks rounding down, as
        // NumPy's).
        let months = if a == 0 {
            lw.b.build_int_mul(v, i64c(lw, 12), "").map_err(llvm_err)?
        } else {
            v
        };
        let days = days_from_months(lw, months)?;
        if b == 2 {
            floor_div(lw, days, 7)?
        } else {
            let f = factor(3, b).unwrap_or(1);
            lw.b.build_int_mul(days, i64c(lw, f), "")
                .map_err(llvm_err)?
        }
    } else {
        return Err(lw.unsupported(format!("cannot convert {from} to {to}")));
    };
    select(lw, nat, v, converted)
}

fn binop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = super::binop_of(&sig.key);
    let (lt, rt) = (sig.args[0], sig.args[1]);
    let e = llvm_err;
    let nat = i64c(lw, NAT);
    // Comparisons: NaT is unequal to everything (itself too), and orders before nothing.
    if op.is_comparison() {
        let (x, y) = (a[0].into_int_value(), a[1].into_int_value());
        let pred = match op {
            BinOp::Lt => IntPredicate::SLT,
            BinOp::Le => IntPredicate::SLE,
            BinOp::Gt => IntPredicate::SGT,
            BinOp::Ge => IntPredicate::SGE,
            BinOp::Eq => IntPredicate::EQ,
            _ => IntPredicate::NE,
        };
        let r = lw.b.build_int_compare(pred, x, y, "").map_err(e)?;
        let either =
            lw.b.build_or(is_nat(lw, x)?, is_nat(lw, y)?, "")
                .map_err(e)?;
        let when_nat = lw
            .ctx
            .bool_type()
            .const_int(u64::from(op == BinOp::Ne), false);
        return lw.b.build_select(either, when_nat, r, "").map_err(e);
    }
    let both_dt = is_dt(lt) && is_dt(rt);
    if both_dt {
        let (x, y) = (a[0].into_int_value(), a[1].into_int_value());
        let either =
            lw.b.build_or(is_nat(lw, x)?, is_nat(lw, y)?, "")
                .map_err(e)?;
        return Ok(match op {
            BinOp::Add => select(lw, either, nat, lw.b.build_int_add(x, y, "").map_err(e)?)?.into(),
            BinOp::Sub => select(lw, either, nat, lw.b.build_int_sub(x, y, "").map_err(e)?)?.into(),
            // timedelta / timedelta: a float (NaN for NaT).
            BinOp::TrueDiv => {
                let f64t = lw.ctx.f64_type();
                let xf = lw.b.build_signed_int_to_float(x, f64t, "").map_err(e)?;
                let yf = lw.b.build_signed_int_to_float(y, f64t, "").map_err(e)?;
                let q = lw.b.build_float_div(xf, yf, "").map_err(e)?;
                lw.b.build_select(either, f64t.const_float(f64::NAN), q, "")
                    .map_err(e)?
            }
            // Floor division and remainder: NaT or a zero divisor give 0 / NaT (NumPy's
            // loops, which warn there).
            BinOp::FloorDiv | BinOp::Mod => {
                let zero = i64c(lw, 0);
                let y0 =
                    lw.b.build_int_compare(IntPredicate::EQ, y, zero, "")
                        .map_err(e)?;
                let bad = lw.b.build_or(either, y0, "").map_err(e)?;
                // Python's floored division on a nonzero divisor (int's own loop).
                let safe_y = select(lw, y0, i64c(lw, 1), y)?;
                let r = super::int::floordiv_mod(lw, op, x, safe_y, true)?.into_int_value();
                let when_bad = if op == BinOp::FloorDiv { zero } else { nat };
                select(lw, bad, when_bad, r)?.into()
            }
            _ => return Err(lw.unsupported(format!("{sig} on datetimes"))),
        });
    }
    // A timedelta and a number: scaled, NaT kept (and made when a float result is NaN).
    let (td, n, nt) = if is_dt(lt) {
        (a[0].into_int_value(), a[1], rt)
    } else {
        (a[1].into_int_value(), a[0], lt)
    };
    let td_nat = is_nat(lw, td)?;
    let f64t = lw.ctx.f64_type();
    let r = if nt.is_float() {
        let x = lw.b.build_signed_int_to_float(td, f64t, "").map_err(e)?;
        let y = n.into_float_value();
        let q = match op {
            BinOp::Mul => lw.b.build_float_mul(x, y, "").map_err(e)?,
            // `/` and `//` by a number both truncate toward zero (NumPy's loops).
            _ => lw.b.build_float_div(x, y, "").map_err(e)?,
        };
        // NumPy casts the double back (NaN or out of range: NaT).
        let finite =
            lw.b.build_float_compare(
                FloatPredicate::OLT,
                lw.float_unary("fabs", q)?,
                f64t.const_float(9.2e18),
                "",
            )
            .map_err(e)?;
        let i =
            lw.b.build_float_to_signed_int(q, lw.ctx.i64_type(), "")
                .map_err(e)?;
        let i = select(lw, finite, i, nat)?;
        select(lw, td_nat, nat, i)?
    } else {
        let y = n.into_int_value();
        let y =
            lw.b.build_int_s_extend_or_bit_cast(y, lw.ctx.i64_type(), "")
                .map_err(e)?;
        match op {
            BinOp::Mul => {
                let p = lw.b.build_int_mul(td, y, "").map_err(e)?;
                select(lw, td_nat, nat, p)?
            }
            _ => {
                // Division by an integer: NaT for a zero divisor, truncated toward zero for
                // `/` and `//` alike (NumPy's timedelta-by-int loops).
                let zero = i64c(lw, 0);
                let y0 =
                    lw.b.build_int_compare(IntPredicate::EQ, y, zero, "")
                        .map_err(e)?;
                let safe = select(lw, y0, i64c(lw, 1), y)?;
                let q = lw.b.build_int_signed_div(td, safe, "").map_err(e)?;
                let bad = lw.b.build_or(td_nat, y0, "").map_err(e)?;
                select(lw, bad, nat, q)?
            }
        }
    };
    Ok(r.into())
}

fn unary<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let v = a[0].into_int_value();
    Ok(match sig.key {
        // NaT negates to itself (i64::MIN wraps).
        ImplKey::Unary(UnaryOp::Neg) => lw.b.build_int_neg(v, "").map_err(llvm_err)?.into(),
        _ => v.into(),
    })
}

/// `np.isnat(x)` / `np.isnan(x)` of one datetime64 or timedelta64 value.
pub(crate) fn nat_test<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    v: IntValue<'ctx>,
    finite: bool,
) -> R<IntValue<'ctx>> {
    let p = if finite {
        IntPredicate::NE
    } else {
        IntPredicate::EQ
    };
    lw.b.build_int_compare(p, v, i64c(lw, NAT), "")
        .map_err(llvm_err)
}

fn dtype_of(t: TypeId) -> TypeId {
    numba_typeinfer::numpy::array_parts(t).map_or(t, |p| p.0)
}

/// `abs(td)`, `np.negative(td)`, ...: one value (NaT kept: i64::MIN negates and takes its
/// magnitude to itself), or each element of an array.
fn unary_fn<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = match &sig.key {
        ImplKey::Function(k) => k.rsplit('.').next().unwrap_or("").to_string(),
        _ => String::new(),
    };
    let one = |lw: &mut FnLower<'ctx, '_>,
               (v, t): (BasicValueEnum<'ctx>, TypeId)|
     -> R<(BasicValueEnum<'ctx>, TypeId)> {
        let x = v.into_int_value();
        let e = llvm_err;
        let r = match name.as_str() {
            "negative" => lw.b.build_int_neg(x, "").map_err(e)?,
            "positive" => x,
            _ => {
                let neg = lw.b.build_int_neg(x, "").map_err(e)?;
                let below =
                    lw.b.build_int_compare(IntPredicate::SLT, x, i64c(lw, 0), "")
                        .map_err(e)?;
                select(lw, below, neg, x)?
            }
        };
        Ok((r.into(), t))
    };
    if !sig.args[0].is_array() {
        return Ok(one(lw, (a[0], sig.args[0]))?.0);
    }
    super::array_ops::map_elements(lw, sig.ret, &[(sig.args[0], a[0])], &mut |lw, e| {
        one(lw, e[0])
    })
}

/// `np.maximum` / `np.minimum` (NaT propagates) and `np.fmax` / `np.fmin` (NaT is
/// skipped), in the result's unit.
fn extreme<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = match &sig.key {
        ImplKey::Function(k) => k.rsplit('.').next().unwrap_or("").to_string(),
        _ => String::new(),
    };
    let want = dtype_of(sig.ret);
    let larger = name.contains("max");
    let skip_nat = name.starts_with('f');
    // Python's `max(a, b)` / `min(a, b)`: `b` only when it compares greater (less), and
    // nothing compares so with NaT.
    let python = matches!(&sig.key, ImplKey::Function(k) if k == "max" || k == "min");
    let mut pick = |lw: &mut FnLower<'ctx, '_>,
                    e: &[(BasicValueEnum<'ctx>, TypeId)]|
     -> R<(BasicValueEnum<'ctx>, TypeId)> {
        let x = convert_unit(lw, e[0].0.into_int_value(), e[0].1, want)?;
        let y = convert_unit(lw, e[1].0.into_int_value(), e[1].1, want)?;
        let p = if larger {
            IntPredicate::SGT
        } else {
            IntPredicate::SLT
        };
        let x_wins = lw.b.build_int_compare(p, x, y, "").map_err(llvm_err)?;
        let best = select(lw, x_wins, x, y)?;
        let (xn, yn) = (is_nat(lw, x)?, is_nat(lw, y)?);
        let r = if python {
            let p = if larger {
                IntPredicate::SGT
            } else {
                IntPredicate::SLT
            };
            let y_wins = lw.b.build_int_compare(p, y, x, "").map_err(llvm_err)?;
            let either = lw.b.build_or(xn, yn, "").map_err(llvm_err)?;
            let no_nat = lw.b.build_not(either, "").map_err(llvm_err)?;
            let take_y = lw.b.build_and(y_wins, no_nat, "").map_err(llvm_err)?;
            select(lw, take_y, y, x)?
        } else if skip_nat {
            // The other value where one is NaT.
            let r = select(lw, xn, y, best)?;
            select(lw, yn, x, r)?
        } else {
            let either = lw.b.build_or(xn, yn, "").map_err(llvm_err)?;
            select(lw, either, i64c(lw, NAT), best)?
        };
        Ok((r.into(), want))
    };
    if !sig.args[0].is_array() && !sig.args[1].is_array() {
        return Ok(pick(lw, &[(a[0], sig.args[0]), (a[1], sig.args[1])])?.0);
    }
    super::array_ops::map_elements(
        lw,
        sig.ret,
        &[(sig.args[0], a[0]), (sig.args[1], a[1])],
        &mut pick,
    )
}

/// `a.max()` / `a.min()` of a datetime64 / timedelta64 array: NaT if any element is NaT
/// (NumPy's), NumPy's ValueError for an empty array.
fn reduce<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    use crate::model::array::field;
    let larger = matches!(&sig.key, ImplKey::Function(k) if k.contains("max"));
    // Python's `max(a)` / `min(a)` iterate with the comparison operators, which are
    // False for NaT: a NaT is kept only when it comes first. NumPy's propagate it.
    let builtin = matches!(&sig.key, ImplKey::Function(k) if k == "max" || k == "min");
    let t = sig.args[0];
    let arr = a[0].into_struct_value();
    let n = super::array_ops::get_int(lw, arr, field::NITEMS)?;
    let empty =
        lw.b.build_int_compare(IntPredicate::EQ, n, i64c(lw, 0), "")
            .map_err(llvm_err)?;
    let what = if larger { "maximum" } else { "minimum" };
    let msg = if builtin {
        format!(
            "{}() arg is an empty sequence",
            if larger { "max" } else { "min" }
        )
    } else {
        format!("zero-size array to reduction operation {what} which has no identity")
    };
    lw.raise_const_if(empty, "ValueError", &[&msg])?;
    let slot = lw.alloca_in_entry(lw.ctx.i64_type().into(), "best")?;
    let first = super::array_ops::flat_ptr(lw, t, arr, i64c(lw, 0))?;
    let v0 =
        lw.b.build_load(lw.ctx.i64_type(), first, "")
            .map_err(llvm_err)?;
    lw.b.build_store(slot, v0).map_err(llvm_err)?;
    let (lp, i) = super::array_ops::Loop::begin(lw, n)?;
    let p = super::array_ops::flat_ptr(lw, t, arr, i)?;
    let v =
        lw.b.build_load(lw.ctx.i64_type(), p, "")
            .map_err(llvm_err)?
            .into_int_value();
    let best =
        lw.b.build_load(lw.ctx.i64_type(), slot, "")
            .map_err(llvm_err)?
            .into_int_value();
    let pr = if larger {
        IntPredicate::SGT
    } else {
        IntPredicate::SLT
    };
    let wins = lw.b.build_int_compare(pr, v, best, "").map_err(llvm_err)?;
    let either =
        lw.b.build_or(is_nat(lw, v)?, is_nat(lw, best)?, "")
            .map_err(llvm_err)?;
    let next = if builtin {
        let no_nat = lw.b.build_not(either, "").map_err(llvm_err)?;
        let wins = lw.b.build_and(wins, no_nat, "").map_err(llvm_err)?;
        select(lw, wins, v, best)?
    } else {
        let picked = select(lw, wins, v, best)?;
        select(lw, either, i64c(lw, NAT), picked)?
    };
    lw.b.build_store(slot, next).map_err(llvm_err)?;
    lp.end(lw)?;
    lw.b.build_load(lw.ctx.i64_type(), slot, "")
        .map_err(llvm_err)
}
