//! Small NumPy functions over arrays: `np.ptp`, `np.take`/`a.take` (flat positions, wrapped
//! and checked), `np.ascontiguousarray`/`asfortranarray` (the array itself when its layout
//! already fits, else a copy), `np.real`/`np.imag` (views of a complex array),
//! `np.conj`/`a.conj()` (a new array), `np.flatnonzero`, `np.atleast_1d/2d/3d` (views),
//! `np.finfo`/`np.iinfo` (constants), `np.divmod`.
//! Calls return new references: results that share the argument's memory take one.

use inkwell::values::{BasicValueEnum, IntValue};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{
    complex_part, dtype_of, flat_ptr, get_int, is_array, load_elem, map_elements, rebuild,
    shape_of, store_elem, strides_of, Loop,
};
use super::arrays::allocate;
use super::indexing::{checked_index, wrap_index};
use super::nonzero::count_true;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    let f = |k: &str| ImplKey::Function(k.into());
    let array = || TypePat::Pred(is_array);
    r.register(f("numpy.ptp"), Args::Exact(vec![array()]), ptp);
    for k in ["numpy.take", "array.take"] {
        r.register(f(k), Args::Exact(vec![array(), TypePat::Any]), take);
    }
    for k in ["numpy.ascontiguousarray", "numpy.asfortranarray"] {
        r.register(f(k), Args::Exact(vec![array()]), as_layout);
    }
    for k in ["numpy.real", "numpy.imag"] {
        r.register(f(k), Args::Exact(vec![array()]), part);
    }
    for k in [
        "numpy.conj",
        "numpy.conjugate",
        "array.conj",
        "array.conjugate",
    ] {
        r.register(f(k), Args::Exact(vec![array()]), conj);
    }
    r.register(
        f("numpy.flatnonzero"),
        Args::Exact(vec![array()]),
        flatnonzero,
    );
    for k in ["numpy.atleast_1d", "numpy.atleast_2d", "numpy.atleast_3d"] {
        r.register(f(k), Args::Exact(vec![array()]), atleast);
    }
    r.register(
        f("numpy.divmod"),
        Args::Exact(vec![TypePat::Any, TypePat::Any]),
        divmod,
    );
    r.register(
        f("numpy.divmod"),
        Args::Exact(vec![TypePat::Any, TypePat::Any, array(), array()]),
        super::array_ops::ufunc_into_out,
    );
    for k in ["numpy.finfo", "numpy.iinfo"] {
        r.register(f(k), Args::Exact(vec![TypePat::Any]), machine_info);
    }
}

/// `np.divmod(x, y)`: `(x // y, x % y)` through the operators' implementations (new
/// arrays for array operands, NumPy's element rules).
fn divmod<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let mut parts = Vec::with_capacity(2);
    for op in [numba_ir::BinOp::FloorDiv, numba_ir::BinOp::Mod] {
        let s = numba_typeinfer::context::binop_signature(op, sig.args[0], sig.args[1])
            .ok_or_else(|| lw.unsupported("np.divmod of these types"))?;
        let x = lw.cast(a[0], sig.args[0], s.args[0])?;
        let y = lw.cast(a[1], sig.args[1], s.args[1])?;
        let v = lw.call_impl(&s, &[x, y])?;
        parts.push(v);
    }
    lw.make_struct(sig.ret, &parts)
}

/// `np.finfo(t)` / `np.iinfo(t)`: a namedtuple of constants (the argument is not read).
fn machine_info<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    use numba_typeinfer::machine_info::{machine_info, InfoValue};
    let ImplKey::Function(key) = &sig.key else {
        unreachable!("registered under function keys")
    };
    let func = key.trim_start_matches("numpy.");
    let values = machine_info(func, sig.args[0])
        .ok_or_else(|| lw.unsupported(format!("np.{func} of {}", sig.args[0])))?;
    let mut vals = Vec::new();
    for (t, v) in values {
        vals.push(match v {
            InfoValue::Int(i) => lw.ctx.i64_type().const_int(i as u64, true).into(),
            InfoValue::Float(x) if t == FLOAT32 => lw.ctx.f32_type().const_float(x).into(),
            InfoValue::Float(x) => lw.ctx.f64_type().const_float(x).into(),
        });
    }
    lw.make_struct(sig.ret, &vals)
}

