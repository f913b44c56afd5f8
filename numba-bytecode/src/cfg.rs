//! The control-flow graph of a function, with Numba's analyses (`numba/core/controlflow.py`).
//!
//! Nodes are block start offsets (Numba offsets). Sets are ordered so that results are
//! deterministic; the textual dump that emulates CPython's set ordering belongs to the dump
//! code, not here.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::algo::dominators::{simple_fast, Dominators};
use petgraph::graphmap::DiGraphMap;
use petgraph::visit::{Dfs, Reversed};
use petgraph::Direction;

/// A natural loop (Numba's `Loop` namedtuple).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub header: u32,
    pub body: BTreeSet<u32>,
    pub entries: BTreeSet<u32>,
    pub exits: BTreeSet<u32>,
}

/// A CFG over block offsets with dominators, post-dominators, back edges and loops.
///
/// The graph itself is a petgraph [`DiGraphMap`] ([`ControlFlowGraph::graph`]); the analysis
/// results are kept as ordered maps and sets so they are deterministic and cheap to query.
#[derive(Debug, Clone, Default)]
pub struct ControlFlowGraph {
    pub entry: u32,
    graph: DiGraphMap<u32, ()>,
    /// Live nodes (reachable from the entry).
    pub nodes: BTreeSet<u32>,
    /// Nodes dropped because the entry cannot reach them (Numba's `dead_nodes()`).
    pub dead_nodes: BTreeSet<u32>,
    pub succs: BTreeMap<u32, BTreeSet<u32>>,
    pub preds: BTreeMap<u32, BTreeSet<u32>>,
    pub back_edges: BTreeSet<(u32, u32)>,
    /// Immediate dominators (the entry maps to itself).
    pub idoms: BTreeMap<u32, u32>,
    pub doms: BTreeMap<u32, BTreeSet<u32>>,
    /// Immediate post-dominators; `None` where it is the virtual exit.
    pub ipdoms: BTreeMap<u32, Option<u32>>,
    pub post_doms: BTreeMap<u32, BTreeSet<u32>>,
    pub loops: BTreeMap<u32, Loop>,
    /// Edges in the order they were added, which the Numba-compatible dump replays.
    edge_order: Vec<(u32, u32)>,
}

/// The virtual exit node used for post-dominators.
const VIRTUAL_EXIT: u32 = u32::MAX;

impl ControlFlowGraph {
    /// Build from nodes and edges, dropping nodes unreachable from `entry`, and run every
    /// analysis. Edge order only matters for [`ControlFlowGraph::numba_dump`], which replays
    /// the insertions as Numba makes them.
    pub fn new(
        entry: u32,
        nodes: impl IntoIterator<Item = u32>,
        edges: impl IntoIterator<Item = (u32, u32)>,
    ) -> Self {
        let mut graph = DiGraphMap::new();
        graph.add_node(entry);
        for n in nodes {
            graph.add_node(n);
        }
        let mut edge_order = Vec::new();
        for (a, b) in edges {
            graph.add_edge(a, b, ());
            edge_order.push((a, b));
        }
        let mut live = BTreeSet::new();
        let mut dfs = Dfs::new(&graph, entry);
        while let Some(n) = dfs.next(&graph) {
            live.insert(n);
        }
        let dead_nodes: BTreeSet<u32> = graph.nodes().filter(|n| !live.contains(n)).collect();
        for &d in &dead_nodes {
            graph.remove_node(d);
        }
        let succs = live
            .iter()
            .map(|&n| {
                (
                    n,
                    graph.neighbors_directed(n, Direction::Outgoing).collect(),
                )
            })
            .collect();
        let preds = live
            .iter()
            .map(|&n| {
                (
                    n,
                    graph.neighbors_directed(n, Direction::Incoming).collect(),
                )
            })
            .collect();
        let mut g = ControlFlowGraph {
            entry,
            graph,
            nodes: live,
            dead_nodes,
            succs,
            preds,
            edge_order,
            ..Default::default()
        };
        g.back_edges = g.find_back_edges();
        let doms = simple_fast(&g.graph, entry);
        g.idoms = g
            .nodes
            .iter()
            .map(|&n| (n, doms.immediate_dominator(n).unwrap_or(n)))
            .collect();
        g.doms = dominator_sets(&g.nodes, &doms);
        g.loops = g.find_loops();
        g.compute_post_doms();
        g
    }

    /// The underlying petgraph graph (live nodes only).
    pub fn graph(&self) -> &DiGraphMap<u32, ()> {
        &self.graph
    }

    /// The edges in insertion order (dead nodes' edges included).
    pub fn edge_order(&self) -> &[(u32, u32)] {
        &self.edge_order
    }

    /// Nodes without successors.
    pub fn exit_points(&self) -> BTreeSet<u32> {
        self.nodes
            .iter()
            .copied()
            .filter(|n| self.succs.get(n).is_none_or(|s| s.is_empty()))
            .collect()
    }

    /// Nodes in reverse postorder from the entry, ignoring back edges (Numba's
    /// `topo_order`).
    pub fn topo_order(&self) -> Vec<u32> {
        let mut post = Vec::new();
        let mut seen = BTreeSet::from([self.entry]);
        let mut stack = vec![(self.entry, false)];
        while let Some((n, done)) = stack.pop() {
            if done {
                post.push(n);
                continue;
            }
            stack.push((n, true));
            for s in self.successors(n) {
                if !self.back_edges.contains(&(n, s)) && seen.insert(s) {
                    stack.push((s, false));
                }
            }
        }
        post.reverse();
        post
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

    /// Post-dominators with Numba's virtual exit: an edge to it from every exit node and
    /// from every node of an infinite loop (a loop without exits).
    fn compute_post_doms(&mut self) {
        let mut rev = self.graph.clone();
        rev.add_node(VIRTUAL_EXIT);
        for n in self.exit_points() {
            rev.add_edge(n, VIRTUAL_EXIT, ());
        }
        for lp in self.loops.values() {
            if lp.exits.is_empty() {
                for &b in &lp.body {
                    rev.add_edge(b, VIRTUAL_EXIT, ());
                }
            }
        }
        let pdoms = simple_fast(Reversed(&rev), VIRTUAL_EXIT);
        let mut all = self.nodes.clone();
        all.insert(VIRTUAL_EXIT);
        let mut sets = dominator_sets(&all, &pdoms);
        sets.remove(&VIRTUAL_EXIT);
        for set in sets.values_mut() {
            set.remove(&VIRTUAL_EXIT);
        }
        self.ipdoms = self
            .nodes
            .iter()
            .filter_map(|&n| {
                let ip = pdoms.immediate_dominator(n)?;
                Some((n, (ip != VIRTUAL_EXIT).then_some(ip)))
            })
            .collect();
        self.post_doms = sets;
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

/// `doms(n) = {n} ∪ doms(idom(n))` for every node the dominator tree reaches.
fn dominator_sets(nodes: &BTreeSet<u32>, doms: &Dominators<u32>) -> BTreeMap<u32, BTreeSet<u32>> {
    nodes
        .iter()
        .filter_map(|&n| {
            let chain = doms.dominators(n)?;
            Some((n, chain.collect()))
        })
        .collect()
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
