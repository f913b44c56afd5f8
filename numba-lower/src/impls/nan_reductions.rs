//! Reductions that treat NaN specially: `np.nansum`, `nanprod`, `nanmean`, `nanmin`,
//! `nanmax`, `nanvar`, `nanstd` skip NaN elements (integer and bool arrays have none, so
//! they reduce everything); `np.median` / `np.nanmedian` select the middle of a
//! float64 copy of the elements (the median of anything holding NaN is NaN; `nanmedian`
//! drops them first). Every reduction here walks the whole array in C order.

use inkwell::values::{BasicValueEnum, FloatValue, IntValue, StructValue};
use inkwell::{FloatPredicate, IntPredicate};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{dtype_of, flat_ptr, get_int, is_array, load_elem, Loop};
use crate::function::FnLower;
use crate::model::array::field;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    for k in [
        "nansum",
        "nanprod",
        "nanmean",
        "nanmin",
        "nanmax",
        "nanvar",
        "nanstd",
        "median",
        "nanmedian",
    ] {
        r.register(
            ImplKey::Function(format!("numpy.{k}")),
            Args::Exact(vec![TypePat::Pred(is_array)]),
            nan_reduce,
        );
    }
}

/// The element `i` of `arr` as float64, and whether it is a number (not NaN).
fn element<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    i: IntValue<'ctx>,
) -> R<(FloatValue<'ctx>, IntValue<'ctx>)> {
    let dtype = dtype_of(t);
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let x = lw.cast(x, dtype, FLOAT64)?.into_float_value();
    let valid =
        lw.b.build_float_compare(FloatPredicate::OEQ, x, x, "")
            .map_err(llvm_err)?;
    Ok((x, valid))
}

/// One step of a fold: the accumulators, the element and whether it is a number.
type Step<'f, 'ctx, 'a> = &'f mut dyn FnMut(
    &mut FnLower<'ctx, 'a>,
    &[FloatValue<'ctx>],
    FloatValue<'ctx>,
    IntValue<'ctx>,
) -> R<Vec<FloatValue<'ctx>>>;

/// Fold every element: `step(acc, x, valid) -> acc` over float64 accumulators.
fn fold<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    t: TypeId,
    arr: StructValue<'ctx>,
    init: &[FloatValue<'ctx>],
    step: Step<'_, 'ctx, 'a>,
) -> R<Vec<FloatValue<'ctx>>> {
    let f64t = lw.ctx.f64_type();
    let slots = init
        .iter()
        .map(|&v| {
            let s = lw.alloca_in_entry(f64t.into(), "acc")?;
            lw.b.build_store(s, v).map_err(llvm_err)?;
            Ok(s)
        })
        .collect::<R<Vec<_>>>()?;
    let n = get_int(lw, arr, field::NITEMS)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let (x, valid) = element(lw, t, arr, i)?;
    let accs = slots
        .iter()
        .map(|&s| {
            Ok(lw
                .b
                .build_load(f64t, s, "")
                .map_err(llvm_err)?
                .into_float_value())
        })
        .collect::<R<Vec<_>>>()?;
    let next = step(lw, &accs, x, valid)?;
    for (&s, v) in slots.iter().zip(next) {
        lw.b.build_store(s, v).map_err(llvm_err)?;
    }
    lp.end(lw)?;
    slots
        .iter()
        .map(|&s| {
            Ok(lw
                .b
                .build_load(f64t, s, "")
                .map_err(llvm_err)?
                .into_float_value())
        })
        .collect()
}

fn select<'ctx>(
    lw: &FnLower<'ctx, '_>,
    c: IntValue<'ctx>,
    a: FloatValue<'ctx>,
    b: FloatValue<'ctx>,
) -> R<FloatValue<'ctx>> {
    Ok(lw
        .b
        .build_select(c, a, b, "")
        .map_err(llvm_err)?
        .into_float_value())
}

