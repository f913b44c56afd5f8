//! The nopython pipeline: Numba 0.68's pass order (numba-facts §0), each stage named and
//! timed.
//!
//! Untyped: `translate_bytecode`, `ir_processing`, `with_lifting` (`numba_ir::withlift`;
//! each `objmode` body becomes a dispatcher compiled in object mode),
//! `inline_closure_likes`,
//! `make_function_op_code_to_jit_function`, `omitted_arguments` (an argument left to its
//! default becomes the default's constant; Numba does this while typing and lowering),
//! `rewrite_semantic_constants`,
//! `dead_branch_prune`, `generic_rewrites`, `reconstruct_ssa`; typed:
//! `nopython_type_inference`, `strip_phis`, `nopython_rewrites`, `ir_legalization`;
//! lowering: `native_lowering`, `llvm_optimise` (reference-count pruning and O3, see
//! `numba_lower::refprune`), `llvm_jit`. The IR is verified between
//! passes in debug builds (and with `NUMBA_RS_VERIFY=1` in release).
//! `NUMBA_DEBUG_PRINT_AFTER=pass1,pass2` (or `all`) prints the IR after those passes.
//! Not run yet, because what they handle is not supported yet: literal unrolling,
//! literal propagation. Numba's `FixupArgs` check (argument count) is made by
//! type inference, with Numba's message.

use std::time::{Duration, Instant};

use numba_bytecode::CodeObject;
use numba_ir::passes::{FunctionPass, PassError};
use numba_ir::prune::{dead_branch_prune, prune_phi_incoming, strip_phis, ArgNone};
use numba_ir::{FunctionIR, GlobalResolver, IrError, Stmt};
use numba_lower::{
    CompiledFunction, CpuTarget, ErrorModel, LinkedFunctions, LowerError, LowerOptions,
    RefPruneFlags, TargetContext,
};
use numba_rewrite::{Phase, RewriteRegistry};
use numba_typeinfer::types::{Type, NONE};
use numba_typeinfer::{BaseContext, CallOutcome, CalleeResolver, TypeId, TypingError, UFuncLoop};
use std::sync::atomic::AtomicUsize;

use crate::error::{CompileError, ErrorKind};
use crate::InlineOption;

/// Everything a compilation is done with: the typing context, the rewrites and the code
/// target. A dispatcher holds one as a value.
pub struct Target {
    pub typing: BaseContext,
    pub rewrites: RewriteRegistry,
    pub cpu: CpuTarget,
    /// The cuda target, made on first use over the CPU registry (with any user
    /// extensions registered by then).
    cuda: std::sync::OnceLock<numba_lower::cuda::CudaTarget>,
}

impl Target {
    /// The cuda target.
    pub fn cuda(&self) -> &numba_lower::cuda::CudaTarget {
        self.cuda.get_or_init(|| {
            numba_lower::cuda::CudaTarget::from_registry(self.cpu.registry().clone())
        })
    }
}

impl Default for Target {
    fn default() -> Self {
        Target {
            typing: BaseContext::default(),
            rewrites: RewriteRegistry::with_builtins(),
            cpu: CpuTarget::new(),
            cuda: std::sync::OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("cpu", &self.cpu.name())
            .finish()
    }
}

/// Options of one compilation.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// The dispatcher being compiled, for recursion and the symbol's unique id.
    pub dispatcher_id: Option<u64>,
    /// An explicit return type (from a signature string); the result is converted to it.
    pub return_type: Option<TypeId>,
    /// The Python module of the function (`__main__`).
    pub module: String,
    /// Fast-math flags (`numba_lower::fastmath`).
    pub fastmath: u32,
    pub error_model: ErrorModel,
    /// `boundscheck=`: None leaves it to `NUMBA_BOUNDSCHECK`.
    pub boundscheck: Option<bool>,
    /// The default values of the trailing parameters: an argument typed
    /// `omitted(default=...)` is that default, a constant (Numba's `OmittedArg`).
    pub defaults: Vec<numba_bytecode::Constant>,
    /// Keep the `REWRITING` trace (what `NUMBA_DUMP_IR` prints of the rewrites) in
    /// [`CompiledFunction::rewrite_trace`].
    pub rewrite_trace: bool,
    /// `parallel=True` (or a dict of options): run the parfor stages.
    pub parallel: Option<numba_parfor::ParforOptions>,
    /// Foreign entry points to build (vectorize, guvectorize, cfunc).
    pub wrappers: numba_lower::Wrappers,
    /// Declared types of local variables (`locals=`).
    pub locals: Vec<(String, TypeId)>,
    /// Whether the function compiles in object mode (`forceobj=True`).
    pub object_mode: ObjectMode,
    /// `looplift=False`: object mode keeps every loop.
    pub no_looplift: bool,
    /// `nogil=True`: each `with objmode` block gets Numba's warning that it keeps the GIL.
    pub nogil: bool,
    /// Compiled only to be called from other compiled code (an overload's
    /// implementation, as Numba's `no_cpython_wrapper`): a result Python could not
    /// receive is no error here.
    pub no_cpython_wrapper: bool,
    /// `_nrt=False`: as Numba without its runtime, a function may return an array only
    /// when it is one of its arguments (numba-rs still manages memory with the NRT
    /// inside; the difference Numba shows is that error).
    pub no_nrt: bool,
    /// `no_rewrites=True`: Numba's flag turning its rewrites off. numba-rs skips the
    /// typed rewrites (array expressions stay separate operations, each a NumPy-like
    /// loop), the ones Numba's flag changes the generated code by; the untyped
    /// canonicalisations (constant-index getitems, raises, `print`) are how numba-rs
    /// reads those constructs and stay.
    pub no_rewrites: bool,
    /// The code generator: the host or a CUDA device.
    pub code_target: crate::CodeTarget,
}

/// Whether a function is compiled in object mode. Since Numba 0.59 nothing falls back to
/// object mode: only `@jit(forceobj=True)` asks for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ObjectMode {
    /// nopython (`@njit`, `@jit`).
    #[default]
    Never,
    /// Object mode (`@jit(forceobj=True)`).
    Force,
}

struct Registry;

