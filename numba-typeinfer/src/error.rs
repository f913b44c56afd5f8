//! Typing errors, with the line they concern.

use thiserror::Error;

/// A typing failure. `line` is the source line of the statement being typed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TypingError {
    /// No template accepts the operation with these argument types.
    #[error("{message}")]
    Typing { message: String, line: u32 },
    /// Types are fine but the construct is not supported (yet).
    #[error("{message}")]
    Unsupported { message: String, line: u32 },
    /// Not a failure: the star argument of `call` is a tuple of `count` items, so the
    /// caller spreads it into positional arguments
    /// (`numba_ir::utils::expand_star_call`) and types the function again.
    #[error("the star argument of a call needs spreading into {count} arguments")]
    StarArgs {
        call: numba_ir::ExprId,
        count: usize,
        line: u32,
    },
    /// Not a failure: the function asks (`literally(x)`, or a callee's request passed
    /// on) to be compiled with these of its arguments (by position) as literal types;
    /// the dispatcher types them from the values and compiles again.
    #[error("the arguments {args:?} are requested as literal types")]
    ForceLiteral { args: Vec<usize>, line: u32 },
}

impl TypingError {
    pub fn line(&self) -> u32 {
        match self {
            TypingError::Typing { line, .. }
            | TypingError::Unsupported { line, .. }
            | TypingError::StarArgs { line, .. }
            | TypingError::ForceLiteral { line, .. } => *line,
        }
    }
}
