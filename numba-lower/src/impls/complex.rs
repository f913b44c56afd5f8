//! Complex numbers: arithmetic (division as CPython's `_Py_c_quot`), comparison, `abs`,
//! `.real`, `.imag`, `.conjugate()` and the `complex(...)` constructor.

use inkwell::values::{BasicValueEnum, FloatValue};
use inkwell::FloatPredicate;
use numba_ir::{BinOp, UnaryOp};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::{binop_of, unary_of};
use crate::function::FnLower;
use crate::model::complex_part;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, ErrorModel, R};

pub(crate) fn register(r: &mut Registry) {
    use BinOp::*;
    for op in [Add, Sub, Mul, TrueDiv, Pow, Eq, Ne] {
        r.register(
            ImplKey::BinOp(op),
            Args::Exact(vec![TypePat::Complex, TypePat::Complex]),
            complex_binop,
        );
    }
    for op in [UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Not] {
        r.register(
            ImplKey::Unary(op),
            Args::Exact(vec![TypePat::Complex]),
            complex_unary,
        );
    }
    r.register(
        ImplKey::Function("abs".into()),
        Args::Exact(vec![TypePat::Complex]),
        complex_abs,
    );
    // `.real`/`.imag` of a number, and NumPy's `np.real(x)`/`np.imag(x)` of one.
    for attr in ["real", "imag"] {
        r.register(
            ImplKey::GetAttr(attr.into()),
            Args::Exact(vec![TypePat::Number]),
            number_part,
        );
        r.register(
            ImplKey::Function(format!("numpy.{attr}")),
            Args::Exact(vec![TypePat::Number]),
            number_part,
        );
    }
    for k in ["numpy.conj", "numpy.conjugate"] {
        r.register(
            ImplKey::Function(k.into()),
            Args::Exact(vec![TypePat::Number]),
            conjugate,
        );
    }
    r.register(
        ImplKey::Function("number.conjugate".into()),
        Args::Exact(vec![TypePat::Number]),
        conjugate,
    );
    r.register(
        ImplKey::Function("number.item".into()),
        Args::Exact(vec![TypePat::Any]),
        |_lw, _sig, a| Ok(a[0]),
    );
    r.register(
        ImplKey::Function("complex".into()),
        Args::Variadic(TypePat::Number),
        complex_ctor,
    );
}

/// The (real, imag) parts of a complex value.
pub(crate) fn parts<'ctx>(
    lw: &FnLower<'ctx, '_>,
    v: BasicValueEnum<'ctx>,
) -> R<(FloatValue<'ctx>, FloatValue<'ctx>)> {
    let sv = v.into_struct_value();
    let re = lw.b.build_extract_value(sv, 0, "re").map_err(llvm_err)?;
    let im = lw.b.build_extract_value(sv, 1, "im").map_err(llvm_err)?;
    Ok((re.into_float_value(), im.into_float_value()))
}

/// A complex value of type `t` from its parts.
pub(crate) fn make<'ctx>(
    lw: &FnLower<'ctx, '_>,
    t: TypeId,
    re: FloatValue<'ctx>,
    im: FloatValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    lw.make_struct(t, &[re.into(), im.into()])
}

fn complex_binop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    args: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = binop_of(&sig.key);
    let t = sig.args[0];
    let (a, b) = (parts(lw, args[0])?, parts(lw, args[1])?);
    let bd = &lw.b;
    Ok(match op {
        BinOp::Add => {
            let re = bd.build_float_add(a.0, b.0, "").map_err(llvm_err)?;
            let im = bd.build_float_add(a.1, b.1, "").map_err(llvm_err)?;
            make(lw, t, re, im)?
        }
        BinOp::Sub => {
            let re = bd.build_float_sub(a.0, b.0, "").map_err(llvm_err)?;
            let im = bd.build_float_sub(a.1, b.1, "").map_err(llvm_err)?;
            make(lw, t, re, im)?
        }
        BinOp::Mul => {
            let ac = bd.build_float_mul(a.0, b.0, "").map_err(llvm_err)?;
            let bdv = bd.build_float_mul(a.1, b.1, "").map_err(llvm_err)?;
            let ad = bd.build_float_mul(a.0, b.1, "").map_err(llvm_err)?;
            let bc = bd.build_float_mul(a.1, b.0, "").map_err(llvm_err)?;
            let re = bd.build_float_sub(ac, bdv, "").map_err(llvm_err)?;
            let im = bd.build_float_add(ad, bc, "").map_err(llvm_err)?;
            make(lw, t, re, im)?
        }
        BinOp::Eq | BinOp::Ne => {
            let p = FloatPredicate::OEQ;
            let r = bd.build_float_compare(p, a.0, b.0, "").map_err(llvm_err)?;
            let i = bd.build_float_compare(p, a.1, b.1, "").map_err(llvm_err)?;
            let eq = bd.build_and(r, i, "").map_err(llvm_err)?;
            if op == BinOp::Eq {
                eq.into()
            } else {
                bd.build_not(eq, "").map_err(llvm_err)?.into()
            }
        }
        BinOp::TrueDiv => divide(lw, t, a, b)?,
        BinOp::Pow => power(lw, t, args[0], args[1])?,
        other => {
            return Err(lw.unsupported(format!(
                "operator '{}' on {t} is not supported",
                other.symbol()
            )))
        }
    })
}

