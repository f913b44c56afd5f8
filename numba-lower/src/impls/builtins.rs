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
    // `literally(x)` of a literal: the value itself.
    for key in numba_typeinfer::builtins::LITERALLY_KEYS {
        r.register(
            ImplKey::Function((*key).into()),
            Args::Exact(vec![TypePat::Any]),
            |_, _, a| Ok(a[0]),
        );
    }
    r.register(key("print"), Args::Variadic(TypePat::Any), print);
    // `type(x)`: a number class carries no data.
    r.register(key("type"), Args::Exact(vec![TypePat::Any]), |lw, _, _| {
        Ok(lw.ghost())
    });
    r.register(key("slice"), Args::Variadic(TypePat::Any), slice);
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
    // An array comprehension's length (numba_ir::comprehension): `len` of the iterable.
    r.register(
        key("intrinsic.length_of_iterator"),
        Args::Exact(vec![TypePat::Any]),
        length_of_iterator,
    );
    // A `functools.reduce` loop's iterable (numba_ir::reduce): itself, a new reference.
    r.register(
        key("intrinsic.reduce_source"),
        Args::Exact(vec![TypePat::Any]),
        |lw, sig, a| {
            lw.incref(sig.ret, a[0])?;
            Ok(a[0])
        },
    );
    // `tuple(t)` of a tuple is the tuple itself (a new reference); `tuple()` is empty.
    r.register(
        key("tuple"),
        Args::Variadic(TypePat::Any),
        |lw, sig, a| match a.first() {
            Some(&t) => {
                lw.incref(sig.ret, t)?;
                Ok(t)
            }
            None => lw.make_struct(sig.ret, &[]),
        },
    );
    r.register(
        key("isinstance"),
        Args::Exact(vec![TypePat::Any, TypePat::Any]),
        isinstance,
    );
    // `getattr`/`hasattr` with a constant name are rewritten before typing
    // (`numba_typeinfer::attr_builtins`); no other call of them types.
    for name in ["getattr", "hasattr"] {
        r.register(key(name), Args::Variadic(TypePat::Any), |lw, _, _| {
            Err(lw.unsupported("getattr()/hasattr() need a constant attribute name"))
        });
    }
    r.register(key("enumerate"), Args::Exact(vec![TypePat::Any]), enumerate);
    r.register(
        key("enumerate"),
        Args::Exact(vec![TypePat::Any, TypePat::Int]),
        enumerate,
    );
    r.register(
        key("divmod"),
        Args::Exact(vec![TypePat::Number, TypePat::Number]),
        divmod,
    );
    r.register(
        key("pow"),
        Args::Exact(vec![TypePat::Number, TypePat::Number]),
        pow2,
    );
    r.register(key("pow"), Args::Exact(vec![TypePat::Int; 3]), pow3);
    r.register(key("hash"), Args::Exact(vec![TypePat::IntOrBool]), hash_int);
    r.register(
        key("hash"),
        Args::Exact(vec![TypePat::Pred(
            numba_typeinfer::npdatetime::is_datetime_like,
        )]),
        |lw, sig, a| {
            // The count itself, as Numba hashes them; a generic timedelta is NumPy 2.2's
            // ValueError.
            if let Type::NPTimedelta(u) = sig.args[0].get() {
                if numba_typeinfer::npdatetime::UNITS[u as usize].is_empty() {
                    let always = lw.ctx.bool_type().const_int(1, false);
                    lw.raise_const_if(always, "ValueError", &["Can't hash generic timedelta64"])?;
                }
            }
            Ok(a[0])
        },
    );
    r.register(key("hash"), Args::Exact(vec![TypePat::Float]), hash_float);
    r.register(key("sum"), Args::Variadic(TypePat::Any), sum);
    for k in ["min", "max"] {
        r.register(key(k), Args::Exact(vec![TypePat::Tuple]), min_max_tuple);
    }
    r.register(
        key("reversed"),
        Args::Exact(vec![TypePat::Exact(RANGE_STATE64)]),
        reversed_range,
    );
    r.register(key("zip"), Args::Variadic(TypePat::Any), zip);
}

