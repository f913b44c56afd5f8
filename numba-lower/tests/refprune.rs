//! Reference-count pruning on hand-written LLVM IR: each shape removes its pair, and the
//! pairs that must stay (wrong order, another pointer, a decref or a consuming call in
//! between, a path without a decref, a raise without the raise shape, loops) stay.
//! Every pruned module is verified.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use inkwell::values::{CallSiteValue, InstructionOpcode};
use numba_lower::refprune::{prune, PruneStats, RefPruneFlags};

const DECLS: &str = "
declare void @NRT_incref(ptr)
declare void @NRT_decref(ptr)
declare ptr @NRT_MemInfo_alloc(i64, i64)
declare void @use(ptr)
@exc = private constant i8 0
";

fn parse<'c>(ctx: &'c Context, body: &str) -> Module<'c> {
    let text = format!("{DECLS}\n{body}\n!0 = !{{i1 true}}\n");
    let buf = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "refprune_test");
    match ctx.create_module_from_ir(buf) {
        Ok(m) => m,
        Err(e) => panic!("bad test IR: {e}\n{text}"),
    }
}

/// Calls to `name` left in function `func`.
fn calls(m: &Module<'_>, func: &str, name: &str) -> usize {
    let f = m.get_function(func).expect("function");
    f.get_basic_block_iter()
        .flat_map(|bb| bb.get_instructions())
        .filter(|i| i.get_opcode() == InstructionOpcode::Call)
        .filter_map(|i| CallSiteValue::try_from(i).ok()?.get_called_fn_value())
        .filter(|c| c.get_name().to_bytes() == name.as_bytes())
        .count()
}

/// Prune `body` with `flags`; returns the statistics and the increfs and decrefs left in
/// `@f`.
fn run(body: &str, flags: RefPruneFlags) -> (PruneStats, usize, usize) {
    let ctx = Context::create();
    let m = parse(&ctx, body);
    let stats = prune(&m, flags);
    if let Err(e) = m.verify() {
        panic!(
            "pruned module does not verify: {e}\n{}",
            m.print_to_string()
        );
    }
    (
        stats,
        calls(&m, "f", "NRT_incref"),
        calls(&m, "f", "NRT_decref"),
    )
}

fn stats(per_bb: usize, diamond: usize, fanout: usize, fanout_raise: usize) -> PruneStats {
    PruneStats {
        per_bb,
        diamond,
        fanout,
        fanout_raise,
    }
}

const ALL: RefPruneFlags = RefPruneFlags::ALL;
const NONE: PruneStats = PruneStats {
    per_bb: 0,
    diamond: 0,
    fanout: 0,
    fanout_raise: 0,
};

// ---------------------------------------------------------------- per basic block

