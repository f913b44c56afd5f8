//! Array expressions (seed 002's case study, Numba's `RewriteArrayExprs`): trees of
//! element-wise array operations (`+ - * / // % **`, comparisons, `& | ^`, unary `- + ~`
//! and NumPy ufunc calls, over arrays and scalars with broadcasting) become one
//! `arrayexpr` extension node, which numba-lower lowers as a single loop that allocates
//! only the result.
//!
//! The node's nested block holds the fused operations as ordinary typed statements (the
//! original expressions with their call signatures), ending in `return` of the result;
//! they read the node's `operands` (the leaf arrays and scalars). Unlike Numba, which fuses
//! only `$`-temporaries within one block, an intermediate is fused wherever it has no other
//! use and nothing between its definition and its use can write memory or redefine a
//! leaf, including across blocks and user-named variables. `out[idx] = expr` with a basic
//! (slice) index becomes an `arrayexpr_setitem` statement that writes into the selection
//! with no allocation.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use numba_ir::{
    BinOp, Block, Expr, ExprId, ExtensionNode, FunctionIR, Inst, Label, Loc, Stmt, UnaryOp, VarId,
};
use numba_typeinfer::types::{Type, TypeId};
use numba_typeinfer::{ImplKey, TypingResult};

use crate::{Rewrite, RewriteCx};

/// The kind of the fused-expression node.
pub const ARRAYEXPR: &str = "arrayexpr";
/// The kind of the in-place store of a fused expression (`out[idx] = expr`).
pub const ARRAYEXPR_SETITEM: &str = "arrayexpr_setitem";

/// Binary operators fused element-wise (NumPy's `supported_array_operators`).
const BINOPS: &[BinOp] = &[
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::TrueDiv,
    BinOp::FloorDiv,
    BinOp::Mod,
    BinOp::Pow,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
];

fn element_type(t: TypeId) -> bool {
    let t = t.unliteral();
    match t.get() {
        Type::Array { dtype, .. } => dtype.is_scalar(),
        _ => t.is_scalar(),
    }
}

/// The operands of `id` (in `ir`, typed by `typing`) if it is an element-wise array
/// operation numba-rs fuses: its result is an array and every operand an array of numbers
/// or a number. Calls give their arguments (not the callee).
pub fn elementwise_operands(
    ir: &FunctionIR,
    typing: &TypingResult,
    id: ExprId,
) -> Option<Vec<VarId>> {
    let e = ir.expr(id);
    if let Expr::Extension(node) = e {
        return (node.kind == ARRAYEXPR).then(|| node.operands.clone());
    }
    let sig = typing.calltypes.get(&id)?;
    if !sig.ret.is_array() || !element_type(sig.ret) {
        return None;
    }
    let ops = match e {
        Expr::BinOp { op, lhs, rhs } if BINOPS.contains(op) && sig.key == ImplKey::BinOp(*op) => {
            vec![*lhs, *rhs]
        }
        Expr::Unary { op, value }
            if matches!(op, UnaryOp::Neg | UnaryOp::Pos | UnaryOp::Invert)
                && sig.key == ImplKey::Unary(*op) =>
        {
            vec![*value]
        }
        Expr::Call {
            args,
            kws,
            vararg: None,
            varkwarg: None,
            ..
        } if kws.is_empty() && !typing.call_args.contains_key(&id) => match &sig.key {
            ImplKey::Function(k) if numba_typeinfer::numpy::ufunc_nin(k) == Some(args.len()) => {
                args.clone()
            }
            _ => return None,
        },
        _ => return None,
    };
    ops.iter()
        .all(|&v| element_type(typing.type_of(v)))
        .then_some(ops)
}

/// Where a statement sits.
type Site = (Label, usize);

/// Facts about the whole function the fusion decisions need.
struct Facts {
    /// Single definitions by assignment: variable → (site, expression).
    defs: HashMap<VarId, (Site, ExprId)>,
    /// Uses outside nested blocks: variable → sites.
    uses: HashMap<VarId, Vec<Site>>,
    succs: BTreeMap<Label, Vec<Label>>,
    entry: Label,
}

