//! # numba-lower
//!
//! Lowering of typed Numba IR to LLVM, and the targets that turn LLVM into machine code.
//! The only crate that names inkwell. It owns:
//! - the [`TargetContext`] trait (a target's data model, calling convention and codegen) and
//!   its CPU implementation [`CpuTarget`], which optimises at O3 and JIT-compiles into the
//!   process;
//! - the data model ([`model`]): one place that says how each type is laid out in LLVM;
//! - the native calling convention of seed 001: `i32 fn(ret*, excinfo**, args...)` returning
//!   a status ([`STATUS_OK`], [`STATUS_USER_EXC`]), plus a uniform entry wrapper
//!   `i32 entry(ret*, excinfo**, const u64* args)` that callers without LLVM (numba-py, Rust
//!   tests) use;
//! - constant exceptions raised from static data ([`ExcInfo`]).

mod cpu;
mod lower;
pub mod model;

use numba_ir::FunctionIR;
use numba_typeinfer::{TypeId, TypingResult};
use thiserror::Error;

pub use cpu::CpuTarget;

/// The native function returned normally.
pub const STATUS_OK: i32 = 0;
/// A user exception was raised; details are in the `ExcInfo` stored through `excinfo`.
pub const STATUS_USER_EXC: i32 = 1;

/// Static description of a raised exception, as the native code stores it through its
/// `excinfo` argument: a NUL-terminated class name (`ZeroDivisionError`) and message.
#[repr(C)]
#[derive(Debug)]
pub struct ExcInfo {
    pub class_name: *const std::ffi::c_char,
    pub message: *const std::ffi::c_char,
}

impl ExcInfo {
    /// Read the class name and message.
    ///
    /// # Safety
    /// `ptr` must be an `ExcInfo` pointer stored by code this crate generated.
    pub unsafe fn read(ptr: *const ExcInfo) -> (String, String) {
        if ptr.is_null() {
            return (
                "SystemError".into(),
                "unknown error when calling native function".into(),
            );
        }
        // SAFETY: the caller guarantees ptr points at a generated static ExcInfo whose
        // fields are NUL-terminated strings with static lifetime.
        unsafe {
            let info = &*ptr;
            let s = |p: *const std::ffi::c_char| {
                if p.is_null() {
                    String::new()
                } else {
                    std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            (s(info.class_name), s(info.message))
        }
    }
}

/// The uniform entry point of a compiled specialisation: `args` holds one 8-byte slot per
/// argument (ints as i64, floats as f64 bits, bools as 0/1); the result is written to `ret`
/// (8 bytes, same encoding; a bool is its first byte).
pub type EntryFn =
    unsafe extern "C" fn(ret: *mut u64, excinfo: *mut *const ExcInfo, args: *const u64) -> i32;

/// Lowering failures.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LowerError {
    /// A construct that types but cannot be lowered yet.
    #[error("{message}")]
    Unsupported { message: String, line: u32 },
    /// LLVM rejected the module (a bug in lowering).
    #[error("internal LLVM error: {0}")]
    Llvm(String),
}

/// A function compiled for one argument-type tuple.
#[derive(Debug, Clone)]
pub struct CompiledFunction {
    /// Symbol of the native function.
    pub symbol: String,
    /// Address of the native function (`i32 fn(ret*, excinfo**, args...)`).
    pub native: usize,
    /// The uniform entry wrapper.
    pub entry: EntryFn,
    pub arg_types: Vec<TypeId>,
    pub return_type: TypeId,
    /// The module before optimisation (`NUMBA_DUMP_LLVM`).
    pub llvm_ir: String,
    /// The module after O3 (`NUMBA_DUMP_OPTIMIZED`).
    pub optimized_ir: String,
}

/// Other compiled functions a module calls: native address by dispatcher id and arg types.
pub trait LinkedFunctions {
    fn native_address(&self, dispatcher_id: u64, args: &[TypeId]) -> Option<usize>;
}

/// Lowering options.
#[derive(Debug, Clone, Default)]
pub struct LowerOptions {
    /// Dispatcher id of the function being compiled (self-recursive calls become direct).
    pub self_id: Option<u64>,
    /// A unique suffix for symbol names.
    pub unique_id: u64,
}

/// A code-generation target: data model, calling convention and codegen.
pub trait TargetContext {
    /// `cpu`, `parallel`, `cuda`.
    fn name(&self) -> &'static str;
    /// Lower and compile one typed function.
    fn compile(
        &self,
        ir: &FunctionIR,
        typing: &TypingResult,
        options: &LowerOptions,
        linked: &dyn LinkedFunctions,
    ) -> Result<CompiledFunction, LowerError>;
}
