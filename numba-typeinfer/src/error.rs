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
}

impl TypingError {
    pub fn line(&self) -> u32 {
        match self {
            TypingError::Typing { line, .. } | TypingError::Unsupported { line, .. } => *line,
        }
    }
}
