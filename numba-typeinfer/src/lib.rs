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
//!
//! # Example
//!
//! Type `def add(a, b): return a + b` for two argument-type tuples: `int64 + int64` is
//! `int64`, and `int64 + float64` promotes to `float64`, as in Numba.
//!
//! ```rust
//! use std::collections::HashMap;
//!
//! use numba_ir::{compile_to_ir, Global};
//! use numba_typeinfer::types::{FLOAT64, INT64};
//! use numba_typeinfer::{infer, BaseContext, CallOutcome, CalleeResolver, TypeId};
//!
//! /// `add` calls no other jitted function.
//! struct NoCallees;
//! impl CalleeResolver for NoCallees {
//!     fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
//!         Err("no callees".into())
//!     }
//! }
//!
//! let blob = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../tests/fixtures/blobs/scalars.add.marshal"
//! ))?;
//! let code = numba_bytecode::marshal::read_code(&blob)?;
//! let ir = compile_to_ir(code, &HashMap::<String, Global>::new())?;
//! let ctx = BaseContext::default();
//!
//! let ints = infer(&ir, &[INT64, INT64], &ctx, &NoCallees, None)?;
//! assert_eq!(ints.return_type, INT64);
//! let sum = ir.var_by_name("$binop_add8.2").expect("the + result");
//! assert_eq!(ints.type_of(sum).to_string(), "int64");
//!
//! let mixed = infer(&ir, &[INT64, FLOAT64], &ctx, &NoCallees, None)?;
//! assert_eq!(mixed.return_type.to_string(), "float64");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod annotate;
pub mod attr_builtins;
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
