//! Reference-count pruning: removes `NRT_incref` / `NRT_decref` pairs that cancel out, the
//! job of llvmlite's `RefPrune` pass in Numba (`NUMBA_LLVM_REFPRUNE_PASS`,
//! `NUMBA_LLVM_REFPRUNE_FLAGS`).
//!
//! The lowering emits reference counting naively (see [`crate::nrt`]): every copy of an
//! array takes a reference and every `del` drops one, so most functions are full of
//! increfs that a decref of the same MemInfo undoes a few instructions later. This pass
//! works on LLVM IR, function by function, on calls to the external `NRT_incref` /
//! `NRT_decref` (recognised by callee name; their one operand is the MemInfo pointer,
//! which may be null: both calls then do nothing). A pair is "related" when both calls
//! take the very same SSA value, so the pass is run after a cheap simplification that
//! merges the loads and `extractvalue`s the lowering repeats (see `codegen::optimise`).
//!
//! Four shapes, as llvmlite implements them, each enabled by a [`RefPruneFlags`] bit.
//! "A decref that may release it" below is a decref of the same pointer, of any other
//! pointer that may be the same MemInfo (every other one, except a MemInfo allocated in
//! this call against an argument's), or a call that may consume a reference.
//!
//! - **per basic block** ([`RefPruneFlags::PER_BB`]): an incref and a later decref of the
//!   same pointer in one block, with no decref that may release it between them. Refops
//!   on a constant null pointer are dropped too.
//! - **diamond** ([`RefPruneFlags::DIAMOND`]): an incref in block A and a decref of the
//!   same pointer in block B, where A dominates B and B post-dominates A, neither block
//!   can run again without the other (no cycle through one that avoids the other), and
//!   no decref that may release it can run between them (after the incref in A, in any
//!   block on a path from A to B, before the decref in B).
//! - **fanout** ([`RefPruneFlags::FANOUT`]): an incref in block H (with no decref that may
//!   release it) whose every path reaches, before any other decref that may release it, a
//!   block whose first such decref is of the same pointer; no path loops back to H
//!   (interior loops are fine), and each decref block is entered only through H (walking
//!   predecessors from it reaches H before the function's entry or another decref block).
//!   The incref and one decref per block go. Paths longer than [`FANOUT_RECURSE_DEPTH`]
//!   blocks, or walks over more than [`SUBGRAPH_LIMIT`] blocks (llvmlite's bound), give
//!   up.
//! - **fanout with raise** ([`RefPruneFlags::FANOUT_RAISE`]): as fanout, but a path may
//!   instead end in a block that raises (stores an exception record through `excinfo` and
//!   returns), where the reference was leaked anyway. Raising blocks are recognised by
//!   the `!numba_exception_output` metadata the lowering puts on that store, as Numba
//!   marks it (see [`EXCEPTION_OUTPUT_MD`]), in a block that returns (by its own `ret`, or
//!   by a branch to a block of phis and a `ret`, as `simplifycfg` merges returns).
//!
//! The shapes run in that order, repeated until none removes anything.
//!
//! Soundness rests on Numba's documented assumption: the only function that consumes a
//! reference is `NRT_decref` (callees borrow their arguments, and our runtime helpers
//! never drop references). On top of that the pass is more conservative than llvmlite:
//! a call through a pointer, or to a function defined in the same module that may reach
//! an `NRT_decref`, counts as a decref of every pointer; no shape pairs across a decref
//! of a possible alias (llvmlite's per-block shape does); llvmlite's `RefNormalize` (which
//! first moves every decref of a block with an incref to the block's end) is not done,
//! so a decref that precedes an incref is never paired with it; and the diamond also
//! rejects an incref that a loop can repeat before the decref.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::{BitOr, BitOrAssign};
use std::sync::Mutex;

use inkwell::basic_block::BasicBlock;
use inkwell::module::Module;
use inkwell::values::{
    BasicValue, BasicValueEnum, CallSiteValue, FunctionValue, InstructionOpcode, InstructionValue,
    Operand,
};
use petgraph::algo::dominators::{simple_fast, Dominators};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Reversed;