fn abs_int<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let iv = a[0].into_int_value();
    // An unsigned value is its own absolute value (its top bit is not a sign).
    if matches!(
        sig.args.first().map(|t| t.get()),
        Some(Type::Integer { signed: false, .. })
    ) || sig.args.first() == Some(&BOOLEAN)
    {
        return Ok(iv.into());
    }
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
    Ok(range_length(lw, start, stop, step)?.into())
}

/// The number of items of `range(start, stop, step)` (`step` is not zero), as CPython's
/// `compute_range_length` computes it: in unsigned arithmetic, so no span overflows
/// (`range(0, 2**63 - 1, 2**61 + 1)` has 4 items); a count past the largest int64
/// (only `range(-2**63, 2**63 - 1)`-like spans) is clamped to it.
pub(super) fn range_length<'ctx>(
    lw: &FnLower<'ctx, '_>,
    start: inkwell::values::IntValue<'ctx>,
    stop: inkwell::values::IntValue<'ctx>,
    step: inkwell::values::IntValue<'ctx>,
) -> R<inkwell::values::IntValue<'ctx>> {
    let b = &lw.b;
    let i64t = lw.ctx.i64_type();
    let zero = i64t.const_zero();
    let one = i64t.const_int(1, false);
    let up = b
        .build_int_compare(IntPredicate::SGT, step, zero, "")
        .map_err(llvm_err)?;
    // Counting up: from start to stop; down: from stop to start, by |step|.
    let hi = b
        .build_select(up, stop, start, "")
        .map_err(llvm_err)?
        .into_int_value();
    let lo = b
        .build_select(up, start, stop, "")
        .map_err(llvm_err)?
        .into_int_value();
    let neg = b.build_int_neg(step, "").map_err(llvm_err)?;
    let mag = b
        .build_select(up, step, neg, "")
        .map_err(llvm_err)?
        .into_int_value();
    let nonempty = b
        .build_int_compare(IntPredicate::SGT, hi, lo, "")
        .map_err(llvm_err)?;
    // hi - lo - 1 fits in 64 unsigned bits when hi > lo; mag is |step| as unsigned.
    let span = b.build_int_sub(hi, lo, "").map_err(llvm_err)?;
    let span = b.build_int_sub(span, one, "").map_err(llvm_err)?;
    // A zero divisor cannot happen (step is not zero), but the empty case must not
    // divide by a garbage value either: divide by 1 there.
    let mag = b
        .build_select(nonempty, mag, one, "")
        .map_err(llvm_err)?
        .into_int_value();
    let q = b.build_int_unsigned_div(span, mag, "").map_err(llvm_err)?;
    let n = b.build_int_add(q, one, "").map_err(llvm_err)?;
    // Past i64::MAX (the add wrapped to a negative, or the quotient was): clamped.
    let too_many = b
        .build_int_compare(IntPredicate::SLT, n, zero, "")
        .map_err(llvm_err)?;
    let n = b
        .build_select(too_many, i64t.const_int(i64::MAX as u64, false), n, "")
        .map_err(llvm_err)?
        .into_int_value();
    Ok(b.build_select(nonempty, n, zero, "")
        .map_err(llvm_err)?
        .into_int_value())
}

