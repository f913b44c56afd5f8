//! `numpy.random.Generator` primitives (typing: `numba_typeinfer::np_generator`): each
//! calls NumPy's own distribution function on the Generator's `bitgen_t`. Those C
//! functions come from the embedder (numba-py links NumPy's `libnpyrandom` and
//! registers them, `runtime::register_host_symbols`); without them a primitive is
//! an Unsupported error naming the missing library.

use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, PointerValue};
use inkwell::AddressSpace;
use numba_typeinfer::np_generator::{params, CParam};
use numba_typeinfer::signature::{ImplKey, Signature};
use numba_typeinfer::types::*;

use crate::function::FnLower;
use crate::model::array::field;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn key(k: &str) -> ImplKey {
    ImplKey::Function(format!("numba_rs._npgen.{k}"))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(key("cont"), Args::Variadic(TypePat::Any), cont);
    r.register(key("disc"), Args::Variadic(TypePat::Any), disc);
    r.register(key("cont_f"), Args::Variadic(TypePat::Any), cont);
    r.register(key("bounded"), Args::Variadic(TypePat::Any), bounded);
    r.register(
        key("bounded_fill"),
        Args::Variadic(TypePat::Any),
        bounded_fill,
    );
    r.register(key("interval"), Args::Variadic(TypePat::Any), interval);
    r.register(key("new"), Args::Exact(vec![TypePat::Any]), new);
}

/// `numba_rs._npgen.new(seed)`: a Generator made by the embedder's
/// `numba_rs_default_rng(seed, has_seed, out)` (NumPy's own `default_rng`), which keeps
/// the object alive for the call in progress.
fn new<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let symbol = "numba_rs_default_rng";
    if !crate::runtime::has_host_symbol(symbol) {
        return Err(
            lw.unsupported("np.random.default_rng in compiled code needs numba-rs's Python module")
        );
    }
    let i64t = lw.ctx.i64_type();
    let i32t = lw.ctx.i32_type();
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let f = lw.runtime_fn(
        symbol,
        i32t.fn_type(&[i64t.into(), i32t.into(), ptr.into()], false),
    );
    let has_seed = sig.args[0] != NONE;
    let seed = if has_seed {
        a[0].into_int_value()
    } else {
        i64t.const_zero()
    };
    let out = lw.alloca_in_entry(ptr.array_type(2).into(), "rng")?;
    let status = lw
        .call_value(
            f,
            &[
                seed.into(),
                i32t.const_int(u64::from(has_seed), false).into(),
                out.into(),
            ],
        )?
        .into_int_value();
    let failed =
        lw.b.build_int_compare(inkwell::IntPredicate::NE, status, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(failed, "RuntimeError", &["np.random.default_rng failed"])?;
    let pair =
        lw.b.build_load(ptr.array_type(2), out, "")
            .map_err(llvm_err)?
            .into_array_value();
    let bitgen = lw.b.build_extract_value(pair, 0, "").map_err(llvm_err)?;
    let obj = lw.b.build_extract_value(pair, 1, "").map_err(llvm_err)?;
    lw.make_struct(sig.ret, &[bitgen, obj])
}

/// NumPy's C function `symbol`, declared with this type, once the embedder provides it.
fn host_fn<'ctx>(
    lw: &FnLower<'ctx, '_>,
    symbol: &str,
    ret: Option<BasicTypeEnum<'ctx>>,
    params: &[BasicMetadataTypeEnum<'ctx>],
) -> R<inkwell::values::FunctionValue<'ctx>> {
    if !crate::runtime::has_host_symbol(symbol) {
        return Err(lw.unsupported(format!(
            "np.random.Generator needs NumPy's distributions library (libnpyrandom, \
             function {symbol}), which this build of numba-rs was not linked with"
        )));
    }
    let ty = match ret {
        Some(r) => r.fn_type(params, false),
        None => lw.ctx.void_type().fn_type(params, false),
    };
    Ok(lw.runtime_fn(symbol, ty))
}

/// The `bitgen_t *` of a Generator value.
fn bitgen<'ctx>(lw: &FnLower<'ctx, '_>, g: BasicValueEnum<'ctx>) -> R<PointerValue<'ctx>> {
    Ok(lw
        .b
        .build_extract_value(g.into_struct_value(), 0, "bitgen")
        .map_err(llvm_err)?
        .into_pointer_value())
}

fn name_of(t: TypeId) -> String {
    match t.get() {
        Type::StringLiteral(s) => s,
        _ => String::new(),
    }
}

