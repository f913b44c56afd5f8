//! Compile errors as users see them: kind, message and the source location.

use std::fmt;

/// Which Python exception a compile error becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `numba_rs.errors.TypingError`.
    Typing,
    /// `numba_rs.errors.UnsupportedError`.
    Unsupported,
    /// `numba_rs.errors.UnsupportedBytecodeError` (an `UnsupportedError`): a construct
    /// the bytecode analysis or IR construction rejects (a bare `raise` inside `try`, an
    /// exception bound with `as`), as Numba's byteflow and interpreter raise it.
    UnsupportedBytecode,
    /// `numba_rs.errors.UnsupportedRewriteError` (an `UnsupportedError`): a parallel
    /// loop the parfor rewrites cannot make (its index overwritten, say).
    UnsupportedRewrite,
    /// `numba_rs.errors.NumbaValueError` (a `TypingError` that is also a `ValueError`).
    Value,
    /// A bug or an environment problem.
    Internal,
    /// No compiled signature accepts the arguments, or several tie, when compiling is
    /// disabled: Python's `TypeError`, as Numba's dispatcher raises.
    Dispatch,
    /// Python's `NotImplementedError`: what Numba raises for what a pass of its own
    /// does not handle (an overload with `*args` inlined).
    NotImplemented,
    /// `numba_rs.errors.LoweringError`: code a library supplied failed to generate its
    /// body (an intrinsic's `codegen` raising).
    Lowering,
}

/// A failure anywhere in the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileError {
    pub kind: ErrorKind,
    pub message: String,
    pub function: Option<String>,
    pub filename: Option<String>,
    pub line: Option<u32>,
    /// Not a failure to report but a request: compile again with these arguments (by
    /// position) as literal types of their values (`literally`).
    pub force_literal: Vec<usize>,
}

impl CompileError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CompileError {
            kind,
            message: message.into(),
            function: None,
            filename: None,
            line: None,
            force_literal: Vec::new(),
        }
    }

    pub fn at(mut self, function: &str, filename: &str, line: Option<u32>) -> Self {
        self.function = Some(function.to_string());
        self.filename = Some(filename.to_string());
        self.line = line;
        self
    }
}

impl std::error::Error for CompileError {}

impl fmt::Display for CompileError {
    /// The message, then where: `File "f.py", line 3:` followed by the source line, as
    /// Numba shows it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(func) = &self.function {
            write!(f, "\nDuring: compiling function '{func}'")?;
        }
        if let (Some(file), Some(line)) = (&self.filename, self.line) {
            write!(f, "\n\nFile \"{file}\", line {line}:")?;
            if let Some(text) = std::fs::read_to_string(file).ok().and_then(|s| {
                s.lines()
                    .nth(line.saturating_sub(1) as usize)
                    .map(str::to_string)
            }) {
                write!(f, "\n{}", text.trim_end())?;
            }
        }
        Ok(())
    }
}