/// `max - min` over every element (Numba's `np.ptp`; empty arrays raise as min/max do).
fn ptp<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let call = |lw: &mut FnLower<'ctx, '_>, m: &str| {
        let s = Signature {
            key: ImplKey::Function(format!("array.{m}")),
            args: vec![t],
            ret: sig.ret,
        };
        lw.call_impl(&s, &a[..1])
    };
    let hi = call(lw, "max")?;
    let lo = call(lw, "min")?;
    let op = numba_typeinfer::context::binop_signature(numba_ir::BinOp::Sub, sig.ret, sig.ret)
        .ok_or_else(|| lw.unsupported("np.ptp of this dtype"))?;
    let hi = lw.cast(hi, sig.ret, op.args[0])?;
    let lo = lw.cast(lo, sig.ret, op.args[1])?;
    let d = lw.call_impl(&op, &[hi, lo])?;
    lw.cast(d, op.ret, sig.ret)
}

fn take<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, it) = (sig.args[0], sig.args[1]);
    let arr = a[0].into_struct_value();
    let dtype = dtype_of(t);
    let n = get_int(lw, arr, field::NITEMS)?;
    if !it.is_array() {
        let i = lw.cast(a[1], it, INT64)?.into_int_value();
        let i = checked_index(lw, i, n, "Index out of bounds")?;
        let p = flat_ptr(lw, t, arr, i)?;
        return load_elem(lw, dtype, p);
    }
    let idx = a[1].into_struct_value();
    let idx_d = dtype_of(it);
    // Every index is checked before the result is allocated (nothing leaks on error).
    let m = get_int(lw, idx, field::NITEMS)?;
    let (lp, k) = Loop::begin(lw, m)?;
    let p = flat_ptr(lw, it, idx, k)?;
    let i = load_elem(lw, idx_d, p)?;
    let i = lw.cast(i, idx_d, INT64)?.into_int_value();
    checked_index(lw, i, n, "Index out of bounds")?;
    lp.end(lw)?;
    let dims = shape_of(lw, it, idx)?;
    let out = allocate(lw, sig.ret, &dims)?;
    let (lp, k) = Loop::begin(lw, m)?;
    let p = flat_ptr(lw, it, idx, k)?;
    let i = load_elem(lw, idx_d, p)?;
    let i = lw.cast(i, idx_d, INT64)?.into_int_value();
    let i = wrap_index(lw, i, n)?;
    let src = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, src)?;
    let dst = flat_ptr(lw, sig.ret, out, k)?;
    store_elem(lw, dtype, dst, x)?;
    lp.end(lw)?;
    Ok(out.into())
}

/// The array itself when its layout is already the one asked for (a new reference), else
/// a copy in that layout; 0-d arrays become 1-d, as NumPy's.
fn as_layout<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, ret) = (sig.args[0], sig.ret);
    let arr = a[0].into_struct_value();
    let want = match ret.get() {
        Type::Array { layout, .. } => layout,
        _ => return Err(lw.unsupported("array layout")),
    };
    // Already laid out so (a 1-d C or F array is both): the array itself.
    let same = matches!(t.get(), Type::Array { layout, ndim, .. }
        if ndim > 0 && (layout == want || (ndim == 1 && matches!(layout, Layout::C | Layout::F))));
    if same {
        lw.incref(ret, a[0])?;
        return Ok(a[0]);
    }
    if ndim(t) == 0 {
        // A 0-d array: a 1-d view of its one element, as NumPy gives.
        let one = lw.ctx.i64_type().const_int(1, false);
        let size = get_int(lw, arr, field::ITEMSIZE)?;
        let view = rebuild(lw, arr, &[one], &[size])?;
        lw.incref(ret, view.into())?;
        return Ok(view.into());
    }
    let (src_t, src) = (t, arr);
    let dims = shape_of(lw, src_t, src)?;
    let out = allocate(lw, ret, &dims)?;
    super::indexing::assign_into(lw, ret, out, src_t, src.into())?;
    Ok(out.into())
}

