//! # numba-dispatch
//!
//! The only crate that sees every stage: it assembles the pipeline
//! (bytecode → IR → rewrites → inference → lowering → JIT) and keeps, per jitted function, a
//! [`Dispatcher`] with its compiled specialisations keyed by argument typecodes.
//!
//! Entry points: [`register`] a function (its code and globals come from a
//! [`FunctionSource`], which numba-py implements from a live Python function and Rust tests
//! from a marshal blob), then [`Dispatcher::resolve`] argument types to a compiled
//! specialisation, compiling on a miss. Calls between jitted functions resolve through the
//! same registry, and recursion is detected with a per-thread in-progress set.
//!
//! Choosing among compiled specialisations is [`selection`] (Numba's ranking of implicit
//! conversions). Compile-on-miss is safe from several threads: the first thread to miss a
//! signature compiles it while the others wait on that signature's [`Pending`] entry (no
//! lock is held while compiling), and all of them get the same specialisation.
//!
//! With `cache=True` ([`JitOptions::cache`]) specialisations are saved to and loaded from
//! disk ([`cache`]): `build` tries the cache before compiling and saves after.
//!
//! Ufuncs jitted code may call (`@vectorize`/`@guvectorize` objects) are registered with
//! [`register_ufunc`]: their [`UFuncSource`] chooses or compiles the loop for a call's
//! argument types while the caller is typed.
//!
//! # Example
//!
//! Jit `collatz_steps` (a `while` loop counting Collatz steps) from a CPython 3.11 code
//! object, resolve `(int64,)` (compiling on the miss) and call the specialisation:
//! 27 takes 111 steps to reach 1. A second resolve finds the same specialisation.
//!
//! ```rust
//! use std::collections::HashMap;
//! use std::sync::Arc;
//!
//! use numba_bytecode::CodeObject;
//! use numba_dispatch::{register, FunctionSource};
//! use numba_ir::{Global, GlobalResolver};
//! use numba_lower::{ExcInfo, STATUS_OK};
//! use numba_typeinfer::types::INT64;
//!
//! /// The code comes from a marshal blob; the function reads no globals.
//! struct Blob(&'static str);
//! impl FunctionSource for Blob {
//!     fn load(&self) -> Result<(CodeObject, Box<dyn GlobalResolver>), String> {
//!         let bytes = std::fs::read(self.0).map_err(|e| e.to_string())?;
//!         let code = numba_bytecode::marshal::read_code(&bytes).map_err(|e| e.to_string())?;
//!         Ok((code, Box::new(HashMap::<String, Global>::new())))
//!     }
//! }
//!
//! let d = register(
//!     "collatz_steps",
//!     Box::new(Blob(concat!(
//!         env!("CARGO_MANIFEST_DIR"),
//!         "/../tests/fixtures/blobs/scalars.collatz_steps.marshal"
//!     ))),
//! );
//! let f = d.resolve(&[INT64])?;
//! assert_eq!(f.return_type, INT64);
//! let (mut ret, mut exc) = (0u64, std::ptr::null::<ExcInfo>());
//! // SAFETY: the entry wrapper was compiled for one int64 argument slot.
//! let status = unsafe { (f.entry)(&mut ret, &mut exc, [27u64].as_ptr()) };
//! assert_eq!((status, ret), (STATUS_OK, 111));
//! assert!(Arc::ptr_eq(&f, &d.resolve(&[INT64])?));
//! assert_eq!(d.signatures(), [vec![INT64]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod api;
pub mod cache;
mod error;
mod inline;
mod module_attrs;
mod pipeline;
pub mod selection;
mod ufuncs;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex};

use numba_bytecode::CodeObject;
use numba_ir::GlobalResolver;
use numba_lower::CompiledFunction;
use numba_typeinfer::TypeId;

pub use error::{CompileError, ErrorKind};
pub use inline::{InlineOption, InlineSite, TypedInlineSite};
pub use numba_typeinfer::context::Parameters;
pub use pipeline::{
    compile_function, compile_lifted_loop, compile_lifted_with, compile_object_mode,
    CompileOptions, ObjectMode, Target,
};
pub use ufuncs::{lookup_ufunc, register_ufunc, UFuncSource};

