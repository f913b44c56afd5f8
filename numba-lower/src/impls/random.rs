//! The `random` module and `numpy.random` through the generators in `crate::random`:
//! scalars come from one runtime call each, arrays (`size=`, `rand(d0, ...)`, `choice`,
//! `permutation`, `dirichlet`, `multinomial`) are allocated here and filled by one
//! runtime call in C order, and `shuffle` permutes an array in place. The distributions'
//! parameters are checked here, from numba-typeinfer's table, before anything is
//! allocated.

use inkwell::values::{BasicValueEnum, IntValue, PointerValue, StructValue};
use inkwell::IntPredicate;
use numba_typeinfer::np_random::{Constraint, Distribution, Test};
use numba_typeinfer::types::{TypeId, NONE};
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{data_ptr, dim, dims_of, get_int, map_elements};
use super::arrays::allocate;
use super::function_of;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::model::model_of;
use crate::random::{DISTRIBUTIONS, FLOAT_KINDS, INT_KINDS, VECTOR_DIRICHLET, VECTOR_MULTINOMIAL};
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
    r.register(key("shuffle"), Args::Exact(vec![TypePat::Any]), rnd_shuffle);
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
    for d in numba_typeinfer::np_random::DISTRIBUTIONS {
        r.register(np(d.name), Args::Variadic(TypePat::Any), np_distribution);
        r.register(
            np(&format!("{}.check", d.name)),
            Args::Variadic(TypePat::Any),
            np_check,
        );
    }
    for k in ["rand", "randn"] {
        r.register(np(k), Args::Variadic(TypePat::Int), np_dims);
    }
    r.register(np("randint"), Args::Variadic(TypePat::Any), np_randint);
    r.register(
        np("randint.check"),
        Args::Variadic(TypePat::Any),
        np_randint_check,
    );
    r.register(np("dirichlet"), Args::Variadic(TypePat::Any), np_vector);
    r.register(np("multinomial"), Args::Variadic(TypePat::Any), np_vector);
    r.register(np("choice"), Args::Variadic(TypePat::Any), np_choice);
    r.register(np("shuffle"), Args::Exact(vec![TypePat::Any]), np_shuffle);
    r.register(
        np("permutation"),
        Args::Exact(vec![TypePat::Any]),
        np_permutation,
    );
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

/// Raise NumPy's ValueError for parameter `v` (a float, or an int for an int parameter)
/// when it fails `check`.
fn check_param<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    v: BasicValueEnum<'ctx>,
    name: &str,
    check: Constraint,
) -> R<()> {
    use inkwell::FloatPredicate as F;
    for (tests, msg) in check.checks(name) {
        let mut bad = lw.ctx.bool_type().const_zero();
        for t in tests {
            let c = match v {
                BasicValueEnum::IntValue(i) => {
                    let i64t = lw.ctx.i64_type();
                    // Integers are never NaN: ordered and unordered agree.
                    let (pred, x) = match t {
                        Test::Ult(x) => (IntPredicate::SLT, x),
                        Test::Uge(x) => (IntPredicate::SGE, x),
                        Test::Ule(x) | Test::Ole(x) => (IntPredicate::SLE, x),
                        Test::Ugt(x) | Test::Ogt(x) => (IntPredicate::SGT, x),
                        Test::SignBit => (IntPredicate::SLT, 0.0),
                    };
                    let k = i64t.const_int(x as i64 as u64, true);
                    lw.b.build_int_compare(pred, i, k, "").map_err(llvm_err)?
                }
                v => {
                    let f = v.into_float_value();
                    let f64t = lw.ctx.f64_type();
                    let (pred, x) = match t {
                        Test::Ult(x) => (F::ULT, x),
                        Test::Ule(x) => (F::ULE, x),
                        Test::Ugt(x) => (F::UGT, x),
                        Test::Uge(x) => (F::UGE, x),
                        Test::Ole(x) => (F::OLE, x),
                        Test::Ogt(x) => (F::OGT, x),
                        Test::SignBit => {
                            let i64t = lw.ctx.i64_type();
                            let bits =
                                lw.b.build_bit_cast(f, i64t, "")
                                    .map_err(llvm_err)?
                                    .into_int_value();
                            let neg = lw
                                .b
                                .build_int_compare(IntPredicate::SLT, bits, i64t.const_zero(), "")
                                .map_err(llvm_err)?;
                            let num =
                                lw.b.build_float_compare(F::ORD, f, f, "")
                                    .map_err(llvm_err)?;
                            let sign = lw.b.build_and(neg, num, "").map_err(llvm_err)?;
                            bad = lw.b.build_or(bad, sign, "").map_err(llvm_err)?;
                            continue;
                        }
                    };
                    lw.b.build_float_compare(pred, f, f64t.const_float(x), "")
                        .map_err(llvm_err)?
                }
            };
            bad = lw.b.build_or(bad, c, "").map_err(llvm_err)?;
        }
        lw.raise_const_if(bad, "ValueError", &[&msg])?;
    }
    Ok(())
}