impl Facts {
    fn new(ir: &FunctionIR) -> Facts {
        let mut defs = HashMap::new();
        let mut multi = BTreeSet::new();
        let mut uses: HashMap<VarId, Vec<Site>> = HashMap::new();
        let mut succs = BTreeMap::new();
        for (&l, b) in &ir.blocks {
            for (i, inst) in b.body.iter().enumerate() {
                if let Stmt::Assign { target, value } = inst.stmt {
                    if defs.insert(target, ((l, i), value)).is_some() {
                        multi.insert(target);
                    }
                    for u in ir.expr_uses(ir.expr(value)) {
                        uses.entry(u).or_default().push((l, i));
                    }
                } else {
                    for u in ir.stmt_vars(&inst.stmt) {
                        uses.entry(u).or_default().push((l, i));
                    }
                }
            }
            succs.insert(l, b.terminator().map(Stmt::successors).unwrap_or_default());
        }
        for v in &multi {
            defs.remove(v);
        }
        let entry = ir.blocks.keys().next().copied().unwrap_or(0);
        Facts {
            defs,
            uses,
            succs,
            entry,
        }
    }

    /// Blocks reachable from `from`'s successors without entering `stop`.
    fn reach(&self, from: Label, stop: Label) -> BTreeSet<Label> {
        let mut seen = BTreeSet::new();
        let mut work: Vec<Label> = self.succs.get(&from).cloned().unwrap_or_default();
        while let Some(l) = work.pop() {
            if l == stop || !seen.insert(l) {
                continue;
            }
            work.extend(self.succs.get(&l).into_iter().flatten().copied());
        }
        seen
    }

    /// The blocks strictly between `def` and `usel` on some path, when every path from
    /// the entry to `usel` passes `def` and neither block is re-entered without the other
    /// (no loop runs the use more often than the definition); `None` otherwise.
    fn between(&self, def: Label, usel: Label) -> Option<BTreeSet<Label>> {
        // `def` dominates `usel`.
        if def != self.entry {
            let mut from_entry = self.reach_from_entry_avoiding(def);
            from_entry.insert(self.entry);
            if from_entry.contains(&usel) {
                return None;
            }
        }
        let fwd = self.reach(def, usel);
        if fwd.contains(&def) {
            return None;
        }
        // `usel` is not in a loop that avoids `def`.
        if self.reach(usel, def).contains(&usel) {
            return None;
        }
        // Keep the blocks that lead on to `usel`.
        let mid: BTreeSet<Label> = fwd
            .into_iter()
            .filter(|&l| self.reach(l, def).contains(&usel))
            .collect();
        Some(mid)
    }

    fn reach_from_entry_avoiding(&self, avoid: Label) -> BTreeSet<Label> {
        let mut seen = BTreeSet::new();
        let mut work = vec![self.entry];
        while let Some(l) = work.pop() {
            if l == avoid || !seen.insert(l) {
                continue;
            }
            work.extend(self.succs.get(&l).into_iter().flatten().copied());
        }
        seen
    }
}

/// NumPy functions that write into an argument.
const WRITING_NUMPY: &[&str] = &[
    "numpy.copyto",
    "numpy.fill_diagonal",
    "numpy.put",
    "numpy.place",
    "numpy.putmask",
    "numpy.random.shuffle",
];

/// Whether the call `id` cannot write an array: builtins, `math`, and NumPy functions
/// that make new values. Jitted functions, methods and anything untyped may.
fn pure_call(typing: &TypingResult, id: ExprId) -> bool {
    match typing.calltypes.get(&id).map(|s| &s.key) {
        Some(ImplKey::Function(k)) => {
            let method = k
                .split('.')
                .next()
                .is_some_and(|head| !matches!(head, "numpy" | "math" | "cmath") && k.contains('.'));
            !method && !WRITING_NUMPY.contains(&k.as_str())
        }
        Some(ImplKey::Exception(_)) => true,
        _ => false,
    }
}

/// Whether `stmt` can neither write memory nor has effects an earlier-evaluated array
/// expression could observe.
fn quiet(ir: &FunctionIR, typing: &TypingResult, stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Assign { value, .. } => match ir.expr(*value) {
            Expr::Call { .. } => pure_call(typing, *value),
            Expr::InplaceBinOp { lhs, .. } => !typing.type_of(*lhs).is_array(),
            Expr::Yield { .. } => false,
            Expr::Extension(node) => node.kind == ARRAYEXPR,
            _ => true,
        },
        Stmt::Del { .. } | Stmt::Jump { .. } | Stmt::Branch { .. } | Stmt::Print { .. } => true,
        _ => false,
    }
}

/// The fusion planner over one function (rebuilt for each block visit).
struct Planner<'a> {
    ir: &'a FunctionIR,
    typing: &'a TypingResult,
    facts: Facts,
}