/// `np.real(a)` / `np.imag(a)` of a complex array: the attribute's view, plus the
/// reference a call returns.
fn part<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = match &sig.key {
        ImplKey::Function(k) if k.ends_with("imag") => "imag",
        _ => "real",
    };
    let attr = Signature {
        key: ImplKey::GetAttr(name.into()),
        args: sig.args.clone(),
        ret: sig.ret,
    };
    let v = complex_part(lw, &attr, a)?;
    lw.incref(sig.ret, v)?;
    Ok(v)
}

fn conj<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    map_elements(lw, sig.ret, &[(t, a[0])], &mut |lw, e| {
        let (x, xt) = e[0];
        if !xt.is_complex() {
            return Ok((x, xt));
        }
        let sv = x.into_struct_value();
        let im =
            lw.b.build_extract_value(sv, 1, "")
                .map_err(llvm_err)?
                .into_float_value();
        let neg = lw.b.build_float_neg(im, "").map_err(llvm_err)?;
        let out =
            lw.b.build_insert_value(sv, neg, 1, "")
                .map_err(llvm_err)?
                .into_struct_value();
        Ok((out.into(), xt))
    })
}

/// The C-order positions of the true (non-zero) elements.
fn flatnonzero<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let dtype = dtype_of(t);
    let arr = a[0].into_struct_value();
    let i64t = lw.ctx.i64_type();
    let n = get_int(lw, arr, field::NITEMS)?;
    let total = count_true(lw, t, arr)?;
    let count = lw.alloca_in_entry(i64t.into(), "count")?;
    let out = allocate(lw, sig.ret, &[total])?;
    lw.b.build_store(count, i64t.const_zero())
        .map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, n)?;
    let p = flat_ptr(lw, t, arr, i)?;
    let x = load_elem(lw, dtype, p)?;
    let nz = lw.truth(x, dtype)?;
    let c =
        lw.b.build_load(i64t, count, "")
            .map_err(llvm_err)?
            .into_int_value();
    let take = lw.new_block("flatnz.take");
    let skip = lw.new_block("flatnz.skip");
    lw.b.build_conditional_branch(nz, take, skip)
        .map_err(llvm_err)?;
    lw.b.position_at_end(take);
    let q = flat_ptr(lw, sig.ret, out, c)?;
    store_elem(lw, INTP, q, i.into())?;
    let c =
        lw.b.build_int_add(c, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.b.build_store(count, c).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(skip).map_err(llvm_err)?;
    lw.b.position_at_end(skip);
    lp.end(lw)?;
    Ok(out.into())
}

/// `np.atleast_Nd(a)`: the array itself when it has enough axes, else a view with length-1
/// axes added as NumPy adds them (1-d `(n,)` is `(1, n)` in 2-d and `(1, n, 1)` in 3-d;
/// 2-d `(r, c)` is `(r, c, 1)` in 3-d).
fn atleast<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (t, ret) = (sig.args[0], sig.ret);
    let arr = a[0].into_struct_value();
    let (have, want) = (ndim(t), ndim(ret));
    if have >= want {
        lw.incref(ret, a[0])?;
        return Ok(a[0]);
    }
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let zero = i64t.const_zero();
    let shape = shape_of(lw, t, arr)?;
    let strides = strides_of(lw, t, arr)?;
    let (sh, st): (Vec<IntValue<'ctx>>, Vec<IntValue<'ctx>>) = match (have, want) {
        (0, k) => (vec![one; k as usize], vec![zero; k as usize]),
        (1, 2) => (vec![one, shape[0]], vec![zero, strides[0]]),
        (1, 3) => (vec![one, shape[0], one], vec![zero, strides[0], zero]),
        (2, 3) => (
            vec![shape[0], shape[1], one],
            vec![strides[0], strides[1], zero],
        ),
        _ => return Err(lw.unsupported("np.atleast_Nd")),
    };
    let out = rebuild(lw, arr, &sh, &st)?;
    lw.incref(ret, out.into())?;
    Ok(out.into())
}
