//! The verifier, the IR utilities and the pass manager on real fixture IR and on IR built by
//! hand through the public API.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use numba_bytecode::{marshal, CodeObject, Constant};
use numba_ir::passes::{FunctionPass, PassError, PassManager};
use numba_ir::utils::{
    copy_propagate, dead_code_elimination, inline_closure_call, inline_function_call, merge_blocks,
    CopyPropagation, DeadCodeElimination, DefUse, MergeBlocks,
};
use numba_ir::verify::verify;
use numba_ir::{compile_to_ir, Block, Expr, FunctionIR, Global, Inst, Loc, Stmt};

fn blobs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/blobs")
}

fn code(name: &str) -> CodeObject {
    let bytes = fs::read(blobs().join(format!("{name}.marshal"))).unwrap();
    marshal::read_code(&bytes).unwrap()
}

fn ir_of(name: &str) -> FunctionIR {
    compile_to_ir(code(name), &HashMap::<String, Global>::new()).unwrap()
}

/// Every fixture we can build IR for verifies, with and without dels.
#[test]
fn every_fixture_verifies() {
    let mut checked = 0;
    let mut paths: Vec<PathBuf> = fs::read_dir(blobs())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "marshal"))
        .collect();
    paths.sort();
    for p in paths {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let Ok(mut ir) = compile_to_ir(code(&name), &HashMap::<String, Global>::new()) else {
            continue;
        };
        if let Err(errors) = verify(&ir) {
            panic!("{name}: {errors:?}\n{}", ir.dump());
        }
        numba_ir::postproc::insert_dels(&mut ir);
        if let Err(errors) = verify(&ir) {
            panic!("{name} with dels: {errors:?}\n{}", ir.dump());
        }
        checked += 1;
    }
    assert!(checked >= 90, "{checked}");
}

#[test]
fn verifier_reports_broken_ir() {
    let mut ir = ir_of("scalars.add");
    // A jump to nowhere, and a temporary read before it is written.
    let first = *ir.blocks.keys().next().unwrap();
    let loc = Loc { line: 1 };
    let ghost = ir.add_var("$ghost", loc);
    let sink = ir.add_var("$sink", loc);
    let e = ir.add_expr(Expr::Var(ghost));
    let body = &mut ir.blocks.get_mut(&first).unwrap().body;
    body.insert(
        0,
        Inst {
            stmt: Stmt::Assign {
                target: sink,
                value: e,
            },
            loc,
        },
    );
    body.push(Inst {
        stmt: Stmt::Jump { target: 999 },
        loc,
    });
    let errors = verify(&ir).unwrap_err();
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(|t| t.contains("terminator before the end")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|t| t.contains("missing block 999")),
        "{text:?}"
    );
}

#[test]
fn use_before_definition_is_caught() {
    let mut ir = ir_of("scalars.add");
    let first = *ir.blocks.keys().next().unwrap();
    let loc = Loc { line: 1 };
    let ghost = ir.add_var("$ghost", loc);
    let sink = ir.add_var("$sink", loc);
    let e = ir.add_expr(Expr::Var(ghost));
    ir.blocks.get_mut(&first).unwrap().body.insert(
        0,
        Inst {
            stmt: Stmt::Assign {
                target: sink,
                value: e,
            },
            loc,
        },
    );
    let errors = verify(&ir).unwrap_err();
    assert!(errors[0]
        .message
        .contains("'$ghost' is used before it is defined"));
}

#[test]
fn copy_propagation_and_dce_shrink_doloops() {
    let mut ir = ir_of("scalars.doloops");
    let before: usize = ir.blocks.values().map(|b| b.body.len()).sum();
    assert!(copy_propagate(&mut ir));
    assert!(dead_code_elimination(&mut ir));
    verify(&ir).unwrap();
    let after: usize = ir.blocks.values().map(|b| b.body.len()).sum();
    assert!(after < before, "{before} -> {after}\n{}", ir.dump());
    // `i = $phi40.1` is a copy nobody reads (the loop variable is unused): it goes.
    let dump = ir.dump();
    assert!(!dump.contains("    i = $phi40.1"), "{dump}");
    // Calls stay even when unused; the loop structure is intact.
    assert!(dump.contains("iternext(value="), "{dump}");
}

