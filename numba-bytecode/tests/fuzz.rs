//! Seeded fuzzing in `cargo test`: random bytes and mutations of the fixture corpus go
//! through every front-end entry point ([`numba_bytecode::fuzzing::exercise`]). A panic fails
//! the test; a hang makes it time out. The `cargo fuzz` target in `numba-bytecode/fuzz` does
//! the same with coverage guidance.

use std::fs;
use std::path::Path;

use numba_bytecode::fuzzing::{exercise, exercise_code};
use numba_bytecode::{marshal, CodeObject};

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Rounds scale with `NUMBA_RS_FUZZ_SCALE` (default 1) for longer local runs.
fn rounds(base: usize) -> usize {
    let scale = std::env::var("NUMBA_RS_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1usize);
    base * scale
}

fn corpus_blobs() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/blobs");
    let mut paths: Vec<_> = fs::read_dir(dir)
        .expect("fixture blobs")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "marshal"))
        .collect();
    paths.sort();
    paths.into_iter().map(|p| fs::read(p).unwrap()).collect()
}

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(8) {
        if data.is_empty() {
            data.push(rng.next() as u8);
            continue;
        }
        let i = rng.below(data.len());
        match rng.below(6) {
            0 => data[i] ^= 1 << rng.below(8),
            1 => data[i] = rng.next() as u8,
            2 => data.truncate(i),
            3 => data.insert(i, rng.next() as u8),
            4 => {
                data.remove(i);
            }
            _ => {
                // Interesting values where lengths and arguments live.
                let v = [0u8, 1, 0x7f, 0x80, 0xff][rng.below(5)];
                data[i] = v;
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..rounds(20_000) {
        let len = rng.below(64);
        let mut data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        // Start most inputs with a plausible type code so the reader gets past byte 0.
        if let Some(first) = data.first_mut() {
            *first = [b'c' | 0x80, b'c', b')', b'(' | 0x80, b'r'][rng.below(5)];
        }
        exercise(&data);
    }
}

#[test]
fn mutated_marshal_blobs_never_panic() {
    let blobs = corpus_blobs();
    assert!(blobs.len() >= 60);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for round in 0..rounds(3_000) {
        let mut data = blobs[round % blobs.len()].clone();
        mutate(&mut rng, &mut data);
        exercise(&data);
    }
}

/// Mutating the code object's fields directly reaches the decoder and the trace far more
/// often than mutating marshal bytes, which usually fail in the reader.
#[test]
fn mutated_code_objects_never_panic() {
    let codes: Vec<CodeObject> = corpus_blobs()
        .iter()
        .map(|b| marshal::read_code(b).unwrap())
        .collect();
    let mut rng = Rng(0x0bad_5eed_dead_beef);
    for round in 0..rounds(6_000) {
        let mut code = codes[round % codes.len()].clone();
        match rng.below(4) {
            0 => mutate(&mut rng, &mut code.code),
            1 => mutate(&mut rng, &mut code.exceptiontable),
            2 => mutate(&mut rng, &mut code.linetable),
            _ => {
                // Swap in a random opcode with a random argument, keeping the length.
                if code.code.len() >= 2 {
                    let i = rng.below(code.code.len() / 2) * 2;
                    code.code[i] = rng.next() as u8;
                    code.code[i + 1] = rng.next() as u8;
                }
            }
        }
        exercise_code(&code);
    }
}

#[test]
fn exponential_references_are_refused() {
    // [t0, t1, ..., t60] with t0 = (None, None) and t(k+1) = (t(k), t(k)) written as two
    // references: 700 bytes that would expand to 2**60 objects.
    let levels = 60u32;
    let mut data = vec![b'['];
    data.extend_from_slice(&(levels + 1).to_le_bytes());
    data.extend_from_slice(&[b'(' | 0x80, 2, 0, 0, 0, b'N', b'N']);
    for k in 0..levels {
        data.extend_from_slice(&[b'(' | 0x80, 2, 0, 0, 0]);
        for _ in 0..2 {
            data.push(b'r');
            data.extend_from_slice(&k.to_le_bytes());
        }
    }
    let err = marshal::read_object(&data).expect_err("the expansion is refused");
    assert!(err.to_string().contains("expand"), "{err}");
    // A few levels are fine: the same shape with 3 levels reads back.
    let mut small = vec![b'['];
    small.extend_from_slice(&4u32.to_le_bytes());
    small.extend_from_slice(&[b'(' | 0x80, 2, 0, 0, 0, b'N', b'N']);
    for k in 0..3u32 {
        small.extend_from_slice(&[b'(' | 0x80, 2, 0, 0, 0]);
        for _ in 0..2 {
            small.push(b'r');
            small.extend_from_slice(&k.to_le_bytes());
        }
    }
    assert!(marshal::read_object(&small).is_ok());
}
