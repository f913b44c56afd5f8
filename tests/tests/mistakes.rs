//! Error messages for typical user mistakes (`tests/fixtures/mistakes.py`), compiled
//! through the whole pipeline from marshal blobs with no Python, locked in as insta
//! snapshots. Each names the failing operation with its argument types, the function, the
//! file, the line and the line's text.

use std::collections::HashMap;
use std::path::Path;

use numba_dispatch::{register, FunctionSource};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_typeinfer::types::{FLOAT64, INT64};
use numba_typeinfer::TypeId;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

struct MistakeSource(String);

impl FunctionSource for MistakeSource {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        let path = root().join(format!("tests/fixtures/blobs/mistakes.{}.marshal", self.0));
        let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
        let code = numba_bytecode::marshal::read_code(&bytes).map_err(|e| e.to_string())?;
        let mut g: HashMap<String, Global> = HashMap::new();
        g.insert(
            "math".into(),
            Global {
                kind: GlobalKind::Module("math".into()),
                repr: "<module 'math'>".into(),
            },
        );
        Ok((code, Box::new(g)))
    }
}

#[test]
fn user_mistakes_give_clear_errors() {
    // Source lines are read from the path the code object records (relative to the root).
    std::env::set_current_dir(root()).unwrap();
    let cases: &[(&str, &[TypeId])] = &[
        ("unknown_global", &[INT64]),
        ("add_int_and_str", &[INT64]),
        ("incompatible_returns", &[INT64]),
        ("index_a_scalar", &[INT64]),
        ("call_a_number", &[INT64]),
        ("unknown_attribute", &[INT64]),
        ("math_on_a_string", &[INT64]),
        ("too_many_arguments_to_abs", &[INT64]),
        ("unsupported_builtin", &[INT64]),
        ("variable_changes_to_str", &[INT64]),
        ("multiply_str_by_float", &[FLOAT64]),
        ("range_of_a_float", &[FLOAT64]),
        ("compare_str_with_int", &[INT64]),
        ("negate_a_string", &[INT64]),
        ("raise_a_number", &[INT64]),
        ("iterate_over_an_int", &[INT64]),
        ("call_math_with_no_args", &[INT64]),
        // The right function with the wrong number of arguments.
        ("add_int_and_str", &[INT64, INT64]),
    ];
    for (i, (name, args)) in cases.iter().enumerate() {
        let d = register(name, Box::new(MistakeSource(name.to_string())));
        let err = match d.resolve(args) {
            Ok(_) => panic!("{name} compiled"),
            Err(e) => e,
        };
        let text = format!("{:?} error\n{err}\n", err.kind);
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("mistake_{i:02}_{name}"), text);
        });
    }
}
