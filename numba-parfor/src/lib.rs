//! # numba-parfor
//!
//! Automatic parallelisation (`parallel=True`, seed 001 stage 5), on typed IR and without
//! LLVM: loops and array operations become `parfor` statements ([`node::Parfor`], an
//! extension node of numba-ir that dumps itself as Numba's `---begin parfor N---`), and
//! each parfor's body becomes a kernel function of its own ([`kernel::build_kernel`]),
//! typed IR that a back end lowers and runs on a thread pool (numba-lower's parallel
//! target, numba-nrt's pool).
//!
//! Implemented: `prange` and `pndindex` loops to parfors ([`prange`]), with reductions
//! over scalars and arrays (`+ - * /` and their in-place forms, `min`/`max` of scalars;
//! Numba's ValueError for floor division and for any other use of an accumulator), race
//! detection with Numba's `NumbaParallelSafetyWarning`, nested `prange` run serially
//! inside the outer parfor, the `parallel={...}` options ([`ParforOptions`]), Numba's
//! `NUMBA_DEBUG_ARRAY_OPT_STATS` lines ([`ParforReport`]).
//!
//! Array expressions, whole-array `sum`/`prod`/`mean`/`min`/`max`/`argmin`/`argmax`/
//! `var`/`std`, `np.zeros`/`np.ones`/`np.arange`/`np.linspace`/`a.fill`, `numpy.random`
//! draws with a size, stores into views and through masks (`setitem`) and `a op= b` on
//! arrays (`inplace_binop`) become parfors ([`numpy`]). After the conversion the blocks
//! joined by jumps are merged (Numba's `simplify_CFG`), and adjacent parfors over equal
//! iteration spaces fuse: NumPy ones by shape classes (`fusion`), `prange` loops when
//! neither has a cross-iteration dependence (`loop_fusion`, Numba's
//! `has_cross_iter_dep`). The array expressions and reductions of a parallel loop's body
//! become parfors nested in the loop's (`nest`), converted and fused the same way and
//! run serially inside each division.
//!
//! Shape classes live in [`shapes`] (Numba's array analysis, the part fusion needs).
//!
//! Not yet: shape classes through slicing, fusing N-d `prange` nests with N-d NumPy
//! parfors, stencils as parfors of their caller. [`ParforStage`] names
//! every stage of seed 001; [`ParforPass`] is the interface each implements.
//!
//! # Example
//!
//! `total = 0; for i in prange(n): total += i; return total` (the fixture's `range` bound
//! to `prange` through its globals) becomes one parfor over `(0, n, 1)` with a `+`
//! reduction into `total`, after the front end's passes up to type inference.
//!
//! ```rust
//! use std::collections::HashMap;
//!
//! use numba_ir::{Global, GlobalKind, Stmt};
//! use numba_parfor::{Parfor, ParforOptions, RedOp};
//! use numba_typeinfer::types::INT64;
//! use numba_typeinfer::{infer, BaseContext, CallOutcome, CalleeResolver, TypeId};
//! # struct NoCallees;
//! # impl CalleeResolver for NoCallees {
//! #     fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
//! #         Err("no callees".into())
//! #     }
//! # }
//!
//! let blob = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../tests/fixtures/blobs/frontend.for_range_sum.marshal"
//! ))?;
//! let prange = Global {
//!     kind: GlobalKind::ModuleFunction {
//!         module: "numba_rs".into(),
//!         name: "prange".into(),
//!     },
//!     repr: "<class 'numba_rs.parallel.prange'>".into(),
//! };
//! let globals = HashMap::from([("range".to_string(), prange)]);
//! let code = numba_bytecode::marshal::read_code(&blob)?;
//! let mut ir = numba_ir::compile_to_ir(code, &globals)?;
//! numba_ir::ssa::reconstruct_ssa(&mut ir)?;
//! let mut typing = infer(&ir, &[INT64], &BaseContext::default(), &NoCallees, None)?;
//! numba_ir::prune::strip_phis(&mut ir);
//!
//! let report = numba_parfor::run(&mut ir, &mut typing, &ParforOptions::ALL)?;
//! assert_eq!(report.produced.len(), 1);
//! let parfors: Vec<Parfor> = ir
//!     .blocks
//!     .values()
//!     .flat_map(|b| &b.body)
//!     .filter_map(|inst| match &inst.stmt {
//!         Stmt::Extension(node) => Parfor::from_node(node),
//!         _ => None,
//!     })
//!     .collect();
//! assert_eq!(parfors.len(), 1);
//! assert_eq!(parfors[0].reductions[0].op, RedOp::Add);
//! assert!(ir.dump().contains("range = (0, n, 1))"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod asserts;
pub mod dead;
mod fusion;
pub mod hoist;
pub mod kernel;
mod loop_fusion;
mod nest;
pub mod node;
pub mod numpy;
pub mod prange;
pub mod shapes;