impl<'a> Planner<'a> {
    fn operands(&self, id: ExprId) -> Option<Vec<VarId>> {
        elementwise_operands(self.ir, self.typing, id)
    }

    fn stmt(&self, (l, i): Site) -> &'a Stmt {
        &self.ir.blocks[&l].body[i].stmt
    }

    /// Leaves of the tree rooted at `v`'s definition (for the redefinition check).
    fn leaves(&self, v: VarId, out: &mut BTreeSet<VarId>) {
        let Some(&(_, id)) = self.facts.defs.get(&v) else {
            out.insert(v);
            return;
        };
        match self.operands(id) {
            Some(ops) => {
                for o in ops {
                    if self.fusible_shallow(o) {
                        self.leaves(o, out);
                    } else {
                        out.insert(o);
                    }
                }
            }
            None => {
                out.insert(v);
            }
        }
    }

    /// Whether `v` (an element-wise result) can be computed at its single use instead.
    fn fusible(&self, v: VarId) -> bool {
        let Some(&(def, id)) = self.facts.defs.get(&v) else {
            return false;
        };
        if self.operands(id).is_none() {
            return false;
        }
        let Some([usesite]) = self.facts.uses.get(&v).map(Vec::as_slice) else {
            return false;
        };
        let usesite = *usesite;
        // The use must itself be fused: an element-wise operation reading `v` as an
        // operand, or an in-place store of `v`.
        let user_ok = match self.stmt(usesite) {
            Stmt::Assign { value, .. } => self.operands(*value).is_some_and(|ops| ops.contains(&v)),
            Stmt::SetItem { value, .. } => *value == v && self.store_ok(usesite),
            _ => false,
        };
        user_ok && self.path_quiet(v, def, usesite)
    }

    /// Nothing between `def` and `usesite` writes memory or redefines a leaf of `v`.
    fn path_quiet(&self, v: VarId, def: Site, usesite: Site) -> bool {
        let mut leaves = BTreeSet::new();
        if let Some(ops) = self.operands(self.facts.defs[&v].1) {
            for o in ops {
                if self.fusible_shallow(o) {
                    self.leaves(o, &mut leaves);
                } else {
                    leaves.insert(o);
                }
            }
        }
        let ok_stmt = |s: &Stmt| {
            let redefines = match s {
                Stmt::Assign { target, .. } => leaves.contains(target),
                _ => false,
            };
            !redefines && quiet(self.ir, self.typing, s)
        };
        let body = |l: Label| &self.ir.blocks[&l].body;
        if def.0 == usesite.0 {
            return def.1 < usesite.1
                && body(def.0)[def.1 + 1..usesite.1]
                    .iter()
                    .all(|i| ok_stmt(&i.stmt));
        }
        let Some(mid) = self.facts.between(def.0, usesite.0) else {
            return false;
        };
        body(def.0)[def.1 + 1..].iter().all(|i| ok_stmt(&i.stmt))
            && body(usesite.0)[..usesite.1]
                .iter()
                .all(|i| ok_stmt(&i.stmt))
            && mid
                .iter()
                .all(|&l| body(l).iter().all(|i| ok_stmt(&i.stmt)))
    }

    /// `fusible` without the path check (for collecting leaves; avoids recursion through
    /// `path_quiet`).
    fn fusible_shallow(&self, v: VarId) -> bool {
        let Some(&(_, id)) = self.facts.defs.get(&v) else {
            return false;
        };
        self.operands(id).is_some() && self.facts.uses.get(&v).is_some_and(|u| u.len() == 1)
    }

    /// Whether the `SetItem` at `site` stores into a basic-indexed view that an in-place
    /// fused loop can write.
    fn store_ok(&self, site: Site) -> bool {
        let Stmt::SetItem {
            target,
            index,
            value,
        } = self.stmt(site)
        else {
            return false;
        };
        let (t, it, vt) = (
            self.typing.type_of(*target),
            self.typing.type_of(*index).unliteral(),
            self.typing.type_of(*value),
        );
        if !t.is_array() || !element_type(t) || !vt.is_array() {
            return false;
        }
        let basic = match it.get() {
            Type::Slice(_) => true,
            _ => numba_typeinfer::conv::tuple_items(it)
                .is_some_and(|items| items.iter().all(|i| matches!(i.get(), Type::Slice(_)))),
        };
        let Some(view) = numba_typeinfer::numpy::getitem(t, it) else {
            return false;
        };
        basic && view.is_array() && ndim(vt) <= ndim(view)
    }
}

