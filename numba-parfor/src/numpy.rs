//! NumPy operations to parfors (Numba's `ConvertNumpyPass` for array expressions and the
//! internal parallel versions `PreParforPass` swaps in for `np.sum`-style reductions).
//!
//! - `r = arrayexpr(...)` (numba-rewrite's fused element-wise tree) becomes
//!   `r = parfor_alloc(leaves)` (the result, shaped by broadcasting the leaves),
//!   `$size = r.size`, and a parfor over `range($size)` whose body evaluates the tree at
//!   one position (`arrayexpr_at`) and stores it (`parfor_setflat`).
//! - `s = np.sum(a)` / `a.sum()` (also `prod`, `mean`) becomes `s = 0` and a parfor over
//!   `range(a.size)` with `s` as an `+` (or `*`) reduction of `parfor_getflat(a, i)`;
//!   `mean` divides the sum by the size after the loop (`parfor_mean`); `var`/`std` are
//!   two such parfors, the mean and then the sum of squared distances (`parfor_abs2`); `min`/`max` start
//!   from the type's extreme and raise NumPy's ValueError after the loop when the array
//!   is empty (`parfor_extreme`, `parfor_minmax`, `parfor_nonempty`); `argmin`/`argmax`
//!   reduce `(value, position)` pairs (`parfor_argstart`, `parfor_argstep`,
//!   `parfor_argfinish`).
//! - `np.zeros`/`np.ones` and `numpy.random` draws with a size: the array allocated
//!   uninitialised and a parfor storing each element ("NumPy mapping").
//! - Stores (`setitem`): into the view a basic index selects (`parfor_setview`, sources
//!   overlapping it copied by `parfor_unalias`) or through a mask (`parfor_maskcheck`,
//!   `parfor_maskset`); a scalar stored into the whole array (`a[:] = x`, `a[:, :] = x`)
//!   loops over the array's own positions, so that it fuses like NumPy parfors.
//! - Array expressions carry the size assertion Numba's array analysis inserts
//!   (`Sizes of a, b do not match on file (line)`), raised as its AssertionError.
//!
//! The loops run over flat (C-order) positions whatever the rank, so the schedule
//! divides the work evenly and the positions are what fusion compares. The node kinds
//! below are lowered by the back end (numba-lower's `parfor_elems`).

use std::collections::{HashMap, HashSet};

use numba_bytecode::Constant;
use numba_ir::{Block, Expr, ExprId, ExtensionNode, FunctionIR, Inst, Label, Loc, Stmt, VarId};
use numba_typeinfer::types::{Type, INT64, NONE};
use numba_typeinfer::{ImplKey, Signature, TypeId, TypingResult};

use crate::node::{Bound, LoopNest, Parfor, RedOp, Reduction};
use crate::{ParforError, ParforReport};

/// `out = parfor_alloc(leaves...)`: a new C array of `out`'s type, shaped by broadcasting
/// the array leaves (NumPy's ValueError when they do not broadcast).
pub const PARFOR_ALLOC: &str = "parfor_alloc";
/// `out = parfor_shape(leaves...)`: as `parfor_alloc`, but without storage: the array of
/// a parfor whose temporary result was removed (only its shape is read).
pub const PARFOR_SHAPE: &str = "parfor_shape";
/// `out = parfor_empty(shape...)`: a new C array of `out`'s type, uninitialised, of the
/// shape an int, a tuple of ints or several ints give (a `numpy.random` draw's `size`, or
/// `rand`'s dimensions). With attr `shape_only` (an `np.empty` array whose stores and
/// reads fusion left in one loop, see `crate::dead`), no memory: only the shape.
pub const PARFOR_EMPTY: &str = "parfor_empty";
/// `x = arrayexpr_at(out, i, leaves...)`: the fused tree (the node's nested block, as in
/// an `arrayexpr` node) evaluated at flat position `i` of `out`'s shape, each leaf read
/// at the position broadcasting gives it.
pub const ARRAYEXPR_AT: &str = "arrayexpr_at";
/// `x = parfor_getflat(a, i)`: the element at flat (C-order) position `i` of `a`.
pub const GETFLAT: &str = "parfor_getflat";
/// `parfor_setflat(a, i, x)`: store `x` at flat position `i` of `a`.
pub const SETFLAT: &str = "parfor_setflat";
/// `m = parfor_mean(total, n)`: NumPy's mean from a sum and a count (nan for none).
pub const MEAN: &str = "parfor_mean";
/// `n = parfor_linspace_count(num)`: `num`, or NumPy's ValueError when it is negative.
pub const LINSPACE_COUNT: &str = "parfor_linspace_count";
/// `x = parfor_linspace(start, stop, num, i)`: element `i` of `np.linspace(start, stop,
/// num)`, computed as the serial version computes it (`stop` exactly at the end).
pub const LINSPACE: &str = "parfor_linspace";
/// `parfor_inplace_check(out, value)`: NumPy's ValueError unless `value` broadcasts to
/// exactly `out`'s shape (an in-place operator's output).
pub const INPLACE_CHECK: &str = "parfor_inplace_check";
/// `n = parfor_arange_count(start, stop, step)`: `np.arange`'s length for those bounds
/// (NumPy's ZeroDivisionError for a zero step).
pub const ARANGE_COUNT: &str = "parfor_arange_count";
/// `x = parfor_arange(start, step, i)`: element `i` of that arange, `start + i * step`
/// computed as the serial version computes it.
pub const ARANGE: &str = "parfor_arange";
/// `s = parfor_abs2(d)`: `|d|^2` (`d * d`, or `re^2 + im^2` for a complex `d`), a
/// variance's term, as `s`'s type.
pub const ABS2: &str = "parfor_abs2";
/// `x = parfor_extreme()` (attr `op`: `min` or `max`): the start of a `min` (the type's
/// largest value, +inf for floats) or `max` reduction.
pub const EXTREME: &str = "parfor_extreme";
/// `x = parfor_minmax(acc, e)` (attr `op`): NumPy's `min`/`max` of two elements.
pub const MINMAX: &str = "parfor_minmax";
/// `m = parfor_nonempty(acc, n)` (attr `op`): `acc`, or NumPy's ValueError for a `min`/
/// `max` over nothing (`n == 0`).
pub const NONEMPTY: &str = "parfor_nonempty";
/// `v = parfor_setview(out, index, leaves...)` (attr `ndim`: the stored value's rank):
/// the selection `out[index]` (a basic index: a view) a setitem parfor writes, after the
/// serial store's checks (the leaves broadcast together and into the selection).
pub const SETVIEW: &str = "parfor_setview";
/// `s = parfor_unalias(view, leaf)`: `leaf`, or a copy where it overlaps `view` other
/// than element for element.
pub const UNALIAS: &str = "parfor_unalias";
/// `parfor_maskcheck(a, mask)`: NumPy's IndexError unless `mask` has `a`'s shape.
pub const MASKCHECK: &str = "parfor_maskcheck";
/// `parfor_maskset(a, mask, i, x)`: flat element `i` of `a` becomes `x` (or flat element
/// `i` of `x`, an array of `a`'s shape) where `mask`'s is true.
pub const MASKSET: &str = "parfor_maskset";
/// `x = parfor_masked(m, e)` (attr `op`: `sum`, `prod`, `min`, `max`): `e` where the
/// mask item `m` is set, else the reduction's identity; with op `count`, `parfor_masked(m)`
/// is 1 or 0. A reduction over `a[mask]` reads `a` through it (no filtered copy).
pub const MASKED: &str = "parfor_masked";
/// `p = parfor_argstart()`: an `argmin`/`argmax` accumulator, `(0, -1)` (no position).
pub const ARGSTART: &str = "parfor_argstart";
/// `p = parfor_argstep(p, e, i)` (attr `op`: `argmin` or `argmax`): the pair with element
/// `e` at position `i` taken when it is better (see [`RedOp::ArgMin`]).
pub const ARGSTEP: &str = "parfor_argstep";
/// `k = parfor_argfinish(p)` (attr `op`): the position, or NumPy's ValueError for an
/// empty array.
pub const ARGFINISH: &str = "parfor_argfinish";

fn with_op(kind: &str, operands: Vec<VarId>, op: &str) -> ExtensionNode {
    let mut n = ExtensionNode::new(kind, operands);
    n.attrs.push(("op".into(), op.into()));
    n
}