fn nan_reduce<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(key) = &sig.key else {
        return Err(lw.unsupported("nan reduction"));
    };
    let name = key.trim_start_matches("numpy.").to_string();
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let f64t = lw.ctx.f64_type();
    let (zero, one, nan) = (
        f64t.const_zero(),
        f64t.const_float(1.0),
        f64t.const_float(f64::NAN),
    );
    if dtype.is_complex() {
        return complex_nan_reduce(lw, &name, sig, arr);
    }
    // Integer sums and products stay exact in their own 64-bit accumulator.
    if matches!(name.as_str(), "nansum" | "nanprod") && !dtype.is_float() {
        let plain = Signature {
            key: ImplKey::Function(format!("numpy.{}", &name[3..])),
            args: sig.args.clone(),
            ret: sig.ret,
        };
        return lw.call_impl(&plain, a);
    }
    let result: FloatValue<'ctx> = match name.as_str() {
        "nansum" | "nanprod" => {
            let prod = name == "nanprod";
            fold(
                lw,
                t,
                arr,
                &[if prod { one } else { zero }],
                &mut |lw, acc, x, ok| {
                    let y = if prod {
                        lw.b.build_float_mul(acc[0], x, "")
                    } else {
                        lw.b.build_float_add(acc[0], x, "")
                    }
                    .map_err(llvm_err)?;
                    Ok(vec![select(lw, ok, y, acc[0])?])
                },
            )?[0]
        }
        "nanmean" | "nanvar" | "nanstd" => {
            let sums = fold(lw, t, arr, &[zero, zero], &mut |lw, acc, x, ok| {
                let s = lw.b.build_float_add(acc[0], x, "").map_err(llvm_err)?;
                let c = lw.b.build_float_add(acc[1], one, "").map_err(llvm_err)?;
                Ok(vec![select(lw, ok, s, acc[0])?, select(lw, ok, c, acc[1])?])
            })?;
            let mean =
                lw.b.build_float_div(sums[0], sums[1], "mean")
                    .map_err(llvm_err)?;
            if name == "nanmean" {
                mean
            } else {
                let ss = fold(lw, t, arr, &[zero], &mut |lw, acc, x, ok| {
                    let d = lw.b.build_float_sub(x, mean, "").map_err(llvm_err)?;
                    let d2 = lw.b.build_float_mul(d, d, "").map_err(llvm_err)?;
                    let s = lw.b.build_float_add(acc[0], d2, "").map_err(llvm_err)?;
                    Ok(vec![select(lw, ok, s, acc[0])?])
                })?[0];
                let var = lw.b.build_float_div(ss, sums[1], "var").map_err(llvm_err)?;
                if name == "nanstd" {
                    lw.float_unary("sqrt", var)?
                } else {
                    var
                }
            }
        }
        "nanmin" | "nanmax" => {
            let n = get_int(lw, arr, field::NITEMS)?;
            let empty =
                lw.b.build_int_compare(IntPredicate::EQ, n, n.get_type().const_zero(), "")
                    .map_err(llvm_err)?;
            let op = if name == "nanmin" { "fmin" } else { "fmax" };
            let msg = format!("zero-size array to reduction operation {op} which has no identity");
            lw.raise_const_if(empty, "ValueError", &[&msg])?;
            // NaN until a number is seen; all-NaN stays NaN, as NumPy's.
            let better = if name == "nanmin" {
                FloatPredicate::OLT
            } else {
                FloatPredicate::OGT
            };
            let r = fold(lw, t, arr, &[nan], &mut |lw, acc, x, ok| {
                let unset =
                    lw.b.build_float_compare(FloatPredicate::UNO, acc[0], acc[0], "")
                        .map_err(llvm_err)?;
                let beats =
                    lw.b.build_float_compare(better, x, acc[0], "")
                        .map_err(llvm_err)?;
                let take = lw.b.build_or(unset, beats, "").map_err(llvm_err)?;
                let take = lw.b.build_and(take, ok, "").map_err(llvm_err)?;
                Ok(vec![select(lw, take, x, acc[0])?])
            })?[0];
            // Integers convert back exactly: every value came from the array.
            return lw.cast(r.into(), FLOAT64, sig.ret);
        }
        _ => median(lw, t, arr, name == "nanmedian")?,
    };
    lw.cast(result.into(), FLOAT64, sig.ret)
}

