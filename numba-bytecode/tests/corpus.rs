//! The fixture corpus (`tests/fixtures/*.py`, compiled by CPython 3.11 into marshal blobs by
//! `cargo xtask fixtures`) against two independent oracles written next to each blob:
//! - `<fixture>.dis`: what CPython's own `dis.dis` printed for the same code object;
//! - `oracle/<fixture>.numba_cfg`: what Numba 0.68.1 printed for `NUMBA_DUMP_CFG`
//!   (`tests/fixtures/numba_oracle.py`, run where Numba is installed).
//!
//! Then one insta snapshot per fixture locks in the listing, the CFG dump and the dataflow.

use std::fs;
use std::path::{Path, PathBuf};

use numba_bytecode::listing;
use numba_bytecode::{flow, marshal, ByteCode, BytecodeError, CodeObject};

/// The committed fixtures, or another corpus laid out the same way (`blobs/*.marshal`,
/// `blobs/*.dis`, `oracle/*.numba_cfg`) named by `NUMBA_RS_CORPUS`: a way to check the
/// front end against CPython and Numba on code nobody here wrote, such as the standard
/// library.
fn fixtures_dir() -> PathBuf {
    match std::env::var_os("NUMBA_RS_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures"),
    }
}

fn external_corpus() -> bool {
    std::env::var_os("NUMBA_RS_CORPUS").is_some()
}

/// `(stem.name, code)` for every committed blob, sorted.
fn corpus() -> Vec<(String, CodeObject)> {
    corpus_in(&fixtures_dir())
}

/// Standard-library code objects with CPython's listings and Numba's CFG dumps
/// (`tests/stdlib_corpus`, written by the same kind of scripts from 9 stdlib modules).
fn stdlib_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/stdlib_corpus")
}