/// `isinstance(x, cls)` was decided at compile time from `x`'s type: its type is the
/// literal answer (`numba_typeinfer::isinstance`).
fn isinstance<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let Type::BooleanLiteral(yes) = sig.ret.get() else {
        return Err(lw.unsupported(format!(
            "isinstance() typed as {} rather than its literal answer",
            sig.ret
        )));
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
    let (inner, inner_t) = iterator_of(lw, sig.args[0], a[0])?;
    // The new enumerate holds a reference to what it iterates (a new reference result).
    lw.incref(inner_t, inner)?;
    let st = iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "enumerate")?;
    let count =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    let start = match a.get(1) {
        Some(v) => v.into_int_value(),
        None => lw.ctx.i64_type().const_zero(),
    };
    lw.b.build_store(count, start).map_err(llvm_err)?;
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
        let (inner, inner_t) = iterator_of(lw, t, v)?;
        lw.incref(inner_t, inner)?;
        let p =
            lw.b.build_struct_gep(st, storage, i as u32, "")
                .map_err(llvm_err)?;
        lw.b.build_store(p, inner).map_err(llvm_err)?;
    }
    Ok(storage.into())
}

/// Apply the registered binary operator `op` to two values of type `t`.
fn apply_op<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: numba_ir::BinOp,
    t: TypeId,
    x: BasicValueEnum<'ctx>,
    y: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let sig = numba_typeinfer::context::binop_signature(op, t, t)
        .ok_or_else(|| lw.unsupported(format!("no operator {} on {t}", op.symbol())))?;
    let x = lw.cast(x, t, sig.args[0])?;
    let y = lw.cast(y, t, sig.args[1])?;
    let r = lw.call_impl(&sig, &[x, y])?;
    lw.cast(r, sig.ret, t)
}

fn divmod<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let q = apply_op(lw, numba_ir::BinOp::FloorDiv, t, a[0], a[1])?;
    let m = apply_op(lw, numba_ir::BinOp::Mod, t, a[0], a[1])?;
    lw.make_struct(sig.ret, &[q, m])
}

/// `pow(x, y)` is `x ** y`.
fn pow2<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = Signature {
        ret: sig.ret,
        args: sig.args.clone(),
        key: ImplKey::BinOp(numba_ir::BinOp::Pow),
    };
    lw.call_impl(&op, a)
}

fn pow3<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_pow_mod",
        i64t.fn_type(&[i64t.into(), i64t.into(), i64t.into(), ptr.into()], false),
    );
    let bad = lw.alloca_in_entry(i64t.into(), "pow_bad")?;
    lw.b.build_store(bad, i64t.const_zero()).map_err(llvm_err)?;
    let r = lw.call_value(f, &[a[0].into(), a[1].into(), a[2].into(), bad.into()])?;
    let flag =
        lw.b.build_load(i64t, bad, "")
            .map_err(llvm_err)?
            .into_int_value();
    let is_bad =
        lw.b.build_int_compare(IntPredicate::NE, flag, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        is_bad,
        "ValueError",
        &["pow() 3rd argument cannot be 0, and negative exponents are not supported"],
    )?;
    Ok(r)
}

fn hash_int<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let x = lw.cast(a[0], sig.args[0], INT64)?;
    if sig.args[0] == UINT64 {
        // A uint64 above 2**63 is a big Python int: hash it as such (mod 2**61 - 1).
        let m = i64t.const_int((1 << 61) - 1, false);
        return Ok(lw
            .b
            .build_int_unsigned_rem(x.into_int_value(), m, "")
            .map_err(llvm_err)?
            .into());
    }
    let f = lw.runtime_fn("numba_rs_hash_int", i64t.fn_type(&[i64t.into()], false));
    lw.call_value(f, &[x.into()])
}

fn hash_float<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let x = lw.cast(a[0], sig.args[0], FLOAT64)?;
    let f = lw.runtime_fn(
        "numba_rs_hash_double",
        i64t.fn_type(&[lw.ctx.f64_type().into()], false),
    );
    lw.call_value(f, &[x.into()])
}

/// The items of a tuple value, each converted to `to`.
fn items_as<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    tup_t: TypeId,
    v: BasicValueEnum<'ctx>,
    to: TypeId,
) -> R<Vec<BasicValueEnum<'ctx>>> {
    let sv = v.into_struct_value();
    let mut out = Vec::new();
    for (i, t) in crate::model::members(tup_t).into_iter().enumerate() {
        let x =
            lw.b.build_extract_value(sv, i as u32, "")
                .map_err(llvm_err)?;
        out.push(lw.cast(x, t, to)?);
    }
    Ok(out)
}