/// The incref the lowering emits.
pub const INCREF: &str = "NRT_incref";
/// The decref the lowering emits.
pub const DECREF: &str = "NRT_decref";
/// The allocation of a new MemInfo (reference count 1).
pub const ALLOC: &str = "NRT_MemInfo_alloc";
/// Metadata kind on the store of an exception record through `excinfo` in a block that
/// returns with the exception (Numba's name for it).
pub const EXCEPTION_OUTPUT_MD: &str = "numba_exception_output";
/// Longest path (in blocks) the fanout walk follows before giving up. llvmlite stops at
/// 15; a parallel region's launch (small path, scheduler, pool, failure and combination
/// loops) puts an argument's incref 20-odd blocks from its decref, and the pair left there
/// cost a small parfor 3% of its time. [`SUBGRAPH_LIMIT`] still bounds the walk's work.
pub const FANOUT_RECURSE_DEPTH: usize = 40;
/// Most blocks the fanout walk visits for one incref (llvmlite's default limit).
pub const SUBGRAPH_LIMIT: usize = 1000;

/// Which shapes to prune: a set of bits, as llvmlite's `RefPruneSubpasses`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RefPruneFlags(u32);

impl RefPruneFlags {
    /// No shape: the pass does nothing.
    pub const NONE: Self = Self(0);
    /// Pairs inside one basic block.
    pub const PER_BB: Self = Self(0b0001);
    /// Incref in a block, decref in the block that closes the diamond below it.
    pub const DIAMOND: Self = Self(0b0010);
    /// Incref in a block, decrefs in blocks that every path from it reaches.
    pub const FANOUT: Self = Self(0b0100);
    /// Fanout where some paths end in a raise instead of a decref.
    pub const FANOUT_RAISE: Self = Self(0b1000);
    /// Every shape (Numba's default).
    pub const ALL: Self = Self(0b1111);

    /// Numba's names for the bits, in the order its flag enum lists them.
    const NAMES: [(&'static str, Self); 5] = [
        ("PER_BB", Self::PER_BB),
        ("DIAMOND", Self::DIAMOND),
        ("FANOUT", Self::FANOUT),
        ("FANOUT_RAISE", Self::FANOUT_RAISE),
        ("ALL", Self::ALL),
    ];

    /// The raw bits (llvmlite's values).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Flags from raw bits; unknown bits are dropped.
    pub const fn from_bits_truncate(bits: u32) -> Self {
        Self(bits & Self::ALL.0)
    }

    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no shape is enabled.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Parse a `NUMBA_LLVM_REFPRUNE_FLAGS` value as Numba does (`_parse_refprune_flags`):
    /// split on `,`, strip each item, look it up case-insensitively among `per_bb`,
    /// `diamond`, `fanout`, `fanout_raise` and `all`. Returns the flags and the items that
    /// matched no name (Numba warns about each, an empty item included).
    pub fn parse(text: &str) -> (Self, Vec<String>) {
        let mut flags = Self::NONE;
        let mut invalid = Vec::new();
        for item in text.split(',') {
            let item = item.trim();
            let upper = item.to_ascii_uppercase();
            match Self::NAMES.iter().find(|(name, _)| *name == upper) {
                Some((_, f)) => flags |= *f,
                None => invalid.push(item.to_string()),
            }
        }
        (flags, invalid)
    }

    /// [`Self::parse`], printing Numba's warning to stderr for every invalid item (once per
    /// process, as Python shows a warning once).
    pub fn parse_warn(text: &str) -> Self {
        let (flags, invalid) = Self::parse(text);
        for item in invalid {
            warn_once(format!(
                "NumbaInvalidConfigWarning: invalid refprune flags {}",
                py_repr(&item)
            ));
        }
        flags
    }

    /// The flags Numba's configuration selects: none when `NUMBA_LLVM_REFPRUNE_PASS` is `0`,
    /// otherwise `NUMBA_LLVM_REFPRUNE_FLAGS` (default `all`), parsed with warnings.
    pub fn from_env() -> Self {
        Self::from_config(
            std::env::var("NUMBA_LLVM_REFPRUNE_PASS").ok().as_deref(),
            std::env::var("NUMBA_LLVM_REFPRUNE_FLAGS").ok().as_deref(),
        )
    }

    /// [`Self::from_env`] on given values of the two variables (`None`: unset). As in
    /// Numba, the pass switch is an integer (default 1); a value that is not one is
    /// reported and the default used.
    pub fn from_config(pass: Option<&str>, flags: Option<&str>) -> Self {
        let enabled = match pass {
            None => true,
            Some(v) => match v.trim().parse::<i64>() {
                Ok(n) => n != 0,
                Err(_) => {
                    warn_once(format!(
                        "RuntimeWarning: Environment variable 'NUMBA_LLVM_REFPRUNE_PASS' is \
                         defined but its associated value '{v}' could not be parsed."
                    ));
                    true
                }
            },
        };
        if !enabled {
            return Self::NONE;
        }
        Self::parse_warn(flags.unwrap_or("all"))
    }
}

/// Print `message` to stderr unless it was printed before.
fn warn_once(message: String) {
    static SHOWN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    if shown
        .get_or_insert_with(HashSet::new)
        .insert(message.clone())
    {
        eprintln!("{message}");
    }
}

/// A string as Python's `repr` writes it (the quotes Numba's warning shows).
fn py_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{}\"", s.replace('\\', "\\\\"))
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