/// The median of the elements, through a float64 scratch copy the runtime selects in.
fn median<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    arr: StructValue<'ctx>,
    skip_nan: bool,
) -> R<FloatValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let f64t = lw.ctx.f64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let n = get_int(lw, arr, field::NITEMS)?;
    let bytes =
        lw.b.build_int_mul(n, i64t.const_int(8, false), "")
            .map_err(llvm_err)?;
    let alloc = lw.runtime_fn("NRT_Allocate", ptr.fn_type(&[i64t.into()], false));
    let buf = lw.call_value(alloc, &[bytes.into()])?.into_pointer_value();
    let failed = lw.b.build_is_null(buf, "").map_err(llvm_err)?;
    lw.raise_const_if(failed, "MemoryError", &["Allocation failed"])?;
    let count = lw.alloca_in_entry(i64t.into(), "count")?;
    lw.b.build_store(count, i64t.const_zero())
        .map_err(llvm_err)?;
    // Whether a NaN was copied (NumPy's median is then NaN): tested as the values are
    // copied, with no early exit, so the loop stays vectorisable.
    let i32t = lw.ctx.i32_type();
    let seen = lw.alloca_in_entry(i32t.into(), "nan_seen")?;
    lw.b.build_store(seen, i32t.const_zero())
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let (x, valid) = element(lw, t, arr, i)?;
    if !skip_nan {
        let is_nan =
            lw.b.build_float_compare(inkwell::FloatPredicate::UNO, x, x, "isnan")
                .map_err(llvm_err)?;
        let is_nan =
            lw.b.build_int_z_extend(is_nan, i32t, "")
                .map_err(llvm_err)?;
        let before =
            lw.b.build_load(i32t, seen, "")
                .map_err(llvm_err)?
                .into_int_value();
        let now = lw.b.build_or(before, is_nan, "").map_err(llvm_err)?;
        lw.b.build_store(seen, now).map_err(llvm_err)?;
    }
    let c =
        lw.b.build_load(i64t, count, "")
            .map_err(llvm_err)?
            .into_int_value();
    // SAFETY (of the generated code): c < n, inside the scratch buffer.
    let slot = unsafe { lw.b.build_gep(f64t, buf, &[c], "").map_err(llvm_err)? };
    lw.b.build_store(slot, x).map_err(llvm_err)?;
    let next =
        lw.b.build_int_add(c, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    let next = if skip_nan {
        lw.b.build_select(valid, next, c, "")
            .map_err(llvm_err)?
            .into_int_value()
    } else {
        next
    };
    lw.b.build_store(count, next).map_err(llvm_err)?;
    lp.end(lw)?;
    let c = lw.b.build_load(i64t, count, "").map_err(llvm_err)?;
    let nan_seen = lw.b.build_load(i32t, seen, "").map_err(llvm_err)?;
    let helper = lw.runtime_fn(
        "numba_rs_median",
        f64t.fn_type(&[ptr.into(), i64t.into(), i32t.into()], false),
    );
    let m = lw.call_value(helper, &[buf.into(), c.into(), nan_seen.into()])?;
    let free = lw.runtime_fn("NRT_Free", lw.ctx.void_type().fn_type(&[ptr.into()], false));
    lw.b.build_call(free, &[buf.into()], "").map_err(llvm_err)?;
    Ok(m.into_float_value())
}