thread_local! {
    /// Return types published by functions being typed on this thread, for the callers
    /// a mutual recursion compiles before they finish.
    static PARTIAL_RETURNS: std::cell::RefCell<std::collections::HashMap<(u64, Vec<TypeId>), TypeId>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

impl CalleeResolver for Registry {
    fn resolve_call(&self, id: u64, args: &[TypeId]) -> Result<CallOutcome, String> {
        let d =
            crate::lookup_dispatcher(id).ok_or_else(|| format!("unknown jitted function #{id}"))?;
        if let Some(w) = d.objmode_with() {
            return objmode_call(&d, w, args);
        }
        if d.in_progress(args) {
            let partial = PARTIAL_RETURNS.with(|p| p.borrow().get(&(id, args.to_vec())).copied());
            return Ok(match partial {
                Some(r) => CallOutcome::Resolved(r),
                None => CallOutcome::InProgress,
            });
        }
        let c = match d.resolve(args) {
            Err(e) if !e.force_literal.is_empty() => {
                return Ok(CallOutcome::ForceLiteral(e.force_literal));
            }
            other => other,
        };
        let c = c.map_err(|e| {
            if e.kind == ErrorKind::Dispatch {
                // Numba's wording for a jitted callee that accepts none of the argument
                // types (compiling disabled by explicit signatures), then the reason.
                let params: Vec<String> = args.iter().map(|t| t.to_string()).collect();
                format!(
                    "Invalid use of type(CPUDispatcher({})) with parameters ({})\n{}",
                    d.display(),
                    params.join(", "),
                    e.message
                )
            } else {
                e.to_string()
            }
        })?;
        // A specialisation chosen by converting the arguments (explicit signatures) is
        // called with its own argument types. A compiled one is for `args` themselves,
        // however it records them (omitted arguments, literals).
        if !d.compiles_on_demand() && c.arg_types.as_slice() != args {
            return Ok(CallOutcome::Converted {
                ret: c.return_type,
                args: c.arg_types.clone(),
            });
        }
        Ok(CallOutcome::Resolved(c.return_type))
    }

    fn parameters(&self, id: u64) -> Option<numba_typeinfer::context::Parameters> {
        crate::lookup_dispatcher(id)?.parameters()
    }

    fn literal_args(&self, id: u64) -> numba_typeinfer::extension::LiteralArgs {
        crate::lookup_dispatcher(id)
            .map(|d| d.literal_args())
            .unwrap_or_default()
    }

    fn resolve_ufunc(&self, id: u64, args: &[TypeId]) -> Result<UFuncLoop, String> {
        let u = crate::lookup_ufunc(id).ok_or_else(|| format!("unknown ufunc #{id}"))?;
        let l = u.select_loop(args)?;
        // The kernel is compiled for the loop's types before the caller is lowered.
        match self.resolve_call(l.kernel, &l.args)? {
            CallOutcome::Resolved(_) | CallOutcome::Converted { .. } => Ok(l),
            CallOutcome::InProgress => {
                Err("a ufunc's kernel cannot call the ufunc itself".to_string())
            }
            CallOutcome::ForceLiteral(_) => {
                Err("a ufunc's kernel cannot ask for literal arguments".to_string())
            }
        }
    }

    fn publish_return(&self, id: u64, args: &[TypeId], ret: TypeId) {
        PARTIAL_RETURNS.with(|p| p.borrow_mut().insert((id, args.to_vec()), ret));
    }
}

/// A call of a `with objmode(...)` body from its nopython function: every input must
/// box to a Python object; the body compiles in object mode now (its errors are the
/// caller's), and the call gives the declared outputs.
fn objmode_call(
    d: &crate::Dispatcher,
    w: &crate::ObjModeWith,
    args: &[TypeId],
) -> Result<CallOutcome, String> {
    for (i, &a) in args.iter().enumerate() {
        if matches!(
            a.get(),
            Type::Dispatcher { .. } | Type::Function(_) | Type::UFunc { .. }
        ) {
            return Err(format!(
                "Does not support function type inputs into with-context for arg {}",
                i + 1
            ));
        }
        if let Err(e) = numba_lower::boundary_shape(a) {
            return Err(format!(
                "numba-rs cannot box a value of type {a} into object mode yet (arg {}): {e}",
                i + 1
            ));
        }
    }
    if let Some(prev) = w.native_args.get() {
        if prev.as_slice() != args {
            return Err("an objmode block called with other argument types".into());
        }
    } else {
        let _ = w.native_args.set(args.to_vec());
    }
    let objects = vec![numba_typeinfer::types::PYOBJECT; args.len()];
    d.resolve(&objects).map_err(|e| {
        format!(
            "During: resolving callee type: type(ObjModeLiftedWith({}))\n{}",
            d.display(),
            e
        )
    })?;
    Ok(CallOutcome::Resolved(w.outputs))
}

impl LinkedFunctions for Registry {
    fn objmode_with(&self, id: u64) -> bool {
        crate::lookup_dispatcher(id).is_some_and(|d| d.objmode_with().is_some())
    }

    fn native_address(&self, id: u64, args: &[TypeId]) -> Option<usize> {
        crate::lookup_dispatcher(id)?.lookup(args).map(|c| c.native)
    }

    fn library(&self, id: u64, args: &[TypeId]) -> Option<numba_lower::Library> {
        let c = crate::lookup_dispatcher(id)?.lookup(args)?;
        Some(numba_lower::Library {
            symbol: c.symbol.clone(),
            ir: c.optimized_ir.arc(),
            frozen: c.frozen_data.clone(),
        })
    }

    fn native_slot(&self, id: u64, args: &[TypeId]) -> Option<usize> {
        let d = crate::lookup_dispatcher(id)?;
        d.in_progress(args)
            .then(|| d.native_slot(args) as *const AtomicUsize as usize)
    }
}

pub(crate) fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A pass from a closure.
struct Pass<F> {
    name: &'static str,
    cfg: bool,
    run: F,
}

impl<F: FnMut(&mut FunctionIR) -> Result<bool, String>> FunctionPass for Pass<F> {
    fn name(&self) -> &str {
        self.name
    }
    fn mutates_cfg(&self) -> bool {
        self.cfg
    }
    fn run(&mut self, ir: &mut FunctionIR) -> Result<bool, PassError> {
        (self.run)(ir).map_err(|message| PassError::Failed {
            pass: self.name.to_string(),
            message,
        })
    }
}

/// A pass from a closure whose failures are the user's code ([`IrError`], with its kind
/// and line).
struct CodePass<F> {
    name: &'static str,
    run: F,
}

impl<F: FnMut(&mut FunctionIR) -> Result<bool, IrError>> FunctionPass for CodePass<F> {
    fn name(&self) -> &str {
        self.name
    }
    fn mutates_cfg(&self) -> bool {
        true
    }
    fn run(&mut self, ir: &mut FunctionIR) -> Result<bool, PassError> {
        (self.run)(ir).map_err(|error| PassError::Code {
            pass: self.name.to_string(),
            error,
        })
    }
}

/// What `NUMBA_DEBUG_PRINT_AFTER` asks for.
fn print_after() -> Vec<String> {
    std::env::var("NUMBA_DEBUG_PRINT_AFTER")
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default()
}

fn maybe_print(ir: &FunctionIR, pass: &str, wanted: &[String]) {
    if wanted.iter().any(|w| w == pass || w == "all") {
        println!(
            "{}",
            numba_ir::center(&format!("nopython: {pass}"), 80, '-')
        );
        print!("{}", ir.dump());
    }
}

/// Run IR passes in order, timing each, printing the IR after those
/// `NUMBA_DEBUG_PRINT_AFTER` names, and verifying it after each in debug builds (or with
/// `NUMBA_RS_VERIFY=1`), as numba-ir's `PassManager` does.
fn run_passes(
    ir: &mut FunctionIR,
    passes: Vec<Box<dyn FunctionPass + '_>>,
    times: &mut Vec<(String, Duration)>,
    wanted: &[String],
) -> Result<(), PassError> {
    let verify = cfg!(debug_assertions) || env_flag("NUMBA_RS_VERIFY");
    for mut pass in passes {
        let start = Instant::now();
        pass.run(ir)?;
        times.push((pass.name().to_string(), start.elapsed()));
        if verify {
            numba_ir::verify::verify(ir).map_err(|errors| PassError::Verify {
                pass: pass.name().to_string(),
                errors,
            })?;
        }
        maybe_print(ir, pass.name(), wanted);
    }
    Ok(())
}

/// A type inference failure as the compile error the user sees (the caller adds where).
fn typing_error(e: TypingError) -> CompileError {
    let (kind, line) = match &e {
        TypingError::Typing { line, .. } | TypingError::ForceLiteral { line, .. } => {
            (ErrorKind::Typing, *line)
        }
        TypingError::Unsupported { line, .. } | TypingError::StarArgs { line, .. } => {
            (ErrorKind::Unsupported, *line)
        }
    };
    let mut err = CompileError::new(kind, e.to_string());
    err.line = Some(line);
    if let TypingError::ForceLiteral { args, .. } = &e {
        err.force_literal = args.clone();
    }
    err
}

/// Rounds of overload inlining (an implementation inlining itself) before giving up.
const OVERLOAD_ROUNDS: usize = 32;

/// Numba's `InlineOverloads`, after typing and phi stripping: each call of an overload
/// whose chosen implementation has `inline='always'` (or a cost model saying yes) is
/// replaced by the implementation's IR, after its own untyped passes for the call's
/// argument types, and the function is typed again. Whether anything was inlined.
fn inline_overloads(
    ir: &mut FunctionIR,
    typing: &mut numba_typeinfer::TypingResult,
    front: &Frontend<'_>,
    ctx: &dyn numba_typeinfer::TypingContext,
    times: &mut Vec<(String, Duration)>,
    type_ir: &dyn Fn(&mut FunctionIR) -> Result<numba_typeinfer::TypingResult, CompileError>,
) -> Result<bool, CompileError> {
    let here = locate(ir);
    let mut declined = std::collections::HashSet::new();
    let mut any = false;
    for round in 0.. {
        let sites = crate::inline::overload_sites(ir, typing, &declined);
        if sites.is_empty() {
            break;
        }
        if round == OVERLOAD_ROUNDS {
            let mut err = CompileError::new(
                ErrorKind::Unsupported,
                "too many nested overloads to inline (an implementation with \
                 inline='always' that calls itself?)",
            );
            err.line = Some(ir.firstlineno);
            return Err(here(err));
        }
        let mut changed = false;
        for site in sites {
            let Some((label, index)) = crate::inline::find_assignment(ir, site.value) else {
                continue;
            };
            let d = &site.dispatcher;
            let (code, callee_globals) = d.source.load_for(&site.args).map_err(|m| {
                let mut err = CompileError::new(ErrorKind::Typing, m);
                err.line = Some(ir.blocks[&label].body[index].loc.line);
                here(err)
            })?;
            let npos = code.argcount as usize;
            let mut callee = translate(code, &*callee_globals)?;
            if let Some(star) = callee.star_param {
                // Numba's inliner binds positional and keyword arguments only.
                let mut err = CompileError::new(
                    ErrorKind::NotImplemented,
                    format!(
                        "Stararg not supported in inliner for arg {star} *{}",
                        callee.arg_names[star]
                    ),
                );
                err.line = Some(ir.blocks[&label].body[index].loc.line);
                return Err(here(err));
            }
            let defaults = d.parameters().map(|p| p.defaults).unwrap_or_default();
            let callee_front = Frontend {
                globals: &*callee_globals,
                typing: front.typing,
                options: front.options,
                run_rewrites: front.run_rewrites,
                objmode_lines: front.objmode_lines,
            };
            callee_front.untyped(&mut callee, &site.args, npos, &defaults, times)?;
            strip_phis(&mut callee);
            let Stmt::Assign { target, .. } = ir.blocks[&label].body[index].stmt else {
                unreachable!("find_assignment finds assignments")
            };
            if site.option == InlineOption::CostModel {
                let callee_typing =
                    numba_typeinfer::infer(&callee, &site.args, ctx, &Registry, None).ok();
                let verdict = d.source.overload_cost_model(&crate::TypedInlineSite {
                    caller: ir,
                    caller_types: &typing.typemap,
                    callee: &callee,
                    callee_types: callee_typing.as_ref().map(|t| t.typemap.as_slice()),
                    target,
                    args: &site.args,
                    ret: site.ret,
                });
                match verdict {
                    Ok(true) => {}
                    Ok(false) => {
                        declined.insert(site.value);
                        continue;
                    }
                    Err(m) => {
                        let mut err = CompileError::new(
                            ErrorKind::Typing,
                            format!("the inline cost model of '{}' failed: {m}", d.name),
                        );
                        err.line = Some(ir.blocks[&label].body[index].loc.line);
                        return Err(here(err));
                    }
                }
            }
            if !crate::inline::as_plain_call(ir, typing, label, index) {
                declined.insert(site.value);
                continue;
            }
            numba_ir::utils::inline_function_call(ir, label, index, &callee, &defaults)
                .map_err(|e| here(code_error(&e)))?;
            changed = true;
        }
        if !changed {
            break;
        }
        any = true;
        // The straight-line blocks the splices left are merged (Numba's simplify_CFG
        // after InlineOverloads). No dead-code elimination here: typing already fixed
        // what later passes read (a `static_getitem`'s index variable is not a use).
        numba_ir::utils::merge_blocks(ir);
        *typing = type_ir(ir)?;
    }
    Ok(any)
}

fn pass_error(e: PassError) -> CompileError {
    match e {
        // A pass gives up on a construct it cannot handle: the user's code.
        PassError::Failed { message, .. } => CompileError::new(ErrorKind::Unsupported, message),
        PassError::Code { error, .. } => code_error(&error),
        other => CompileError::new(ErrorKind::Internal, other.to_string()),
    }
}

/// The user's code rejected by an IR pass: a call that does not bind is a TypingError,
/// anything else unsupported, at the line the pass names.
fn code_error(error: &IrError) -> CompileError {
    let kind = match error {
        IrError::Typing { .. } => ErrorKind::Typing,
        _ => ErrorKind::Unsupported,
    };
    let mut err = CompileError::new(kind, error.to_string());
    err.line = error.line().filter(|&l| l > 0);
    err
}

/// What pruning may assume about each argument (an omitted one is its default).
fn arg_none(args: &[TypeId], npos: usize, defaults: &[numba_bytecode::Constant]) -> Vec<ArgNone> {
    args.iter()
        .enumerate()
        .map(|(i, &t)| match t.get() {
            Type::NoneType => ArgNone::IsNone,
            Type::Omitted(_) => match default_of(i, npos, defaults) {
                Some(numba_bytecode::Constant::None) => ArgNone::IsNone,
                Some(_) => ArgNone::NotNone,
                None => ArgNone::Unknown,
            },
            Type::Optional(_) => ArgNone::Unknown,
            _ => ArgNone::NotNone,
        })
        .collect()
}

/// The default of parameter `i` of the `n` positional ones when `defaults` are the
/// trailing ones'.
fn default_of(
    i: usize,
    n: usize,
    defaults: &[numba_bytecode::Constant],
) -> Option<&numba_bytecode::Constant> {
    let first = n.checked_sub(defaults.len())?;
    i.checked_sub(first).and_then(|j| defaults.get(j))
}

/// An argument typed `omitted(default=...)` reads as its default: each `arg(i)` of one
/// becomes that constant, so typing and lowering see the value (Numba types and lowers
/// `OmittedArg` the same way). The parameter stays in the signature as a ghost.
fn substitute_omitted(
    ir: &mut FunctionIR,
    args: &[TypeId],
    npos: usize,
    defaults: &[numba_bytecode::Constant],
) -> Result<bool, String> {
    use numba_ir::{Expr, Stmt};
    let mut found = Vec::new();
    for inst in ir.blocks.values().flat_map(|b| &b.body) {
        if let Stmt::Assign { value, .. } = inst.stmt {
            if let Expr::Arg { index, name } = ir.expr(value) {
                let i = *index as usize;
                if let Some(Type::Omitted(_)) = args.get(i).map(|t| t.get()) {
                    let c = default_of(i, npos, defaults).ok_or_else(|| {
                        format!("argument {name} is omitted but has no default value")
                    })?;
                    found.push((value, c.clone()));
                }
            }
        }
    }
    let changed = !found.is_empty();
    for (e, c) in found {
        ir.exprs[e.0 as usize] = Expr::Const(c);
    }
    Ok(changed)
}

/// Compile a code object for the given argument types, without any Python involved.
pub fn compile_function(
    code: CodeObject,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    options: &CompileOptions,
    target: &Target,
) -> Result<CompiledFunction, CompileError> {
    match options.object_mode {
        ObjectMode::Never => compile_nopython(code, globals, args, options, target),
        ObjectMode::Force => compile_object_mode(code, globals, args, options),
    }
}

/// Compile a code object in object mode (seed 001 stage 6b): the untyped IR, every
/// value a Python object, lowered to CPython API calls by `numba_lower::objmode`.
pub fn compile_object_mode(
    code: CodeObject,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    options: &CompileOptions,
) -> Result<CompiledFunction, CompileError> {
    let start = Instant::now();
    let ir = translate(code, globals)?;
    let times = vec![("translate_bytecode".into(), start.elapsed())];
    maybe_print(&ir, "translate_bytecode", &print_after());
    compile_object_mode_ir(ir, globals, args, options, !options.no_looplift, times)
}

/// The object-mode pipeline from untyped IR; `lift` extracts the loops that may type in
/// nopython mode (`numba_ir::looplift`) into [`ObjectEnv::lifted_ir`].
///
/// [`ObjectEnv::lifted_ir`]: numba_lower::objmode::ObjectEnv::lifted_ir
fn compile_object_mode_ir(
    mut ir: FunctionIR,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    options: &CompileOptions,
    lift: bool,
    mut times: Vec<(String, Duration)>,
) -> Result<CompiledFunction, CompileError> {
    let here = locate(&ir);
    let wanted = print_after();
    let start = Instant::now();
    numba_ir::postproc::run(&mut ir, false);
    if env_flag("NUMBA_DUMP_IR") {
        print!("{}", ir.dump_with_header());
    }
    times.push(("ir_processing".into(), start.elapsed()));
    maybe_print(&ir, "ir_processing", &wanted);
    let lifted = if lift {
        let start = Instant::now();
        let lifted = numba_ir::looplift::lift_loops(&mut ir);
        times.push(("object_mode_frontend".into(), start.elapsed()));
        lifted
    } else {
        Vec::new()
    };
    // Comprehensions and closures called where they are made are inlined after the
    // loops are lifted, in Numba's order (ObjectModeFrontEnd, then InlineClosureLikes):
    // a comprehension's loop is not lifted out of an object-mode function.
    numba_ir::utils::inline_closures(&mut ir, globals).map_err(|e| here(code_error(&e)))?;
    numba_ir::postproc::insert_dels(&mut ir);
    let lower_options = LowerOptions {
        self_id: options.dispatcher_id,
        uid: options.dispatcher_id.unwrap_or(0),
        module: module_of(options),
        dump_assembly: env_flag("NUMBA_DUMP_ASSEMBLY"),
        ..LowerOptions::default()
    };
    let mut compiled = numba_lower::objmode::compile(&ir, args, &lower_options)
        .map_err(|e| here(lower_error(e)))?;
    times.append(&mut compiled.timings);
    compiled.timings = times;
    if let Some(env) = compiled.object_env.as_mut() {
        env.lifted_ir = lifted;
    }
    // Nothing is typed: every value is a Python object (an empty typemap, which the
    // annotation prints as Numba does).
    let typing = numba_typeinfer::TypingResult {
        typemap: Vec::new(),
        calltypes: Default::default(),
        return_type: numba_typeinfer::types::PYOBJECT,
        arg_types: args.to_vec(),
        call_args: Default::default(),
        setitem_calls: Default::default(),
        delitem_calls: Default::default(),
        setattr_calls: Default::default(),
    };
    finish(&mut compiled, ir, typing);
    Ok(compiled)
}

/// Compile the body of a `with objmode(...)` block (its IR from `numba_ir::withlift`):
/// object mode, every argument a Python object, without loop lifting (Numba's
/// `ObjModeLiftedWith`).
pub fn compile_lifted_with(
    ir: FunctionIR,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    options: &CompileOptions,
) -> Result<CompiledFunction, CompileError> {
    compile_object_mode_ir(ir, globals, args, options, false, Vec::new())
}

/// Compile a loop lifted out of an object-mode function (its IR from
/// `numba_ir::looplift`): nopython when it types, else object mode without lifting, with
/// Numba's warning.
pub fn compile_lifted_loop(
    ir: FunctionIR,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    options: &CompileOptions,
    target: &Target,
) -> Result<CompiledFunction, CompileError> {
    let nopython = CompileOptions {
        object_mode: ObjectMode::Never,
        defaults: Vec::new(),
        ..options.clone()
    };
    let npos = ir.arg_names.len();
    match compile_nopython_ir(
        ir.clone(),
        globals,
        args,
        npos,
        &nopython,
        target,
        Vec::new(),
    ) {
        Err(e)
            if matches!(
                e.kind,
                ErrorKind::Typing | ErrorKind::Unsupported | ErrorKind::UnsupportedBytecode
            ) =>
        {
            let mut c = compile_object_mode_ir(ir, globals, args, options, false, Vec::new())?;
            c.warnings.push(numba_lower::CompileWarning {
                category: "NumbaWarning".into(),
                message: format!(
                    "\nCompilation is falling back to object mode WITHOUT looplifting enabled \
                     because Function \"{}\" failed type inference due to: {}",
                    e.function.as_deref().unwrap_or("?"),
                    e.message
                ),
                line: 0,
            });
            Ok(c)
        }
        other => other,
    }
}

/// Compile a code object in nopython mode.
fn compile_nopython(
    code: CodeObject,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    options: &CompileOptions,
    target: &Target,
) -> Result<CompiledFunction, CompileError> {
    // Defaults belong to the positional parameters (a `*args` tuple follows them).
    let npos = code.argcount as usize;
    let mut times: Vec<(String, Duration)> = Vec::new();
    let start = Instant::now();
    let ir = translate(code, globals)?;
    times.push(("translate_bytecode".into(), start.elapsed()));
    maybe_print(&ir, "translate_bytecode", &print_after());
    compile_nopython_ir(ir, globals, args, npos, options, target, times)
}

/// Runs a phase of the rewrite registry over a function (tracing as asked).
type RunRewrites<'a> = dyn Fn(
        Phase,
        &mut FunctionIR,
        Option<&mut numba_typeinfer::TypingResult>,
    ) -> Result<usize, numba_rewrite::RewriteError>
    + 'a;

