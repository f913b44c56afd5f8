//! The `parfor` statement (Numba's `Parfor` node) and its encoding as a numba-ir
//! extension node.
//!
//! numba-ir knows nothing of parfors: a parfor travels through the pipeline as an
//! [`ExtensionNode`] of kind [`PARFOR`] whose nested blocks are the loop body, whose
//! operands are the parameters and loop bounds (what generic passes see it use), and whose
//! attributes carry the rest. [`Parfor::to_node`] and [`Parfor::from_node`] convert, and
//! the node dumps itself as Numba's `Parfor.dump` prints.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use numba_ir::{Block, ExprId, ExtensionNode, FunctionIR, Label, Loc, VarId};

/// The extension kind of a parfor statement.
pub const PARFOR: &str = "parfor";

/// A loop bound: a constant or a variable of the enclosing function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Const(i64),
    Var(VarId),
}

/// One loop of a parfor's nest (Numba's `LoopNest`): `index` runs over
/// `range(start, stop, step)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopNest {
    pub index: VarId,
    pub start: Bound,
    pub stop: Bound,
    pub step: Bound,
}

/// How partial results of a reduction combine (Numba's `reduction_add` /
/// `reduction_mul` kernels, or the recorded reduce expression replayed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedOp {
    /// `+`, `-` (and in place): each thread starts from 0, partials are added.
    Add,
    /// `*`, `/` (and in place): each thread starts from 1, partials are multiplied.
    Mul,
    /// `min`, `max`: each thread starts from the variable's value before the loop, and
    /// the partials are combined by the same call.
    Replay,
    /// NumPy's `min`/`max` of an array: each thread starts from the variable's value
    /// before the loop (the type's extreme), and partials combine by NumPy's `min`/`max`
    /// (NaN propagates).
    Min,
    Max,
    /// NumPy's `argmin`/`argmax`: the variable is a `(value, position)` pair starting at
    /// position -1 (none yet); a partial replaces the accumulated pair when it has a
    /// position and a better value (NumPy's first NaN wins, ties keep the earlier).
    ArgMin,
    ArgMax,
}

/// A reduction variable of a parfor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reduction {
    /// The loop-carried variable (live before, updated in the body, read after).
    pub var: VarId,
    pub op: RedOp,
    /// The expression that combines the variable with one iteration's value.
    pub expr: ExprId,
    /// Which operand of `expr` is the accumulator (0 or 1).
    pub acc_operand: u8,
}

impl Reduction {
    /// An `+` reduction of `var` whose step is `expr` (`var = var + x`).
    pub fn add(var: VarId, expr: ExprId) -> Reduction {
        Reduction {
            var,
            op: RedOp::Add,
            expr,
            acc_operand: 0,
        }
    }
}

/// Numba's `Parfor`.
#[derive(Debug, Clone, PartialEq)]
pub struct Parfor {
    pub id: usize,
    pub loop_nests: Vec<LoopNest>,
    /// Statements run once before the loop (in the enclosing function).
    pub init_block: Block,
    pub loop_body: BTreeMap<Label, Block>,
    pub index_var: VarId,
    /// Variables of the enclosing function the body reads (and the reduction and race
    /// variables), in a fixed order: the kernel's parameters.
    pub params: Vec<VarId>,
    /// Variables written in the body and read after the loop that are not reductions.
    pub races: Vec<VarId>,
    pub reductions: Vec<Reduction>,
    /// Where the parfor came from, as Numba prints it: `('prange', 'user', '')`.
    pub patterns: Vec<String>,
    /// Estimated work of one iteration (about a nanosecond per unit), for the runtime's
    /// decision to run small regions inline.
    pub cost: i64,
    pub loc: Loc,
}

fn enc_bound(b: Bound) -> String {
    match b {
        Bound::Const(c) => format!("c{c}"),
        Bound::Var(v) => format!("v{}", v.0),
    }
}

