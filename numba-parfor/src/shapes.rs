//! Array analysis, the part fusion needs (Numba's `ArrayAnalysis` equivalence sets).
//!
//! **Size terms.** Every array has a class (arrays of one class have equal shapes) and a
//! term per axis, `(class, axis)`, plus `(class, -1)` for its total size (a 1-d array's
//! total is its axis 0). Integers are tied to terms: `len(a)`, `a.shape[d]`, `a.size`,
//! and the integers an array was created from (`np.empty(n)`, `np.zeros((m, n))`, a
//! `reshape`, a NumPy parfor's allocation). Constants have terms of their own, so
//! `np.ones(5)` and `prange(5)` agree. Terms known equal are joined in a union-find.
//!
//! **Conditional joins.** An array expression's result (`parfor_alloc`) has its leaves'
//! shape unless one of them stretches an axis of run-time length 1, which NumPy allows
//! and Numba's array analysis rejects with its `Sizes of a, b` AssertionError. The
//! result's terms are joined to its leaves' only conditionally, in a second union-find
//! that also holds every certain join; each of its classes remembers the allocations
//! whose conditions it rests on. A comparison that holds only conditionally records
//! those allocations; when fusion relies on it, [`Shapes::commit`] makes them strict
//! (attr `strict`: each leaf's axis equal to the result's, as Numba asserts). So an
//! expression keeps NumPy's broadcasting unless fusion needs the equality Numba assumes,
//! and then raises exactly Numba's error.

use std::collections::{BTreeSet, HashMap};

use numba_bytecode::Constant;
use numba_ir::{BinOp, Expr, ExprId, FunctionIR, Stmt, VarId};
use numba_typeinfer::types::Type;
use numba_typeinfer::{ImplKey, TypingResult};

use crate::node::Bound;
use crate::numpy::{Generated, PARFOR_ALLOC, PARFOR_SHAPE};

/// `(class, axis)`; axis -1 is the total size.
type Term = (u32, i64);

/// The class whose terms stand for constants: `(CONSTANTS, k)` is the integer `k`.
const CONSTANTS: u32 = u32::MAX;

/// The attribute [`Shapes::commit`] sets on an allocation fusion relies on.
pub const STRICT: &str = "strict";

/// How an integer variable was computed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum IntKey {
    Const(i64),
    Var(VarId),
    Op(BinOp, Box<IntKey>, Box<IntKey>),
}

/// A union-find over terms.
#[derive(Debug, Default)]
struct Uf {
    parent: HashMap<Term, Term>,
}

impl Uf {
    fn find(&self, mut t: Term) -> Term {
        while let Some(&p) = self.parent.get(&t) {
            t = p;
        }
        t
    }

    /// Join the classes of `a` and `b`: the surviving root and the absorbed one.
    fn union(&mut self, a: Term, b: Term) -> Option<(Term, Term)> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return None;
        }
        self.parent.insert(rb, ra);
        Some((ra, rb))
    }
}

/// The outcome of a comparison.
enum Same {
    Yes,
    /// Equal once these allocations are strict.
    If(BTreeSet<ExprId>),
    No,
}

impl Same {
    fn and(self, other: Same) -> Same {
        match (self, other) {
            (Same::No, _) | (_, Same::No) => Same::No,
            (Same::Yes, x) | (x, Same::Yes) => x,
            (Same::If(mut a), Same::If(b)) => {
                a.extend(b);
                Same::If(a)
            }
        }
    }
}

/// Equivalence classes of array shapes, and of the sizes they give.
#[derive(Debug, Default)]
pub(crate) struct Shapes {
    class: HashMap<VarId, u32>,
    rank: HashMap<u32, u32>,
    /// Integer variables: the term they equal.
    size: HashMap<VarId, Term>,
    /// `a.shape` tuples: the array they came from.
    shape_tuple: HashMap<VarId, VarId>,
    /// Tuples of integers built in the function (`(m, n)`).
    tuples: HashMap<VarId, Vec<VarId>>,
    /// Integers by how they were computed (constants, and `+ - *` of such), so that two
    /// computations of `n - 1` compare equal.
    ints: HashMap<VarId, IntKey>,
    /// Computed integers (`n - 1`) that are array extents: the term.
    key_terms: HashMap<IntKey, Term>,
    /// Variables assigned more than once never share a class.
    multi: BTreeSet<VarId>,
    /// The definitions of singly assigned variables.
    defs: HashMap<VarId, ExprId>,
    /// N-d arrays created from one shape tuple variable: their class.
    shape_class: HashMap<VarId, u32>,
    certain: Uf,
    maybe: Uf,
    /// Per root of `maybe`: the allocations its joins rest on.
    conditions: HashMap<Term, BTreeSet<ExprId>>,
    /// The allocations the comparisons since [`Shapes::begin`] rested on.
    needed: BTreeSet<ExprId>,
    next: u32,
}