/// The untyped half of the nopython pipeline (Numba's untyped passes, from IR
/// processing to SSA), over any function's IR given its arguments' types.
struct Frontend<'a> {
    globals: &'a dyn GlobalResolver,
    /// What `module.attr` the typing context resolves itself (others are frozen).
    typing: &'a dyn numba_typeinfer::TypingContext,
    options: &'a CompileOptions,
    run_rewrites: &'a RunRewrites<'a>,
    objmode_lines: &'a std::cell::RefCell<Vec<u32>>,
}

impl Frontend<'_> {
    /// Run the untyped passes on `ir`, a function of `npos` positional parameters (with
    /// these trailing `defaults`) called with `args`.
    fn untyped(
        &self,
        ir: &mut FunctionIR,
        args: &[TypeId],
        npos: usize,
        defaults: &[numba_bytecode::Constant],
        times: &mut Vec<(String, Duration)>,
    ) -> Result<(), CompileError> {
        let here = locate(ir);
        let wanted = print_after();
        let (globals, options, run_rewrites, objmode_lines) = (
            self.globals,
            self.options,
            self.run_rewrites,
            self.objmode_lines,
        );
        let none_args = arg_none(args, npos, defaults);
        let semantic_args = args.to_vec();
        let omitted_args = args.to_vec();
        let unroll_args = args.to_vec();
        // A with-lifting error keeps its own kind (Numba's CompilerError or TypingError).
        let with_error: std::cell::RefCell<Option<CompileError>> = std::cell::RefCell::new(None);
        let closure_cfg = crate::inline::ClosureLikes {
            parallel_reduce: options.parallel.is_some_and(|p| p.reduction),
            parallel_comprehension: options.parallel.is_some_and(|p| p.comprehension),
        };
        let untyped: Vec<Box<dyn FunctionPass + '_>> = vec![
            Box::new(Pass {
                name: "ir_processing",
                cfg: true,
                run: |ir: &mut FunctionIR| {
                    numba_ir::postproc::run(ir, false);
                    if env_flag("NUMBA_DUMP_IR") {
                        print!("{}", ir.dump_with_header());
                    }
                    Ok(true)
                },
            }),
            Box::new(Pass {
                name: "with_lifting",
                cfg: true,
                run: |ir: &mut FunctionIR| {
                    let changed =
                        with_lifting(ir, globals, options, objmode_lines).map_err(|e| {
                            let text = e.message.clone();
                            *with_error.borrow_mut() = Some(e);
                            text
                        })?;
                    // Numba compiles the rewritten function afresh, dumping its IR again.
                    if changed && env_flag("NUMBA_DUMP_IR") {
                        print!("{}", ir.dump_with_header());
                    }
                    Ok(changed)
                },
            }),
            Box::new(CodePass {
                name: "inline_closure_likes",
                run: move |ir: &mut FunctionIR| {
                    crate::inline::closure_likes(ir, globals, closure_cfg, None)
                },
            }),
            Box::new(CodePass {
                name: "inline_inlinables",
                run: move |ir: &mut FunctionIR| {
                    // Jitted functions asking to be inlined (`inline='always'` or a cost
                    // model), their IR processed as this function's was so far.
                    crate::inline::inline_jitted_calls(ir, globals, closure_cfg, 0)
                },
            }),
            Box::new(Pass {
                name: "make_function_op_code_to_jit_function",
                cfg: false,
                run: move |ir: &mut FunctionIR| {
                    Ok(make_functions_jitted(ir, options.dispatcher_id))
                },
            }),
            Box::new(Pass {
                name: "omitted_arguments",
                cfg: false,
                run: move |ir: &mut FunctionIR| {
                    substitute_omitted(ir, &omitted_args, npos, defaults)
                },
            }),
            Box::new(CodePass {
                name: "literal_unroll",
                run: move |ir: &mut FunctionIR| {
                    let arg_len = |i: u32| match unroll_args.get(i as usize) {
                        Some(t) => numba_typeinfer::conv::tuple_items(*t)
                            .map(|items| items.len())
                            .ok_or_else(|| t.to_string()),
                        None => Err("an argument of unknown type".to_string()),
                    };
                    numba_ir::unroll::literal_unroll(ir, &arg_len)
                },
            }),
            Box::new(Pass {
                name: "rewrite_semantic_constants",
                cfg: false,
                run: move |ir: &mut FunctionIR| Ok(rewrite_semantic_constants(ir, &semantic_args)),
            }),
            Box::new(Pass {
                name: "dead_branch_prune",
                cfg: true,
                run: move |ir: &mut FunctionIR| Ok(dead_branch_prune(ir, &none_args)),
            }),
            Box::new(Pass {
                name: "generic_rewrites",
                cfg: false,
                run: move |ir: &mut FunctionIR| {
                    run_rewrites(Phase::BeforeInference, ir, None)
                        .map(|n| n > 0)
                        .map_err(|e| e.to_string())
                },
            }),
            Box::new(Pass {
                name: "reconstruct_ssa",
                cfg: false,
                run: |ir: &mut FunctionIR| {
                    numba_ir::ssa::reconstruct_ssa(ir).map_err(|e| e.to_string())?;
                    // A generator's state is named by the variables typing will see.
                    if ir.is_generator {
                        numba_ir::postproc::compute_generator_info(ir);
                    }
                    Ok(true)
                },
            }),
        ];
        run_passes(ir, untyped, times, &wanted).map_err(|e| {
            here(
                with_error
                    .borrow_mut()
                    .take()
                    .unwrap_or_else(|| pass_error(e)),
            )
        })?;
        // Attributes of modules typing does not know, read now (not a pass of Numba's:
        // its typing reads them; the IR dumps above keep the `getattr`).
        crate::module_attrs::freeze_module_attributes(ir, globals, self.typing);
        Ok(())
    }
}

