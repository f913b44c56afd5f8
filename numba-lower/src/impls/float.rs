//! Float operators with Python's semantics (floor division and modulo take the divisor's
//! sign; division by zero raises under the Python error model), LLVM intrinsics and libm
//! helpers shared by the math implementations, and fast-math flags.

use inkwell::intrinsics::Intrinsic;
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum, FloatType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FloatValue, FunctionValue, InstructionOpcode,
};
use inkwell::FloatPredicate;
use numba_ir::{BinOp, UnaryOp};
use numba_typeinfer::{ImplKey, Signature};

use super::{binop_of, unary_of};
use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, ErrorModel, LowerError, R};

pub(crate) fn register(r: &mut Registry) {
    use BinOp::*;
    for op in [
        Add, Sub, Mul, TrueDiv, FloorDiv, Mod, Lt, Le, Gt, Ge, Eq, Ne,
    ] {
        r.register(
            ImplKey::BinOp(op),
            Args::Exact(vec![TypePat::Float, TypePat::Float]),
            float_binop,
        );
    }
    for rhs in [TypePat::Float, TypePat::Int] {
        r.register(
            ImplKey::BinOp(Pow),
            Args::Exact(vec![TypePat::Float, rhs]),
            float_pow,
        );
    }
    for op in [UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Not] {
        r.register(
            ImplKey::Unary(op),
            Args::Exact(vec![TypePat::Float]),
            float_unary_op,
        );
    }
}

/// Set fast-math `flags` on every floating-point instruction of `f`.
pub(crate) fn apply_fastmath(f: FunctionValue<'_>, flags: u32) {
    let flags = inkwell::values::FastMathFlags::from_bits_truncate(flags);
    for bb in f.get_basic_block_iter() {
        let mut inst = bb.get_first_instruction();
        while let Some(i) = inst {
            let fp = matches!(
                i.get_opcode(),
                InstructionOpcode::FAdd
                    | InstructionOpcode::FSub
                    | InstructionOpcode::FMul
                    | InstructionOpcode::FDiv
                    | InstructionOpcode::FRem
                    | InstructionOpcode::FNeg
                    | InstructionOpcode::FCmp
            ) || (i.get_opcode() == InstructionOpcode::Call
                && i.can_use_fast_math_flags());
            if fp && i.can_use_fast_math_flags() {
                // Flags only fail to apply to instructions that cannot carry them.
                let _ = i.set_fast_math_flags(flags);
            }
            inst = i.get_next_instruction();
        }
    }
}

impl<'ctx> FnLower<'ctx, '_> {
    /// The declaration of an overloaded LLVM intrinsic.
    pub fn intrinsic(&self, name: &str, tys: &[BasicTypeEnum<'ctx>]) -> R<FunctionValue<'ctx>> {
        Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, tys))
            .ok_or_else(|| LowerError::Llvm(format!("intrinsic {name} not found")))
    }

    /// A libm function of `nargs` arguments of type `ft` (`sin`, `sinf`).
    pub fn libm(&self, name: &str, nargs: usize, ft: FloatType<'ctx>) -> FunctionValue<'ctx> {
        let name = if ft == self.ctx.f32_type() {
            format!("{name}f")
        } else {
            name.to_string()
        };
        if let Some(f) = self.module.get_function(&name) {
            return f;
        }
        let params: Vec<BasicMetadataTypeEnum> = vec![ft.into(); nargs];
        self.module
            .add_function(&name, ft.fn_type(&params, false), Some(Linkage::External))
    }

    /// Call a float function.
    pub fn call_float(
        &self,
        f: FunctionValue<'ctx>,
        args: &[FloatValue<'ctx>],
    ) -> R<FloatValue<'ctx>> {
        let a: Vec<BasicMetadataValueEnum> = args.iter().map(|&x| x.into()).collect();
        let r = self.b.build_call(f, &a, "").map_err(llvm_err)?;
        r.try_as_basic_value()
            .basic()
            .map(|v| v.into_float_value())
            .ok_or_else(|| LowerError::Llvm("call returned void".into()))
    }

    /// A one-argument float function: an LLVM intrinsic where one exists, else libm.
    pub fn float_unary(&self, name: &str, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        const INTRINSICS: &[&str] = &[
            "sqrt",
            "exp",
            "log",
            "sin",
            "cos",
            "floor",
            "ceil",
            "trunc",
            "fabs",
            "log10",
            "log2",
            "roundeven",
        ];
        let f = if INTRINSICS.contains(&name) {
            self.intrinsic(&format!("llvm.{name}"), &[x.get_type().into()])?
        } else {
            self.libm(name, 1, x.get_type())
        };
        self.call_float(f, &[x])
    }

    /// A two-argument float function (`pow`, `atan2`, ...).
    pub fn float_binary(
        &self,
        name: &str,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> R<FloatValue<'ctx>> {
        let f = if name == "pow" || name == "copysign" {
            self.intrinsic(&format!("llvm.{name}"), &[x.get_type().into()])?
        } else {
            self.libm(name, 2, x.get_type())
        };
        self.call_float(f, &[x, y])
    }
}

fn float_unary_op<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let v = a[0].into_float_value();
    Ok(match unary_of(&sig.key) {
        UnaryOp::Neg => lw.b.build_float_neg(v, "").map_err(llvm_err)?.into(),
        UnaryOp::Not => {
            let c = lw.truth(v.into(), sig.args[0])?;
            lw.b.build_not(c, "").map_err(llvm_err)?.into()
        }
        _ => v.into(),
    })
}

