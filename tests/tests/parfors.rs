//! Parfors end to end with no Python interpreter: fixtures' `for ... in range(...)` loops
//! compiled with `range` bound to `prange` (a global table decides what a name is), the
//! IR after the parfor pass and a parfor's kernel snapshotted in Numba's `Parfor.dump`
//! layout, and the parallel code run against hand-checked values with 1 and 2 threads.

use std::collections::HashMap;

use numba_dispatch::{compile_function, CompileOptions, Target};
use numba_ir::{Global, GlobalKind, GlobalResolver, Stmt};
use numba_lower::{ExcInfo, STATUS_OK};
use numba_parfor::{Parfor, ParforOptions, ParforReport};
use numba_typeinfer::types::INT64;
use numba_typeinfer::{BaseContext, CallOutcome, CalleeResolver, TypeId, TypingResult};

fn code(name: &str) -> numba_bytecode::CodeObject {
    let path = format!(
        "{}/fixtures/blobs/frontend.{name}.marshal",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    numba_bytecode::marshal::read_code(&bytes).expect("a CPython 3.11 code object")
}

/// `range` is numba_rs's `prange` here.
fn globals() -> HashMap<String, Global> {
    let mut g = HashMap::new();
    g.insert(
        "range".to_string(),
        Global {
            kind: GlobalKind::ModuleFunction {
                module: "numba_rs".into(),
                name: "prange".into(),
            },
            repr: "<class 'numba_rs.parallel.prange'>".into(),
        },
    );
    g
}

struct NoCallees;

impl CalleeResolver for NoCallees {
    fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
        Err("no callees".into())
    }
}

/// The typed IR of a fixture after the parfor pass (the pipeline's order up to it).
fn parallel_ir(name: &str, args: &[TypeId]) -> (numba_ir::FunctionIR, TypingResult, ParforReport) {
    let g = globals();
    let bc = numba_bytecode::ByteCode::decode(code(name)).expect("decodes");
    let df = numba_bytecode::flow::analyze(&bc).expect("flow");
    let mut ir = numba_ir::interpret(&bc, &df, &g as &dyn GlobalResolver).expect("IR");
    numba_ir::postproc::run(&mut ir, false);
    numba_ir::ssa::reconstruct_ssa(&mut ir).expect("SSA");
    let mut typing = numba_typeinfer::infer(&ir, args, &BaseContext::default(), &NoCallees, None)
        .expect("types");
    numba_ir::prune::strip_phis(&mut ir);
    let report = numba_parfor::run(&mut ir, &mut typing, &ParforOptions::ALL).expect("parfor pass");
    (ir, typing, report)
}

/// Parfor ids are process-wide counters: numbered from 0 in each snapshot.
fn normalise(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let l = if let Some(p) = line.find("parfor ") {
            let rest = &line[p + 7..];
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            if end > 0 {
                format!("{}parfor N{}", &line[..p], &rest[end..])
            } else {
                line.to_string()
            }
        } else {
            line.to_string()
        };
        // The dump centres `begin parfor <id>` in dashes: centred as for a one-digit id.
        let core = l.trim_matches('-');
        let l = if l.starts_with('-') && (core == "begin parfor N" || core == "end parfor N") {
            numba_ir::center(&core.replace(" N", " 0"), 20, '-').replace(" 0", " N")
        } else {
            l
        };
        out.push_str(&l);
        out.push('\n');
    }
    out
}

fn parfors(ir: &numba_ir::FunctionIR) -> Vec<Parfor> {
    ir.blocks
        .values()
        .flat_map(|b| &b.body)
        .filter_map(|i| match &i.stmt {
            Stmt::Extension(n) => Parfor::from_node(n),
            _ => None,
        })
        .collect()
}

#[test]
fn reduction_loop_becomes_a_parfor() {
    let (ir, typing, report) = parallel_ir("for_range_sum", &[INT64]);
    let pfs = parfors(&ir);
    assert_eq!(pfs.len(), 1);
    assert_eq!(pfs[0].reductions.len(), 1, "total is a + reduction");
    assert_eq!(pfs[0].reductions[0].op, numba_parfor::RedOp::Add);
    assert!(pfs[0].races.is_empty());
    assert_eq!(report.produced.len(), 1);
    assert!(report.warnings.is_empty());
    insta::assert_snapshot!("for_range_sum_ir", normalise(&ir.dump()));
    let k = numba_parfor::build_kernel(&ir, &typing, &pfs[0]).expect("kernel");
    assert_eq!(k.typing.arg_types.len(), pfs[0].params.len() + 2);
    insta::assert_snapshot!("for_range_sum_kernel", normalise(&k.ir.dump()));
}