#[test]
fn merge_blocks_joins_straight_line_code() {
    let mut ir = ir_of("frontend.try_finally");
    let blocks_before = ir.blocks.len();
    let changed = merge_blocks(&mut ir);
    verify(&ir).unwrap();
    assert!(changed);
    assert!(ir.blocks.len() < blocks_before);
    // Every remaining jump target has more than one predecessor or is a branch target.
    let du = DefUse::compute(&ir);
    assert!(!du.defs.is_empty());
}

#[test]
fn inlining_a_closure_replaces_the_call() {
    let mut outer = ir_of("frontend.closure_read");
    let inner_code = code("frontend.closure_read")
        .consts
        .iter()
        .find_map(|c| match c {
            Constant::Code(c) if c.name == "inner" => Some((**c).clone()),
            _ => None,
        })
        .unwrap();
    let inner = compile_to_ir(inner_code, &HashMap::<String, Global>::new()).unwrap();
    // The call `$26call.7 = call inner($const20.6.2)`.
    let (label, index) = first_call(&outer);
    inline_closure_call(&mut outer, label, index, &inner).unwrap();
    verify(&outer).unwrap_or_else(|e| panic!("{e:?}\n{}", outer.dump()));
    assert!(!outer.dump().contains("call inner("), "{}", outer.dump());
    // After copy propagation the callee's `x + y` reads the caller's `x` (the closure
    // cell) and the call's argument directly.
    copy_propagate(&mut outer);
    dead_code_elimination(&mut outer);
    verify(&outer).unwrap();
    let dump = outer.dump();
    assert!(dump.contains(" = x + $const20.6.2 "), "{dump}");
    // The function returns what the inlined body returned; the merged blocks verify.
    assert!(
        dump.contains("= cast(value=inner.$14return_value.3)"),
        "{dump}"
    );
    merge_blocks(&mut outer);
    verify(&outer).unwrap();
    assert_eq!(outer.blocks.len(), 1, "{}", outer.dump());
}

/// The first `call` statement of `ir`: its block and index.
fn first_call(ir: &FunctionIR) -> (u32, usize) {
    ir.blocks
        .iter()
        .find_map(|(&l, b)| {
            b.body
                .iter()
                .position(|i| {
                    matches!(i.stmt, Stmt::Assign { value, .. }
                    if matches!(ir.expr(value), Expr::Call { .. }))
                })
                .map(|i| (l, i))
        })
        .expect("a call")
}

#[test]
fn inlining_a_function_of_its_own_binds_constant_defaults() {
    // The first call of fib's IR (Numba's `bool(n < 2)` for the branch), inlined with
    // `add(a, b=10)`'s IR as a jitted `inline='always'` callee is: `a` is the argument,
    // `b` the constant default.
    let mut caller = ir_of("scalars.fib");
    let callee = ir_of("scalars.add");
    let (label, index) = first_call(&caller);
    inline_function_call(&mut caller, label, index, &callee, &[Constant::Int(10)]).unwrap();
    verify(&caller).unwrap_or_else(|e| panic!("{e:?}\n{}", caller.dump()));
    let dump = caller.dump();
    assert!(dump.contains("$default_b = const(int, 10)"), "{dump}");
    // The callee's variables take Numba's inlined names: `add$<uid>.<var>` made
    // name-safe (`add_v<uid>_a`).
    assert!(dump.contains("add_v"), "{dump}");
    assert!(
        dump.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("add_v") && l.contains("_a = $8compare_op.2")
        }),
        "{dump}"
    );
    // The two calls of fib are still there.
    assert_eq!(dump.matches("call $").count(), 2, "{dump}");
    // Without a default the call does not bind: Python's TypeError as a TypingError.
    let mut caller = ir_of("scalars.fib");
    let (label, index) = first_call(&caller);
    let err = inline_function_call(&mut caller, label, index, &callee, &[]).unwrap_err();
    assert!(
        err.to_string()
            .contains("add() missing 1 required positional argument: 'b'"),
        "{err}"
    );
}

