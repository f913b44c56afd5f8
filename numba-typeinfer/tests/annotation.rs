//! `NUMBA_DUMP_ANNOTATION` against Numba 0.68.1's for a function whose typed IR is the same
//! in both (`scalars.add` with two int64 arguments; oracle captured with
//! `NUMBA_DUMP_ANNOTATION=1` from `njit("int64(int64, int64)")(add)`).

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use numba_ir::{compile_to_ir, Global};
use numba_typeinfer::annotate::annotate;
use numba_typeinfer::context::{BaseContext, CallOutcome, CalleeResolver};
use numba_typeinfer::infer;
use numba_typeinfer::types::INT64;

struct NoCallees;

impl CalleeResolver for NoCallees {
    fn resolve_call(
        &self,
        _: u64,
        _: &[numba_typeinfer::types::TypeId],
    ) -> Result<CallOutcome, String> {
        Err("no callees".into())
    }
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

#[test]
fn annotation_of_add_matches_numba() {
    let blob = fs::read(fixtures().join("blobs/scalars.add.marshal")).unwrap();
    let code = numba_bytecode::marshal::read_code(&blob).unwrap();
    let mut ir = compile_to_ir(code, &HashMap::<String, Global>::new()).unwrap();
    let typing = infer(
        &ir,
        &[INT64, INT64],
        &BaseContext::default(),
        &NoCallees,
        None,
    )
    .unwrap();
    numba_ir::postproc::insert_dels(&mut ir);
    let source = fs::read_to_string(fixtures().join("scalars.py")).unwrap();
    let ours = annotate(&ir, &typing, Some(&source));
    let want = fs::read_to_string(fixtures().join("oracle/scalars.add.numba_annotation")).unwrap();
    // The file path is where each side compiled the module from.
    let normalize = |s: &str| {
        s.lines()
            .map(|l| {
                if l.starts_with("# File: ") {
                    "# File: <path>"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(normalize(&ours), normalize(&want));
}

#[test]
fn annotation_without_source_lists_statements() {
    let blob = fs::read(fixtures().join("blobs/scalars.add.marshal")).unwrap();
    let code = numba_bytecode::marshal::read_code(&blob).unwrap();
    let ir = compile_to_ir(code, &HashMap::<String, Global>::new()).unwrap();
    let typing = infer(
        &ir,
        &[INT64, INT64],
        &BaseContext::default(),
        &NoCallees,
        None,
    )
    .unwrap();
    let text = annotate(&ir, &typing, None);
    assert!(text.contains("# Source code unavailable\n"));
    assert!(text.contains("  $binop_add8.2 = a + b  :: int64\n"));
}

/// One `NUMBA_DUMP_ANNOTATION` snapshot per NumPy fixture, typed with the argument types
/// Numba used for it (`oracle/arrays.typing.tsv`).
#[test]
fn annotation_snapshots_for_the_array_fixtures() {
    let text = fs::read_to_string(fixtures().join("oracle/arrays.typing.tsv")).unwrap();
    let source = fs::read_to_string(fixtures().join("arrays.py")).unwrap();
    let mut globals: HashMap<String, Global> = HashMap::new();
    globals.insert(
        "np".into(),
        Global {
            kind: numba_ir::GlobalKind::Module("numpy".into()),
            repr: "<module 'numpy'>".into(),
        },
    );
    let ctx = BaseContext::default();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let (name, args) = (cols[0], cols[1]);
        let arg_types: Vec<_> = args
            .split(';')
            .map(|a| numba_typeinfer::types::parse_type(a).unwrap())
            .collect();
        let blob = fs::read(fixtures().join(format!("blobs/arrays.{name}.marshal"))).unwrap();
        let code = numba_bytecode::marshal::read_code(&blob).unwrap();
        let mut ir = compile_to_ir(code, &globals).unwrap();
        let typing = infer(&ir, &arg_types, &ctx, &NoCallees, None).unwrap();
        numba_ir::postproc::insert_dels(&mut ir);
        let text = annotate(&ir, &typing, Some(&source));
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("annotation_{name}"), text);
        });
    }
}