impl BitOr for RefPruneFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl BitOrAssign for RefPruneFlags {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for RefPruneFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Self::NAMES[..4]
            .iter()
            .filter(|(_, bit)| self.contains(*bit))
            .map(|(name, _)| *name)
            .collect();
        if names.is_empty() {
            write!(f, "RefPruneFlags(NONE)")
        } else {
            write!(f, "RefPruneFlags({})", names.join(" | "))
        }
    }
}

/// How many refop calls each shape removed (a pair counts 2, a fanout 1 + its decrefs;
/// refops on a null pointer count under `per_bb`), as llvmlite's statistics. Summed over
/// every function of the module (and, from `codegen::optimise`, over both runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneStats {
    pub per_bb: usize,
    pub diamond: usize,
    pub fanout: usize,
    pub fanout_raise: usize,
}

impl PruneStats {
    /// Calls removed in all.
    pub fn total(&self) -> usize {
        self.per_bb + self.diamond + self.fanout + self.fanout_raise
    }
}

impl std::ops::AddAssign for PruneStats {
    fn add_assign(&mut self, rhs: Self) {
        self.per_bb += rhs.per_bb;
        self.diamond += rhs.diamond;
        self.fanout += rhs.fanout;
        self.fanout_raise += rhs.fanout_raise;
    }
}

/// Prune every function defined in `module` with the shapes `flags` enables.
pub fn prune(module: &Module<'_>, flags: RefPruneFlags) -> PruneStats {
    let mut stats = PruneStats::default();
    if flags.is_empty() {
        return stats;
    }
    let kind = module.get_context().get_kind_id(EXCEPTION_OUTPUT_MD);
    let consumers = consuming_functions(module);
    for f in module.get_functions() {
        if f.count_basic_blocks() == 0 {
            continue;
        }
        stats += Pruner::new(f, kind, &consumers).run(flags);
    }
    stats
}

/// What a call does to reference counts, as far as the pass is concerned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RefOpKind {
    Incref,
    Decref,
    /// A call that may consume a reference: treated as a decref of every pointer.
    Barrier,
}

/// One call the pass cares about.
#[derive(Clone, Copy)]
struct RefOp<'ctx> {
    inst: InstructionValue<'ctx>,
    kind: RefOpKind,
    /// The MemInfo operand (increfs and decrefs only).
    ptr: Option<BasicValueEnum<'ctx>>,
}

impl<'ctx> RefOp<'ctx> {
    fn is_decref_of(&self, ptr: BasicValueEnum<'ctx>) -> bool {
        self.kind == RefOpKind::Decref && self.ptr == Some(ptr)
    }

    fn on_null(&self) -> bool {
        matches!(self.ptr, Some(BasicValueEnum::PointerValue(p)) if p.is_null())
    }
}

