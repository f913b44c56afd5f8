//! Our IR after SSA reconstruction against Numba 0.68.1's for every fixture
//! (`tests/fixtures/oracle/*.numba_ssa`, written by `tests/fixtures/numba_oracle.py`: the
//! post-processed IR of `.numba_ir`, through `numba.core.ssa.reconstruct_ssa`, dumped without
//! banner).
//!
//! Globals resolve to the reprs the fixture module had (`blobs/<module>.globals`, written by
//! `cargo xtask fixtures`); process-specific addresses are normalised on both sides.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::{first_difference, fixtures, module_globals, normalize, Resolver};
use numba_ir::compile_to_ir;
use numba_ir::ssa::reconstruct_ssa;

/// What happened to one fixture.
enum Outcome {
    /// `None` when our dump is identical to Numba's, else the first difference.
    Compared(Option<String>),
    /// We cannot build IR for the function.
    NotBuilt(String),
    /// IR was built but `reconstruct_ssa` failed where Numba succeeded.
    SsaFailed(String),
}

/// Every fixture with an SSA oracle that is not an error, by `stem.name`.
fn compare_all(root: &Path) -> BTreeMap<String, Outcome> {
    let mut out = BTreeMap::new();
    let mut paths: Vec<PathBuf> = fs::read_dir(root.join("oracle"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "numba_ssa"))
        .collect();
    paths.sort();
    for path in paths {
        let want = fs::read_to_string(&path).unwrap();
        if want.starts_with("error:") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap().to_string();
        let blob = fs::read(root.join("blobs").join(format!("{name}.marshal"))).unwrap();
        let code = numba_bytecode::marshal::read_code(&blob).unwrap();
        let resolver = Resolver(module_globals(&stem));
        let outcome = match compile_to_ir(code, &resolver) {
            Err(e) => Outcome::NotBuilt(e.to_string()),
            Ok(mut ir) => match reconstruct_ssa(&mut ir) {
                Err(e) => Outcome::SsaFailed(e.to_string()),
                Ok(()) => {
                    let got = normalize(&ir.dump());
                    if let Some(dir) = std::env::var_os("NUMBA_RS_IR_OUT") {
                        let _ = fs::write(Path::new(&dir).join(format!("{name}.ssa")), &got);
                    }
                    Outcome::Compared(first_difference(&got, &normalize(&want)))
                }
            },
        };
        out.insert(name, outcome);
    }
    out
}

#[test]
fn ssa_dumps_match_numba() {
    check_in(&fixtures());
}

/// Standard-library functions with Numba's SSA dumps (`tests/stdlib_corpus`).
#[test]
fn stdlib_ssa_dumps_match_numba() {
    check_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/stdlib_corpus"));
}

fn check_in(root: &Path) {
    let results = compare_all(root);
    let mut report = String::new();
    let (mut same, mut differ, mut failed, mut not_built) = (0, 0, 0, 0);
    for (name, outcome) in &results {
        match outcome {
            Outcome::Compared(None) => same += 1,
            Outcome::Compared(Some(diff)) => {
                differ += 1;
                report.push_str(&format!("DIFF {name}: {diff}\n"));
            }
            Outcome::SsaFailed(e) => {
                failed += 1;
                report.push_str(&format!("SSA FAILED {name}: {e}\n"));
            }
            Outcome::NotBuilt(e) => {
                not_built += 1;
                report.push_str(&format!("NOT BUILT {name}: {e}\n"));
            }
        }
    }
    eprintln!(
        "{report}SSA dumps: {same} identical, {differ} differ, {failed} failed, \
         {not_built} not built"
    );
    assert_eq!(differ, 0, "SSA dumps differ from Numba's");
    assert_eq!(failed, 0, "reconstruct_ssa failed where Numba succeeded");
    assert_eq!(not_built, 0, "functions Numba builds IR for and we do not");
    assert!(same >= 90, "only {same} SSA dumps compared");
}
