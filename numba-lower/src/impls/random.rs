//! The `random` module through the generator in `crate::random`.

use inkwell::values::BasicValueEnum;
use inkwell::IntPredicate;
use numba_typeinfer::{ImplKey, Signature};

use super::function_of;
use crate::function::FnLower;
use crate::random::DISTRIBUTIONS;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn key(k: &str) -> ImplKey {
    ImplKey::Function(format!("random.{k}"))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(key("seed"), Args::Exact(vec![TypePat::Int]), seed);
    r.register(key("random"), Args::Exact(vec![]), random);
    r.register(
        key("getrandbits"),
        Args::Exact(vec![TypePat::Int]),
        getrandbits,
    );
    r.register(key("randrange"), Args::Variadic(TypePat::Int), randrange);
    r.register(
        key("randint"),
        Args::Exact(vec![TypePat::Int; 2]),
        randrange,
    );
    for name in DISTRIBUTIONS.iter().filter(|n| **n != "triangular_mode") {
        r.register(key(name), Args::Variadic(TypePat::Float), distribution);
    }
    let np = |k: &str| ImplKey::Function(format!("numpy.random.{k}"));
    r.register(np("seed"), Args::Exact(vec![TypePat::Int]), np_seed);
    for k in [
        "random",
        "random_sample",
        "sample",
        "ranf",
        "rand",
        "uniform",
    ] {
        r.register(np(k), Args::Variadic(TypePat::Float), np_uniform);
    }
    for k in ["randn", "standard_normal", "normal"] {
        r.register(np(k), Args::Variadic(TypePat::Float), np_normal);
    }
    for k in ["exponential", "standard_exponential"] {
        r.register(np(k), Args::Variadic(TypePat::Float), np_exponential);
    }
    r.register(np("randint"), Args::Variadic(TypePat::Int), np_randint);
}

fn np_seed<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_np_seed",
        lw.ctx.void_type().fn_type(&[i64t.into()], false),
    );
    lw.b.build_call(f, &[a[0].into()], "").map_err(llvm_err)?;
    Ok(lw.ghost())
}

fn np_double<'ctx>(lw: &mut FnLower<'ctx, '_>, name: &str) -> R<inkwell::values::FloatValue<'ctx>> {
    let f = lw.runtime_fn(name, lw.ctx.f64_type().fn_type(&[], false));
    Ok(lw.call_value(f, &[])?.into_float_value())
}

/// `random()` and friends, and `uniform(low=0, high=1)`: `low + (high - low) * random()`.
fn np_uniform<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let r = np_double(lw, "numba_rs_np_random")?;
    let [low, high] = a else {
        return Ok(r.into());
    };
    let (low, high) = (low.into_float_value(), high.into_float_value());
    let width = lw.b.build_float_sub(high, low, "").map_err(llvm_err)?;
    let scaled = lw.b.build_float_mul(width, r, "").map_err(llvm_err)?;
    Ok(lw
        .b
        .build_float_add(low, scaled, "")
        .map_err(llvm_err)?
        .into())
}

/// `normal(loc=0, scale=1)`: `loc + scale * gauss()`.
fn np_normal<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let g = np_double(lw, "numba_rs_np_gauss")?;
    let f64t = lw.ctx.f64_type();
    let loc = a
        .first()
        .map_or(f64t.const_zero(), |v| v.into_float_value());
    let scale = a
        .get(1)
        .map_or(f64t.const_float(1.0), |v| v.into_float_value());
    let scaled = lw.b.build_float_mul(scale, g, "").map_err(llvm_err)?;
    Ok(lw
        .b
        .build_float_add(loc, scaled, "")
        .map_err(llvm_err)?
        .into())
}

/// `exponential(scale=1)`: `-log(1 - random()) * scale`.
fn np_exponential<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let r = np_double(lw, "numba_rs_np_random")?;
    let f64t = lw.ctx.f64_type();
    let one_minus =
        lw.b.build_float_sub(f64t.const_float(1.0), r, "")
            .map_err(llvm_err)?;
    let l = lw.float_unary("log", one_minus)?;
    let neg = lw.b.build_float_neg(l, "").map_err(llvm_err)?;
    let scale = a
        .first()
        .map_or(f64t.const_float(1.0), |v| v.into_float_value());
    Ok(lw
        .b
        .build_float_mul(neg, scale, "")
        .map_err(llvm_err)?
        .into())
}

