//! IR of the committed fixture blobs (compiled by CPython 3.11 from tests/fixtures/*.py).

use std::collections::HashMap;

use numba_ir::{compile_to_ir, Global, GlobalKind};

fn blob(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../tests/fixtures/blobs/{name}.marshal",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn globals() -> HashMap<String, Global> {
    let mut g = HashMap::new();
    g.insert(
        "math".to_string(),
        Global {
            kind: GlobalKind::Module("math".into()),
            repr: "<module 'math'>".into(),
        },
    );
    g
}

fn ir_of(name: &str) -> String {
    let code = numba_bytecode::marshal::read_code(&blob(name)).expect("blob reads");
    compile_to_ir(code, &globals()).expect("IR builds").dump()
}

#[test]
fn doloops_matches_numba() {
    let ir = ir_of("scalars.doloops");
    // The shapes Numba 0.68.1 prints on CPython 3.11 (facts §2.1): the user variable takes
    // the constant directly, FOR_ITER becomes iternext/pair_first/pair_second/branch and
    // the loop value crosses into the body through a phi.
    assert!(
        ir.contains("    acc = const(int, 0)                      ['acc']\n"),
        "{ir}"
    );
    assert!(
        ir.contains("$38for_iter.1 = iternext(value=$phi38.0) ['$38for_iter.1', '$phi38.0']"),
        "{ir}"
    );
    assert!(
        ir.contains("    $phi40.1 = $38for_iter.2                 ['$38for_iter.2', '$phi40.1']\n"),
        "{ir}"
    );
    assert!(
        ir.contains("    branch $38for_iter.3, 40, 70             ['$38for_iter.3']\n"),
        "{ir}"
    );
    assert!(ir.contains("    i = $phi40.1 "), "{ir}");
}
