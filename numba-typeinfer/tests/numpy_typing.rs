//! NumPy typing against Numba 0.68.1: for each function of `tests/fixtures/arrays.py`
//! (compiled by CPython into blobs), inferred with the argument types Numba used, the
//! return type and every user variable's type must be what Numba inferred
//! (`tests/fixtures/oracle/arrays.typing.tsv`, from `numba_types_oracle.py`).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use numba_ir::{compile_to_ir, Global, GlobalKind};
use numba_typeinfer::context::{BaseContext, CallOutcome, CalleeResolver};
use numba_typeinfer::infer;
use numba_typeinfer::types::{parse_type, TypeId};

struct NoCallees;

impl CalleeResolver for NoCallees {
    fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
        Err("no callees".into())
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

#[test]
fn numpy_typing_matches_numba() {
    let text = fs::read_to_string(fixtures().join("oracle/arrays.typing.tsv")).unwrap();
    let mut globals: HashMap<String, Global> = HashMap::new();
    globals.insert(
        "np".into(),
        Global {
            kind: GlobalKind::Module("numpy".into()),
            repr: "<module 'numpy'>".into(),
        },
    );
    let ctx = BaseContext::default();
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, args, ret, vars] = cols.as_slice() else {
            panic!("bad line {line}");
        };
        let arg_types: Vec<TypeId> = args
            .split(';')
            .map(|a| parse_type(a).unwrap_or_else(|| panic!("cannot parse {a}")))
            .collect();
        let blob = fs::read(fixtures().join(format!("blobs/arrays.{name}.marshal"))).unwrap();
        let code = numba_bytecode::marshal::read_code(&blob).unwrap();
        let ir = compile_to_ir(code, &globals).unwrap();
        let typing = match infer(&ir, &arg_types, &ctx, &NoCallees, None) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if typing.return_type.to_string() != *ret {
            failures.push(format!(
                "{name}: returns {}, Numba {ret}",
                typing.return_type
            ));
        }
        let du = numba_ir::utils::DefUse::compute(&ir);
        for pair in vars.split(';').filter(|p| !p.is_empty()) {
            let (var, want) = pair.split_once('=').unwrap();
            let Some(v) = ir.var_by_name(var) else {
                continue;
            };
            // Numba types each SSA version (`s`, `s.1`, ...) on its own; our IR keeps one
            // variable per name, so only singly-defined names are comparable.
            if du.def_count(v) > 1 {
                continue;
            }
            let got = typing.type_of(v).to_string();
            if got != want {
                failures.push(format!("{name}: {var} is {got}, Numba {want}"));
            }
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 50, "{checked}");
}
