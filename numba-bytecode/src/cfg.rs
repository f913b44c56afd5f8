//! The control-flow graph of a function, with Numba's analyses (`numba/core/controlflow.py`).
//!
//! Nodes are block start offsets (Numba offsets). Sets are ordered so that results are
//! deterministic; the textual dump that emulates CPython's set ordering belongs to the dump
//! code, not here.

use std::collections::{BTreeMap, BTreeSet};

/// A natural loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub header: u32,
    pub body: BTreeSet<u32>,
    pub entries: BTreeSet<u32>,
    pub exits: BTreeSet<u32>,
}

/// A CFG over block offsets with dominators, post-dominators, back edges and loops.
#[derive(Debug, Clone, Default)]
pub struct ControlFlowGraph {
    pub entry: u32,
    pub nodes: BTreeSet<u32>,
    pub succs: BTreeMap<u32, BTreeSet<u32>>,
    pub preds: BTreeMap<u32, BTreeSet<u32>>,
    pub back_edges: BTreeSet<(u32, u32)>,
    pub doms: BTreeMap<u32, BTreeSet<u32>>,
    pub post_doms: BTreeMap<u32, BTreeSet<u32>>,
    pub loops: BTreeMap<u32, Loop>,
}

impl ControlFlowGraph {
    /// Build from nodes and edges, dropping nodes unreachable from `entry`, and run every
    /// analysis.
    pub fn new(
        entry: u32,
        nodes: impl IntoIterator<Item = u32>,
        edges: impl IntoIterator<Item = (u32, u32)>,
    ) -> Self {
        let mut g = ControlFlowGraph {
            entry,
            ..Default::default()
        };
        for n in nodes {
            g.nodes.insert(n);
        }
        for (a, b) in edges {
            g.nodes.insert(a);
            g.nodes.insert(b);
            g.succs.entry(a).or_default().insert(b);
            g.preds.entry(b).or_default().insert(a);
        }
        g.remove_unreachable();
        for &n in &g.nodes {
            g.succs.entry(n).or_default();
            g.preds.entry(n).or_default();
        }
        g.back_edges = g.find_back_edges();
        g.doms = dominators(&g.nodes, entry, &g.preds);
        g.post_doms = g.compute_post_doms();
        g.loops = g.find_loops();
        g
    }

    fn remove_unreachable(&mut self) {
        let mut seen = BTreeSet::new();
        let mut stack = vec![self.entry];
        while let Some(n) = stack.pop() {
            if seen.insert(n) {
                stack.extend(self.succs.get(&n).into_iter().flatten().copied());
            }
        }
        self.nodes.retain(|n| seen.contains(n));
        self.succs.retain(|n, _| seen.contains(n));
        self.preds.retain(|n, _| seen.contains(n));
        for set in self.preds.values_mut() {
            set.retain(|n| seen.contains(n));
        }
    }

    pub fn successors(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        self.succs.get(&n).into_iter().flatten().copied()
    }

    pub fn predecessors(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        self.preds.get(&n).into_iter().flatten().copied()
    }

    fn find_back_edges(&self) -> BTreeSet<(u32, u32)> {
        let mut back = BTreeSet::new();
        let mut visited = BTreeSet::new();
        let mut on_stack = BTreeSet::new();
        // Iterative DFS keeping the path on a stack of (node, remaining successors).
        let mut stack: Vec<(u32, Vec<u32>)> =
            vec![(self.entry, self.successors(self.entry).collect())];
        visited.insert(self.entry);
        on_stack.insert(self.entry);
        while let Some((node, todo)) = stack.last_mut() {
            let node = *node;
            if let Some(s) = todo.pop() {
                if on_stack.contains(&s) {
                    back.insert((node, s));
                } else if visited.insert(s) {
                    on_stack.insert(s);
                    let succ: Vec<u32> = self.successors(s).collect();
                    stack.push((s, succ));
                }
            } else {
                on_stack.remove(&node);
                stack.pop();
            }
        }
        back
    }