fn float_pow<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let x = a[0].into_float_value();
    let e = lw.cast(a[1], sig.args[1], sig.args[0])?.into_float_value();
    Ok(lw.float_binary("pow", x, e)?.into())
}

fn float_binop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    args: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = binop_of(&sig.key);
    let (a, bv) = (args[0].into_float_value(), args[1].into_float_value());
    let ft = a.get_type();
    let b = &lw.b;
    let cmp = |p: FloatPredicate| -> R<BasicValueEnum<'ctx>> {
        Ok(b.build_float_compare(p, a, bv, "")
            .map_err(llvm_err)?
            .into())
    };
    Ok(match op {
        BinOp::Add => b.build_float_add(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Sub => b.build_float_sub(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Mul => b.build_float_mul(a, bv, "").map_err(llvm_err)?.into(),
        BinOp::Lt => cmp(FloatPredicate::OLT)?,
        BinOp::Le => cmp(FloatPredicate::OLE)?,
        BinOp::Gt => cmp(FloatPredicate::OGT)?,
        BinOp::Ge => cmp(FloatPredicate::OGE)?,
        BinOp::Eq => cmp(FloatPredicate::OEQ)?,
        BinOp::Ne => cmp(FloatPredicate::UNE)?,
        BinOp::TrueDiv | BinOp::FloorDiv | BinOp::Mod => {
            if lw.error_model() == ErrorModel::Python {
                let zero = b
                    .build_float_compare(FloatPredicate::OEQ, bv, ft.const_zero(), "")
                    .map_err(llvm_err)?;
                let msg = if op == BinOp::Mod {
                    "modulo by zero"
                } else {
                    "division by zero"
                };
                lw.raise_const_if(zero, "ZeroDivisionError", &[msg])?;
            }
            if op == BinOp::TrueDiv {
                return Ok(lw.b.build_float_div(a, bv, "").map_err(llvm_err)?.into());
            }
            float_divmod(lw, op, a, bv)?
        }
        other => {
            return Err(lw.unsupported(format!(
                "operator '{}' on {} is not supported by numba-rs yet",
                other.symbol(),
                sig.args[0]
            )))
        }
    })
}

/// CPython's `float_divmod`: the remainder takes the divisor's sign, the quotient is
/// floored and exact at the boundaries.
fn float_divmod<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: BinOp,
    a: FloatValue<'ctx>,
    bv: FloatValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let ft = a.get_type();
    let b = &lw.b;
    let m = b.build_float_rem(a, bv, "").map_err(llvm_err)?;
    let m_nonzero = b
        .build_float_compare(FloatPredicate::UNE, m, ft.const_zero(), "")
        .map_err(llvm_err)?;
    let m_neg = b
        .build_float_compare(FloatPredicate::OLT, m, ft.const_zero(), "")
        .map_err(llvm_err)?;
    let b_neg = b
        .build_float_compare(FloatPredicate::OLT, bv, ft.const_zero(), "")
        .map_err(llvm_err)?;
    let signs_differ = b.build_xor(m_neg, b_neg, "").map_err(llvm_err)?;
    let fix = b.build_and(m_nonzero, signs_differ, "").map_err(llvm_err)?;
    let m_fixed = b.build_float_add(m, bv, "").map_err(llvm_err)?;
    let m_res = b
        .build_select(fix, m_fixed, m, "")
        .map_err(llvm_err)?
        .into_float_value();
    if op == BinOp::Mod {
        // A zero remainder takes the divisor's sign too.
        let zero_signed = lw.float_binary("copysign", ft.const_zero(), bv)?;
        let m_is_zero =
            lw.b.build_float_compare(FloatPredicate::OEQ, m_res, ft.const_zero(), "")
                .map_err(llvm_err)?;
        return lw
            .b
            .build_select(m_is_zero, zero_signed, m_res, "")
            .map_err(llvm_err);
    }
    let diff = lw.b.build_float_sub(a, m_res, "").map_err(llvm_err)?;
    let div = lw.b.build_float_div(diff, bv, "").map_err(llvm_err)?;
    let floored = lw.float_unary("floor", div)?;
    let b = &lw.b;
    let frac = b.build_float_sub(div, floored, "").map_err(llvm_err)?;
    let round_up = b
        .build_float_compare(FloatPredicate::OGT, frac, ft.const_float(0.5), "")
        .map_err(llvm_err)?;
    let plus1 = b
        .build_float_add(floored, ft.const_float(1.0), "")
        .map_err(llvm_err)?;
    let q = b
        .build_select(round_up, plus1, floored, "")
        .map_err(llvm_err)?
        .into_float_value();
    let div_zero = b
        .build_float_compare(FloatPredicate::OEQ, div, ft.const_zero(), "")
        .map_err(llvm_err)?;
    let quot = b.build_float_div(a, bv, "").map_err(llvm_err)?;
    let signed_zero = lw.float_binary("copysign", ft.const_zero(), quot)?;
    let r =
        lw.b.build_select(div_zero, signed_zero, q, "")
            .map_err(llvm_err)?;
    // A zero divisor (NumPy's error model; Python's raised above): `a / b`, so inf, -inf
    // or nan, as NumPy's `npy_floor_divide`.
    let b_zero =
        lw.b.build_float_compare(FloatPredicate::OEQ, bv, ft.const_zero(), "")
            .map_err(llvm_err)?;
    lw.b.build_select(b_zero, quot.into(), r, "")
        .map_err(llvm_err)
}