fn ndim(t: TypeId) -> u32 {
    match t.get() {
        Type::Array { ndim, .. } => ndim,
        _ => 0,
    }
}

/// The array-expression rewrite (after inference).
#[derive(Default)]
pub struct RewriteArrayExprs {
    label: Label,
    /// Statement indices of fusion roots in the block: element-wise assignments not fused
    /// into a user, and in-place stores.
    roots: Vec<usize>,
}

impl Rewrite for RewriteArrayExprs {
    fn name(&self) -> &str {
        "RewriteArrayExprs"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, typing: Option<&TypingResult>) -> bool {
        self.label = label;
        self.roots.clear();
        let Some(typing) = typing else {
            return false;
        };
        let block = &ir.blocks[&label];
        // Quick rejection: no array-typed operation in the block.
        if !block.body.iter().any(|i| match i.stmt {
            Stmt::Assign { target, .. } | Stmt::SetItem { value: target, .. } => {
                typing.type_of(target).is_array()
            }
            _ => false,
        }) {
            return false;
        }
        let p = Planner {
            ir,
            typing,
            facts: Facts::new(ir),
        };
        for (i, inst) in block.body.iter().enumerate() {
            match &inst.stmt {
                Stmt::Assign { target, value } => {
                    let Some(ops) = p.operands(*value) else {
                        continue;
                    };
                    if p.fusible(*target) {
                        continue;
                    }
                    // A root: new work if it is not a node yet, or if it can absorb one of
                    // its operands.
                    let is_node = matches!(ir.expr(*value), Expr::Extension(_));
                    if !is_node || ops.iter().any(|&o| p.fusible(o)) {
                        self.roots.push(i);
                    }
                }
                Stmt::SetItem { value, .. } if p.fusible(*value) => self.roots.push(i),
                _ => {}
            }
        }
        !self.roots.is_empty()
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        let label = self.label;
        let roots = std::mem::take(&mut self.roots);
        let Some(typing) = cx.typing.as_deref() else {
            return cx.ir.blocks[&label].clone();
        };
        // Plan on the IR as it is, then edit.
        let plans: Vec<(usize, Kernel)> = {
            let p = Planner {
                ir: cx.ir,
                typing,
                facts: Facts::new(cx.ir),
            };
            roots
                .iter()
                .map(|&i| {
                    let mut k = Kernel::default();
                    match &cx.ir.blocks[&label].body[i].stmt {
                        Stmt::Assign { value, .. } => k.root_expr(&p, *value),
                        Stmt::SetItem { value, .. } => k.absorb(&p, *value),
                        _ => {}
                    }
                    (i, k)
                })
                .collect()
        };
        // Statements moved into kernels leave their blocks (possibly other blocks).
        let mut removed: BTreeMap<Label, BTreeSet<usize>> = BTreeMap::new();
        for (_, k) in &plans {
            for &site in &k.moved {
                removed.entry(site.0).or_default().insert(site.1);
            }
        }
        let mut block = cx.ir.blocks[&label].clone();
        for (i, k) in plans {
            let loc = block.body[i].loc;
            match block.body[i].stmt.clone() {
                Stmt::Assign { target, value } => {
                    let ty = cx.type_of(target);
                    let ret = cx.new_var("$arrayexpr", loc, ty);
                    let mut stmts = k.stmts;
                    // The root's own operation, into the kernel's result.
                    let root = match cx.ir.expr(value) {
                        Expr::Extension(node) => {
                            // An existing node: its statements, then its result.
                            let inner = node.blocks.values().next().cloned().unwrap_or_default();
                            let mut out = None;
                            for inst in inner.body {
                                match inst.stmt {
                                    Stmt::Return { value } => out = Some(value),
                                    _ => stmts.push(inst),
                                }
                            }
                            let e = cx.new_expr(Expr::Var(out.unwrap_or(ret)), None);
                            Inst {
                                stmt: Stmt::Assign {
                                    target: ret,
                                    value: e,
                                },
                                loc,
                            }
                        }
                        _ => Inst {
                            stmt: Stmt::Assign { target: ret, value },
                            loc,
                        },
                    };
                    stmts.push(root);
                    let node = make_node(cx, ARRAYEXPR, stmts, ret, loc, Vec::new(), ty);
                    let e = cx.new_expr(Expr::Extension(Box::new(node)), None);
                    block.body[i].stmt = Stmt::Assign { target, value: e };
                }
                Stmt::SetItem {
                    target,
                    index,
                    value,
                } => {
                    let ty = cx.type_of(value);
                    let node = make_node(
                        cx,
                        ARRAYEXPR_SETITEM,
                        k.stmts,
                        value,
                        loc,
                        vec![target, index],
                        ty,
                    );
                    block.body[i].stmt = Stmt::Extension(Box::new(node));
                }
                _ => {}
            }
        }
        for (l, idx) in removed {
            if l == label {
                let mut n = 0;
                block.body.retain(|_| {
                    n += 1;
                    !idx.contains(&(n - 1))
                });
            } else if let Some(b) = cx.ir.blocks.get_mut(&l) {
                let mut n = 0;
                b.body.retain(|_| {
                    n += 1;
                    !idx.contains(&(n - 1))
                });
            }
        }
        block
    }
}