/// The checks NumPy makes across parameters: `triangular`'s order, `hypergeometric`'s
/// sample size.
fn check_joint<'ctx>(lw: &mut FnLower<'ctx, '_>, name: &str, v: &[BasicValueEnum<'ctx>]) -> R<()> {
    use inkwell::FloatPredicate as F;
    match (name, v) {
        ("triangular", [l, m, r]) => {
            let (l, m, r) = (
                l.into_float_value(),
                m.into_float_value(),
                r.into_float_value(),
            );
            for (pred, x, y, msg) in [
                (F::OGT, l, m, "left > mode"),
                (F::OGT, m, r, "mode > right"),
                (F::OEQ, l, r, "left == right"),
            ] {
                let c = lw.b.build_float_compare(pred, x, y, "").map_err(llvm_err)?;
                lw.raise_const_if(c, "ValueError", &[msg])?;
            }
        }
        ("hypergeometric", [g, b, s]) => {
            let total =
                lw.b.build_int_add(g.into_int_value(), b.into_int_value(), "")
                    .map_err(llvm_err)?;
            let c =
                lw.b.build_int_compare(IntPredicate::SLT, total, s.into_int_value(), "")
                    .map_err(llvm_err)?;
            lw.raise_const_if(c, "ValueError", &["ngood + nbad < nsample"])?;
        }
        _ => {}
    }
    Ok(())
}

/// One draw of `d` with parameters `params` (all of them, defaults filled in), or an
/// array of shape `dims` filled in C order (of type `ret`).
fn draw<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    d: &Distribution,
    ret: TypeId,
    params: &[BasicValueEnum<'ctx>],
    dims: Option<Vec<IntValue<'ctx>>>,
) -> R<BasicValueEnum<'ctx>> {
    let (f64t, i64t, i32t) = (lw.ctx.f64_type(), lw.ctx.i64_type(), lw.ctx.i32_type());
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let kind = if d.int_result {
        INT_KINDS.iter().position(|(k, _)| *k == d.draw)
    } else {
        FLOAT_KINDS.iter().position(|(k, _)| *k == d.draw)
    };
    let kind =
        kind.ok_or_else(|| lw.unsupported(format!("numpy.random.{} is not lowered", d.name)))?;
    let mut args: Vec<inkwell::values::BasicMetadataValueEnum<'ctx>> =
        vec![i32t.const_int(kind as u64, false).into()];
    let mut types: Vec<inkwell::types::BasicMetadataTypeEnum<'ctx>> = vec![i32t.into()];
    // Floats fill `a, b[, c]`; an integer draw's int parameters fill `i, j, k`.
    let floats: Vec<_> = d
        .params
        .iter()
        .zip(params)
        .filter(|(p, _)| !p.int)
        .map(|(_, v)| *v)
        .collect();
    let nfloat = if d.int_result { 2 } else { 3 };
    for i in 0..nfloat {
        args.push(
            floats
                .get(i)
                .copied()
                .unwrap_or(f64t.const_zero().into())
                .into(),
        );
        types.push(f64t.into());
    }
    if d.int_result {
        let ints: Vec<_> = d
            .params
            .iter()
            .zip(params)
            .filter(|(p, _)| p.int)
            .map(|(_, v)| *v)
            .collect();
        for i in 0..3 {
            args.push(
                ints.get(i)
                    .copied()
                    .unwrap_or(i64t.const_zero().into())
                    .into(),
            );
            types.push(i64t.into());
        }
    }
    use inkwell::types::BasicType;
    let (one, fill, elem): (_, _, inkwell::types::BasicTypeEnum) = if d.int_result {
        ("numba_rs_np_disc", "numba_rs_np_disc_fill", i64t.into())
    } else {
        ("numba_rs_np_dist", "numba_rs_np_dist_fill", f64t.into())
    };
    let Some(dims) = dims else {
        let f = lw.runtime_fn(one, elem.fn_type(&types, false));
        return lw.call_value(f, &args);
    };
    let (arr, data, n) = new_array(lw, ret, &dims)?;
    args.push(data.into());
    args.push(n.into());
    types.push(ptr.into());
    types.push(i64t.into());
    let f = lw.runtime_fn(fill, lw.ctx.void_type().fn_type(&types, false));
    lw.b.build_call(f, &args, "").map_err(llvm_err)?;
    Ok(arr.into())
}

