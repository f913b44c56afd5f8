//! Our `NUMBA_DUMP_IR` text against Numba 0.68.1's for every fixture
//! (`tests/fixtures/oracle/*.numba_ir`, written by `tests/fixtures/numba_oracle.py`).
//!
//! Globals resolve to the reprs the fixture module had (`blobs/<module>.globals`, written by
//! `cargo xtask fixtures`); process-specific addresses are normalised on both sides.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::{first_difference, fixtures, module_globals, normalize, Resolver};
use numba_ir::compile_to_ir;

/// Which dump to compare: `NUMBA_DUMP_IR` (post-processed, no dels) or the IR after
/// `PostProcessor.run(emit_dels=True)`.
#[derive(Clone, Copy)]
enum Dump {
    Ir,
    WithDels,
}

/// `(fixture, Ok(matches) | Err(why we could not build IR))` for every oracle.
fn compare_all(root: &Path, which: Dump) -> BTreeMap<String, Result<Option<String>, String>> {
    let mut out = BTreeMap::new();
    let mut paths: Vec<PathBuf> = fs::read_dir(root.join("oracle"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| {
                e == match which {
                    Dump::Ir => "numba_ir",
                    Dump::WithDels => "numba_ir_dels",
                }
            })
        })
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
        let result = match which {
            Dump::Ir => compile_to_ir(code, &resolver).map(|ir| ir.dump_with_header()),
            Dump::WithDels => numba_bytecode::ByteCode::decode(code)
                .map_err(numba_ir::IrError::from)
                .and_then(|bc| {
                    let df = numba_bytecode::flow::analyze(&bc)?;
                    let mut ir = numba_ir::interpret(&bc, &df, &resolver)?;
                    numba_ir::postproc::run(&mut ir, true);
                    Ok(ir.dump())
                }),
        };
        let result = match result {
            Ok(text) => {
                let got = normalize(&text);
                if let Some(dir) = std::env::var_os("NUMBA_RS_IR_OUT") {
                    let _ = fs::write(Path::new(&dir).join(format!("{name}.ir")), &got);
                }
                Ok(first_difference(&got, &normalize(&want)))
            }
            Err(e) => Err(e.to_string()),
        };
        out.insert(name, result);
    }
    out
}

#[test]
fn ir_dumps_match_numba() {
    check(Dump::Ir);
}

#[test]
fn ir_with_dels_matches_numba() {
    check(Dump::WithDels);
}

/// Standard-library functions with Numba's dumps (`tests/stdlib_corpus`).
fn stdlib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/stdlib_corpus")
}

#[test]
fn stdlib_ir_dumps_match_numba() {
    check_in(&stdlib(), Dump::Ir);
}

fn check(which: Dump) {
    check_in(&fixtures(), which);
}

fn check_in(root: &Path, which: Dump) {
    let results = compare_all(root, which);
    let mut report = String::new();
    let (mut same, mut differ, mut unsupported) = (0, 0, 0);
    for (name, r) in &results {
        match r {
            Ok(None) => same += 1,
            Ok(Some(diff)) => {
                differ += 1;
                report.push_str(&format!("DIFF {name}: {diff}\n"));
            }
            Err(e) => {
                unsupported += 1;
                report.push_str(&format!("UNSUPPORTED {name}: {e}\n"));
            }
        }
    }
    eprintln!("{report}IR dumps: {same} identical, {differ} differ, {unsupported} not built");
    assert_eq!(differ, 0, "IR dumps differ from Numba's");
    // Every function Numba's interpreter accepts gets IR here too.
    assert_eq!(
        unsupported, 0,
        "functions Numba builds IR for and we do not"
    );
    assert!(same >= 60, "only {same} compared");
}

/// One insta snapshot per fixture: the `NUMBA_DUMP_IR` text (with `GENERATOR INFO` for
/// generators) and the IR with dels, or the error for what we cannot build yet.
#[test]
fn ir_snapshots() {
    if std::env::var_os("NUMBA_RS_CORPUS").is_some() {
        return;
    }
    let mut paths: Vec<PathBuf> = fs::read_dir(fixtures().join("blobs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "marshal"))
        .collect();
    paths.sort();
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap().to_string();
        let code = numba_bytecode::marshal::read_code(&fs::read(&path).unwrap()).unwrap();
        let resolver = Resolver(module_globals(&stem));
        let text = match compile_to_ir(code, &resolver) {
            Ok(mut ir) => {
                let mut t = ir.dump_with_header();
                numba_ir::postproc::insert_dels(&mut ir);
                t.push_str("== with dels ==\n");
                t.push_str(&ir.dump());
                normalize(&t)
            }
            Err(e) => format!("error: {e}\n"),
        };
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, text);
        });
    }
}