const PER_BB: &str = "
define void @f(ptr %p) {
entry:
  call void @NRT_incref(ptr %p)
  call void @use(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";

#[test]
fn per_block_pair_is_removed() {
    assert_eq!(
        run(PER_BB, RefPruneFlags::PER_BB),
        (stats(2, 0, 0, 0), 0, 0)
    );
    assert_eq!(run(PER_BB, ALL), (stats(2, 0, 0, 0), 0, 0));
}

#[test]
fn per_block_nested_pairs_and_refops_on_null_are_removed() {
    let body = "
define void @f(ptr %p, ptr %q) {
entry:
  call void @NRT_incref(ptr %p)
  call void @NRT_incref(ptr %q)
  call void @NRT_decref(ptr %q)
  call void @NRT_decref(ptr %p)
  call void @NRT_incref(ptr null)
  ret void
}";
    assert_eq!(run(body, RefPruneFlags::PER_BB), (stats(5, 0, 0, 0), 0, 0));
}

#[test]
fn decref_before_incref_is_kept() {
    let body = "
define void @f(ptr %p) {
entry:
  call void @NRT_decref(ptr %p)
  call void @NRT_incref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
}

#[test]
fn decref_of_another_pointer_is_kept() {
    let body = "
define void @f(ptr %p, ptr %q) {
entry:
  call void @NRT_incref(ptr %p)
  call void @NRT_decref(ptr %q)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
}

#[test]
fn no_pair_across_a_decref_that_may_release_the_same_meminfo() {
    // %q may be the same MemInfo as %p (two views of one array): after `decref(q)` only
    // the incref keeps it alive for `use(p)`.
    let body = "
define void @f(ptr %p, ptr %q) {
entry:
  call void @NRT_incref(ptr %p)
  call void @NRT_decref(ptr %q)
  call void @use(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 2));
}

#[test]
fn a_fresh_allocation_is_not_an_argument() {
    // The decref between releases a MemInfo allocated during the call: it cannot be the
    // argument's, which the caller keeps alive.
    let body = "
define void @f({ ptr, i64 } %arr) {
entry:
  %p = extractvalue { ptr, i64 } %arr, 0
  call void @NRT_incref(ptr %p)
  %q = call ptr @NRT_MemInfo_alloc(i64 8, i64 32)
  call void @NRT_decref(ptr %q)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (stats(2, 0, 0, 0), 0, 1));
    // A MemInfo loaded from memory could be anything.
    let body = "
define void @f(ptr %slot) {
entry:
  %p = load ptr, ptr %slot
  call void @NRT_incref(ptr %p)
  %q = call ptr @NRT_MemInfo_alloc(i64 8, i64 32)
  call void @NRT_decref(ptr %q)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 2));
}

#[test]
fn calls_that_may_consume_a_reference_are_barriers() {
    // @drop is defined here and reaches NRT_decref; @g calls it.
    let body = "
define void @drop(ptr %x) {
entry:
  call void @NRT_decref(ptr %x)
  ret void
}
define void @g(ptr %x) {
entry:
  call void @drop(ptr %x)
  ret void
}
define void @f(ptr %p) {
entry:
  call void @NRT_incref(ptr %p)
  call void @g(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
    // A call through a pointer: unknown.
    let body = "
define void @f(ptr %p, ptr %fn) {
entry:
  call void @NRT_incref(ptr %p)
  call void %fn(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
    // A defined function that never decrefs is not a barrier.
    let body = "
define void @quiet(ptr %x) {
entry:
  call void @use(ptr %x)
  ret void
}
define void @f(ptr %p) {
entry:
  call void @NRT_incref(ptr %p)
  call void @quiet(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (stats(2, 0, 0, 0), 0, 0));
}

// ---------------------------------------------------------------- diamond

const DIAMOND: &str = "
define void @f(ptr %p, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %left, label %right
left:
  call void @use(ptr %p)
  br label %join
right:
  br label %join
join:
  call void @NRT_decref(ptr %p)
  ret void
}";

#[test]
fn diamond_is_removed() {
    assert_eq!(
        run(DIAMOND, RefPruneFlags::DIAMOND),
        (stats(0, 2, 0, 0), 0, 0)
    );
    assert_eq!(run(DIAMOND, ALL), (stats(0, 2, 0, 0), 0, 0));
}

#[test]
fn diamond_with_another_decref_on_a_path_between_is_kept() {
    for extra in ["@NRT_decref(ptr %q)", "@NRT_decref(ptr %p)"] {
        let body = format!(
            "
define void @f(ptr %p, ptr %q, i1 %c) {{
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %left, label %right
left:
  call void {extra}
  br label %join
right:
  br label %join
join:
  call void @NRT_decref(ptr %p)
  ret void
}}"
        );
        let (s, inc, _) = run(&body, ALL);
        assert_eq!((s, inc), (NONE, 1), "{extra}");
    }
}

#[test]
fn diamond_when_the_decref_does_not_post_dominate_is_kept() {
    let body = "
define void @f(ptr %p, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %left, label %right
left:
  call void @NRT_decref(ptr %p)
  ret void
right:
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
}

// ---------------------------------------------------------------- fanout

const FANOUT: &str = "
define void @f(ptr %p, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %a, label %b
a:
  call void @use(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
b:
  call void @NRT_decref(ptr %p)
  ret void
}";

#[test]
fn fanout_is_removed() {
    assert_eq!(
        run(FANOUT, RefPruneFlags::FANOUT),
        (stats(0, 0, 3, 0), 0, 0)
    );
    assert_eq!(run(FANOUT, ALL), (stats(0, 0, 3, 0), 0, 0));
}

#[test]
fn fanout_with_a_path_lacking_a_decref_is_kept() {
    let body = "
define void @f(ptr %p, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %a, label %b
a:
  call void @NRT_decref(ptr %p)
  ret void
b:
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
}

#[test]
fn fanout_pairs_out_of_order_in_a_tail_block_go_one_round_after_another() {
    // `join` drops q before p: p's fanout waits until q's pair is gone.
    let body = "
define void @f(ptr %p, ptr %q, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  call void @NRT_incref(ptr %q)
  br i1 %c, label %a, label %b
a:
  call void @NRT_decref(ptr %q)
  call void @NRT_decref(ptr %p)
  ret void
b:
  call void @NRT_decref(ptr %q)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, RefPruneFlags::FANOUT), (stats(0, 0, 6, 0), 0, 0));
}

#[test]
fn fanout_with_an_unrelated_decref_on_the_way_is_kept() {
    let body = "
define void @f(ptr %p, ptr %q, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %a, label %b
a:
  call void @NRT_decref(ptr %q)
  br label %a2
a2:
  call void @NRT_decref(ptr %p)
  ret void
b:
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 3));
}

// ---------------------------------------------------------------- fanout with raise

/// An incref whose one path decrefs and the other raises (the excinfo store carries
/// Numba's mark), in the calling convention's shape.
const FANOUT_RAISE: &str = "
define i32 @f(ptr %retptr, ptr %excinfo, ptr %p, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %ok, label %raise
ok:
  call void @NRT_decref(ptr %p)
  ret i32 0
raise:
  store ptr @exc, ptr %excinfo, align 8, !numba_exception_output !0
  ret i32 1
}";

#[test]
fn fanout_raise_is_removed() {
    assert_eq!(
        run(FANOUT_RAISE, RefPruneFlags::FANOUT_RAISE),
        (stats(0, 0, 0, 2), 0, 0)
    );
    assert_eq!(run(FANOUT_RAISE, ALL), (stats(0, 0, 0, 2), 0, 0));
}

#[test]
fn a_raise_path_under_fanout_alone_is_kept() {
    assert_eq!(run(FANOUT_RAISE, RefPruneFlags::FANOUT), (NONE, 1, 1));
}

#[test]
fn fanout_raise_through_a_merged_return_is_removed() {
    // What simplifycfg makes of the returns: the raising block branches to `common.ret`.
    let body = "
define i32 @f(ptr %retptr, ptr %excinfo, ptr %p, i1 %c) {
entry:
  call void @NRT_incref(ptr %p)
  br i1 %c, label %ok, label %raise
ok:
  call void @NRT_decref(ptr %p)
  br label %common.ret
raise:
  store ptr @exc, ptr %excinfo, align 8, !numba_exception_output !0
  br label %common.ret
common.ret:
  %status = phi i32 [ 0, %ok ], [ 1, %raise ]
  ret i32 %status
}";
    assert_eq!(run(body, ALL), (stats(0, 0, 0, 2), 0, 0));
}

#[test]
fn an_unmarked_store_is_not_a_raise() {
    let body = FANOUT_RAISE.replace(", !numba_exception_output !0", "");
    assert_eq!(run(&body, ALL), (NONE, 1, 1));
}

// ---------------------------------------------------------------- loops

#[test]
fn incref_in_a_loop_with_the_decref_after_it_is_kept() {
    let body = "
define void @f(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  call void @NRT_incref(ptr %p)
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
}

#[test]
fn decref_in_a_loop_after_the_incref_is_kept() {
    let body = "
define void @f(ptr %p, i64 %n) {
entry:
  call void @NRT_incref(ptr %p)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  call void @NRT_decref(ptr %p)
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
}

#[test]
fn pair_around_a_loop_and_pair_inside_one_iteration_are_removed() {
    // The incref before the loop and the decref after it enclose the whole loop (a
    // diamond); in the body, a pair per iteration (one block: per-block).
    let body = "
define void @f(ptr %p, i64 %n) {
entry:
  call void @NRT_incref(ptr %p)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  call void @NRT_incref(ptr %p)
  call void @use(ptr %p)
  call void @NRT_decref(ptr %p)
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (stats(2, 2, 0, 0), 0, 0));
}

#[test]
fn incref_and_decref_in_a_loop_body_on_different_blocks_are_removed_per_iteration() {
    let body = "
define void @f(ptr %p, i64 %n) {
entry:
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %next, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %pre, label %exit
pre:
  call void @NRT_incref(ptr %p)
  br label %body
body:
  call void @NRT_decref(ptr %p)
  %next = add i64 %i, 1
  br label %head
exit:
  ret void
}";
    let (s, inc, dec) = run(body, ALL);
    assert_eq!((inc, dec, s.total()), (0, 0, 2));
}

// ---------------------------------------------------------------- flags

#[test]
fn flags_disable_each_shape() {
    use RefPruneFlags as F;
    // Each shape under every flag that cannot catch it: nothing is removed.
    let cases = [
        (PER_BB, F::DIAMOND | F::FANOUT | F::FANOUT_RAISE),
        (DIAMOND, F::PER_BB | F::FANOUT_RAISE),
        (FANOUT, F::PER_BB | F::DIAMOND | F::FANOUT_RAISE),
        (FANOUT_RAISE, F::PER_BB | F::DIAMOND | F::FANOUT),
    ];
    for (body, flags) in cases {
        assert_eq!(run(body, flags).0, NONE, "{flags:?} on {body}");
        assert_eq!(run(body, F::NONE).0, NONE);
    }
    // A diamond is also a fanout.
    assert_eq!(run(DIAMOND, F::FANOUT), (stats(0, 0, 2, 0), 0, 0));
}

#[test]
fn flags_parse_as_numba_parses_them() {
    use RefPruneFlags as F;
    assert_eq!(F::PER_BB.bits(), 1);
    assert_eq!(F::DIAMOND.bits(), 2);
    assert_eq!(F::FANOUT.bits(), 4);
    assert_eq!(F::FANOUT_RAISE.bits(), 8);
    assert_eq!(F::ALL.bits(), 15);
    assert_eq!(F::parse("all"), (F::ALL, vec![]));
    assert_eq!(
        F::parse("per_bb, diamond"),
        (F::PER_BB | F::DIAMOND, vec![])
    );
    assert_eq!(
        F::parse("FANOUT,Fanout_Raise"),
        (F::FANOUT | F::FANOUT_RAISE, vec![])
    );
    assert_eq!(
        F::parse("fanout,bogus"),
        (F::FANOUT, vec!["bogus".to_string()])
    );
    // Numba splits first: an empty value or a trailing comma is an invalid (empty) name.
    assert_eq!(F::parse(""), (F::NONE, vec![String::new()]));
    assert_eq!(F::parse("per_bb,"), (F::PER_BB, vec![String::new()]));
    // NUMBA_LLVM_REFPRUNE_PASS=0 turns pruning off whatever the flags say.
    assert_eq!(F::from_config(None, None), F::ALL);
    assert_eq!(F::from_config(Some("1"), None), F::ALL);
    assert_eq!(F::from_config(Some("0"), Some("all")), F::NONE);
    assert_eq!(F::from_config(Some("1"), Some("diamond")), F::DIAMOND);
    assert_eq!(F::from_config(None, Some("fanout_raise")), F::FANOUT_RAISE);
    assert_eq!(F::from_config(Some("yes"), None), F::ALL);
    assert!(F::ALL.contains(F::FANOUT) && !F::DIAMOND.contains(F::FANOUT));
    assert!(F::NONE.is_empty() && !F::PER_BB.is_empty());
    assert_eq!(
        format!("{:?}", F::PER_BB | F::FANOUT),
        "RefPruneFlags(PER_BB | FANOUT)"
    );
}

#[test]
fn every_function_of_the_module_is_pruned() {
    let body = format!("{}\n{}", PER_BB, DIAMOND.replace("@f(", "@g("));
    let ctx = Context::create();
    let m = parse(&ctx, &body);
    let s = prune(&m, ALL);
    assert!(m.verify().is_ok());
    assert_eq!(s, stats(2, 2, 0, 0));
    for f in ["f", "g"] {
        assert_eq!(calls(&m, f, "NRT_incref") + calls(&m, f, "NRT_decref"), 0);
    }
}

// ---------------------------------------------------------------- parallel kernels

#[test]
fn a_parfor_kernel_its_worker_and_launch_are_not_barriers() {
    // The parallel target's kernels (`<parent>.parfor<N>`), workers and launches take
    // and drop references of their own in pairs: a call to one does not pin the
    // caller's pair.
    let body = "
define void @k.parfor3(ptr %x) {
entry:
  call void @NRT_incref(ptr %x)
  call void @NRT_decref(ptr %x)
  ret void
}
define void @k.parfor3.worker(ptr %x) {
entry:
  call void @k.parfor3(ptr %x)
  ret void
}
define void @k.parfor3.launch(ptr %x) {
entry:
  call void @k.parfor3.worker(ptr %x)
  ret void
}
define void @f(ptr %p) {
entry:
  call void @NRT_incref(ptr %p)
  call void @k.parfor3(ptr %p)
  call void @k.parfor3.worker(ptr %p)
  call void @k.parfor3.launch(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";
    // The kernel's own pair goes too.
    assert_eq!(run(body, ALL), (stats(4, 0, 0, 0), 0, 0));
    // A name that only looks like one is still a barrier.
    let body = "
define void @k.parfor3.launcher(ptr %x) {
entry:
  call void @NRT_decref(ptr %x)
  ret void
}
define void @f(ptr %p) {
entry:
  call void @NRT_incref(ptr %p)
  call void @k.parfor3.launcher(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
    let body = "
define void @k.parforx(ptr %x) {
entry:
  call void @NRT_decref(ptr %x)
  ret void
}
define void @f(ptr %p) {
entry:
  call void @NRT_incref(ptr %p)
  call void @k.parforx(ptr %p)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 1));
}

#[test]
fn refops_on_a_meminfo_built_as_null_are_removed() {
    // A shape-only array (null MemInfo) built by an insertvalue chain from a constant:
    // its decref does nothing, and does not stand between the other pair.
    let body = "
define void @f(ptr %p, i64 %n) {
entry:
  %a0 = insertvalue { ptr, ptr, i64, [1 x i64] } { ptr null, ptr null, i64 undef, [1 x i64] undef }, i64 %n, 2
  %a1 = insertvalue { ptr, ptr, i64, [1 x i64] } %a0, i64 %n, 3, 0
  call void @NRT_incref(ptr %p)
  br label %next
next:
  %m = extractvalue { ptr, ptr, i64, [1 x i64] } %a1, 0
  call void @NRT_decref(ptr %m)
  call void @NRT_decref(ptr %p)
  ret void
}";
    let (s, inc, dec) = run(body, ALL);
    assert_eq!((inc, dec), (0, 0), "{s:?}");
    // A MemInfo inserted from an unknown value stays a decref that may release.
    let body = "
define void @f(ptr %p, ptr %q, i64 %n) {
entry:
  %a0 = insertvalue { ptr, i64 } undef, ptr %q, 0
  %a1 = insertvalue { ptr, i64 } %a0, i64 %n, 1
  call void @NRT_incref(ptr %p)
  br label %next
next:
  %m = extractvalue { ptr, i64 } %a1, 0
  call void @NRT_decref(ptr %m)
  call void @NRT_decref(ptr %p)
  ret void
}";
    assert_eq!(run(body, ALL), (NONE, 1, 2));
}
