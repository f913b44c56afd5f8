//! Bytecode → IR → post-processing on the fixture corpus, in functions per second:
//! - `interpret`: decode + dataflow + interpreter + post-processing (`compile_to_ir`);
//! - `postproc_dels`: liveness and `del` insertion on already-built IR.
//!
//! `cargo bench -p numba-ir --bench ir`

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use numba_bytecode::{marshal, CodeObject};
use numba_ir::{compile_to_ir, Global};

fn corpus() -> Vec<CodeObject> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/blobs");
    let mut paths: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "marshal"))
        .collect();
    paths.sort();
    let globals = HashMap::<String, Global>::new();
    paths
        .into_iter()
        .map(|p| marshal::read_code(&fs::read(p).unwrap()).unwrap())
        .filter(|c| compile_to_ir(c.clone(), &globals).is_ok())
        .collect()
}

fn ir(c: &mut Criterion) {
    let codes = corpus();
    let globals = HashMap::<String, Global>::new();
    let mut group = c.benchmark_group("ir");
    group.throughput(Throughput::Elements(codes.len() as u64));
    group.bench_function("interpret", |b| {
        b.iter(|| {
            for code in &codes {
                std::hint::black_box(compile_to_ir(code.clone(), &globals).unwrap());
            }
        })
    });
    let built: Vec<_> = codes
        .iter()
        .map(|c| compile_to_ir(c.clone(), &globals).unwrap())
        .collect();
    group.bench_function("postproc_dels", |b| {
        b.iter(|| {
            for ir in &built {
                let mut ir = ir.clone();
                numba_ir::postproc::insert_dels(&mut ir);
                std::hint::black_box(ir);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, ir);
criterion_main!(benches);