/// Where a jitted function's code and globals come from.
pub trait FunctionSource: Send + Sync {
    /// The code object and a resolver for the names it reads as globals.
    fn load(&self) -> Result<(CodeObject, Box<dyn GlobalResolver>), String>;
    /// The code to compile for these argument types: [`FunctionSource::load`] for a
    /// function; a host that generates code per signature (a stencil's loop nest, which
    /// depends on the arrays' ranks and the kernel's result type) overrides it.
    fn load_for(&self, _args: &[TypeId]) -> Result<(CodeObject, Box<dyn GlobalResolver>), String> {
        self.load()
    }
    /// The IR to compile instead of the code object (a loop lifted out of an object-mode
    /// function); `None` for a function.
    fn lifted_ir(&self) -> Option<numba_ir::FunctionIR> {
        None
    }
    /// The first source line of a function made by the compiler (a lifted loop starts
    /// at its `for`); `None` for a function.
    fn first_line(&self) -> Option<u32> {
        None
    }
    /// The host's own description of the function (numba-py's Python function), for
    /// hosts that need it back from a dispatcher; functions made by the compiler (lifted
    /// loops, `objmode` bodies) give their parent's.
    fn host(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        None
    }
    /// The Python module the function belongs to (for symbol names).
    fn module(&self) -> String {
        "__main__".into()
    }
    /// A fingerprint of everything in the function the on-disk cache must not confuse
    /// (its bytecode, its closure variables' values); `None` (the default) keeps the
    /// function out of the cache whatever its options say.
    fn cache_fingerprint(&self) -> Option<String> {
        None
    }
    /// The file the function's source is in, when there is one: a cached caller records
    /// its stamp, so that editing a callee invalidates the caller's entry.
    fn source_file(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// Parameter names and the default values of the trailing parameters. The default
    /// reads the names from the code object and knows no defaults.
    fn parameters(&self) -> Result<Parameters, String> {
        let (code, _) = self.load()?;
        Ok(Parameters::of_code(&code))
    }
    /// For `inline=` a function ([`InlineOption::CostModel`]): whether to inline this call
    /// site. The host runs the user's function; the default has none.
    fn inline_cost_model(&self, _site: &InlineSite<'_>) -> Result<bool, String> {
        Err("this function has no inline cost model".into())
    }
    /// Whether calls offer literal argument types ([`LiteralArgs`]): an extension's
    /// overload, whose code is chosen per argument types, may want them; a function
    /// compiled from its own code does not.
    ///
    /// [`LiteralArgs`]: numba_typeinfer::extension::LiteralArgs
    fn literal_args(&self) -> numba_typeinfer::extension::LiteralArgs {
        numba_typeinfer::extension::LiteralArgs::Never
    }
    /// For code chosen per argument types (an extension's overload, `load_for`): the
    /// `inline=` option of the implementation chosen for `args`. `Always` or a cost
    /// model splices the implementation's IR into typed callers (Numba's
    /// `InlineOverloads`); the default, `Never`, calls it.
    fn overload_inline(&self, _args: &[TypeId]) -> InlineOption {
        InlineOption::Never
    }
    /// For [`FunctionSource::overload_inline`]'s `CostModel`: whether to inline this
    /// typed call site. The host runs the user's function.
    fn overload_cost_model(&self, _site: &TypedInlineSite<'_>) -> Result<bool, String> {
        Err("this function has no inline cost model".into())
    }
}

/// How a [`FunctionSource::load_for`] error says the source asks for literal argument
/// types instead of failing (a typing function's `SentryLiteralArgs`): this prefix, then
/// the argument positions separated by commas.
pub const FORCE_LITERAL_PREFIX: &str = "numba-rs:force-literal:";

/// Per-function compilation options (the `@jit(...)` keywords that change code).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JitOptions {
    /// Fast-math flags (`numba_lower::fastmath`); 0 for none.
    pub fastmath: u32,
    pub error_model: numba_lower::ErrorModel,
    /// `boundscheck=`: None leaves it to `NUMBA_BOUNDSCHECK` (off by default).
    pub boundscheck: Option<bool>,
    /// `parallel=True` (or a dict of options): None compiles serially.
    pub parallel: Option<numba_parfor::ParforOptions>,
    /// Foreign entry points every specialisation gets (a vectorize or cfunc kernel).
    pub wrappers: numba_lower::Wrappers,
    /// Declared types of local variables (`locals=`), by name.
    pub locals: Vec<(String, TypeId)>,
    /// When object mode is used (`forceobj=True`).
    pub object_mode: ObjectMode,
    /// `looplift=False`.
    pub no_looplift: bool,
    /// `nogil=True` (only read for Numba's warning about `with objmode` blocks, which
    /// take the GIL).
    pub nogil: bool,
    /// The host generates the code per signature (a stencil's loop nest): a
    /// `parallel=True` caller of such a parallel function does parallel work through
    /// it, as Numba's inlined stencil would, so it gets no "no parallel transformation"
    /// warning.
    pub generated: bool,
    /// `_nrt=False`: compiled as if without Numba's runtime (see
    /// `pipeline::CompileOptions::no_nrt`).
    pub no_nrt: bool,
    /// `no_rewrites=True` (see `pipeline::CompileOptions::no_rewrites`).
    pub no_rewrites: bool,
    /// `cache=True`: where this function's specialisations are cached on disk.
    pub cache: Option<cache::CacheSite>,
    /// `inline=`: whether jitted callers splice this function's IR in before typing.
    pub inline: InlineOption,
    /// What the code is generated for: the host (default) or a CUDA device.
    pub code_target: CodeTarget,
}