/// `translate_bytecode`: a code object's IR, or the error naming where it failed.
fn translate(code: CodeObject, globals: &dyn GlobalResolver) -> Result<FunctionIR, CompileError> {
    let qualname = code.qualname.clone();
    let filename = code.filename.clone();
    let firstline = code.firstlineno;
    let bc = numba_bytecode::ByteCode::decode(code).map_err(IrError::from);
    bc.and_then(|bc| {
        let df = numba_bytecode::flow::analyze(&bc)?;
        numba_ir::interpret(&bc, &df, globals)
    })
    .map_err(|e| {
        let line = e.line();
        let kind = match e {
            IrError::Bytecode(numba_bytecode::BytecodeError::Marshal { .. })
            | IrError::Bytecode(numba_bytecode::BytecodeError::Decode { .. }) => {
                ErrorKind::Internal
            }
            IrError::Bytecode(numba_bytecode::BytecodeError::Unsupported { .. })
            | IrError::Unsupported { .. } => ErrorKind::UnsupportedBytecode,
            _ => ErrorKind::Unsupported,
        };
        let line = line.or(Some(firstline));
        let mut err = CompileError::new(kind, e.to_string());
        err.line = line;
        err.at(&qualname, &filename, line)
    })
}

/// The nopython pipeline from untyped IR (a translated code object, or a lifted loop);
/// `npos` positional parameters take `options.defaults`.
fn compile_nopython_ir(
    mut ir: FunctionIR,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    npos: usize,
    options: &CompileOptions,
    target: &Target,
    mut times: Vec<(String, Duration)>,
) -> Result<CompiledFunction, CompileError> {
    let here = locate(&ir);
    let wanted = print_after();
    let rewrites = &target.rewrites;
    let dump_ir = env_flag("NUMBA_DUMP_IR");
    // The rewrites' trace: printed as it is made under NUMBA_DUMP_IR (between the other
    // dumps), kept when asked for.
    let collect = dump_ir || options.rewrite_trace;
    let trace_text = std::cell::RefCell::new(String::new());
    let run_rewrites = |phase: Phase,
                        ir: &mut FunctionIR,
                        typing: Option<&mut numba_typeinfer::TypingResult>|
     -> Result<usize, numba_rewrite::RewriteError> {
        let mut text = String::new();
        let n = rewrites.apply(phase, ir, typing, collect.then_some(&mut text))?;
        if dump_ir {
            print!("{text}");
        }
        if options.rewrite_trace {
            trace_text.borrow_mut().push_str(&text);
        }
        Ok(n)
    };
    // The lines of the `with objmode` blocks lifted out (for the nogil warning).
    let objmode_lines: std::cell::RefCell<Vec<u32>> = std::cell::RefCell::new(Vec::new());
    let front = Frontend {
        globals,
        typing: &target.typing,
        options,
        run_rewrites: &run_rewrites,
        objmode_lines: &objmode_lines,
    };
    front.untyped(&mut ir, args, npos, &options.defaults, &mut times)?;

    // Type inference.
    let start = Instant::now();
    // Numba's `raise_on_unsupported_feature` (issue 2195): a homogeneous tuple argument of
    // more than 1000 items would make a prohibitively large module.
    for (name, t) in ir.arg_names.iter().zip(args) {
        if let Type::UniTuple(_, n) = t.get() {
            if n > 1000 {
                let mut err = CompileError::new(
                    ErrorKind::Unsupported,
                    format!(
                        "Tuple '{name}' length must be smaller than 1000.\nLarge tuples lead \
                         to the generation of a prohibitively large LLVM IR which causes \
                         excessive memory pressure and large compile times.\nAs an \
                         alternative, the use of a 'list' is recommended in place of a \
                         'tuple' as lists do not suffer from this problem."
                    ),
                );
                err.line = Some(ir.firstlineno);
                return Err(here(err));
            }
        }
    }
    // Typing (again after overloads are inlined): `f(*t)` with `t` a tuple is spread
    // into arguments and typed again.
    let type_ir = |ir: &mut FunctionIR| -> Result<numba_typeinfer::TypingResult, CompileError> {
        loop {
            let typed = numba_typeinfer::infer_with_locals(
                ir,
                args,
                &options.locals,
                &target.typing,
                &Registry,
                options.dispatcher_id,
            );
            match typed {
                Err(TypingError::StarArgs { call, count, .. })
                    if numba_ir::utils::expand_star_call(ir, call, count) => {}
                other => break other,
            }
        }
        .map_err(|e| here(typing_error(e)))
    };
    // `isinstance` (Numba's partial type inference and literal propagation): the calls a
    // partial typing answers become constants and the branches they decide are pruned,
    // so a branch written for another type is never typed.
    let attr_builtins = numba_typeinfer::attr_builtins::mentions(&ir);
    if attr_builtins || numba_typeinfer::isinstance::mentions_isinstance(&ir) {
        for _ in 0..8 {
            let partial = numba_typeinfer::infer::partial_types(
                &ir,
                args,
                &options.locals,
                &target.typing,
                &Registry,
                options.dispatcher_id,
            );
            let as_error = |(message, line): (String, u32)| {
                let mut err = CompileError::new(ErrorKind::Typing, message);
                err.line = Some(line);
                here(err)
            };
            let folded = numba_typeinfer::isinstance::fold_literal_calls(&mut ir, &partial)
                .map_err(as_error)?;
            // A folded `getattr` may type what a later one reads: another round.
            let attrs = attr_builtins
                && numba_typeinfer::attr_builtins::fold(&mut ir, &partial, &target.typing)
                    .map_err(as_error)?;
            let pruned = (folded || attrs) && dead_branch_prune(&mut ir, &[]);
            if pruned {
                prune_phi_incoming(&mut ir);
            }
            if !pruned && !attrs {
                break;
            }
        }
        maybe_print(&ir, "isinstance_branch_prune", &wanted);
    }
    let mut typing = type_ir(&mut ir)?;
    times.push(("nopython_type_inference".into(), start.elapsed()));
    if let Some(r) = options.return_type {
        if numba_typeinfer::conv::can_convert(typing.return_type, r).is_none()
            && typing.return_type != r
        {
            return Err(here(CompileError::new(
                ErrorKind::Typing,
                format!(
                    "cannot convert the inferred return type {} to the declared {}",
                    typing.return_type, r
                ),
            )));
        }
        typing.return_type = r;
    }
    if options.no_nrt && holds_array(typing.return_type) && !returns_only_arguments(&ir) {
        return Err(here(CompileError::new(
            ErrorKind::Typing,
            "Only accept returning of array passed into the function as argument",
        )));
    }
    if matches!(
        typing.return_type.get(),
        Type::Dispatcher { .. } | Type::Function(_) | Type::UFunc { .. }
    ) {
        return Err(here(CompileError::new(
            ErrorKind::Unsupported,
            "returning a function (an inner function or lambda) is not supported by numba-rs yet",
        )));
    }
    // A literal slice stays literal (Numba boxes it from its value, so
    // `slice(None, 1, 1)` comes back with its step).
    let keeps_literal = matches!(typing.return_type.get(), Type::SliceLiteral(..));
    if typing.return_type == NONE || (typing.return_type.is_literal() && !keeps_literal) {
        typing.return_type = typing.return_type.unliteral();
    }

    // Typed passes.
    let typed: Vec<Box<dyn FunctionPass + '_>> = vec![Box::new(Pass {
        name: "strip_phis",
        cfg: false,
        run: |ir: &mut FunctionIR| Ok(strip_phis(ir)),
    })];
    run_passes(&mut ir, typed, &mut times, &wanted).map_err(|e| here(pass_error(e)))?;
    let start = Instant::now();
    if inline_overloads(
        &mut ir,
        &mut typing,
        &front,
        &target.typing,
        &mut times,
        &type_ir,
    )? {
        times.push(("inline_overloads".into(), start.elapsed()));
        maybe_print(&ir, "inline_overloads", &wanted);
    }
    let start = Instant::now();
    if !options.no_rewrites {
        run_rewrites(Phase::AfterInference, &mut ir, Some(&mut typing))
            .map_err(|e| here(CompileError::new(ErrorKind::Internal, e.to_string())))?;
        times.push(("nopython_rewrites".into(), start.elapsed()));
        maybe_print(&ir, "nopython_rewrites", &wanted);
    }
    // parallel=True: the parfor stages (Numba's ParforPass, fusion and pre-lowering).
    let mut parfor_report = numba_parfor::ParforReport::default();
    if let Some(popts) = &options.parallel {
        let start = Instant::now();
        let popts = &numba_parfor::ParforOptions {
            dump_stages: env_flag("NUMBA_DEBUG_ARRAY_OPT"),
            ..*popts
        };
        parfor_report = numba_parfor::run(&mut ir, &mut typing, popts).map_err(|e| {
            let (kind, line) = match &e {
                numba_parfor::ParforError::Unsupported { line, .. } => (
                    ErrorKind::UnsupportedRewrite,
                    Some(*line).filter(|&l| l > 0),
                ),
                numba_parfor::ParforError::Value { line, .. } => {
                    (ErrorKind::Value, Some(*line).filter(|&l| l > 0))
                }
                numba_parfor::ParforError::Failed { .. } => (ErrorKind::Internal, None),
            };
            let mut err = CompileError::new(kind, e.to_string());
            err.line = line;
            here(err)
        })?;
        times.push(("parfor_pass".into(), start.elapsed()));
        if parfor_report.produced.is_empty() && calls_generated_parallel(&ir) {
            parfor_report
                .warnings
                .retain(|w| w.category != "NumbaPerformanceWarning");
        }
        // Numba's `dprint_func_ir` between the stages.
        for (stage, text) in &parfor_report.dumps {
            println!(
                "{}",
                numba_ir::center(&format!("IR {stage}: {}", ir.qualname), 80, '-')
            );
            print!("{text}");
            println!("{}", "-".repeat(40));
        }
        if env_flag("NUMBA_DEBUG_ARRAY_OPT_STATS") {
            print!("{}", parfor_report.stats_text(&ir.name));
        }
        maybe_print(&ir, "parfor_pass", &wanted);
    }
    let start = Instant::now();
    legalize(&ir).map_err(|m| here(CompileError::new(ErrorKind::Internal, m)))?;
    // The variables a generator saves at each yield, on the IR lowering sees (phis
    // stripped, rewrites applied); computed without dels, which it strips.
    if ir.is_generator {
        numba_ir::postproc::compute_generator_info(&mut ir);
    }
    // Numba's IRLegalization inserts the final dels: lowering drops NRT references there.
    numba_ir::postproc::insert_dels(&mut ir);
    times.push(("ir_legalization".into(), start.elapsed()));
    if env_flag("NUMBA_DUMP_ANNOTATION") {
        let with_dels = ir.clone();
        let source = std::fs::read_to_string(&with_dels.filename).ok();
        print!(
            "{}",
            numba_typeinfer::annotate::annotate(&with_dels, &typing, source.as_deref())
        );
    }

    // Lowering.
    let lower_options = LowerOptions {
        self_id: options.dispatcher_id,
        uid: options.dispatcher_id.unwrap_or(0),
        module: module_of(options),
        fastmath: options.fastmath,
        error_model: options.error_model,
        // NUMBA_BOUNDSCHECK overrides the option when set (Numba's rule).
        boundscheck: match std::env::var("NUMBA_BOUNDSCHECK").ok().as_deref() {
            Some("1") => true,
            Some("0") => false,
            _ => options.boundscheck.unwrap_or(false),
        },
        refprune: RefPruneFlags::from_env(),
        dump_assembly: env_flag("NUMBA_DUMP_ASSEMBLY"),
        wrappers: options.wrappers.clone(),
    };
    let code: &dyn TargetContext = match options.code_target {
        crate::CodeTarget::Cpu => &target.cpu,
        crate::CodeTarget::Cuda => target.cuda(),
    };
    let mut compiled = code
        .compile(&ir, &typing, &lower_options, &Registry)
        .map_err(|e| here(lower_error(e)))?;
    times.append(&mut compiled.timings);
    compiled.warnings = parfor_report
        .warnings
        .iter()
        .map(|w| numba_lower::CompileWarning {
            category: w.category.to_string(),
            message: w.message.clone(),
            line: w.line,
        })
        .collect();
    // Numba's pending deprecation of reflected list and set arguments (`warn_deprecated`).
    for (name, &t) in ir.arg_names.iter().zip(&typing.arg_types) {
        let kind = match t.get() {
            numba_typeinfer::Type::List {
                reflected: true, ..
            } => "list",
            numba_typeinfer::Type::Set {
                reflected: true, ..
            } => "set",
            _ => continue,
        };
        compiled.warnings.push(numba_lower::CompileWarning {
            category: "NumbaPendingDeprecationWarning".into(),
            message: format!(
                "\nEncountered the use of a type that is scheduled for deprecation: type 'reflected {kind}' found for argument '{name}' of function '{}'.\n\nFor more information visit https://numba.readthedocs.io/en/stable/reference/deprecation.html#deprecation-of-reflection-for-list-and-set-types",
                ir.qualname
            ),
            line: ir.firstlineno,
        });
    }
    if options.nogil {
        // Numba's warning for the object-mode code of a nogil function: the blocks
        // take the GIL while they run.
        for &line in objmode_lines.borrow().iter() {
            compiled.warnings.push(numba_lower::CompileWarning {
                category: "NumbaWarning".into(),
                message:
                    "Code running in object mode won't allow parallel execution despite nogil=True."
                        .into(),
                line,
            });
        }
    }
    compiled.parallel_loops = parfor_report
        .produced
        .iter()
        .map(|(id, pattern, _, line)| {
            let into = parfor_report.fused.iter().find(|f| f.0 == *id).map(|f| f.1);
            (*id, *line, pattern.clone(), into)
        })
        .collect();
    compiled.hoisted_allocations = parfor_report.hoisted.clone();
    compiled.fusion_reports = parfor_report.fusion_reports.clone();
    compiled.nested_parfors = parfor_report.nested.clone();
    compiled.rewrite_trace = trace_text.take();
    compiled.timings = times;
    finish(&mut compiled, ir, typing);
    Ok(compiled)
}