/// The called function, or `None` for a call through a pointer (or inline assembly).
fn callee(inst: InstructionValue<'_>) -> Option<FunctionValue<'_>> {
    CallSiteValue::try_from(inst)
        .ok()
        .and_then(CallSiteValue::get_called_fn_value)
}

fn is_call(inst: InstructionValue<'_>) -> bool {
    inst.get_opcode() == InstructionOpcode::Call
}

/// The value an `extractvalue` reads back from the `insertvalue` chain that built its
/// aggregate (`v` itself otherwise): the MemInfo a struct was made with. An array built
/// with a constant null MemInfo (a parfor's shape-only temporary) then has refops on
/// null, which go, instead of a decref of an unknown pointer that pins every pair across
/// it.
fn inserted(v: BasicValueEnum<'_>) -> BasicValueEnum<'_> {
    // The index path of an `extractvalue` / `insertvalue`.
    fn path(inst: InstructionValue<'_>) -> Vec<u32> {
        use inkwell::llvm_sys::core::{LLVMGetIndices, LLVMGetNumIndices};
        use inkwell::values::AsValueRef;
        // SAFETY: `inst` is a live extractvalue/insertvalue instruction (checked by the
        // callers), for which LLVM keeps an array of `LLVMGetNumIndices` indices.
        unsafe {
            let r = inst.as_value_ref();
            let n = LLVMGetNumIndices(r) as usize;
            std::slice::from_raw_parts(LLVMGetIndices(r), n).to_vec()
        }
    }
    let Some(x) = v.as_instruction_value() else {
        return v;
    };
    if x.get_opcode() != InstructionOpcode::ExtractValue {
        return v;
    }
    let k = path(x);
    let Some(Operand::Value(mut agg)) = x.get_operand(0) else {
        return v;
    };
    for _ in 0..64 {
        let Some(i) = agg.as_instruction_value() else {
            // The constant the chain started from (`{ ptr null, ... }`): its field.
            return constant_field(agg, &k).unwrap_or(v);
        };
        if i.get_opcode() != InstructionOpcode::InsertValue {
            return v;
        }
        let (Some(Operand::Value(outer)), Some(Operand::Value(item))) =
            (i.get_operand(0), i.get_operand(1))
        else {
            return v;
        };
        let j = path(i);
        if j == k {
            return item;
        }
        // A field beside the one read: look further back. One inside the other (a
        // whole sub-aggregate inserted): not followed.
        let common = j.iter().zip(&k).take_while(|(a, b)| a == b).count();
        if common == j.len() || common == k.len() {
            return v;
        }
        agg = outer;
    }
    v
}

/// Field `path` (one level) of a constant aggregate, when it is a constant null pointer.
fn constant_field<'ctx>(agg: BasicValueEnum<'ctx>, path: &[u32]) -> Option<BasicValueEnum<'ctx>> {
    use inkwell::llvm_sys::core::{LLVMGetAggregateElement, LLVMIsAConstant};
    use inkwell::values::AsValueRef;
    let [k] = path else { return None };
    // SAFETY: `agg` is a live value; LLVMGetAggregateElement returns null for anything
    // but a constant aggregate with that element, and the element is a live constant.
    unsafe {
        let r = agg.as_value_ref();
        if LLVMIsAConstant(r).is_null() {
            return None;
        }
        let e = LLVMGetAggregateElement(r, *k);
        if e.is_null() {
            return None;
        }
        match BasicValueEnum::new(e) {
            BasicValueEnum::PointerValue(p) if p.is_null() => Some(p.into()),
            _ => None,
        }
    }
}

/// The result of `NRT_MemInfo_alloc`: a MemInfo allocated by this call of the function.
fn is_fresh_meminfo(v: BasicValueEnum<'_>) -> bool {
    v.as_instruction_value()
        .filter(|i| is_call(*i))
        .and_then(callee)
        .is_some_and(|f| f.get_name().to_bytes() == ALLOC.as_bytes())
}

/// Functions defined in the module that may reach an `NRT_decref` (directly, through
/// other such functions, or through a call by pointer): calls to them are barriers.
fn consuming_functions<'ctx>(module: &Module<'ctx>) -> HashSet<FunctionValue<'ctx>> {
    let mut consumers = HashSet::new();
    let mut calls: HashMap<FunctionValue<'ctx>, Vec<FunctionValue<'ctx>>> = HashMap::new();
    for f in module.get_functions() {
        let mut callees = Vec::new();
        let mut consumes = false;
        for bb in f.get_basic_block_iter() {
            for inst in bb.get_instructions().filter(|i| is_call(*i)) {
                match callee(inst) {
                    Some(c) if c.get_name().to_bytes() == DECREF.as_bytes() => consumes = true,
                    Some(c) if c.count_basic_blocks() > 0 => callees.push(c),
                    Some(_) => {}
                    None => consumes = true,
                }
            }
        }
        // A parallel loop's kernel (`<function>.parfor<N>`) and its worker are the
        // lowering's own code: they take and drop references of their own in pairs and
        // borrow their parameters, as Numba assumes every callee does. Without this a
        // nested loop's kernel, called once per outer iteration, pins every incref
        // around it (two atomic operations per iteration on a MemInfo both threads
        // share).
        if consumes && !is_parfor_kernel(f) {
            consumers.insert(f);
        }
        calls.insert(f, callees);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for (f, callees) in &calls {
            if !consumers.contains(f) && callees.iter().any(|c| consumers.contains(c)) {
                consumers.insert(*f);
                changed = true;
            }
        }
    }
    consumers
}

