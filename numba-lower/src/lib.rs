//! # numba-lower
//!
//! Lowering of typed Numba IR to LLVM, and the targets that turn LLVM into machine code.
//! The only crate that names inkwell. Its shape mirrors Numba's back end:
//! - [`TargetContext`], implemented by [`CpuTarget`] (a value, held by whoever compiles);
//! - a [`Registry`] of lowering implementations keyed by the very [`ImplKey`] and
//!   signature type inference resolved ([`registry`]); built-ins live in `impls/` by topic
//!   (int, float, complex, builtins, math, iterators, tuples, optional, calls, NumPy's
//!   "not lowered yet" entries);
//! - one data model per type kind ([`model`]): register and memory representation, and the
//!   slots a value takes at the CPython boundary;
//! - the calling convention ([`callconv`]): `i32 fn(ret*, excinfo**, args...)`, status
//!   codes, the [`ExcInfo`] protocol and the uniform entry wrapper;
//! - casts (`cast`), raising exceptions (`exceptions`), symbol mangling (`mangle`) and host
//!   codegen (`codegen`: the per-thread target machine, O3, assembly);
//! - the process's one JIT session ([`jit`]): an ORC LLJIT linking each module's object
//!   code, the runtime's symbols defined once, LLVM warmed up on a background thread;
//! - generators (`generator`): a generator function becomes init, `next`, `close` and
//!   finalize functions over a heap object ([`model::generator`]); consumers link the
//!   generator's module in to inline it, and `heap2stack` moves objects that do not
//!   escape to the stack;
//! - reference-count pruning ([`refprune`]): removes the `NRT_incref`/`NRT_decref` pairs
//!   the naive lowering ([`nrt`]) emits that cancel out, in Numba's four shapes (per
//!   block, diamond, fanout, fanout with raise), before and after O3;
//! - foreign entry points ([`wrappers`]): NumPy ufunc and gufunc inner loops and C-ABI
//!   cfuncs built beside the native function (`vectorize`, `guvectorize`, `cfunc`);
//! - calls of `with objmode(...)` bodies from nopython code (`impls::objmode_with`: the
//!   arguments packed into boundary slots for the embedder's `numba_rs_objmode_with`);
//! - on-disk caching ([`cache`]): the optimised module with its jitted callees linked
//!   in, as bitcode, and loaded back into the JIT in a later process;
//! - object mode ([`objmode`]): untyped IR lowered to CPython API calls the embedder
//!   provides the addresses of.
//!
//! # Example
//!
//! Lower `def floor_mod(a, b): return a // b + a % b` typed `(int64, int64)` on the CPU
//! target and call it through the uniform entry wrapper. Python's floor semantics give
//! `7 // -3 + 7 % -3 == -3 + -2 == -5` (C's truncation would give `-2 + 1`).
//!
//! ```rust
//! use std::collections::HashMap;
//!
//! use numba_ir::{compile_to_ir, Global};
//! use numba_lower::{CpuTarget, ExcInfo, LinkedFunctions, LowerOptions, TargetContext};
//! use numba_lower::STATUS_OK;
//! use numba_typeinfer::types::INT64;
//! use numba_typeinfer::{infer, BaseContext, CallOutcome, CalleeResolver, TypeId};
//! # struct NoCallees;
//! # impl CalleeResolver for NoCallees {
//! #     fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
//! #         Err("no callees".into())
//! #     }
//! # }
//! # struct NoLinks;
//! # impl LinkedFunctions for NoLinks {
//! #     fn native_address(&self, _: u64, _: &[TypeId]) -> Option<usize> {
//! #         None
//! #     }
//! # }
//!
//! let blob = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../tests/fixtures/blobs/scalars.floor_mod.marshal"
//! ))?;
//! let code = numba_bytecode::marshal::read_code(&blob)?;
//! let mut ir = compile_to_ir(code, &HashMap::<String, Global>::new())?;
//! let typing = infer(&ir, &[INT64, INT64], &BaseContext::default(), &NoCallees, None)?;
//! numba_ir::postproc::insert_dels(&mut ir); // lowering drops references at the dels
//!
//! let f = CpuTarget::new().compile(&ir, &typing, &LowerOptions::default(), &NoLinks)?;
//! // `i32 fn(ret*, excinfo**, args...)`, the native calling convention.
//! let define = format!(
//!     "define i32 @{}(ptr %retptr, ptr %excinfo, i64 %arg.a, i64 %arg.b)",
//!     f.symbol
//! );
//! assert!(f.llvm_ir.contains(&define), "{}", f.llvm_ir);
//! let args = [7i64 as u64, -3i64 as u64];
//! let (mut ret, mut exc) = (0u64, std::ptr::null::<ExcInfo>());
//! // SAFETY: the entry wrapper was compiled for two int64 argument slots.
//! let status = unsafe { (f.entry)(&mut ret, &mut exc, args.as_ptr()) };
//! assert_eq!(status, STATUS_OK);
//! assert_eq!(ret as i64, -5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`ImplKey`]: numba_typeinfer::ImplKey

