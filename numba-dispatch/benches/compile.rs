//! Compile latency of the whole pipeline in one process (bytecode to machine code in the
//! JIT), per function, over the NumPy fixtures (`tests/fixtures/arrays.py`) typed with the
//! argument types Numba used (`oracle/arrays.typing.tsv`): what a library pays for each
//! function it compiles once LLVM is warm. Each iteration registers fresh dispatchers, so
//! nothing is reused between iterations but LLVM's and the JIT's process-wide state.
//! `pipeline_times` of the last compile of each function are summed per phase and
//! printed after the run (where the time goes).
//!
//! `cargo bench -p numba-dispatch --bench compile`

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use numba_dispatch::{register, FunctionSource};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_typeinfer::types::{parse_type, TypeId};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

struct Blob(String);

impl FunctionSource for Blob {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        let path = fixtures().join(format!("blobs/arrays.{}.marshal", self.0));
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let code = numba_bytecode::marshal::read_code(&bytes).map_err(|e| e.to_string())?;
        let mut g: HashMap<String, Global> = HashMap::new();
        g.insert(
            "np".into(),
            Global {
                kind: GlobalKind::Module("numpy".into()),
                repr: "<module 'numpy'>".into(),
            },
        );
        Ok((code, Box::new(g)))
    }
}

/// The fixtures that compile, with their argument types.
fn corpus() -> Vec<(String, Vec<TypeId>)> {
    let text = std::fs::read_to_string(fixtures().join("oracle/arrays.typing.tsv"))
        .expect("the typing oracle");
    text.lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let args = cols[1]
                .split(';')
                .map(parse_type)
                .collect::<Option<Vec<_>>>()?;
            let name = cols[0].to_string();
            let d = register(&format!("probe.{name}"), Box::new(Blob(name.clone())));
            d.resolve(&args).is_ok().then_some((name, args))
        })
        .collect()
}

fn compile(c: &mut Criterion) {
    let funcs = corpus();
    let mut phases: BTreeMap<String, Duration> = BTreeMap::new();
    let mut group = c.benchmark_group("compile");
    group.throughput(Throughput::Elements(funcs.len() as u64));
    group.sample_size(10);
    group.bench_function("numpy_fixtures", |b| {
        b.iter(|| {
            phases.clear();
            for (name, args) in &funcs {
                let d = register(name, Box::new(Blob(name.clone())));
                let compiled = d.resolve(args).expect("compiled once before");
                for (phase, t) in &compiled.timings {
                    *phases.entry(phase.clone()).or_default() += *t;
                }
            }
        })
    });
    group.finish();
    eprintln!("per-phase time of one pass over {} functions:", funcs.len());
    for (phase, t) in &phases {
        eprintln!("  {phase:<40} {:>9.3} ms", t.as_secs_f64() * 1e3);
    }
}

criterion_group!(benches, compile);
criterion_main!(benches);