/// Whether `ir` calls a parallel function whose code the host generates (a stencil's
/// loop nest, see [`crate::JitOptions::generated`]).
fn calls_generated_parallel(ir: &FunctionIR) -> bool {
    ir.exprs.iter().any(|e| match e {
        numba_ir::Expr::Global {
            value:
                numba_ir::Global {
                    kind: numba_ir::GlobalKind::Dispatcher { id, .. },
                    ..
                },
            ..
        } => crate::lookup_dispatcher(*id)
            .is_some_and(|d| d.options.generated && d.options.parallel.is_some()),
        _ => false,
    })
}

/// A lowering failure as a compile error (its line, when it has one).
/// `with_lifting` (Numba's `WithLifting` pass): the `with` blocks rewritten by
/// `numba_ir::withlift`; each `objmode` body becomes a dispatcher of its own, compiled
/// in object mode, whose outputs are typed by the annotations.
fn with_lifting(
    ir: &mut FunctionIR,
    globals: &dyn GlobalResolver,
    options: &CompileOptions,
    lines: &std::cell::RefCell<Vec<u32>>,
) -> Result<bool, CompileError> {
    use numba_ir::withlift::{Annotation, WithLiftError};
    let typing = |message: String, line: u32| WithLiftError::Typing { message, line };
    let mut objmode = |region: numba_ir::withlift::ObjModeRegion| {
        let line = region.line;
        lines.borrow_mut().push(line);
        let parent = options
            .dispatcher_id
            .and_then(crate::lookup_dispatcher)
            .ok_or_else(|| {
                typing(
                    "with objmode(...) needs the function's dispatcher".into(),
                    line,
                )
            })?;
        let mut outputs = Vec::new();
        for (name, a) in &region.annotations {
            let bad = |msg: String| WithLiftError::Compiler {
                message: format!("Error handling objmode argument '{name}'. {msg}"),
                line,
            };
            let t = match a {
                Annotation::Text(text) => numba_typeinfer::signature::parse_sig_type(text)
                    .map_err(|e| bad(format!("Invalid type annotation {text:?}: {e}")))?,
                Annotation::Object(g) => match &g.kind {
                    numba_ir::GlobalKind::TypeObject {
                        code: Some(code), ..
                    } => numba_typeinfer::TypeId(*code),
                    numba_ir::GlobalKind::TypeObject { text, .. } => {
                        numba_typeinfer::signature::parse_sig_type(text).map_err(|e| {
                            bad(format!("numba-rs cannot use the type {text} here: {e}"))
                        })?
                    }
                    _ => {
                        return Err(bad(format!(
                            "The value must be a Numba type, got {}.",
                            g.repr
                        )))
                    }
                },
            };
            if let Err(e) = numba_lower::boundary_shape(t) {
                return Err(typing(
                    format!(
                        "Objmode context failed. Argument '{name}' is declared as a type                          numba-rs cannot unbox yet: {t} ({e})."
                    ),
                    line,
                ));
            }
            outputs.push(t);
        }
        let outputs = numba_typeinfer::types::tuple_of(&outputs);
        let d = parent.lifted_with(region.ir, outputs);
        Ok(numba_ir::Global {
            kind: numba_ir::GlobalKind::Dispatcher {
                id: d.id,
                name: parent.name.clone(),
            },
            repr: format!("ObjModeLiftedWith({})", parent.display()),
        })
    };
    numba_ir::withlift::lift_withs(ir, globals, &mut objmode)
        .map(|n| n > 0)
        .map_err(|e| {
            let kind = match e {
                WithLiftError::Compiler { .. } => ErrorKind::Unsupported,
                WithLiftError::Typing { .. } => ErrorKind::Typing,
            };
            let mut err = CompileError::new(kind, e.to_string());
            err.line = Some(e.line()).filter(|&l| l > 0);
            err
        })
}

