//! Front-end throughput on the fixture corpus, in instructions per second:
//! - `decode`: marshal bytes → code object → decoded instructions;
//! - `analyze`: decode + stack dataflow + CFG analyses (what the IR stage needs);
//! - `dis`: the `dis.dis` listing.
//!
//! `cargo bench -p numba-bytecode --bench frontend`

use std::fs;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use numba_bytecode::{flow, listing, marshal, ByteCode};

fn blobs() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/blobs");
    let mut paths: Vec<_> = fs::read_dir(dir)
        .expect("fixture blobs")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "marshal"))
        .collect();
    paths.sort();
    paths.into_iter().map(|p| fs::read(p).unwrap()).collect()
}

fn frontend(c: &mut Criterion) {
    let blobs = blobs();
    // Only functions the front end accepts, so every iteration does the same work.
    let accepted: Vec<Vec<u8>> = blobs
        .iter()
        .filter(|b| {
            let bc = ByteCode::decode(marshal::read_code(b).unwrap()).unwrap();
            flow::analyze(&bc).is_ok()
        })
        .cloned()
        .collect();
    let count = |set: &[Vec<u8>]| -> u64 {
        set.iter()
            .map(|b| {
                let bc = ByteCode::decode(marshal::read_code(b).unwrap()).unwrap();
                bc.instructions.len() as u64
            })
            .sum()
    };
    let mut group = c.benchmark_group("frontend");
    group.throughput(Throughput::Elements(count(&blobs)));
    group.bench_function("decode", |b| {
        b.iter(|| {
            for blob in &blobs {
                let bc = ByteCode::decode(marshal::read_code(blob).unwrap()).unwrap();
                std::hint::black_box(bc);
            }
        })
    });
    group.bench_function("dis", |b| {
        b.iter(|| {
            for blob in &blobs {
                let code = marshal::read_code(blob).unwrap();
                std::hint::black_box(listing::dis(&code).unwrap());
            }
        })
    });
    group.throughput(Throughput::Elements(count(&accepted)));
    group.bench_function("analyze", |b| {
        b.iter(|| {
            for blob in &accepted {
                let bc = ByteCode::decode(marshal::read_code(blob).unwrap()).unwrap();
                std::hint::black_box(flow::analyze(&bc).unwrap());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, frontend);
criterion_main!(benches);