pub mod blas;
pub mod boxing;
pub mod bytes;
pub mod cache;
pub mod callconv;
pub mod external;

mod cast;
mod codegen;
pub mod cuda;
pub mod dicts;
mod exceptions;
mod frozen;
mod function;
mod generator;
mod heap2stack;
mod impls;
pub mod jit;
pub mod lapack;
pub mod lists;
pub mod mangle;
pub mod model;
pub mod nrt;
pub mod objmode;
mod parallel;
pub mod random;
pub mod refprune;
pub mod registry;
pub mod runtime;
pub mod sets;
pub mod sort;
pub mod str_format;
pub mod str_methods;
pub mod strings;
pub mod unicode_db;

mod target;
pub mod wrappers;

use std::time::Duration;

use numba_ir::FunctionIR;
use numba_typeinfer::{TypeId, TypingResult};
use thiserror::Error;

pub use callconv::{
    boundary_shape, EntryFn, ExcInfo, Leaf, RaisedException, Shape, STATUS_EXC, STATUS_NONE,
    STATUS_OK, STATUS_STOPIT, STATUS_USER_EXC,
};
pub use function::FnLower;
pub use generator::GeneratorSymbols;
pub use model::generator::RESUME_INDEX_OFFSET;
pub use refprune::{PruneStats, RefPruneFlags};
pub use registry::{Args, ExtensionLowerFn, LowerFn, Lowering, Registry, TypePat};
pub use target::CpuTarget;
pub use wrappers::{WrapperAddresses, Wrappers};

pub(crate) type R<T> = Result<T, LowerError>;

/// Lowering failures.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LowerError {
    /// A construct that types but cannot be lowered yet.
    #[error("{message}")]
    Unsupported { message: String, line: u32 },
    /// Code a host or library supplied failed while generating its body (an
    /// intrinsic's `codegen` raising, say): Numba's `LoweringError`.
    #[error("{message}")]
    Lowering { message: String, line: u32 },
    /// LLVM rejected the module (a bug in lowering).
    #[error("internal LLVM error: {0}")]
    Llvm(String),
}

pub(crate) fn llvm_err(e: impl std::fmt::Display) -> LowerError {
    LowerError::Llvm(e.to_string())
}