#[test]
fn inner_loops_with_break_and_continue_stay_in_the_body() {
    let (ir, _, report) = parallel_ir("nested_loops_break_continue", &[INT64]);
    let pfs = parfors(&ir);
    assert_eq!(
        pfs.len(),
        1,
        "the outer loop converts; the inner one is its body"
    );
    assert_eq!(
        pfs[0].reductions.len(),
        1,
        "total reduces through the inner loop"
    );
    assert_eq!(report.produced.len(), 1);
    insta::assert_snapshot!("nested_loops_ir", normalise(&ir.dump()));
}

#[test]
fn loop_variable_read_after_the_loop_is_a_race() {
    let (ir, _, report) = parallel_ir("loop_variable_after_loop", &[INT64]);
    let pfs = parfors(&ir);
    assert_eq!(pfs.len(), 1);
    assert_eq!(pfs[0].races.len(), 1);
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(report.warnings[0].category, "NumbaParallelSafetyWarning");
    assert!(report.warnings[0]
        .message
        .contains("may be written to simultaneously by multiple workers"));
}

fn run_int(name: &str, n: i64, threads: i64) -> i64 {
    let options = CompileOptions {
        parallel: Some(ParforOptions::ALL),
        ..CompileOptions::default()
    };
    let g = globals();
    let target = Target::default();
    let c = compile_function(
        code(name),
        &g as &dyn GlobalResolver,
        &[INT64],
        &options,
        &target,
    )
    .unwrap_or_else(|e| panic!("compile {name}: {e}"));
    numba_nrt::parallel::set_num_threads(threads).expect("valid thread count");
    let mut ret = [0u64; 2];
    let mut exc: *const ExcInfo = std::ptr::null();
    let args = [n as u64];
    // SAFETY: the entry was compiled for one int64 argument and an int64 result.
    let status = unsafe { (c.entry)(ret.as_mut_ptr(), &mut exc, args.as_ptr()) };
    assert_eq!(status, STATUS_OK);
    ret[0] as i64
}

#[test]
fn parallel_reductions_compute_the_serial_result() {
    for threads in [1, 2] {
        for n in [0i64, 1, 10, 12345, 1_000_000] {
            // sum(range(n)) = n(n-1)/2
            assert_eq!(run_int("for_range_sum", n, threads), n * (n - 1) / 2);
        }
        // nested_loops_break_continue: the pairs i >= j with i + j even, summed i * j.
        for n in [0i64, 5, 200] {
            let mut want = 0i64;
            for i in 0..n {
                for j in 0..n {
                    if j > i {
                        break;
                    }
                    if (i + j) % 2 == 1 {
                        continue;
                    }
                    want += i * j;
                }
            }
            assert_eq!(run_int("nested_loops_break_continue", n, threads), want);
        }
    }
}

/// The typed IR of a rewrites fixture (NumPy code) after the parfor pass, with the
/// pipeline's rewrites (array expressions) applied as compile_function applies them.
fn numpy_parallel_ir(
    name: &str,
    args: &[TypeId],
    options: &ParforOptions,
) -> (numba_ir::FunctionIR, ParforReport) {
    numpy_parallel_ir_with(name, args, options, HashMap::new())
}

