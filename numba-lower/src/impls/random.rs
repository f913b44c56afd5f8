//! The `random` module and `numpy.random` through the generators in `crate::random`:
//! scalars come from one runtime call each, arrays (`size=`, `rand(d0, ...)`, `choice`,
//! `permutation`) are allocated here and filled by one runtime call in C order, and
//! `shuffle` permutes an array in place.

use inkwell::values::{BasicValueEnum, IntValue, PointerValue, StructValue};
use inkwell::IntPredicate;
use numba_typeinfer::types::{TypeId, NONE};
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{data_ptr, dim, dims_of, get_int, map_elements};
use super::arrays::allocate;
use super::function_of;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::model::model_of;
use crate::random::{DISTRIBUTIONS, NP_EXPONENTIAL, NP_NORMAL, NP_UNIFORM};
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
        "randn",
        "standard_normal",
        "normal",
        "exponential",
        "standard_exponential",
    ] {
        r.register(np(k), Args::Variadic(TypePat::Any), np_float);
    }
    r.register(np("randint"), Args::Variadic(TypePat::Any), np_randint);
    r.register(np("choice"), Args::Variadic(TypePat::Any), np_choice);
    r.register(np("shuffle"), Args::Exact(vec![TypePat::Any]), np_shuffle);
    r.register(
        np("permutation"),
        Args::Exact(vec![TypePat::Any]),
        np_permutation,
    );
}

/// `numpy.random`'s float distributions: the kind of draw, how many scalar parameters
/// precede `size`, and their defaults.
fn np_distribution(name: &str) -> Option<(u32, usize, [f64; 2])> {
    Some(match name {
        "random" | "random_sample" | "sample" | "ranf" | "rand" => (NP_UNIFORM, 0, [0.0, 1.0]),
        "uniform" => (NP_UNIFORM, 2, [0.0, 1.0]),
        "standard_normal" | "randn" => (NP_NORMAL, 0, [0.0, 1.0]),
        "normal" => (NP_NORMAL, 2, [0.0, 1.0]),
        "standard_exponential" => (NP_EXPONENTIAL, 0, [1.0, 0.0]),
        "exponential" => (NP_EXPONENTIAL, 1, [1.0, 0.0]),
        _ => return None,
    })
}

fn np_name(sig: &Signature) -> &str {
    function_of(&sig.key)
        .strip_prefix("numpy.random.")
        .unwrap_or_default()
}

/// The dimensions of argument `i` when it is a size (an int or a tuple of ints), `None`
/// when it is absent or `None`.
fn size_dims<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    i: usize,
) -> R<Option<Vec<IntValue<'ctx>>>> {
    match (sig.args.get(i), a.get(i)) {
        (Some(&t), Some(&v)) if t != NONE => Ok(Some(dims_of(lw, t, v)?)),
        _ => Ok(None),
    }
}

/// The number of items a shape holds (to check arguments before allocating).
fn count<'ctx>(lw: &FnLower<'ctx, '_>, dims: &[IntValue<'ctx>]) -> R<IntValue<'ctx>> {
    let mut n = lw.ctx.i64_type().const_int(1, false);
    for &d in dims {
        n = lw.b.build_int_mul(n, d, "").map_err(llvm_err)?;
    }
    Ok(n)
}

