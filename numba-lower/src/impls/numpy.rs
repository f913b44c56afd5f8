//! NumPy's fallbacks: every key numba-typeinfer's `numpy` templates type gets an explicit
//! "not lowered yet" entry here, registered first so that the implementations registered
//! after it win; arguments no implementation takes then raise an `UnsupportedError`
//! naming the operation rather than failing somewhere unexpected.

use numba_ir::{BinOp, UnaryOp};
use numba_typeinfer::numpy::ARRAY_METHODS;
use numba_typeinfer::types::*;
use numba_typeinfer::{BaseContext, ImplKey};

use crate::registry::{Args, Registry, TypePat};

const WHY: &str = "this NumPy operation is not lowered yet";

fn is_array_like(t: TypeId) -> bool {
    t.is_array() || matches!(t.get(), Type::ArrayIter(a) if a.is_array())
}

pub(crate) fn register(r: &mut Registry) {
    let typing = BaseContext::builtin();
    for k in typing.function_keys().filter(|k| k.starts_with("numpy.")) {
        r.not_yet(ImplKey::Function(k.to_string()), WHY);
    }
    for m in ARRAY_METHODS {
        r.not_yet(ImplKey::Function(format!("array.{m}")), WHY);
    }
    let arrays = || Args::AnyArg(TypePat::Pred(is_array_like));
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::TrueDiv,
        BinOp::FloorDiv,
        BinOp::Mod,
        BinOp::Pow,
        BinOp::LShift,
        BinOp::RShift,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::MatMul,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::In,
    ] {
        r.not_yet_for(ImplKey::BinOp(op), arrays(), WHY);
    }
    for op in [UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Invert, UnaryOp::Not] {
        r.not_yet_for(ImplKey::Unary(op), arrays(), WHY);
    }
    for k in [
        ImplKey::GetIter,
        ImplKey::IterNext,
        ImplKey::GetItem,
        ImplKey::SetItem,
        ImplKey::Function("len".into()),
        ImplKey::Function("min".into()),
        ImplKey::Function("max".into()),
        ImplKey::Function("enumerate".into()),
        ImplKey::Function("zip".into()),
    ] {
        r.not_yet_for(k, arrays(), WHY);
    }
    for attr in [
        "shape", "strides", "ndim", "size", "itemsize", "nbytes", "dtype", "T", "real",
    ] {
        r.not_yet_for(ImplKey::GetAttr(attr.into()), arrays(), WHY);
    }
}