/// Placing an error in the function `ir` compiles (its first line when the error has
/// none).
fn locate(ir: &FunctionIR) -> impl Fn(CompileError) -> CompileError {
    let (qualname, filename, firstline) =
        (ir.qualname.clone(), ir.filename.clone(), ir.firstlineno);
    move |e: CompileError| {
        let line = e.line.or(Some(firstline));
        e.at(&qualname, &filename, line)
    }
}

fn lower_error(e: LowerError) -> CompileError {
    let (kind, line) = match &e {
        LowerError::Unsupported { line, .. } => (ErrorKind::Unsupported, Some(*line)),
        LowerError::Lowering { line, .. } => (ErrorKind::Lowering, Some(*line)),
        LowerError::Llvm(_) => (ErrorKind::Internal, None),
    };
    let mut err = CompileError::new(kind, e.to_string());
    err.line = line.filter(|&l| l > 0);
    err
}

/// The module symbols are mangled under (`__main__` when the host gave none).
fn module_of(options: &CompileOptions) -> String {
    if options.module.is_empty() {
        "__main__".into()
    } else {
        options.module.clone()
    }
}

/// What every compiled function keeps and prints: its annotated IR for `inspect_types`
/// (made when asked for; the IR and types are kept) and the `NUMBA_DUMP_LLVM` /
/// `_OPTIMIZED` / `_ASSEMBLY` dumps.
fn finish(compiled: &mut CompiledFunction, ir: FunctionIR, typing: numba_typeinfer::TypingResult) {
    let qualname = ir.qualname.clone();
    let annotated = std::sync::Arc::new((ir, typing));
    compiled.typed_ir = Some(annotated.clone());
    compiled.type_annotation = numba_lower::LazyText::new(move || {
        let (ir, typing) = &*annotated;
        let source = std::fs::read_to_string(&ir.filename).ok();
        numba_typeinfer::annotate::annotate(ir, typing, source.as_deref())
    });
    if env_flag("NUMBA_DUMP_LLVM") {
        println!(
            "{}",
            numba_ir::center(&format!("LLVM DUMP {qualname}"), 80, '-')
        );
        println!("{}", compiled.llvm_ir);
        println!("{}", "=".repeat(80));
    }
    if env_flag("NUMBA_DUMP_OPTIMIZED") {
        dump(
            &format!("OPTIMIZED DUMP {qualname}"),
            &compiled.optimized_ir,
        );
    }
    if let Some(asm) = compiled
        .assembly
        .as_ref()
        .filter(|_| env_flag("NUMBA_DUMP_ASSEMBLY"))
    {
        dump(&format!("ASSEMBLY {qualname}"), asm);
    }
}