use std::sync::atomic::{AtomicUsize, Ordering};

use numba_ir::FunctionIR;
use numba_typeinfer::TypingResult;
use thiserror::Error;

pub use kernel::{build_kernel, Kernel};
pub use node::{Bound, LoopNest, Parfor, RedOp, Reduction, PARFOR};

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
    /// A construct `parallel=True` rejects, as Numba does.
    #[error("{message}")]
    Unsupported { message: String, line: u32 },
    /// A loop Numba rejects with a `ValueError` (`NumbaValueError`): an accumulator used
    /// by something other than a supported reduction, a floor-division reduction.
    #[error("{message}")]
    Value { message: String, line: u32 },
}

/// One parfor stage over typed IR.
pub trait ParforPass {
    fn stage(&self) -> ParforStage;
    fn run(&mut self, ir: &mut FunctionIR, typing: &mut TypingResult) -> Result<(), ParforError>;
}

/// Numba's `parallel=` options: `True` turns every transformation on; a dict switches
/// them one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParforOptions {
    pub comprehension: bool,
    pub prange: bool,
    pub numpy: bool,
    pub reduction: bool,
    /// `a op= b` on arrays (Numba's `ConvertInplaceBinop`).
    pub inplace_binop: bool,
    pub setitem: bool,
    pub stencil: bool,
    pub fusion: bool,
    /// Keep the IR between the stages in [`ParforReport::dumps`] (what
    /// `NUMBA_DEBUG_ARRAY_OPT` prints); not one of Numba's `parallel=` names.
    pub dump_stages: bool,
}

impl ParforOptions {
    /// `parallel=True`.
    pub const ALL: ParforOptions = ParforOptions {
        comprehension: true,
        prange: true,
        numpy: true,
        reduction: true,
        inplace_binop: true,
        setitem: true,
        stencil: true,
        fusion: true,
        dump_stages: false,
    };

    /// The names a `parallel={...}` dict may use.
    pub const NAMES: [&'static str; 8] = [
        "comprehension",
        "prange",
        "numpy",
        "reduction",
        "inplace_binop",
        "setitem",
        "stencil",
        "fusion",
    ];

    /// From `(name, enabled)` pairs (Numba's `ParallelOptions` from a dict: a missing
    /// name defaults to on); an unknown name is an error naming it.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, bool)>,
    ) -> Result<ParforOptions, String> {
        let mut o = ParforOptions::ALL;
        for (k, on) in pairs {
            let slot = match k {
                "comprehension" => &mut o.comprehension,
                "prange" => &mut o.prange,
                "numpy" => &mut o.numpy,
                "reduction" => &mut o.reduction,
                "inplace_binop" => &mut o.inplace_binop,
                "setitem" => &mut o.setitem,
                "stencil" => &mut o.stencil,
                "fusion" => &mut o.fusion,
                other => return Err(format!("Unrecognized parallel option: {other}")),
            };
            *slot = on;
        }
        Ok(o)
    }
}