fn sum<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let r = sig.ret;
    let mut acc = match a.get(1) {
        Some(&start) => lw.cast(start, sig.args[1], r)?,
        None => crate::model::value_type(lw.ctx, r)?.const_zero(),
    };
    for x in items_as(lw, sig.args[0], a[0], r)? {
        acc = apply_op(lw, numba_ir::BinOp::Add, r, acc, x)?;
    }
    Ok(acc)
}

fn min_max_tuple<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let r = sig.ret;
    let items = items_as(lw, sig.args[0], a[0], r)?;
    let flat = Signature {
        ret: r,
        args: vec![r; items.len()],
        key: sig.key.clone(),
    };
    min_max(lw, &flat, &items)
}

/// `reversed(range(start, stop, step))` as the range it iterates:
/// `range(start + (n - 1) * step, start - step, -step)`.
fn reversed_range<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let n = len_range(lw, sig, a)?.into_int_value();
    let sv = a[0].into_struct_value();
    let b = &lw.b;
    let start = b
        .build_extract_value(sv, 0, "")
        .map_err(llvm_err)?
        .into_int_value();
    let step = b
        .build_extract_value(sv, 2, "")
        .map_err(llvm_err)?
        .into_int_value();
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let n1 = b.build_int_sub(n, one, "").map_err(llvm_err)?;
    let off = b.build_int_mul(n1, step, "").map_err(llvm_err)?;
    let new_start = b.build_int_add(start, off, "").map_err(llvm_err)?;
    // One past `start` in the new direction: `start - step` could overflow where this
    // cannot (but for a range starting at the very end of int64).
    let up = b
        .build_int_compare(IntPredicate::SGT, step, i64t.const_zero(), "")
        .map_err(llvm_err)?;
    let sign = b
        .build_select(up, one, i64t.const_all_ones(), "")
        .map_err(llvm_err)?
        .into_int_value();
    let new_stop = b.build_int_sub(start, sign, "").map_err(llvm_err)?;
    let new_step = b.build_int_neg(step, "").map_err(llvm_err)?;
    lw.make_struct(
        RANGE_STATE64,
        &[new_start.into(), new_stop.into(), new_step.into()],
    )
}

/// `print(*values)`: the values go to the runtime's print hook as typecodes and boundary
/// slots (literal strings travel in their type), with a reference of their own, which the
/// hook's Python objects take over; Python's `print` formats them. A value of a user's
/// type that the host prints itself (Numba's `print_item`) is printed by the host's code
/// between the pieces before and after it, as Numba prints item by item.
fn print<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    use crate::runtime::{PRINT_END_NEWLINE, PRINT_END_SPACE};
    use numba_typeinfer::extension::{external, PRINT_ITEM_KEY};
    let custom = |t: TypeId| {
        matches!(t.get(), Type::Opaque { .. }) && external().is_some_and(|x| x.prints(t))
    };
    if !sig.args.iter().any(|&t| custom(t)) {
        return print_values(lw, &sig.args, a, PRINT_END_NEWLINE);
    }
    // Numba prints item by item: the values before a user's item and a space, the item,
    // then a space, or the newline after the last value.
    let n = sig.args.len();
    let mut start = 0;
    for i in (0..n).filter(|&i| custom(sig.args[i])) {
        if i > start {
            print_values(lw, &sig.args[start..i], &a[start..i], PRINT_END_SPACE)?;
        }
        let item = Signature {
            ret: NONE,
            args: vec![sig.args[i]],
            key: ImplKey::Function(PRINT_ITEM_KEY.into()),
        };
        crate::external::call_external(lw, &item, &a[i..=i])?;
        start = i + 1;
        let end = if start == n {
            PRINT_END_NEWLINE
        } else {
            PRINT_END_SPACE
        };
        print_values(lw, &[], &[], end)?;
    }
    if start < n {
        print_values(lw, &sig.args[start..], &a[start..], PRINT_END_NEWLINE)?;
    }
    Ok(lw.ghost())
}