/// What the conversion generated, for fusion: statements it may move across a parfor.
#[derive(Debug, Default)]
pub(crate) struct Generated {
    /// Allocation, size and accumulator set-up statements (values), which read no array
    /// data and can run before an earlier parfor.
    pub inits: HashSet<ExprId>,
    /// Statements after a parfor that only read its results (a mean's division).
    pub posts: HashSet<ExprId>,
    /// Parfors whose bodies read arrays only at the loop's own flat position.
    pub elementwise: HashSet<usize>,
    /// Parfors that draw random numbers: they keep their place (fusing two, or moving
    /// one over another, would change which draw lands in which array).
    pub random: HashSet<usize>,
    /// Arrays created from a shape variable (`np.zeros(n)`): those of one shape variable
    /// have equal shapes.
    pub created: HashMap<VarId, VarId>,
}

struct Cx<'a> {
    ir: &'a mut FunctionIR,
    /// The definitions of the function's variables before the conversion.
    defs: &'a HashMap<VarId, Vec<ExprId>>,
    typing: &'a mut TypingResult,
    next_label: Label,
    gen: &'a mut Generated,
    /// `c[mask]` copies a masked store now reads from `c` itself: removed at the end
    /// when nothing else reads them.
    masked_copies: Vec<VarId>,
}

impl Cx<'_> {
    fn var(&mut self, base: &str, t: TypeId, loc: Loc) -> VarId {
        let name = numba_ir::utils::fresh_name(self.ir, base);
        let v = self.ir.add_var(name, loc);
        self.typing.typemap.push(t);
        v
    }

    fn assign(&mut self, target: VarId, e: Expr, loc: Loc) -> (Inst, ExprId) {
        let value = self.ir.add_expr(e);
        (
            Inst {
                stmt: Stmt::Assign { target, value },
                loc,
            },
            value,
        )
    }

    /// `src = parfor_unalias(dst, leaf)` appended to `out`: `leaf`, or a copy of it where
    /// it overlaps `dst` other than element for element (an `A` array of `leaf`'s dtype
    /// and rank). `None` when `leaf` is not an array.
    fn unaliased(
        &mut self,
        base: &str,
        (dst, leaf): (VarId, VarId),
        loc: Loc,
        out: &mut Vec<Inst>,
    ) -> Option<VarId> {
        let Type::Array {
            dtype,
            ndim,
            readonly,
            ..
        } = self.typing.type_of(leaf).unliteral().get()
        else {
            return None;
        };
        let st = numba_typeinfer::types::intern(Type::Array {
            dtype,
            ndim,
            layout: numba_typeinfer::types::Layout::A,
            readonly,
        });
        let src = self.var(base, st, loc);
        let (inst, _) = self.assign(
            src,
            Expr::Extension(Box::new(ExtensionNode::new(UNALIAS, vec![dst, leaf]))),
            loc,
        );
        out.push(inst);
        Some(src)
    }

    /// `$size = arr.size`, an init statement.
    /// `elem = parfor_getflat(arr, index)` for a new `elem` of type `dtype`.
    fn getflat(&mut self, arr: VarId, index: VarId, dtype: TypeId, loc: Loc) -> (Inst, VarId) {
        let elem = self.var("$parfor_elem", dtype, loc);
        let (inst, _) = self.assign(
            elem,
            Expr::Extension(Box::new(ExtensionNode::new(GETFLAT, vec![arr, index]))),
            loc,
        );
        (inst, elem)
    }

    /// `acc = acc <op> x`, typed by `sig`: a reduction's step and its expression.
    fn step(
        &mut self,
        acc: VarId,
        (op, x): (numba_ir::BinOp, VarId),
        sig: Signature,
        loc: Loc,
    ) -> (Inst, ExprId) {
        let (inst, e) = self.assign(
            acc,
            Expr::BinOp {
                op,
                lhs: acc,
                rhs: x,
            },
            loc,
        );
        self.typing.calltypes.insert(e, sig);
        (inst, e)
    }

    /// The pattern Numba prints for a loop of one of its internal parallel versions of
    /// a NumPy function (`('prange', 'internal', (('sum', 'numpy'), Loc(...)))`).
    fn internal_pattern(&self, name: &str, loc: Loc) -> String {
        format!(
            "('prange', 'internal', (('{name}', 'numpy'), Loc(filename={}, line={}, col=None)))",
            self.ir.filename, loc.line
        )
    }

    fn size_of(&mut self, arr: VarId, loc: Loc, out: &mut Vec<Inst>) -> VarId {
        let n = self.var("$parfor_size", INT64, loc);
        let (inst, e) = self.assign(
            n,
            Expr::GetAttr {
                value: arr,
                attr: "size".into(),
            },
            loc,
        );
        self.typing.calltypes.insert(
            e,
            Signature {
                ret: INT64,
                args: vec![self.typing.type_of(arr)],
                key: ImplKey::GetAttr("size".into()),
            },
        );
        self.gen.inits.insert(e);
        out.push(inst);
        n
    }

    fn index_var(&mut self, loc: Loc) -> VarId {
        let name = (1..)
            .map(|k| format!("parfor_index.{k}"))
            .find(|n| !self.ir.vars.iter().any(|v| &v.name == n))
            .expect("a free name");
        let v = self.ir.add_var(name, loc);
        self.typing.typemap.push(INT64);
        v
    }

    fn label(&mut self) -> Label {
        self.next_label += 1;
        self.next_label
    }

    /// Build the parfor of `l`, report it and append it to `out`.
    fn emit(
        &mut self,
        l: FlatLoop,
        loc: Loc,
        out: &mut Vec<Inst>,
        report: &mut ParforReport,
    ) -> usize {
        let mut params = l.params;
        params.sort();
        params.dedup();
        let label = self.label();
        let pf = Parfor {
            id: crate::next_parfor_id(),
            loop_nests: vec![LoopNest {
                index: l.index,
                start: Bound::Const(0),
                stop: Bound::Var(l.size),
                step: Bound::Const(1),
            }],
            init_block: Block::default(),
            loop_body: [(label, Block { body: l.body })].into_iter().collect(),
            index_var: l.index,
            params,
            races: Vec::new(),
            reductions: l.reductions,
            patterns: vec![l.pattern.clone()],
            cost: l.cost.max(1),
            loc,
        };
        self.gen.elementwise.insert(pf.id);
        report.produced(pf.id, &l.pattern, &self.ir.filename, loc.line);
        let id = pf.id;
        out.push(Inst {
            stmt: Stmt::Extension(Box::new(pf.to_node())),
            loc,
        });
        id
    }
}

/// A loop over flat positions `0..size` the conversion makes into a parfor.
struct FlatLoop {
    index: VarId,
    size: VarId,
    body: Vec<Inst>,
    params: Vec<VarId>,
    reductions: Vec<Reduction>,
    pattern: String,
    cost: i64,
}

fn elem_type(t: TypeId) -> Option<TypeId> {
    match t.unliteral().get() {
        Type::Array { dtype, .. } if dtype.is_scalar() => Some(dtype),
        _ => None,
    }
}

