//! `NUMBA_DUMP_ASSEMBLY`: the host assembly of the optimised module is kept (and printed)
//! only when asked for. One test function: it sets the environment variable.

use std::collections::HashMap;

use numba_dispatch::{register, FunctionSource};
use numba_ir::{Global, GlobalResolver};
use numba_typeinfer::types::INT64;

struct BlobSource(&'static str);

impl FunctionSource for BlobSource {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        let path = format!(
            "{}/fixtures/blobs/{}.marshal",
            env!("CARGO_MANIFEST_DIR"),
            self.0
        );
        let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
        let code = numba_bytecode::marshal::read_code(&bytes).map_err(|e| e.to_string())?;
        let g: HashMap<String, Global> = HashMap::new();
        Ok((code, Box::new(g)))
    }
}

#[test]
fn assembly_is_kept_only_when_asked_for() {
    std::env::remove_var("NUMBA_DUMP_ASSEMBLY");
    let d = register("scalars.add", Box::new(BlobSource("scalars.add")));
    let c = d.resolve(&[INT64, INT64]).expect("compiles");
    assert!(c.assembly.is_none());

    std::env::set_var("NUMBA_DUMP_ASSEMBLY", "1");
    let d = register("scalars.add", Box::new(BlobSource("scalars.add")));
    let c = d.resolve(&[INT64, INT64]).expect("compiles");
    std::env::remove_var("NUMBA_DUMP_ASSEMBLY");
    let asm = c.assembly.as_deref().expect("assembly kept");
    // The native function and its entry wrapper, as labels of the host's assembly.
    assert!(asm.contains(&format!("{}:", c.symbol)), "{asm}");
    assert!(asm.contains(&format!("{}.entry:", c.symbol)), "{asm}");
    assert!(asm.contains(".text"), "{asm}");
    // x86-64: the add is there (the target this workspace builds LLVM for).
    assert!(asm.contains("add") || asm.contains("lea"), "{asm}");
}
