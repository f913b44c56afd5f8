//! Function passes and the pass manager.
//!
//! A [`FunctionPass`] transforms one function's IR in place. The [`PassManager`] runs a
//! sequence of them, verifies the IR after each one when asked (on by default in debug and
//! test builds), and times each pass; with `NUMBA_RS_PASS_TIMINGS=1` in the environment it
//! prints the timings to stderr after the run.

use std::time::{Duration, Instant};

use crate::ir::FunctionIR;
use crate::verify::{verify, VerifyError};

/// A transformation of one function's IR.
pub trait FunctionPass {
    /// A short unique name, used in reports and errors.
    fn name(&self) -> &str;

    /// Whether the pass may add, remove or rewire blocks (analyses cached across passes
    /// must be recomputed after such a pass).
    fn mutates_cfg(&self) -> bool {
        false
    }

    /// Run on `ir`; returns whether anything changed.
    fn run(&mut self, ir: &mut FunctionIR) -> Result<bool, PassError>;
}

/// Why a pass run failed.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pass itself gave up.
    #[error("pass '{pass}' failed: {message}")]
    Failed { pass: String, message: String },
    /// The user's code: a construct the pass does not support, or a call that does not
    /// match its callee (with the kind of error and the line).
    #[error("{error}")]
    Code { pass: String, error: crate::IrError },
    /// The IR no longer verifies after the pass.
    #[error("IR does not verify after pass '{pass}': {}", .errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))]
    Verify {
        pass: String,
        errors: Vec<VerifyError>,
    },
}

/// What a run did: per pass, whether it changed the IR and how long it took.
#[derive(Debug, Clone, Default)]
pub struct PassReport {
    pub entries: Vec<PassRun>,
}

#[derive(Debug, Clone)]
pub struct PassRun {
    pub name: String,
    pub changed: bool,
    pub mutates_cfg: bool,
    pub elapsed: Duration,
}

impl PassReport {
    /// A table of the timings, one pass per line.
    pub fn timings(&self) -> String {
        let mut out = String::from("pass                            changed   time (us)\n");
        for e in &self.entries {
            out.push_str(&format!(
                "{:<32}{:<10}{:>9.1}\n",
                e.name,
                if e.changed { "yes" } else { "no" },
                e.elapsed.as_secs_f64() * 1e6
            ));
        }
        out
    }
}

/// Runs passes in order.
pub struct PassManager {
    passes: Vec<Box<dyn FunctionPass>>,
    verify: bool,
}

impl Default for PassManager {
    fn default() -> Self {
        Self::new()
    }
}

impl PassManager {
    /// An empty manager; verification between passes is on in debug builds.
    pub fn new() -> Self {
        PassManager {
            passes: Vec::new(),
            verify: cfg!(debug_assertions),
        }
    }

    pub fn add(&mut self, pass: impl FunctionPass + 'static) -> &mut Self {
        self.passes.push(Box::new(pass));
        self
    }

    /// Turn verification after each pass on or off.
    pub fn verify_between(&mut self, on: bool) -> &mut Self {
        self.verify = on;
        self
    }

    pub fn names(&self) -> Vec<&str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    pub fn run(&mut self, ir: &mut FunctionIR) -> Result<PassReport, PassError> {
        let mut report = PassReport::default();
        for pass in &mut self.passes {
            let start = Instant::now();
            let changed = pass.run(ir)?;
            let elapsed = start.elapsed();
            report.entries.push(PassRun {
                name: pass.name().to_string(),
                changed,
                mutates_cfg: pass.mutates_cfg(),
                elapsed,
            });
            if self.verify {
                verify(ir).map_err(|errors| PassError::Verify {
                    pass: pass.name().to_string(),
                    errors,
                })?;
            }
        }
        if std::env::var("NUMBA_RS_PASS_TIMINGS").is_ok_and(|v| !v.is_empty() && v != "0") {
            eprint!("{}", report.timings());
        }
        Ok(report)
    }
}