fn ndim(typing: &TypingResult, v: VarId) -> Option<u32> {
    match typing.type_of(v).unliteral().get() {
        Type::Array { ndim, .. } => Some(ndim),
        _ => None,
    }
}

fn is_int(typing: &TypingResult, v: VarId) -> bool {
    typing.type_of(v).unliteral().is_integer()
}

impl Shapes {
    fn fresh(&mut self) -> u32 {
        self.next += 1;
        self.next
    }

    fn of(&mut self, v: VarId) -> u32 {
        if self.multi.contains(&v) {
            return self.fresh();
        }
        if let Some(&c) = self.class.get(&v) {
            return c;
        }
        let c = self.fresh();
        self.class.insert(v, c);
        c
    }

    /// `v`'s class, its rank recorded.
    fn array(&mut self, typing: &TypingResult, v: VarId) -> u32 {
        let c = self.of(v);
        if let Some(nd) = ndim(typing, v) {
            self.rank.insert(c, nd);
        }
        c
    }

    fn set_class(&mut self, typing: &TypingResult, v: VarId, c: u32) {
        self.class.insert(v, c);
        if let Some(nd) = ndim(typing, v) {
            self.rank.insert(c, nd);
        }
    }

    /// A class's total size: its axis 0 for a 1-d class.
    fn total(&self, c: u32) -> Term {
        if self.rank.get(&c) == Some(&1) {
            (c, 0)
        } else {
            (c, -1)
        }
    }

    fn join(&mut self, a: Term, b: Term) {
        self.certain.union(a, b);
        self.join_maybe(a, b, None);
    }

    fn join_maybe(&mut self, a: Term, b: Term, on: Option<ExprId>) {
        let (root, gone) = match self.maybe.union(a, b) {
            Some(pair) => pair,
            None => {
                let r = self.maybe.find(a);
                (r, r)
            }
        };
        let mut set = self.conditions.remove(&root).unwrap_or_default();
        if gone != root {
            set.extend(self.conditions.remove(&gone).unwrap_or_default());
        }
        set.extend(on);
        if !set.is_empty() {
            self.conditions.insert(root, set);
        }
    }

    /// The term an integer variable is known to equal.
    fn int_term(&self, v: VarId) -> Option<Term> {
        if self.multi.contains(&v) {
            return None;
        }
        self.size
            .get(&v)
            .copied()
            .or_else(|| match self.int_key(v) {
                IntKey::Const(k) => Some((CONSTANTS, k)),
                k @ IntKey::Op(..) => self.key_terms.get(&k).copied(),
                IntKey::Var(_) => None,
            })
    }

    pub(crate) fn analyze(ir: &FunctionIR, typing: &TypingResult, gen: &Generated) -> Shapes {
        let mut s = Shapes::default();
        let mut seen = BTreeSet::new();
        for b in ir.blocks.values() {
            for i in &b.body {
                if let Stmt::Assign { target, value } = i.stmt {
                    if !seen.insert(target) {
                        s.multi.insert(target);
                    }
                    s.defs.insert(target, value);
                }
            }
        }
        for b in ir.blocks.values() {
            for i in &b.body {
                let Stmt::Assign { target, value } = i.stmt else {
                    continue;
                };
                if !s.multi.contains(&target) {
                    s.statement(ir, typing, gen, target, value);
                }
            }
        }
        s
    }

