//! # numba-parfor
//!
//! Automatic parallelisation (`parallel=True`, seed 001 stage 5): converting array
//! expressions, reductions, `prange` loops and array-creating calls into `parfor` nodes,
//! fusing them, and preparing them for the parallel target in numba-lower.
//!
//! Status: only the stage interface exists. No stage is implemented yet, and nothing in
//! numba-rs runs this crate: `parallel=True` is not accepted by numba-py until it is.
//!
//! The stages, in Numba's order, are the variants of [`ParforStage`]; each implementation
//! will be a [`ParforPass`] operating on typed IR and its side tables.

use numba_ir::FunctionIR;
use numba_typeinfer::TypingResult;
use thiserror::Error;

/// The nine sub-stages of Numba's parfor conversion, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParforStage {
    /// Collect the equivalence classes of array shapes.
    ArrayAnalysis,
    /// `prange` loops to parfors.
    PrangeConversion,
    /// NumPy array-creating calls (`np.zeros`, ...) to parfors.
    NumpyConversion,
    /// Array expressions (`arrayexpr`) to parfors.
    ArrayExprConversion,
    /// `functools.reduce`-style reductions to parfors.
    ReductionConversion,
    /// `setitem` with masks and slices to parfors.
    SetitemConversion,
    /// Fuse adjacent parfors with equal iteration spaces.
    Fusion,
    /// Push computations into parfors and hoist invariants.
    PushCallVars,
    /// Prepare parfors for lowering to gufuncs.
    PreLowering,
}

/// A parfor stage failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ParforError {
    #[error("parfor stage {stage:?} failed: {message}")]
    Failed { stage: ParforStage, message: String },
}

/// One parfor stage over typed IR.
pub trait ParforPass {
    fn stage(&self) -> ParforStage;
    fn run(&mut self, ir: &mut FunctionIR, typing: &mut TypingResult) -> Result<(), ParforError>;
}