/// The parameters `d` draws with (omitted ones take their defaults), checked as NumPy
/// checks them: `hypergeometric`'s sum, then each parameter in order.
fn checked_params<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    d: &Distribution,
    a: &[BasicValueEnum<'ctx>],
) -> R<Vec<BasicValueEnum<'ctx>>> {
    let f64t = lw.ctx.f64_type();
    let mut params = Vec::with_capacity(d.params.len());
    for (i, p) in d.params.iter().enumerate() {
        let v = match (a.get(i), p.default) {
            (Some(v), _) => *v,
            (None, Some(x)) => f64t.const_float(x).into(),
            (None, None) => {
                return Err(lw.unsupported(format!("{}() needs {}", d.name, p.name)));
            }
        };
        params.push(v);
    }
    // `triangular`'s order has no per-parameter checks to come before or after.
    check_joint(lw, d.name, &params)?;
    for (p, &v) in d.params.iter().zip(&params) {
        check_param(lw, v, p.name, p.check)?;
    }
    Ok(params)
}

/// `numpy.random.<name>.check(params...)`: only the parameter checks of a draw, which a
/// parallel loop of draws makes once before allocating its result.
fn np_check<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = np_name(sig).trim_end_matches(".check");
    let d = numba_typeinfer::np_random::distribution(name)
        .ok_or_else(|| lw.unsupported(format!("numpy.random.{name} is not lowered")))?;
    checked_params(lw, d, a)?;
    Ok(lw.ghost())
}

/// A distribution of NumPy's `RandomState` (numba-typeinfer's `np_random::DISTRIBUTIONS`):
/// its parameters (omitted ones take their defaults) checked as NumPy checks them, then
/// one value, or with `size` an array filled in C order.
fn np_distribution<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = np_name(sig);
    let d = numba_typeinfer::np_random::distribution(name)
        .ok_or_else(|| lw.unsupported(format!("numpy.random.{name} is not lowered")))?;
    let params = checked_params(lw, d, a)?;
    let dims = size_dims(lw, sig, a, d.params.len())?;
    draw(lw, d, sig.ret, &params, dims)
}

/// `rand(d0, ...)` (`random_sample`) and `randn(d0, ...)` (`standard_normal`): a scalar
/// without dimensions, else an array of those dimensions.
fn np_dims<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let base = if np_name(sig) == "rand" {
        "random"
    } else {
        "standard_normal"
    };
    let d = numba_typeinfer::np_random::distribution(base)
        .ok_or_else(|| lw.unsupported(format!("numpy.random.{base} is not lowered")))?;
    let dims = (!a.is_empty()).then(|| a.iter().map(|v| v.into_int_value()).collect());
    draw(lw, d, sig.ret, &[], dims)
}

