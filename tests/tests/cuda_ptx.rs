//! PTX of the cuda target (issue 49's corpus, `tests/fixtures/cuda_kernels.py`): each
//! kernel compiled through numba-dispatch with `CodeTarget::Cuda` and its PTX
//! snapshotted (the mangled names' dispatcher ids normalised). What the kernels compute
//! is tested under the simulator (`tests/python/test_cuda_simulator.py`); the PTX is
//! assembled by `ptxas` in `tests/python/test_cuda_ptx.py`.

use std::collections::HashMap;
use std::sync::Arc;

use numba_dispatch::{register_with, CodeTarget, FunctionSource, JitOptions, Target};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_typeinfer::parse_signature;

struct Blob(String);

impl FunctionSource for Blob {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        let path = format!(
            "{}/fixtures/blobs/cuda_kernels.{}.marshal",
            env!("CARGO_MANIFEST_DIR"),
            self.0
        );
        let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
        let code = numba_bytecode::marshal::read_code(&bytes).map_err(|e| e.to_string())?;
        let mut g: HashMap<String, Global> = HashMap::new();
        for (name, module) in [("np", "numpy"), ("cuda", "numba_rs.cuda")] {
            g.insert(
                name.into(),
                Global {
                    kind: GlobalKind::Module(module.into()),
                    repr: format!("<module '{module}'>"),
                },
            );
        }
        Ok((code, Box::new(g)))
    }
}

/// The dispatcher id in mangled names (`B2v17E`) depends on registration order.
fn normalise(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while let Some(pos) = rest.find('B') {
        let (head, tail) = rest.split_at(pos);
        out.push_str(head);
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let n1 = digits(&tail[1..]);
        let after = &tail[1 + n1..];
        if n1 > 0 && after.starts_with('v') {
            let n2 = digits(&after[1..]);
            if n2 > 0 && after[1 + n2..].starts_with('E') {
                out.push_str("BvNE");
                rest = &after[2 + n2..];
                continue;
            }
        }
        out.push('B');
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn ptx_of_the_corpus() {
    let cases = [
        ("saxpy", "none(float32, float32[:], float32[:], float32[:])"),
        ("block_sum", "none(float64[:], float64[:])"),
        ("stencil", "none(float64[:, :], float64[:, :])"),
        ("warp_sum", "none(float64[:], float64[:])"),
    ];
    let target = Arc::new(Target::default());
    for (name, sig) in cases {
        let (_, args) = parse_signature(sig).expect("signature");
        let d = register_with(
            &format!("cuda_kernels.{name}"),
            Box::new(Blob(name.to_string())),
            target.clone(),
            JitOptions {
                code_target: CodeTarget::Cuda,
                ..JitOptions::default()
            },
        );
        let c = d
            .resolve(&args)
            .unwrap_or_else(|e| panic!("{name} failed to compile: {e}"));
        let ptx = c.assembly.as_deref().expect("a kernel's PTX");
        assert!(ptx.contains(".visible .entry"), "{name}: no kernel entry");
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("ptx_{name}"), normalise(ptx));
        });
    }
}