/// The code generator a dispatcher compiles for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CodeTarget {
    /// JIT into the process (`CpuTarget`).
    #[default]
    Cpu,
    /// PTX for an NVIDIA GPU (`numba_lower::cuda::CudaTarget`): the specialisation's
    /// `assembly` is the PTX text; it has no host entry point.
    Cuda,
}

/// One jitted function and its specialisations.
pub struct Dispatcher {
    pub id: u64,
    pub name: String,
    source: Box<dyn FunctionSource>,
    target: Arc<Target>,
    options: JitOptions,
    /// The specialisations, changed under this lock and then published to `published`.
    overloads: Mutex<Vec<Arc<CompiledFunction>>>,
    /// An immutable copy of `overloads` that calls read without locking. Each published
    /// copy is kept in `snapshots` until the dispatcher is dropped, so a reference taken
    /// from one stays valid while the caller holds the dispatcher.
    published: AtomicPtr<Vec<Arc<CompiledFunction>>>,
    // Boxed: `published` points at the Vec itself, which must not move when this list
    // grows.
    #[allow(clippy::vec_box)]
    snapshots: Mutex<Vec<Box<Vec<Arc<CompiledFunction>>>>>,
    /// Serialises `recompile`.
    recompiling: Mutex<()>,
    /// How the function prints in messages (`<function add at 0x...>`), when the host
    /// knows; else `<function NAME>`.
    display: std::sync::OnceLock<String>,
    /// Return types fixed by explicit signatures, by argument types.
    explicit_returns: Mutex<HashMap<Vec<TypeId>, TypeId>>,
    /// False once explicit signatures were given: calls then convert instead of compiling.
    can_compile: AtomicBool,
    /// Words that receive a specialisation's native address when it is compiled, for
    /// callers compiled while it was still in progress (mutual recursion). Leaked: the
    /// code that reads them lives as long as the process.
    slots: Mutex<HashMap<Vec<TypeId>, &'static AtomicUsize>>,
    parameters: std::sync::OnceLock<Option<Parameters>>,
    /// Argument types whose compilation asked for literal arguments (`literally`), and
    /// which: asked again, the request is answered without typing the function again.
    pub(crate) literal_requests: Mutex<HashMap<Vec<TypeId>, Vec<usize>>>,
    /// Signatures being compiled right now, by argument types: threads that miss one wait
    /// for its result instead of compiling it again.
    pending: Mutex<HashMap<Vec<TypeId>, Arc<Pending>>>,
    /// Set for the body of a `with objmode(...)` block (Numba's `ObjModeLiftedWith`).
    objmode_with: Option<ObjModeWith>,
    /// Specialisations loaded from the on-disk cache, and compiled because it had none
    /// (Numba's `stats.cache_hits` / `cache_misses`), by argument types.
    cache_stats: Mutex<CacheStats>,
}