/// Numba's `codegen.dump` (the optimised module and the assembly): a rule of `=`, the
/// header centred in `-`, the text, a rule of `=`.
fn dump(header: &str, body: &str) {
    println!("{}", "=".repeat(80));
    println!("{}", numba_ir::center(header, 80, '-'));
    println!("{body}");
    println!("{}", "=".repeat(80));
}

/// Numba's `RewriteSemanticConstants`: what the argument types fix before typing becomes
/// a constant, so dead-branch pruning can use it: `len(t)` of a tuple argument and
/// `a.ndim` of an array argument.
fn rewrite_semantic_constants(ir: &mut FunctionIR, args: &[TypeId]) -> bool {
    use numba_ir::{Expr, GlobalKind, Stmt};
    let mut defs: std::collections::HashMap<numba_ir::VarId, numba_ir::ExprId> =
        std::collections::HashMap::new();
    let mut multi = std::collections::HashSet::new();
    for inst in ir.blocks.values().flat_map(|b| &b.body) {
        if let Stmt::Assign { target, value } = inst.stmt {
            if defs.insert(target, value).is_some() {
                multi.insert(target);
            }
        }
    }
    // The argument a variable holds, following copies.
    let arg_of = |mut v: numba_ir::VarId| -> Option<TypeId> {
        for _ in 0..16 {
            if multi.contains(&v) {
                return None;
            }
            match ir.expr(*defs.get(&v)?) {
                Expr::Var(src) => v = *src,
                Expr::Arg { index, .. } => return args.get(*index as usize).copied(),
                _ => return None,
            }
        }
        None
    };
    let is_len = |v: numba_ir::VarId| {
        defs.get(&v).is_some_and(|&e| {
            matches!(ir.expr(e), Expr::Global { value, .. }
                if matches!(&value.kind, GlobalKind::Builtin(n) if n == "len"))
        })
    };
    let mut replace = Vec::new();
    for inst in ir.blocks.values().flat_map(|b| &b.body) {
        let Stmt::Assign { value, .. } = inst.stmt else {
            continue;
        };
        let known = match ir.expr(value) {
            Expr::Call {
                func, args: a, kws, ..
            } if a.len() == 1 && kws.is_empty() && is_len(*func) => arg_of(a[0])
                .and_then(numba_typeinfer::conv::tuple_items)
                .map(|items| items.len() as i64),
            Expr::GetAttr { value: v, attr } if attr == "ndim" => {
                arg_of(*v).and_then(|t| match t.get() {
                    Type::Array { ndim, .. } => Some(i64::from(ndim)),
                    _ => None,
                })
            }
            _ => None,
        };
        if let Some(n) = known {
            replace.push((value, n));
        }
    }
    for (e, n) in &replace {
        ir.exprs[e.0 as usize] = Expr::Const(numba_bytecode::Constant::Int(*n));
    }
    !replace.is_empty()
}

