//! Errors of the front end. Every error names what went wrong and, where known, the line.

use thiserror::Error;

/// Anything that can go wrong reading or analysing bytecode.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BytecodeError {
    /// The marshal data is truncated or malformed.
    #[error("malformed marshal data at byte {offset}: {reason}")]
    Marshal { offset: usize, reason: String },
    /// The code bytes are malformed (odd length, unknown opcode, jump out of range).
    #[error("malformed bytecode at offset {offset}: {reason}")]
    Decode { offset: u32, reason: String },
    /// A construct Numba does not support on this Python version, found while analysing
    /// `function` (its qualified name) at source `line`. `opname` is the rejected opcode
    /// when the construct is a single opcode.
    #[error("{message}")]
    Unsupported {
        message: String,
        opname: Option<&'static str>,
        function: String,
        line: u32,
    },
}
