//! # numba-ir
//!
//! Numba IR for numba-rs: what a function means after the bytecode is gone, and before any
//! type is known. It owns:
//! - the IR data structures ([`FunctionIR`], [`Block`], [`Stmt`], [`Expr`]) stored in arenas
//!   with typed ids ([`VarId`], [`ExprId`]) and blocks keyed by [`Label`] (Numba offsets);
//! - global name resolution as a trait ([`GlobalResolver`]) so the compiler core never needs
//!   a Python interpreter: numba-py implements it from `__globals__`, Rust tests from a table;
//! - the interpreter turning [`numba_bytecode::flow::Dataflow`] into IR with Numba's names
//!   ([`interpret`]);
//! - post-processing as Numba runs it before `NUMBA_DUMP_IR` ([`postproc`]: single-backedge
//!   loop canonicalisation, `del` insertion, generator yield points and state);
//! - dataflow over blocks ([`analysis`]: use/def, liveness, dead maps);
//! - array comprehensions compiled without lists ([`comprehension`]), and lists that are
//!   only read compiled as tuples ([`literal_lists`]);
//! - loop lifting for object mode ([`looplift`]) and with-lifting for nopython mode
//!   ([`withlift`]: `objmode` bodies into functions of their own, `parallel_chunksize`,
//!   Numba's testing contexts);
//! - the verifier ([`verify`]), IR utilities ([`utils`]: def-use maps, copy propagation,
//!   dead-code elimination, block merging, renaming, closure inlining) and the
//!   [`passes::FunctionPass`] trait with its [`passes::PassManager`];
//! - the `NUMBA_DUMP_IR` text ([`FunctionIR::dump`], [`FunctionIR::dump_with_header`]).
//!
//! This crate knows nothing of types or LLVM: typing results are side tables owned by
//! numba-typeinfer, keyed by the ids defined here.
//!
//! # Example
//!
//! The IR of `def add(a, b): return a + b` (a CPython 3.11 code object), dumped line for
//! line as Numba 0.68.1 prints it with `NUMBA_DUMP_IR=1`:
//!
//! ```rust
//! use std::collections::HashMap;
//!
//! use numba_ir::{compile_to_ir, Global};
//!
//! let blob = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../tests/fixtures/blobs/scalars.add.marshal"
//! ))?;
//! let code = numba_bytecode::marshal::read_code(&blob)?;
//! // `add` reads no globals: an empty table resolves them.
//! let ir = compile_to_ir(code, &HashMap::<String, Global>::new())?;
//! assert_eq!(ir.name, "add");
//! assert_eq!(ir.blocks.len(), 1);
//! let dump = ir.dump();
//! let lines: Vec<&str> = dump.lines().collect();
//! assert_eq!(lines[0], "label 0:");
//! assert_eq!(lines[1], "    a = arg(0, name=a)                       ['a']");
//! assert_eq!(
//!     lines[3],
//!     "    $binop_add8.2 = a + b                    ['$binop_add8.2', 'a', 'b']"
//! );
//! assert_eq!(
//!     lines[5],
//!     "    return $12return_value.3                 ['$12return_value.3']"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod analysis;
pub mod comprehension;
pub mod error;
pub mod global;
pub mod interp;
pub mod ir;
pub mod literal_lists;
pub mod looplift;
pub mod passes;
pub mod postproc;
mod print;
pub mod prune;
pub mod reduce;
pub mod ssa;
pub mod unroll;
pub mod utils;
pub mod verify;
pub mod withlift;
pub use print::center;

pub use error::IrError;
pub use global::{
    ArrayLayout, ConstArray, ConstArrayError, Global, GlobalKind, GlobalResolver, WithContextKind,
};
pub use interp::{compile_to_ir, interpret};
pub use ir::*;
