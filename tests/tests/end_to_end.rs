//! Compile functions from committed marshal blobs of CPython 3.11 code objects all the way
//! to native code and call them, with no Python interpreter involved. The expected values
//! are CPython's results for the same functions (hand-checked).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use numba_dispatch::{register, Dispatcher, FunctionSource};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_lower::{ExcInfo, STATUS_OK};
use numba_typeinfer::types::{BOOLEAN, FLOAT64, INT64};
use numba_typeinfer::TypeId;

fn blob(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/fixtures/blobs/{name}.marshal",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A source backed by a blob; globals name other blob-backed dispatchers and `math`.
struct BlobSource {
    name: String,
    peers: Arc<OnceLock<HashMap<String, u64>>>,
}

impl FunctionSource for BlobSource {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        let code =
            numba_bytecode::marshal::read_code(&blob(&self.name)).map_err(|e| e.to_string())?;
        let mut g: HashMap<String, Global> = HashMap::new();
        g.insert(
            "math".into(),
            Global {
                kind: GlobalKind::Module("math".into()),
                repr: "<module 'math'>".into(),
            },
        );
        for (n, id) in self.peers.get().into_iter().flatten() {
            let short = n.rsplit('.').next().unwrap_or(n).to_string();
            g.insert(
                short.clone(),
                Global {
                    kind: GlobalKind::Dispatcher {
                        id: *id,
                        name: short.clone(),
                    },
                    repr: format!("CPUDispatcher(<function {short}>)"),
                },
            );
        }
        Ok((code, Box::new(g)))
    }
}

fn dispatchers(names: &[&str]) -> HashMap<String, Arc<Dispatcher>> {
    let peers = Arc::new(OnceLock::new());
    let ds: HashMap<String, Arc<Dispatcher>> = names
        .iter()
        .map(|n| {
            let d = register(
                n,
                Box::new(BlobSource {
                    name: n.to_string(),
                    peers: peers.clone(),
                }),
            );
            (n.to_string(), d)
        })
        .collect();
    let _ = peers.set(ds.iter().map(|(n, d)| (n.clone(), d.id)).collect());
    ds
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum V {
    I(i64),
    F(f64),
    B(bool),
}

fn call(d: &Dispatcher, args: &[V]) -> Result<V, (String, String)> {
    let tys: Vec<TypeId> = args
        .iter()
        .map(|a| match a {
            V::I(_) => INT64,
            V::F(_) => FLOAT64,
            V::B(_) => BOOLEAN,
        })
        .collect();
    let c = d
        .resolve(&tys)
        .unwrap_or_else(|e| panic!("compile {}: {e}", d.name));
    let slots: Vec<u64> = args
        .iter()
        .map(|a| match a {
            V::I(i) => *i as u64,
            V::F(f) => f.to_bits(),
            V::B(b) => u64::from(*b),
        })
        .collect();
    let mut ret = 0u64;
    let mut exc: *const ExcInfo = std::ptr::null();
    // SAFETY: entry was generated for exactly these argument types.
    let status = unsafe { (c.entry)(&mut ret, &mut exc, slots.as_ptr()) };
    if status != STATUS_OK {
        // SAFETY: a non-OK status from generated code stores an ExcInfo not read yet.
        let raised = unsafe { ExcInfo::take(exc) };
        // The message: the first argument, a literal string in these fixtures.
        let message = match raised.arg_types.first().map(|t| t.get()) {
            Some(numba_typeinfer::Type::StringLiteral(s)) => s,
            _ => String::new(),
        };
        return Err((raised.class, message));
    }
    Ok(match c.return_type {
        t if t == FLOAT64 => V::F(f64::from_bits(ret)),
        t if t == BOOLEAN => V::B(ret & 1 == 1),
        _ => V::I(ret as i64),
    })
}

#[test]
fn scalar_functions_from_blobs() {
    let ds = dispatchers(&[
        "scalars.add",
        "scalars.doloops",
        "scalars.fib",
        "scalars.mixed",
        "scalars.hypot",
        "scalars.floor_mod",
        "scalars.sum_range",
        "scalars.collatz_steps",
    ]);
    let d = |n: &str| ds[&format!("scalars.{n}")].clone();
    assert_eq!(call(&d("add"), &[V::I(2), V::I(3)]), Ok(V::I(5)));
    assert_eq!(call(&d("add"), &[V::F(1.5), V::F(2.25)]), Ok(V::F(3.75)));
    assert_eq!(call(&d("add"), &[V::I(1), V::F(0.5)]), Ok(V::F(1.5)));
    assert_eq!(d("add").signatures().len(), 3);
    assert_eq!(call(&d("doloops"), &[V::I(7)]), Ok(V::I(7)));
    assert_eq!(call(&d("doloops"), &[V::I(10)]), Ok(V::I(1)));
    assert_eq!(call(&d("fib"), &[V::I(20)]), Ok(V::I(6765)));
    assert_eq!(call(&d("mixed"), &[V::F(2.0), V::B(true)]), Ok(V::F(5.0)));
    assert_eq!(call(&d("mixed"), &[V::F(2.0), V::B(false)]), Ok(V::F(2.0)));
    assert_eq!(call(&d("hypot"), &[V::F(3.0), V::F(4.0)]), Ok(V::F(5.0)));
    // Python: -7 // 2 + -7 % 2 == -4 + 1
    assert_eq!(call(&d("floor_mod"), &[V::I(-7), V::I(2)]), Ok(V::I(-3)));
    assert_eq!(
        call(&d("floor_mod"), &[V::I(1), V::I(0)]),
        Err((
            "ZeroDivisionError".into(),
            "integer division by zero".into()
        ))
    );
    assert_eq!(call(&d("collatz_steps"), &[V::I(27)]), Ok(V::I(111)));
    let expected: i64 = {
        let mut s = 0i64;
        for i in (1..100).step_by(2) {
            if i % 3 == 0 {
                continue;
            }
            s += i;
            if s > 1_000_000 {
                break;
            }
        }
        s
    };
    let got = call(&d("sum_range"), &[V::I(1), V::I(100), V::I(2)]);
    assert_eq!(got, Ok(V::I(expected)));
}