/// [`numpy_parallel_ir`] with more globals (`range` as `prange`: [`globals`]).
fn numpy_parallel_ir_with(
    name: &str,
    args: &[TypeId],
    options: &ParforOptions,
    mut g: HashMap<String, Global>,
) -> (numba_ir::FunctionIR, ParforReport) {
    g.insert(
        "np".to_string(),
        Global {
            kind: GlobalKind::Module("numpy".into()),
            repr: "<module 'numpy'>".into(),
        },
    );
    let path = format!(
        "{}/fixtures/blobs/rewrites.{name}.marshal",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let code = numba_bytecode::marshal::read_code(&bytes).expect("a code object");
    let bc = numba_bytecode::ByteCode::decode(code).expect("decodes");
    let df = numba_bytecode::flow::analyze(&bc).expect("flow");
    let mut ir = numba_ir::interpret(&bc, &df, &g as &dyn GlobalResolver).expect("IR");
    numba_ir::postproc::run(&mut ir, false);
    let rewrites = numba_dispatch::Target::default().rewrites;
    rewrites
        .apply(numba_rewrite::Phase::BeforeInference, &mut ir, None, None)
        .expect("untyped rewrites");
    numba_ir::ssa::reconstruct_ssa(&mut ir).expect("SSA");
    let mut typing = numba_typeinfer::infer(&ir, args, &BaseContext::default(), &NoCallees, None)
        .expect("types");
    numba_ir::prune::strip_phis(&mut ir);
    rewrites
        .apply(
            numba_rewrite::Phase::AfterInference,
            &mut ir,
            Some(&mut typing),
            None,
        )
        .expect("typed rewrites");
    let report = numba_parfor::run(&mut ir, &mut typing, options).expect("parfor pass");
    (ir, report)
}

fn f64_vec() -> TypeId {
    numba_typeinfer::types::array(
        numba_typeinfer::types::FLOAT64,
        1,
        numba_typeinfer::types::Layout::C,
    )
}

#[test]
fn numpy_code_becomes_fused_parfors_without_temporaries() {
    // d = a * b; np.sqrt(np.sum(d * d)) + d.mean(): three array loops and two
    // reductions, all over d's shape.
    let a = f64_vec();
    let (ir, report) = numpy_parallel_ir("norm_of", &[a, a], &ParforOptions::ALL);
    let pats: Vec<&str> = report.produced.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(
        pats,
        [
            "array expression (a mul b)",
            "array expression (d mul d)",
            "('prange', 'internal', (('sum', 'numpy'), Loc(filename=tests/fixtures/rewrites.py, line=58, col=None)))",
            "('prange', 'internal', (('mean', 'numpy'), Loc(filename=tests/fixtures/rewrites.py, line=58, col=None)))",
        ]
    );
    // Everything fuses into the first loop.
    let first = report.produced[0].0;
    assert_eq!(report.fused.len(), 3);
    assert!(report.fused.iter().all(|&(_, into)| into == first));
    let pfs = parfors(&ir);
    assert_eq!(pfs.len(), 1);
    assert_eq!(pfs[0].reductions.len(), 2);
    assert!(report.stats_text("norm_of").contains(&format!(
        "After fusion, function norm_of has 1 parallel for-loop(s) #{{{first}}}."
    )));
    // `d * d` is written and read back in the same iteration only: no storage.
    let text = normalise(&ir.dump());
    assert!(text.contains("= parfor_shape(d)"), "{text}");
    insta::assert_snapshot!("norm_of_ir", text);
}

#[test]
fn numpy_options_switch_conversion_and_fusion() {
    let a = f64_vec();
    let no_fusion = ParforOptions {
        fusion: false,
        ..ParforOptions::ALL
    };
    let (ir, report) = numpy_parallel_ir("norm_of", &[a, a], &no_fusion);
    assert_eq!(parfors(&ir).len(), 4);
    assert!(report.fused.is_empty());
    let no_numpy = ParforOptions {
        numpy: false,
        ..ParforOptions::ALL
    };
    let (ir, report) = numpy_parallel_ir("norm_of", &[a, a], &no_numpy);
    assert!(parfors(&ir).is_empty());
    assert!(report.produced.is_empty());
    assert_eq!(report.warnings[0].category, "NumbaPerformanceWarning");
}

#[test]
fn numpy_code_in_a_parallel_loop_becomes_nested_parfors() {
    // for i in prange(n): out[i] = np.sum(a[i, :] ** 2): the row's expression and its
    // sum are parfors of the loop's body, numbered before the loop (Numba converts
    // NumPy code first), fused into one (numba-rs fuses nested loops, Numba does not).
    let m = numba_typeinfer::types::array(
        numba_typeinfer::types::FLOAT64,
        2,
        numba_typeinfer::types::Layout::C,
    );
    let (ir, report) =
        numpy_parallel_ir_with("row_sumsq", &[m, f64_vec()], &ParforOptions::ALL, globals());
    let pats: Vec<&str> = report.produced.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(pats.len(), 3, "{pats:?}");
    assert!(pats[0].starts_with("array expression ("), "{pats:?}");
    assert!(pats[1].contains("(('sum', 'numpy')"), "{pats:?}");
    assert_eq!(pats[2], "('prange', 'user', '')");
    let ids: Vec<usize> = report.produced.iter().map(|p| p.0).collect();
    assert_eq!(report.fused, vec![(ids[1], ids[0])]);
    assert_eq!(report.nested, vec![(ids[2], vec![ids[0]])]);
    let stats = report.stats_text("row_sumsq");
    assert!(
        stats.contains(&format!(
            "After fusion, parallel for-loop {} has nested Parfor(s) #1.\nAfter fusion, function row_sumsq has 1 parallel for-loop(s) #{{{}}}.",
            ids[2], ids[2]
        )),
        "{stats}"
    );
    // One parfor in the function; the fused nested one inside its body.
    let pfs = parfors(&ir);
    assert_eq!(pfs.len(), 1);
    let inner: Vec<Parfor> = pfs[0]
        .loop_body
        .values()
        .flat_map(|b| &b.body)
        .filter_map(|i| match &i.stmt {
            numba_ir::Stmt::Extension(n) => Parfor::from_node(n),
            _ => None,
        })
        .collect();
    assert_eq!(inner.len(), 1);
    assert_eq!(inner[0].id, ids[0]);
    assert_eq!(inner[0].reductions.len(), 1);
    insta::assert_snapshot!("row_sumsq_ir", normalise(&ir.dump()));
}