/// A function compiled for one argument-type tuple.
#[derive(Debug, Clone)]
pub struct CompiledFunction {
    /// Mangled symbol of the native function.
    pub symbol: String,
    /// Address of the native function (`i32 fn(ret*, excinfo**, args...)`).
    pub native: usize,
    /// The uniform entry wrapper.
    pub entry: EntryFn,
    pub arg_types: Vec<TypeId>,
    pub return_type: TypeId,
    /// The module before optimisation (`NUMBA_DUMP_LLVM`).
    pub llvm_ir: IrText,
    /// The module after reference-count pruning and O3 (`NUMBA_DUMP_OPTIMIZED`).
    pub optimized_ir: IrText,
    /// The host assembly of the optimised module (`NUMBA_DUMP_ASSEMBLY`), when
    /// [`LowerOptions::dump_assembly`] asked for it.
    pub assembly: Option<String>,
    /// The refop calls reference-count pruning removed, by shape.
    pub prune_stats: PruneStats,
    /// How each argument crosses the CPython boundary (`None`: it cannot).
    pub arg_shapes: Vec<Option<Shape>>,
    /// How the result crosses it (`None`: it cannot).
    pub ret_shape: Option<Shape>,
    /// Time spent in each pipeline stage (the back end's phases, then prepended by the
    /// driver with the front end's passes).
    pub timings: Vec<(String, Duration)>,
    /// Captured global arrays the code reads in place (see [`FrozenData`]).
    pub frozen_data: FrozenData,
    /// The typed IR annotated by source line (`NUMBA_DUMP_ANNOTATION`'s text), computed
    /// on demand: the compiler driver fills it in (`Dispatcher.inspect_types`).
    pub type_annotation: LazyText,
    /// The rewrites' `REWRITING` trace, when the driver was asked to keep it.
    pub rewrite_trace: String,
    /// Warnings the compilation raised (category as Numba names it, message, line), for
    /// the embedder to issue.
    pub warnings: Vec<CompileWarning>,
    /// The parallel loops made (`parallel=True`): id, source line, pattern, and the id
    /// of the loop it was fused into (if it was).
    pub parallel_loops: Vec<(usize, u32, String, Option<usize>)>,
    /// Allocations hoisted out of parallel loops: loop id, source line, allocating
    /// function (`numpy.zeros`).
    pub hoisted_allocations: Vec<(usize, u32, String)>,
    /// Each fusion of parallel loops tried: first, second and Numba's report line.
    pub fusion_reports: Vec<(usize, usize, String)>,
    /// The parallel loops nested in each parallel loop's body: outer id, inner ids.
    pub nested_parfors: Vec<(usize, Vec<usize>)>,
    /// The foreign entry points [`LowerOptions::wrappers`] asked for.
    pub wrappers: WrapperAddresses,
    /// An object-mode function's environment to fill before the first call
    /// ([`objmode`]); `None` in nopython code.
    pub object_env: Option<objmode::ObjectEnv>,
    /// The IR lowering saw and its types (the compiler driver fills it in): the type
    /// annotation and Numba's `metadata['preserved_ir']` read it. `None` for a function
    /// loaded from the cache.
    pub typed_ir: Option<std::sync::Arc<(FunctionIR, TypingResult)>>,
    /// Whether the code may recurse (it probes the stack before a recursive call, or
    /// calls code compiled elsewhere): the embedder then calls it through
    /// `numba_nrt::stack_guard`, so running out of stack raises instead of crashing.
    pub may_recurse: bool,
}

impl CompiledFunction {
    /// A specialisation with its code and types and nothing else recorded yet: the
    /// boundary shapes follow from the types, every report is empty.
    pub fn new(
        (symbol, native, entry): (String, usize, EntryFn),
        (arg_types, return_type): (&[TypeId], TypeId),
        (llvm_ir, optimized_ir): (IrText, IrText),
    ) -> Self {
        CompiledFunction {
            symbol,
            native,
            entry,
            arg_types: arg_types.to_vec(),
            return_type,
            llvm_ir,
            optimized_ir,
            assembly: None,
            prune_stats: PruneStats::default(),
            arg_shapes: arg_types.iter().map(|&t| boundary_shape(t).ok()).collect(),
            ret_shape: boundary_shape(return_type).ok(),
            timings: Vec::new(),
            frozen_data: FrozenData::default(),
            type_annotation: LazyText::default(),
            rewrite_trace: String::new(),
            warnings: Vec::new(),
            parallel_loops: Vec::new(),
            hoisted_allocations: Vec::new(),
            fusion_reports: Vec::new(),
            nested_parfors: Vec::new(),
            wrappers: WrapperAddresses::default(),
            object_env: None,
            typed_ir: None,
            may_recurse: true,
        }
    }
}

/// Whether optimised module text may recurse: it holds the stack probe of a recursive
/// call, or calls another compiled function by address (whose code it cannot see).
pub(crate) fn may_recurse(optimized_ir: &str, externals: &[(String, usize)]) -> bool {
    optimized_ir.contains(numba_nrt::stack_guard::STACK_PROBE_ASM)
        || externals
            .iter()
            .any(|(name, _)| name.starts_with("numba_rs.callee."))
}

/// A warning raised while compiling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileWarning {
    pub category: String,
    pub message: String,
    pub line: u32,
}

/// Text computed when first asked for (an annotation of the typed IR, say), so that a
/// compilation does not pay for a dump nobody reads.
#[derive(Clone, Default)]
pub struct LazyText(Option<std::sync::Arc<dyn Fn() -> String + Send + Sync>>);

