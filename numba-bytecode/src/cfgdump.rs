//! `NUMBA_DUMP_CFG`: the text Numba's `CFGraph.dump()` prints.
//!
//! The analyses themselves come from [`ControlFlowGraph`]; this module only replays how
//! Numba builds each Python set (which insertions, in which order) so that sets printed on
//! one line appear in CPython's hash-table order (numba-facts §1.5). One thing cannot be
//! replayed: Numba's virtual exit node is a fresh `object()` whose hash is its address, so
//! where it lands in a post-dominator set varies between runs. We give it a fixed hash; the
//! printed post-dominator sets can then differ from a given Numba run in element order only.

use std::collections::BTreeMap;

use crate::cfg::ControlFlowGraph;
use crate::pprint::{pformat, PyObj};
use crate::pyset::{hash_int, hash_tuple, IntSet, PySet};

/// Stand-in key for the virtual exit node (never a block offset).
const EXIT_KEY: i64 = -1;
/// Stand-in hash for the virtual exit: a pointer hash as `_Py_HashPointer` makes one.
const EXIT_HASH: u64 = 0x7f6a_53c4_1e90_u64.rotate_right(4);

fn set_obj(s: &IntSet) -> PyObj {
    PyObj::Set(s.iter().copied().filter(|&k| k != EXIT_KEY).collect())
}

fn set_repr(s: &IntSet) -> String {
    set_obj(s).repr()
}

/// Build `doms(n) = set([n]); doms(n).update(doms(idom(n)))` for every node, as
/// `_find_dominators_from_immediate_doms` does.
fn chain_sets(idom: &BTreeMap<i64, i64>, root: i64, root_hash: u64) -> BTreeMap<i64, IntSet> {
    let mut result: BTreeMap<i64, IntSet> = BTreeMap::new();
    result.insert(root, PySet::from_keys([(root, root_hash)]));
    for &start in idom.keys() {
        let mut chain = vec![start];
        while let Some(&n) = chain.last() {
            if result.contains_key(&n) {
                chain.pop();
                break;
            }
            match idom.get(&n) {
                Some(&up) if up != n => chain.push(up),
                _ => break,
            }
        }
        for &n in chain.iter().rev() {
            if result.contains_key(&n) {
                continue;
            }
            let mut set = IntSet::from_ints([n]);
            if let Some(up) = idom.get(&n).and_then(|u| result.get(u)) {
                set.update_from_set(up);
            }
            result.insert(n, set);
        }
    }
    result
}

impl ControlFlowGraph {
    /// The `NUMBA_DUMP_CFG` text (Numba 0.68, CPython 3.11), ending in a newline.
    pub fn numba_dump(&self) -> String {
        let (succs, preds) = self.numba_adjacency();
        self.numba_dump_from(&succs, &preds)
    }

    /// The adjacency sets, filled in edge order, then dead nodes' edges removed.
    #[allow(clippy::type_complexity)]
    fn numba_adjacency(&self) -> (BTreeMap<i64, IntSet>, BTreeMap<i64, IntSet>) {
        let mut succs: BTreeMap<i64, IntSet> = BTreeMap::new();
        let mut preds: BTreeMap<i64, IntSet> = BTreeMap::new();
        for &(a, b) in self.edge_order() {
            let (a, b) = (i64::from(a), i64::from(b));
            preds.entry(b).or_default().add_int(a);
            succs.entry(a).or_default().add_int(b);
        }
        for &d in &self.dead_nodes {
            let d = i64::from(d);
            if let Some(ss) = succs.remove(&d) {
                for s in ss.iter() {
                    if let Some(p) = preds.get_mut(s) {
                        p.discard_int(d);
                    }
                }
            }
            if let Some(ps) = preds.remove(&d) {
                for p in ps.iter() {
                    if let Some(s) = succs.get_mut(p) {
                        s.discard_int(d);
                    }
                }
            }
        }
        for &n in &self.nodes {
            succs.entry(i64::from(n)).or_default();
            preds.entry(i64::from(n)).or_default();
        }
        (succs, preds)
    }

