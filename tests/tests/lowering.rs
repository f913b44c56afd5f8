//! The unoptimised LLVM IR (`NUMBA_DUMP_LLVM`) of small fixtures, snapshotted: the native
//! calling convention, the data models and the lowering of each operation show up here,
//! so a change to any of them is a reviewed snapshot change. Host-specific lines (target
//! triple and data layout) and run-dependent numbers (dispatcher ids, callee addresses)
//! are normalised.

use std::collections::HashMap;

use numba_dispatch::{register, FunctionSource};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_typeinfer::types::{BOOLEAN, FLOAT64, INT64};
use numba_typeinfer::TypeId;

fn blob(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/fixtures/blobs/{name}.marshal",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

struct BlobSource(String);

impl FunctionSource for BlobSource {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        let code = numba_bytecode::marshal::read_code(&blob(&self.0)).map_err(|e| e.to_string())?;
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

/// Replace the run of digits (or hex digits) after each `marker` by `with`.
fn mask_after(text: &str, marker: &str, hex: bool, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(marker) {
        out.push_str(&rest[..pos + marker.len()]);
        rest = &rest[pos + marker.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || (hex && c.is_ascii_hexdigit())))
            .unwrap_or(rest.len());
        if end > 0 {
            out.push_str(with);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn normalise(ir: &str) -> String {
    let kept: Vec<&str> = ir
        .lines()
        .filter(|l| !l.starts_with("target datalayout") && !l.starts_with("target triple"))
        .collect();
    let text = kept.join("\n");
    // The dispatcher id is the mangled name's ABI tag (`B2v7E`): its length varies too.
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(pos) = rest.find("v") {
        let (head, tail) = rest.split_at(pos);
        // `B<len>v<digits>E`
        let is_tag = head.ends_with(|c: char| c.is_ascii_digit())
            && head
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .ends_with('B')
            && tail[1..].starts_with(|c: char| c.is_ascii_digit());
        if is_tag {
            let digits = tail[1..].find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
            let head = head.trim_end_matches(|c: char| c.is_ascii_digit());
            out.push_str(head);
            out.push_str("vN");
            rest = &tail[1 + digits..];
        } else {
            out.push_str(head);
            out.push('v');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    mask_after(&out, "numba_rs.callee.", false, "N")
}

#[test]
fn unoptimised_llvm_ir_of_small_functions() {
    let cases: &[(&str, &[TypeId])] = &[
        ("scalars.add", &[INT64, INT64]),
        ("scalars.add", &[FLOAT64, INT64]),
        ("scalars.doloops", &[INT64]),
        ("scalars.floor_mod", &[INT64, INT64]),
        ("scalars.logic", &[BOOLEAN, INT64]),
        ("scalars.hypot", &[FLOAT64, FLOAT64]),
    ];
    for (name, args) in cases {
        let d = register(name, Box::new(BlobSource(name.to_string())));
        let c = d
            .resolve(args)
            .unwrap_or_else(|e| panic!("{name} failed to compile: {e}"));
        let tys: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        let snap = format!("{}__{}", name.replace('.', "_"), tys.join("_"));
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("llvm_{snap}"), normalise(&c.llvm_ir));
        });
    }
}
