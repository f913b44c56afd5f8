//! Our IR after SSA reconstruction against Numba 0.68.1's for every fixture
//! (`tests/fixtures/oracle/*.numba_ssa`, written by `tests/fixtures/numba_oracle.py`: the
//! post-processed IR of `.numba_ir`, through `numba.core.ssa.reconstruct_ssa`, dumped without
//! banner).
//!
//! Globals resolve to the reprs the fixture module had (`blobs/<module>.globals`, written by
//! `cargo xtask fixtures`); process-specific addresses are normalised on both sides.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use numba_ir::global::default_builtin;
use numba_ir::ssa::reconstruct_ssa;
use numba_ir::{compile_to_ir, Global, GlobalKind};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn module_globals(stem: &str) -> HashMap<String, Global> {
    let path = fixtures().join("blobs").join(format!("{stem}.globals"));
    let text = fs::read_to_string(&path).unwrap_or_default();
    let mut out = HashMap::new();
    for line in text.lines() {
        if let Some((name, repr)) = line.split_once('\t') {
            let kind = GlobalKind::Opaque {
                type_name: name.to_string(),
            };
            out.insert(
                name.to_string(),
                Global {
                    kind,
                    repr: repr.to_string(),
                },
            );
        }
    }
    out
}

struct Resolver(HashMap<String, Global>);

impl numba_ir::GlobalResolver for Resolver {
    fn resolve_global(&self, name: &str) -> Global {
        self.0
            .get(name)
            .cloned()
            .or_else(|| default_builtin(name))
            .unwrap_or(Global {
                kind: GlobalKind::Undefined,
                repr: "Undefined".into(),
            })
    }
}

/// `<module 'numpy' from '/some/venv/...'>`: the path depends on the Python used.
fn strip_module_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("' from '") {
        out.push_str(&rest[..i + 1]);
        rest = &rest[i + 8..];
        let end = rest.find("'>").unwrap_or(rest.len());
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn normalize(text: &str) -> String {
    let stripped = strip_module_paths(text);
    let text: &str = &stripped;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(" at 0x") {
        out.push_str(&rest[..i + 6]);
        rest = &rest[i + 6..];
        let end = rest
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(rest.len());
        out.push('?');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn first_difference(got: &str, want: &str) -> Option<String> {
    if got == want {
        return None;
    }
    let line = got
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(got.lines().count().min(want.lines().count()));
    Some(format!(
        "line {}:\n ours:  {:?}\n numba: {:?}",
        line + 1,
        got.lines().nth(line).unwrap_or(""),
        want.lines().nth(line).unwrap_or("")
    ))
}

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
fn compare_all() -> BTreeMap<String, Outcome> {
    let mut out = BTreeMap::new();
    let mut paths: Vec<PathBuf> = fs::read_dir(fixtures().join("oracle"))
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
        let blob = fs::read(fixtures().join("blobs").join(format!("{name}.marshal"))).unwrap();
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
    let results = compare_all();
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