/// A new C-ordered array of type `t` and its data pointer and item count.
fn new_array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    dims: &[IntValue<'ctx>],
) -> R<(StructValue<'ctx>, PointerValue<'ctx>, IntValue<'ctx>)> {
    let arr = allocate(lw, t, dims)?;
    let data = data_ptr(lw, arr)?;
    let n = get_int(lw, arr, field::NITEMS)?;
    Ok((arr, data, n))
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

/// `random(size=None)` and its aliases, `uniform(low=0, high=1, size=None)`,
/// `standard_normal(size=None)`, `normal(loc=0, scale=1, size=None)`,
/// `standard_exponential(size=None)`, `exponential(scale=1, size=None)`, and
/// `rand(d0, ...)`/`randn(d0, ...)`: one value, or an array filled in C order.
fn np_float<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = np_name(sig);
    let (kind, nparams, defaults) = np_distribution(name)
        .ok_or_else(|| lw.unsupported(format!("numpy.random.{name} is not lowered")))?;
    let f64t = lw.ctx.f64_type();
    let mut params = [f64t.const_float(defaults[0]), f64t.const_float(defaults[1])];
    let dims = if matches!(name, "rand" | "randn") {
        (!a.is_empty()).then(|| a.iter().map(|v| v.into_int_value()).collect::<Vec<_>>())
    } else {
        for (p, v) in params.iter_mut().zip(a.iter().take(nparams)) {
            *p = v.into_float_value();
        }
        size_dims(lw, sig, a, nparams)?
    };
    let i32t = lw.ctx.i32_type();
    let kind = i32t.const_int(u64::from(kind), false);
    let Some(dims) = dims else {
        let f = lw.runtime_fn(
            "numba_rs_np_draw",
            f64t.fn_type(&[i32t.into(), f64t.into(), f64t.into()], false),
        );
        return lw.call_value(f, &[kind.into(), params[0].into(), params[1].into()]);
    };
    let (arr, data, n) = new_array(lw, sig.ret, &dims)?;
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_np_fill",
        lw.ctx.void_type().fn_type(
            &[
                i32t.into(),
                f64t.into(),
                f64t.into(),
                ptr.into(),
                i64t.into(),
            ],
            false,
        ),
    );
    lw.b.build_call(
        f,
        &[
            kind.into(),
            params[0].into(),
            params[1].into(),
            data.into(),
            n.into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    Ok(arr.into())
}

/// `randint(high)`, `randint(low, high=None, size=None)` (`high=None`: `[0, low)`).
fn np_randint<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let first = a
        .first()
        .ok_or_else(|| lw.unsupported("randint() needs an argument"))?
        .into_int_value();
    let (low, high) = match (sig.args.get(1), a.get(1)) {
        (Some(&t), Some(h)) if t != NONE => (first, h.into_int_value()),
        _ => (i64t.const_zero(), first),
    };
    let Some(dims) = size_dims(lw, sig, a, 2)? else {
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
        return Ok(r);
    };
    // Checked before allocating (a raise does not free what was allocated); an empty
    // size draws nothing and checks nothing, as in NumPy.
    let m = count(lw, &dims)?;
    let empty =
        lw.b.build_int_compare(IntPredicate::SGE, low, high, "")
            .map_err(llvm_err)?;
    let wanted =
        lw.b.build_int_compare(IntPredicate::NE, m, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let bad = lw.b.build_and(empty, wanted, "").map_err(llvm_err)?;
    lw.raise_const_if(bad, "ValueError", &["low >= high"])?;
    let (arr, data, n) = new_array(lw, sig.ret, &dims)?;
    let f = lw.runtime_fn(
        "numba_rs_np_randint_fill",
        lw.ctx
            .void_type()
            .fn_type(&[i64t.into(), i64t.into(), ptr.into(), i64t.into()], false),
    );
    lw.b.build_call(f, &[low.into(), high.into(), data.into(), n.into()], "")
        .map_err(llvm_err)?;
    Ok(arr.into())
}

/// `choice(a, size=None, replace=True)` for an int population (`range(a)`) or a 1-d
/// array. Without `size` one sample is drawn as `randint(0, n)` whatever `replace` says
/// (Numba's behaviour; NumPy permutes the whole population when `replace=False`).
fn np_choice<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let pop_t = sig.args[0];
    let (src, stride, itemsize, n, empty_msg) = if pop_t.is_array() {
        let arr = a[0].into_struct_value();
        (
            data_ptr(lw, arr)?,
            dim(lw, arr, field::STRIDES, 0)?,
            get_int(lw, arr, field::ITEMSIZE)?,
            dim(lw, arr, field::SHAPE, 0)?,
            "'a' cannot be empty unless no samples are taken",
        )
    } else {
        (
            ptr.const_null(),
            i64t.const_zero(),
            i64t.const_int(8, false),
            a[0].into_int_value(),
            "a must be greater than 0 unless no samples are taken",
        )
    };
    let dims = size_dims(lw, sig, a, 1)?;
    let replace = match (sig.args.get(2), a.get(2)) {
        (Some(_), Some(r)) if dims.is_some() => {
            lw.b.build_int_z_extend(r.into_int_value(), i64t, "")
                .map_err(llvm_err)?
        }
        _ => i64t.const_int(1, false),
    };
    let m = match &dims {
        Some(d) => count(lw, d)?,
        None => i64t.const_int(1, false),
    };
    // The checks come before allocating (a raise does not free what was allocated).
    let zero = i64t.const_zero();
    let no_pop =
        lw.b.build_int_compare(IntPredicate::SLE, n, zero, "")
            .map_err(llvm_err)?;
    let wanted =
        lw.b.build_int_compare(IntPredicate::NE, m, zero, "")
            .map_err(llvm_err)?;
    let empty = lw.b.build_and(no_pop, wanted, "").map_err(llvm_err)?;
    lw.raise_const_if(empty, "ValueError", &[empty_msg])?;
    let without =
        lw.b.build_int_compare(IntPredicate::EQ, replace, zero, "")
            .map_err(llvm_err)?;
    let larger =
        lw.b.build_int_compare(IntPredicate::SGT, m, n, "")
            .map_err(llvm_err)?;
    let too_many = lw.b.build_and(without, larger, "").map_err(llvm_err)?;
    lw.raise_const_if(
        too_many,
        "ValueError",
        &["Cannot take a larger sample than population when 'replace=False'"],
    )?;
    let f = lw.runtime_fn(
        "numba_rs_np_choice",
        lw.ctx.void_type().fn_type(
            &[
                ptr.into(),
                i64t.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
            ],
            false,
        ),
    );
    let call = |lw: &mut FnLower<'ctx, '_>, out: PointerValue<'ctx>, m: IntValue<'ctx>| {
        lw.b.build_call(
            f,
            &[
                src.into(),
                stride.into(),
                itemsize.into(),
                n.into(),
                out.into(),
                m.into(),
                replace.into(),
            ],
            "",
        )
        .map_err(llvm_err)
    };
    match dims {
        Some(dims) => {
            let (arr, data, m) = new_array(lw, sig.ret, &dims)?;
            call(lw, data, m)?;
            Ok(arr.into())
        }
        None => {
            let model = model_of(sig.ret)?;
            let mem_t = model.memory_type(lw.ctx, sig.ret)?;
            let slot = lw.alloca_in_entry(mem_t, "choice")?;
            call(lw, slot, m)?;
            let v = lw.b.build_load(mem_t, slot, "").map_err(llvm_err)?;
            model.load_memory(lw.ctx, &lw.b, sig.ret, v)
        }
    }
}