/// The statements of one fused tree, in evaluation order, and where they came from.
#[derive(Default)]
struct Kernel {
    stmts: Vec<Inst>,
    moved: Vec<Site>,
}

impl Kernel {
    /// The fusible operands of the root expression `id`.
    fn root_expr(&mut self, p: &Planner<'_>, id: ExprId) {
        for o in p.operands(id).unwrap_or_default() {
            if p.fusible(o) {
                self.absorb(p, o);
            }
        }
    }

    /// Move the computation of `v` (fusible) into the kernel, its own fusible operands
    /// first.
    fn absorb(&mut self, p: &Planner<'_>, v: VarId) {
        let Some(&(site, id)) = p.facts.defs.get(&v) else {
            return;
        };
        self.root_expr(p, id);
        let loc = p.ir.blocks[&site.0].body[site.1].loc;
        match p.ir.expr(id) {
            Expr::Extension(node) => {
                let inner = node.blocks.values().next().cloned().unwrap_or_default();
                for inst in inner.body {
                    match inst.stmt {
                        Stmt::Return { value } => {
                            // `v = <node result>` inside the kernel: a copy the kernel
                            // evaluates for free. The expression is made in `apply`.
                            self.stmts.push(Inst {
                                stmt: Stmt::Return { value },
                                loc,
                            });
                            self.stmts.push(Inst {
                                stmt: Stmt::Del { var: v },
                                loc,
                            });
                        }
                        _ => self.stmts.push(inst),
                    }
                }
            }
            _ => self.stmts.push(Inst {
                stmt: Stmt::Assign {
                    target: v,
                    value: id,
                },
                loc,
            }),
        }
        self.moved.push(site);
    }
}

/// Build the node: `stmts` then `return ret`; operands are the outer variables the
/// statements read (`extra` first), callees excepted.
fn make_node(
    cx: &mut RewriteCx<'_>,
    kind: &str,
    stmts: Vec<Inst>,
    ret: VarId,
    loc: Loc,
    extra: Vec<VarId>,
    ty: Option<TypeId>,
) -> ExtensionNode {
    // Inlined nodes leave `return r; del v` pairs: turn them into `v = r`.
    let mut body = Vec::with_capacity(stmts.len() + 1);
    let mut it = stmts.into_iter().peekable();
    while let Some(inst) = it.next() {
        if let Stmt::Return { value } = inst.stmt {
            if let Some(Inst {
                stmt: Stmt::Del { var },
                ..
            }) = it.peek().cloned()
            {
                it.next();
                let e = cx.new_expr(Expr::Var(value), None);
                body.push(Inst {
                    stmt: Stmt::Assign {
                        target: var,
                        value: e,
                    },
                    loc: inst.loc,
                });
                continue;
            }
        }
        body.push(inst);
    }
    let defined: BTreeSet<VarId> = body
        .iter()
        .filter_map(|i| match i.stmt {
            Stmt::Assign { target, .. } => Some(target),
            _ => None,
        })
        .collect();
    // Leaves may repeat an `extra` operand (`a[:] = a * 2` reads the array it writes).
    let nextra = extra.len();
    let mut operands = extra;
    for inst in &body {
        let Stmt::Assign { value, .. } = inst.stmt else {
            continue;
        };
        let uses: Vec<VarId> = match cx.ir.expr(value) {
            Expr::Call { args, .. } => args.clone(),
            e => cx.ir.expr_uses(e),
        };
        for u in uses {
            if !defined.contains(&u) && !operands[nextra..].contains(&u) {
                operands.push(u);
            }
        }
    }
    body.push(Inst {
        stmt: Stmt::Return { value: ret },
        loc,
    });
    let mut node = ExtensionNode::new(kind, operands);
    node.blocks.insert(0, Block { body });
    if let Some(ty) = ty {
        node.attrs.push(("ty".into(), ty.to_string()));
    }
    node.printer = Some(if kind == ARRAYEXPR_SETITEM {
        print_setitem
    } else {
        print_arrayexpr
    });
    node
}

