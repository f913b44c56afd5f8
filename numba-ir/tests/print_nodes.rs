//! The printed form of IR nodes the interpreter does not emit itself (later rewrites do),
//! against the formats Numba 0.68 prints (numba-facts §2.1).

use numba_bytecode::Constant;
use numba_ir::{Expr, FunctionIR, Loc, RaiseArg, Stmt};

fn ir() -> (FunctionIR, [numba_ir::VarId; 4]) {
    let mut ir = FunctionIR {
        filename: "/tmp/f8.py".into(),
        ..FunctionIR::default()
    };
    let at = Loc { line: 3 };
    let vars = [
        ir.add_var("a", at),
        ir.add_var("x", at),
        ir.add_var("n", at),
        ir.add_var("$const32.5.1", at),
    ];
    (ir, vars)
}

#[test]
fn statements_print_as_numba() {
    let (ir, [a, x, n, c]) = ir();
    let cases = [
        (
            Stmt::StaticSetItem {
                target: a,
                index: Constant::Int(0),
                index_var: c,
                value: x,
            },
            "a[0] = x",
        ),
        (
            Stmt::DynamicRaise {
                exc_class: Some("<class 'ValueError'>".into()),
                args: vec![
                    RaiseArg::Const(Constant::Str("n too big".into())),
                    RaiseArg::Var(n),
                ],
            },
            "<dynamic> raise <class 'ValueError'>('n too big', Var(n, f8.py:3))",
        ),
        (
            Stmt::StaticRaise {
                exc_class: Some("<class 'ValueError'>".into()),
                args: Some(vec![Constant::Str("too big".into()), Constant::Int(3)]),
            },
            "<static> raise <class 'ValueError'>('too big', 3)",
        ),
        (
            Stmt::StaticTryRaise {
                exc_class: Some("<class 'ValueError'>".into()),
                args: None,
            },
            "static_try_raise <class 'ValueError'>",
        ),
        (
            Stmt::Print {
                args: vec![a, x],
                vararg: None,
            },
            "print(a, x)",
        ),
        (Stmt::PopBlock, "pop_block"),
        (
            Stmt::DelAttr {
                target: a,
                attr: "b".into(),
            },
            "del (a).b",
        ),
    ];
    for (stmt, want) in cases {
        assert_eq!(ir.stmt_to_string(&stmt), want);
    }
}

#[test]
fn expressions_print_as_numba() {
    let (ir, [a, x, _, _]) = ir();
    assert_eq!(ir.expr_to_string(&Expr::Null), "null()");
    assert_eq!(ir.expr_to_string(&Expr::Undef), "undef()");
    assert_eq!(
        ir.expr_to_string(&Expr::TypedGetItem {
            value: a,
            dtype: "float64".into(),
            index: x,
        }),
        "typed_getitem(value=a, dtype=float64, index=x)"
    );
    assert_eq!(
        ir.expr_to_string(&Expr::Phi {
            incoming: vec![(None, 0), (Some(x), 8)],
        }),
        "phi(incoming_values=[Undefined, Var(x, f8.py:3)], incoming_blocks=[0, 8])"
    );
}