/// Whether `f` is a parfor kernel, worker or launch numba-lower's parallel target
/// generated (`parallel.rs` names them `<parent>.parfor<id>`, `<parent>.parfor<id>.worker`
/// and `<parent>.parfor<id>.launch`).
fn is_parfor_kernel(f: FunctionValue<'_>) -> bool {
    let name = f.get_name().to_bytes();
    let Some(at) = name.windows(7).rposition(|w| w == b".parfor") else {
        return false;
    };
    let rest = &name[at + 7..];
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && matches!(&rest[digits..], b"" | b".worker" | b".launch")
}

/// A function's CFG with dominators and post-dominators (the CFG does not change while
/// pruning: only calls are erased).
struct Cfg<'ctx> {
    blocks: Vec<BasicBlock<'ctx>>,
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    dom: Dominators<NodeIndex>,
    /// Post-dominators: dominators of the reversed graph from a virtual exit that every
    /// block without successors flows into.
    pdom: Dominators<NodeIndex>,
    raising: Vec<bool>,
}

impl<'ctx> Cfg<'ctx> {
    fn new(f: FunctionValue<'ctx>, md_kind: u32) -> Self {
        let blocks: Vec<BasicBlock<'ctx>> = f.get_basic_block_iter().collect();
        let index: HashMap<BasicBlock<'ctx>, usize> =
            blocks.iter().enumerate().map(|(i, b)| (*b, i)).collect();
        let n = blocks.len();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n + 1, n * 2);
        for _ in 0..=n {
            graph.add_node(());
        }
        let exit = NodeIndex::new(n);
        for (i, bb) in blocks.iter().enumerate() {
            if let Some(term) = bb.get_terminator() {
                for op in term.get_operands().flatten() {
                    if let Operand::Block(s) = op {
                        if let Some(&j) = index.get(&s) {
                            if !succs[i].contains(&j) {
                                succs[i].push(j);
                                preds[j].push(i);
                                graph.add_edge(NodeIndex::new(i), NodeIndex::new(j), ());
                            }
                        }
                    }
                }
            }
            if succs[i].is_empty() {
                graph.add_edge(NodeIndex::new(i), exit, ());
            }
        }
        let dom = simple_fast(&graph, NodeIndex::new(0));
        let pdom = simple_fast(Reversed(&graph), exit);
        let raising = blocks.iter().map(|bb| is_raising(*bb, md_kind)).collect();
        Cfg {
            blocks,
            succs,
            preds,
            dom,
            pdom,
            raising,
        }
    }

    /// Whether block `a` dominates block `b` (both reachable from the entry).
    fn dominates(&self, a: usize, b: usize) -> bool {
        self.dom
            .dominators(NodeIndex::new(b))
            .is_some_and(|mut it| it.any(|d| d.index() == a))
    }

    /// Whether block `b` post-dominates block `a` (both reach an exit).
    fn post_dominates(&self, b: usize, a: usize) -> bool {
        self.pdom
            .dominators(NodeIndex::new(a))
            .is_some_and(|mut it| it.any(|d| d.index() == b))
    }

    /// Blocks reachable from `from`'s successors without passing through `stop` (`stop`
    /// itself is not included; `from` is, if a path returns to it).
    fn reachable_avoiding(&self, from: usize, stop: usize) -> Vec<bool> {
        let mut seen = vec![false; self.blocks.len()];
        let mut work: Vec<usize> = self.succs[from].clone();
        while let Some(b) = work.pop() {
            if b == stop || seen[b] {
                continue;
            }
            seen[b] = true;
            work.extend(self.succs[b].iter().copied());
        }
        seen
    }
}

/// A raising exit: the block stores an exception record with [`EXCEPTION_OUTPUT_MD`] and
/// leaves the function, by its own `ret` or by a branch to a block that only returns
/// (what LLVM's `simplifycfg` makes of several returns: `common.ret`).
fn is_raising(bb: BasicBlock<'_>, md_kind: u32) -> bool {
    let marked = bb
        .get_instructions()
        .any(|i| i.get_opcode() == InstructionOpcode::Store && i.get_metadata(md_kind).is_some());
    marked && bb.get_terminator().is_some_and(leaves_function)
}

/// `ret`, or an unconditional `br` to a block made of phis and a `ret`.
fn leaves_function(term: InstructionValue<'_>) -> bool {
    match term.get_opcode() {
        InstructionOpcode::Return => true,
        InstructionOpcode::Br if term.get_num_operands() == 1 => match term.get_operand(0) {
            Some(Operand::Block(next)) => next.get_instructions().all(|i| {
                matches!(
                    i.get_opcode(),
                    InstructionOpcode::Phi | InstructionOpcode::Return
                )
            }),
            _ => false,
        },
        _ => false,
    }
}