    fn compute_post_doms(&self) -> BTreeMap<u32, BTreeSet<u32>> {
        // A dummy exit reached from every exit node and from every node of an infinite loop.
        const DUMMY: u32 = u32::MAX;
        let mut rev_preds: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        let mut nodes = self.nodes.clone();
        nodes.insert(DUMMY);
        for (&a, succs) in &self.succs {
            for &b in succs {
                rev_preds.entry(a).or_default().insert(b);
            }
        }
        let exits: Vec<u32> = self
            .nodes
            .iter()
            .copied()
            .filter(|n| self.succs.get(n).is_none_or(|s| s.is_empty()))
            .collect();
        let mut to_dummy: BTreeSet<u32> = exits.into_iter().collect();
        for lp in self.find_loops().values() {
            if lp.exits.is_empty() {
                to_dummy.extend(lp.body.iter().copied());
            }
        }
        for n in to_dummy {
            rev_preds.entry(n).or_default().insert(DUMMY);
        }
        let mut pd = dominators(&nodes, DUMMY, &rev_preds);
        pd.remove(&DUMMY);
        for set in pd.values_mut() {
            set.remove(&DUMMY);
        }
        pd
    }

    fn find_loops(&self) -> BTreeMap<u32, Loop> {
        let mut bodies: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for &(src, header) in &self.back_edges {
            let body = bodies
                .entry(header)
                .or_insert_with(|| BTreeSet::from([header]));
            let mut stack = vec![src];
            while let Some(n) = stack.pop() {
                if body.insert(n) {
                    stack.extend(self.predecessors(n));
                }
            }
        }
        bodies
            .into_iter()
            .map(|(header, body)| {
                let entries = body
                    .iter()
                    .flat_map(|&n| self.predecessors(n))
                    .filter(|p| !body.contains(p))
                    .collect();
                let exits = body
                    .iter()
                    .flat_map(|&n| self.successors(n))
                    .filter(|s| !body.contains(s))
                    .collect();
                (
                    header,
                    Loop {
                        header,
                        body,
                        entries,
                        exits,
                    },
                )
            })
            .collect()
    }

    /// Numba's `backbone()`: the post-dominators of the entry.
    pub fn backbone(&self) -> BTreeSet<u32> {
        self.post_doms.get(&self.entry).cloned().unwrap_or_default()
    }

    /// The loop headers containing `node`, innermost (smallest body) first.
    pub fn in_loops(&self, node: u32) -> Vec<u32> {
        let mut v: Vec<&Loop> = self
            .loops
            .values()
            .filter(|l| l.body.contains(&node))
            .collect();
        v.sort_by_key(|l| l.body.len());
        v.into_iter().map(|l| l.header).collect()
    }
}

/// Iterative set-based dominators over `preds`, rooted at `entry`.
fn dominators(
    nodes: &BTreeSet<u32>,
    entry: u32,
    preds: &BTreeMap<u32, BTreeSet<u32>>,
) -> BTreeMap<u32, BTreeSet<u32>> {
    // `preds` here is "edges into n" for the direction being analysed.
    let mut incoming: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (&n, ps) in preds {
        for &p in ps {
            incoming.entry(n).or_default().push(p);
        }
    }
    let mut doms: BTreeMap<u32, BTreeSet<u32>> = nodes
        .iter()
        .map(|&n| {
            (
                n,
                if n == entry {
                    BTreeSet::from([n])
                } else {
                    nodes.clone()
                },
            )
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &n in nodes {
            if n == entry {
                continue;
            }
            let mut new: Option<BTreeSet<u32>> = None;
            for p in incoming.get(&n).into_iter().flatten() {
                if let Some(pd) = doms.get(p) {
                    new = Some(match new {
                        None => pd.clone(),
                        Some(acc) => acc.intersection(pd).copied().collect(),
                    });
                }
            }
            let mut new = new.unwrap_or_default();
            new.insert(n);
            if doms.get(&n) != Some(&new) {
                doms.insert(n, new);
                changed = true;
            }
        }
    }
    doms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numba_doloops_shape() {
        // The CFG of the seed's doloops (facts §1.5).
        let g = ControlFlowGraph::new(
            0,
            [],
            [
                (0, 60),
                (60, 62),
                (60, 130),
                (62, 88),
                (62, 118),
                (88, 60),
                (118, 60),
            ],
        );
        assert_eq!(g.back_edges, BTreeSet::from([(88, 60), (118, 60)]));
        assert_eq!(g.backbone(), BTreeSet::from([0, 60, 130]));
        assert_eq!(g.doms[&88], BTreeSet::from([0, 60, 62, 88]));
        let lp = &g.loops[&60];
        assert_eq!(lp.body, BTreeSet::from([60, 62, 88, 118]));
        assert_eq!(lp.entries, BTreeSet::from([0]));
        assert_eq!(lp.exits, BTreeSet::from([130]));
        assert_eq!(g.in_loops(62), vec![60]);
    }
}