/// `a ** b` through the runtime's `numba_rs_cpow` (CPython's algorithm, in double
/// precision): zero to a negative or complex power raises CPython's ZeroDivisionError
/// (NumPy's inf+nanj under the 'numpy' error model).
fn power<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    a: BasicValueEnum<'ctx>,
    b: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let f64t = lw.ctx.f64_type();
    let i32t = lw.ctx.i32_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    // In double precision, as the cmath functions run.
    let (a, b) = (lw.cast(a, t, COMPLEX128)?, lw.cast(b, t, COMPLEX128)?);
    let ((ar, ai), (br, bi)) = (parts(lw, a)?, parts(lw, b)?);
    let f = lw.runtime_fn(
        "numba_rs_cpow",
        i32t.fn_type(
            &[
                f64t.into(),
                f64t.into(),
                f64t.into(),
                f64t.into(),
                ptr.into(),
            ],
            false,
        ),
    );
    let out = lw.alloca_in_entry(f64t.array_type(2).into(), "cpow_out")?;
    let status = lw
        .call_value(f, &[ar.into(), ai.into(), br.into(), bi.into(), out.into()])?
        .into_int_value();
    if lw.error_model() != crate::ErrorModel::Numpy {
        let bad =
            lw.b.build_int_compare(inkwell::IntPredicate::NE, status, i32t.const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(
            bad,
            "ZeroDivisionError",
            &["0.0 to a negative or complex power"],
        )?;
    }
    let (re, im) = load_pair(lw, out)?;
    let r = make(lw, COMPLEX128, re, im)?;
    lw.cast(r, COMPLEX128, t)
}

/// The two doubles a runtime helper wrote to `out` (a `[2 x double]` slot): a complex
/// result's parts.
pub(crate) fn load_pair<'ctx>(
    lw: &FnLower<'ctx, '_>,
    out: inkwell::values::PointerValue<'ctx>,
) -> R<(FloatValue<'ctx>, FloatValue<'ctx>)> {
    let f64t = lw.ctx.f64_type();
    let i64t = lw.ctx.i64_type();
    let mut got = Vec::new();
    for i in 0..2 {
        // SAFETY (of the generated code): out holds two doubles.
        let p = unsafe {
            lw.b.build_in_bounds_gep(
                f64t.array_type(2),
                out,
                &[i64t.const_zero(), i64t.const_int(i, false)],
                "",
            )
            .map_err(llvm_err)?
        };
        got.push(
            lw.b.build_load(f64t, p, "")
                .map_err(llvm_err)?
                .into_float_value(),
        );
    }
    Ok((got[0], got[1]))
}