/// Pruning one function: its CFG (fixed while pruning) and what tells a consuming call or
/// an argument's MemInfo apart. Refops are rescanned from the IR after every change.
struct Pruner<'ctx, 'a> {
    cfg: Cfg<'ctx>,
    consumers: &'a HashSet<FunctionValue<'ctx>>,
    params: Vec<BasicValueEnum<'ctx>>,
}

impl<'ctx, 'a> Pruner<'ctx, 'a> {
    fn new(
        f: FunctionValue<'ctx>,
        md_kind: u32,
        consumers: &'a HashSet<FunctionValue<'ctx>>,
    ) -> Self {
        Pruner {
            cfg: Cfg::new(f, md_kind),
            consumers,
            params: f.get_params(),
        }
    }

    fn run(&self, flags: RefPruneFlags) -> PruneStats {
        let mut stats = PruneStats::default();
        loop {
            let before = stats.total();
            if flags.contains(RefPruneFlags::PER_BB) {
                stats.per_bb += self.per_block();
            }
            if flags.contains(RefPruneFlags::DIAMOND) {
                stats.diamond += self.diamond();
            }
            if flags.contains(RefPruneFlags::FANOUT) {
                stats.fanout += self.fanout(false);
            }
            if flags.contains(RefPruneFlags::FANOUT_RAISE) {
                stats.fanout_raise += self.fanout(true);
            }
            if stats.total() == before {
                return stats;
            }
        }
    }

