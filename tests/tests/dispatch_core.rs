//! The dispatcher's core without Python: overload selection among explicit signatures
//! (Numba's conversion ranking and its messages) and compile-on-miss from several threads
//! at once (one compilation per signature, the same specialisation for every thread).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::Duration;

use numba_dispatch::{register, Dispatcher, ErrorKind, FunctionSource};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_typeinfer::types::{FLOAT64, INT16, INT32, INT64};

fn blob(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/fixtures/blobs/{name}.marshal",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A blob-backed source that counts how often its code is loaded for compiling, and
/// lingers in `load` so that concurrent callers overlap.
struct CountingSource {
    name: &'static str,
    loads: Arc<AtomicUsize>,
    this: Arc<OnceLock<u64>>,
}

impl CountingSource {
    fn code(&self) -> Result<numba_bytecode::CodeObject, String> {
        numba_bytecode::marshal::read_code(&blob(&format!("scalars.{}", self.name)))
            .map_err(|e| e.to_string())
    }
}

impl FunctionSource for CountingSource {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(30));
        let mut g: HashMap<String, Global> = HashMap::new();
        if let Some(&id) = self.this.get() {
            g.insert(
                self.name.to_string(),
                Global {
                    kind: GlobalKind::Dispatcher {
                        id,
                        name: self.name.to_string(),
                    },
                    repr: format!("CPUDispatcher(<function {}>)", self.name),
                },
            );
        }
        Ok((self.code()?, Box::new(g)))
    }

    fn parameters(&self) -> Result<numba_dispatch::Parameters, String> {
        Ok(numba_dispatch::Parameters::of_code(&self.code()?))
    }
}

fn counted(name: &'static str) -> (Arc<Dispatcher>, Arc<AtomicUsize>) {
    let loads = Arc::new(AtomicUsize::new(0));
    let this = Arc::new(OnceLock::new());
    let d = register(
        name,
        Box::new(CountingSource {
            name,
            loads: loads.clone(),
            this: this.clone(),
        }),
    );
    this.set(d.id).expect("set once");
    (d, loads)
}

#[test]
fn threads_missing_the_same_signature_compile_it_once() {
    let (d, loads) = counted("add");
    let n = 8;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let d = d.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                d.resolve(&[INT64, INT64]).expect("compiles")
            })
        })
        .collect();
    let compiled: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("thread finished"))
        .collect();
    assert_eq!(loads.load(Ordering::SeqCst), 1, "compiled more than once");
    assert!(compiled.iter().all(|c| Arc::ptr_eq(c, &compiled[0])));
    assert_eq!(d.signatures(), vec![vec![INT64, INT64]]);
}

#[test]
fn recursion_compiles_once_from_several_threads() {
    let (d, loads) = counted("fib");
    let barrier = Arc::new(Barrier::new(4));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let d = d.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                d.resolve(&[INT64]).expect("compiles").return_type
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().expect("thread finished"), INT64);
    }
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    assert_eq!(d.signatures().len(), 1);
}

#[test]
fn explicit_signatures_select_the_cheapest_conversion() {
    let (d, _) = counted("add");
    let i = d.compile_explicit(None, &[INT64, INT64]).expect("compiles");
    let f = d
        .compile_explicit(None, &[FLOAT64, FLOAT64])
        .expect("compiles");
    // int32 → int64 promotes; int32 → float64 is a safe conversion.
    let c = d.resolve(&[INT32, INT32]).expect("selects");
    assert!(Arc::ptr_eq(&c, &i));
    // (int32, float64): int64s need an unsafe float64 → int64; float64s need one safe
    // conversion and one exact match.
    let c = d.resolve(&[INT32, FLOAT64]).expect("selects");
    assert!(Arc::ptr_eq(&c, &f));
    // float64 → int64 is unsafe, allowed now that compiling is disabled.
    let (g, _) = counted("add");
    let gi = g.compile_explicit(None, &[INT64, INT64]).expect("compiles");
    let c = g.resolve(&[FLOAT64, INT64]).expect("unsafe allowed");
    assert!(Arc::ptr_eq(&c, &gi));
    assert_eq!(d.signatures().len(), 2);
    assert_eq!(g.signatures().len(), 1);
}

#[test]
fn ties_and_misses_are_type_errors_with_numbas_messages() {
    let (d, _) = counted("add");
    d.compile_explicit(None, &[INT32, INT64]).expect("compiles");
    d.compile_explicit(None, &[INT64, INT32]).expect("compiles");
    let e = d.resolve(&[INT16, INT16]).expect_err("ambiguous");
    assert_eq!(e.kind, ErrorKind::Dispatch);
    assert_eq!(
        e.message,
        "Ambiguous overloading for <function add> (int16, int16):\n\
         (int32, int64) -> int64\n(int64, int32) -> int64"
    );
    let e = d.resolve(&[INT64]).expect_err("no match");
    assert_eq!(e.kind, ErrorKind::Dispatch);
    assert_eq!(
        e.message,
        "No matching definition for argument type(s) int64"
    );
}

#[test]
fn recompile_swaps_all_specialisations_at_once() {
    let (d, loads) = counted("add");
    let old = d.resolve(&[INT64, INT64]).expect("compiles");
    d.resolve(&[FLOAT64, FLOAT64]).expect("compiles");
    assert_eq!(loads.load(Ordering::SeqCst), 2);
    let worker = {
        let d = d.clone();
        std::thread::spawn(move || d.recompile())
    };
    // While recompiling (each load lingers), calls still find a specialisation: the old
    // one until the new set is published, never a miss that would compile again.
    while !worker.is_finished() {
        assert!(d.lookup_ref(&[INT64, INT64]).is_some(), "never missing");
    }
    worker.join().expect("no panic").expect("recompiles");
    let new = d.lookup(&[INT64, INT64]).expect("present");
    assert!(
        !Arc::ptr_eq(&old, &new),
        "recompile built a new specialisation"
    );
    assert_eq!(
        d.signatures(),
        vec![vec![INT64, INT64], vec![FLOAT64, FLOAT64]]
    );
    // Two loads for the two signatures; none from the lookups made meanwhile.
    assert_eq!(loads.load(Ordering::SeqCst), 4);
}