/// CPython's `_Py_c_quot` (Smith's algorithm), raising on a zero divisor.
fn divide<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    a: (FloatValue<'ctx>, FloatValue<'ctx>),
    b: (FloatValue<'ctx>, FloatValue<'ctx>),
) -> R<BasicValueEnum<'ctx>> {
    let ft = a.0.get_type();
    let zero = ft.const_zero();
    let abs_br = lw.float_unary("fabs", b.0)?;
    let abs_bi = lw.float_unary("fabs", b.1)?;
    if lw.error_model() == ErrorModel::Python {
        let bd = &lw.b;
        let z1 = bd
            .build_float_compare(FloatPredicate::OEQ, b.0, zero, "")
            .map_err(llvm_err)?;
        let z2 = bd
            .build_float_compare(FloatPredicate::OEQ, b.1, zero, "")
            .map_err(llvm_err)?;
        let both = bd.build_and(z1, z2, "").map_err(llvm_err)?;
        lw.raise_const_if(both, "ZeroDivisionError", &["complex division by zero"])?;
    }
    let bd = &lw.b;
    let f = |r: Result<FloatValue<'ctx>, _>| r.map_err(llvm_err);
    // |b.real| >= |b.imag|: ratio = b.imag / b.real.
    let real_big = bd
        .build_float_compare(FloatPredicate::OGE, abs_br, abs_bi, "")
        .map_err(llvm_err)?;
    let ratio1 = f(bd.build_float_div(b.1, b.0, ""))?;
    let denom1 = f(bd.build_float_add(b.0, f(bd.build_float_mul(b.1, ratio1, ""))?, ""))?;
    let re1 = f(bd.build_float_div(
        f(bd.build_float_add(a.0, f(bd.build_float_mul(a.1, ratio1, ""))?, ""))?,
        denom1,
        "",
    ))?;
    let im1 = f(bd.build_float_div(
        f(bd.build_float_sub(a.1, f(bd.build_float_mul(a.0, ratio1, ""))?, ""))?,
        denom1,
        "",
    ))?;
    let ratio2 = f(bd.build_float_div(b.0, b.1, ""))?;
    let denom2 = f(bd.build_float_add(f(bd.build_float_mul(b.0, ratio2, ""))?, b.1, ""))?;
    let re2 = f(bd.build_float_div(
        f(bd.build_float_add(f(bd.build_float_mul(a.0, ratio2, ""))?, a.1, ""))?,
        denom2,
        "",
    ))?;
    let im2 = f(bd.build_float_div(
        f(bd.build_float_sub(f(bd.build_float_mul(a.1, ratio2, ""))?, a.0, ""))?,
        denom2,
        "",
    ))?;
    let re = bd
        .build_select(real_big, re1, re2, "")
        .map_err(llvm_err)?
        .into_float_value();
    let im = bd
        .build_select(real_big, im1, im2, "")
        .map_err(llvm_err)?
        .into_float_value();
    make(lw, t, re, im)
}

fn complex_unary<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    match unary_of(&sig.key) {
        UnaryOp::Neg => {
            let (re, im) = parts(lw, a[0])?;
            let re = lw.b.build_float_neg(re, "").map_err(llvm_err)?;
            let im = lw.b.build_float_neg(im, "").map_err(llvm_err)?;
            make(lw, t, re, im)
        }
        UnaryOp::Not => {
            let c = lw.truth(a[0], t)?;
            Ok(lw.b.build_not(c, "").map_err(llvm_err)?.into())
        }
        _ => Ok(a[0]),
    }
}

fn complex_abs<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (re, im) = parts(lw, a[0])?;
    Ok(lw.float_binary("hypot", re, im)?.into())
}

/// The real or imaginary part of a number (`.real`/`.imag`, `np.real`/`np.imag`): a
/// complex one's float part; a real one itself, or zero for the imaginary part.
fn number_part<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let imag = match &sig.key {
        ImplKey::GetAttr(attr) => attr == "imag",
        key => super::function_of(key) == "numpy.imag",
    };
    if sig.args[0].is_complex() {
        let (re, im) = parts(lw, a[0])?;
        return Ok(if imag { im } else { re }.into());
    }
    Ok(if imag {
        crate::model::value_type(lw.ctx, sig.ret)?.const_zero()
    } else {
        a[0]
    })
}

fn conjugate<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    if !t.is_complex() {
        return Ok(a[0]);
    }
    let (re, im) = parts(lw, a[0])?;
    let im = lw.b.build_float_neg(im, "").map_err(llvm_err)?;
    make(lw, t, re, im)
}

/// `complex(x)` / `complex(x, y)`: `x + y*1j`, each part possibly complex itself.
fn complex_ctor<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.ret;
    let ft = crate::model::value_type(lw.ctx, complex_part(t))?.into_float_type();
    let zero = ft.const_zero();
    let as_c = |lw: &mut FnLower<'ctx, '_>, i: usize| -> R<(FloatValue<'ctx>, FloatValue<'ctx>)> {
        match a.get(i) {
            None => Ok((zero, zero)),
            Some(&v) => {
                let c = lw.cast(v, sig.args[i], t)?;
                parts(lw, c)
            }
        }
    };
    let (xr, xi) = as_c(lw, 0)?;
    let (yr, yi) = as_c(lw, 1)?;
    let re = lw.b.build_float_sub(xr, yi, "").map_err(llvm_err)?;
    let im = lw.b.build_float_add(xi, yr, "").map_err(llvm_err)?;
    make(lw, t, re, im)
}