/// Counts per argument-type tuple, in first-seen order.
#[derive(Debug, Clone, Default)]
pub struct CacheStats {
    pub hits: Vec<(Vec<TypeId>, usize)>,
    pub misses: Vec<(Vec<TypeId>, usize)>,
}

fn bump(counts: &mut Vec<(Vec<TypeId>, usize)>, args: &[TypeId]) {
    match counts.iter_mut().find(|(a, _)| a == args) {
        Some((_, n)) => *n += 1,
        None => counts.push((args.to_vec(), 1)),
    }
}

/// What a `with objmode(...)` body's dispatcher knows besides its IR: the nopython side
/// calls it with native values, boxed on the way in, and unboxes its declared outputs.
#[derive(Debug)]
pub struct ObjModeWith {
    /// The declared outputs, as a tuple type in output order.
    pub outputs: TypeId,
    /// The native types of the inputs at the call site (set when the caller is typed).
    pub native_args: std::sync::OnceLock<Vec<TypeId>>,
}

/// A compilation in progress on some thread; waiters block on `ready` until `result` is
/// set.
struct Pending {
    owner: std::thread::ThreadId,
    result: Mutex<Option<Result<Arc<CompiledFunction>, CompileError>>>,
    ready: Condvar,
}

impl Pending {
    fn wait(&self) -> Result<Arc<CompiledFunction>, CompileError> {
        let mut r = self.result.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(res) = r.as_ref() {
                return res.clone();
            }
            r = self.ready.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn finish(&self, res: Result<Arc<CompiledFunction>, CompileError>) {
        *self.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(res);
        self.ready.notify_all();
    }
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish()
    }
}

pub(crate) static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static REGISTRY: LazyLock<Mutex<HashMap<u64, Arc<Dispatcher>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

thread_local! {
    static IN_PROGRESS: RefCell<HashSet<(u64, Vec<TypeId>)>> = RefCell::new(HashSet::new());
}

/// Register a function compiled for a fresh default [`Target`] with default options.
pub fn register(name: &str, source: Box<dyn FunctionSource>) -> Arc<Dispatcher> {
    register_with(
        name,
        source,
        Arc::new(Target::default()),
        JitOptions::default(),
    )
}

/// Register a function compiled for `target` with `options`, returning its dispatcher.
pub fn register_with(
    name: &str,
    source: Box<dyn FunctionSource>,
    target: Arc<Target>,
    options: JitOptions,
) -> Arc<Dispatcher> {
    register_full(name, source, target, options, None)
}

fn register_full(
    name: &str,
    source: Box<dyn FunctionSource>,
    target: Arc<Target>,
    options: JitOptions,
    objmode_with: Option<ObjModeWith>,
) -> Arc<Dispatcher> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let d = Arc::new(Dispatcher {
        id,
        name: name.to_string(),
        source,
        target,
        options,
        overloads: Mutex::new(Vec::new()),
        published: AtomicPtr::new(std::ptr::null_mut()),
        snapshots: Mutex::new(Vec::new()),
        recompiling: Mutex::new(()),
        display: std::sync::OnceLock::new(),
        explicit_returns: Mutex::new(HashMap::new()),
        can_compile: AtomicBool::new(true),
        slots: Mutex::new(HashMap::new()),
        parameters: std::sync::OnceLock::new(),
        literal_requests: Mutex::new(HashMap::new()),
        pending: Mutex::new(HashMap::new()),
        objmode_with,
        cache_stats: Mutex::new(CacheStats::default()),
    });
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, d.clone());
    d
}

/// The dispatcher with this id.
pub fn lookup_dispatcher(id: u64) -> Option<Arc<Dispatcher>> {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned()
}

