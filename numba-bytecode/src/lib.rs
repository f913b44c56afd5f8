//! # numba-bytecode
//!
//! The CPython front end of numba-rs, usable without a Python interpreter.
//!
//! It owns:
//! - the Rust model of a CPython code object ([`CodeObject`], [`Constant`]) and a reader for
//!   the `marshal` format ([`marshal::read_code`], [`marshal::read_pyc`]);
//! - per-version opcode tables ([`opcode::OpcodeTable`], CPython 3.11 first);
//! - the instruction decoder ([`ByteCode::decode`]) with Numba's conventions: inline `CACHE`
//!   words kept, `EXTENDED_ARG` turned into `NOP`, a `NOP` injected at offset 0 and every
//!   offset shifted by 2 (so IR labels equal Numba's);
//! - the `dis.dis` listing ([`listing::dis`]), text-identical to CPython's;
//! - the control-flow graph on petgraph ([`cfg::ControlFlowGraph`]: dominators,
//!   post-dominators, back edges, loops, backbone) and its `NUMBA_DUMP_CFG` text
//!   ([`cfgdump`]), which replays CPython's set layout ([`pyset`]) and `pprint` ([`pprint`]);
//! - the symbolic stack execution that names every temporary as Numba does, with the
//!   try/with block stack from the exception table ([`flow::analyze`], producing
//!   [`flow::Dataflow`]);
//! - [`fuzzing::exercise`], every entry point driven from untrusted bytes.
//!
//! Entry points: [`marshal::read_code`] → [`ByteCode::decode`] → [`flow::analyze`].
//!
//! # Example
//!
//! Decode `sum_range` (a `for i in range(a, b, c)` loop with a `continue` and a `break`,
//! compiled by CPython 3.11) and find its loop, with every offset shifted as Numba shifts
//! it: CPython's `dis` puts `LOAD_CONST` at 2 and `FOR_ITER` at 40.
//!
//! ```rust
//! use numba_bytecode::{flow, marshal, ByteCode};
//!
//! let blob = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../tests/fixtures/blobs/scalars.sum_range.marshal"
//! ))?;
//! let code = marshal::read_code(&blob)?;
//! assert_eq!(code.argcount, 3);
//! let bc = ByteCode::decode(code)?;
//!
//! // Numba's injected NOP at 0, then CPython's instructions (inline CACHEs skipped here).
//! let first: Vec<(u32, &str)> = bc
//!     .instructions
//!     .iter()
//!     .filter(|i| i.opname != "CACHE")
//!     .map(|i| (i.offset, i.opname))
//!     .take(5)
//!     .collect();
//! let want = [
//!     (0, "NOP"),
//!     (2, "RESUME"),
//!     (4, "LOAD_CONST"),
//!     (6, "STORE_FAST"),
//!     (8, "LOAD_GLOBAL"),
//! ];
//! assert_eq!(first, want);
//! assert_eq!(bc.at(42).map(|i| i.opname), Some("FOR_ITER"));
//!
//! // One loop, headed by the FOR_ITER block, whose back edges come from the `continue`
//! // and from the end of the body.
//! let df = flow::analyze(&bc)?;
//! let header: Vec<u32> = df.cfg.loops.keys().copied().collect();
//! assert_eq!(header, [42]);
//! assert!(df.cfg.back_edges.iter().all(|&(_, to)| to == 42));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod cfg;
pub mod cfgdump;
pub mod code;
pub mod error;
pub mod exctable;
pub mod flow;
pub mod fuzzing;
pub mod instr;
pub mod linetable;
pub mod listing;
pub mod marshal;
pub mod opcode;
pub mod pprint;
pub mod pyset;

pub use code::{CodeObject, Constant};
pub use error::BytecodeError;
pub use instr::{ByteCode, Instruction};
