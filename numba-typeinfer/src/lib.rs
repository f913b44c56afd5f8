//! # numba-typeinfer
//!
//! Hardware-independent typing for numba-rs. It owns:
//! - the type system: [`Type`] values interned once per process in an append-only table whose
//!   index is the typecode ([`TypeId`]); primitives are constants ([`types::INT64`], ...);
//!   names print as Numba prints them;
//! - conversion kinds and Numba's scalar conversion table, and `unify` ([`conv`]);
//! - the [`TypingContext`] trait and [`BaseContext`], a registry of function templates
//!   (operators, builtins, `math`, and NumPy in [`numpy`], [`np_random`] and [`numpy_manip`])
//!   that users extend with their own ([`FunctionTemplate`]);
//! - the constraint-propagation inference engine ([`infer`](mod@infer)) producing side tables
//!   ([`TypingResult`]: typemap, calltypes, return type) without mutating the IR;
//! - explicit signature strings such as `"float64(float64[:], int64)"` ([`parse_signature`]);
//! - the `NUMBA_DUMP_ANNOTATION` text ([`annotate`]);
//! - the hooks a host's extension templates plug into ([`extension`]).

pub mod annotate;
pub mod builtins;
pub mod carray;
pub mod cinterop;
pub mod context;
pub mod conv;
pub mod cuda;
pub mod dicts;
pub mod dtypes;
pub mod error;
pub mod extension;
pub mod generators;
pub mod infer;
pub mod isinstance;
pub mod jitclass;
pub mod lists;
pub mod machine_info;
pub mod np_generator;
pub mod np_random;
pub mod npdatetime;
pub mod numpy;
pub mod numpy_manip;
pub mod numpy_misc;
pub mod records;
pub mod sets;
pub mod signature;
pub mod strings;
pub mod types;
pub mod ufunc_call;

pub use context::{
    BaseContext, CallOutcome, CalleeResolver, FunctionTemplate, TypingContext, UFuncLoop,
};
pub use conv::Conversion;
pub use error::TypingError;
pub use infer::{infer, infer_with_locals, BoundArg, TypingResult};
pub use signature::{parse_signature, ImplKey, Signature};
pub use types::{Type, TypeId};
