//! Dataflow over IR blocks (Numba's `numba/core/analysis.py`): variable uses and
//! definitions per block, liveness at block entry, where each variable dies, and which
//! variables are available at block entry. Post-processing (dels, generator info) and later
//! passes build on these.

use std::collections::{BTreeMap, BTreeSet};

use numba_bytecode::cfg::ControlFlowGraph;

use crate::ir::*;

pub type VarSet = BTreeSet<VarId>;

/// Variables a statement mentions, as Numba's `list_vars` (a `Del` mentions none: it
/// holds a name).
pub fn stmt_list_vars(ir: &FunctionIR, stmt: &Stmt) -> Vec<VarId> {
    match stmt {
        Stmt::Del { .. } => Vec::new(),
        other => ir.stmt_vars(other),
    }
}

/// Per block: variables used before any definition in the block, and variables defined.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UseDefs {
    pub usemap: BTreeMap<Label, VarSet>,
    pub defmap: BTreeMap<Label, VarSet>,
}

/// `compute_use_defs`. An assignment whose target also appears on its right-hand side
/// (`x = x + 1`) counts as a use, not a definition, as in Numba.
pub fn compute_use_defs(ir: &FunctionIR) -> UseDefs {
    let mut ud = UseDefs::default();
    for (&label, block) in &ir.blocks {
        let mut uses = VarSet::new();
        let mut defs = VarSet::new();
        for inst in &block.body {
            if let Stmt::Assign { target, value } = &inst.stmt {
                let rhs = ir.expr_uses(ir.expr(*value));
                if !rhs.contains(target) {
                    defs.insert(*target);
                }
            }
            for v in stmt_list_vars(ir, &inst.stmt) {
                if !defs.contains(&v) {
                    uses.insert(v);
                }
            }
        }
        ud.usemap.insert(label, uses);
        ud.defmap.insert(label, defs);
    }
    ud
}

fn fix_point(
    map: &mut BTreeMap<Label, VarSet>,
    mut step: impl FnMut(&mut BTreeMap<Label, VarSet>),
) {
    let progress = |m: &BTreeMap<Label, VarSet>| m.values().map(BTreeSet::len).collect::<Vec<_>>();
    let mut old = None;
    let mut new = progress(map);
    while old.as_ref() != Some(&new) {
        step(map);
        old = Some(new);
        new = progress(map);
    }
}

/// `compute_live_map`: the variables that must be live at the entry of each block (used
/// later on some path, and defined on some path reaching the block).
pub fn compute_live_map(
    cfg: &ControlFlowGraph,
    blocks: impl Iterator<Item = Label>,
    ud: &UseDefs,
) -> BTreeMap<Label, VarSet> {
    let topo = cfg.topo_order();
    let empty = VarSet::new();
    let defs = |l: &Label| ud.defmap.get(l).unwrap_or(&empty);
    let uses = |l: &Label| ud.usemap.get(l).unwrap_or(&empty);
    let mut reach: BTreeMap<Label, VarSet> = BTreeMap::new();
    fix_point(&mut reach, |dct| {
        for &b in &topo {
            let both: VarSet = defs(&b).union(uses(&b)).copied().collect();
            let entry = dct.entry(b).or_default();
            entry.extend(both);
            let cur = entry.clone();
            for s in cfg.successors(b) {
                dct.entry(s).or_default().extend(cur.iter().copied());
            }
        }
    });
    let mut live: BTreeMap<Label, VarSet> = blocks.map(|b| (b, uses(&b).clone())).collect();
    fix_point(&mut live, |dct| {
        for &b in topo.iter().rev() {
            let here = dct.get(&b).cloned().unwrap_or_default();
            for p in cfg.predecessors(b) {
                let reachable = reach.get(&p).unwrap_or(&empty);
                let add: Vec<VarId> = here
                    .iter()
                    .filter(|v| reachable.contains(v) && !defs(&p).contains(v))
                    .copied()
                    .collect();
                dct.entry(p).or_default().extend(add);
            }
        }
    });
    live
}