/// Numba's `MakeFunctionToJitFunction`: an inner function or lambda without free variables
/// that is used as a value (not only called where it is made, which inlining handled)
/// becomes a jitted function of its own, sharing this function's globals.
fn make_functions_jitted(ir: &mut FunctionIR, parent: Option<u64>) -> bool {
    let Some(parent) = parent.and_then(crate::lookup_dispatcher) else {
        return false;
    };
    let live: std::collections::HashSet<usize> = ir
        .blocks
        .values()
        .flat_map(|b| &b.body)
        .filter_map(|inst| match inst.stmt {
            numba_ir::Stmt::Assign { value, .. } => Some(value.0 as usize),
            _ => None,
        })
        .collect();
    let mut changed = false;
    for i in 0..ir.exprs.len() {
        if !live.contains(&i) {
            continue;
        }
        let numba_ir::Expr::MakeFunction {
            code,
            closure: None,
            ..
        } = &ir.exprs[i]
        else {
            continue;
        };
        let inner = parent.inner_function((**code).clone());
        let name = inner.name.clone();
        ir.exprs[i] = numba_ir::Expr::Global {
            name: name.clone(),
            value: numba_ir::Global {
                repr: format!("CPUDispatcher(<function {name}>)"),
                kind: numba_ir::GlobalKind::Dispatcher { id: inner.id, name },
            },
        };
        changed = true;
    }
    if changed {
        // The code-object constants the make_functions read are dead now.
        while numba_ir::utils::dead_code_elimination(ir) {}
    }
    changed
}

/// Numba's `IRLegalization` checks: no phis are left for lowering.
fn legalize(ir: &FunctionIR) -> Result<(), String> {
    for (label, block) in &ir.blocks {
        for inst in &block.body {
            if let numba_ir::Stmt::Assign { value, .. } = &inst.stmt {
                if matches!(ir.expr(*value), numba_ir::Expr::Phi { .. }) {
                    return Err(format!("a phi is left in block {label} before lowering"));
                }
            }
        }
    }
    Ok(())
}

/// Whether values of `t` hold an array (what a function without Numba's runtime cannot
/// return unless it was given it).
fn holds_array(t: TypeId) -> bool {
    match t.get() {
        Type::Array { .. } => true,
        Type::UniTuple(e, _) | Type::Optional(e) => holds_array(e),
        Type::Tuple(items) => items.into_iter().any(holds_array),
        _ => false,
    }
}

/// Whether every `return` gives back one of the function's arguments (through copies
/// and casts).
fn returns_only_arguments(ir: &FunctionIR) -> bool {
    use numba_ir::{Expr, Stmt};
    ir.blocks.values().all(|b| {
        b.body.iter().all(|inst| {
            let Stmt::Return { value } = &inst.stmt else {
                return true;
            };
            let mut v = *value;
            for _ in 0..32 {
                match numba_ir::utils::single_def(ir, v) {
                    Some(Expr::Var(src) | Expr::Cast { value: src }) => v = *src,
                    Some(Expr::Arg { .. }) => return true,
                    _ => return false,
                }
            }
            false
        })
    })
}