/// `random_<name>(bitgen, params...)`, continuous (double) or discrete (int64).
fn call_dist<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = name_of(sig.args[1]);
    let cparams = params(&name, sig.ret)
        .ok_or_else(|| lw.unsupported(format!("no NumPy distribution named {name}")))?;
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let (f64t, i64t, f32t) = (lw.ctx.f64_type(), lw.ctx.i64_type(), lw.ctx.f32_type());
    let mut tys: Vec<BasicMetadataTypeEnum> = vec![ptr.into()];
    let mut vals: Vec<BasicMetadataValueEnum> = vec![bitgen(lw, a[0])?.into()];
    for (p, v) in cparams.iter().zip(&a[2..]) {
        tys.push(match p {
            CParam::Double => f64t.into(),
            CParam::Int64 => i64t.into(),
            CParam::Float => f32t.into(),
        });
        vals.push((*v).into());
    }
    // `random_binomial` keeps NumPy's set-up of (n, p) in a struct it is handed; a
    // fresh one per draw gives the same values (the set-up is a function of n and p).
    if name == "binomial" {
        let cache = lw.alloca_in_entry(lw.ctx.i8_type().array_type(256).into(), "binomial")?;
        let zero = lw.ctx.i8_type().array_type(256).const_zero();
        lw.b.build_store(cache, zero).map_err(llvm_err)?;
        tys.push(ptr.into());
        vals.push(cache.into());
    }
    let ret: BasicTypeEnum = match sig.ret {
        r if r == INT64 => i64t.into(),
        r if r == FLOAT32 => f32t.into(),
        _ => f64t.into(),
    };
    let f = host_fn(lw, &format!("random_{name}"), Some(ret), &tys)?;
    lw.call_value(f, &vals)
}

fn cont<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    call_dist(lw, sig, a)
}

fn disc<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    call_dist(lw, sig, a)
}

/// `random_bounded_uint<w>_fill(bitgen, off, rng, cnt, use_masked=false, out)` (or
/// `random_bounded_bool_fill`) for outputs of `dtype`; `off` and `rng` are int64 and
/// uint64 values, narrowed to the output's width as NumPy passes them.
fn fill<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dtype: TypeId,
    g: BasicValueEnum<'ctx>,
    off: BasicValueEnum<'ctx>,
    rng: BasicValueEnum<'ctx>,
    cnt: BasicValueEnum<'ctx>,
    out: PointerValue<'ctx>,
) -> R<()> {
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let (i64t, i8t) = (lw.ctx.i64_type(), lw.ctx.i8_type());
    let (symbol, bits) = match dtype.get() {
        Type::Boolean => ("random_bounded_bool_fill".to_string(), 8),
        Type::Integer { bits, .. } => (format!("random_bounded_uint{bits}_fill"), bits),
        _ => return Err(lw.unsupported(format!("integers of {dtype}"))),
    };
    let wt = match bits {
        8 => lw.ctx.i8_type(),
        16 => lw.ctx.i16_type(),
        32 => lw.ctx.i32_type(),
        _ => lw.ctx.i64_type(),
    };
    let f = host_fn(
        lw,
        &symbol,
        None,
        &[
            ptr.into(),
            wt.into(),
            wt.into(),
            i64t.into(),
            i8t.into(),
            ptr.into(),
        ],
    )?;
    let narrow = |lw: &FnLower<'ctx, '_>, v: BasicValueEnum<'ctx>| -> R<BasicValueEnum<'ctx>> {
        let v = v.into_int_value();
        if bits == 64 {
            return Ok(v.into());
        }
        Ok(lw.b.build_int_truncate(v, wt, "").map_err(llvm_err)?.into())
    };
    let args: Vec<BasicMetadataValueEnum> = vec![
        bitgen(lw, g)?.into(),
        narrow(lw, off)?.into(),
        narrow(lw, rng)?.into(),
        cnt.into(),
        i8t.const_zero().into(),
        out.into(),
    ];
    lw.b.build_call(f, &args, "").map_err(llvm_err)?;
    Ok(())
}

/// One draw of `off + [0, rng]` (as NumPy's `integers` makes a scalar: a fill of one).
fn bounded<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let out = lw.alloca_in_entry(i64t.into(), "draw")?;
    let one = i64t.const_int(1, false);
    fill(lw, INT64, a[0], a[1], a[2], one.into(), out)?;
    lw.b.build_load(i64t, out, "").map_err(llvm_err)
}

fn bounded_fill<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let arr = a[3].into_struct_value();
    let n =
        lw.b.build_extract_value(arr, field::NITEMS, "")
            .map_err(llvm_err)?;
    let data =
        lw.b.build_extract_value(arr, field::DATA, "")
            .map_err(llvm_err)?
            .into_pointer_value();
    let dtype = numba_typeinfer::numpy::array_parts(sig.args[3]).map_or(INT64, |p| p.0);
    fill(lw, dtype, a[0], a[1], a[2], n, data)?;
    Ok(lw.ghost())
}

/// `random_interval(bitgen, max)`: a draw of `[0, max]` by masked rejection.
fn interval<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let i64t = lw.ctx.i64_type();
    let f = host_fn(
        lw,
        "random_interval",
        Some(i64t.into()),
        &[ptr.into(), i64t.into()],
    )?;
    let g = bitgen(lw, a[0])?;
    lw.call_value(f, &[g.into(), a[1].into()])
}