/// A warning the parfor stages raise (category as Numba names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParforWarning {
    pub category: &'static str,
    pub message: String,
    pub line: u32,
}

/// What the stages did, for `NUMBA_DEBUG_ARRAY_OPT_STATS` and `parallel_diagnostics`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParforReport {
    /// `(id, pattern, file, line)` of each parfor produced.
    pub produced: Vec<(usize, String, String, u32)>,
    /// Loops that looked parallel but were left serial, and why.
    pub notes: Vec<String>,
    pub warnings: Vec<ParforWarning>,
    /// `(fused, into)`: parfor `fused` became part of parfor `into`.
    pub fused: Vec<(usize, usize)>,
    /// `(parfor, line, function)`: an allocation each kernel makes once per division
    /// instead of every iteration ([`hoist`]).
    pub hoisted: Vec<(usize, u32, String)>,
    /// `(outer, inner)`: the parfors left (after fusion) in each parallel loop's body,
    /// which run serially inside each of its divisions ([`nest`]).
    pub nested: Vec<(usize, Vec<usize>)>,
    /// `(first, second, message)` of each fusion tried (Numba's `FusionReport`s: "-
    /// fusion succeeded: ..." or why it failed).
    pub fusion_reports: Vec<(usize, usize, String)>,
    /// `(stage, IR dump)` after the conversions, fusion and clean-up, when
    /// [`ParforOptions::dump_stages`] asks (Numba's `dprint_func_ir` titles).
    pub dumps: Vec<(String, String)>,
    /// `id -> (blocks in the loop, header)` of each parfor made from a loop: Numba
    /// converts loops smallest first (inner before outer), which its numbering follows.
    loop_sizes: std::collections::HashMap<usize, (usize, numba_ir::Label)>,
}

impl ParforReport {
    fn produced(&mut self, id: usize, pattern: &str, file: &str, line: u32) {
        self.produced
            .push((id, pattern.to_string(), file.to_string(), line));
    }

    fn note(&mut self, s: String) {
        self.notes.push(s);
    }

    fn warn(&mut self, category: &'static str, message: String, line: u32) {
        self.warnings.push(ParforWarning {
            category,
            message,
            line,
        });
    }

