//! Calls to numba-rs ufuncs from jitted code (typed by `numba_typeinfer::ufunc_call`).
//!
//! A vectorize call maps its kernel over the broadcast inputs into a new array or the
//! output argument; a guvectorize call walks the loop dimensions (the leading axes left
//! after each operand's core dimensions) and hands the kernel views of the core
//! dimensions. As in Numba, an exception the kernel raises is dropped: the element (or
//! the output row) keeps the kernel's zero result or the old value.

use inkwell::values::{BasicValueEnum, IntValue, StructValue};
use inkwell::IntPredicate;
use numba_typeinfer::types::TypeId;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{
    broadcast_shape, data_ptr, dim, dtype_of, fill_elements, load_elem, map_elements, view_with,
    Loop, Typed,
};
use super::calls::call_swallowing;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{ufunc_key, Args, Registry, TypePat};
use crate::{llvm_err, LowerError, R};

pub(crate) fn register(r: &mut Registry) {
    r.register(ufunc_key(), Args::Variadic(TypePat::Any), call_ufunc);
}

fn call_ufunc<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::UFunc {
        kernel,
        args: kargs,
        ret: kret,
        nin,
        core,
    } = &sig.key
    else {
        return Err(LowerError::Llvm("ufunc call without a ufunc key".into()));
    };
    let kernel = (*kernel, kargs.as_slice(), *kret);
    match core {
        None => vectorized(lw, sig, a, kernel),
        Some(core) => generalized(lw, sig, a, kernel, (*nin, core)),
    }
}

/// The kernel: its dispatcher, argument types and result type.
type Kernel<'k> = (u64, &'k [TypeId], TypeId);

/// The kernel applied to one element of each input, each cast to its argument type.
fn apply<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (id, kargs, kret): Kernel<'_>,
    elems: &[Typed<'ctx>],
) -> R<Typed<'ctx>> {
    let mut vals = Vec::with_capacity(elems.len());
    for (&(v, t), &k) in elems.iter().zip(kargs) {
        vals.push(lw.cast(v, t, k)?);
    }
    Ok((call_swallowing(lw, id, (kargs, kret), &vals)?, kret))
}

fn vectorized<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    kernel: Kernel<'_>,
) -> R<BasicValueEnum<'ctx>> {
    let nin = kernel.1.len();
    let inputs: Vec<(TypeId, BasicValueEnum<'ctx>)> = sig.args[..nin]
        .iter()
        .copied()
        .zip(a.iter().copied())
        .collect();
    if !sig.ret.is_array() {
        let elems: Vec<Typed> = inputs.iter().map(|&(t, v)| (v, t)).collect();
        let (v, t) = apply(lw, kernel, &elems)?;
        return lw.cast(v, t, sig.ret);
    }
    if sig.args.len() == nin {
        return map_elements(lw, sig.ret, &inputs, &mut |lw, e| apply(lw, kernel, e));
    }
    // The output argument: the inputs broadcast to its own shape, NumPy's error otherwise.
    let (out_t, out) = (sig.args[nin], a[nin]);
    let nd = ndim(out_t);
    let mut all = inputs.clone();
    all.push((out_t, out));
    let (dims, all_same) = broadcast_shape(lw, nd, &all)?;
    let dst = out.into_struct_value();
    super::inplace::check_output_shape(lw, dst, nd, &dims)?;
    fill_elements(lw, (out_t, dst), &dims, all_same, &inputs, &mut |lw, e| {
        apply(lw, kernel, e)
    })?;
    lw.incref(out_t, out)?;
    Ok(out)
}