impl Dispatcher {
    /// The compiled specialisations in compilation order, read without a lock (the call
    /// path's view).
    pub fn snapshot(&self) -> &[Arc<CompiledFunction>] {
        let p = self.published.load(Ordering::Acquire);
        if p.is_null() {
            return &[];
        }
        // SAFETY: every published vector is owned by `snapshots` until `self` drops and
        // is never mutated after publication.
        unsafe { &*p }
    }

    /// Publish the current `overloads` (called with its lock held).
    fn publish(&self, overloads: &[Arc<CompiledFunction>]) {
        let copy = Box::new(overloads.to_vec());
        let p = &*copy as *const Vec<Arc<CompiledFunction>> as *mut _;
        self.snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(copy);
        self.published.store(p, Ordering::Release);
    }

    /// Set how the function prints in error messages (Python's `repr` of it); once.
    pub fn set_display(&self, text: String) {
        let _ = self.display.set(text);
    }

    /// How the function prints in error messages.
    pub fn display(&self) -> String {
        self.display
            .get()
            .cloned()
            .unwrap_or_else(|| format!("<function {}>", self.name))
    }

    /// The specialisation for exactly these argument types, if compiled, borrowed from
    /// the published snapshot: no lock and no reference count touched.
    pub fn lookup_ref(&self, args: &[TypeId]) -> Option<&Arc<CompiledFunction>> {
        self.snapshot().iter().find(|o| o.arg_types == args)
    }

    /// The specialisation for exactly these argument types, if compiled.
    pub fn lookup(&self, args: &[TypeId]) -> Option<Arc<CompiledFunction>> {
        self.lookup_ref(args).cloned()
    }

    /// Argument types of every compiled specialisation, in compilation order.
    pub fn signatures(&self) -> Vec<Vec<TypeId>> {
        self.snapshot()
            .iter()
            .map(|o| o.arg_types.clone())
            .collect()
    }

    /// All specialisations.
    pub fn overloads(&self) -> Vec<Arc<CompiledFunction>> {
        self.snapshot().to_vec()
    }

