//! A Rust user teaches the typing context new functions (`fastops.add` and
//! `fastops.mul` of a module numba-rs knows nothing of) and infers a function calling it:
//! the example to copy for extending numba-rs's typing.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use numba_ir::{compile_to_ir, Global, GlobalKind};
use numba_typeinfer::context::{BaseContext, CallOutcome, CalleeResolver, FunctionTemplate};
use numba_typeinfer::conv::unify;
use numba_typeinfer::signature::{ImplKey, Signature};
use numba_typeinfer::types::{TypeId, FLOAT64, INT64};
use numba_typeinfer::{infer, TypingError};

struct NoCallees;

impl CalleeResolver for NoCallees {
    fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
        Err("no callees".into())
    }
}

/// `fastops.<name>(a, b)` on two numbers: both converted to their unified type.
struct BinaryNumeric(&'static str);

impl FunctionTemplate for BinaryNumeric {
    fn generic(&self, args: &[TypeId]) -> Option<Signature> {
        let [a, b] = args else {
            return None;
        };
        if !a.is_number() || !b.is_number() {
            return None;
        }
        let t = unify(*a, *b)?;
        Some(Signature {
            ret: t,
            args: vec![t, t],
            key: ImplKey::Function(format!("fastops.{}", self.0)),
        })
    }

    fn describe(&self) -> String {
        "(number, number) -> number".into()
    }
}

fn ir() -> numba_ir::FunctionIR {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/blobs/frontend.operator_module_call.marshal");
    let code = numba_bytecode::marshal::read_code(&fs::read(path).unwrap()).unwrap();
    let mut globals: HashMap<String, Global> = HashMap::new();
    globals.insert(
        // The fixture calls `operator.add`; here `operator` is bound to a module numba-rs
        // knows nothing of, so only the user's templates can type it.
        "operator".into(),
        Global {
            kind: GlobalKind::Module("fastops".into()),
            repr: "<module 'fastops'>".into(),
        },
    );
    compile_to_ir(code, &globals).unwrap()
}

#[test]
fn a_user_template_types_a_new_function() {
    // def operator_module_call(a, b): return operator.add(a, b) * operator.mul(a, b)
    let ir = ir();
    let plain = BaseContext::default();
    let err = infer(&ir, &[INT64, FLOAT64], &plain, &NoCallees, None).unwrap_err();
    assert!(matches!(err, TypingError::Typing { .. }), "{err}");

    let mut ctx = BaseContext::default();
    ctx.register("fastops.add", Box::new(BinaryNumeric("add")));
    ctx.register("fastops.mul", Box::new(BinaryNumeric("mul")));
    let typing = infer(&ir, &[INT64, FLOAT64], &ctx, &NoCallees, None).unwrap();
    assert_eq!(typing.return_type, FLOAT64);
    let keys: Vec<String> = typing
        .calltypes
        .values()
        .filter_map(|s| match &s.key {
            ImplKey::Function(k) => Some(k.clone()),
            _ => None,
        })
        .collect();
    assert!(keys.contains(&"fastops.add".to_string()), "{keys:?}");
    assert!(keys.contains(&"fastops.mul".to_string()), "{keys:?}");

    // Two ints stay int64 all the way through.
    let typing = infer(&ir, &[INT64, INT64], &ctx, &NoCallees, None).unwrap();
    assert_eq!(typing.return_type, INT64);
}
