//! Typing and lowering never drift apart: every key the typing templates can produce has a
//! lowering entry (an implementation, or an explicit "not lowered yet" that raises
//! `UnsupportedError` naming it), and every scalar operator signature typing resolves finds
//! an implementation.

use numba_ir::{BinOp, UnaryOp};
use numba_lower::{CpuTarget, Lowering, TargetContext};
use numba_typeinfer::types::*;
use numba_typeinfer::{BaseContext, ImplKey, TypingContext};

const BINOPS: [BinOp; 22] = [
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
    BinOp::Is,
    BinOp::IsNot,
    BinOp::In,
];

fn scalars() -> Vec<TypeId> {
    vec![
        BOOLEAN, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT32, FLOAT64,
        COMPLEX64, COMPLEX128,
    ]
}

#[test]
fn every_typing_key_has_a_lowering_entry() {
    let typing = BaseContext::default();
    let target = CpuTarget::new();
    let reg = target.registry();
    let mut missing = Vec::new();
    // A template may resolve to another key (`operator.add` is the `add` operator): use
    // the keys its signatures carry on sample arguments, or its own key.
    let samples: Vec<Vec<TypeId>> = std::iter::once(vec![])
        .chain(scalars().into_iter().map(|t| vec![t]))
        .chain(scalars().into_iter().map(|t| vec![t, t]))
        .chain(std::iter::once(vec![
            intern(Type::UniTuple(INT64, 2)),
            INT64,
        ]))
        .collect();
    let mut keys: Vec<ImplKey> = Vec::new();
    for k in typing.function_keys() {
        let f = intern(Type::Function(k.to_string()));
        let resolved: Vec<ImplKey> = samples
            .iter()
            .filter_map(|a| typing.resolve_call(f, a).map(|s| s.key))
            .collect();
        if resolved.is_empty() {
            keys.push(ImplKey::Function(k.to_string()));
        } else {
            keys.extend(resolved);
        }
    }
    keys.extend(
        numba_typeinfer::numpy::ARRAY_METHODS
            .iter()
            .map(|m| ImplKey::Function(format!("array.{m}"))),
    );
    keys.extend(
        BINOPS
            .iter()
            .filter(|&&op| op != BinOp::MatMul)
            .map(|&op| ImplKey::BinOp(op)),
    );
    keys.extend([UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Invert, UnaryOp::Not].map(ImplKey::Unary));
    keys.extend([
        ImplKey::GetIter,
        ImplKey::IterNext,
        ImplKey::GetItem,
        ImplKey::StaticGetItem,
        ImplKey::SetItem,
        ImplKey::Dispatcher { id: 1 },
        ImplKey::Exception("ValueError".into()),
        ImplKey::Function("number.conjugate".into()),
        ImplKey::Function("numberclass".into()),
    ]);
    for k in keys {
        if !reg.has_key(&k) {
            missing.push(k.describe());
        }
    }
    assert!(
        missing.is_empty(),
        "typing keys without a lowering entry: {missing:?}"
    );
}

#[test]
fn every_scalar_operator_signature_has_an_implementation() {
    let typing = BaseContext::default();
    let target = CpuTarget::new();
    let reg = target.registry();
    let mut missing = Vec::new();
    for &op in &BINOPS {
        for &l in &scalars() {
            for &r in &scalars() {
                if let Some(sig) = typing.resolve_binop(op, l, r) {
                    if !matches!(reg.find(&sig), Some(Lowering::Impl(_))) {
                        missing.push(format!("{}{sig}", op.operator_name()));
                    }
                }
            }
        }
    }
    for op in [UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Invert, UnaryOp::Not] {
        for &t in &scalars() {
            if let Some(sig) = typing.resolve_unary(op, t) {
                if !matches!(reg.find(&sig), Some(Lowering::Impl(_))) {
                    missing.push(format!("{}{sig}", op.operator_name()));
                }
            }
        }
    }
    // Every scalar builtin and math function on every scalar it accepts; the CUDA
    // intrinsics by the cuda target (the CPU only types them).
    let cuda = numba_lower::cuda::CudaTarget::new();
    for key in typing.function_keys() {
        if key.starts_with("numpy.") || key == "print" {
            continue;
        }
        let reg = if key.starts_with("numba_rs.cuda.") {
            cuda.registry()
        } else {
            reg
        };
        let f = intern(Type::Function(key.to_string()));
        let mut arg_sets: Vec<Vec<TypeId>> = scalars().into_iter().map(|t| vec![t]).collect();
        arg_sets.extend(scalars().into_iter().map(|t| vec![t, t]));
        for args in arg_sets {
            if let Some(sig) = typing.resolve_call(f, &args) {
                if !matches!(reg.find(&sig), Some(Lowering::Impl(_))) {
                    missing.push(format!("{key}{sig}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "typed but not implemented: {missing:#?}"
    );
}

#[test]
fn a_not_lowered_key_is_an_unsupported_error_naming_it() {
    let target = CpuTarget::new();
    let sig = numba_typeinfer::Signature {
        ret: NONE,
        args: vec![INT64],
        key: ImplKey::Function("numpy.dot".into()),
    };
    let err = target.registry().lookup(&sig).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|m| m.contains("numpy.dot") && m.contains("not lowered")),
        "{err:?}"
    );
}