fn generalized<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    (id, kargs, kret): Kernel<'_>,
    (nin, core): (usize, &[Vec<u32>]),
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let n = sig.args.len();
    // Each array operand's loop (leading) rank.
    let outer: Vec<Option<u32>> = sig
        .args
        .iter()
        .zip(core)
        .map(|(t, c)| t.is_array().then(|| ndim(*t) - c.len() as u32))
        .collect();
    let rank = outer.iter().flatten().copied().max().unwrap_or(0);
    // Core dimensions named alike must agree, operand by operand.
    let mut named: Vec<(u32, IntValue<'ctx>)> = Vec::new();
    let mut bad = lw.ctx.bool_type().const_zero();
    for (k, c) in core.iter().enumerate() {
        let Some(o) = outer[k] else { continue };
        let arr = a[k].into_struct_value();
        for (j, &name) in c.iter().enumerate() {
            let d = dim(lw, arr, field::SHAPE, o + j as u32)?;
            match named.iter().find(|(n, _)| *n == name) {
                Some(&(_, first)) => {
                    let ne =
                        lw.b.build_int_compare(IntPredicate::NE, first, d, "")
                            .map_err(llvm_err)?;
                    bad = lw.b.build_or(bad, ne, "").map_err(llvm_err)?;
                }
                None => named.push((name, d)),
            }
        }
    }
    lw.raise_const_if(
        bad,
        "ValueError",
        &[
            "Operand has a mismatch in one of its core dimensions. Please, check if all \
           arguments to a @guvectorize function have the same core dimensions.",
        ],
    )?;
    // The loop shape: the inputs' leading axes broadcast; the outputs' must equal it.
    let mut dims = vec![one; rank as usize];
    for k in 0..nin {
        let Some(o) = outer[k] else { continue };
        let arr = a[k].into_struct_value();
        for j in 0..o {
            let d = &mut dims[(rank - o + j) as usize];
            let od = dim(lw, arr, field::SHAPE, j)?;
            let is_one =
                lw.b.build_int_compare(IntPredicate::EQ, *d, one, "")
                    .map_err(llvm_err)?;
            *d =
                lw.b.build_select(is_one, od, *d, "")
                    .map_err(llvm_err)?
                    .into_int_value();
        }
    }
    let mut bad = lw.ctx.bool_type().const_zero();
    for k in 0..n {
        let Some(o) = outer[k] else { continue };
        let arr = a[k].into_struct_value();
        if k >= nin && o != rank {
            bad = lw.ctx.bool_type().const_int(1, false);
            continue;
        }
        for j in 0..o {
            let od = dim(lw, arr, field::SHAPE, j)?;
            let d = dims[(rank - o + j) as usize];
            let same =
                lw.b.build_int_compare(IntPredicate::EQ, od, d, "")
                    .map_err(llvm_err)?;
            let ok = if k < nin {
                let is_one =
                    lw.b.build_int_compare(IntPredicate::EQ, od, one, "")
                        .map_err(llvm_err)?;
                lw.b.build_or(same, is_one, "").map_err(llvm_err)?
            } else {
                same
            };
            let not_ok = lw.b.build_not(ok, "").map_err(llvm_err)?;
            bad = lw.b.build_or(bad, not_ok, "").map_err(llvm_err)?;
        }
    }
    lw.raise_const_if(
        bad,
        "ValueError",
        &["Loop and array shapes are incompatible"],
    )?;
    let mut count = one;
    for &d in &dims {
        count = lw.b.build_int_mul(count, d, "").map_err(llvm_err)?;
    }
    let (lp, i) = Loop::begin(lw, count)?;
    // The loop index split into one index per loop axis (C order).
    let mut idx = vec![i64t.const_zero(); rank as usize];
    let mut rest = i;
    for d in (0..rank as usize).rev() {
        idx[d] =
            lw.b.build_int_unsigned_rem(rest, dims[d], "")
                .map_err(llvm_err)?;
        rest =
            lw.b.build_int_unsigned_div(rest, dims[d], "")
                .map_err(llvm_err)?;
    }
    let mut vals = Vec::with_capacity(n);
    for k in 0..n {
        let (t, kt) = (sig.args[k], kargs[k]);
        let Some(o) = outer[k] else {
            vals.push(lw.cast(a[k], t, kt)?);
            continue;
        };
        let arr = a[k].into_struct_value();
        let data = row_ptr(lw, arr, o, &idx[(rank - o) as usize..])?;
        let c = core[k].len() as u32;
        if !kt.is_array() {
            // A `()` input the kernel takes as a scalar.
            let v = load_elem(lw, dtype_of(t), data)?;
            vals.push(lw.cast(v, dtype_of(t), kt)?);
            continue;
        }
        if dtype_of(kt) != dtype_of(t) {
            return Err(lw.unsupported(format!(
                "a gufunc operand of type {t} for a kernel argument of type {kt}"
            )));
        }
        let (mut shape, mut strides) = (Vec::new(), Vec::new());
        for j in 0..c {
            shape.push(dim(lw, arr, field::SHAPE, o + j)?);
            strides.push(dim(lw, arr, field::STRIDES, o + j)?);
        }
        if c == 0 {
            // A `()` operand the kernel declares as a 1-d array: one element.
            shape.push(one);
            strides.push(i64t.const_zero());
        }
        if shape.len() as u32 != ndim(kt) {
            return Err(lw.unsupported(format!(
                "a gufunc operand of type {t} for a kernel argument of type {kt}"
            )));
        }
        vals.push(view_with(lw, arr, data, &shape, &strides)?.into());
    }
    call_swallowing(lw, id, (kargs, kret), &vals)?;
    lp.end(lw)?;
    Ok(lw.ghost())
}

/// The address of the core block of `arr` at loop position `idx` over its `o` leading
/// axes (an axis of length 1 stretches).
fn row_ptr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    arr: StructValue<'ctx>,
    o: u32,
    idx: &[IntValue<'ctx>],
) -> R<inkwell::values::PointerValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let mut off = i64t.const_zero();
    for j in 0..o {
        let len = dim(lw, arr, field::SHAPE, j)?;
        let stride = dim(lw, arr, field::STRIDES, j)?;
        let stretched =
            lw.b.build_int_compare(IntPredicate::EQ, len, i64t.const_int(1, false), "")
                .map_err(llvm_err)?;
        let ix =
            lw.b.build_select(stretched, i64t.const_zero(), idx[j as usize], "")
                .map_err(llvm_err)?
                .into_int_value();
        let term = lw.b.build_int_mul(ix, stride, "").map_err(llvm_err)?;
        off = lw.b.build_int_add(off, term, "").map_err(llvm_err)?;
    }
    let data = data_ptr(lw, arr)?;
    // SAFETY (of the generated code): the indices are inside the operand's leading axes.
    unsafe {
        lw.b.build_gep(lw.ctx.i8_type(), data, &[off], "")
            .map_err(llvm_err)
    }
}