/// `randint(high)` / `randint(low, high)`.
fn np_randint<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let (low, high) = match a {
        [high] => (i64t.const_zero(), high.into_int_value()),
        [low, high] => (low.into_int_value(), high.into_int_value()),
        _ => return Err(lw.unsupported("randint() takes 1 or 2 arguments here")),
    };
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_np_randint",
        i64t.fn_type(&[i64t.into(), i64t.into(), ptr.into()], false),
    );
    let bad = lw.alloca_in_entry(i64t.into(), "randint_bad")?;
    lw.b.build_store(bad, i64t.const_zero()).map_err(llvm_err)?;
    let r = lw.call_value(f, &[low.into(), high.into(), bad.into()])?;
    let flag =
        lw.b.build_load(i64t, bad, "")
            .map_err(llvm_err)?
            .into_int_value();
    let is_bad =
        lw.b.build_int_compare(IntPredicate::NE, flag, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(is_bad, "ValueError", &["low >= high"])?;
    Ok(r)
}

fn seed<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_rnd_seed",
        lw.ctx.void_type().fn_type(&[i64t.into()], false),
    );
    lw.b.build_call(f, &[a[0].into()], "").map_err(llvm_err)?;
    Ok(lw.ghost())
}

fn random<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let f = lw.runtime_fn("numba_rs_rnd_random", lw.ctx.f64_type().fn_type(&[], false));
    lw.call_value(f, &[])
}

fn getrandbits<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_rnd_getrandbits",
        i64t.fn_type(&[i64t.into()], false),
    );
    lw.call_value(f, &[a[0].into()])
}

/// `randrange(stop)`, `randrange(start, stop[, step])` and `randint(a, b)`
/// (`randrange(a, b + 1)`).
fn randrange<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let (start, stop, step) = match a {
        [stop] => (i64t.const_zero(), stop.into_int_value(), one),
        [x, y] if function_of(&sig.key) == "random.randint" => {
            let y1 =
                lw.b.build_int_add(y.into_int_value(), one, "")
                    .map_err(llvm_err)?;
            (x.into_int_value(), y1, one)
        }
        [x, y] => (x.into_int_value(), y.into_int_value(), one),
        [x, y, s] => (x.into_int_value(), y.into_int_value(), s.into_int_value()),
        _ => return Err(lw.unsupported("randrange() takes 1 to 3 arguments")),
    };
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_rnd_randrange",
        i64t.fn_type(&[i64t.into(), i64t.into(), i64t.into(), ptr.into()], false),
    );
    let bad = lw.alloca_in_entry(i64t.into(), "randrange_bad")?;
    lw.b.build_store(bad, i64t.const_zero()).map_err(llvm_err)?;
    let r = lw.call_value(f, &[start.into(), stop.into(), step.into(), bad.into()])?;
    let flag =
        lw.b.build_load(i64t, bad, "")
            .map_err(llvm_err)?
            .into_int_value();
    let is_bad =
        lw.b.build_int_compare(IntPredicate::NE, flag, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(is_bad, "ValueError", &["empty range for randrange()"])?;
    Ok(r)
}

fn distribution<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = function_of(&sig.key)
        .strip_prefix("random.")
        .unwrap_or_default();
    let name = if name == "triangular" && a.len() == 3 {
        "triangular_mode"
    } else {
        name
    };
    let kind = DISTRIBUTIONS
        .iter()
        .position(|n| *n == name)
        .ok_or_else(|| lw.unsupported(format!("random.{name} is not supported")))?;
    if matches!(name, "gammavariate" | "betavariate") {
        // CPython's check (betavariate through gammavariate).
        let zero = lw.ctx.f64_type().const_zero();
        let mut bad = lw.ctx.bool_type().const_zero();
        for v in &a[..2] {
            let le = lw
                .b
                .build_float_compare(inkwell::FloatPredicate::ULE, v.into_float_value(), zero, "")
                .map_err(llvm_err)?;
            bad = lw.b.build_or(bad, le, "").map_err(llvm_err)?;
        }
        lw.raise_const_if(
            bad,
            "ValueError",
            &["gammavariate: alpha and beta must be > 0.0"],
        )?;
    }
    let f64t = lw.ctx.f64_type();
    let i32t = lw.ctx.i32_type();
    let f = lw.runtime_fn(
        "numba_rs_rnd_dist",
        f64t.fn_type(&[i32t.into(), f64t.into(), f64t.into(), f64t.into()], false),
    );
    let arg = |i: usize| -> BasicValueEnum<'ctx> {
        a.get(i).copied().unwrap_or(f64t.const_zero().into())
    };
    lw.call_value(
        f,
        &[
            i32t.const_int(kind as u64, false).into(),
            arg(0).into(),
            arg(1).into(),
            arg(2).into(),
        ],
    )
}
