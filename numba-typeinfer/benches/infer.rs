//! Type inference time per function over the NumPy fixtures (`tests/fixtures/arrays.py`),
//! each typed with the argument types Numba used (`oracle/arrays.typing.tsv`). IR is built
//! once; only `infer` is timed.
//!
//! `cargo bench -p numba-typeinfer --bench infer`

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use numba_ir::{compile_to_ir, FunctionIR, Global, GlobalKind};
use numba_typeinfer::context::{BaseContext, CallOutcome, CalleeResolver};
use numba_typeinfer::infer;
use numba_typeinfer::types::{parse_type, TypeId};

struct NoCallees;

impl CalleeResolver for NoCallees {
    fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
        Err("no callees".into())
    }
}

fn corpus() -> Vec<(FunctionIR, Vec<TypeId>)> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let text = fs::read_to_string(fixtures.join("oracle/arrays.typing.tsv")).unwrap();
    let mut globals: HashMap<String, Global> = HashMap::new();
    globals.insert(
        "np".into(),
        Global {
            kind: GlobalKind::Module("numpy".into()),
            repr: "<module 'numpy'>".into(),
        },
    );
    text.lines()
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let args = cols[1].split(';').map(|a| parse_type(a).unwrap()).collect();
            let blob =
                fs::read(fixtures.join(format!("blobs/arrays.{}.marshal", cols[0]))).unwrap();
            let code = numba_bytecode::marshal::read_code(&blob).unwrap();
            (compile_to_ir(code, &globals).unwrap(), args)
        })
        .collect()
}

fn inference(c: &mut Criterion) {
    let funcs = corpus();
    let ctx = BaseContext::default();
    let mut group = c.benchmark_group("typeinfer");
    group.throughput(Throughput::Elements(funcs.len() as u64));
    group.bench_function("numpy_fixtures", |b| {
        b.iter(|| {
            for (ir, args) in &funcs {
                std::hint::black_box(infer(ir, args, &ctx, &NoCallees, None).unwrap());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, inference);
criterion_main!(benches);