/// Shuffle the array `arr` of type `t` along its first axis, in place.
fn shuffle_array<'ctx>(lw: &mut FnLower<'ctx, '_>, t: TypeId, arr: StructValue<'ctx>) -> R<()> {
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let nd = ndim(t);
    let dims_t = i64t.array_type(nd);
    let mut slots = Vec::with_capacity(2);
    for f in [field::SHAPE, field::STRIDES] {
        let v = lw.b.build_extract_value(arr, f, "").map_err(llvm_err)?;
        let slot = lw.alloca_in_entry(dims_t.into(), "shuffle_dims")?;
        lw.b.build_store(slot, v).map_err(llvm_err)?;
        slots.push(slot);
    }
    let data = data_ptr(lw, arr)?;
    let itemsize = get_int(lw, arr, field::ITEMSIZE)?;
    let f = lw.runtime_fn(
        "numba_rs_np_shuffle",
        lw.ctx.void_type().fn_type(
            &[ptr.into(), i64t.into(), ptr.into(), ptr.into(), i64t.into()],
            false,
        ),
    );
    lw.b.build_call(
        f,
        &[
            data.into(),
            i64t.const_int(u64::from(nd), false).into(),
            slots[0].into(),
            slots[1].into(),
            itemsize.into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    Ok(())
}

/// `shuffle(x)`: in place along the first axis, NumPy's legacy algorithm (Numba's too).
fn np_shuffle<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    shuffle_array(lw, sig.args[0], a[0].into_struct_value())?;
    Ok(lw.ghost())
}

/// `permutation(n)` (`arange(n)` shuffled; empty for n <= 0) and `permutation(array)` (a
/// C-ordered copy shuffled along its first axis).
fn np_permutation<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    if sig.args[0].is_array() {
        let copy = map_elements(lw, sig.ret, &[(sig.args[0], a[0])], &mut |_, e| Ok(e[0]))?;
        shuffle_array(lw, sig.ret, copy.into_struct_value())?;
        return Ok(copy);
    }
    let i64t = lw.ctx.i64_type();
    let x = a[0].into_int_value();
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, x, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let len =
        lw.b.build_select(neg, i64t.const_zero(), x, "")
            .map_err(llvm_err)?
            .into_int_value();
    let (arr, data, n) = new_array(lw, sig.ret, &[len])?;
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_np_permutation",
        lw.ctx
            .void_type()
            .fn_type(&[ptr.into(), i64t.into()], false),
    );
    lw.b.build_call(f, &[data.into(), n.into()], "")
        .map_err(llvm_err)?;
    Ok(arr.into())
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
