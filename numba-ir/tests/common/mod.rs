//! Helpers shared by the oracle tests: where the fixtures are, how their globals resolve,
//! and how process-specific text is normalised before comparing with Numba's dumps.

#![allow(dead_code)]

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use numba_ir::global::default_builtin;
use numba_ir::{Global, GlobalKind};

/// The committed fixtures, or another corpus with the same layout named by
/// `NUMBA_RS_CORPUS` (see numba-bytecode's corpus test).
pub fn fixtures() -> PathBuf {
    match std::env::var_os("NUMBA_RS_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures"),
    }
}

pub fn module_globals(stem: &str) -> HashMap<String, Global> {
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

pub struct Resolver(pub HashMap<String, Global>);

impl numba_ir::GlobalResolver for Resolver {
    /// The corpus scripts give closures cells holding `None`.
    fn resolve_freevar(&self, _index: usize, _name: &str) -> Global {
        Global {
            kind: GlobalKind::Const(numba_bytecode::Constant::None),
            repr: "None".into(),
        }
    }

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
pub fn strip_module_paths(text: &str) -> String {
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

pub fn normalize(text: &str) -> String {
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

pub fn first_difference(got: &str, want: &str) -> Option<String> {
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