/// One call of the print hook: `values` separated by spaces, then `end`.
fn print_values<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    types: &[TypeId],
    a: &[BasicValueEnum<'ctx>],
    end: u32,
) -> R<BasicValueEnum<'ctx>> {
    let ctx = lw.ctx;
    let i64t = ctx.i64_type();
    let i32t = ctx.i32_type();
    let ptr = ctx.ptr_type(inkwell::AddressSpace::default());
    let mut nslots = 0u32;
    for &t in types {
        nslots += crate::callconv::boundary_shape(t)
            .map_err(|_| {
                lw.unsupported(format!(
                    "printing a value of type {t} is not supported by numba-rs yet"
                ))
            })?
            .slots() as u32;
    }
    let types_g = crate::cache::typecode_table(lw.module, types);
    let buf = lw.alloca_in_entry(i64t.array_type(nslots.max(1)).into(), "print_slots")?;
    let codec = crate::model::SlotCodec {
        ctx,
        b: &lw.b,
        slots: buf,
    };
    let mut idx = 0u32;
    for (&v, &t) in a.iter().zip(types) {
        crate::model::model_of(t)?.pack(&codec, t, v, &mut idx)?;
    }
    // The hook makes Python objects as a function's result does, each taking one NRT
    // reference (an array's MemInfo, a string's): it gets references of its own.
    for (&v, &t) in a.iter().zip(types) {
        lw.incref(t, v)?;
    }
    let f = lw.runtime_fn(
        "numba_rs_print",
        ctx.void_type()
            .fn_type(&[ptr.into(), i64t.into(), ptr.into(), i32t.into()], false),
    );
    let n = i64t.const_int(types.len() as u64, false);
    let end = i32t.const_int(u64::from(end), false);
    lw.b.build_call(
        f,
        &[
            types_g.as_pointer_value().into(),
            n.into(),
            buf.into(),
            end.into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    Ok(lw.ghost())
}

/// `slice(start, stop[, step])`: Numba's representation, `None` bounds replaced by the
/// defaults for the step's direction (0 or the largest int for the start, the largest or
/// smallest int for the stop).
fn slice<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    // `slice(stop)`: a single argument is the stop.
    let at = |i: usize| {
        if sig.args.len() == 1 {
            i.checked_sub(1)
        } else {
            Some(i)
        }
    };
    let given = |i: usize| -> Option<inkwell::values::IntValue<'ctx>> {
        let i = at(i)?;
        match (sig.args.get(i), a.get(i)) {
            (Some(&t), Some(v)) if t != NONE => Some(v.into_int_value()),
            _ => None,
        }
    };
    let step = given(2).unwrap_or(i64t.const_int(1, false));
    let up =
        lw.b.build_int_compare(IntPredicate::SGT, step, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let max = i64t.const_int(i64::MAX as u64, false);
    let min = i64t.const_int(i64::MIN as u64, true);
    let start = match given(0) {
        Some(v) => v,
        None => {
            lw.b.build_select(up, i64t.const_zero(), max, "")
                .map_err(llvm_err)?
                .into_int_value()
        }
    };
    let stop = match given(1) {
        Some(v) => v,
        None => {
            lw.b.build_select(up, max, min, "")
                .map_err(llvm_err)?
                .into_int_value()
        }
    };
    lw.make_struct(sig.ret, &[start.into(), stop.into(), step.into()])
}

fn length_of_iterator<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let len = Signature {
        ret: sig.ret,
        args: sig.args.clone(),
        key: key("len"),
    };
    lw.call_impl(&len, a)
}