fn dec_bound(s: &str) -> Option<Bound> {
    if let Some(c) = s.strip_prefix('c') {
        return c.parse().ok().map(Bound::Const);
    }
    s.strip_prefix('v')?
        .parse()
        .ok()
        .map(|v| Bound::Var(VarId(v)))
}

fn enc_vars(vs: &[VarId]) -> String {
    vs.iter()
        .map(|v| v.0.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn dec_vars(s: &str) -> Option<Vec<VarId>> {
    s.split_whitespace()
        .map(|x| x.parse().ok().map(VarId))
        .collect()
}

/// The label the init block is kept under in the node's nested blocks (labels of the
/// body are bytecode offsets, far below it).
const INIT_LABEL: Label = u32::MAX;

impl Parfor {
    /// The variables it defines for the code after it: its reductions and races.
    pub fn results(&self) -> BTreeSet<VarId> {
        self.reductions
            .iter()
            .map(|r| r.var)
            .chain(self.races.iter().copied())
            .collect()
    }

    /// The extension node carrying this parfor.
    pub fn to_node(&self) -> ExtensionNode {
        let mut operands = self.params.clone();
        for n in &self.loop_nests {
            for b in [n.start, n.stop, n.step] {
                if let Bound::Var(v) = b {
                    if !operands.contains(&v) {
                        operands.push(v);
                    }
                }
            }
        }
        for inst in &self.init_block.body {
            if let numba_ir::Stmt::Assign { target, .. } = inst.stmt {
                operands.retain(|&v| v != target);
            }
        }
        let mut node = ExtensionNode::new(PARFOR, operands);
        let mut attrs = vec![
            ("id".to_string(), self.id.to_string()),
            ("index_var".into(), self.index_var.0.to_string()),
            ("params".into(), enc_vars(&self.params)),
            ("races".into(), enc_vars(&self.races)),
            ("cost".into(), self.cost.to_string()),
            ("line".into(), self.loc.line.to_string()),
        ];
        for n in &self.loop_nests {
            attrs.push((
                "loop".into(),
                format!(
                    "{} {} {} {}",
                    n.index.0,
                    enc_bound(n.start),
                    enc_bound(n.stop),
                    enc_bound(n.step)
                ),
            ));
        }
        for r in &self.reductions {
            let op = match r.op {
                RedOp::Add => "add",
                RedOp::Mul => "mul",
                RedOp::Replay => "replay",
                RedOp::Min => "min",
                RedOp::Max => "max",
                RedOp::ArgMin => "argmin",
                RedOp::ArgMax => "argmax",
            };
            attrs.push((
                "reduction".into(),
                format!("{} {op} {} {}", r.var.0, r.expr.0, r.acc_operand),
            ));
        }
        for p in &self.patterns {
            attrs.push(("pattern".into(), p.clone()));
        }
        node.attrs = attrs;
        node.blocks = self.loop_body.clone();
        if !self.init_block.body.is_empty() {
            node.blocks.insert(INIT_LABEL, self.init_block.clone());
        }
        node.printer = Some(print_short);
        node.dumper = Some(dump);
        node
    }

    /// The parfor an extension node of kind [`PARFOR`] carries.
    pub fn from_node(node: &ExtensionNode) -> Option<Parfor> {
        if node.kind != PARFOR {
            return None;
        }
        let get = |k: &str| {
            node.attrs
                .iter()
                .find(|(a, _)| a == k)
                .map(|(_, v)| v.as_str())
        };
        let all = |k: &'static str| {
            node.attrs
                .iter()
                .filter(move |(a, _)| a == k)
                .map(|(_, v)| v.as_str())
        };
        let mut loop_nests = Vec::new();
        for l in all("loop") {
            let p: Vec<&str> = l.split_whitespace().collect();
            let [i, a, b, c] = p.as_slice() else {
                return None;
            };
            loop_nests.push(LoopNest {
                index: VarId(i.parse().ok()?),
                start: dec_bound(a)?,
                stop: dec_bound(b)?,
                step: dec_bound(c)?,
            });
        }
        let mut reductions = Vec::new();
        for r in all("reduction") {
            let p: Vec<&str> = r.split_whitespace().collect();
            let [v, op, e, acc] = p.as_slice() else {
                return None;
            };
            reductions.push(Reduction {
                var: VarId(v.parse().ok()?),
                op: match *op {
                    "add" => RedOp::Add,
                    "mul" => RedOp::Mul,
                    "replay" => RedOp::Replay,
                    "min" => RedOp::Min,
                    "max" => RedOp::Max,
                    "argmin" => RedOp::ArgMin,
                    "argmax" => RedOp::ArgMax,
                    _ => return None,
                },
                expr: ExprId(e.parse().ok()?),
                acc_operand: acc.parse().ok()?,
            });
        }
        let mut loop_body = node.blocks.clone();
        let init_block = loop_body.remove(&INIT_LABEL).unwrap_or_default();
        Some(Parfor {
            id: get("id")?.parse().ok()?,
            loop_nests,
            init_block,
            loop_body,
            index_var: VarId(get("index_var")?.parse().ok()?),
            params: dec_vars(get("params")?)?,
            races: dec_vars(get("races")?)?,
            reductions,
            patterns: all("pattern").map(str::to_string).collect(),
            cost: get("cost")?.parse().ok()?,
            loc: Loc {
                line: get("line")?.parse().ok()?,
            },
        })
    }
}

/// A Python set of names as Numba prints one (sorted here: Python's order depends on
/// string hashing).
fn py_set(ir: &FunctionIR, vars: &[VarId]) -> String {
    if vars.is_empty() {
        return "set()".into();
    }
    let mut names: Vec<String> = vars
        .iter()
        .map(|v| numba_bytecode::Constant::Str(ir.var_name(*v).to_string()).py_repr())
        .collect();
    names.sort();
    format!("{{{}}}", names.join(", "))
}

fn bound_text(ir: &FunctionIR, b: Bound) -> String {
    match b {
        Bound::Const(c) => c.to_string(),
        Bound::Var(v) => ir.var_name(v).to_string(),
    }
}

/// `LoopNest(index_variable = parfor_index.3, range = (0, $34binary_subscr.6, 1))`.
pub fn loop_nest_text(ir: &FunctionIR, n: &LoopNest) -> String {
    format!(
        "LoopNest(index_variable = {}, range = ({}, {}, {}))",
        ir.var_name(n.index),
        bound_text(ir, n.start),
        bound_text(ir, n.stop),
        bound_text(ir, n.step)
    )
}

fn print_short(node: &ExtensionNode, ir: &FunctionIR) -> String {
    match Parfor::from_node(node) {
        Some(p) => format!(
            "id={}[{}]",
            p.id,
            p.loop_nests
                .iter()
                .map(|n| loop_nest_text(ir, n))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "parfor(<malformed>)".into(),
    }
}

/// Numba's `Parfor.dump`.
fn dump(node: &ExtensionNode, ir: &FunctionIR) -> String {
    let Some(p) = Parfor::from_node(node) else {
        return "parfor(<malformed>)\n".into();
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        numba_ir::center(&format!("begin parfor {}", p.id), 20, '-')
    );
    let _ = writeln!(out, "index_var =  {}", ir.var_name(p.index_var));
    let _ = writeln!(out, "params =  {}", py_set(ir, &p.params));
    let _ = writeln!(out, "races =  {}", py_set(ir, &p.races));
    for n in &p.loop_nests {
        let _ = writeln!(out, "{}", loop_nest_text(ir, n));
    }
    let _ = writeln!(out, "init block:");
    out.push_str(&ir.block_dump(&p.init_block));
    for (label, block) in &p.loop_body {
        let _ = writeln!(out, "label {label}:");
        out.push_str(&ir.block_dump(block));
    }
    let _ = writeln!(
        out,
        "{}",
        numba_ir::center(&format!("end parfor {}", p.id), 20, '-')
    );
    out
}
