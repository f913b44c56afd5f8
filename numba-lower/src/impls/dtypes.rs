//! dtype objects (typed in numba-typeinfer's `dtypes`): `np.dtype(...)` carries no data,
//! and `np.issubdtype` and dtype comparisons are typed as their constant answers, which
//! is all their code is.

use inkwell::values::BasicValueEnum;
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::R;

/// The constant a literal-typed result stands for.
fn answer<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    match sig.ret.get() {
        Type::BooleanLiteral(b) => Ok(lw.ctx.bool_type().const_int(u64::from(b), false).into()),
        other => Err(lw.unsupported(format!("no constant for {other}"))),
    }
}

fn ghost<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _: &Signature,
    _: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    Ok(lw.ghost())
}

pub(crate) fn register(r: &mut Registry) {
    let f = |k: &str| ImplKey::Function(k.into());
    r.register(f("numpy.dtype"), Args::Variadic(TypePat::Any), ghost);
    r.register(f("numpy.issubdtype"), Args::Variadic(TypePat::Any), answer);
    let dtype = TypePat::Pred(|t| matches!(t.get(), Type::DType(_)));
    for op in [BinOp::Eq, BinOp::Ne] {
        r.register(ImplKey::BinOp(op), Args::AnyArg(dtype), answer);
    }
}
