//! Errors raised while building IR.

use thiserror::Error;

/// An error building IR, with the source line it concerns.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IrError {
    /// A construct numba-rs (or Numba) does not support.
    #[error("{message}")]
    Unsupported { message: String, line: u32 },
    /// A call that does not match its callee (Numba's TypingError): too many or too few
    /// arguments, an unknown keyword.
    #[error("{message}")]
    Typing { message: String, line: u32 },
    /// The bytecode front end failed.
    #[error(transparent)]
    Bytecode(#[from] numba_bytecode::BytecodeError),
}

impl IrError {
    /// The source line, when known.
    pub fn line(&self) -> Option<u32> {
        match self {
            IrError::Unsupported { line, .. } | IrError::Typing { line, .. } => Some(*line),
            IrError::Bytecode(numba_bytecode::BytecodeError::Unsupported { line, .. }) => {
                Some(*line)
            }
            IrError::Bytecode(_) => None,
        }
    }
}