fn corpus_in(root: &Path) -> Vec<(String, CodeObject)> {
    let mut out = Vec::new();
    let dir = root.join("blobs");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("tests/fixtures/blobs exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "marshal"))
        .collect();
    paths.sort();
    for p in paths {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = fs::read(&p).unwrap();
        let code = marshal::read_code(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push((name, code));
    }
    assert!(out.len() >= 60, "the corpus has {} fixtures", out.len());
    out
}

/// Replace process-specific addresses (`at 0x7f12...,`) with a placeholder.
fn normalize_addresses(text: &str) -> String {
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

/// Sort the elements inside each `frozenset({...})`: CPython prints them in hash order, which
/// for strings changes with `PYTHONHASHSEED`, while we print marshal's (sorted) order.
fn normalize_frozensets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("frozenset({") {
        out.push_str(&rest[..i + 11]);
        rest = &rest[i + 11..];
        let end = rest.find("})").unwrap_or(rest.len());
        let mut items: Vec<&str> = rest[..end].split(", ").collect();
        items.sort_unstable();
        out.push_str(&items.join(", "));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn listing_matches_cpython_dis() {
    check_listings(&fixtures_dir());
}

#[test]
fn stdlib_listings_match_cpython_dis() {
    check_listings(&stdlib_dir());
}

fn check_listings(root: &Path) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, code) in corpus_in(root) {
        let path = root.join("blobs").join(format!("{name}.dis"));
        let Ok(want) = fs::read_to_string(&path) else {
            continue;
        };
        let got = listing::dis(&code).unwrap_or_else(|e| panic!("{name}: {e}"));
        let normalize = |s: &str| normalize_frozensets(&normalize_addresses(s));
        let (got, want) = (normalize(&got), normalize(&want));
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            let msg = format!(
                "{name}: listing differs from dis at line {}\n ours: {:?}\n  dis: {:?}",
                line + 1,
                got.lines().nth(line),
                want.lines().nth(line)
            );
            failures.push(msg);
            continue;
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} listing(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 60, "only {checked} listings compared");
}

/// Sort the items of every innermost `{...}` that is a set (no `:` inside), so two dumps
/// compare equal when they differ only in set iteration order.
fn normalize_sets(text: &str) -> String {
    let mut out = String::new();
    let mut stack: Vec<usize> = Vec::new();
    for c in text.chars() {
        match c {
            '{' => {
                stack.push(out.len());
                out.push(c);
            }
            '}' => {
                let start = stack.pop().unwrap_or(0);
                let inner = out[start + 1..].to_string();
                if !inner.contains(':') && !inner.contains('{') && !inner.contains('(') {
                    let mut items: Vec<i64> = inner
                        .split(',')
                        .filter_map(|s| s.trim().parse().ok())
                        .collect();
                    items.sort_unstable();
                    let joined: Vec<String> = items.iter().map(i64::to_string).collect();
                    out.truncate(start + 1);
                    out.push_str(&joined.join(", "));
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Split a CFG dump into `(title line, body)` sections.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("CFG ") {
            out.push((line.to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

fn analyze(code: &CodeObject) -> Result<(ByteCode, flow::Dataflow), BytecodeError> {
    let bc = ByteCode::decode(code.clone())?;
    let df = flow::analyze(&bc)?;
    Ok((bc, df))
}

#[test]
fn cfg_dump_matches_numba() {
    check_cfg_dumps(&fixtures_dir());
}

#[test]
fn stdlib_cfg_dumps_match_numba() {
    check_cfg_dumps(&stdlib_dir());
}

fn check_cfg_dumps(root: &Path) {
    let (mut compared, mut exact, mut rejected) = (0, 0, 0);
    let mut reordered = Vec::new();
    for (name, code) in corpus_in(root) {
        let path = root.join("oracle").join(format!("{name}.numba_cfg"));
        let Ok(want) = fs::read_to_string(&path) else {
            continue;
        };
        let ours = analyze(&code);
        if let Some(err) = want.strip_prefix("error: ") {
            match ours {
                // f-string conversions (`!r`, `!a`) compile here, beyond Numba (issue 44):
                // a function Numba stops at one of them may stop later at something else.
                Err(_) if err.contains("format spec in f-strings") => {}
                Err(e) => assert!(
                    err.contains(&e.to_string()),
                    "{name}: Numba says {err:?}, we say {e:?}"
                ),
                // f-string fields with a format spec: compiled here, beyond Numba (issue 44).
                Ok(_) if err.contains("format spec in f-strings") => {}
                Ok(_) => panic!("{name}: Numba rejects it ({err}) but we accept it"),
            }
            rejected += 1;
            continue;
        }
        let (_, df) = ours.unwrap_or_else(|e| panic!("{name}: Numba accepts it, we say {e}"));
        let got = df.cfg.numba_dump();
        if got == want {
            exact += 1;
        } else {
            reordered.push(name.clone());
            // Numba's virtual exit node hashes by address, so only the sets built from it
            // (post-dominators and the backbone) may differ, and only in order.
            for ((title, ours), (_, theirs)) in sections(&got).into_iter().zip(sections(&want)) {
                if title.starts_with("CFG post-dominators") || title.starts_with("CFG backbone") {
                    assert_eq!(
                        normalize_sets(&ours),
                        normalize_sets(&theirs),
                        "{name}: {title} differs from Numba's beyond set order"
                    );
                } else {
                    assert_eq!(ours, theirs, "{name}: {title} differs from Numba's");
                }
            }
            assert_eq!(sections(&got).len(), sections(&want).len(), "{name}");
        }
        compared += 1;
    }
    eprintln!(
        "CFG dumps: {compared} compared, {exact} byte-identical, {} differ in post-dominator \
         set order (first: {:?}); {rejected} rejected alike",
        reordered.len(),
        reordered.iter().take(5).collect::<Vec<_>>()
    );
    assert!(compared >= 60, "only {compared} CFG dumps compared");
}

#[test]
fn corpus_snapshots() {
    if external_corpus() {
        return;
    }
    for (name, code) in corpus() {
        let mut text = String::new();
        text.push_str("== dis ==\n");
        match listing::dis(&code) {
            Ok(s) => text.push_str(&s),
            Err(e) => text.push_str(&format!("error: {e}\n")),
        }
        match analyze(&code) {
            Ok((bc, df)) => {
                text.push_str("== Numba bytecode ==\n");
                text.push_str(&bc.dump());
                text.push_str("== NUMBA_DUMP_CFG ==\n");
                text.push_str(&df.cfg.numba_dump());
                text.push_str("== dataflow ==\n");
                text.push_str(&df.dump(&bc));
            }
            Err(e) => text.push_str(&format!("== analysis error ==\n{e:?}\n")),
        }
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, text);
        });
    }
}

#[test]
fn instructions_carry_cpython_positions() {
    // `def add(a, b):\n    return a + b` at line 10; CPython's co_positions() for it:
    // BINARY_OP (11, 11, 11, 16), RETURN_VALUE (11, 11, 4, 16), RESUME (10, 10, 0, 0).
    let (_, code) = corpus()
        .into_iter()
        .find(|(n, _)| n == "scalars.add")
        .expect("scalars.add fixture");
    let bc = ByteCode::decode(code).unwrap();
    let pos = |name: &str| {
        let i = bc.instructions.iter().find(|i| i.opname == name).unwrap();
        let p = i.position;
        (p.line, p.end_line, p.col, p.end_col)
    };
    assert_eq!(pos("BINARY_OP"), (Some(11), Some(11), Some(11), Some(16)));
    assert_eq!(pos("RETURN_VALUE"), (Some(11), Some(11), Some(4), Some(16)));
    assert_eq!(pos("RESUME"), (Some(10), Some(10), Some(0), Some(0)));
    let ret = bc
        .instructions
        .iter()
        .find(|i| i.opname == "RETURN_VALUE")
        .unwrap();
    assert_eq!((ret.offset, ret.next, ret.line), (12, 14, 11));
}