    fn numba_dump_from(
        &self,
        succs: &BTreeMap<i64, IntSet>,
        preds: &BTreeMap<i64, IntSet>,
    ) -> String {
        let back_edges = self.numba_back_edges(succs);
        let loops = numba_loops(&back_edges, succs, preds);

        let mut out = String::new();
        out.push_str("CFG adjacency lists:\n");
        let adj = PyObj::Dict(
            succs
                .iter()
                .map(|(&n, s)| {
                    let mut v: Vec<i64> = s.iter().copied().collect();
                    v.sort_unstable();
                    (n, PyObj::List(v.into_iter().map(PyObj::Int).collect()))
                })
                .collect(),
        );
        push_pp(&mut out, &adj);

        out.push_str("CFG dominators:\n");
        let idom: BTreeMap<i64, i64> = self
            .idoms
            .iter()
            .map(|(&n, &d)| (i64::from(n), i64::from(d)))
            .collect();
        let entry = i64::from(self.entry);
        let doms = chain_sets(&idom, entry, hash_int(entry));
        push_pp(
            &mut out,
            &PyObj::Dict(doms.iter().map(|(&n, s)| (n, set_obj(s))).collect()),
        );

        out.push_str("CFG post-dominators:\n");
        let ipdom: BTreeMap<i64, i64> = self
            .ipdoms
            .iter()
            .map(|(&n, d)| (i64::from(n), d.map_or(EXIT_KEY, i64::from)))
            .collect();
        let mut pdoms = chain_sets(&ipdom, EXIT_KEY, EXIT_HASH);
        pdoms.remove(&EXIT_KEY);
        for s in pdoms.values_mut() {
            s.discard(&EXIT_KEY, EXIT_HASH);
        }
        push_pp(
            &mut out,
            &PyObj::Dict(pdoms.iter().map(|(&n, s)| (n, set_obj(s))).collect()),
        );

        let mut sorted_back: Vec<(i64, i64)> = back_edges.iter().copied().collect();
        sorted_back.sort_unstable();
        let back_repr: Vec<String> = sorted_back
            .iter()
            .map(|(a, b)| format!("({a}, {b})"))
            .collect();
        out.push_str(&format!("CFG back edges: [{}]\n", back_repr.join(", ")));

        out.push_str("CFG loops:\n");
        let loop_objs = PyObj::Dict(
            loops
                .iter()
                .map(|lp| {
                    (
                        lp.header,
                        PyObj::Opaque(format!(
                            "Loop(entries={}, exits={}, header={}, body={})",
                            set_repr(&lp.entries),
                            set_repr(&lp.exits),
                            lp.header,
                            set_repr(&lp.body)
                        )),
                    )
                })
                .collect(),
        );
        push_pp(&mut out, &loop_objs);

        out.push_str("CFG node-to-loops:\n");
        let mut in_loops: BTreeMap<i64, Vec<PyObj>> = self
            .nodes
            .iter()
            .map(|&n| (i64::from(n), Vec::new()))
            .collect();
        let mut by_size: Vec<&NumbaLoop> = loops.iter().collect();
        by_size.sort_by_key(|lp| lp.body.len());
        for lp in by_size {
            for n in lp.body.iter() {
                if let Some(v) = in_loops.get_mut(n) {
                    v.push(PyObj::Int(lp.header));
                }
            }
        }
        push_pp(
            &mut out,
            &PyObj::Dict(
                in_loops
                    .into_iter()
                    .map(|(n, v)| (n, PyObj::List(v)))
                    .collect(),
            ),
        );

        out.push_str("CFG backbone:\n");
        let backbone = pdoms.get(&entry).map(set_obj).unwrap_or(PyObj::Set(vec![]));
        push_pp(&mut out, &backbone);
        out
    }

