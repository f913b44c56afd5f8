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
    Block, Expr, ExprId, ExtensionNode, FunctionIR, Inst, Label, Loc, Stmt, UnaryOp, VarId,
};
use numba_typeinfer::types::{Type, TypeId};
use numba_typeinfer::{ImplKey, TypingResult};

use crate::{Rewrite, RewriteCx};

/// The kind of the fused-expression node.
pub const ARRAYEXPR: &str = "arrayexpr";
/// The kind of the in-place store of a fused expression (`out[idx] = expr`).
pub const ARRAYEXPR_SETITEM: &str = "arrayexpr_setitem";

fn element_type(t: TypeId) -> bool {
    // Numbers, and datetime64 / timedelta64 values (their operators are element-wise too).
    let fusable = |d: TypeId| d.is_scalar() || numba_typeinfer::npdatetime::is_datetime_like(d);
    let t = t.unliteral();
    match t.get() {
        Type::Array { dtype, .. } => fusable(dtype),
        _ => fusable(t),
    }
}

/// Whether the result or an argument holds datetime64 / timedelta64 values.
fn mentions_datetime(typing: &TypingResult, ret: TypeId, args: &[VarId]) -> bool {
    let dt = |t: TypeId| {
        let d = numba_typeinfer::numpy::array_parts(t).map_or(t, |p| p.0);
        numba_typeinfer::npdatetime::is_datetime_like(d)
    };
    dt(ret) || args.iter().any(|&v| dt(typing.type_of(v)))
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
        Expr::BinOp { op, lhs, rhs }
            if numba_typeinfer::numpy::ELEMENTWISE_BINOPS.contains(op)
                && sig.key == ImplKey::BinOp(*op) =>
        {
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
            // (datetime64 / timedelta64 ufuncs have loops of their own, not fused.)
            ImplKey::Function(k)
                if numba_typeinfer::numpy::ufunc_nin(k) == Some(args.len())
                    && !mentions_datetime(typing, sig.ret, args) =>
            {
                args.clone()
            }
            // A ufunc that is an operator (`np.bitwise_and`), typed as the operator.
            ImplKey::BinOp(op)
                if args.len() == 2 && numba_typeinfer::numpy::ELEMENTWISE_BINOPS.contains(op) =>
            {
                args.clone()
            }
            ImplKey::Unary(UnaryOp::Invert) if args.len() == 1 => args.clone(),
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
        self.walk(self.succs.get(&from).cloned().unwrap_or_default(), stop)
    }

    /// Blocks reachable from `start` (included) without entering `stop`.
    fn walk(&self, mut work: Vec<Label>, stop: Label) -> BTreeSet<Label> {
        let mut seen = BTreeSet::new();
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
        if def != self.entry && self.walk(vec![self.entry], def).contains(&usel) {
            return None;
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
    /// The function facts `matches` computed, reused by `apply` (the IR is unchanged
    /// between them).
    facts: Option<Facts>,
}

impl Rewrite for RewriteArrayExprs {
    fn name(&self) -> &str {
        "RewriteArrayExprs"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, typing: Option<&TypingResult>) -> bool {
        self.label = label;
        self.roots.clear();
        self.facts = None;
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
        if self.roots.is_empty() {
            return false;
        }
        self.facts = Some(p.facts);
        true
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        let label = self.label;
        let roots = std::mem::take(&mut self.roots);
        let Some(facts) = self.facts.take() else {
            return cx.ir.blocks[&label].clone();
        };
        // Each assignment root computes into a new kernel variable of its type.
        let rets: Vec<Option<VarId>> = roots
            .iter()
            .map(|&i| {
                let inst = &cx.ir.blocks[&label].body[i];
                let loc = inst.loc;
                match inst.stmt {
                    Stmt::Assign { target, .. } => {
                        let ty = cx.type_of(target);
                        Some(cx.new_var("$arrayexpr", loc, ty))
                    }
                    _ => None,
                }
            })
            .collect();
        let Some(typing) = cx.typing.as_deref() else {
            return cx.ir.blocks[&label].clone();
        };
        // Plan on the IR as matched, then edit.
        let plans: Vec<Kernel> = {
            let p = Planner {
                ir: cx.ir,
                typing,
                facts,
            };
            roots
                .iter()
                .zip(&rets)
                .map(|(&i, ret)| {
                    let inst = &cx.ir.blocks[&label].body[i];
                    let mut k = Kernel::default();
                    match (&inst.stmt, ret) {
                        (Stmt::Assign { value, .. }, Some(ret)) => {
                            k.emit(&p, *value, *ret, inst.loc)
                        }
                        (Stmt::SetItem { value, .. }, _) => k.absorb(&p, *value),
                        _ => {}
                    }
                    k
                })
                .collect()
        };
        // Statements moved into kernels leave their blocks (possibly other blocks).
        let mut removed: BTreeMap<Label, BTreeSet<usize>> = BTreeMap::new();
        for k in &plans {
            for &(l, i) in &k.moved {
                removed.entry(l).or_default().insert(i);
            }
        }
        let mut block = cx.ir.blocks[&label].clone();
        for ((i, k), ret) in roots.into_iter().zip(plans).zip(rets) {
            let loc = block.body[i].loc;
            match block.body[i].stmt.clone() {
                Stmt::Assign { target, .. } => {
                    let ret = ret.unwrap_or(target);
                    let ty = cx.type_of(target);
                    let node = make_node(cx, ARRAYEXPR, k, ret, loc, Vec::new(), ty);
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
                        k,
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
            let body = if l == label {
                &mut block.body
            } else {
                match cx.ir.blocks.get_mut(&l) {
                    Some(b) => &mut b.body,
                    None => continue,
                }
            };
            let mut n = 0;
            body.retain(|_| {
                n += 1;
                !idx.contains(&(n - 1))
            });
        }
        block
    }
}

/// One step of a fused tree: a moved statement, or a copy between kernel variables (an
/// absorbed node's result into the variable that held it), made into a statement once
/// expressions can be added.
enum Piece {
    Inst(Inst),
    Copy { target: VarId, src: VarId, loc: Loc },
}

/// The statements of one fused tree, in evaluation order, and where they came from.
#[derive(Default)]
struct Kernel {
    pieces: Vec<Piece>,
    moved: Vec<Site>,
}

impl Kernel {
    /// The computation of expression `id` into `into`: its fusible operands first, then
    /// the operation itself (an existing node's statements and a copy of its result).
    fn emit(&mut self, p: &Planner<'_>, id: ExprId, into: VarId, loc: Loc) {
        for o in p.operands(id).unwrap_or_default() {
            if p.fusible(o) {
                self.absorb(p, o);
            }
        }
        match p.ir.expr(id) {
            Expr::Extension(node) => {
                for inst in node.blocks.values().flat_map(|b| b.body.iter().cloned()) {
                    match inst.stmt {
                        Stmt::Return { value } => self.pieces.push(Piece::Copy {
                            target: into,
                            src: value,
                            loc,
                        }),
                        _ => self.pieces.push(Piece::Inst(inst)),
                    }
                }
            }
            _ => self.pieces.push(Piece::Inst(Inst {
                stmt: Stmt::Assign {
                    target: into,
                    value: id,
                },
                loc,
            })),
        }
    }

    /// Move the computation of `v` (fusible) into the kernel.
    fn absorb(&mut self, p: &Planner<'_>, v: VarId) {
        let Some(&(site, id)) = p.facts.defs.get(&v) else {
            return;
        };
        let loc = p.ir.blocks[&site.0].body[site.1].loc;
        self.emit(p, id, v, loc);
        self.moved.push(site);
    }
}

/// Build the node: the kernel's statements then `return ret`; operands are the outer
/// variables the statements read (`extra` first), callees excepted.
fn make_node(
    cx: &mut RewriteCx<'_>,
    kind: &str,
    kernel: Kernel,
    ret: VarId,
    loc: Loc,
    extra: Vec<VarId>,
    ty: Option<TypeId>,
) -> ExtensionNode {
    let mut body: Vec<Inst> = Vec::with_capacity(kernel.pieces.len() + 1);
    for piece in kernel.pieces {
        body.push(match piece {
            Piece::Inst(inst) => inst,
            Piece::Copy { target, src, loc } => Inst {
                stmt: Stmt::Assign {
                    target,
                    value: cx.new_expr(Expr::Var(src), None),
                },
                loc,
            },
        });
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
