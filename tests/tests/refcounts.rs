//! Reference counts at run time, with reference-count pruning on (Numba's default) and off
//! (`NUMBA_LLVM_REFPRUNE_PASS=0`): array functions compiled either way compute the same
//! results, hand back their arguments with the counts they had (plus one for a returned
//! view or argument), and every MemInfo they allocate is freed once its last reference
//! is dropped. The NUMBA_DUMP_LLVM text stays the naive module either way.
//!
//! One test function: it sets the environment variable, so nothing may run beside it.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use numba_dispatch::{register, FunctionSource};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_lower::{CompiledFunction, ExcInfo, PruneStats, STATUS_OK};
use numba_nrt::{allocation_stats, MemInfo, NRT_MemInfo_alloc, NRT_MemInfo_data, NRT_decref};
use numba_typeinfer::parse_signature;

struct BlobSource(String);

impl FunctionSource for BlobSource {
    fn load(&self) -> Result<(numba_bytecode::CodeObject, Box<dyn GlobalResolver>), String> {
        let path = format!(
            "{}/fixtures/blobs/{}.marshal",
            env!("CARGO_MANIFEST_DIR"),
            self.0
        );
        let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
        let code = numba_bytecode::marshal::read_code(&bytes).map_err(|e| e.to_string())?;
        let mut g: HashMap<String, Global> = HashMap::new();
        g.insert(
            "np".into(),
            Global {
                kind: GlobalKind::Module("numpy".into()),
                repr: "<module 'numpy' from 'numpy/__init__.py'>".into(),
            },
        );
        Ok((code, Box::new(g)))
    }
}

fn compile(name: &str, sig: &str) -> std::sync::Arc<CompiledFunction> {
    let (_, args) = parse_signature(&format!("none({sig})")).expect("signature");
    let d = register(name, Box::new(BlobSource(name.to_string())));
    d.resolve(&args)
        .unwrap_or_else(|e| panic!("{name} failed to compile: {e}"))
}

/// An NRT-allocated float64 or int64 array (C order), its slots and its MemInfo.
struct Array {
    mi: *mut MemInfo,
    slots: Vec<u64>,
}

fn array(bits: &[u64], shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    assert_eq!(n, bits.len());
    let mi = NRT_MemInfo_alloc(8 * n, 32);
    assert!(!mi.is_null());
    // SAFETY: mi is a live MemInfo with 8 * n bytes of data.
    let data = unsafe { NRT_MemInfo_data(mi) }.cast::<u64>();
    for (i, b) in bits.iter().enumerate() {
        // SAFETY: i < n.
        unsafe { data.add(i).write(*b) };
    }
    let mut slots = vec![mi as u64, 0, n as u64, 8, data as u64];
    slots.extend(shape.iter().map(|&d| d as u64));
    let mut stride = 8 * n as u64;
    for &d in shape {
        stride /= d.max(1) as u64;
        slots.push(stride);
    }
    Array { mi, slots }
}

fn floats(xs: &[f64], shape: &[usize]) -> Array {
    array(&xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), shape)
}

fn ints(xs: &[i64], shape: &[usize]) -> Array {
    array(&xs.iter().map(|&x| x as u64).collect::<Vec<_>>(), shape)
}

fn refct(mi: *mut MemInfo) -> usize {
    // SAFETY: the tests only ask about MemInfos they hold a reference to.
    unsafe { (*mi).refct.load(Ordering::SeqCst) }
}

/// Call `c` with these argument slots; the result's slots.
fn call(c: &CompiledFunction, args: &[u64]) -> Vec<u64> {
    let mut ret = vec![0u64; 16];
    let mut exc: *const ExcInfo = std::ptr::null();
    // SAFETY: the slots were laid out for exactly the compiled argument types.
    let status = unsafe { (c.entry)(ret.as_mut_ptr(), &mut exc, args.as_ptr()) };
    if status != STATUS_OK {
        // SAFETY: a failing status comes with a record not read yet.
        let raised = unsafe { ExcInfo::take(exc) };
        panic!("{} raised {raised:?}", c.symbol);
    }
    ret
}

/// The float64 elements of a returned 1-d or 2-d array (its slots), in C order.
fn read(ret: &[u64], ndim: usize) -> Vec<f64> {
    let data = ret[4] as *const u8;
    let shape = &ret[5..5 + ndim];
    let strides = &ret[5 + ndim..5 + 2 * ndim];
    let mut out = Vec::new();
    let (rows, cols, rs, cs) = match ndim {
        1 => (1, shape[0], 0, strides[0]),
        _ => (shape[0], shape[1], strides[0], strides[1]),
    };
    for r in 0..rows {
        for c in 0..cols {
            let off = (r * rs + c * cs) as usize;
            // SAFETY: within the array the function returned.
            out.push(unsafe { data.add(off).cast::<f64>().read_unaligned() });
        }
    }
    out
}