impl LazyText {
    /// Text that `make` computes when asked for.
    pub fn new(make: impl Fn() -> String + Send + Sync + 'static) -> Self {
        LazyText(Some(std::sync::Arc::new(make)))
    }

    /// The text, or `None` when nothing was recorded.
    pub fn get(&self) -> Option<String> {
        self.0.as_ref().map(|f| f())
    }
}

/// A module's text: made when compiled, or (code loaded from the cache, which runs no
/// LLVM) the first time something asks for it. Clones share it.
#[derive(Clone)]
pub struct IrText(std::sync::Arc<IrTextInner>);

type MakeText = Box<dyn Fn() -> String + Send + Sync>;

struct IrTextInner {
    text: std::sync::OnceLock<std::sync::Arc<str>>,
    make: Option<MakeText>,
}

impl IrText {
    /// Text made later, once, by `make`.
    pub fn lazy(make: impl Fn() -> String + Send + Sync + 'static) -> Self {
        IrText(std::sync::Arc::new(IrTextInner {
            text: std::sync::OnceLock::new(),
            make: Some(Box::new(make)),
        }))
    }

    fn text(&self) -> &std::sync::Arc<str> {
        self.0.text.get_or_init(|| {
            self.0
                .make
                .as_ref()
                .map_or_else(String::new, |f| f())
                .into()
        })
    }

    /// The text, shared.
    pub fn arc(&self) -> std::sync::Arc<str> {
        self.text().clone()
    }

    pub fn as_str(&self) -> &str {
        self.text()
    }
}

impl From<String> for IrText {
    fn from(text: String) -> Self {
        IrText(std::sync::Arc::new(IrTextInner {
            text: std::sync::OnceLock::from(std::sync::Arc::<str>::from(text)),
            make: None,
        }))
    }
}

impl std::ops::Deref for IrText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for IrText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Without the text.
impl std::fmt::Debug for IrText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IrText(..)")
    }
}

/// Without the text.
impl std::fmt::Debug for LazyText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "LazyText(..)"
        } else {
            "LazyText(None)"
        })
    }
}

/// The host assembly of a specialisation, from its optimised module's text
/// ([`CompiledFunction::optimized_ir`]): parsed into a fresh context and run through the
/// host code generator, as `NUMBA_DUMP_ASSEMBLY` does at compile time.
pub fn assembly_of(optimized_ir: &str) -> R<String> {
    let ctx = inkwell::context::Context::create();
    let module = codegen::parse_ir(&ctx, optimized_ir, "optimized")?;
    let machine = codegen::host_machine()?;
    codegen::assembly(&module, machine)
}

/// The bytes of global arrays too large to freeze into the module as LLVM constants
/// (over [`FREEZE_IN_MODULE_LIMIT`]): the code points at these captures instead, so they
/// live as long as the compiled function. They are still copies taken at compile time.
#[derive(Clone, Default)]
pub struct FrozenData(pub Vec<std::sync::Arc<[u8]>>);

/// Without the bytes.
impl std::fmt::Debug for FrozenData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|d| d.len()))
            .finish()
    }
}

/// The largest global array (in bytes) frozen into the module as an LLVM constant: Numba's
/// limit (`make_constant_array`), past which printing and optimising the module would cost
/// more than the constant is worth.
pub const FREEZE_IN_MODULE_LIMIT: usize = 1_000_000;

/// A compiled function's optimised module, for callers that link it in so that LLVM can
/// inline it (a jitted callee into its caller, as Numba links its callees' libraries; a
/// generator's functions into the code that consumes it).
#[derive(Debug, Clone)]
pub struct Library {
    /// The function's symbol (a generator's init symbol; see `generator::GeneratorSymbols`).
    pub symbol: String,
    /// The optimised module's text ([`CompiledFunction::optimized_ir`]).
    pub ir: std::sync::Arc<str>,
    /// Captures the module's code reads in place ([`CompiledFunction::frozen_data`]): a
    /// caller that links the module keeps them too.
    pub frozen: FrozenData,
}