    fn statement(
        &mut self,
        ir: &FunctionIR,
        typing: &TypingResult,
        gen: &Generated,
        target: VarId,
        value: ExprId,
    ) {
        let e = ir.expr(value);
        if is_int(typing, target) {
            self.integer(typing, target, e);
            return;
        }
        if let Expr::BuildTuple { items } = e {
            if items.iter().all(|&v| is_int(typing, v)) {
                self.tuples.insert(target, items.clone());
            }
            return;
        }
        if !typing.type_of(target).unliteral().is_array() {
            if let Expr::GetAttr { value: arr, attr } = e {
                if attr == "shape" && typing.type_of(*arr).is_array() {
                    self.shape_tuple.insert(target, *arr);
                }
            }
            return;
        }
        match e {
            Expr::Var(src) => {
                let c = self.array(typing, *src);
                self.set_class(typing, target, c);
            }
            Expr::Extension(node) if node.kind == PARFOR_ALLOC || node.kind == PARFOR_SHAPE => {
                let strictable = node.attrs.iter().any(|(k, _)| k == "assert");
                self.allocation(typing, target, &node.operands, strictable.then_some(value));
            }
            _ if gen.created.contains_key(&target) => {
                self.created(typing, target, gen.created[&target], false);
            }
            Expr::Call {
                func,
                args,
                kws,
                vararg: None,
                varkwarg: None,
                ..
            } if !kws.iter().any(|(k, _)| k == "shape") => {
                let Some(key) = typing.calltypes.get(&value).and_then(|s| match &s.key {
                    ImplKey::Function(k) => Some(k.as_str()),
                    _ => None,
                }) else {
                    return;
                };
                // A method's arguments, its receiver first (`a.reshape(n)`).
                let mut all = Vec::new();
                if key.starts_with("array.") {
                    let def = (!self.multi.contains(func))
                        .then(|| self.defs.get(func))
                        .flatten();
                    match def.map(|&d| ir.expr(d)) {
                        Some(Expr::GetAttr { value: a, .. }) => all.push(*a),
                        _ => return,
                    }
                }
                all.extend(args.iter().copied());
                let like = |typing: &TypingResult, v: &VarId| {
                    typing.type_of(*v).unliteral().is_array()
                        && ndim(typing, *v) == ndim(typing, target)
                };
                match (key, all.as_slice()) {
                    ("numpy.empty" | "numpy.zeros" | "numpy.ones", [shape, ..])
                    | ("numpy.full", [shape, _, ..]) => self.created(typing, target, *shape, false),
                    (
                        "numpy.empty_like"
                        | "numpy.zeros_like"
                        | "numpy.ones_like"
                        | "numpy.copy"
                        | "numpy.ascontiguousarray"
                        | "numpy.asfortranarray"
                        | "array.copy",
                        [a, ..],
                    )
                    | ("numpy.full_like", [a, _, ..])
                        if like(typing, a) =>
                    {
                        let c = self.array(typing, *a);
                        self.set_class(typing, target, c);
                    }
                    ("numpy.reshape" | "array.reshape", [_, shape]) => {
                        self.created(typing, target, *shape, true)
                    }
                    // `a.reshape(m, n)`: the dimensions as separate arguments.
                    ("array.reshape", [_, dims @ ..]) if dims.len() > 1 => {
                        self.created_from(typing, target, dims.to_vec(), true)
                    }
                    ("array.ravel" | "array.flatten" | "numpy.ravel", [a])
                        if typing.type_of(*a).unliteral().is_array() =>
                    {
                        let ca = self.array(typing, *a);
                        let c = self.array(typing, target);
                        let t = self.total(ca);
                        self.join((c, 0), t);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn integer(&mut self, typing: &TypingResult, target: VarId, e: &Expr) {
        let key = match e {
            Expr::Const(Constant::Int(k)) => Some(IntKey::Const(*k)),
            Expr::Var(src) => {
                if let Some(&t) = self.size.get(src) {
                    if !self.multi.contains(src) {
                        self.size.insert(target, t);
                    }
                }
                Some(self.int_key(*src))
            }
            Expr::BinOp { op, lhs, rhs }
                if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul)
                    && is_int(typing, *lhs)
                    && is_int(typing, *rhs) =>
            {
                Some(IntKey::Op(
                    *op,
                    Box::new(self.int_key(*lhs)),
                    Box::new(self.int_key(*rhs)),
                ))
            }
            _ => None,
        };
        if let Some(k) = key {
            self.ints.insert(target, k);
        }
        match e {
            Expr::GetAttr { value: arr, attr }
                if attr == "size" && typing.type_of(*arr).is_array() =>
            {
                let c = self.array(typing, *arr);
                let t = self.total(c);
                self.size.insert(target, t);
            }
            Expr::StaticGetItem {
                value: t, index, ..
            } if *index >= 0 && self.is_shape_tuple(*t) => {
                let arr = self.shape_tuple[t];
                let c = self.array(typing, arr);
                self.size.insert(target, (c, *index));
            }
            Expr::Call { func, args, .. }
                if args.len() == 1
                    && typing.type_of(args[0]).is_array()
                    && matches!(typing.type_of(*func).get(), Type::Function(k) if k == "len") =>
            {
                let c = self.array(typing, args[0]);
                self.size.insert(target, (c, 0));
            }
            _ => {}
        }
    }

    /// A parfor's result array: its leaves' class when they all have its rank and one
    /// class; otherwise a class of its own, joined axis by axis (aligned on the right) to
    /// each leaf on the condition that `alloc` is strict.
    fn allocation(
        &mut self,
        typing: &TypingResult,
        target: VarId,
        operands: &[VarId],
        alloc: Option<ExprId>,
    ) {
        let nd = ndim(typing, target).unwrap_or(0);
        let arrays: Vec<VarId> = operands
            .iter()
            .copied()
            .filter(|&v| typing.type_of(v).unliteral().is_array())
            .collect();
        let classes: BTreeSet<u32> = arrays.iter().map(|&v| self.array(typing, v)).collect();
        let same_rank = arrays.iter().all(|&v| ndim(typing, v) == Some(nd));
        if same_rank && classes.len() == 1 {
            let c = *classes.iter().next().expect("one class");
            self.set_class(typing, target, c);
            return;
        }
        let c = self.fresh();
        self.set_class(typing, target, c);
        let Some(alloc) = alloc else {
            return;
        };
        for &leaf in &arrays {
            let (cl, r) = (self.array(typing, leaf), ndim(typing, leaf).unwrap_or(0));
            for j in 0..r {
                let d = i64::from(nd - r + j);
                self.join_maybe((c, d), (cl, i64::from(j)), Some(alloc));
            }
            if r == nd && nd > 1 {
                self.join_maybe((c, -1), (cl, -1), Some(alloc));
            }
        }
    }

    /// An array created with the shape `shape` (an integer or a tuple of integers). With
    /// `extents_only` (a `reshape`, where -1 stands for an inferred size), only integers
    /// known to be array extents or non-negative constants count.
    fn created(&mut self, typing: &TypingResult, target: VarId, shape: VarId, extents_only: bool) {
        if self.multi.contains(&shape) {
            return;
        }
        if let Some(&arr) = self.shape_tuple.get(&shape) {
            if ndim(typing, arr) == ndim(typing, target) {
                let c = self.array(typing, arr);
                self.set_class(typing, target, c);
            }
            return;
        }
        // Arrays created from one shape tuple variable share a class (not reshapes: a -1
        // in the tuple stands for a size each source infers for itself).
        if !extents_only && ndim(typing, target).is_some_and(|nd| nd > 1) {
            match self.shape_class.get(&shape) {
                Some(&c) => {
                    self.set_class(typing, target, c);
                    return;
                }
                None => {
                    let c = self.array(typing, target);
                    self.shape_class.insert(shape, c);
                }
            }
        }
        let items = if is_int(typing, shape) {
            vec![shape]
        } else if let Some(items) = self.tuples.get(&shape) {
            items.clone()
        } else {
            return;
        };
        self.created_from(typing, target, items, extents_only);
    }

    fn created_from(
        &mut self,
        typing: &TypingResult,
        target: VarId,
        items: Vec<VarId>,
        extents_only: bool,
    ) {
        if ndim(typing, target) != Some(items.len() as u32) {
            return;
        }
        let c = self.array(typing, target);
        for (d, v) in items.into_iter().enumerate() {
            if self.multi.contains(&v) {
                continue;
            }
            let here = (c, d as i64);
            match self.int_term(v) {
                Some((CONSTANTS, k)) if extents_only && k < 0 => continue,
                Some(t) => self.join(here, t),
                None if extents_only => continue,
                None => {}
            }
            // The integer is that extent (messages name sizes by such variables), and so
            // is any other computation of it.
            let t = *self.size.entry(v).or_insert(here);
            if let k @ IntKey::Op(..) = self.int_key(v) {
                self.key_terms.entry(k).or_insert(t);
            }
        }
    }

    fn int_key(&self, v: VarId) -> IntKey {
        if self.multi.contains(&v) {
            return IntKey::Var(v);
        }
        self.ints.get(&v).cloned().unwrap_or(IntKey::Var(v))
    }

    fn term_eq(&self, a: Term, b: Term) -> Same {
        if self.certain.find(a) == self.certain.find(b) {
            return Same::Yes;
        }
        let root = self.maybe.find(a);
        if root != self.maybe.find(b) {
            return Same::No;
        }
        Same::If(self.conditions.get(&root).cloned().unwrap_or_default())
    }

    fn key_term(&self, k: &IntKey) -> Option<Term> {
        match k {
            IntKey::Const(c) => Some((CONSTANTS, *c)),
            IntKey::Var(v) => self.int_term(*v),
            IntKey::Op(..) => self.key_terms.get(k).copied(),
        }
    }

    fn key_eq(&self, x: &IntKey, y: &IntKey) -> Same {
        if x == y {
            return Same::Yes;
        }
        if let (Some(p), Some(q)) = (self.key_term(x), self.key_term(y)) {
            if let s @ (Same::Yes | Same::If(_)) = self.term_eq(p, q) {
                return s;
            }
        }
        match (x, y) {
            (IntKey::Op(o1, l1, r1), IntKey::Op(o2, l2, r2)) if o1 == o2 => {
                match self.key_eq(l1, l2).and(self.key_eq(r1, r2)) {
                    Same::No if matches!(o1, BinOp::Add | BinOp::Mul) => {
                        self.key_eq(l1, r2).and(self.key_eq(r1, l2))
                    }
                    s => s,
                }
            }
            _ => Same::No,
        }
    }

    /// Record what a conditional answer rests on.
    fn holds(&mut self, s: Same) -> bool {
        match s {
            Same::Yes => true,
            Same::If(on) => {
                self.needed.extend(on);
                true
            }
            Same::No => false,
        }
    }

    /// Whether two loop bounds are known equal.
    pub(crate) fn same_size(&mut self, a: Bound, b: Bound) -> bool {
        let key = |s: &Shapes, x: Bound| match x {
            Bound::Const(c) => IntKey::Const(c),
            Bound::Var(v) => s.int_key(v),
        };
        let (ka, kb) = (key(self, a), key(self, b));
        let same = match (a, b) {
            (Bound::Var(x), Bound::Var(y)) if x == y => Same::Yes,
            _ => self.key_eq(&ka, &kb),
        };
        self.holds(same)
    }

    /// Whether two arrays are known to have equal shapes. Multiply-assigned variables get
    /// a fresh class from `of`, so never compare equal.
    pub(crate) fn same_shape(&mut self, a: VarId, b: VarId) -> bool {
        let (ca, cb) = (self.of(a), self.of(b));
        if a == b || ca == cb {
            return true;
        }
        let same = match (self.rank.get(&ca).copied(), self.rank.get(&cb).copied()) {
            (Some(ra), Some(rb)) if ra == rb => (0..i64::from(ra))
                .map(|d| self.term_eq((ca, d), (cb, d)))
                .fold(Same::Yes, Same::and),
            _ => Same::No,
        };
        self.holds(same)
    }

    /// Whether `t` is an array's `shape` tuple (assigned once).
    pub(crate) fn is_shape_tuple(&self, t: VarId) -> bool {
        self.shape_tuple.contains_key(&t) && !self.multi.contains(&t)
    }

    /// Start a fusion attempt: forget what earlier comparisons rested on.
    pub(crate) fn begin(&mut self) {
        self.needed.clear();
    }

    /// The attempt succeeded: make the allocations its comparisons rested on strict.
    pub(crate) fn commit(&mut self, ir: &mut FunctionIR) {
        for e in std::mem::take(&mut self.needed) {
            if let Expr::Extension(node) = &mut ir.exprs[e.0 as usize] {
                if !node.attrs.iter().any(|(k, _)| k == STRICT) {
                    node.attrs.push((STRICT.into(), "1".into()));
                }
            }
        }
    }

    /// User variables (no `$` temporaries) holding the same size as `v`, for messages.
    pub(crate) fn size_names<'a>(&self, ir: &'a FunctionIR, v: VarId) -> Vec<&'a str> {
        let Some(t) = self.size.get(&v) else {
            return Vec::new();
        };
        let root = self.certain.find(*t);
        self.size
            .iter()
            .filter(|(_, &k)| self.certain.find(k) == root)
            .map(|(&w, _)| ir.var_name(w))
            .filter(|n| !n.starts_with('$'))
            .collect()
    }
}