fn increfs(ir: &str) -> usize {
    ir.lines()
        .filter(|l| l.contains("call void @NRT_incref("))
        .count()
}

/// Run every case; returns the pruning statistics and the increfs left in the optimised
/// IR, summed over the functions.
fn run_all() -> (PruneStats, usize) {
    let mut total = PruneStats::default();
    let mut left = 0;
    let mut seen = |c: &CompiledFunction| {
        total += c.prune_stats;
        left += increfs(&c.optimized_ir);
        assert!(
            increfs(&c.llvm_ir) > 0,
            "NUMBA_DUMP_LLVM shows the naive module"
        );
    };
    let before = allocation_stats();

    // A scalar result: the argument's count is back to 1.
    let c = compile("arrays.loop_sum", "float64[:]");
    seen(&c);
    let a = floats(&[1.0, 2.0, 3.5], &[3]);
    assert_eq!(f64::from_bits(call(&c, &a.slots)[0]), 6.5);
    assert_eq!(refct(a.mi), 1);

    let c = compile("arrays.zip_dot", "float64[:], float64[:]");
    seen(&c);
    let b = floats(&[2.0, 0.5, 2.0], &[3]);
    let args = [a.slots.clone(), b.slots.clone()].concat();
    assert_eq!(f64::from_bits(call(&c, &args)[0]), 10.0);
    // The same array twice (two names for one MemInfo).
    let args = [a.slots.clone(), a.slots.clone()].concat();
    assert_eq!(f64::from_bits(call(&c, &args)[0]), 17.25);
    assert_eq!((refct(a.mi), refct(b.mi)), (1, 1));

    // A new array: one reference, owned by the caller.
    let c = compile("arrays.add_arrays", "float64[:], int64[:]");
    seen(&c);
    let k = ints(&[10, 20, 30], &[3]);
    let args = [a.slots.clone(), k.slots.clone()].concat();
    let r = call(&c, &args);
    assert_eq!(read(&r, 1), [11.0, 22.0, 33.5]);
    let sum = r[0] as *mut MemInfo;
    assert_eq!((refct(a.mi), refct(k.mi), refct(sum)), (1, 1, 1));

    let c = compile("arrays.scale", "float64[:, :], int64");
    seen(&c);
    let m = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let args = [m.slots.clone(), vec![3]].concat();
    let r = call(&c, &args);
    assert_eq!(read(&r, 2), [3.0, 6.0, 9.0, 12.0, 15.0, 18.0]);
    let scaled = r[0] as *mut MemInfo;
    assert_eq!((refct(m.mi), refct(scaled)), (1, 1));

    // A view shares its base's MemInfo: the caller gets one more reference to it.
    let c = compile("arrays.slice_step", "float64[::1]");
    seen(&c);
    let r = call(&c, &a.slots);
    assert_eq!(read(&r, 1), [1.0, 3.5]);
    assert_eq!(r[0] as *mut MemInfo, a.mi);
    assert_eq!(refct(a.mi), 2);
    // SAFETY: the view's reference, dropped once.
    unsafe { NRT_decref(a.mi) };

    // Returning an argument returns a new reference to it.
    let c = compile("arrays.setitem_1d", "float64[:], int64, float64");
    seen(&c);
    let args = [b.slots.clone(), vec![1, 7.0f64.to_bits()]].concat();
    let r = call(&c, &args);
    assert_eq!(read(&r, 1), [2.0, 7.0, 2.0]);
    assert_eq!((r[0] as *mut MemInfo, refct(b.mi)), (b.mi, 2));
    // SAFETY: the returned reference, dropped once.
    unsafe { NRT_decref(b.mi) };

    for mi in [sum, scaled, a.mi, b.mi, k.mi, m.mi] {
        assert_eq!(refct(mi), 1);
        // SAFETY: our one reference to each, dropped once.
        unsafe { NRT_decref(mi) };
    }
    let after = allocation_stats();
    assert_eq!(
        after.mi_alloc - before.mi_alloc,
        after.mi_free - before.mi_free,
        "every MemInfo is freed"
    );
    (total, left)
}

#[test]
fn reference_counts_balance_with_and_without_pruning() {
    std::env::set_var("NUMBA_LLVM_REFPRUNE_PASS", "0");
    let (off, left_off) = run_all();
    std::env::remove_var("NUMBA_LLVM_REFPRUNE_PASS");
    let (on, left_on) = run_all();
    assert_eq!(off, PruneStats::default());
    assert!(on.total() > 0, "{on:?}");
    assert!(left_on < left_off, "{left_on} increfs left vs {left_off}");
}