/// Convert the array expressions and whole-array reductions of `ir`'s blocks (not those
/// already inside a parfor: [`crate::nest`] converts a loop body's own).
///
/// `nested`: the blocks are a parallel loop's body, whose parfors run serially inside
/// each division: only array expressions and reductions convert (they fuse, so an
/// expression feeding a reduction makes no temporary array); allocations, fills and
/// stores stay as they are, where the loop's allocation hoisting sees them.
pub(crate) fn convert(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    report: &mut ParforReport,
    gen: &mut Generated,
    options: &crate::ParforOptions,
    nested: bool,
) -> Result<(), ParforError> {
    let defs = crate::prange::defs_of(ir);
    let next_label = ir.blocks.keys().max().copied().unwrap_or(0) + 1000;
    let mut cx = Cx {
        ir,
        defs: &defs,
        typing,
        next_label,
        gen,
        masked_copies: Vec::new(),
    };
    let labels: Vec<Label> = cx.ir.blocks.keys().copied().collect();
    for l in labels {
        let old = std::mem::take(&mut cx.ir.blocks.get_mut(&l).expect("block").body);
        let mut new = Vec::with_capacity(old.len());
        for inst in old {
            let stored = match &inst.stmt {
                _ if !options.setitem || nested => None,
                Stmt::Extension(node) if node.kind == "arrayexpr_setitem" => {
                    let node = (**node).clone();
                    Some(setitem_expr(&mut cx, &node, inst.loc, &mut new, report))
                }
                &Stmt::SetItem {
                    target,
                    index,
                    value,
                } => Some(setitem_plain(
                    &mut cx, target, index, value, inst.loc, &mut new, report,
                )),
                _ => None,
            };
            match stored {
                Some(true) => continue,
                Some(false) => {
                    new.push(inst);
                    continue;
                }
                None => {}
            }
            let Stmt::Assign { target, value } = inst.stmt else {
                new.push(inst);
                continue;
            };
            let done = match cx.ir.expr(value) {
                &Expr::InplaceBinOp { op, lhs, rhs } if options.inplace_binop && !nested => {
                    inplace_binop(
                        &mut cx,
                        target,
                        value,
                        (op, lhs, rhs),
                        inst.loc,
                        &mut new,
                        report,
                    )
                }
                _ if !options.numpy => false,
                Expr::Extension(node) if node.kind == "arrayexpr" => {
                    let node = (**node).clone();
                    arrayexpr(&mut cx, target, &node, inst.loc, &mut new, report)
                }
                Expr::Call { .. } => match call_site(&cx, value) {
                    Some(call) if nested => {
                        reduction(&mut cx, target, &call, inst.loc, &mut new, report)
                    }
                    Some(call) => {
                        reduction(&mut cx, target, &call, inst.loc, &mut new, report)
                            || creation(&mut cx, target, &call, inst.loc, &mut new, report)
                            || fill(&mut cx, target, &call, inst.loc, &mut new, report)
                            || linspace(&mut cx, target, &call, inst.loc, &mut new, report)
                            || arange(&mut cx, target, &call, inst.loc, &mut new, report)
                    }
                    None => false,
                },
                _ => false,
            };
            if !done {
                new.push(inst);
            }
        }
        cx.ir.blocks.get_mut(&l).expect("block").body = new;
    }
    if !cx.masked_copies.is_empty() {
        // A masked reduction's `copy.sum` attribute nothing calls any more goes first.
        let read = crate::dead::read_vars(cx.ir);
        let copies: HashSet<VarId> = cx.masked_copies.iter().copied().collect();
        let ir = &mut *cx.ir;
        let unread_attrs: HashSet<VarId> = ir
            .blocks
            .values()
            .flat_map(|b| &b.body)
            .filter_map(|i| match i.stmt {
                Stmt::Assign { target, value } if !read.contains(&target) => match ir.expr(value) {
                    Expr::GetAttr { value, .. } if copies.contains(value) => Some(target),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        for b in ir.blocks.values_mut() {
            b.body.retain(|i| {
                !matches!(i.stmt, Stmt::Assign { target, .. } if unread_attrs.contains(&target))
            });
        }
        // The store checked the mask against the source: the copy's own check goes too.
        let read = crate::dead::read_vars(cx.ir);
        let dead: HashSet<VarId> = cx
            .masked_copies
            .iter()
            .copied()
            .filter(|v| !read.contains(v))
            .collect();
        for b in cx.ir.blocks.values_mut() {
            b.body.retain(
                |i| !matches!(i.stmt, Stmt::Assign { target, .. } if dead.contains(&target)),
            );
        }
    }
    Ok(())
}

/// Numba's `repr_arrayexpr`: `((a mul b) add (sin(c)))`.
fn repr_tree(
    ir: &FunctionIR,
    typing: &TypingResult,
    defs: &HashMap<VarId, Vec<ExprId>>,
    node: &ExtensionNode,
) -> String {
    let mut text: HashMap<VarId, String> = HashMap::new();
    let leaf = |v: VarId| {
        let n = ir.var_name(v);
        // Numba's tree holds constants themselves: `(g mul 2.0)`.
        if let Some(Expr::Const(c)) = crate::prange::single_def(ir, defs, v) {
            return c.py_repr();
        }
        if n.starts_with('$') {
            format!("'{n}' (temporary variable)")
        } else {
            n.to_string()
        }
    };
    let get =
        |text: &HashMap<VarId, String>, v: VarId| text.get(&v).cloned().unwrap_or_else(|| leaf(v));
    let stmts = node.blocks.values().flat_map(|b| &b.body);
    let mut last = String::from("_");
    for inst in stmts {
        match inst.stmt {
            Stmt::Assign { target, value } => {
                let s = match ir.expr(value) {
                    Expr::BinOp { op, lhs, rhs } => format!(
                        "({} {} {})",
                        get(&text, *lhs),
                        op.operator_name(),
                        get(&text, *rhs)
                    ),
                    Expr::Unary { op, value } => {
                        format!("({}({}))", op.operator_name(), get(&text, *value))
                    }
                    Expr::Call { args, .. } => {
                        let name = match typing.calltypes.get(&value).map(|s| &s.key) {
                            Some(ImplKey::Function(k)) => {
                                k.rsplit('.').next().unwrap_or(k).to_string()
                            }
                            Some(k) => numba_typeinfer::numpy::operator_ufunc_name(k)
                                .unwrap_or("_")
                                .to_string(),
                            None => "_".into(),
                        };
                        let parts: Vec<String> = args.iter().map(|a| get(&text, *a)).collect();
                        if parts.len() == 1 {
                            format!("({name}({}))", parts[0])
                        } else {
                            format!("({})", parts.join(&format!(" {name} ")))
                        }
                    }
                    Expr::Var(v) => get(&text, *v),
                    _ => "_".into(),
                };
                text.insert(target, s);
            }
            Stmt::Return { value } => last = get(&text, value),
            _ => {}
        }
    }
    last
}

/// The message of the assertion Numba's array analysis puts before an array expression
/// whose array leaves it cannot prove equal in size: `Sizes of a, b do not match on
/// file.py (7)`. `None` for a single array leaf (nothing to compare). Unlike Numba, an
/// axis of run-time length 1 still broadcasts, as in NumPy and the serial code.
fn size_assertion(
    ir: &FunctionIR,
    typing: &TypingResult,
    leaves: &[VarId],
    loc: Loc,
) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    let mut seen = HashSet::new();
    for &v in leaves {
        if typing.type_of(v).is_array() && seen.insert(v) {
            names.push(ir.var_name(v));
        }
    }
    (names.len() > 1).then(|| sizes_text(ir, &names, loc))
}

/// Numba's `assert_equiv` message naming variables.
pub(crate) fn sizes_message(ir: &FunctionIR, vars: &[VarId], loc: Loc) -> String {
    let names: Vec<&str> = vars.iter().map(|&v| ir.var_name(v)).collect();
    sizes_text(ir, &names, loc)
}

/// `Sizes of a, b do not match on file.py (7)`.
pub(crate) fn sizes_text(ir: &FunctionIR, names: &[&str], loc: Loc) -> String {
    format!(
        "Sizes of {} do not match on {} ({})",
        names.join(", "),
        ir.filename,
        loc.line
    )
}

/// `target = arrayexpr(...)` to an allocation and a parfor.
fn arrayexpr(
    cx: &mut Cx<'_>,
    target: VarId,
    node: &ExtensionNode,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let out_t = cx.typing.type_of(target);
    let Some(dtype) = elem_type(out_t) else {
        return false;
    };
    if !matches!(
        out_t.get(),
        Type::Array {
            layout: numba_typeinfer::types::Layout::C,
            ..
        }
    ) {
        return false;
    }
    let leaves = node.operands.clone();
    if !leaves.iter().any(|&v| cx.typing.type_of(v).is_array()) {
        return false;
    }
    let pattern = format!(
        "array expression {}",
        repr_tree(cx.ir, cx.typing, cx.defs, node)
    );
    let mut alloc = ExtensionNode::new(PARFOR_ALLOC, leaves.clone());
    if let Some(msg) = size_assertion(cx.ir, cx.typing, &leaves, loc) {
        alloc.attrs.push(("assert".into(), msg));
    }
    let (inst, e) = cx.assign(target, Expr::Extension(Box::new(alloc)), loc);
    cx.gen.inits.insert(e);
    out.push(inst);
    let size = cx.size_of(target, loc, out);
    let index = cx.index_var(loc);
    let elem = cx.var("$expr_out_var", dtype, loc);
    let mut at_ops = vec![target, index];
    at_ops.extend(&leaves);
    let mut at = ExtensionNode::new(ARRAYEXPR_AT, at_ops);
    at.blocks = node.blocks.clone();
    let (get, _) = cx.assign(elem, Expr::Extension(Box::new(at)), loc);
    let set = Inst {
        stmt: Stmt::Extension(Box::new(ExtensionNode::new(
            SETFLAT,
            vec![target, index, elem],
        ))),
        loc,
    };
    // Work per position: a load per leaf, the fused operations (calls cost more), a store.
    let mut cost = 1 + leaves.len() as i64;
    for inst in node.blocks.values().flat_map(|b| &b.body) {
        if let Stmt::Assign { value, .. } = inst.stmt {
            cost += if matches!(cx.ir.expr(value), Expr::Call { .. }) {
                9
            } else {
                1
            };
        }
    }
    let mut params = vec![target];
    params.extend(&leaves);
    cx.emit(
        FlatLoop {
            index,
            size,
            body: vec![get, set],
            params,
            reductions: Vec::new(),
            pattern,
            cost,
        },
        loc,
        out,
        report,
    );
    true
}

/// A typed call of a function (by its typing key) with positional arguments, keywords
/// or typing-bound arguments noted: what the conversions below may replace.
struct CallSite {
    value: ExprId,
    sig: Signature,
    key: String,
    func: VarId,
    args: Vec<VarId>,
    /// Keyword arguments, or arguments typing bound (defaults).
    bound: bool,
    form: numba_ir::CallForm,
}

fn call_site(cx: &Cx<'_>, value: ExprId) -> Option<CallSite> {
    let sig = cx.typing.calltypes.get(&value)?.clone();
    let ImplKey::Function(key) = &sig.key else {
        return None;
    };
    let key = key.clone();
    let Expr::Call {
        func,
        args,
        kws,
        vararg: None,
        varkwarg: None,
        form,
    } = cx.ir.expr(value)
    else {
        return None;
    };
    Some(CallSite {
        value,
        key,
        func: *func,
        args: args.clone(),
        bound: !kws.is_empty() || cx.typing.call_args.contains_key(&value),
        form: *form,
        sig,
    })
}

/// The value a bound method was taken from (`a` of `f = a.sum`), when `func` has that
/// one definition.
pub(crate) fn receiver(
    ir: &FunctionIR,
    defs: &HashMap<VarId, Vec<ExprId>>,
    func: VarId,
) -> Option<VarId> {
    match defs.get(&func).map(|d| d.as_slice()) {
        Some([d]) => match ir.expr(*d) {
            Expr::GetAttr { value, .. } => Some(*value),
            _ => None,
        },
        _ => None,
    }
}

/// `s = np.sum(a)`-style whole-array reductions to a reduction parfor.
fn reduction(
    cx: &mut Cx<'_>,
    target: VarId,
    call: &CallSite,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let (sig, args) = (&call.sig, &call.args);
    if call.bound || sig.args.len() != 1 {
        return false;
    }
    let (module, name) = match call.key.split_once('.') {
        Some((
            m @ ("numpy" | "array"),
            n @ ("sum" | "prod" | "mean" | "min" | "max" | "argmin" | "argmax" | "var" | "std"),
        )) => (m, n),
        Some(("numpy", "amin")) => ("numpy", "min"),
        Some(("numpy", "amax")) => ("numpy", "max"),
        _ => return false,
    };
    let arr = if module == "numpy" {
        match args.as_slice() {
            [a] => *a,
            _ => return false,
        }
    } else {
        // `a.sum()`: the receiver of the bound method.
        if !args.is_empty() {
            return false;
        }
        match receiver(cx.ir, cx.defs, call.func) {
            Some(v) => v,
            None => return false,
        }
    };
    let arr_t = cx.typing.type_of(arr);
    let Some(dtype) = elem_type(arr_t) else {
        return false;
    };
    let ret = sig.ret.unliteral();
    if !ret.is_scalar() || ret != cx.typing.type_of(target).unliteral() {
        return false;
    }
    if name == "var" || name == "std" {
        return variance(cx, (arr, dtype), (target, ret), name, loc, out, report);
    }
    // How each reduction starts, steps and finishes.
    let minmax = name == "min" || name == "max";
    let (red_op, step_sig) = match name {
        // Complex numbers order lexicographically in NumPy: left serial.
        "argmin" | "argmax" => {
            if dtype.is_complex() || !ret.is_integer() {
                return false;
            }
            let op = if name == "argmin" {
                RedOp::ArgMin
            } else {
                RedOp::ArgMax
            };
            (op, None)
        }
        "min" | "max" => {
            if dtype.is_complex() || ret != dtype {
                return false;
            }
            let op = if name == "min" {
                RedOp::Min
            } else {
                RedOp::Max
            };
            (op, None)
        }
        _ => {
            let (op, bin) = if name == "prod" {
                (RedOp::Mul, numba_ir::BinOp::Mul)
            } else {
                (RedOp::Add, numba_ir::BinOp::Add)
            };
            match numba_typeinfer::context::binop_signature(bin, ret, dtype) {
                Some(s) if s.ret.unliteral() == ret => (op, Some((bin, s))),
                _ => return false,
            }
        }
    };
    // `a[mask].sum()`: `a` read where the mask is set, without the filtered copy.
    let masked = match name {
        "sum" | "prod" | "mean" | "min" | "max" => masked_elements(cx, arr, out),
        _ => None,
    };
    if let Some((a, m)) = masked {
        out.push(Inst {
            stmt: Stmt::Extension(Box::new(ExtensionNode::new(MASKCHECK, vec![a, m]))),
            loc,
        });
        cx.masked_copies.push(arr);
    }
    let source = masked.map_or(arr, |(a, _)| a);
    let size = cx.size_of(source, loc, out);
    let (acc, start) = match name {
        "argmin" | "argmax" => (
            cx.var(
                "$arg_acc",
                numba_typeinfer::types::tuple_of(&[dtype, INT64]),
                loc,
            ),
            Expr::Extension(Box::new(ExtensionNode::new(ARGSTART, vec![]))),
        ),
        "min" | "max" => (
            cx.var("$minmax_acc", dtype, loc),
            Expr::Extension(Box::new(with_op(EXTREME, vec![], name))),
        ),
        "mean" => (cx.var("$mean_acc", ret, loc), Expr::Const(Constant::Int(0))),
        "prod" => (target, Expr::Const(Constant::Int(1))),
        _ => (target, Expr::Const(Constant::Int(0))),
    };
    let (inst, e) = cx.assign(acc, start, loc);
    cx.gen.inits.insert(e);
    out.push(inst);
    let index = cx.index_var(loc);
    let (get, elem) = cx.getflat(source, index, dtype, loc);
    let mut body = vec![get];
    let mut params = vec![source, acc];
    let mut reductions = Vec::new();
    // Over a mask: the element or the identity, and (for a mean, min or max) a count of
    // the elements taken.
    let mut count = None;
    let elem = match masked {
        None => elem,
        Some((_, m)) => {
            let (get_m, mi) = cx.getflat(m, index, numba_typeinfer::types::BOOLEAN, loc);
            body.push(get_m);
            let x = cx.var("$masked_elem", dtype, loc);
            let op = if name == "mean" { "sum" } else { name };
            let (inst, _) = cx.assign(
                x,
                Expr::Extension(Box::new(with_op(MASKED, vec![mi, elem], op))),
                loc,
            );
            body.push(inst);
            params.push(m);
            if matches!(name, "mean" | "min" | "max") {
                let c = cx.var("$masked_count", INT64, loc);
                let (inst, e) = cx.assign(c, Expr::Const(Constant::Int(0)), loc);
                cx.gen.inits.insert(e);
                out.push(inst);
                let ci = cx.var("$masked_one", INT64, loc);
                let (inst, _) = cx.assign(
                    ci,
                    Expr::Extension(Box::new(with_op(MASKED, vec![mi], "count"))),
                    loc,
                );
                body.push(inst);
                let add =
                    numba_typeinfer::context::binop_signature(numba_ir::BinOp::Add, INT64, INT64);
                let Some(add) = add else {
                    return false;
                };
                let (step, e) = cx.step(c, (numba_ir::BinOp::Add, ci), add, loc);
                body.push(step);
                params.push(c);
                reductions.push(Reduction {
                    var: c,
                    op: RedOp::Add,
                    expr: e,
                    acc_operand: 0,
                });
                count = Some(c);
            }
            x
        }
    };
    let step_expr = match &step_sig {
        Some((op, _)) => Expr::BinOp {
            op: *op,
            lhs: acc,
            rhs: elem,
        },
        None if minmax => Expr::Extension(Box::new(with_op(MINMAX, vec![acc, elem], name))),
        None => Expr::Extension(Box::new(with_op(ARGSTEP, vec![acc, elem, index], name))),
    };
    let (step, step_e) = cx.assign(acc, step_expr, loc);
    if let Some((_, sig)) = step_sig {
        cx.typing.calltypes.insert(step_e, sig);
    }
    let pattern = cx.internal_pattern(name, loc);
    body.push(step);
    reductions.insert(
        0,
        Reduction {
            var: acc,
            op: red_op,
            expr: step_e,
            acc_operand: 0,
        },
    );
    cx.emit(
        FlatLoop {
            index,
            size,
            body,
            params,
            reductions,
            pattern,
            cost: 3,
        },
        loc,
        out,
        report,
    );
    // The result from the accumulator: a mean divides, min/max check for emptiness.
    let taken = count.unwrap_or(size);
    let finish = match name {
        "mean" => Some(ExtensionNode::new(MEAN, vec![acc, taken])),
        _ if minmax => Some(with_op(NONEMPTY, vec![acc, taken], name)),
        "argmin" | "argmax" => Some(with_op(ARGFINISH, vec![acc], name)),
        _ => None,
    };
    if let Some(node) = finish {
        let (inst, e) = cx.assign(target, Expr::Extension(Box::new(node)), loc);
        cx.gen.posts.insert(e);
        out.push(inst);
    }
    true
}

/// `a.fill(v)` (Numba's `fill_parallel_impl`): a parfor storing `v` at every position;
/// the call's value is None.
fn fill(
    cx: &mut Cx<'_>,
    target: VarId,
    call: &CallSite,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let [v] = call.args.as_slice() else {
        return false;
    };
    if call.key != "array.fill" || call.bound {
        return false;
    }
    let Some(arr) = receiver(cx.ir, cx.defs, call.func) else {
        return false;
    };
    let writable = matches!(
        cx.typing.type_of(arr).unliteral().get(),
        Type::Array {
            readonly: false,
            ..
        }
    );
    if !writable || elem_type(cx.typing.type_of(arr)).is_none() {
        return false;
    }
    let size = cx.size_of(arr, loc, out);
    let index = cx.index_var(loc);
    let set = Inst {
        stmt: Stmt::Extension(Box::new(ExtensionNode::new(SETFLAT, vec![arr, index, *v]))),
        loc,
    };
    // Numba names the receiver as a variable with its definition's line.
    let file = cx
        .ir
        .filename
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let var = &cx.ir.vars[arr.0 as usize];
    let pattern = format!(
        "('prange', 'internal', (('fill', Var({}, {file}:{})), Loc(filename={}, line={}, col=None)))",
        var.name, var.loc.line, cx.ir.filename, loc.line
    );
    cx.emit(
        FlatLoop {
            index,
            size,
            body: vec![set],
            params: vec![arr, *v],
            reductions: vec![],
            pattern,
            cost: 1,
        },
        loc,
        out,
        report,
    );
    let (inst, _) = cx.assign(target, Expr::Const(Constant::None), loc);
    out.push(inst);
    true
}

/// `np.linspace(start, stop[, num])` (Numba's `linspace_parallel_impl`): the array
/// allocated, then a parfor storing each element.
fn linspace(
    cx: &mut Cx<'_>,
    target: VarId,
    call: &CallSite,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    if call.key != "numpy.linspace" || call.bound || !(2..=3).contains(&call.args.len()) {
        return false;
    }
    let out_t = cx.typing.type_of(target);
    let dtype = match out_t.get() {
        Type::Array { dtype, .. } => dtype,
        _ => return false,
    };
    if call.sig.ret.unliteral() != out_t {
        return false;
    }
    let (start, stop) = (call.args[0], call.args[1]);
    let num = match call.args.get(2) {
        Some(&n) => n,
        None => {
            let n = cx.var("$linspace_num", INT64, loc);
            let (inst, e) = cx.assign(n, Expr::Const(Constant::Int(50)), loc);
            cx.gen.inits.insert(e);
            out.push(inst);
            n
        }
    };
    fill_by_position(
        cx,
        (target, dtype),
        (LINSPACE_COUNT, vec![num]),
        (LINSPACE, vec![start, stop], true),
        ("linspace", 3),
        loc,
        out,
        report,
    );
    true
}

/// A new 1-d array `target` of element type `dtype` filled by a parfor: `size =
/// count_node(count_ops)`, `target = parfor_empty(size)`, then for each position `i`
/// `target[i] = elem_node(elem_ops..., [size,] i)` (the size passed when `with_size`:
/// `parfor_linspace` takes it). Numba's pattern names the function.
#[allow(clippy::too_many_arguments)]
fn fill_by_position(
    cx: &mut Cx<'_>,
    (target, dtype): (VarId, TypeId),
    (count_node, count_ops): (&str, Vec<VarId>),
    (elem_node, elem_ops, with_size): (&str, Vec<VarId>, bool),
    (function, cost): (&str, i64),
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) {
    let size = cx.var("$parfor_size", INT64, loc);
    let (inst, _) = cx.assign(
        size,
        Expr::Extension(Box::new(ExtensionNode::new(count_node, count_ops))),
        loc,
    );
    out.push(inst);
    let (inst, e) = cx.assign(
        target,
        Expr::Extension(Box::new(ExtensionNode::new(PARFOR_EMPTY, vec![size]))),
        loc,
    );
    cx.gen.inits.insert(e);
    cx.gen.created.insert(target, size);
    out.push(inst);
    let index = cx.index_var(loc);
    let elem = cx.var("$expr_out_var", dtype, loc);
    let mut ops = elem_ops.clone();
    if with_size {
        ops.push(size);
    }
    ops.push(index);
    let (get, _) = cx.assign(
        elem,
        Expr::Extension(Box::new(ExtensionNode::new(elem_node, ops))),
        loc,
    );
    let set = Inst {
        stmt: Stmt::Extension(Box::new(ExtensionNode::new(
            SETFLAT,
            vec![target, index, elem],
        ))),
        loc,
    };
    let mut params = vec![target];
    params.extend(elem_ops);
    params.push(size);
    let pattern = cx.internal_pattern(function, loc);
    cx.emit(
        FlatLoop {
            index,
            size,
            body: vec![get, set],
            params,
            reductions: vec![],
            pattern,
            cost,
        },
        loc,
        out,
        report,
    );
}

/// `np.arange(...)` (Numba's `arange_parallel_impl`): the length, the array, then a
/// parfor storing `start + i * step` cast to the dtype.
fn arange(
    cx: &mut Cx<'_>,
    target: VarId,
    call: &CallSite,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    if call.key != "numpy.arange" || call.sig.ret.unliteral() != cx.typing.type_of(target) {
        return false;
    }
    let Type::Array { dtype, .. } = call.sig.ret.get() else {
        return false;
    };
    // The bounds in parameter order (start, stop, step), None where not given (and the
    // dtype left out).
    let args: Vec<Option<VarId>> = if call.bound {
        match cx.typing.call_args.get(&call.value) {
            Some(bound) => bound
                .iter()
                .take(3)
                .map(|b| match b {
                    numba_typeinfer::BoundArg::Var(v) => Some(*v),
                    numba_typeinfer::BoundArg::Const(_) | numba_typeinfer::BoundArg::Pack(_) => {
                        None
                    }
                })
                .collect(),
            None => return false,
        }
    } else {
        call.args.iter().take(3).map(|&v| Some(v)).collect()
    };
    let args: Vec<Option<VarId>> = args
        .into_iter()
        .map(|v| v.filter(|&v| cx.typing.type_of(v).unliteral() != NONE))
        .collect();
    let konst = |cx: &mut Cx<'_>, k: i64, out: &mut Vec<Inst>| {
        let v = cx.var("$arange_bound", INT64, loc);
        let (inst, e) = cx.assign(v, Expr::Const(Constant::Int(k)), loc);
        cx.gen.inits.insert(e);
        out.push(inst);
        v
    };
    // NumPy's `arange(start, stop=None, step=None)`: without a stop the first bound is
    // the stop (`np.arange(7, step=2)`).
    let at = |k: usize| args.get(k).copied().flatten();
    let (start, stop, step) = match (at(0), at(1), at(2)) {
        (Some(stop), None, None) => (konst(cx, 0, out), stop, konst(cx, 1, out)),
        (Some(start), Some(stop), None) => (start, stop, konst(cx, 1, out)),
        (Some(stop), None, Some(step)) => (konst(cx, 0, out), stop, step),
        (Some(start), Some(stop), Some(step)) => (start, stop, step),
        _ => return false,
    };
    fill_by_position(
        cx,
        (target, dtype),
        (ARANGE_COUNT, vec![start, stop, step]),
        (ARANGE, vec![start, step], false),
        ("arange", 2),
        loc,
        out,
        report,
    );
    true
}

/// `a op= b` with `a` an array (Numba's `ConvertInplaceBinop`, which takes array
/// operands; a scalar `b` is taken too): after NumPy's output-shape check, a parfor
/// storing `a[i] op b[i]` (b broadcast, and copied first where it overlaps `a` other
/// than element for element) into `a`, then `target = a`.
#[allow(clippy::too_many_arguments)]
fn inplace_binop(
    cx: &mut Cx<'_>,
    target: VarId,
    value: ExprId,
    (op, lhs, rhs): (numba_ir::BinOp, VarId, VarId),
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let lt = cx.typing.type_of(lhs).unliteral();
    let rt = cx.typing.type_of(rhs).unliteral();
    let Type::Array {
        dtype: ld,
        ndim,
        readonly: false,
        ..
    } = lt.get()
    else {
        return false;
    };
    let Some(rd) = elem_type(rt).or_else(|| rt.is_scalar().then_some(rt)) else {
        return false;
    };
    if ndim == 0 || cx.typing.type_of(target).unliteral() != lt {
        return false;
    }
    // The in-place operator typed on arrays, and its element operation.
    let typed = matches!(
        cx.typing.calltypes.get(&value).map(|s| &s.key),
        Some(ImplKey::Function(k)) if *k == numba_typeinfer::numpy::inplace_key(op)
    );
    let Some(esig) = numba_typeinfer::context::binop_signature(op, ld, rd) else {
        return false;
    };
    if !typed || !esig.ret.is_scalar() {
        return false;
    }
    let mut check = ExtensionNode::new(INPLACE_CHECK, vec![lhs, rhs]);
    if rt.is_array() {
        // Numba's array analysis asserts the operands' sizes equal.
        check
            .attrs
            .push(("assert".into(), sizes_message(cx.ir, &[lhs, rhs], loc)));
    }
    out.push(Inst {
        stmt: Stmt::Extension(Box::new(check)),
        loc,
    });
    let src = if rt.is_array() {
        match cx.unaliased("$inplace_src", (lhs, rhs), loc, out) {
            Some(src) => src,
            None => return false,
        }
    } else {
        rhs
    };
    // The tree: the element operation on the two leaves, by the names it binds them to.
    let la = cx.var("$inplace_lhs", ld, loc);
    let lb = cx.var("$inplace_rhs", rd, loc);
    let r = cx.var("$inplace_out", esig.ret, loc);
    let (op_inst, e) = cx.assign(
        r,
        Expr::BinOp {
            op,
            lhs: la,
            rhs: lb,
        },
        loc,
    );
    cx.typing.calltypes.insert(e, esig.clone());
    let mut blocks = std::collections::BTreeMap::new();
    blocks.insert(
        0,
        Block {
            body: vec![
                op_inst,
                Inst {
                    stmt: Stmt::Return { value: r },
                    loc,
                },
            ],
        },
    );
    let size = cx.size_of(lhs, loc, out);
    let i = cx.index_var(loc);
    let elem = cx.var("$expr_out_var", esig.ret, loc);
    let mut at = ExtensionNode::new(ARRAYEXPR_AT, vec![lhs, i, lhs, src]);
    at.attrs.push(("bind".into(), format!("{},{}", la.0, lb.0)));
    at.blocks = blocks;
    let (get, _) = cx.assign(elem, Expr::Extension(Box::new(at)), loc);
    let set = Inst {
        stmt: Stmt::Extension(Box::new(ExtensionNode::new(SETFLAT, vec![lhs, i, elem]))),
        loc,
    };
    let id = cx.emit(
        FlatLoop {
            index: i,
            size,
            body: vec![get, set],
            params: vec![lhs, src],
            reductions: Vec::new(),
            pattern: "('inplace_binop', '')".into(),
            cost: 3,
        },
        loc,
        out,
        report,
    );
    // A store fusion does not track: nothing moves across it.
    cx.gen.elementwise.remove(&id);
    let (inst, _) = cx.assign(target, Expr::Var(lhs), loc);
    out.push(inst);
    true
}

/// `np.var(a)` / `a.var()` (and `std`) as Numba's parallel version computes it: a first
/// reduction parfor for the mean, then a second summing `|a[i] - mean|^2`
/// (`parfor_abs2`), divided by the size (`parfor_mean`; its `op` attr `sqrt` for `std`).
fn variance(
    cx: &mut Cx<'_>,
    (arr, dtype): (VarId, TypeId),
    (target, ret): (VarId, TypeId),
    name: &str,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    use numba_ir::BinOp;
    use numba_typeinfer::context::binop_signature;
    if !ret.is_float() {
        return false;
    }
    let mean_t = if dtype.is_float() || dtype.is_complex() {
        dtype
    } else {
        numba_typeinfer::types::FLOAT64
    };
    let (Some(add_mean), Some(sub)) = (
        binop_signature(BinOp::Add, mean_t, dtype),
        binop_signature(BinOp::Sub, dtype, mean_t),
    ) else {
        return false;
    };
    let Some(add_ssd) = binop_signature(BinOp::Add, ret, ret) else {
        return false;
    };
    if add_mean.ret.unliteral() != mean_t || add_ssd.ret.unliteral() != ret {
        return false;
    }
    let diff_t = sub.ret.unliteral();
    let size = cx.size_of(arr, loc, out);
    // The mean (Numba's first loop is its `mean`'s, and its pattern says so).
    let mean_acc = cx.var("$mean_acc", mean_t, loc);
    let (inst, e) = cx.assign(mean_acc, Expr::Const(Constant::Int(0)), loc);
    cx.gen.inits.insert(e);
    out.push(inst);
    let index = cx.index_var(loc);
    let (get, elem) = cx.getflat(arr, index, dtype, loc);
    let (step, step_e) = cx.step(mean_acc, (BinOp::Add, elem), add_mean, loc);
    let pattern = cx.internal_pattern("mean", loc);
    cx.emit(
        FlatLoop {
            index,
            size,
            body: vec![get, step],
            params: vec![arr, mean_acc],
            reductions: vec![Reduction::add(mean_acc, step_e)],
            pattern,
            cost: 3,
        },
        loc,
        out,
        report,
    );
    let mean = cx.var("$mean", mean_t, loc);
    let (inst, e) = cx.assign(
        mean,
        Expr::Extension(Box::new(ExtensionNode::new(MEAN, vec![mean_acc, size]))),
        loc,
    );
    cx.gen.posts.insert(e);
    out.push(inst);
    // The sum of squared distances from it.
    let ssd = cx.var("$ssd_acc", ret, loc);
    let (inst, e) = cx.assign(ssd, Expr::Const(Constant::Int(0)), loc);
    cx.gen.inits.insert(e);
    out.push(inst);
    let index = cx.index_var(loc);
    let (get, elem) = cx.getflat(arr, index, dtype, loc);
    let diff = cx.var("$diff", diff_t, loc);
    let (sub_i, sub_e) = cx.assign(
        diff,
        Expr::BinOp {
            op: BinOp::Sub,
            lhs: elem,
            rhs: mean,
        },
        loc,
    );
    cx.typing.calltypes.insert(sub_e, sub);
    let sq = cx.var("$sq", ret, loc);
    let (sq_i, _) = cx.assign(
        sq,
        Expr::Extension(Box::new(ExtensionNode::new(ABS2, vec![diff]))),
        loc,
    );
    let (step, step_e) = cx.step(ssd, (BinOp::Add, sq), add_ssd, loc);
    let pattern = cx.internal_pattern(name, loc);
    cx.emit(
        FlatLoop {
            index,
            size,
            body: vec![get, sub_i, sq_i, step],
            params: vec![arr, mean, ssd],
            reductions: vec![Reduction::add(ssd, step_e)],
            pattern,
            cost: 5,
        },
        loc,
        out,
        report,
    );
    let mut node = ExtensionNode::new(MEAN, vec![ssd, size]);
    if name == "std" {
        node.attrs.push(("op".into(), "sqrt".into()));
    }
    let (inst, e) = cx.assign(target, Expr::Extension(Box::new(node)), loc);
    cx.gen.posts.insert(e);
    out.push(inst);
    true
}

/// The `numpy.random` draws that become parfors, a scalar draw per element: Numba's
/// `random_calls`, and `standard_exponential`.
const RANDOM_DRAWS: &[&str] = &[
    "random",
    "random_sample",
    "sample",
    "ranf",
    "standard_normal",
    "standard_exponential",
    "normal",
    "uniform",
    "exponential",
    "randint",
    "rand",
    "randn",
    "chisquare",
    "weibull",
    "power",
    "geometric",
    "poisson",
    "rayleigh",
    "beta",
    "binomial",
    "f",
    "gamma",
    "lognormal",
    "laplace",
    "triangular",
];

/// `a = np.zeros(shape, ...)` / `np.ones(...)` (Numba's "NumPy mapping" of `zeros` and
/// `ones`) and `numpy.random` draws with a size: the array allocated uninitialised and a
/// parfor storing each element (the constant, or one scalar draw).
fn creation(
    cx: &mut Cx<'_>,
    target: VarId,
    call: &CallSite,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let (sig, key, args, value) = (&call.sig, &call.key, &call.args, call.value);
    let out_t = cx.typing.type_of(target);
    let Some(dtype) = elem_type(out_t) else {
        return false;
    };
    // A 0-d array holds one element: no loop (as in Numba).
    if sig.ret.unliteral() != out_t
        || matches!(out_t.get(), Type::Array { ndim: 0, .. })
        || !matches!(
            out_t.get(),
            Type::Array {
                layout: numba_typeinfer::types::Layout::C,
                ..
            }
        )
    {
        return false;
    }
    let elem = cx.var("$expr_out_var", dtype, loc);
    let (pattern, get, cost, random) = match key.as_str() {
        "numpy.zeros" | "numpy.ones" => {
            let Some(&shape) = args.first() else {
                return false;
            };
            // The allocation is the same call made as `np.empty`.
            if let Some(s) = cx.typing.calltypes.get_mut(&value) {
                s.key = ImplKey::Function("numpy.empty".into());
            }
            cx.gen.inits.insert(value);
            cx.gen.created.insert(target, shape);
            out.push(Inst {
                stmt: Stmt::Assign { target, value },
                loc,
            });
            let one = key == "numpy.ones";
            let (get, _) = cx.assign(elem, Expr::Const(Constant::Int(i64::from(one))), loc);
            let name = if one { "ones" } else { "zeros" };
            (
                format!("('{name} function', 'NumPy mapping')"),
                get,
                2,
                false,
            )
        }
        k => {
            let Some(name) = k.strip_prefix("numpy.random.") else {
                return false;
            };
            if !RANDOM_DRAWS.contains(&name) || call.bound {
                return false;
            }
            // The shape operands and the scalar call's arguments.
            let (shape, scalar_args): (Vec<VarId>, Vec<VarId>) =
                if name == "rand" || name == "randn" {
                    if args.is_empty() {
                        return false;
                    }
                    (args.clone(), Vec::new())
                } else {
                    let Some(params) = numba_typeinfer::np_random::param_names(k) else {
                        return false;
                    };
                    let Some(pos) = params.iter().position(|p| *p == "size") else {
                        return false;
                    };
                    if args.len() != pos + 1 || cx.typing.type_of(args[pos]).unliteral() == NONE {
                        return false;
                    }
                    (vec![args[pos]], args[..pos].to_vec())
                };
            let checked = if numba_typeinfer::np_random::distribution(name).is_some() {
                scalar_args.len()
            } else if name == "randint" {
                // Its check also reads the size: an empty one checks nothing.
                scalar_args.len() + 1
            } else {
                0
            };
            if checked > 0 {
                // The parameters are checked once, before the allocation a raise in the
                // loop would leave behind (`numpy.random.<name>.check`).
                let none = cx.var("$random_check", NONE, loc);
                let (inst, e) = cx.assign(
                    none,
                    Expr::Call {
                        func: call.func,
                        args: args[..checked].to_vec(),
                        kws: Vec::new(),
                        vararg: None,
                        varkwarg: None,
                        form: call.form,
                    },
                    loc,
                );
                cx.typing.calltypes.insert(
                    e,
                    Signature {
                        ret: NONE,
                        args: sig.args[..checked].to_vec(),
                        key: ImplKey::Function(format!("{k}.check")),
                    },
                );
                out.push(inst);
            }
            let (inst, e) = cx.assign(
                target,
                Expr::Extension(Box::new(ExtensionNode::new(PARFOR_EMPTY, shape.clone()))),
                loc,
            );
            cx.gen.inits.insert(e);
            if let [s] = shape.as_slice() {
                cx.gen.created.insert(target, *s);
            }
            out.push(inst);
            let (get, e) = cx.assign(
                elem,
                Expr::Call {
                    func: call.func,
                    args: scalar_args.clone(),
                    kws: Vec::new(),
                    vararg: None,
                    varkwarg: None,
                    form: call.form,
                },
                loc,
            );
            cx.typing.calltypes.insert(
                e,
                Signature {
                    ret: dtype,
                    // The template's parameter types (ints drawn as floats are
                    // converted), as in the sized call.
                    args: scalar_args.iter().zip(&sig.args).map(|(_, &t)| t).collect(),
                    key: sig.key.clone(),
                },
            );
            (
                format!("('{name} function', 'NumPy mapping')"),
                get,
                20,
                true,
            )
        }
    };
    let size = cx.size_of(target, loc, out);
    let index = cx.index_var(loc);
    let set = Inst {
        stmt: Stmt::Extension(Box::new(ExtensionNode::new(
            SETFLAT,
            vec![target, index, elem],
        ))),
        loc,
    };
    let mut params = vec![target];
    if let Stmt::Assign { value, .. } = get.stmt {
        params.extend(cx.ir.expr_uses(cx.ir.expr(value)));
    }
    params.retain(|&v| {
        !matches!(
            cx.typing.type_of(v).get(),
            Type::Function(_) | Type::Module(_)
        )
    });
    let id = cx.emit(
        FlatLoop {
            index,
            size,
            body: vec![get, set],
            params,
            reductions: Vec::new(),
            pattern,
            cost,
        },
        loc,
        out,
        report,
    );
    if random {
        cx.gen.random.insert(id);
    }
    true
}

/// Numba's pattern for a setitem parfor.
/// The pattern Numba reports for a parfor made from a store (`setitem`).
pub(crate) const SETITEM_PATTERN: &str = "('setitem', '')";

/// `out[index] = <fused tree>` (the rewrites' `arrayexpr_setitem`) to a setitem parfor.
fn setitem_expr(
    cx: &mut Cx<'_>,
    node: &ExtensionNode,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let [arr, index, leaves @ ..] = node.operands.as_slice() else {
        return false;
    };
    let ret = node
        .blocks
        .values()
        .flat_map(|b| &b.body)
        .find_map(|i| match i.stmt {
            Stmt::Return { value } => Some(value),
            _ => None,
        });
    let Some(ret) = ret else {
        return false;
    };
    let rt = cx.typing.type_of(ret);
    let (dtype, nd) = match rt.get() {
        Type::Array { dtype, ndim, .. } => (dtype, ndim),
        _ => (rt.unliteral(), 0),
    };
    setitem_view(
        cx,
        (*arr, ret),
        *index,
        leaves.to_vec(),
        node.blocks.clone(),
        (dtype, nd),
        loc,
        out,
        report,
    )
}

/// `out[index] = value`: through a mask of `out`'s rank with a scalar, or into the view
/// a basic index selects (a scalar, or an array broadcast to it).
fn setitem_plain(
    cx: &mut Cx<'_>,
    arr: VarId,
    index: VarId,
    value: VarId,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let at = cx.typing.type_of(arr).unliteral();
    let (it, vt) = (
        cx.typing.type_of(index).unliteral(),
        cx.typing.type_of(value).unliteral(),
    );
    let (Type::Array { ndim, .. }, Some(_)) = (at.get(), elem_type(at)) else {
        return false;
    };
    if !(vt.is_scalar() || elem_type(vt).is_some()) {
        return false;
    }
    // `a[mask] = x`.
    if let Type::Array {
        dtype, ndim: mnd, ..
    } = it.get()
    {
        if dtype != numba_typeinfer::types::BOOLEAN || mnd != ndim {
            return false;
        }
        // `a[mask] = c[mask]` (the same mask variable, `c` of `a`'s rank): element `i`
        // of `c` where the mask is set (Numba's "masked_assign_array").
        let source = match cx.defs.get(&value).map(Vec::as_slice) {
            _ if vt.is_scalar() => None,
            Some(&[e]) => match cx.ir.expr(e) {
                Expr::GetItem { value: c, index: m }
                    if *m == index && nothing_writes_since(cx, out, value) =>
                {
                    Some(*c)
                }
                _ => return false,
            },
            _ => return false,
        };
        let mut checks = vec![arr];
        let value = match source {
            Some(c) => {
                let Type::Array { ndim: cnd, .. } = cx.typing.type_of(c).unliteral().get() else {
                    return false;
                };
                if cnd != ndim {
                    return false;
                }
                checks.push(c);
                cx.masked_copies.push(value);
                // NumPy copies `c[mask]` before storing: `c` overlapping `a` other than
                // element for element is read from a copy.
                match cx.unaliased("$setitem_src", (arr, c), loc, out) {
                    Some(src) => src,
                    None => return false,
                }
            }
            None => value,
        };
        for v in checks {
            out.push(Inst {
                stmt: Stmt::Extension(Box::new(ExtensionNode::new(MASKCHECK, vec![v, index]))),
                loc,
            });
        }
        let size = cx.size_of(arr, loc, out);
        let i = cx.index_var(loc);
        let set = Inst {
            stmt: Stmt::Extension(Box::new(ExtensionNode::new(
                MASKSET,
                vec![arr, index, i, value],
            ))),
            loc,
        };
        let id = cx.emit(
            FlatLoop {
                index: i,
                size,
                body: vec![set],
                params: vec![arr, index, value],
                reductions: Vec::new(),
                pattern: SETITEM_PATTERN.into(),
                cost: 3,
            },
            loc,
            out,
            report,
        );
        // A store fusion does not track: nothing moves across it.
        cx.gen.elementwise.remove(&id);
        return true;
    }
    let (dtype, nd) = match vt.get() {
        Type::Array { dtype, ndim, .. } => (dtype, ndim),
        _ => (vt, 0),
    };
    let mut blocks = std::collections::BTreeMap::new();
    blocks.insert(
        0,
        Block {
            body: vec![Inst {
                stmt: Stmt::Return { value },
                loc,
            }],
        },
    );
    setitem_view(
        cx,
        (arr, value),
        index,
        vec![value],
        blocks,
        (dtype, nd),
        loc,
        out,
        report,
    )
}

/// `v` is assigned earlier in `out` (the block converted so far), and only loads follow
/// it: reading its source later reads what it read.
/// `arr = a[mask]`, a boolean mask of `a`'s rank, with nothing but loads (and `arr.sum`)
/// since: `(a, mask)`, whose set positions the reduction can read instead. The copy goes
/// at the end of the conversion when nothing else reads it.
fn masked_elements(cx: &Cx<'_>, arr: VarId, out: &[Inst]) -> Option<(VarId, VarId)> {
    let &[d] = cx.defs.get(&arr)?.as_slice() else {
        return None;
    };
    let &Expr::GetItem { value: a, index: m } = cx.ir.expr(d) else {
        return None;
    };
    let (
        Type::Array { ndim, .. },
        Type::Array {
            ndim: mnd, dtype, ..
        },
    ) = (
        cx.typing.type_of(a).unliteral().get(),
        cx.typing.type_of(m).unliteral().get(),
    )
    else {
        return None;
    };
    if dtype != numba_typeinfer::types::BOOLEAN || ndim != mnd || a == arr || m == arr {
        return None;
    }
    let pos = out
        .iter()
        .rposition(|i| matches!(i.stmt, Stmt::Assign { target, .. } if target == arr))?;
    out[pos + 1..]
        .iter()
        .all(|i| match i.stmt {
            Stmt::Assign { value, .. } => match cx.ir.expr(value) {
                Expr::Var(_) | Expr::Global { .. } | Expr::FreeVar { .. } | Expr::Const(_) => true,
                Expr::GetAttr { value, .. } => *value == arr,
                _ => false,
            },
            _ => false,
        })
        .then_some((a, m))
}

fn nothing_writes_since(cx: &Cx<'_>, out: &[Inst], v: VarId) -> bool {
    let Some(pos) = out
        .iter()
        .rposition(|i| matches!(i.stmt, Stmt::Assign { target, .. } if target == v))
    else {
        return false;
    };
    out[pos + 1..].iter().all(|i| match i.stmt {
        Stmt::Assign { value, .. } => matches!(
            cx.ir.expr(value),
            Expr::Var(_) | Expr::Global { .. } | Expr::FreeVar { .. } | Expr::Const(_)
        ),
        _ => false,
    })
}

/// The parfor storing the tree `blocks` over `leaves` (of result dtype and rank `ret`)
/// into the view `arr[index]`, element by element; `value` is the stored value's
/// variable (the tree's result), which Numba's assertion names.
#[allow(clippy::too_many_arguments)]
fn setitem_view(
    cx: &mut Cx<'_>,
    (arr, value): (VarId, VarId),
    index: VarId,
    leaves: Vec<VarId>,
    blocks: std::collections::BTreeMap<Label, Block>,
    (dtype, ret_nd): (TypeId, u32),
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> bool {
    let at = cx.typing.type_of(arr).unliteral();
    let it = cx.typing.type_of(index).unliteral();
    if elem_type(at).is_none() || !dtype.is_scalar() {
        return false;
    }
    let Some((view_t, false)) = numba_typeinfer::numpy::index_array(at, it) else {
        return false;
    };
    if !matches!(view_t.get(), Type::Array { ndim, .. } if ndim >= 1) {
        return false;
    }
    if leaves.iter().all(|&v| !cx.typing.type_of(v).is_array()) && whole_array_index(cx, index, at)
    {
        // `a[:] = scalar tree`: a loop over `a`'s own flat positions, which fuses with
        // the loops before and after it over `a` (Numba fuses `a = np.ones(n); a[:] = 7`
        // into one). Scalars need none of a view's broadcasting checks.
        store_loop(
            cx,
            arr,
            &leaves,
            leaves.clone(),
            blocks,
            dtype,
            loc,
            out,
            report,
        );
        return true;
    }
    let view = cx.var("$setitem_view", view_t, loc);
    let mut ops = vec![arr, index];
    ops.extend(&leaves);
    let mut sv = ExtensionNode::new(SETVIEW, ops);
    sv.attrs.push(("ndim".into(), ret_nd.to_string()));
    if leaves.iter().any(|&v| cx.typing.type_of(v).is_array()) {
        // Numba's array analysis asserts the leaves' sizes equal (the expression's own
        // assertion), then the value's against the target's.
        if let Some(msg) = size_assertion(cx.ir, cx.typing, &leaves, loc) {
            sv.attrs.push(("assert_leaves".into(), msg));
        }
        sv.attrs
            .push(("assert".into(), sizes_message(cx.ir, &[arr, value], loc)));
    }
    let (inst, _) = cx.assign(view, Expr::Extension(Box::new(sv)), loc);
    out.push(inst);
    let mut srcs = Vec::with_capacity(leaves.len());
    for &leaf in &leaves {
        let src = cx.unaliased("$setitem_src", (view, leaf), loc, out);
        srcs.push(src.unwrap_or(leaf));
    }
    let id = store_loop(cx, view, &leaves, srcs, blocks, dtype, loc, out, report);
    // A store fusion does not track: nothing moves across it.
    cx.gen.elementwise.remove(&id);
    true
}

/// The parfor storing the tree `blocks` (over `leaves`, read through `operands`: the
/// leaves or their unaliased copies) into every flat position of `dst`: its id.
#[allow(clippy::too_many_arguments)]
fn store_loop(
    cx: &mut Cx<'_>,
    dst: VarId,
    leaves: &[VarId],
    operands: Vec<VarId>,
    blocks: std::collections::BTreeMap<Label, Block>,
    dtype: TypeId,
    loc: Loc,
    out: &mut Vec<Inst>,
    report: &mut ParforReport,
) -> usize {
    let size = cx.size_of(dst, loc, out);
    let i = cx.index_var(loc);
    let elem = cx.var("$expr_out_var", dtype, loc);
    let mut at_ops = vec![dst, i];
    at_ops.extend(&operands);
    let mut at_node = ExtensionNode::new(ARRAYEXPR_AT, at_ops);
    let names: Vec<String> = leaves.iter().map(|v| v.0.to_string()).collect();
    at_node.attrs.push(("bind".into(), names.join(",")));
    at_node.blocks = blocks;
    let (get, _) = cx.assign(elem, Expr::Extension(Box::new(at_node)), loc);
    let set = Inst {
        stmt: Stmt::Extension(Box::new(ExtensionNode::new(SETFLAT, vec![dst, i, elem]))),
        loc,
    };
    let mut params = vec![dst];
    params.extend(operands);
    cx.emit(
        FlatLoop {
            index: i,
            size,
            body: vec![get, set],
            params,
            reductions: Vec::new(),
            pattern: SETITEM_PATTERN.into(),
            cost: 2 + leaves.len() as i64,
        },
        loc,
        out,
        report,
    )
}

/// Whether `index` selects every element of an array of type `at`: full slices
/// (`a[:]`, `a[:, :]`, `slice(None, None)` each), so that the view's flat positions are
/// the array's own.
fn whole_array_index(cx: &Cx<'_>, index: VarId, at: TypeId) -> bool {
    let Type::Array { ndim, .. } = at.get() else {
        return false;
    };
    let full = |v: VarId| match crate::prange::single_def(cx.ir, cx.defs, v) {
        Some(Expr::Call {
            func, args, kws, ..
        }) => {
            kws.is_empty()
                && matches!(cx.typing.type_of(*func).get(), Type::Function(k) if k == "slice")
                && args
                    .iter()
                    .all(|&a| cx.typing.type_of(a).unliteral() == NONE)
        }
        _ => false,
    };
    match crate::prange::single_def(cx.ir, cx.defs, index) {
        Some(Expr::BuildTuple { items }) => {
            items.len() as u32 <= ndim && items.iter().all(|&v| full(v))
        }
        _ => full(index),
    }
}
