//! The `math` module: functions on floats (LLVM intrinsics or libm) and its constants.

use inkwell::values::BasicValueEnum;
use inkwell::FloatPredicate;
use numba_typeinfer::{BaseContext, ImplKey, Signature};

use super::function_of;
use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    // Every `math.*` function the typing context knows.
    let typing = BaseContext::builtin();
    const OWN: &[&str] = &["math.frexp", "math.ldexp", "math.gcd"];
    r.register(
        ImplKey::Function("math.frexp".into()),
        Args::Variadic(TypePat::Number),
        frexp,
    );
    r.register(
        ImplKey::Function("math.ldexp".into()),
        Args::Variadic(TypePat::Number),
        ldexp,
    );
    r.register(
        ImplKey::Function("math.gcd".into()),
        Args::Variadic(TypePat::Number),
        gcd,
    );
    for k in typing
        .function_keys()
        .filter(|k| k.starts_with("math.") && !OWN.contains(k))
    {
        r.register(
            ImplKey::Function(k.to_string()),
            Args::Variadic(TypePat::Number),
            math_fn,
        );
    }
    for c in ["pi", "e", "tau", "inf", "nan"] {
        r.register(
            ImplKey::GetAttr(c.into()),
            Args::Exact(vec![TypePat::Module("math")]),
            math_const,
        );
    }
    // NumPy's float constants are the same values (`np.newaxis` is None: a ghost).
    for c in ["pi", "e", "inf", "nan"] {
        r.register(
            ImplKey::GetAttr(c.into()),
            Args::Exact(vec![TypePat::Module("numpy")]),
            math_const,
        );
    }
}

fn math_const<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let c = match &sig.key {
        ImplKey::GetAttr(a) if a == "pi" => std::f64::consts::PI,
        ImplKey::GetAttr(a) if a == "e" => std::f64::consts::E,
        ImplKey::GetAttr(a) if a == "tau" => std::f64::consts::TAU,
        ImplKey::GetAttr(a) if a == "inf" => f64::INFINITY,
        _ => f64::NAN,
    };
    Ok(lw.ctx.f64_type().const_float(c).into())
}

fn math_fn<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let name = function_of(&sig.key)
        .strip_prefix("math.")
        .unwrap_or_default()
        .to_string();
    // Integral arguments of floor/ceil/trunc are already the result.
    if sig.args[0].is_integer() {
        return Ok(a[0]);
    }
    let x = a[0].into_float_value();
    let ft = x.get_type();
    Ok(match name.as_str() {
        "floor" | "ceil" | "trunc" => {
            let r = lw.float_unary(&name, x)?;
            lw.cast(r.into(), sig.args[0], sig.ret)?
        }
        "isnan" => {
            lw.b.build_float_compare(FloatPredicate::UNO, x, x, "")
                .map_err(llvm_err)?
                .into()
        }
        "isinf" | "isfinite" => {
            let ax = lw.float_unary("fabs", x)?;
            let inf = ft.const_float(f64::INFINITY);
            let p = if name == "isinf" {
                FloatPredicate::OEQ
            } else {
                FloatPredicate::OLT
            };
            lw.b.build_float_compare(p, ax, inf, "")
                .map_err(llvm_err)?
                .into()
        }
        "degrees" => {
            lw.b.build_float_mul(x, ft.const_float(180.0 / std::f64::consts::PI), "")
                .map_err(llvm_err)?
                .into()
        }
        "radians" => {
            lw.b.build_float_mul(x, ft.const_float(std::f64::consts::PI / 180.0), "")
                .map_err(llvm_err)?
                .into()
        }
        "gamma" => lw.float_unary("tgamma", x)?.into(),
        "pow" | "atan2" | "hypot" | "copysign" | "fmod" => {
            let y = a[1].into_float_value();
            lw.float_binary(&name, x, y)?.into()
        }
        other => lw.float_unary(other, x)?.into(),
    })
}

fn frexp<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let f64t = lw.ctx.f64_type();
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_frexp",
        f64t.fn_type(&[f64t.into(), ptr.into()], false),
    );
    let e = lw.alloca_in_entry(i64t.into(), "frexp_exp")?;
    let m = lw.call_value(f, &[a[0].into(), e.into()])?;
    let e = lw.b.build_load(i64t, e, "").map_err(llvm_err)?;
    lw.make_struct(sig.ret, &[m, e])
}

fn ldexp<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let f64t = lw.ctx.f64_type();
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_ldexp",
        f64t.fn_type(&[f64t.into(), i64t.into()], false),
    );
    lw.call_value(f, &[a[0].into(), a[1].into()])
}

fn gcd<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_gcd",
        i64t.fn_type(&[i64t.into(), i64t.into()], false),
    );
    lw.call_value(f, &[a[0].into(), a[1].into()])
}
