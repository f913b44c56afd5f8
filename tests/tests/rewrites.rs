//! Rewrites end to end, with no Python interpreter: the `REWRITING` traces of numba-rs's
//! built-in rewrites (snapshotted: Numba's `Block.dump` layout, the `arrayexpr` node as
//! Numba prints it), and a rewrite defined here, outside numba-rewrite, registered on a
//! target through the public API, changing both the IR and what the program computes.

use std::collections::HashMap;

use numba_bytecode::Constant;
use numba_dispatch::{compile_function, CompileOptions, Target};
use numba_ir::{
    BinOp, Block, CallForm, Expr, FunctionIR, Global, GlobalKind, GlobalResolver, Inst, Label, Stmt,
};
use numba_lower::{ExcInfo, STATUS_OK};
use numba_rewrite::{Phase, Rewrite, RewriteCx};
use numba_typeinfer::types::{array, tuple_of, Layout, FLOAT64, INT64};
use numba_typeinfer::{TypeId, TypingResult};

fn code(name: &str) -> numba_bytecode::CodeObject {
    let path = format!(
        "{}/fixtures/blobs/rewrites.{name}.marshal",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    numba_bytecode::marshal::read_code(&bytes).expect("a CPython 3.11 code object")
}

fn globals() -> HashMap<String, Global> {
    let mut g = HashMap::new();
    for (name, kind, repr) in [
        ("np", GlobalKind::Module("numpy".into()), "<module 'numpy'>"),
        ("math", GlobalKind::Module("math".into()), "<module 'math'>"),
        (
            "ValueError",
            GlobalKind::ExceptionClass("ValueError".into()),
            "<class 'ValueError'>",
        ),
        (
            "KeyError",
            GlobalKind::ExceptionClass("KeyError".into()),
            "<class 'KeyError'>",
        ),
        (
            "print",
            GlobalKind::Builtin("print".into()),
            "<built-in function print>",
        ),
        (
            "fast_rsqrt",
            GlobalKind::Opaque {
                type_name: "function".into(),
            },
            "<function fast_rsqrt>",
        ),
    ] {
        g.insert(
            name.to_string(),
            Global {
                kind,
                repr: repr.into(),
            },
        );
    }
    g
}

fn compile(target: &Target, name: &str, args: &[TypeId]) -> numba_lower::CompiledFunction {
    let options = CompileOptions {
        rewrite_trace: true,
        ..CompileOptions::default()
    };
    let g = globals();
    compile_function(
        code(name),
        &g as &dyn GlobalResolver,
        args,
        &options,
        target,
    )
    .unwrap_or_else(|e| panic!("compile {name}: {e}"))
}

fn trace(name: &str, args: &[TypeId]) -> String {
    compile(&Target::default(), name, args).rewrite_trace
}

fn f64_array() -> TypeId {
    array(FLOAT64, 1, Layout::C)
}

#[test]
fn array_expression_traces() {
    let a = f64_array();
    insta::assert_snapshot!("rewrite_axpy", trace("axpy", &[FLOAT64, a, a]));
    insta::assert_snapshot!("rewrite_chain", trace("chain", &[FLOAT64, a, a]));
    insta::assert_snapshot!("rewrite_inplace", trace("inplace", &[a, FLOAT64, a, a]));
}

#[test]
fn builtin_untyped_rewrite_traces() {
    insta::assert_snapshot!("rewrite_const_raise", trace("const_raise", &[INT64]));
    insta::assert_snapshot!("rewrite_dynamic_raise", trace("dynamic_raise", &[INT64]));
    insta::assert_snapshot!(
        "rewrite_static_items",
        trace("static_items", &[tuple_of(&[INT64, FLOAT64, INT64])])
    );
    insta::assert_snapshot!("rewrite_print", trace("show", &[INT64]));
    insta::assert_snapshot!("rewrite_static_pow", trace("cube", &[FLOAT64]));
}

/// A user's rewrite (untyped phase): `fast_rsqrt(x)`, a Python function numba-rs cannot
/// compile, becomes `1.0 / sqrt(x)` with `math.sqrt`, so functions calling it compile.
#[derive(Default)]
struct InlineFastRsqrt {
    label: Label,
    at: Vec<usize>,
}

impl InlineFastRsqrt {
    fn is_global(ir: &FunctionIR, inst: &Inst) -> bool {
        matches!(inst.stmt, Stmt::Assign { value, .. }
            if matches!(ir.expr(value), Expr::Global { name, .. } if name == "fast_rsqrt"))
    }

    fn is_call(ir: &FunctionIR, inst: &Inst) -> bool {
        let Stmt::Assign { value, .. } = inst.stmt else {
            return false;
        };
        let Expr::Call { func, args, .. } = ir.expr(value) else {
            return false;
        };
        args.len() == 1
            && ir.blocks.values().flat_map(|b| &b.body).any(|i| {
                matches!(i.stmt, Stmt::Assign { target, value }
                    if target == *func
                        && matches!(ir.expr(value), Expr::Global { name, .. } if name == "fast_rsqrt"))
            })
    }
}

impl Rewrite for InlineFastRsqrt {
    fn name(&self) -> &str {
        "InlineFastRsqrt"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, _: Option<&TypingResult>) -> bool {
        self.label = label;
        self.at = ir.blocks[&label]
            .body
            .iter()
            .enumerate()
            .filter(|(_, i)| Self::is_call(ir, i))
            .map(|(n, _)| n)
            .collect();
        !self.at.is_empty()
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        let old = cx.ir.blocks[&self.label].clone();
        let mut block = Block::default();
        for (n, inst) in old.body.into_iter().enumerate() {
            // The Python function itself is no longer needed (nor typeable).
            if Self::is_global(cx.ir, &inst) {
                continue;
            }
            let (Stmt::Assign { target, value }, true) = (&inst.stmt, self.at.contains(&n)) else {
                block.body.push(inst);
                continue;
            };
            let Expr::Call { args, .. } = cx.ir.expr(*value).clone() else {
                continue;
            };
            let loc = inst.loc;
            let sqrt = cx.new_var("$sqrt", loc, None);
            let root = cx.new_var("$root", loc, None);
            let one = cx.new_var("$one", loc, None);
            let exprs = [
                (
                    sqrt,
                    Expr::Global {
                        name: "sqrt".into(),
                        value: Global {
                            kind: GlobalKind::ModuleFunction {
                                module: "math".into(),
                                name: "sqrt".into(),
                            },
                            repr: "<built-in function sqrt>".into(),
                        },
                    },
                ),
                (
                    root,
                    Expr::Call {
                        func: sqrt,
                        args: args.clone(),
                        kws: vec![],
                        vararg: None,
                        varkwarg: None,
                        form: CallForm::Plain,
                    },
                ),
                (one, Expr::Const(Constant::Float(1.0))),
                (
                    *target,
                    Expr::BinOp {
                        op: BinOp::TrueDiv,
                        lhs: one,
                        rhs: root,
                    },
                ),
            ];
            for (t, e) in exprs {
                let value = cx.new_expr(e, None);
                block.body.push(Inst {
                    stmt: Stmt::Assign { target: t, value },
                    loc,
                });
            }
        }
        self.at.clear();
        block
    }
}

fn call_f64(c: &numba_lower::CompiledFunction, x: f64) -> f64 {
    let slots = [x.to_bits()];
    let mut ret = 0u64;
    let mut exc: *const ExcInfo = std::ptr::null();
    // SAFETY: the entry was generated for one float64 argument and a float64 result.
    let status = unsafe { (c.entry)(&mut ret, &mut exc, slots.as_ptr()) };
    assert_eq!(status, STATUS_OK);
    f64::from_bits(ret)
}

#[test]
fn a_users_rewrite_changes_the_ir_and_the_result() {
    // Without the rewrite the call cannot be typed.
    let g = globals();
    let err = compile_function(
        code("use_rsqrt"),
        &g as &dyn GlobalResolver,
        &[FLOAT64],
        &CompileOptions::default(),
        &Target::default(),
    )
    .expect_err("fast_rsqrt is an opaque Python function");
    assert!(err.to_string().contains("fast_rsqrt"), "{err}");

    let mut target = Target::default();
    target
        .rewrites
        .register(Phase::BeforeInference, || Box::<InlineFastRsqrt>::default());
    let c = compile(&target, "use_rsqrt", &[FLOAT64]);
    insta::assert_snapshot!("rewrite_user_fast_rsqrt", c.rewrite_trace);
    // CPython: fast_rsqrt(4.0) * 2.0 == 1.0, fast_rsqrt(0.25) * 2.0 == 4.0.
    assert_eq!(call_f64(&c, 4.0), 1.0);
    assert_eq!(call_f64(&c, 0.25), 4.0);
}