/// The NaN-skipping reductions of a complex array (an element is NaN when either part
/// is): sums, products and means in complex128, orderings lexicographic as Numba's, and
/// spreads as the mean of |x - mean|^2.
fn complex_nan_reduce<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    name: &str,
    sig: &Signature,
    arr: StructValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let f64t = lw.ctx.f64_type();
    let n = get_int(lw, arr, field::NITEMS)?;
    // (re, im, valid) of element i.
    let parts = |lw: &mut FnLower<'ctx, '_>,
                 i: IntValue<'ctx>|
     -> R<(FloatValue<'ctx>, FloatValue<'ctx>, IntValue<'ctx>)> {
        let p = flat_ptr(lw, t, arr, i)?;
        let x = load_elem(lw, dtype, p)?;
        let x = lw.cast(x, dtype, COMPLEX128)?.into_struct_value();
        let re =
            lw.b.build_extract_value(x, 0, "")
                .map_err(llvm_err)?
                .into_float_value();
        let im =
            lw.b.build_extract_value(x, 1, "")
                .map_err(llvm_err)?
                .into_float_value();
        let ok_re =
            lw.b.build_float_compare(FloatPredicate::OEQ, re, re, "")
                .map_err(llvm_err)?;
        let ok_im =
            lw.b.build_float_compare(FloatPredicate::OEQ, im, im, "")
                .map_err(llvm_err)?;
        let ok = lw.b.build_and(ok_re, ok_im, "").map_err(llvm_err)?;
        Ok((re, im, ok))
    };
    let slots = (0..3)
        .map(|_| lw.alloca_in_entry(f64t.into(), "acc"))
        .collect::<R<Vec<_>>>()?;
    let init = |lw: &FnLower<'ctx, '_>, vals: [f64; 3]| -> R<()> {
        for (s, v) in slots.iter().zip(vals) {
            lw.b.build_store(*s, f64t.const_float(v))
                .map_err(llvm_err)?;
        }
        Ok(())
    };
    let load = |lw: &FnLower<'ctx, '_>, k: usize| -> R<FloatValue<'ctx>> {
        Ok(lw
            .b
            .build_load(f64t, slots[k], "")
            .map_err(llvm_err)?
            .into_float_value())
    };
    let store_if =
        |lw: &FnLower<'ctx, '_>, k: usize, ok: IntValue<'ctx>, v: FloatValue<'ctx>| -> R<()> {
            let old =
                lw.b.build_load(f64t, slots[k], "")
                    .map_err(llvm_err)?
                    .into_float_value();
            let v = select(lw, ok, v, old)?;
            lw.b.build_store(slots[k], v).map_err(llvm_err)?;
            Ok(())
        };
    let complex = |lw: &mut FnLower<'ctx, '_>,
                   re: FloatValue<'ctx>,
                   im: FloatValue<'ctx>|
     -> R<BasicValueEnum<'ctx>> {
        let v = lw.make_struct(COMPLEX128, &[re.into(), im.into()])?;
        lw.cast(v, COMPLEX128, sig.ret)
    };
    match name {
        "nansum" | "nanmean" | "nanvar" | "nanstd" => {
            // Slots: sum re, sum im, count.
            init(lw, [0.0, 0.0, 0.0])?;
            let (lp, i) = Loop::begin(lw, n)?;
            let (re, im, ok) = parts(lw, i)?;
            let (a, b, c) = (load(lw, 0)?, load(lw, 1)?, load(lw, 2)?);
            let a2 = lw.b.build_float_add(a, re, "").map_err(llvm_err)?;
            let b2 = lw.b.build_float_add(b, im, "").map_err(llvm_err)?;
            let c2 =
                lw.b.build_float_add(c, f64t.const_float(1.0), "")
                    .map_err(llvm_err)?;
            store_if(lw, 0, ok, a2)?;
            store_if(lw, 1, ok, b2)?;
            store_if(lw, 2, ok, c2)?;
            lp.end(lw)?;
            let (sr, si, cnt) = (load(lw, 0)?, load(lw, 1)?, load(lw, 2)?);
            if name == "nansum" {
                return complex(lw, sr, si);
            }
            let mr = lw.b.build_float_div(sr, cnt, "").map_err(llvm_err)?;
            let mi = lw.b.build_float_div(si, cnt, "").map_err(llvm_err)?;
            if name == "nanmean" {
                return complex(lw, mr, mi);
            }
            init(lw, [0.0, 0.0, 0.0])?;
            let (lp, i) = Loop::begin(lw, n)?;
            let (re, im, ok) = parts(lw, i)?;
            let dr = lw.b.build_float_sub(re, mr, "").map_err(llvm_err)?;
            let di = lw.b.build_float_sub(im, mi, "").map_err(llvm_err)?;
            let dr2 = lw.b.build_float_mul(dr, dr, "").map_err(llvm_err)?;
            let di2 = lw.b.build_float_mul(di, di, "").map_err(llvm_err)?;
            let d2 = lw.b.build_float_add(dr2, di2, "").map_err(llvm_err)?;
            let acc = load(lw, 0)?;
            let s = lw.b.build_float_add(acc, d2, "").map_err(llvm_err)?;
            store_if(lw, 0, ok, s)?;
            lp.end(lw)?;
            let ss = load(lw, 0)?;
            let var = lw.b.build_float_div(ss, cnt, "").map_err(llvm_err)?;
            let r = if name == "nanstd" {
                lw.float_unary("sqrt", var)?
            } else {
                var
            };
            lw.cast(r.into(), FLOAT64, sig.ret)
        }
        "nanprod" => {
            init(lw, [1.0, 0.0, 0.0])?;
            let (lp, i) = Loop::begin(lw, n)?;
            let (re, im, ok) = parts(lw, i)?;
            let (a, b) = (load(lw, 0)?, load(lw, 1)?);
            // (a + bi)(re + im i)
            let ar = lw.b.build_float_mul(a, re, "").map_err(llvm_err)?;
            let bi = lw.b.build_float_mul(b, im, "").map_err(llvm_err)?;
            let ai = lw.b.build_float_mul(a, im, "").map_err(llvm_err)?;
            let br = lw.b.build_float_mul(b, re, "").map_err(llvm_err)?;
            let nr = lw.b.build_float_sub(ar, bi, "").map_err(llvm_err)?;
            let ni = lw.b.build_float_add(ai, br, "").map_err(llvm_err)?;
            store_if(lw, 0, ok, nr)?;
            store_if(lw, 1, ok, ni)?;
            lp.end(lw)?;
            let (pr, pi) = (load(lw, 0)?, load(lw, 1)?);
            complex(lw, pr, pi)
        }
        "nanmin" | "nanmax" => {
            let empty =
                lw.b.build_int_compare(IntPredicate::EQ, n, n.get_type().const_zero(), "")
                    .map_err(llvm_err)?;
            let op = if name == "nanmin" { "fmin" } else { "fmax" };
            let msg = format!("zero-size array to reduction operation {op} which has no identity");
            lw.raise_const_if(empty, "ValueError", &[&msg])?;
            let better = if name == "nanmin" {
                FloatPredicate::OLT
            } else {
                FloatPredicate::OGT
            };
            // Slots: best re, best im, whether one was seen (NaN + NaN j when none).
            init(lw, [f64::NAN, f64::NAN, 0.0])?;
            let (lp, i) = Loop::begin(lw, n)?;
            let (re, im, ok) = parts(lw, i)?;
            let (br, bi, seen) = (load(lw, 0)?, load(lw, 1)?, load(lw, 2)?);
            let unset =
                lw.b.build_float_compare(FloatPredicate::OEQ, seen, f64t.const_zero(), "")
                    .map_err(llvm_err)?;
            let re_better =
                lw.b.build_float_compare(better, re, br, "")
                    .map_err(llvm_err)?;
            let re_same =
                lw.b.build_float_compare(FloatPredicate::OEQ, re, br, "")
                    .map_err(llvm_err)?;
            let im_better =
                lw.b.build_float_compare(better, im, bi, "")
                    .map_err(llvm_err)?;
            let tie = lw.b.build_and(re_same, im_better, "").map_err(llvm_err)?;
            let wins = lw.b.build_or(re_better, tie, "").map_err(llvm_err)?;
            let take = lw.b.build_or(unset, wins, "").map_err(llvm_err)?;
            let take = lw.b.build_and(take, ok, "").map_err(llvm_err)?;
            store_if(lw, 0, take, re)?;
            store_if(lw, 1, take, im)?;
            store_if(lw, 2, ok, f64t.const_float(1.0))?;
            lp.end(lw)?;
            let (br, bi) = (load(lw, 0)?, load(lw, 1)?);
            complex(lw, br, bi)
        }
        _ => Err(lw.unsupported(format!("np.{name} of a complex array"))),
    }
}