    /// Numba's `NUMBA_DEBUG_ARRAY_OPT_STATS` lines for function `name`.
    pub fn stats_text(&self, name: &str) -> String {
        let mut out = String::new();
        for (id, pattern, file, line) in &self.produced {
            out.push_str(&format!(
                "Parallel for-loop #{id} is produced from pattern '{pattern}' at {file} ({line})\n"
            ));
        }
        for (from, into) in &self.fused {
            out.push_str(&format!(
                "Parallel for-loop #{from} is fused into for-loop #{into}.\n"
            ));
        }
        // Numba prints the count of nested loops where its format has a `#`.
        for (outer, inner) in &self.nested {
            out.push_str(&format!(
                "After fusion, parallel for-loop {outer} has nested Parfor(s) #{}.\n",
                inner.len()
            ));
        }
        let nested: Vec<usize> = self
            .nested
            .iter()
            .flat_map(|n| n.1.iter().copied())
            .collect();
        let ids: Vec<String> = self
            .produced
            .iter()
            .map(|p| p.0)
            .filter(|id| !self.fused.iter().any(|f| f.0 == *id) && !nested.contains(id))
            .map(|id| id.to_string())
            .collect();
        if ids.is_empty() {
            out.push_str(&format!("Function {name} has no Parfor.\n"));
        } else {
            out.push_str(&format!(
                "After fusion, function {name} has {} parallel for-loop(s) #{{{}}}.\n",
                ids.len(),
                ids.join(", ")
            ));
        }
        out
    }
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

/// Parfor ids are unique in the process, as Numba's class counter makes them.
pub(crate) fn next_parfor_id() -> usize {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Numba's numbering: its conversions run setitem first, then NumPy, then loops, so the
/// parfors made from stores take the first ids of the function, those from other NumPy
/// code the next and the `prange` loops the last (numba-rs converts the loops first, so
/// that NumPy code inside a loop body stays in it, and stores with the NumPy code). The
/// ids are reassigned from the same pool.
fn renumber(
    ir: &mut FunctionIR,
    report: &mut ParforReport,
    gen: &mut numpy::Generated,
    from_loops: usize,
) {
    let made: Vec<usize> = report.produced.iter().map(|p| p.0).collect();
    let store = |k: &usize| report.produced[*k].1 == numpy::SETITEM_PATTERN;
    let numpy_made = from_loops..made.len();
    let mut loops: Vec<usize> = (0..from_loops).collect();
    loops.sort_by_key(|&k| loop_key(report, made[k]));
    let order: Vec<usize> = numpy_made
        .clone()
        .filter(store)
        .chain(numpy_made.filter(|k| !store(k)))
        .chain(loops)
        .map(|k| made[k])
        .collect();
    if order == made {
        return;
    }
    let new = reassign_ids(ir, report, &order);
    gen.elementwise = gen.elementwise.iter().map(|&id| new(id)).collect();
    gen.random = gen.random.iter().map(|&id| new(id)).collect();
}

/// Where Numba's loop conversion takes the loop parfor `id`: smallest loop first, then
/// in the order of their headers.
fn loop_key(report: &ParforReport, id: usize) -> (usize, numba_ir::Label) {
    report
        .loop_sizes
        .get(&id)
        .copied()
        .unwrap_or((usize::MAX, 0))
}

/// Give the parfors `order` lists the ids the report holds, sorted (the first in `order`
/// the smallest), everywhere the report and the IR (nested bodies too) name them.
/// Returns the renaming.
fn reassign_ids(
    ir: &mut FunctionIR,
    report: &mut ParforReport,
    order: &[usize],
) -> impl Fn(usize) -> usize {
    let mut pool: Vec<usize> = report.produced.iter().map(|p| p.0).collect();
    pool.sort_unstable();
    let map: std::collections::HashMap<usize, usize> = order.iter().copied().zip(pool).collect();
    let new = move |id: usize| map.get(&id).copied().unwrap_or(id);
    for p in &mut report.produced {
        p.0 = new(p.0);
    }
    report.produced.sort_by_key(|p| p.0);
    for f in &mut report.fused {
        *f = (new(f.0), new(f.1));
    }
    for f in &mut report.fusion_reports {
        f.0 = new(f.0);
        f.1 = new(f.1);
    }
    for (outer, inner) in &mut report.nested {
        *outer = new(*outer);
        for i in inner.iter_mut() {
            *i = new(*i);
        }
        inner.sort_unstable();
    }
    for h in &mut report.hoisted {
        h.0 = new(h.0);
    }
    report.loop_sizes = report
        .loop_sizes
        .iter()
        .map(|(&id, &v)| (new(id), v))
        .collect();
    fn walk(
        blocks: &mut std::collections::BTreeMap<numba_ir::Label, numba_ir::Block>,
        new: &dyn Fn(usize) -> usize,
    ) {
        for block in blocks.values_mut() {
            for inst in &mut block.body {
                if let numba_ir::Stmt::Extension(n) = &mut inst.stmt {
                    if let Some(mut pf) = node::Parfor::from_node(n) {
                        pf.id = new(pf.id);
                        walk(&mut pf.loop_body, new);
                        **n = pf.to_node();
                    }
                }
            }
        }
    }
    walk(&mut ir.blocks, &new);
    new
}

/// Numba's numbering once loop bodies have parfors of their own ([`nest`]): Numba
/// converts NumPy code before loops, so a body's NumPy parfors take ids before the loop
/// around them, in source order with the function's other NumPy parfors; and loops
/// smallest first, so a `prange` nested in another takes an id before it. Every id the
/// report and the IR hold is reassigned from the same pool.
fn renumber_nested(ir: &mut FunctionIR, report: &mut ParforReport) {
    if report.nested.is_empty() {
        return;
    }
    let group = |pattern: &str| {
        if pattern == numpy::SETITEM_PATTERN {
            0
        } else if pattern.starts_with("('prange', 'user'")
            || pattern.starts_with("('prange', 'pndindex'")
            || pattern.contains("array comprehension")
        {
            2
        } else {
            1
        }
    };
    // NumPy parfors by line, loops as Numba converts them (smallest first: a loop
    // nested in another before it), then as produced.
    // (group, line, conversion order, position produced, id)
    type Key = (u8, u32, (usize, numba_ir::Label), usize, usize);
    let mut order: Vec<Key> = report
        .produced
        .iter()
        .enumerate()
        .map(|(k, (id, pattern, _, line))| {
            let g = group(pattern);
            let at = if g == 2 {
                loop_key(report, *id)
            } else {
                (0, 0)
            };
            (g, if g == 1 { *line } else { 0 }, at, k, *id)
        })
        .collect();
    order.sort_unstable();
    let order: Vec<usize> = order.iter().map(|o| o.4).collect();
    let _ = reassign_ids(ir, report, &order);
}

/// Run the implemented parfor stages on typed IR (phis stripped, rewrites applied).
pub fn run(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    options: &ParforOptions,
) -> Result<ParforReport, ParforError> {
    let mut report = ParforReport::default();
    if ir.is_generator {
        return Ok(report);
    }
    // Numba's array analysis: the size assertions before joining and `dot` calls.
    asserts::insert(ir, typing);
    if options.prange {
        prange::convert(ir, typing, &mut report, options.reduction)?;
    }
    let from_loops = report.produced.len();
    let mut gen = numpy::Generated::default();
    if options.numpy || options.setitem || options.inplace_binop {
        numpy::convert(ir, typing, &mut report, &mut gen, options, false)?;
    }
    renumber(ir, &mut report, &mut gen, from_loops);
    let dump = |report: &mut ParforReport, ir: &FunctionIR, stage: &str| {
        if options.dump_stages {
            report.dumps.push((stage.to_string(), ir.dump()));
        }
    };
    dump(&mut report, ir, "after parfor pass");
    // Numba's simplify_CFG: a converted loop leaves a chain of blocks joined by jumps
    // (the parfor, then the next loop's set-up); fusion looks within one block.
    numba_ir::utils::merge_blocks(ir);
    if options.fusion {
        fusion::fuse(ir, typing, &gen, &mut report);
        dump(&mut report, ir, "after fusion");
    }
    if options.numpy {
        dead::remove_dead_arrays(ir, typing, &Default::default());
    }
    if options.numpy || options.prange {
        // Loops and NumPy code inside parallel loops: parfors nested in the loop's, run
        // serially.
        nest::convert_bodies(ir, typing, &mut report, options)?;
        renumber_nested(ir, &mut report);
    }
    dump(&mut report, ir, "after optimization");
    // What the kernels will hoist (`kernel::build_kernel` applies the same plan).
    for block in ir.blocks.values() {
        for inst in &block.body {
            if let numba_ir::Stmt::Extension(n) = &inst.stmt {
                if let Some(pf) = node::Parfor::from_node(n) {
                    for (_, func, line) in hoist::plan(ir, typing, &pf).hoisted {
                        report.hoisted.push((pf.id, line, func));
                    }
                }
            }
        }
    }
    if report.produced.is_empty() {
        report.warn(
            "NumbaPerformanceWarning",
            "\nThe keyword argument 'parallel=True' was specified but no transformation for parallel execution was possible.\n\nTo find out why, try turning on parallel diagnostics, see https://numba.readthedocs.io/en/stable/user/parallel.html#diagnostics for help.".into(),
            ir.firstlineno,
        );
    }
    Ok(report)
}
