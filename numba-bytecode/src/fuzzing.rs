//! The whole front end driven from untrusted bytes, for fuzzers and robustness tests.
//!
//! [`exercise`] runs every stage a user can reach (marshal reader, `.pyc` reader, decoder,
//! `dis` listing, stack dataflow, CFG dumps) and discards the results: the only acceptable
//! outcomes are values or [`crate::BytecodeError`]s. Both the seeded test in `cargo test` and
//! the `cargo fuzz` target in `numba-bytecode/fuzz` call it.

use crate::code::{CodeObject, Constant};
use crate::{flow, listing, marshal, ByteCode};

/// Feed `data` to every entry point, as marshal data and as a `.pyc`.
pub fn exercise(data: &[u8]) {
    if let Ok(code) = marshal::read_code(data) {
        exercise_code(&code);
    }
    let _ = marshal::read_object(data);
    if let Ok(code) = marshal::read_pyc(data) {
        exercise_code(&code);
    }
}

/// Run decoding, the listing and the analyses on a code object and its nested ones.
pub fn exercise_code(code: &CodeObject) {
    let _ = listing::dis(code);
    if let Ok(bc) = ByteCode::decode(code.clone()) {
        let _ = bc.dump();
        if let Ok(df) = flow::analyze(&bc) {
            let _ = df.cfg.numba_dump();
            let _ = df.dump(&bc);
        }
    }
    for c in &code.consts {
        if let Constant::Code(inner) = c {
            exercise_code(inner);
        }
    }
}