/// The example a Rust user would copy: build a function by hand, run a pass of their own
/// and the built-in ones under the pass manager, and print it.
#[test]
fn hand_built_ir_with_a_user_pass() {
    // def f(a): t = a * 2; u = t; return u
    let mut ir = FunctionIR {
        name: "f".into(),
        qualname: "f".into(),
        filename: "hand.py".into(),
        firstlineno: 1,
        arg_names: vec!["a".into()],
        ..FunctionIR::default()
    };
    let loc = Loc { line: 2 };
    let a = ir.add_var("a", loc);
    let two = ir.add_var("$two", loc);
    let t = ir.add_var("t", loc);
    let u = ir.add_var("u", loc);
    let assign = |ir: &mut FunctionIR, target, e| {
        let value = ir.add_expr(e);
        Inst {
            stmt: Stmt::Assign { target, value },
            loc,
        }
    };
    let body = vec![
        assign(
            &mut ir,
            a,
            Expr::Arg {
                index: 0,
                name: "a".into(),
            },
        ),
        assign(&mut ir, two, Expr::Const(Constant::Int(2))),
        assign(
            &mut ir,
            t,
            Expr::BinOp {
                op: numba_ir::BinOp::Mul,
                lhs: a,
                rhs: two,
            },
        ),
        assign(&mut ir, u, Expr::Var(t)),
        Inst {
            stmt: Stmt::Return { value: u },
            loc,
        },
    ];
    ir.blocks.insert(0, Block { body });
    verify(&ir).unwrap();

    /// A user pass: strength-reduce `x * 2` to `x + x`.
    struct MulByTwo;
    impl FunctionPass for MulByTwo {
        fn name(&self) -> &str {
            "mul_by_two"
        }
        fn run(&mut self, ir: &mut FunctionIR) -> Result<bool, PassError> {
            let mut changed = false;
            let twos: Vec<_> = ir
                .blocks
                .values()
                .flat_map(|b| &b.body)
                .filter_map(|i| match i.stmt {
                    Stmt::Assign { target, value }
                        if ir.expr(value) == &Expr::Const(Constant::Int(2)) =>
                    {
                        Some(target)
                    }
                    _ => None,
                })
                .collect();
            for e in &mut ir.exprs {
                if let Expr::BinOp {
                    op: op @ numba_ir::BinOp::Mul,
                    lhs,
                    rhs,
                } = e
                {
                    if twos.contains(rhs) {
                        *op = numba_ir::BinOp::Add;
                        *rhs = *lhs;
                        changed = true;
                    }
                }
            }
            Ok(changed)
        }
    }

    let mut pm = PassManager::new();
    pm.verify_between(true)
        .add(MulByTwo)
        .add(CopyPropagation)
        .add(DeadCodeElimination)
        .add(MergeBlocks);
    let report = pm.run(&mut ir).unwrap();
    assert_eq!(
        pm.names(),
        [
            "mul_by_two",
            "copy_propagation",
            "dead_code_elimination",
            "merge_blocks"
        ]
    );
    assert!(report.entries[0].changed && report.entries[1].changed);
    assert!(report.timings().contains("mul_by_two"));
    assert_eq!(
        ir.dump(),
        "label 0:\n    a = arg(0, name=a)                       ['a']\n    t = a + a                                ['a', 'a', 't']\n    return t                                 ['t']\n\n"
    );
}

#[test]
fn pass_manager_rejects_a_pass_that_breaks_the_ir() {
    struct Breaker;
    impl FunctionPass for Breaker {
        fn name(&self) -> &str {
            "breaker"
        }
        fn mutates_cfg(&self) -> bool {
            true
        }
        fn run(&mut self, ir: &mut FunctionIR) -> Result<bool, PassError> {
            if let Some(b) = ir.blocks.values_mut().next() {
                b.body.pop();
            }
            Ok(true)
        }
    }
    let mut ir = ir_of("scalars.add");
    let mut pm = PassManager::new();
    pm.verify_between(true).add(Breaker);
    match pm.run(&mut ir) {
        Err(PassError::Verify { pass, errors }) => {
            assert_eq!(pass, "breaker");
            assert!(errors[0].message.contains("does not end in a terminator"));
        }
        other => panic!("{other:?}"),
    }
}
