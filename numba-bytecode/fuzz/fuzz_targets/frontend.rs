//! `cargo fuzz run frontend` (from `numba-bytecode/`): arbitrary bytes through the marshal
//! reader, the `.pyc` reader, the decoder, the `dis` listing, the dataflow and the CFG dumps.
//! Seed it with the fixture blobs: `cargo fuzz run frontend ../tests/fixtures/blobs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numba_bytecode::fuzzing::exercise(data);
});
