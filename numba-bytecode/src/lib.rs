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
