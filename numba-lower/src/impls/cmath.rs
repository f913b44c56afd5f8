//! The `cmath` module: complex functions through libm's C99 complex functions (a runtime
//! helper, which also computes NumPy's complex `log2`/`expm1`/`log1p`/`exp2`/`rint`),
//! `phase`, `polar`, `rect`, the classification functions and the constants.

use inkwell::values::BasicValueEnum;
use inkwell::FloatPredicate;
use numba_typeinfer::builtins::{complex_fn_index, CMATH_COMPLEX, NPY_COMPLEX};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::complex::{make, parts};
use super::function_of;
use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn key(k: &str) -> ImplKey {
    ImplKey::Function(format!("cmath.{k}"))
}

pub(crate) fn register(r: &mut Registry) {
    for name in CMATH_COMPLEX {
        r.register(key(name), Args::Exact(vec![TypePat::Complex]), complex_fn);
    }
    for name in NPY_COMPLEX {
        r.register(
            ImplKey::Function(format!("npcomplex.{name}")),
            Args::Exact(vec![TypePat::Complex]),
            complex_fn,
        );
    }
    for name in ["isnan", "isinf", "isfinite"] {
        r.register(key(name), Args::Exact(vec![TypePat::Complex]), classify);
    }
    r.register(key("phase"), Args::Exact(vec![TypePat::Complex]), phase);
    r.register(key("polar"), Args::Exact(vec![TypePat::Complex]), polar);
    r.register(
        key("rect"),
        Args::Exact(vec![TypePat::Float, TypePat::Float]),
        rect,
    );
    for c in ["pi", "e", "tau", "inf", "nan", "infj", "nanj"] {
        r.register(
            ImplKey::GetAttr(c.into()),
            Args::Exact(vec![TypePat::Module("cmath")]),
            constant,
        );
    }
}

fn name(sig: &Signature) -> &str {
    let f = function_of(&sig.key);
    f.strip_prefix("cmath.")
        .or_else(|| f.strip_prefix("npcomplex."))
        .unwrap_or_default()
}

fn complex_fn<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = complex_fn_index(name(sig))
        .ok_or_else(|| lw.unsupported(format!("no complex function {}", name(sig))))?;
    let z = lw.cast(a[0], sig.args[0], COMPLEX128)?;
    let (re, im) = parts(lw, z)?;
    let f64t = lw.ctx.f64_type();
    let i32t = lw.ctx.i32_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_cmath",
        lw.ctx
            .void_type()
            .fn_type(&[i32t.into(), f64t.into(), f64t.into(), ptr.into()], false),
    );
    let out = lw.alloca_in_entry(f64t.array_type(2).into(), "cmath_out")?;
    lw.b.build_call(
        f,
        &[
            i32t.const_int(op as u64, false).into(),
            re.into(),
            im.into(),
            out.into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    let (re, im) = super::complex::load_pair(lw, out)?;
    let r = make(lw, COMPLEX128, re, im)?;
    lw.cast(r, COMPLEX128, sig.ret)
}

fn classify<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (re, im) = parts(lw, a[0])?;
    let ft = re.get_type();
    let inf = ft.const_float(f64::INFINITY);
    let test = |lw: &mut FnLower<'ctx, '_>, x| -> R<inkwell::values::IntValue<'ctx>> {
        Ok(match name(sig) {
            "isnan" => {
                lw.b.build_float_compare(FloatPredicate::UNO, x, x, "")
                    .map_err(llvm_err)?
            }
            "isinf" => {
                let ax = lw.float_unary("fabs", x)?;
                lw.b.build_float_compare(FloatPredicate::OEQ, ax, inf, "")
                    .map_err(llvm_err)?
            }
            _ => {
                let ax = lw.float_unary("fabs", x)?;
                lw.b.build_float_compare(FloatPredicate::OLT, ax, inf, "")
                    .map_err(llvm_err)?
            }
        })
    };
    let r = test(lw, re)?;
    let i = test(lw, im)?;
    // isfinite needs both parts finite; isnan / isinf either part.
    let v = if name(sig) == "isfinite" {
        lw.b.build_and(r, i, "").map_err(llvm_err)?
    } else {
        lw.b.build_or(r, i, "").map_err(llvm_err)?
    };
    Ok(v.into())
}

fn phase<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (re, im) = parts(lw, a[0])?;
    Ok(lw.float_binary("atan2", im, re)?.into())
}

fn polar<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (re, im) = parts(lw, a[0])?;
    let r = lw.float_binary("hypot", re, im)?;
    let phi = lw.float_binary("atan2", im, re)?;
    lw.make_struct(sig.ret, &[r.into(), phi.into()])
}

/// `rect(r, phi)`: `r * (cos(phi) + sin(phi)*j)`; a zero angle keeps the imaginary part
/// an exact zero (CPython does the same for finite `r`).
fn rect<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (r, phi) = (a[0].into_float_value(), a[1].into_float_value());
    let c = lw.float_unary("cos", phi)?;
    let s = lw.float_unary("sin", phi)?;
    let re = lw.b.build_float_mul(r, c, "").map_err(llvm_err)?;
    let im = lw.b.build_float_mul(r, s, "").map_err(llvm_err)?;
    let zero = r.get_type().const_zero();
    let phi_zero =
        lw.b.build_float_compare(FloatPredicate::OEQ, phi, zero, "")
            .map_err(llvm_err)?;
    let im0 = lw.b.build_float_mul(phi, r, "").map_err(llvm_err)?;
    let im =
        lw.b.build_select(phi_zero, im0, im, "")
            .map_err(llvm_err)?
            .into_float_value();
    make(lw, COMPLEX128, re, im)
}

fn constant<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::GetAttr(attr) = &sig.key else {
        return Err(lw.unsupported("cmath constant"));
    };
    let f = lw.ctx.f64_type();
    let real = |x: f64| -> BasicValueEnum<'ctx> { f.const_float(x).into() };
    Ok(match attr.as_str() {
        "pi" => real(std::f64::consts::PI),
        "e" => real(std::f64::consts::E),
        "tau" => real(std::f64::consts::TAU),
        "inf" => real(f64::INFINITY),
        "nan" => real(f64::NAN),
        "infj" => make(lw, COMPLEX128, f.const_zero(), f.const_float(f64::INFINITY))?,
        _ => make(lw, COMPLEX128, f.const_zero(), f.const_float(f64::NAN))?,
    })
}