    /// The refops and barriers of block `b`, in order.
    fn ops(&self, b: usize) -> Vec<RefOp<'ctx>> {
        self.cfg.blocks[b]
            .get_instructions()
            .filter(|i| is_call(*i))
            .filter_map(|inst| self.classify(inst))
            .collect()
    }

    fn classify(&self, inst: InstructionValue<'ctx>) -> Option<RefOp<'ctx>> {
        let Some(f) = callee(inst) else {
            // Inline assembly or a call through a pointer: unknown.
            return Some(RefOp {
                inst,
                kind: RefOpKind::Barrier,
                ptr: None,
            });
        };
        let name = f.get_name().to_bytes();
        let kind = if name == INCREF.as_bytes() {
            RefOpKind::Incref
        } else if name == DECREF.as_bytes() {
            RefOpKind::Decref
        } else if self.consumers.contains(&f) {
            RefOpKind::Barrier
        } else {
            return None;
        };
        if kind == RefOpKind::Barrier {
            return Some(RefOp {
                inst,
                kind,
                ptr: None,
            });
        }
        match inst.get_operand(0) {
            Some(Operand::Value(ptr)) => Some(RefOp {
                inst,
                kind,
                ptr: Some(inserted(ptr)),
            }),
            // A refop without an argument is not ours: treat it as unknown.
            _ => Some(RefOp {
                inst,
                kind: RefOpKind::Barrier,
                ptr: None,
            }),
        }
    }

    /// Whether `op` may drop a reference to the MemInfo `ptr`: a barrier, or a decref of a
    /// pointer that may be the same MemInfo. Two different SSA values may be (a view
    /// shares its base's MemInfo; a value loaded back from memory is another value), so
    /// the only pair told apart is an argument's MemInfo and one allocated in this call:
    /// the caller keeps its arguments alive for the whole call, so no allocation made
    /// during it can return one of them.
    fn may_drop(&self, op: &RefOp<'ctx>, ptr: BasicValueEnum<'ctx>) -> bool {
        match (op.kind, op.ptr) {
            (RefOpKind::Incref, _) => false,
            (RefOpKind::Decref, Some(q)) => {
                q == ptr
                    || !((self.is_argument_meminfo(ptr) && is_fresh_meminfo(q))
                        || (self.is_argument_meminfo(q) && is_fresh_meminfo(ptr)))
            }
            _ => true,
        }
    }

    /// A value taken out of a parameter by `extractvalue`s (an array argument's MemInfo).
    fn is_argument_meminfo(&self, v: BasicValueEnum<'ctx>) -> bool {
        let mut v = v;
        loop {
            if self.params.contains(&v) {
                return true;
            }
            let Some(inst) = v.as_instruction_value() else {
                return false;
            };
            if inst.get_opcode() != InstructionOpcode::ExtractValue {
                return false;
            }
            match inst.get_operand(0) {
                Some(Operand::Value(agg)) => v = agg,
                _ => return false,
            }
        }
    }

    /// Whether block `b` holds an op that may drop a reference to `ptr`.
    fn has_drop_of(&self, b: usize, ptr: BasicValueEnum<'ctx>) -> bool {
        self.ops(b).iter().any(|op| self.may_drop(op, ptr))
    }

    /// Pairs inside one block, and refops on null. Returns the calls removed.
    fn per_block(&self) -> usize {
        let mut removed = 0;
        for b in 0..self.cfg.blocks.len() {
            // Increfs seen since the last decref or barrier that stays.
            let mut open: Vec<RefOp<'ctx>> = Vec::new();
            for op in self.ops(b) {
                if op.on_null() {
                    op.inst.erase_from_basic_block();
                    removed += 1;
                    continue;
                }
                match op.kind {
                    RefOpKind::Incref => open.push(op),
                    RefOpKind::Decref => {
                        let hit = open.iter().rposition(|inc| inc.ptr == op.ptr);
                        match hit {
                            Some(k) => {
                                let inc = open.remove(k);
                                inc.inst.erase_from_basic_block();
                                op.inst.erase_from_basic_block();
                                removed += 2;
                            }
                            // This decref stays between the open increfs and any later
                            // decref of a MemInfo it may release.
                            None => {
                                open.retain(|inc| inc.ptr.is_some_and(|p| !self.may_drop(&op, p)))
                            }
                        }
                    }
                    RefOpKind::Barrier => open.clear(),
                }
            }
        }
        removed
    }

    /// Incref in A, decref in B closing the diamond. Returns the calls removed.
    fn diamond(&self) -> usize {
        let mut removed = 0;
        let n = self.cfg.blocks.len();
        let mut increfs = Vec::new();
        let mut decrefs = Vec::new();
        for b in 0..n {
            for op in self.ops(b) {
                match op.kind {
                    RefOpKind::Incref => increfs.push((b, op)),
                    RefOpKind::Decref => decrefs.push((b, op)),
                    RefOpKind::Barrier => {}
                }
            }
        }
        let mut gone: HashSet<InstructionValue<'ctx>> = HashSet::new();
        for &(a, inc) in &increfs {
            let Some(ptr) = inc.ptr else { continue };
            for &(b, dec) in &decrefs {
                if b == a || gone.contains(&dec.inst) || !dec.is_decref_of(ptr) {
                    continue;
                }
                if !self.cfg.dominates(a, b) || !self.cfg.post_dominates(b, a) {
                    continue;
                }
                if !self.diamond_is_clean(ptr, (a, inc.inst), (b, dec.inst)) {
                    continue;
                }
                inc.inst.erase_from_basic_block();
                dec.inst.erase_from_basic_block();
                gone.insert(dec.inst);
                removed += 2;
                break;
            }
        }
        removed
    }

    /// No cycle runs A or B again without the other, and nothing may drop a reference
    /// between the incref `inc` (in A) and the decref `dec` (in B).
    fn diamond_is_clean(
        &self,
        ptr: BasicValueEnum<'ctx>,
        (a, inc): (usize, InstructionValue<'ctx>),
        (b, dec): (usize, InstructionValue<'ctx>),
    ) -> bool {
        let from_a = self.cfg.reachable_avoiding(a, b);
        if from_a[a] || self.cfg.reachable_avoiding(b, a)[b] {
            return false;
        }
        let after_inc = self
            .ops(a)
            .into_iter()
            .skip_while(|op| op.inst != inc)
            .skip(1)
            .any(|op| self.may_drop(&op, ptr));
        let before_dec = self
            .ops(b)
            .into_iter()
            .take_while(|op| op.inst != dec)
            .any(|op| self.may_drop(&op, ptr));
        if after_inc || before_dec {
            return false;
        }
        !(0..self.cfg.blocks.len()).any(|x| from_a[x] && x != a && self.has_drop_of(x, ptr))
    }

    /// Fanouts (with raising exits forgiven when `raise`). Returns the calls removed.
    fn fanout(&self, raise: bool) -> usize {
        let mut removed = 0;
        let mut bad_heads: HashSet<usize> = HashSet::new();
        for head in 0..self.cfg.blocks.len() {
            let increfs: Vec<RefOp<'ctx>> = self
                .ops(head)
                .into_iter()
                .filter(|op| op.kind == RefOpKind::Incref)
                .collect();
            for inc in increfs {
                if bad_heads.contains(&head) {
                    break;
                }
                let Some(ptr) = inc.ptr else { continue };
                // A decref in the head block might release an alias: skip it.
                if self.has_drop_of(head, ptr) {
                    continue;
                }
                let mut walk = FanoutWalk {
                    pruner: self,
                    ptr,
                    head,
                    raise,
                    visited: 0,
                    decref_blocks: Vec::new(),
                    raising_blocks: Vec::new(),
                    bad_head: false,
                };
                let found = walk.forward();
                let bad = walk.bad_head;
                let (decref_blocks, raising_blocks) = (walk.decref_blocks, walk.raising_blocks);
                if bad {
                    bad_heads.insert(head);
                }
                if !found || decref_blocks.is_empty() || (raise && raising_blocks.is_empty()) {
                    continue;
                }
                let mut tails = decref_blocks.clone();
                tails.extend(raising_blocks.iter().copied());
                if !self.enters_only_through(head, &tails, raise) {
                    continue;
                }
                for &t in &decref_blocks {
                    if let Some(dec) = self.ops(t).into_iter().find(|op| op.is_decref_of(ptr)) {
                        dec.inst.erase_from_basic_block();
                        removed += 1;
                    }
                }
                inc.inst.erase_from_basic_block();
                removed += 1;
            }
        }
        removed
    }

    /// The backward check of a fanout: walking predecessors from each tail block reaches
    /// the head before the function's entry, and never passes another tail block (which
    /// would let a decref run twice for one incref).
    fn enters_only_through(&self, head: usize, tails: &[usize], raise: bool) -> bool {
        let mut visited = vec![false; self.cfg.blocks.len()];
        for &t in tails {
            let mut work = vec![t];
            while let Some(x) = work.pop() {
                if (raise && self.cfg.raising[x]) || visited[x] {
                    continue;
                }
                if x == 0 {
                    return false;
                }
                visited[x] = true;
                for &p in &self.cfg.preds[x] {
                    if tails.contains(&p) {
                        return false;
                    }
                    if p != head {
                        work.push(p);
                    }
                }
            }
        }
        true
    }
}

/// The forward walk of a fanout from its head block.
struct FanoutWalk<'p, 'ctx, 'a> {
    pruner: &'p Pruner<'ctx, 'a>,
    ptr: BasicValueEnum<'ctx>,
    head: usize,
    raise: bool,
    /// Blocks visited so far (a block reached along two paths counts twice).
    visited: usize,
    decref_blocks: Vec<usize>,
    raising_blocks: Vec<usize>,
    /// Set when no incref of this head can ever form a fanout (a loop back to the head,
    /// too big a subgraph).
    bad_head: bool,
}

impl FanoutWalk<'_, '_, '_> {
    /// Whether every path from the head ends in a decref block (or a raising block).
    fn forward(&mut self) -> bool {
        let cfg = &self.pruner.cfg;
        let mut path = vec![self.head];
        let succs = cfg.succs[self.head].clone();
        !succs.is_empty() && succs.into_iter().all(|s| self.walk(s, &mut path))
    }

    fn walk(&mut self, node: usize, path: &mut Vec<usize>) -> bool {
        // (Back edges are looked at before the depth limit, unlike llvmlite: they end the
        // path either way, and a loop's latch at the limit need not fail the walk.)
        if let Some(k) = path.iter().position(|&p| p == node) {
            if k == 0 {
                // Back to the head: the incref could run again before a decref.
                self.bad_head = true;
                return false;
            }
            // A loop inside the subgraph, already being walked.
            return true;
        }
        if path.len() >= FANOUT_RECURSE_DEPTH {
            return false;
        }
        self.visited += 1;
        if self.visited > SUBGRAPH_LIMIT {
            self.bad_head = true;
            return false;
        }
        let ops = self.pruner.ops(node);
        if let Some(first) = ops.iter().find(|op| self.pruner.may_drop(op, self.ptr)) {
            if first.is_decref_of(self.ptr) {
                if !self.decref_blocks.contains(&node) {
                    self.decref_blocks.push(node);
                }
                return true;
            }
            // Some other reference may be dropped first (an alias?): not this incref. (Not
            // the whole head: another of its increfs may match that decref, and once that
            // pair is gone a later round can take this one.)
            return false;
        }
        let cfg = &self.pruner.cfg;
        if self.raise && cfg.raising[node] {
            if !self.raising_blocks.contains(&node) {
                self.raising_blocks.push(node);
            }
            return true;
        }
        let succs = cfg.succs[node].clone();
        if succs.is_empty() {
            // An exit without a decref.
            return false;
        }
        path.push(node);
        let ok = succs.into_iter().all(|s| self.walk(s, path));
        path.pop();
        ok
    }
}