/// `dirichlet(alpha, size=None)` and `multinomial(n, pvals, size=None)`: the vector
/// parameter (an array, or a tuple stored to the stack) checked as NumPy checks it, then
/// rows of its length, one per position of `size`, drawn by the runtime.
fn np_vector<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dirichlet = np_name(sig) == "dirichlet";
    let (kind, vi) = if dirichlet {
        (VECTOR_DIRICHLET, 0)
    } else {
        (VECTOR_MULTINOMIAL, 1)
    };
    let (i64t, i32t, f64t) = (lw.ctx.i64_type(), lw.ctx.i32_type(), lw.ctx.f64_type());
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let vt = sig.args[vi];
    let (p, stride, k) = match numba_typeinfer::conv::tuple_items(vt) {
        Some(items) => {
            let buf = lw.alloca_in_entry(f64t.array_type(items.len() as u32).into(), "vector")?;
            let sv = a[vi].into_struct_value();
            for (i, &it) in items.iter().enumerate() {
                let x =
                    lw.b.build_extract_value(sv, i as u32, "")
                        .map_err(llvm_err)?;
                let x = lw.cast(x, it, numba_typeinfer::types::FLOAT64)?;
                // SAFETY: `i` is within the buffer's `items.len()` doubles.
                let slot = unsafe {
                    lw.b.build_in_bounds_gep(f64t, buf, &[i64t.const_int(i as u64, false)], "")
                }
                .map_err(llvm_err)?;
                lw.b.build_store(slot, x).map_err(llvm_err)?;
            }
            (
                buf,
                i64t.const_int(8, false),
                i64t.const_int(items.len() as u64, false),
            )
        }
        None => {
            let arr = a[vi].into_struct_value();
            (
                data_ptr(lw, arr)?,
                dim(lw, arr, field::STRIDES, 0)?,
                dim(lw, arr, field::SHAPE, 0)?,
            )
        }
    };
    let n = if dirichlet {
        i64t.const_zero()
    } else {
        lw.cast(a[0], sig.args[0], numba_typeinfer::types::INT64)?
            .into_int_value()
    };
    let f = lw.runtime_fn(
        "numba_rs_np_vector",
        i32t.fn_type(
            &[
                i32t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
            ],
            false,
        ),
    );
    let kind = i32t.const_int(u64::from(kind), false);
    // The checks come before allocating (a raise does not free what was allocated).
    let status = lw
        .call_value(
            f,
            &[
                kind.into(),
                p.into(),
                stride.into(),
                k.into(),
                n.into(),
                ptr.const_null().into(),
                i64t.const_zero().into(),
            ],
        )?
        .into_int_value();
    let messages: &[(u64, &str)] = if dirichlet {
        // Numba's wording (NumPy says "alpha <= 0").
        &[(1, "dirichlet: alpha must be > 0.0")]
    } else {
        &[
            (1, "pvals < 0, pvals > 1 or pvals contains NaNs"),
            (2, "sum(pvals[:-1]) > 1.0"),
            (3, "n < 0"),
        ]
    };
    for &(code, msg) in messages {
        let c =
            lw.b.build_int_compare(IntPredicate::EQ, status, i32t.const_int(code, false), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(c, "ValueError", &[msg])?;
    }
    let mut dims = size_dims(lw, sig, a, vi + 1)?.unwrap_or_default();
    dims.push(k);
    let (arr, data, total) = new_array(lw, sig.ret, &dims)?;
    if !dirichlet {
        let bytes =
            lw.b.build_int_mul(total, i64t.const_int(8, false), "")
                .map_err(llvm_err)?;
        lw.b.build_memset(data, 8, lw.ctx.i8_type().const_zero(), bytes)
            .map_err(llvm_err)?;
    }
    lw.b.build_call(
        f,
        &[
            kind.into(),
            p.into(),
            stride.into(),
            k.into(),
            n.into(),
            data.into(),
            total.into(),
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
    let (low, high) = randint_bounds(lw, sig, a)?;
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
    // Checked before allocating (a raise does not free what was allocated).
    check_randint(lw, low, high, &dims)?;
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

/// `randint`'s `(low, high)` from its first two arguments (`high=None`: `[0, low)`).
fn randint_bounds<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
    let first = a
        .first()
        .ok_or_else(|| lw.unsupported("randint() needs an argument"))?
        .into_int_value();
    Ok(match (sig.args.get(1), a.get(1)) {
        (Some(&t), Some(h)) if t != NONE => (first, h.into_int_value()),
        _ => (lw.ctx.i64_type().const_zero(), first),
    })
}

/// NumPy's `low >= high` error for a sized `randint`; an empty size draws nothing and
/// checks nothing.
fn check_randint<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    low: IntValue<'ctx>,
    high: IntValue<'ctx>,
    dims: &[IntValue<'ctx>],
) -> R<()> {
    let m = count(lw, dims)?;
    let empty =
        lw.b.build_int_compare(IntPredicate::SGE, low, high, "")
            .map_err(llvm_err)?;
    let wanted =
        lw.b.build_int_compare(IntPredicate::NE, m, m.get_type().const_zero(), "")
            .map_err(llvm_err)?;
    let bad = lw.b.build_and(empty, wanted, "").map_err(llvm_err)?;
    lw.raise_const_if(bad, "ValueError", &["low >= high"])
}

/// `numpy.random.randint.check(low, high, size)`: the sized `randint`'s check alone,
/// emitted by the parfor pass before the result is allocated.
fn np_randint_check<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (low, high) = randint_bounds(lw, sig, a)?;
    let dims =
        size_dims(lw, sig, a, 2)?.ok_or_else(|| lw.unsupported("randint.check needs a size"))?;
    check_randint(lw, low, high, &dims)?;
    Ok(lw.ghost())
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
    shuffle_with(lw, "numba_rs_np_shuffle", t, arr)
}

/// Shuffle `arr` in place with the runtime's `shuffle` function (NumPy's or CPython's).
fn shuffle_with<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    shuffle: &str,
    t: TypeId,
    arr: StructValue<'ctx>,
) -> R<()> {
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
        shuffle,
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

/// `random.shuffle(x)`: in place along the first axis, CPython's algorithm on the
/// `random` module's generator (Numba's).
fn rnd_shuffle<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    shuffle_with(
        lw,
        "numba_rs_rnd_shuffle",
        sig.args[0],
        a[0].into_struct_value(),
    )?;
    Ok(lw.ghost())
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

/// The next 32-bit word of the thread's `random` generator, drawn inline as Numba draws
/// it (the state's address from a call LLVM may hoist out of loops, the tempering in
/// line, the runtime only refilling the words every 624 draws).
fn next_u32<'ctx>(lw: &mut FnLower<'ctx, '_>) -> R<IntValue<'ctx>> {
    let ctx = lw.ctx;
    let (i64t, i32t) = (ctx.i64_type(), ctx.i32_type());
    let ptr = ctx.ptr_type(inkwell::AddressSpace::default());
    let state_fn = lw.runtime_fn("numba_rs_rnd_state", ptr.fn_type(&[], false));
    if state_fn
        .get_enum_attribute(inkwell::attributes::AttributeLoc::Function, {
            inkwell::attributes::Attribute::get_named_enum_kind_id("memory")
        })
        .is_none()
    {
        // The address is the same for every call on a thread: pure, so hoistable.
        for (name, value) in [("memory", 0), ("nounwind", 0), ("willreturn", 0)] {
            let kind = inkwell::attributes::Attribute::get_named_enum_kind_id(name);
            state_fn.add_attribute(
                inkwell::attributes::AttributeLoc::Function,
                ctx.create_enum_attribute(kind, value),
            );
        }
    }
    let twist = lw.runtime_fn(
        "numba_rs_rnd_twist",
        ctx.void_type().fn_type(&[ptr.into()], false),
    );
    let state = lw.call_value(state_fn, &[])?.into_pointer_value();
    let index =
        lw.b.build_load(i64t, state, "mt.index")
            .map_err(llvm_err)?
            .into_int_value();
    let used_up =
        lw.b.build_int_compare(
            IntPredicate::UGE,
            index,
            i64t.const_int(crate::random::MT_WORDS, false),
            "",
        )
        .map_err(llvm_err)?;
    let refill = lw.new_block("mt.twist");
    let draw = lw.new_block("mt.draw");
    let from =
        lw.b.get_insert_block()
            .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
    lw.b.build_conditional_branch(used_up, refill, draw)
        .map_err(llvm_err)?;
    lw.b.position_at_end(refill);
    lw.b.build_call(twist, &[state.into()], "")
        .map_err(llvm_err)?;
    lw.b.build_unconditional_branch(draw).map_err(llvm_err)?;
    lw.b.position_at_end(draw);
    let phi = lw.b.build_phi(i64t, "mt.i").map_err(llvm_err)?;
    phi.add_incoming(&[(&index, from), (&i64t.const_zero(), refill)]);
    let i = phi.as_basic_value().into_int_value();
    let next =
        lw.b.build_int_add(i, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.b.build_store(state, next).map_err(llvm_err)?;
    // SAFETY (of the generated code): i < 624 words after the index.
    let words = unsafe {
        lw.b.build_gep(
            ctx.i8_type(),
            state,
            &[i64t.const_int(crate::random::MT_WORDS_OFFSET, false)],
            "",
        )
    }
    .map_err(llvm_err)?;
    let p = unsafe { lw.b.build_gep(i32t, words, &[i], "") }.map_err(llvm_err)?;
    let mut y =
        lw.b.build_load(i32t, p, "")
            .map_err(llvm_err)?
            .into_int_value();
    let c = |v: u64| i32t.const_int(v, false);
    // MT19937's tempering.
    for (shift, left, mask) in [
        (11, false, 0xffff_ffff),
        (7, true, 0x9d2c_5680),
        (15, true, 0xefc6_0000),
        (18, false, 0xffff_ffff),
    ] {
        let t = if left {
            lw.b.build_left_shift(y, c(shift), "")
        } else {
            lw.b.build_right_shift(y, c(shift), false, "")
        }
        .map_err(llvm_err)?;
        let t = lw.b.build_and(t, c(mask), "").map_err(llvm_err)?;
        y = lw.b.build_xor(y, t, "").map_err(llvm_err)?;
    }
    Ok(y)
}

/// `random.random()`: 53 bits from two words, as CPython's `random_random`.
fn random<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let f64t = lw.ctx.f64_type();
    let i32t = lw.ctx.i32_type();
    let a = next_u32(lw)?;
    let a =
        lw.b.build_right_shift(a, i32t.const_int(5, false), false, "")
            .map_err(llvm_err)?;
    let b = next_u32(lw)?;
    let b =
        lw.b.build_right_shift(b, i32t.const_int(6, false), false, "")
            .map_err(llvm_err)?;
    let a =
        lw.b.build_unsigned_int_to_float(a, f64t, "")
            .map_err(llvm_err)?;
    let b =
        lw.b.build_unsigned_int_to_float(b, f64t, "")
            .map_err(llvm_err)?;
    let hi =
        lw.b.build_float_mul(a, f64t.const_float(67_108_864.0), "")
            .map_err(llvm_err)?;
    let sum = lw.b.build_float_add(hi, b, "").map_err(llvm_err)?;
    let r =
        lw.b.build_float_mul(sum, f64t.const_float(1.0 / 9_007_199_254_740_992.0), "")
            .map_err(llvm_err)?;
    Ok(r.into())
}

/// `random.getrandbits(k)`: a word drawn inline for 1 ≤ k ≤ 32 (the common
/// `getrandbits(32)`, whose test LLVM folds), the runtime for wider (or invalid) `k`.
fn getrandbits<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let k = a[0].into_int_value();
    let km1 =
        lw.b.build_int_sub(k, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    let narrow =
        lw.b.build_int_compare(IntPredicate::ULT, km1, i64t.const_int(32, false), "")
            .map_err(llvm_err)?;
    let inline_bb = lw.new_block("getrandbits.word");
    let call_bb = lw.new_block("getrandbits.wide");
    let done = lw.new_block("getrandbits.done");
    lw.b.build_conditional_branch(narrow, inline_bb, call_bb)
        .map_err(llvm_err)?;
    lw.b.position_at_end(inline_bb);
    let y = next_u32(lw)?;
    let y = lw.b.build_int_z_extend(y, i64t, "").map_err(llvm_err)?;
    let shift =
        lw.b.build_int_sub(i64t.const_int(32, false), k, "")
            .map_err(llvm_err)?;
    let word =
        lw.b.build_right_shift(y, shift, false, "")
            .map_err(llvm_err)?;
    let word_end =
        lw.b.get_insert_block()
            .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(call_bb);
    let f = lw.runtime_fn(
        "numba_rs_rnd_getrandbits",
        i64t.fn_type(&[i64t.into()], false),
    );
    let wide = lw.call_value(f, &[k.into()])?.into_int_value();
    let call_end =
        lw.b.get_insert_block()
            .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    let phi = lw.b.build_phi(i64t, "bits").map_err(llvm_err)?;
    phi.add_incoming(&[(&word, word_end), (&wide, call_end)]);
    Ok(phi.as_basic_value())
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