/// Other compiled functions a module calls: native address by dispatcher id and arg types.
pub trait LinkedFunctions {
    /// The optimised module of a compiled function, to link into the caller's.
    fn library(&self, _dispatcher_id: u64, _args: &[TypeId]) -> Option<Library> {
        None
    }
    fn native_address(&self, dispatcher_id: u64, args: &[TypeId]) -> Option<usize>;
    /// For a function still being compiled (mutual recursion): the address of a word that
    /// will hold its native address once it is compiled; the call goes through it.
    fn native_slot(&self, _dispatcher_id: u64, _args: &[TypeId]) -> Option<usize> {
        None
    }
    /// Whether the dispatcher runs the body of a `with objmode(...)` block: its calls
    /// box the arguments and run it through the host (`impls::objmode_with`).
    fn objmode_with(&self, _dispatcher_id: u64) -> bool {
        false
    }
}

/// Fast-math flags (LLVM's bit values), as `fastmath=True` or a set of flag names selects.
pub mod fastmath {
    pub const REASSOC: u32 = 0x01;
    pub const NNAN: u32 = 0x02;
    pub const NINF: u32 = 0x04;
    pub const NSZ: u32 = 0x08;
    pub const ARCP: u32 = 0x10;
    pub const CONTRACT: u32 = 0x20;
    pub const AFN: u32 = 0x40;
    /// `fastmath=True`.
    pub const FAST: u32 = 0x7f;

    /// A flag by the name Numba accepts (`nnan`, `ninf`, `nsz`, `arcp`, `contract`, `afn`,
    /// `reassoc`, `fast`).
    pub fn flag(name: &str) -> Option<u32> {
        Some(match name {
            "reassoc" => REASSOC,
            "nnan" => NNAN,
            "ninf" => NINF,
            "nsz" => NSZ,
            "arcp" => ARCP,
            "contract" => CONTRACT,
            "afn" => AFN,
            "fast" => FAST,
            _ => return None,
        })
    }
}

/// What division by zero does in float code: raise (Python) or give inf/nan (NumPy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorModel {
    #[default]
    Python,
    Numpy,
}

/// Lowering options.
#[derive(Debug, Clone)]
pub struct LowerOptions {
    /// Dispatcher id of the function being compiled (self-recursive calls become direct);
    /// also the unique id in its mangled symbol.
    pub self_id: Option<u64>,
    /// Unique id for the symbol (the dispatcher id).
    pub uid: u64,
    /// The Python module the function belongs to (`__main__`), for mangling.
    pub module: String,
    /// Fast-math flags ([`fastmath`]); 0 for none.
    pub fastmath: u32,
    pub error_model: ErrorModel,
    /// Check array indices (`boundscheck=True` or `NUMBA_BOUNDSCHECK=1`): IndexError.
    pub boundscheck: bool,
    /// Reference-count pruning shapes (`NUMBA_LLVM_REFPRUNE_PASS` /
    /// `NUMBA_LLVM_REFPRUNE_FLAGS`, see [`RefPruneFlags::from_env`]); all by default,
    /// [`RefPruneFlags::NONE`] turns pruning off.
    pub refprune: RefPruneFlags,
    /// Keep the host assembly in [`CompiledFunction::assembly`] (`NUMBA_DUMP_ASSEMBLY`).
    pub dump_assembly: bool,
    /// Foreign entry points to build beside the native function (vectorize, cfunc).
    pub wrappers: Wrappers,
}

impl Default for LowerOptions {
    fn default() -> Self {
        LowerOptions {
            self_id: None,
            uid: 0,
            module: String::new(),
            fastmath: 0,
            error_model: ErrorModel::default(),
            boundscheck: false,
            refprune: RefPruneFlags::ALL,
            dump_assembly: false,
            wrappers: Wrappers::default(),
        }
    }
}

/// A code-generation target: data models, calling convention, registry and codegen.
pub trait TargetContext: Send + Sync {
    /// `cpu`, `parallel`, `cuda`.
    fn name(&self) -> &'static str;
    /// The lowering implementations.
    fn registry(&self) -> &Registry;
    /// Lower and compile one typed function.
    fn compile(
        &self,
        ir: &FunctionIR,
        typing: &TypingResult,
        options: &LowerOptions,
        linked: &dyn LinkedFunctions,
    ) -> Result<CompiledFunction, LowerError>;
}