/// Where variables die (`compute_dead_maps`): inside a block (after their last use there),
/// at the start of a successor (they escape the block but the successor does not need
/// them), and at function exit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeadMaps {
    pub internal: BTreeMap<Label, VarSet>,
    pub escaping: BTreeMap<Label, VarSet>,
    pub exit: BTreeMap<Label, VarSet>,
    /// `internal ∪ escaping` per block.
    pub combined: BTreeMap<Label, VarSet>,
}

pub fn compute_dead_maps(
    ir: &FunctionIR,
    cfg: &ControlFlowGraph,
    live_map: &BTreeMap<Label, VarSet>,
    ud: &UseDefs,
) -> DeadMaps {
    let empty = VarSet::new();
    let mut dm = DeadMaps::default();
    for (&label, block) in &ir.blocks {
        let mut cur: VarSet = live_map.get(&label).unwrap_or(&empty).clone();
        cur.extend(ud.defmap.get(&label).unwrap_or(&empty));
        let succs: Vec<Label> = cfg.successors(label).collect();
        let term_live: VarSet = block
            .body
            .last()
            .map(|i| stmt_list_vars(ir, &i.stmt))
            .unwrap_or_default()
            .into_iter()
            .collect();
        let mut combined: VarSet = term_live.clone();
        for s in &succs {
            combined.extend(live_map.get(s).unwrap_or(&empty));
        }
        let internal: VarSet = cur.difference(&combined).copied().collect();
        let escaping_live: VarSet = cur.difference(&internal).copied().collect();
        for s in &succs {
            let mut new_live = live_map.get(s).unwrap_or(&empty).clone();
            new_live.extend(ud.defmap.get(s).unwrap_or(&empty));
            dm.escaping
                .entry(*s)
                .or_default()
                .extend(escaping_live.difference(&new_live));
        }
        if succs.is_empty() {
            dm.exit.insert(label, term_live);
        }
        dm.internal.insert(label, internal);
    }
    for &label in ir.blocks.keys() {
        let mut c = dm.internal.get(&label).cloned().unwrap_or_default();
        c.extend(dm.escaping.get(&label).unwrap_or(&empty));
        dm.combined.insert(label, c);
        dm.escaping.entry(label).or_default();
    }
    dm
}

/// `compute_live_variables`: the variables available (defined and not yet dead) at the
/// entry of each block.
pub fn compute_live_variables(
    ir: &FunctionIR,
    cfg: &ControlFlowGraph,
    ud: &UseDefs,
    dead: &BTreeMap<Label, VarSet>,
) -> BTreeMap<Label, VarSet> {
    let empty = VarSet::new();
    let mut entry: BTreeMap<Label, VarSet> = BTreeMap::new();
    fix_point(&mut entry, |dct| {
        for &b in ir.blocks.keys() {
            let mut avail = dct.get(&b).cloned().unwrap_or_default();
            avail.extend(ud.defmap.get(&b).unwrap_or(&empty));
            for d in dead.get(&b).unwrap_or(&empty) {
                avail.remove(d);
            }
            for s in cfg.successors(b) {
                dct.entry(s).or_default().extend(avail.iter().copied());
            }
        }
    });
    entry
}

/// The lifetime facts post-processing needs, computed once (Numba's `VariableLifetime`).
#[derive(Debug, Clone)]
pub struct VariableLifetime {
    pub cfg: ControlFlowGraph,
    pub usedefs: UseDefs,
    pub livemap: BTreeMap<Label, VarSet>,
    pub deadmaps: DeadMaps,
}

impl VariableLifetime {
    pub fn new(ir: &FunctionIR) -> Self {
        let cfg = ir.cfg();
        let usedefs = compute_use_defs(ir);
        let livemap = compute_live_map(&cfg, ir.blocks.keys().copied(), &usedefs);
        let deadmaps = compute_dead_maps(ir, &cfg, &livemap, &usedefs);
        VariableLifetime {
            cfg,
            usedefs,
            livemap,
            deadmaps,
        }
    }
}