    /// The word that holds (or will hold) the native address of the specialisation for
    /// `args`.
    pub fn native_slot(&self, args: &[TypeId]) -> &'static AtomicUsize {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = *slots
            .entry(args.to_vec())
            .or_insert_with(|| Box::leak(Box::new(AtomicUsize::new(0))));
        if let Some(c) = self.lookup(args) {
            slot.store(c.native, Ordering::SeqCst);
        }
        slot
    }

    /// The globals the function's code reads (inner functions share them).
    pub fn load_globals(&self) -> Result<Box<dyn GlobalResolver>, String> {
        self.source.load().map(|(_, g)| g)
    }

    /// A dispatcher for an inner function of this one (`make_function` turned into a jitted
    /// function): same globals, target and options.
    pub fn inner_function(self: &Arc<Self>, code: CodeObject) -> Arc<Dispatcher> {
        struct InnerSource {
            parent: Arc<Dispatcher>,
            code: CodeObject,
        }
        impl FunctionSource for InnerSource {
            fn load(&self) -> Result<(CodeObject, Box<dyn GlobalResolver>), String> {
                Ok((self.code.clone(), self.parent.load_globals()?))
            }
            fn host(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
                self.parent.source.host()
            }
            fn module(&self) -> String {
                self.parent.source.module()
            }
        }
        let name = code.qualname.clone();
        register_with(
            &name,
            Box::new(InnerSource {
                parent: self.clone(),
                code,
            }),
            self.target.clone(),
            JitOptions {
                inline: InlineOption::Never,
                ..self.options.clone()
            },
        )
    }

    /// A dispatcher for a loop lifted out of this (object-mode) function: compiled from
    /// its IR, nopython when it types; same globals, target and options.
    pub fn lifted_loop(self: &Arc<Self>, ir: numba_ir::FunctionIR) -> Arc<Dispatcher> {
        let options = JitOptions {
            object_mode: ObjectMode::Never,
            ..self.options.clone()
        };
        self.lifted(ir, options, None)
    }

    /// A dispatcher for the body of a `with objmode(...)` block of this function (its
    /// IR from `numba_ir::withlift`): compiled in object mode, without loop lifting;
    /// `outputs` is the tuple of the declared output types.
    pub fn lifted_with(
        self: &Arc<Self>,
        ir: numba_ir::FunctionIR,
        outputs: TypeId,
    ) -> Arc<Dispatcher> {
        let options = JitOptions {
            object_mode: ObjectMode::Force,
            no_looplift: true,
            parallel: None,
            ..self.options.clone()
        };
        let with = ObjModeWith {
            outputs,
            native_args: std::sync::OnceLock::new(),
        };
        self.lifted(ir, options, Some(with))
    }

    fn lifted(
        self: &Arc<Self>,
        ir: numba_ir::FunctionIR,
        options: JitOptions,
        objmode_with: Option<ObjModeWith>,
    ) -> Arc<Dispatcher> {
        struct LiftedSource {
            parent: Arc<Dispatcher>,
            ir: numba_ir::FunctionIR,
        }
        impl FunctionSource for LiftedSource {
            fn load(&self) -> Result<(CodeObject, Box<dyn GlobalResolver>), String> {
                self.parent.source.load()
            }
            fn host(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
                self.parent.source.host()
            }
            fn module(&self) -> String {
                self.parent.source.module()
            }
            fn parameters(&self) -> Result<Parameters, String> {
                Ok(Parameters {
                    names: self.ir.arg_names.clone(),
                    ..Parameters::default()
                })
            }
            fn lifted_ir(&self) -> Option<numba_ir::FunctionIR> {
                Some(self.ir.clone())
            }
            fn first_line(&self) -> Option<u32> {
                Some(self.ir.firstlineno)
            }
        }
        let name = self.name.clone();
        let d = register_full(
            &name,
            Box::new(LiftedSource {
                parent: self.clone(),
                ir,
            }),
            self.target.clone(),
            options,
            objmode_with,
        );
        if let Some(text) = self.display.get() {
            d.set_display(text.clone());
        }
        d
    }

    /// The `with objmode(...)` facts of a dispatcher made by [`Dispatcher::lifted_with`].
    pub fn objmode_with(&self) -> Option<&ObjModeWith> {
        self.objmode_with.as_ref()
    }

    /// Where a lifted loop starts ([`FunctionSource::first_line`]).
    pub fn first_line(&self) -> Option<u32> {
        self.source.first_line()
    }

    /// The host's description of the function ([`FunctionSource::host`]).
    pub fn host(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.source.host()
    }

    /// Whether calls offer this function literal argument types (an extension's
    /// overload).
    pub fn literal_args(&self) -> numba_typeinfer::extension::LiteralArgs {
        self.source.literal_args()
    }

    /// The function's parameters (read once).
    pub fn parameters(&self) -> Option<Parameters> {
        self.parameters
            .get_or_init(|| self.source.parameters().ok())
            .clone()
    }

    /// Whether a specialisation for these types is being compiled on this thread.
    pub fn in_progress(&self, args: &[TypeId]) -> bool {
        IN_PROGRESS.with(|s| s.borrow().contains(&(self.id, args.to_vec())))
    }

    /// Compile eagerly for an explicit signature; afterwards calls convert arguments to a
    /// compiled signature instead of compiling new ones (Numba's behaviour).
    pub fn compile_explicit(
        &self,
        ret: Option<TypeId>,
        args: &[TypeId],
    ) -> Result<Arc<CompiledFunction>, CompileError> {
        if let Some(r) = ret {
            self.explicit_returns
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(args.to_vec(), r);
        }
        let c = self.compile(args)?;
        self.can_compile.store(false, Ordering::Relaxed);
        Ok(c)
    }

    /// Whether a call with new argument types compiles a specialisation (false once
    /// explicit signatures were given: calls then convert to one of them).
    pub fn compiles_on_demand(&self) -> bool {
        self.can_compile.load(Ordering::Relaxed)
    }

    /// The specialisation to call for these argument types, chosen as Numba's dispatcher
    /// chooses ([`selection`]): an exact match; else, while compiling is allowed, a new
    /// compilation; else (explicit signatures disabled compiling) the unique best
    /// convertible signature, unsafe conversions included. No match or a tie is an
    /// [`ErrorKind::Dispatch`] error with Numba's message.
    pub fn resolve(&self, args: &[TypeId]) -> Result<Arc<CompiledFunction>, CompileError> {
        if let Some(c) = self.lookup(args) {
            return Ok(c);
        }
        let can_compile = self.can_compile.load(Ordering::Relaxed);
        if can_compile {
            let known = self
                .literal_requests
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(args)
                .cloned();
            if let Some(wanted) = known {
                let mut e = CompileError::new(ErrorKind::Typing, "literal arguments requested");
                e.force_literal = wanted;
                return Err(e);
            }
            // Exact matches only (Numba's `exact_match_required`): the lookup above was
            // that selection, so a miss or a tie compiles.
            let r = self.compile(args);
            if let Err(e) = &r {
                if !e.force_literal.is_empty() {
                    self.literal_requests
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(args.to_vec(), e.force_literal.clone());
                }
            }
            return r;
        }
        let overloads = self.overloads();
        let policy = selection::Policy::for_dispatcher(can_compile);
        let candidates = overloads.iter().map(|o| o.arg_types.as_slice());
        match selection::select(args, candidates, policy) {
            selection::Selection::Unique(i) => Ok(overloads[i].clone()),
            // An object-mode specialisation takes any arguments: Numba's dispatcher runs
            // it for calls no other one matches (its `fallbackdef`).
            selection::Selection::NoMatch => overloads
                .iter()
                .find(|o| o.object_env.is_some())
                .cloned()
                .ok_or_else(|| {
                    CompileError::new(ErrorKind::Dispatch, selection::no_match_message(args))
                }),
            selection::Selection::Ambiguous(tied) => {
                let sigs: Vec<(&[TypeId], TypeId)> = tied
                    .iter()
                    .map(|&i| (overloads[i].arg_types.as_slice(), overloads[i].return_type))
                    .collect();
                Err(CompileError::new(
                    ErrorKind::Dispatch,
                    selection::ambiguous_message(&self.display(), args, &sigs),
                ))
            }
        }
    }

    /// Compile a new specialisation for these argument types (or return the existing one).
    ///
    /// Thread-safe: the first thread to ask for a signature compiles it; others asking
    /// meanwhile wait for that result, so a signature is compiled once. A thread that is
    /// itself inside another compilation does not wait (two threads each compiling a
    /// function the other needs would deadlock): it compiles its own copy, and the first
    /// one stored is the one everybody gets.
    pub fn compile(&self, args: &[TypeId]) -> Result<Arc<CompiledFunction>, CompileError> {
        if let Some(c) = self.lookup(args) {
            return Ok(c);
        }
        let me = std::thread::current().id();
        let nested = IN_PROGRESS.with(|s| !s.borrow().is_empty());
        let claim = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            // Checked again under the lock: the owner stores the result before it removes
            // its entry.
            if let Some(c) = self.lookup(args) {
                return Ok(c);
            }
            match pending.get(args) {
                Some(p) if p.owner != me && !nested => Err(p.clone()),
                Some(_) => Ok(None),
                None => {
                    let p = Arc::new(Pending {
                        owner: me,
                        result: Mutex::new(None),
                        ready: Condvar::new(),
                    });
                    pending.insert(args.to_vec(), p.clone());
                    Ok(Some(p))
                }
            }
        };
        let claim = match claim {
            Err(p) => return p.wait(),
            Ok(c) => c,
        };
        // Finishes the claim however compilation ends (a panic included, which numba-py
        // catches): waiters wake and the signature can be tried again.
        struct Release<'a> {
            d: &'a Dispatcher,
            args: &'a [TypeId],
            claim: Option<Arc<Pending>>,
            result: Option<Result<Arc<CompiledFunction>, CompileError>>,
        }
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                if let Some(p) = self.claim.take() {
                    p.finish(self.result.take().unwrap_or_else(|| {
                        Err(CompileError::new(
                            ErrorKind::Internal,
                            format!("compiling {} failed on another thread", self.d.name),
                        ))
                    }));
                    self.d
                        .pending
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(self.args);
                }
            }
        }
        let mut release = Release {
            d: self,
            args,
            claim,
            result: None,
        };
        let result = self.compile_now(args);
        release.result = Some(result.clone());
        drop(release);
        result
    }

    /// Run the pipeline for these argument types, without storing the result.
    fn build(&self, args: &[TypeId]) -> Result<CompiledFunction, CompileError> {
        let key = (self.id, args.to_vec());
        IN_PROGRESS.with(|s| s.borrow_mut().insert(key.clone()));
        let result = (|| {
            let (code, globals) = self.source.load_for(args).map_err(|m| {
                match m.strip_prefix(FORCE_LITERAL_PREFIX) {
                    Some(idx) => {
                        let mut e =
                            CompileError::new(ErrorKind::Typing, "literal arguments requested");
                        e.force_literal = idx.split(',').filter_map(|i| i.parse().ok()).collect();
                        e
                    }
                    None => CompileError::new(ErrorKind::Internal, m),
                }
            })?;
            let explicit_ret = self
                .explicit_returns
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(args)
                .copied();
            let defaults = if args
                .iter()
                .any(|t| matches!(t.get(), numba_typeinfer::types::Type::Omitted(_)))
            {
                self.parameters().map(|p| p.defaults).unwrap_or_default()
            } else {
                Vec::new()
            };
            let options = CompileOptions {
                dispatcher_id: Some(self.id),
                return_type: explicit_ret,
                module: self.source.module(),
                fastmath: self.options.fastmath,
                error_model: self.options.error_model,
                boundscheck: self.options.boundscheck,
                defaults,
                rewrite_trace: false,
                parallel: self.options.parallel,
                wrappers: self.options.wrappers.clone(),
                locals: self.options.locals.clone(),
                object_mode: self.options.object_mode,
                no_looplift: self.options.no_looplift,
                nogil: self.options.nogil,
                no_cpython_wrapper: self.options.generated,
                no_nrt: self.options.no_nrt,
                no_rewrites: self.options.no_rewrites,
                code_target: self.options.code_target,
            };
            let cache = self.cache_key(args, explicit_ret);
            if let Some((site, key)) = &cache {
                if let Some(hit) = self.load_cached(site, key, args) {
                    return Ok(hit);
                }
            }
            let mut compiled = match self.source.lifted_ir() {
                Some(ir) if self.objmode_with.is_some() => {
                    compile_lifted_with(ir, globals.as_ref(), args, &options)?
                }
                Some(ir) => {
                    compile_lifted_loop(ir, globals.as_ref(), args, &options, &self.target)?
                }
                None => compile_function(code, globals.as_ref(), args, &options, &self.target)?,
            };
            // Loops lifted out of an object-mode function: each a dispatcher of its own,
            // which the function's environment holds.
            if let Some(env) = compiled.object_env.as_mut() {
                if !env.lifted_ir.is_empty() {
                    let me = lookup_dispatcher(self.id).ok_or_else(|| {
                        CompileError::new(ErrorKind::Internal, "dispatcher not registered")
                    })?;
                    for ir in std::mem::take(&mut env.lifted_ir) {
                        env.lifted.push(me.lifted_loop(ir).id);
                    }
                }
            }
            if let Some((site, key)) = &cache {
                self.save_cached(site, key, &mut compiled);
            }
            Ok(compiled)
        })();
        IN_PROGRESS.with(|s| s.borrow_mut().remove(&key));
        result
    }

    /// Run the pipeline for these argument types and store the specialisation (unless one
    /// was stored meanwhile, which is returned instead).
    fn compile_now(&self, args: &[TypeId]) -> Result<Arc<CompiledFunction>, CompileError> {
        let compiled = Arc::new(self.build(args)?);
        let mut overloads = self.overloads.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = overloads.iter().find(|o| o.arg_types == args) {
            return Ok(existing.clone());
        }
        overloads.push(compiled.clone());
        self.publish(&overloads);
        drop(overloads);
        self.fill_slot(&compiled);
        Ok(compiled)
    }

    /// Store a specialisation's native address in the word callers compiled before it
    /// read (mutual recursion).
    fn fill_slot(&self, compiled: &CompiledFunction) {
        if let Some(slot) = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&compiled.arg_types)
        {
            slot.store(compiled.native, Ordering::SeqCst);
        }
    }
}