/// The expression tree as Numba prints it: `(<built-in function add>, [Var(a, f.py:3),
/// const(int, 2)])`, ufuncs as `<ufunc 'sqrt'>`.
fn render_tree(node: &ExtensionNode, ir: &FunctionIR) -> String {
    let body = node
        .blocks
        .values()
        .next()
        .map(|b| b.body.as_slice())
        .unwrap_or_default();
    let defs: HashMap<VarId, ExprId> = body
        .iter()
        .filter_map(|i| match i.stmt {
            Stmt::Assign { target, value } => Some((target, value)),
            _ => None,
        })
        .collect();
    let ret = body.iter().find_map(|i| match i.stmt {
        Stmt::Return { value } => Some(value),
        _ => None,
    });
    fn go(v: VarId, ir: &FunctionIR, defs: &HashMap<VarId, ExprId>, depth: usize) -> String {
        let Some(&id) = defs.get(&v).filter(|_| depth < 256) else {
            // A leaf: constants print as Numba substitutes them.
            let outer = ir
                .blocks
                .values()
                .flat_map(|b| &b.body)
                .find_map(|i| match i.stmt {
                    Stmt::Assign { target, value } if target == v => Some(ir.expr(value)),
                    _ => None,
                });
            return match outer {
                Some(Expr::Const(c)) => format!("const({}, {})", c.type_name(), c.py_str()),
                _ => ir.var_repr(v),
            };
        };
        let sub = |xs: &[VarId]| {
            xs.iter()
                .map(|&x| go(x, ir, defs, depth + 1))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match ir.expr(id) {
            Expr::Var(src) => go(*src, ir, defs, depth + 1),
            Expr::BinOp { op, lhs, rhs } => format!(
                "(<built-in function {}>, [{}])",
                op.operator_name(),
                sub(&[*lhs, *rhs])
            ),
            Expr::Unary { op, value } => format!(
                "(<built-in function {}>, [{}])",
                op.operator_name(),
                sub(&[*value])
            ),
            Expr::Call { func, args, .. } => {
                let name = ufunc_name(ir, *func);
                format!("(<ufunc '{name}'>, [{}])", sub(args))
            }
            e => ir.expr_to_string(e),
        }
    }
    ret.map_or_else(String::new, |r| go(r, ir, &defs, 0))
}

/// The NumPy name of the ufunc a callee variable holds (`np.sqrt`, `from numpy import
/// sqrt`); NumPy's aliases print under their ufunc's name.
fn ufunc_name(ir: &FunctionIR, func: VarId) -> String {
    let def = ir
        .blocks
        .values()
        .flat_map(|b| &b.body)
        .find_map(|i| match i.stmt {
            Stmt::Assign { target, value } if target == func => Some(ir.expr(value)),
            _ => None,
        });
    let name = match def {
        Some(Expr::GetAttr { attr, .. }) => attr.clone(),
        Some(Expr::Global { value, .. }) | Some(Expr::FreeVar { value, .. }) => match &value.kind {
            numba_ir::GlobalKind::ModuleFunction { name, .. } => name.clone(),
            _ => ir.var_name(func).to_string(),
        },
        _ => ir.var_name(func).to_string(),
    };
    match name.as_str() {
        "abs" => "absolute".into(),
        "true_divide" => "divide".into(),
        _ => name,
    }
}

fn attr<'n>(node: &'n ExtensionNode, key: &str) -> &'n str {
    node.attrs
        .iter()
        .find(|(k, _)| k == key)
        .map_or("", |(_, v)| v.as_str())
}

fn print_arrayexpr(node: &ExtensionNode, ir: &FunctionIR) -> String {
    format!(
        "arrayexpr(expr={}, ty={})",
        render_tree(node, ir),
        attr(node, "ty")
    )
}

fn print_setitem(node: &ExtensionNode, ir: &FunctionIR) -> String {
    let n = |i: usize| node.operands.get(i).map_or("?", |v| ir.var_name(*v));
    format!(
        "{}[{}] = arrayexpr(expr={}, ty={})",
        n(0),
        n(1),
        render_tree(node, ir),
        attr(node, "ty")
    )
}