    /// Loop headers in the order Numba's `cfg.loops()` dict yields them (it follows the
    /// iteration order of the back-edge set), for passes whose output depends on it.
    pub fn numba_loop_order(&self) -> Vec<u32> {
        let (succs, preds) = self.numba_adjacency();
        let back_edges = self.numba_back_edges(&succs);
        numba_loops(&back_edges, &succs, &preds)
            .iter()
            .map(|lp| lp.header as u32)
            .collect()
    }

    /// `_find_back_edges`: DFS popping successors from the end of each set's iteration
    /// order, collecting edges into a set of tuples.
    fn numba_back_edges(&self, succs: &BTreeMap<i64, IntSet>) -> PySet<(i64, i64)> {
        let mut back = PySet::new();
        let entry = i64::from(self.entry);
        let list = |n: i64| -> Vec<i64> {
            succs
                .get(&n)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default()
        };
        let mut stack = vec![entry];
        let mut todo: BTreeMap<i64, Vec<i64>> = BTreeMap::from([(entry, list(entry))]);
        let mut on_stack = std::collections::BTreeSet::from([entry]);
        let mut checked = std::collections::BTreeSet::new();
        while let Some(&tos) = stack.last() {
            let next = todo.get_mut(&tos).and_then(Vec::pop);
            match next {
                Some(cur) => {
                    if on_stack.contains(&cur) {
                        let h = hash_tuple(&[hash_int(tos), hash_int(cur)]);
                        back.add((tos, cur), h);
                    } else if !checked.contains(&cur) {
                        stack.push(cur);
                        on_stack.insert(cur);
                        todo.insert(cur, list(cur));
                    }
                }
                None => {
                    stack.pop();
                    on_stack.remove(&tos);
                    checked.insert(tos);
                }
            }
        }
        back
    }
}

struct NumbaLoop {
    header: i64,
    body: IntSet,
    entries: IntSet,
    exits: IntSet,
}

/// `_find_loops` with its set operations in Numba's order.
fn numba_loops(
    back_edges: &PySet<(i64, i64)>,
    succs: &BTreeMap<i64, IntSet>,
    preds: &BTreeMap<i64, IntSet>,
) -> Vec<NumbaLoop> {
    let empty = IntSet::new();
    let mut bodies: Vec<(i64, IntSet)> = Vec::new();
    for &(src, header) in back_edges.iter() {
        let mut body = IntSet::from_ints([header]);
        let mut queue = vec![src];
        while let Some(n) = queue.pop() {
            if !body.contains_int(n) {
                body.add_int(n);
                queue.extend(preds.get(&n).unwrap_or(&empty).iter().copied());
            }
        }
        match bodies.iter_mut().find(|(h, _)| *h == header) {
            Some((_, existing)) => existing.update_from_set(&body),
            None => bodies.push((header, body)),
        }
    }
    bodies
        .into_iter()
        .map(|(header, body)| {
            let mut entries = IntSet::new();
            let mut exits = IntSet::new();
            for n in body.iter() {
                entries.update_from_set(&preds.get(n).unwrap_or(&empty).difference(&body));
                exits.update_from_set(&succs.get(n).unwrap_or(&empty).difference(&body));
            }
            NumbaLoop {
                header,
                body,
                entries,
                exits,
            }
        })
        .collect()
}

fn push_pp(out: &mut String, obj: &PyObj) {
    out.push_str(&pformat(obj));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doloops_dump_matches_numba() {
        // The facts' verified NUMBA_DUMP_CFG of the seed's doloops, in Numba's edge order.
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
        let text = g.numba_dump();
        assert!(text.starts_with(
            "CFG adjacency lists:\n{0: [60], 60: [62, 130], 62: [88, 118], 88: [60], 118: [60], \
             130: []}\nCFG dominators:\n"
        ));
        assert!(text.contains(" 88: {88, 0, 60, 62},\n"));
        assert!(text.contains("CFG back edges: [(88, 60), (118, 60)]\n"));
        assert!(text.contains(
            "{0: [], 60: [60], 62: [60], 88: [60], 118: [60], 130: []}\nCFG backbone:\n"
        ));
    }
}
