//! The inference engine: propagate types over the IR to a fixpoint.
//!
//! Every assignment constrains its target to (the unification of) the types its right-hand
//! sides produce; loops make this iterative. Types only ever widen (unify is monotone on the
//! numeric lattice), so the fixpoint is reached in a few passes. A call whose result is not
//! known yet (operands untyped, or a recursive call still being compiled) is skipped and
//! retried on the next pass. Errors are reported once the fixpoint is reached, for the first
//! statement (in block order) that still fails.

use std::collections::HashMap;

use numba_ir::{Expr, ExprId, FunctionIR, Stmt, VarId};

use crate::context::{typeof_const, CallOutcome, CalleeResolver, TypingContext};
use crate::conv::tuple_items;
use crate::error::TypingError;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// The implementation key of a call to a C function (`ExternalFunctionPointer`): the
/// signature's first argument is the function pointer.
pub const C_CALL_KEY: &str = "ctypes.call";

/// One argument of a call as the callee receives it, after keywords and defaults were
/// bound to its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundArg {
    Var(VarId),
    /// A parameter left to its default value.
    Const(numba_bytecode::Constant),
    /// A `*args` parameter: the tuple of these arguments.
    Pack(Vec<VarId>),
}

/// The side tables inference produces; the IR itself is untouched.
#[derive(Debug, Clone, PartialEq)]
pub struct TypingResult {
    /// Type of every variable, indexed by `VarId`.
    pub typemap: Vec<TypeId>,
    /// Resolved signature of every call, operator and conversion expression.
    pub calltypes: HashMap<ExprId, Signature>,
    pub return_type: TypeId,
    pub arg_types: Vec<TypeId>,
    /// Calls whose arguments are not simply the call's positional arguments (keywords,
    /// defaults): the arguments in parameter order.
    pub call_args: HashMap<ExprId, Vec<BoundArg>>,
    /// `target[index] = value` statements an extension's `operator.setitem` implements
    /// (a jitclass's `__setitem__`): the call's signature, by the statement's variables
    /// (a statement has no expression id; variables have one type each).
    pub setitem_calls: HashMap<(VarId, VarId, VarId), Signature>,
    /// `del target[index]` statements an extension's `operator.delitem` implements.
    pub delitem_calls: HashMap<(VarId, VarId), Signature>,
    /// `target.attr = value` statements an extension method implements (a jitclass
    /// property's setter, method `SETTER_PREFIX + attr`): the call's signature.
    pub setattr_calls: HashMap<(VarId, String, VarId), Signature>,
}

/// The method name under which a jitclass property's setter is registered.
pub const SETTER_PREFIX: &str = "__numba_rs_set__";

impl TypingResult {
    pub fn type_of(&self, v: VarId) -> TypeId {
        self.typemap[v.0 as usize]
    }
}

/// Bounds the number of passes; real functions converge in a handful.
const MAX_PASSES: usize = 100;

struct Engine<'a> {
    ir: &'a FunctionIR,
    ctx: &'a dyn TypingContext,
    callees: &'a dyn CalleeResolver,
    self_id: Option<u64>,
    arg_types: &'a [TypeId],
    typemap: Vec<Option<TypeId>>,
    calltypes: HashMap<ExprId, Signature>,
    call_args: HashMap<ExprId, Vec<BoundArg>>,
    setitem_calls: HashMap<(VarId, VarId, VarId), Signature>,
    delitem_calls: HashMap<(VarId, VarId), Signature>,
    setattr_calls: HashMap<(VarId, String, VarId), Signature>,
    ret: Option<TypeId>,
    changed: bool,
    /// The variable the expression being typed is assigned to (for error messages).
    target: Option<VarId>,
    /// In a generator: the unified type of the yielded values so far, and every type
    /// yielded.
    yield_ty: Option<TypeId>,
    yield_seen: Vec<TypeId>,
    /// Whether the generator reads the value of a `yield` expression (what `send`
    /// passes in); when it does not, a yield evaluates to `none` as in Numba.
    yield_used: bool,
    /// Variables whose type `locals=` declares.
    declared: HashMap<VarId, TypeId>,
    /// Array comprehensions (numba_ir::comprehension): each variable naming an
    /// `empty_inferred` allocation or a view of one, with the allocation's variable.
    inferred_roots: HashMap<VarId, VarId>,
    /// The dtype each allocation's stores give it.
    inferred_dtypes: HashMap<VarId, TypeId>,
    /// Each variable's defining expressions, computed when an empty list is refined.
    defs: std::sync::OnceLock<HashMap<VarId, Vec<ExprId>>>,
}

/// Numba's help after an empty list's imprecise type.
const LIST_HELP: &str = "\n\nFor Numba to be able to compile a list, the list must have a known and
precise type that can be inferred from the other variables. Whilst sometimes
the type of empty lists can be inferred, this is not always the case, see this
documentation for help:

https://numba.readthedocs.io/en/stable/user/troubleshoot.html#my-code-has-an-untyped-list-problem
";

/// The typing key of numba_ir's `empty_inferred` intrinsic.
const EMPTY_INFERRED_KEY: &str = "intrinsic.empty_inferred";

/// Every variable naming an `empty_inferred` allocation (or a copy or item view of one),
/// with the allocation's variable.
fn comprehension_roots(ir: &FunctionIR) -> HashMap<VarId, VarId> {
    let intrinsic = |e: &Expr| {
        matches!(e, Expr::Global { value, .. }
            if matches!(&value.kind, numba_ir::GlobalKind::Intrinsic(n) if n == numba_ir::comprehension::EMPTY_INFERRED))
    };
    // Most functions have no array comprehension: one scan of the expressions.
    if !ir.exprs.iter().any(intrinsic) {
        return HashMap::new();
    }
    let mut defs: HashMap<VarId, &Expr> = HashMap::new();
    for b in ir.blocks.values() {
        for inst in &b.body {
            if let Stmt::Assign { target, value } = inst.stmt {
                defs.insert(target, ir.expr(value));
            }
        }
    }
    let is_intrinsic = |f: &VarId| defs.get(f).is_some_and(|e| intrinsic(e));
    let mut roots: HashMap<VarId, VarId> = defs
        .iter()
        .filter(|(_, e)| matches!(e, Expr::Call { func, .. } if is_intrinsic(func)))
        .map(|(v, _)| (*v, *v))
        .collect();
    if roots.is_empty() {
        return roots;
    }
    loop {
        let mut grew = false;
        for (v, e) in &defs {
            let src = match e {
                Expr::Var(s) | Expr::Cast { value: s } => s,
                Expr::GetItem { value, .. } | Expr::StaticGetItem { value, .. } => value,
                _ => continue,
            };
            if let Some(&r) = roots.get(src) {
                if roots.insert(*v, r).is_none() {
                    grew = true;
                }
            }
        }
        if !grew {
            return roots;
        }
    }
}

/// The variables `locals` names: each SSA version (`c`, `c.1`, ...) of a named variable.
fn declared_locals(ir: &FunctionIR, locals: &[(String, TypeId)]) -> HashMap<VarId, TypeId> {
    let mut out = HashMap::new();
    if locals.is_empty() {
        return out;
    }
    for (k, v) in ir.vars.iter().enumerate() {
        let base = match v.name.rsplit_once('.') {
            Some((b, n)) if n.chars().all(|c| c.is_ascii_digit()) => b,
            _ => v.name.as_str(),
        };
        if let Some((_, t)) = locals.iter().find(|(n, _)| n == base) {
            out.insert(VarId(k as u32), *t);
        }
    }
    out
}

/// Whether any `yield` expression's value is read by the function (beyond its `del`).
fn yield_value_used(ir: &FunctionIR) -> bool {
    let du = numba_ir::utils::DefUse::compute(ir);
    ir.blocks
        .values()
        .flat_map(|b| &b.body)
        .any(|inst| match &inst.stmt {
            Stmt::Assign { target, value } if matches!(ir.expr(*value), Expr::Yield { .. }) => du
                .uses
                .get(target)
                .into_iter()
                .flatten()
                .any(|&(l, i)| !matches!(ir.blocks[&l].body[i].stmt, Stmt::Del { .. })),
            _ => false,
        })
}

/// Infer the types of `ir` for the given argument types.
///
/// `self_id` is the dispatcher id of the function being compiled, so that a recursive call
/// with the same argument types uses the return type inferred so far.
pub fn infer(
    ir: &FunctionIR,
    arg_types: &[TypeId],
    ctx: &dyn TypingContext,
    callees: &dyn CalleeResolver,
    self_id: Option<u64>,
) -> Result<TypingResult, TypingError> {
    infer_with_locals(ir, arg_types, &[], ctx, callees, self_id)
}

/// The types inference finds without reporting what fails (Numba's partial type
/// inference): what is known of each variable after the fixpoint, `None` where nothing
/// is. The pipeline folds the literal answers of `isinstance` from it and prunes the
/// branches they decide before typing the function in full.
pub fn partial_types(
    ir: &FunctionIR,
    arg_types: &[TypeId],
    locals: &[(String, TypeId)],
    ctx: &dyn TypingContext,
    callees: &dyn CalleeResolver,
    self_id: Option<u64>,
) -> Vec<Option<TypeId>> {
    if arg_types.len() != ir.arg_names.len() {
        return vec![None; ir.vars.len()];
    }
    let mut e = Engine::new(ir, arg_types, locals, ctx, callees, self_id);
    // What fails is left untyped: the partial answer is whatever the passes reached.
    let _ = e.fixpoint();
    e.typemap
}

/// [`infer`], with the declared types of local variables (Numba's `locals=`): every
/// version of a variable named there has that type, and the values assigned to it are
/// converted (`c = a / b` with `c` declared int64 truncates).
pub fn infer_with_locals(
    ir: &FunctionIR,
    arg_types: &[TypeId],
    locals: &[(String, TypeId)],
    ctx: &dyn TypingContext,
    callees: &dyn CalleeResolver,
    self_id: Option<u64>,
) -> Result<TypingResult, TypingError> {
    if arg_types.len() != ir.arg_names.len() {
        return Err(TypingError::Typing {
            message: format!(
                "{}() takes {} positional argument{} but {} {} given",
                ir.name,
                ir.arg_names.len(),
                if ir.arg_names.len() == 1 { "" } else { "s" },
                arg_types.len(),
                if arg_types.len() == 1 { "was" } else { "were" }
            ),
            line: ir.firstlineno,
        });
    }
    let mut e = Engine::new(ir, arg_types, locals, ctx, callees, self_id);
    e.fixpoint()?;
    // Final pass: report what still fails.
    e.pass(true)?;
    e.settle_lists()?;
    // Variables only assigned on paths inference never reaches (or only from untyped
    // temporaries such as NULL phis) carry no data: type them `none`.
    let typemap: Vec<TypeId> = e.typemap.iter().map(|t| t.unwrap_or(NONE)).collect();
    let return_type = if ir.is_generator {
        generator_type(
            ir,
            arg_types,
            &typemap,
            e.yield_ty,
            &e.yield_seen,
            e.yield_used,
            self_id,
        )?
    } else {
        e.ret.unwrap_or(NONE)
    };
    Ok(TypingResult {
        typemap,
        calltypes: e.calltypes,
        return_type,
        arg_types: arg_types.to_vec(),
        call_args: e.call_args,
        setitem_calls: e.setitem_calls,
        delitem_calls: e.delitem_calls,
        setattr_calls: e.setattr_calls,
    })
}

/// A generator function's result type (Numba's `get_generator_type`): the unified yield
/// type, which may not be optional, the argument types and the state variables' types.
fn generator_type(
    ir: &FunctionIR,
    arg_types: &[TypeId],
    typemap: &[TypeId],
    yield_ty: Option<TypeId>,
    yield_seen: &[TypeId],
    yield_used: bool,
    self_id: Option<u64>,
) -> Result<TypeId, TypingError> {
    let Some(y) = yield_ty else {
        return Err(TypingError::Typing {
            message: "Cannot type generator: it does not yield any value".into(),
            line: ir.firstlineno,
        });
    };
    let unified = yield_seen
        .iter()
        .try_fold(None::<TypeId>, |acc, &t| match acc {
            None => Some(Some(t)),
            Some(a) => crate::conv::unify(a, t).map(Some),
        })
        .flatten();
    if !matches!(unified, Some(u) if !matches!(u.get(), Type::Optional(_))) {
        let mut names: Vec<String> = Vec::new();
        for &t in yield_seen {
            let parts = match t.get() {
                Type::Optional(inner) => vec![inner.to_string(), "none".to_string()],
                _ => vec![t.to_string()],
            };
            for p in parts {
                if !names.contains(&p) {
                    names.push(p);
                }
            }
        }
        names.sort();
        return Err(TypingError::Typing {
            message: format!(
                "Can't unify yield type from the following types: {}",
                names.join(", ")
            ),
            line: ir.firstlineno,
        });
    }
    let state_types = ir
        .generator_info
        .as_ref()
        .map(|gi| {
            gi.state_vars
                .iter()
                .map(|v| typemap[v.0 as usize])
                .collect()
        })
        .unwrap_or_default();
    Ok(intern(Type::Generator {
        func: ir.qualname.clone(),
        id: self_id.unwrap_or(0),
        yield_type: y,
        args: arg_types.to_vec(),
        state_types,
        send_type: send_type(y, yield_used),
        has_finalizer: true,
    }))
}

/// What a `yield` expression evaluates to: `none` when the generator never reads it;
/// otherwise the value `send` passed, as an optional of the yield type (`next()` sends
/// None).
fn send_type(yield_ty: TypeId, used: bool) -> TypeId {
    if !used || yield_ty == NONE {
        NONE
    } else if matches!(yield_ty.get(), Type::Optional(_)) {
        yield_ty
    } else {
        intern(Type::Optional(yield_ty))
    }
}

/// Bind a call to a jitted function's parameters as Python does: positional arguments,
/// then keywords by name, then defaults (`defaults` are the trailing parameters').
fn bind_call(
    args: &[VarId],
    kws: &[(String, VarId)],
    names: &[String],
    defaults: &[numba_bytecode::Constant],
) -> Result<Vec<BoundArg>, String> {
    if args.len() > names.len() {
        return Err(format!(
            "too many positional arguments: {} given, {} expected",
            args.len(),
            names.len()
        ));
    }
    let mut slots: Vec<Option<BoundArg>> = vec![None; names.len()];
    for (i, &a) in args.iter().enumerate() {
        slots[i] = Some(BoundArg::Var(a));
    }
    for (name, v) in kws {
        let pos = names
            .iter()
            .position(|p| p == name)
            .ok_or_else(|| format!("got an unexpected keyword argument '{name}'"))?;
        if slots[pos].is_some() {
            return Err(format!("got multiple values for argument '{name}'"));
        }
        slots[pos] = Some(BoundArg::Var(*v));
    }
    let first_default = names.len() - defaults.len().min(names.len());
    slots
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(b) => Ok(b),
            None if i >= first_default => Ok(BoundArg::Const(defaults[i - first_default].clone())),
            None => Err(format!("missing a required argument: '{}'", names[i])),
        })
        .collect()
}

/// A signature as `inspect.Signature` prints it (`x, y=1, *args, a`).
fn pysig_text(
    names: &[String],
    defaults: &[numba_bytecode::Constant],
    star: bool,
    kwonly: &[(String, Option<numba_bytecode::Constant>)],
) -> String {
    let first_default = names.len() - defaults.len().min(names.len());
    let mut parts: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| match i.checked_sub(first_default) {
            Some(d) => format!("{n}={}", defaults[d].py_repr()),
            None => n.clone(),
        })
        .collect();
    if star {
        parts.push("*args".into());
    } else if !kwonly.is_empty() {
        parts.push("*".into());
    }
    for (n, d) in kwonly {
        parts.push(match d {
            Some(c) => format!("{n}={}", c.py_repr()),
            None => n.clone(),
        });
    }
    parts.join(", ")
}

/// Positional arguments then keywords, placed by parameter name; keywords must follow the
/// positional ones without gaps (what Numba's templates accept).
/// Skipped parameters before the last one given take `default(name)`.
fn bind_keywords(
    args: &[VarId],
    kws: &[(String, VarId)],
    params: &[&str],
    default: impl Fn(&str) -> Option<numba_bytecode::Constant>,
) -> Result<Vec<BoundArg>, String> {
    let mut slots: Vec<Option<VarId>> = args.iter().map(|&a| Some(a)).collect();
    for (name, v) in kws {
        let pos = params
            .iter()
            .position(|p| p == name)
            .ok_or_else(|| format!("unexpected keyword argument '{name}'"))?;
        if slots.len() <= pos {
            slots.resize(pos + 1, None);
        }
        if slots[pos].is_some() {
            return Err(format!("got multiple values for argument '{name}'"));
        }
        slots[pos] = Some(*v);
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(v) => Ok(BoundArg::Var(v)),
            None => default(params[i])
                .map(BoundArg::Const)
                .ok_or_else(|| format!("missing argument '{}'", params[i])),
        })
        .collect()
}

impl<'a> Engine<'a> {
    fn new(
        ir: &'a FunctionIR,
        arg_types: &'a [TypeId],
        locals: &[(String, TypeId)],
        ctx: &'a dyn TypingContext,
        callees: &'a dyn CalleeResolver,
        self_id: Option<u64>,
    ) -> Self {
        Engine {
            ir,
            ctx,
            callees,
            self_id,
            arg_types,
            typemap: vec![None; ir.vars.len()],
            calltypes: HashMap::new(),
            call_args: HashMap::new(),
            setitem_calls: HashMap::new(),
            delitem_calls: HashMap::new(),
            setattr_calls: HashMap::new(),
            ret: None,
            changed: true,
            target: None,
            yield_ty: None,
            yield_seen: Vec::new(),
            yield_used: ir.is_generator && yield_value_used(ir),
            declared: declared_locals(ir, locals),
            inferred_roots: comprehension_roots(ir),
            inferred_dtypes: HashMap::new(),
            defs: std::sync::OnceLock::new(),
        }
    }
}

impl Engine<'_> {
    /// Non-reporting passes until nothing changes (an error from one ends them).
    fn fixpoint(&mut self) -> Result<(), TypingError> {
        let mut passes = 0;
        while self.changed {
            self.changed = false;
            passes += 1;
            if passes > MAX_PASSES {
                return Err(TypingError::Typing {
                    message: "type inference did not converge".into(),
                    line: self.ir.firstlineno,
                });
            }
            self.pass(false)?;
        }
        Ok(())
    }

    /// A variable's type as templates see it: literals stand for their underlying type.
    fn ty(&self, v: VarId) -> Option<TypeId> {
        self.raw_ty(v).map(TypeId::unliteral)
    }

    /// The type a returned variable gives the function's result: a literal slice stays
    /// literal (boxed from its value, as Numba's `box_slice_literal`), other literals
    /// become their base type.
    fn returned_ty(&self, v: VarId) -> Option<TypeId> {
        let t = self.raw_ty(v)?;
        Some(if matches!(t.get(), Type::SliceLiteral(..)) {
            t
        } else {
            t.unliteral()
        })
    }

    /// A variable's type as inferred, literal types included (`Literal[int](1)`).
    fn raw_ty(&self, v: VarId) -> Option<TypeId> {
        self.typemap[v.0 as usize]
    }

    fn user_name(&self, v: VarId) -> String {
        self.ir.var_name(v).to_string()
    }

    /// The one type a list or set literal's items unify to (`undefined` when there are
    /// none; `None` while one is untyped).
    fn common_item_type(
        &self,
        items: &[VarId],
        what: &str,
        line: u32,
    ) -> Result<Option<TypeId>, TypingError> {
        let mut dtype = UNDEFINED;
        for v in items {
            let Some(t) = self.ty(*v) else {
                return Ok(None);
            };
            dtype = if dtype == UNDEFINED {
                t
            } else {
                self.ctx.unify(dtype, t).ok_or_else(|| TypingError::Typing {
                    message: format!(
                        "Cannot type {what} element type {dtype} and {t}: {what} items must share one type"
                    ),
                    line,
                })?
            };
        }
        Ok(Some(dtype))
    }

    /// After the fixpoint: an empty list that nothing stored into is Numba's error; an
    /// operation that made an empty list (`list()`, `[]`) takes the type its variable
    /// was refined to, so lowering builds the list its users expect.
    fn settle_lists(&mut self) -> Result<(), TypingError> {
        for block in self.ir.blocks.values() {
            for inst in &block.body {
                let Stmt::Assign { target, value } = &inst.stmt else {
                    continue;
                };
                let Some(t) = self.raw_ty(*target) else {
                    continue;
                };
                if crate::lists::is_imprecise(t) {
                    let name = self.user_name(*target);
                    let tmp = if name.starts_with('$') {
                        " (temporary variable)"
                    } else {
                        ""
                    };
                    // Numba's help for lists nothing stored into.
                    let help = if matches!(t.get(), Type::List { .. }) {
                        LIST_HELP
                    } else {
                        ""
                    };
                    return Err(TypingError::Typing {
                        message: format!(
                            "Cannot infer the type of variable '{name}'{tmp}, have imprecise type: {t}. {help}"
                        ),
                        line: inst.loc.line,
                    });
                }
                if let Some(sig) = self.calltypes.get_mut(value) {
                    if crate::lists::is_imprecise(sig.ret) {
                        sig.ret = t;
                    }
                }
            }
        }
        Ok(())
    }

    /// Refine the list a bound method `func` was read from, and the variables that list
    /// was copied from back to its `[]`, to `t` (an empty list's first store).
    fn refine_receiver(&mut self, func: VarId, t: TypeId, line: u32) -> Result<(), TypingError> {
        let ir = self.ir;
        let defs = definitions(&self.defs, ir);
        let stack = receivers(defs, ir, func);
        self.refine_sources(stack, t, line)
    }

    /// A call of `ft` typed by the overload dispatcher `did`; a built-in method's overload
    /// takes the receiver first.
    #[allow(clippy::too_many_arguments)]
    fn call_overload(
        &mut self,
        id: ExprId,
        did: u64,
        ft: TypeId,
        mut atys: Vec<TypeId>,
        mut raw_atys: Vec<TypeId>,
        mut arg_vars: Vec<Option<VarId>>,
        line: u32,
    ) -> Result<Option<TypeId>, TypingError> {
        let name = ft.to_string();
        if let Type::BoundFunction { this, .. } = ft.get() {
            atys.insert(0, this);
            raw_atys.insert(0, this);
            arg_vars.insert(0, None);
        }
        self.call_dispatcher(id, did, &name, atys, raw_atys, arg_vars, line)
    }

    /// Whether the list a bound method `func` was read from is built in this function
    /// (every definition, through copies and phis, a list display), so its item type may
    /// still widen.
    fn built_here(&mut self, func: VarId) -> bool {
        let ir = self.ir;
        let defs = definitions(&self.defs, ir);
        let mut stack = receivers(defs, ir, func);
        if stack.is_empty() {
            return false;
        }
        let mut seen = std::collections::HashSet::new();
        while let Some(v) = stack.pop() {
            if !seen.insert(v) {
                continue;
            }
            for &e in defs.get(&v).into_iter().flatten() {
                match ir.expr(e) {
                    Expr::Var(src) | Expr::Cast { value: src } => stack.push(*src),
                    Expr::Phi { incoming } => stack.extend(incoming.iter().filter_map(|(v, _)| *v)),
                    Expr::BuildList { .. } => {}
                    _ => return false,
                }
            }
        }
        true
    }

    /// Refine the containers in `stack`, and the variables they were copied from back
    /// to their `[]` / `{}`, to `t` (the first store into an empty container).
    fn refine_sources(
        &mut self,
        mut stack: Vec<VarId>,
        t: TypeId,
        line: u32,
    ) -> Result<(), TypingError> {
        let ir = self.ir;
        let defs = definitions(&self.defs, ir);
        let mut seen = std::collections::HashSet::new();
        let mut refined = Vec::new();
        while let Some(v) = stack.pop() {
            if !seen.insert(v) {
                continue;
            }
            refined.push(v);
            for &e in defs.get(&v).into_iter().flatten() {
                match ir.expr(e) {
                    // A copy, or an inlined function's return of it (a comprehension).
                    Expr::Var(src) | Expr::Cast { value: src } => stack.push(*src),
                    Expr::Phi { incoming } => stack.extend(incoming.iter().filter_map(|(v, _)| *v)),
                    _ => {}
                }
            }
        }
        for v in refined {
            let widening = self.raw_ty(v).is_some_and(|old| {
                matches!(
                    (old.get(), t.get()),
                    (
                        Type::List { typed: false, .. },
                        Type::List { typed: false, .. }
                    )
                )
            });
            if widening || self.raw_ty(v).is_none_or(crate::lists::is_imprecise) {
                self.refine(v, t, line)?;
            }
        }
        Ok(())
    }

    fn refine(&mut self, v: VarId, t: TypeId, line: u32) -> Result<(), TypingError> {
        if let Some(&want) = self.declared.get(&v) {
            if self.ctx.can_convert(t, want).is_none() {
                return Err(TypingError::Typing {
                    message: format!(
                        "Cannot cast {t} to {want}: '{}' is declared {want} in locals",
                        self.user_name(v)
                    ),
                    line,
                });
            }
            if self.raw_ty(v) != Some(want) {
                self.typemap[v.0 as usize] = Some(want);
                self.changed = true;
            }
            return Ok(());
        }
        // On the raw types: a literal variable that is reassigned widens to its base type.
        let new = match self.raw_ty(v) {
            None => t,
            Some(old) => self.ctx.unify(old, t).ok_or_else(|| TypingError::Typing {
                message: format!("Cannot unify {old} and {t} for '{}'", self.user_name(v)),
                line,
            })?,
        };
        if self.raw_ty(v) != Some(new) {
            self.typemap[v.0 as usize] = Some(new);
            self.changed = true;
        }
        Ok(())
    }

    fn pass(&mut self, report: bool) -> Result<(), TypingError> {
        for block in self.ir.blocks.values() {
            for inst in &block.body {
                let line = inst.loc.line;
                match &inst.stmt {
                    Stmt::Assign { target, value } => {
                        match self.type_assigned(*target, *value, line) {
                            Ok(Some(t)) => self.refine(*target, t, line)?,
                            Ok(None) => {
                                if report {
                                    if let Some(err) = self.explain_untyped(*value, line) {
                                        return Err(err);
                                    }
                                }
                            }
                            Err(err) => {
                                if report {
                                    return Err(err);
                                }
                            }
                        }
                    }
                    // A generator's `return` ends the iteration; its value is dropped, as
                    // in Numba.
                    Stmt::Return { .. } if self.ir.is_generator => {}
                    Stmt::Return { value } => {
                        if let Some(t) = self.returned_ty(*value).map(crate::strings::held_text) {
                            let new = match self.ret {
                                None => t,
                                Some(old) => self.ctx.unify(old, t).ok_or_else(|| TypingError::Typing {
                                    message: format!(
                                        "Can't unify return type from the following types: {old}, {t}"
                                    ),
                                    line,
                                })?,
                            };
                            if self.ret != Some(new) {
                                self.ret = Some(new);
                                if let Some(id) = self.self_id {
                                    self.callees.publish_return(id, self.arg_types, new);
                                }
                                self.changed = true;
                            }
                        }
                    }
                    Stmt::Branch { cond, .. } => {
                        if report && self.ty(*cond).is_some_and(|t| !t.is_scalar()) {
                            return Err(TypingError::Typing {
                                message: format!(
                                    "cannot use {} as a condition",
                                    self.ty(*cond).unwrap_or(NONE)
                                ),
                                line,
                            });
                        }
                    }
                    Stmt::Raise { exception } | Stmt::TryRaise { exception } => {
                        if let Some(x) = exception {
                            if report {
                                match self.ty(*x).map(|t| t.get()) {
                                    Some(Type::ExceptionClass(_)) | Some(Type::ExceptionInstance(_)) | None => {}
                                    // Numba's message for `raise "text"`.
                                    Some(Type::Unicode | Type::StringLiteral(_)) => {
                                        return Err(TypingError::Unsupported {
                                            message: "Directly raising a string constant as an exception is not supported.".into(),
                                            line,
                                        })
                                    }
                                    Some(other) => {
                                        return Err(TypingError::Typing {
                                            message: format!("exceptions must derive from BaseException, got {other}"),
                                            line,
                                        })
                                    }
                                }
                            }
                        }
                    }
                    Stmt::SetItem {
                        target,
                        index,
                        value,
                    } => {
                        if let (Some(&root), Some(v)) =
                            (self.inferred_roots.get(target), self.ty(*value))
                        {
                            self.infer_dtype(root, v, line)?;
                        }
                        let tys = (self.ty(*target), self.raw_ty(*index), self.ty(*value));
                        // `r['x'] = v` / `r[0] = v`: a record's field by a constant.
                        if let (Some(t), Some(_)) = (tys.0, tys.1) {
                            if crate::records::is_record(t) {
                                let i = self.record_index(*index).unwrap_or(NONE);
                                let f = crate::records::field_by_index(t, i)
                                    .map_err(|message| TypingError::Typing { message, line })?;
                                let Some(f) = f else {
                                    return Err(TypingError::Typing {
                                        message: crate::records::not_constant(i),
                                        line,
                                    });
                                };
                                if let Some(v) = tys.2 {
                                    match crate::records::setitem(t, &f, v) {
                                        Ok(sig) => {
                                            self.setitem_calls
                                                .insert((*target, *index, *value), sig);
                                        }
                                        Err(message) if report => {
                                            return Err(TypingError::Typing { message, line })
                                        }
                                        Err(_) => {}
                                    }
                                }
                                continue;
                            }
                        }
                        if report
                            && tys
                                .0
                                .is_some_and(|t| crate::dicts::literal_parts(t).is_some())
                        {
                            return Err(TypingError::Typing {
                                message: crate::dicts::LITERAL_MUTATION.into(),
                                line,
                            });
                        }
                        // `d[k] = v`: types an empty dict, else converts as Numba's typed
                        // dict does.
                        if let (Some(t), Some(i), Some(v)) = tys {
                            if crate::dicts::dict_parts(t).is_some() {
                                match crate::dicts::stored(t, i, v) {
                                    Some(new) if new != t => {
                                        self.refine_sources(vec![*target], new, line)?
                                    }
                                    Some(_) => {}
                                    None if report => {
                                        let message = crate::dicts::explain_setitem(t, i, v)
                                            .unwrap_or_else(|| format!("No implementation of function Function(<built-in function setitem>) found for signature:\n \n >>> setitem({t}, {}, {v})", i.unliteral()));
                                        return Err(TypingError::Typing { message, line });
                                    }
                                    None => {}
                                }
                                continue;
                            }
                        }
                        if let (Some(t), Some(i), Some(v)) = tys {
                            if report && matches!(t.get(), Type::Array { readonly: true, .. }) {
                                return Err(TypingError::Typing {
                                    message: format!("Cannot modify readonly array of type: {t}"),
                                    line,
                                });
                            }
                            // A typed list's words (Numba's `listobject`).
                            if report
                                && matches!(t.get(), Type::List { typed: true, .. })
                                && !crate::numpy::setitem_ok(t, i, v)
                            {
                                let sliced = matches!(i.unliteral().get(), Type::Slice(_));
                                let message = if sliced {
                                    "can only assign an iterable when using a slice with assignment/setitem"
                                } else if !i.unliteral().is_integer() {
                                    "list indices must be integers or slices"
                                } else {
                                    ""
                                };
                                let message = if message.is_empty() {
                                    let d = crate::lists::list_dtype(t).unwrap_or(NONE);
                                    crate::dicts::safe_cast(v, d).err().unwrap_or_else(|| {
                                        format!(
                                            "invalid setitem with value of {v} to element of {d}"
                                        )
                                    })
                                } else {
                                    message.to_string()
                                };
                                return Err(TypingError::Typing { message, line });
                            }
                            // A type numba-rs does not index whose extension implements
                            // `operator.setitem` (a jitclass's `__setitem__`).
                            // (An array with an index its native indexing does not take,
                            // several advanced indices say, goes to the extension too.)
                            let native = crate::numpy::setitem_ok(t, i, v)
                                || (t.is_array() && crate::numpy::index_array(t, i).is_some())
                                || crate::lists::list_dtype(t).is_some()
                                || crate::dicts::dict_parts(t).is_some();
                            // A string index into an array (a whole field of an array
                            // of records too): Numba's words.
                            if t.is_array() && matches!(i.unliteral().get(), Type::Unicode) {
                                let i = i.unliteral();
                                return Err(TypingError::Typing {
                                    message: format!("Unsupported array index type {i} in ({i},)"),
                                    line,
                                });
                            }
                            let key = "operator.setitem";
                            let ext = (!native)
                                .then(|| {
                                    crate::extension::external().and_then(|x| {
                                        x.function(intern(Type::Function(key.into())))
                                    })
                                })
                                .flatten();
                            if let Some(did) = ext {
                                let sig = self.statement_call(
                                    did,
                                    key,
                                    vec![t, i.unliteral(), v],
                                    vec![t, i, v],
                                    vec![Some(*target), Some(*index), Some(*value)],
                                    line,
                                    report,
                                )?;
                                if let Some(sig) = sig {
                                    self.setitem_calls.insert((*target, *index, *value), sig);
                                }
                                continue;
                            }
                            // Numba's words for a list item of another type.
                            if let (true, Some(d)) = (
                                report && !crate::numpy::setitem_ok(t, i, v),
                                crate::lists::list_dtype(t),
                            ) {
                                return Err(TypingError::Typing {
                                    message: format!(
                                        "invalid setitem with value of {v} to element of {d}"
                                    ),
                                    line,
                                });
                            }
                            if report && !crate::numpy::setitem_ok(t, i, v) {
                                return Err(TypingError::Typing {
                                    message: format!(
                                        "No implementation of function Function(<built-in function setitem>) found for signature:\n \n >>> setitem({t}, {}, {v})",
                                        i.unliteral()
                                    ),
                                    line,
                                });
                            }
                        }
                    }
                    Stmt::DelItem { target, .. }
                        if report
                            && self
                                .ty(*target)
                                .is_some_and(|t| crate::dicts::literal_parts(t).is_some()) =>
                    {
                        return Err(TypingError::Typing {
                            message: crate::dicts::LITERAL_MUTATION.into(),
                            line,
                        });
                    }
                    // `del d[k]`: a key the dict's keys convert from.
                    Stmt::DelItem { target, index }
                        if self.ty(*target).is_some_and(|t| {
                            self.ty(*index)
                                .is_some_and(|i| crate::dicts::getitem(t, i).is_some())
                        }) => {}
                    Stmt::DelItem { target, index }
                        if self
                            .ty(*target)
                            .is_some_and(|t| matches!(t.get(), Type::List { .. }))
                            && self.ty(*index).is_some_and(|i| {
                                i.is_integer() || matches!(i.get(), Type::Slice(_))
                            }) => {}
                    // `del target[index]` on a type whose extension implements
                    // `operator.delitem`: a call.
                    Stmt::DelItem { target, index }
                        if self.ty(*target).is_some_and(|t| {
                            !matches!(t.get(), Type::List { .. } | Type::Dict { .. })
                        }) && crate::extension::external()
                            .and_then(|x| {
                                x.function(intern(Type::Function("operator.delitem".into())))
                            })
                            .is_some() =>
                    {
                        let (Some(t), Some(i)) = (self.ty(*target), self.ty(*index)) else {
                            continue;
                        };
                        let key = "operator.delitem";
                        let did = crate::extension::external()
                            .and_then(|x| x.function(intern(Type::Function(key.into()))));
                        if let Some(did) = did {
                            let sig = self.statement_call(
                                did,
                                key,
                                vec![t, i.unliteral()],
                                vec![t, i],
                                vec![Some(*target), Some(*index)],
                                line,
                                report,
                            )?;
                            if let Some(sig) = sig {
                                self.delitem_calls.insert((*target, *index), sig);
                            }
                        }
                    }
                    // A jitclass field: the value must convert to the field's type.
                    Stmt::SetAttr {
                        target,
                        attr,
                        value,
                    } if self
                        .ty(*target)
                        .is_some_and(|t| crate::jitclass::instance_of(t).is_some()) =>
                    {
                        let t = self
                            .ty(*target)
                            .and_then(crate::jitclass::instance_of)
                            .unwrap_or(NONE);
                        let Some((_, ft)) = crate::jitclass::field(t, attr) else {
                            // A property's setter: the method its class registered.
                            let setter = crate::extension::external()
                                .and_then(|x| x.method(t, &format!("{SETTER_PREFIX}{attr}")));
                            if let (Some(did), Some(v)) = (setter, self.ty(*value)) {
                                let raw_v = self.raw_ty(*value).unwrap_or(v);
                                let sig = self.statement_call(
                                    did,
                                    attr,
                                    vec![t, v],
                                    vec![t, raw_v],
                                    vec![Some(*target), Some(*value)],
                                    line,
                                    report,
                                )?;
                                if let Some(sig) = sig {
                                    self.setattr_calls
                                        .insert((*target, attr.clone(), *value), sig);
                                }
                                continue;
                            }
                            if report {
                                return Err(TypingError::Typing {
                                    message: format!(
                                        "Cannot set attribute '{attr}' of {t}: the class has no such field"
                                    ),
                                    line,
                                });
                            }
                            continue;
                        };
                        if let Some(v) = self.ty(*value) {
                            if report && crate::conv::can_convert(v, ft).is_none() {
                                return Err(TypingError::Typing {
                                    message: format!(
                                        "Cannot cast {v} to {ft}: the field '{attr}' of {t} is {ft}"
                                    ),
                                    line,
                                });
                            }
                        }
                    }
                    // `r.x = v`: a record's field.
                    Stmt::SetAttr {
                        target,
                        attr,
                        value,
                    } if self.ty(*target).is_some_and(crate::records::is_record) => {
                        let t = self.ty(*target).unwrap_or(NONE);
                        let Some(f) = crate::records::field(t, attr) else {
                            return Err(TypingError::Typing {
                                message: format!("Field '{attr}' was not found in {t}"),
                                line,
                            });
                        };
                        if let Some(v) = self.ty(*value) {
                            match crate::records::setitem(t, &f, v) {
                                Ok(mut sig) => {
                                    // `(record, value)`: the field named by the key.
                                    sig.args.remove(1);
                                    sig.key = ImplKey::SetAttr(f.name.clone());
                                    self.setattr_calls
                                        .insert((*target, attr.clone(), *value), sig);
                                }
                                Err(message) if report => {
                                    return Err(TypingError::Typing { message, line })
                                }
                                Err(_) => {}
                            }
                        }
                    }
                    Stmt::SetAttr { .. } | Stmt::DelAttr { .. } | Stmt::DelItem { .. } => {
                        if report {
                            return Err(TypingError::Unsupported {
                                message: "attribute stores and `del` of items or attributes are not supported by numba-rs yet".into(),
                                line,
                            });
                        }
                    }
                    Stmt::Print {
                        vararg: Some(_), ..
                    } => {
                        if report {
                            return Err(TypingError::Unsupported {
                                message: "print(*args) is not supported by numba-rs yet".into(),
                                line,
                            });
                        }
                    }
                    // Their variables are typed where they are assigned; lowering checks
                    // that exception arguments and printed values can be carried.
                    Stmt::DynamicRaise { .. }
                    | Stmt::StaticTryRaise { .. }
                    | Stmt::DynamicTryRaise { .. }
                    | Stmt::Print { .. } => {}
                    Stmt::StaticSetItem { .. } | Stmt::StoreMap { .. } | Stmt::Extension { .. } => {
                        if report {
                            return Err(TypingError::Unsupported {
                                message: "this statement is not supported by numba-rs's typing yet"
                                    .into(),
                                line,
                            });
                        }
                    }
                    Stmt::EnterWith { .. } | Stmt::PopBlock => {
                        if report {
                            return Err(TypingError::Unsupported {
                                message: "with blocks are not supported by numba-rs yet".into(),
                                line,
                            });
                        }
                    }
                    Stmt::StaticRaise { .. } | Stmt::Del { .. } | Stmt::Jump { .. } => {}
                }
            }
        }
        Ok(())
    }

    /// When an expression stayed untyped after the fixpoint, say why if it is an error.
    fn explain_untyped(&self, id: ExprId, line: u32) -> Option<TypingError> {
        if let Expr::Call { func, .. } = self.ir.expr(id) {
            if let Some(Type::Dispatcher { name, .. }) = self.ty(*func).map(|t| t.get()) {
                return Some(TypingError::Typing {
                    message: format!(
                        "cannot type the recursive call to '{name}': give the function a non-recursive return path or an explicit signature"
                    ),
                    line,
                });
            }
        }
        None
    }

    /// An array comprehension stores `value` into (a view of) the allocation `root`.
    fn infer_dtype(&mut self, root: VarId, value: TypeId, line: u32) -> Result<(), TypingError> {
        let value = value.unliteral();
        if !value.is_scalar() {
            return Err(TypingError::Typing {
                message: format!(
                    "an array comprehension's values must be scalars, got {value}: numba-rs (as Numba) builds an array of arrays only from nested comprehensions whose inner sizes are known before the outer loop; preallocate the array and fill it instead"
                ),
                line,
            });
        }
        let new = match self.inferred_dtypes.get(&root) {
            None => value,
            Some(&old) => self.ctx.unify(old, value).unwrap_or(old),
        };
        if self.inferred_dtypes.get(&root) != Some(&new) {
            self.inferred_dtypes.insert(root, new);
            self.changed = true;
        }
        Ok(())
    }

    /// A call to a jitted function (or an extension's implementation): compiled for the
    /// argument types through the callee resolver, literal types offered as the callee
    /// asks ([`crate::extension::LiteralArgs`]).
    // The call site's three views of its arguments (types, literal types, variables)
    // travel together only here.
    /// Trailing parameters a native binding left out (`sorted(x, key=f)` has no
    /// `reverse`) get the overload's own defaults, passed as constants.
    #[allow(clippy::too_many_arguments)]
    fn fill_overload_defaults(
        &mut self,
        id: ExprId,
        did: u64,
        args: &[VarId],
        receiver: usize,
        atys: &mut Vec<TypeId>,
        raw_atys: &mut Vec<TypeId>,
        arg_vars: &mut Vec<Option<VarId>>,
        line: u32,
    ) -> Result<(), TypingError> {
        let Some(p) = self.callees.parameters(did) else {
            return Ok(());
        };
        let given = atys.len() + receiver;
        // `def impl(a, *axes)`: the arguments past the named ones travel as one tuple.
        if p.star {
            let fixed = p.names.len().saturating_sub(receiver);
            if atys.len() < fixed || self.call_args.contains_key(&id) {
                return Ok(());
            }
            let items: Vec<TypeId> = atys.drain(fixed..).collect();
            raw_atys.truncate(fixed);
            arg_vars.truncate(fixed);
            let packed = crate::types::tuple_of(&items);
            atys.push(packed);
            raw_atys.push(packed);
            arg_vars.push(None);
            let mut bound: Vec<BoundArg> =
                args[..fixed].iter().map(|&a| BoundArg::Var(a)).collect();
            bound.push(BoundArg::Pack(args[fixed..].to_vec()));
            self.call_args.insert(id, bound);
            return Ok(());
        }
        if given >= p.names.len() {
            return Ok(());
        }
        let mut bound: Vec<BoundArg> = match self.call_args.get(&id) {
            Some(b) => b.clone(),
            None => args.iter().map(|&a| BoundArg::Var(a)).collect(),
        };
        let first_default = p.names.len() - p.defaults.len().min(p.names.len());
        for i in given..p.names.len() {
            let Some(c) = i.checked_sub(first_default).and_then(|k| p.defaults.get(k)) else {
                return Err(TypingError::Typing {
                    message: format!("missing a required argument: '{}'", p.names[i]),
                    line,
                });
            };
            let t = typeof_const(c).ok_or_else(|| TypingError::Unsupported {
                message: format!(
                    "a default value {} is not supported by numba-rs yet",
                    c.py_repr()
                ),
                line,
            })?;
            atys.push(t.unliteral());
            raw_atys.push(t);
            arg_vars.push(None);
            bound.push(BoundArg::Const(c.clone()));
        }
        self.call_args.insert(id, bound);
        Ok(())
    }

    /// A statement an extension implements (`obj[i] = v`, a property's setter): the
    /// dispatcher typed as a call under a transient expression id (a statement has
    /// none), its signature handed back for the statement's own table. A typing error
    /// counts only when `report`ing.
    #[allow(clippy::too_many_arguments)]
    fn statement_call(
        &mut self,
        did: u64,
        name: &str,
        atys: Vec<TypeId>,
        raw_atys: Vec<TypeId>,
        arg_vars: Vec<Option<VarId>>,
        line: u32,
        report: bool,
    ) -> Result<Option<Signature>, TypingError> {
        let tmp = ExprId(u32::MAX);
        let r = self.call_dispatcher(tmp, did, name, atys, raw_atys, arg_vars, line);
        let sig = self.calltypes.remove(&tmp);
        self.call_args.remove(&tmp);
        match r {
            Ok(_) => Ok(sig),
            Err(e) if report => Err(e),
            Err(_) => Ok(None),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn call_dispatcher(
        &mut self,
        id: ExprId,
        did: u64,
        name: &str,
        atys: Vec<TypeId>,
        raw_atys: Vec<TypeId>,
        arg_vars: Vec<Option<VarId>>,
        line: u32,
    ) -> Result<Option<TypeId>, TypingError> {
        use crate::extension::LiteralArgs;
        if self.self_id == Some(did) && atys.as_slice() == self.arg_types {
            let known = self.ret;
            return Ok(known.map(|r| {
                self.record(
                    id,
                    Signature {
                        ret: r,
                        args: atys,
                        key: ImplKey::Dispatcher { id: did },
                    },
                )
            }));
        }
        let tries: Vec<Vec<TypeId>> = match self.callees.literal_args(did) {
            _ if raw_atys == atys => vec![atys],
            LiteralArgs::Never => vec![atys],
            LiteralArgs::Fallback => vec![atys, raw_atys.clone()],
            LiteralArgs::Prefer => vec![raw_atys.clone(), atys],
        };
        let mut first_err = None;
        for args in tries {
            match self.callees.resolve_call(did, &args) {
                Ok(CallOutcome::Resolved(ret)) => {
                    let sig = Signature {
                        ret,
                        args,
                        key: ImplKey::Dispatcher { id: did },
                    };
                    return Ok(Some(self.record(id, sig)));
                }
                Ok(CallOutcome::Converted { ret, args }) => {
                    let sig = Signature {
                        ret,
                        args,
                        key: ImplKey::Dispatcher { id: did },
                    };
                    return Ok(Some(self.record(id, sig)));
                }
                Ok(CallOutcome::InProgress) => return Ok(None),
                Ok(CallOutcome::ForceLiteral(wanted)) => {
                    // The caller's literal types where it has them; otherwise the caller
                    // asks for its own arguments as literals.
                    let mut lit = args.clone();
                    for &i in &wanted {
                        match raw_atys.get(i) {
                            Some(&r) if r.is_literal() => lit[i] = r,
                            _ => {
                                let v = arg_vars.get(i).copied().flatten();
                                return Err(self.literal_request(v, line, true));
                            }
                        }
                    }
                    if lit == args {
                        first_err.get_or_insert_with(|| {
                            "the callee asks for literal arguments it already has".into()
                        });
                        continue;
                    }
                    let raw = raw_atys.clone();
                    return self.call_dispatcher(id, did, name, lit, raw, arg_vars, line);
                }
                Err(m) => {
                    first_err.get_or_insert(m);
                }
            }
        }
        let m = first_err.unwrap_or_default();
        Err(TypingError::Typing {
            message: format!("in call to function '{name}':\n{m}"),
            line,
        })
    }

    /// A request that the variable `v` be a literal: when it is one of the function's
    /// arguments (through copies), the function asks to be compiled with that argument
    /// as a literal (Numba's `ForceLiteralArg`); otherwise Numba's LiteralTypingError.
    /// `callee`: the request comes from a function this one calls (Numba then says only
    /// "Cannot request literal type.").
    fn literal_request(&self, v: Option<VarId>, line: u32, callee: bool) -> TypingError {
        let mut cur = v;
        for _ in 0..16 {
            let Some(var) = cur else { break };
            match numba_ir::utils::single_def(self.ir, var) {
                Some(Expr::Arg { index, .. }) => {
                    return TypingError::ForceLiteral {
                        args: vec![*index as usize],
                        line,
                    }
                }
                Some(Expr::Var(src)) => cur = Some(*src),
                _ => break,
            }
        }
        let Some(t) = v.and_then(|v| self.raw_ty(v)) else {
            // Packed into `*args` or a default: no one variable to ask for.
            return TypingError::Typing {
                message: "Cannot request literal type: the value is not one argument of \
                          the function (it is packed into *args or a default)"
                    .into(),
                line,
            };
        };
        if callee {
            return TypingError::Typing {
                message: format!(
                    "Cannot request literal type. (the callee needs a literal {t}: the value \
                     is neither a constant nor an argument of the function)"
                ),
                line,
            };
        }
        TypingError::Typing {
            message: format!(
                "Invalid use of non-Literal type in literally({t}): the value is neither a \
                 constant nor an argument of the function"
            ),
            line,
        }
    }

    /// `value.attr` that numba-rs's own templates do not know: an extension's attribute
    /// (computed by its dispatcher), method (bound to the receiver) or module function.
    fn extension_getattr(
        &mut self,
        id: ExprId,
        t: TypeId,
        attr: &str,
        line: u32,
    ) -> Result<Option<TypeId>, TypingError> {
        let unknown = || TypingError::Typing {
            message: format!("Unknown attribute '{attr}' of type {t}"),
            line,
        };
        let Some(x) = crate::extension::external() else {
            return Err(unknown());
        };
        if let Type::Module(m) = t.get() {
            let did = x.module_attribute(&m, attr).ok_or_else(unknown)?;
            let ret = intern(Type::Dispatcher {
                id: did,
                name: attr.to_string(),
            });
            let sig = Signature {
                ret,
                args: vec![t],
                key: ImplKey::GetAttr(attr.to_string()),
            };
            return Ok(Some(self.record(id, sig)));
        }
        // An optional jitclass instance's method binds the instance it holds (the
        // receiver is converted, Numba's TypeError when it is None).
        let held = match t.get() {
            Type::Optional(_) => crate::jitclass::instance_of(t).unwrap_or(t),
            _ => t,
        };
        if let Some(did) = x.method(held, attr) {
            let ret = intern(Type::BoundFunction {
                key: crate::extension::method_key(did),
                this: held,
            });
            let sig = Signature {
                ret,
                args: vec![t],
                key: ImplKey::GetAttr(attr.to_string()),
            };
            return Ok(Some(self.record(id, sig)));
        }
        if let Some(did) = x.attribute(t, attr) {
            let name = format!("{t}.{attr}");
            return self.call_dispatcher(id, did, &name, vec![t], vec![t], vec![], line);
        }
        Err(unknown())
    }

    fn record(&mut self, id: ExprId, sig: Signature) -> TypeId {
        let ret = sig.ret;
        if self.calltypes.get(&id) != Some(&sig) {
            self.calltypes.insert(id, sig);
        }
        ret
    }

    fn no_impl(&self, fname: &str, args: &[TypeId], line: u32, extra: &str) -> TypingError {
        let a: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        TypingError::Typing {
            message: format!(
                "No implementation of function Function(<built-in function {fname}>) found for signature:\n \n >>> {fname}({}){extra}",
                a.join(", ")
            ),
            line,
        }
    }

    /// The one expression assigned to `v`, when there is exactly one.
    fn only_definition(&self, v: VarId) -> Option<ExprId> {
        let mut def = None;
        for block in self.ir.blocks.values() {
            for inst in &block.body {
                if let Stmt::Assign { target, value } = &inst.stmt {
                    if *target == v {
                        if def.is_some() {
                            return None;
                        }
                        def = Some(*value);
                    }
                }
            }
        }
        def
    }

    /// The constant `v` holds when its definitions make it one (Numba's
    /// `infer_constant`, and its static getitem of a constant tuple): a constant, a
    /// global or closure constant, a tuple built of constants, an item of one.
    fn const_value(&self, v: VarId, depth: u32) -> Option<numba_bytecode::Constant> {
        use numba_bytecode::Constant;
        if depth > 16 {
            return None;
        }
        match self.ir.expr(self.only_definition(v)?) {
            Expr::Const(c) => Some(c.clone()),
            Expr::Global { value, .. } | Expr::FreeVar { value, .. } => match &value.kind {
                numba_ir::GlobalKind::Const(c) => Some(c.clone()),
                _ => None,
            },
            Expr::Var(x) => self.const_value(*x, depth + 1),
            Expr::BuildTuple { items } => Some(Constant::Tuple(
                items
                    .iter()
                    .map(|&i| self.const_value(i, depth + 1))
                    .collect::<Option<_>>()?,
            )),
            Expr::StaticGetItem { value, index, .. } => {
                match self.const_value(*value, depth + 1)? {
                    Constant::Tuple(items) => {
                        let n = items.len() as i64;
                        let i = if *index < 0 { *index + n } else { *index };
                        items.get(usize::try_from(i).ok()?).cloned()
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A record's index as a literal: its own literal type, or the constant it holds.
    fn record_index(&self, index: VarId) -> Option<TypeId> {
        let raw = self.raw_ty(index)?;
        if raw.is_literal() {
            return Some(raw);
        }
        match self.const_value(index, 0)? {
            numba_bytecode::Constant::Str(s) => Some(intern(Type::StringLiteral(s))),
            numba_bytecode::Constant::Int(i) => Some(intern(Type::IntegerLiteral(i))),
            _ => Some(raw),
        }
    }

    /// `slice(a, b[, c])` of constants (ints or None) assigned to `v`, as a literal slice.
    fn const_slice(&self, v: VarId) -> Option<TypeId> {
        let mut def = None;
        for block in self.ir.blocks.values() {
            for inst in &block.body {
                if let Stmt::Assign { target, value } = &inst.stmt {
                    if *target == v {
                        if def.is_some() {
                            return None;
                        }
                        def = Some(*value);
                    }
                }
            }
        }
        let Expr::Call { func, args, .. } = self.ir.expr(def?) else {
            return None;
        };
        if !matches!(self.ty(*func)?.get(), Type::Function(k) if k == "slice") {
            return None;
        }
        let bound = |a: VarId| -> Option<Option<i64>> {
            match self.raw_ty(a)?.get() {
                Type::IntegerLiteral(x) => Some(Some(x)),
                Type::NoneType => Some(None),
                _ => None,
            }
        };
        let b: Vec<Option<i64>> = args.iter().map(|&a| bound(a)).collect::<Option<_>>()?;
        match b.as_slice() {
            [x, y] => Some(intern(Type::SliceLiteral(*x, *y, None))),
            [x, y, z] => Some(intern(Type::SliceLiteral(*x, *y, *z))),
            _ => None,
        }
    }

    /// The type of `value`, assigned to `target`.
    fn type_assigned(
        &mut self,
        target: VarId,
        value: ExprId,
        line: u32,
    ) -> Result<Option<TypeId>, TypingError> {
        self.target = Some(target);
        self.type_expr(value, line)
    }

    /// The type an expression produces, `None` if not known yet.
    /// `value[index]` (also a `static_getitem` whose constant index is not a tuple
    /// position: typed through the variable that held the index, as Numba falls back).
    fn type_getitem(
        &mut self,
        id: ExprId,
        value: &VarId,
        index: &VarId,
        line: u32,
    ) -> Result<Option<TypeId>, TypingError> {
        // The index keeps a literal type: a tuple is indexed by a constant.
        let (Some(v), Some(i)) = (self.ty(*value), self.raw_ty(*index)) else {
            return Ok(None);
        };
        // `r['x']` / `r[0]`: a record's field by a constant; `a['x']` of an array of
        // records: one field's view.
        let i = if crate::records::is_record(v)
            || crate::numpy::array_parts(v).is_some_and(|p| crate::records::is_record(p.0))
        {
            self.record_index(*index).unwrap_or(i)
        } else {
            i
        };
        match crate::records::getitem(v, i) {
            Ok(Some(sig)) => return Ok(Some(self.record(id, sig))),
            Ok(None) => {}
            Err(message) => return Err(TypingError::Typing { message, line }),
        }
        // `a['x']`: a view of one field of an array of records.
        if let Type::StringLiteral(name) = i.get() {
            if let Some(view) = crate::records::array_field(v, &name) {
                return Ok(Some(self.record(
                    id,
                    Signature {
                        ret: view,
                        args: vec![v, i],
                        key: ImplKey::GetItem,
                    },
                )));
            }
        }
        // `ld['k']`: a literal dict read by a constant key.
        match crate::dicts::literal_getitem(v, i) {
            Ok(Some(sig)) => return Ok(Some(self.record(id, sig))),
            Ok(None) => {}
            Err(message) => return Err(TypingError::Typing { message, line }),
        }
        // `d[k]`: an empty dict's values are typed once the dict is.
        if let Some((dk, _)) = crate::dicts::dict_parts(v) {
            if dk == UNDEFINED {
                return Ok(None);
            }
            return match crate::dicts::getitem(v, i) {
                Some(sig) => Ok(Some(self.record(id, sig))),
                None => Err(TypingError::Typing {
                    message: crate::dicts::explain_getitem(v, i)
                        .unwrap_or_else(|| format!("cannot index {v} with {i}")),
                    line,
                }),
            };
        }
        // A list indexed by an integer (constant or not) or sliced; an empty list's
        // items are typed once the list is.
        if crate::lists::list_dtype(v) == Some(UNDEFINED) {
            return Ok(None);
        }
        if matches!(v.get(), Type::List { typed: true, .. })
            && crate::lists::getitem(v, i).is_none()
        {
            return Err(TypingError::Typing {
                message: "list indices must be integers or slices".into(),
                line,
            });
        }
        if let Some(t) = crate::lists::getitem(v, i) {
            let index_t = match i.unliteral().get() {
                Type::Slice(_) => i.unliteral(),
                _ => INTP,
            };
            return Ok(Some(self.record(
                id,
                Signature {
                    ret: t,
                    args: vec![v, index_t],
                    key: ImplKey::GetItem,
                },
            )));
        }
        // A string indexed by an integer or sliced: a new string (literals as values);
        // `bytes` gives an integer or new bytes. Character-array items index as the
        // strings they hold.
        if let Some(kind) = crate::strings::text_kind(v) {
            let index_t = i.unliteral();
            let sliced = matches!(index_t.get(), Type::Slice(_));
            if index_t.is_integer() || sliced {
                let ret = if kind == BYTES && !sliced {
                    UINT8
                } else {
                    kind
                };
                return Ok(Some(self.record(
                    id,
                    Signature {
                        ret,
                        args: vec![kind, index_t],
                        key: ImplKey::GetItem,
                    },
                )));
            }
        }
        // A tuple sliced by a `slice(...)` of constants is sliced at compile time
        // (Numba's static_getitem of a constant slice).
        let i = match (crate::conv::tuple_items(v), i.get()) {
            (Some(_), Type::Slice(_)) => self.const_slice(*index).unwrap_or(i),
            _ => i,
        };
        // A constant index keeps its literal type in the signature (a tuple's
        // element is chosen at compile time); a runtime index is unliteraled.
        let index_t = if i.is_literal() && !v.is_array() && v.flat_array().is_none() {
            i
        } else {
            i.unliteral()
        };
        match crate::numpy::getitem(v, i) {
            Some(t) => Ok(Some(self.record(
                id,
                Signature {
                    ret: t,
                    args: vec![v, index_t],
                    key: if index_t.is_literal() {
                        ImplKey::StaticGetItem
                    } else {
                        ImplKey::GetItem
                    },
                },
            ))),
            None => {
                // An extension's `operator.getitem` for types numba-rs does not index.
                let key = "operator.getitem";
                let ft = intern(Type::Function(key.to_string()));
                if let Some(did) = crate::extension::external().and_then(|x| x.function(ft)) {
                    let typed = self.call_dispatcher(
                        id,
                        did,
                        key,
                        vec![v, i.unliteral()],
                        vec![v, i],
                        vec![Some(*value), Some(*index)],
                        line,
                    );
                    // An array index no overload takes either: the native refusal says
                    // more than "no implementation of operator.getitem".
                    return match typed {
                        // Numba's reason for an index no array subscript takes is kept.
                        Err(e)
                            if v.is_array()
                                && !e.to_string().contains("Unsupported array index type") =>
                        {
                            Err(self.no_impl("getitem", &[v, i.unliteral()], line, ""))
                        }
                        other => other,
                    };
                }
                Err(self.no_impl("getitem", &[v, i.unliteral()], line, ""))
            }
        }
    }

    fn type_expr(&mut self, id: ExprId, line: u32) -> Result<Option<TypeId>, TypingError> {
        let ir = self.ir;
        Ok(Some(match ir.expr(id) {
            Expr::Arg { index, .. } => self.arg_types[*index as usize],
            Expr::Const(numba_bytecode::Constant::Code(code)) => {
                return Err(TypingError::Unsupported {
                    message: format!(
                        "inner functions, lambdas and comprehensions are not supported by numba-rs yet (found '{}')",
                        code.qualname
                    ),
                    line,
                })
            }
            Expr::Const(c) => typeof_const(c).ok_or_else(|| TypingError::Unsupported {
                message: format!(
                    "constant {} of type {} is not supported",
                    c.py_repr(),
                    c.type_name()
                ),
                line,
            })?,
            Expr::Global { name, value } | Expr::FreeVar { name, value, .. } => self
                .ctx
                .resolve_global(value)
                .map_err(|m| TypingError::Typing {
                    message: if m == "name is not defined" {
                        format!("NameError: name '{name}' is not defined")
                    } else if m.starts_with("Untyped global name") {
                        m
                    } else {
                        format!("Untyped global name '{name}': {m}")
                    },
                    line,
                })?,
            // A copy keeps a literal type; the return cast does not (Numba unliterals the
            // return type).
            Expr::Var(v) => match self.raw_ty(*v) {
                Some(t) => t,
                None => return Ok(None),
            },
            // A literal slice is returned as itself (boxed from its value, as Numba's
            // `box_slice_literal`); other literals as their base type.
            Expr::Cast { value: v } => match self.returned_ty(*v) {
                Some(t) => t,
                None => return Ok(None),
            },
            Expr::BinOp { op, lhs, rhs } | Expr::InplaceBinOp { op, lhs, rhs } => {
                let (Some(l), Some(r)) = (self.ty(*lhs), self.ty(*rhs)) else {
                    return Ok(None);
                };
                // `'k' in ld`: answered by the key's constant (its literal type).
                if *op == numba_ir::BinOp::In && crate::dicts::literal_parts(l).is_some() {
                    if let Some(sig) = self
                        .raw_ty(*rhs)
                        .and_then(|raw| crate::dicts::binop(*op, l, raw))
                    {
                        return Ok(Some(self.record(id, sig)));
                    }
                }
                // `l += x` / `l *= n` change the list itself.
                if matches!(ir.expr(id), Expr::InplaceBinOp { .. }) {
                    if let Some(sig) = crate::lists::inplace_binop(*op, l, r)
                        .or_else(|| crate::sets::inplace_binop(*op, l, r))
                    {
                        return Ok(Some(self.record(id, sig)));
                    }
                }
                match self.ctx.resolve_binop(*op, l, r) {
                    Some(sig) if matches!(ir.expr(id), Expr::InplaceBinOp { .. }) => {
                        let sig = crate::numpy::inplace_array_binop(*op, sig, r)
                            .map_err(|message| TypingError::Typing { message, line })?;
                        self.record(id, sig)
                    }
                    Some(sig) => self.record(id, sig),
                    None if crate::sets::explain_binop(*op, l, r).is_some() => {
                        let message = crate::sets::explain_binop(*op, l, r).unwrap_or_default();
                        return Err(TypingError::Typing { message, line });
                    }
                    None => {
                        // A library's `@overload(operator.add)` (`operator.iadd` first for
                        // `+=`), for operand types numba-rs rejects. `in` and `is` keep
                        // numba-rs's own typing (their operands are not `operator`'s order).
                        let inplace = matches!(ir.expr(id), Expr::InplaceBinOp { .. });
                        let name = op.operator_name();
                        let mut keys = Vec::new();
                        if inplace {
                            keys.push(format!("operator.i{}", name.trim_end_matches('_')));
                        }
                        keys.push(format!("operator.{name}"));
                        // `x in c` (the IR holds the container first): an extension's
                        // `operator.contains(c, x)`.
                        if *op == numba_ir::BinOp::In {
                            let key = "operator.contains";
                            let ft = intern(Type::Function(key.into()));
                            if let Some(did) =
                                crate::extension::external().and_then(|x| x.function(ft))
                            {
                                let raw_r = self.raw_ty(*rhs).unwrap_or(r);
                                let raw_l = self.raw_ty(*lhs).unwrap_or(l);
                                return self.call_dispatcher(
                                    id,
                                    did,
                                    key,
                                    vec![l, r],
                                    vec![raw_l, raw_r],
                                    vec![Some(*lhs), Some(*rhs)],
                                    line,
                                );
                            }
                        }
                        let skip = matches!(
                            op,
                            numba_ir::BinOp::In | numba_ir::BinOp::Is | numba_ir::BinOp::IsNot
                        );
                        let (raw_l, raw_r) = (
                            self.raw_ty(*lhs).unwrap_or(l),
                            self.raw_ty(*rhs).unwrap_or(r),
                        );
                        for key in keys.iter().filter(|_| !skip) {
                            let ft = intern(Type::Function(key.clone()));
                            if let Some(did) =
                                crate::extension::external().and_then(|x| x.function(ft))
                            {
                                return self.call_dispatcher(
                                    id,
                                    did,
                                    key,
                                    vec![l, r],
                                    vec![raw_l, raw_r],
                                    vec![Some(*lhs), Some(*rhs)],
                                    line,
                                );
                            }
                        }
                        return Err(self.no_impl(name, &[l, r], line, ""));
                    }
                }
            }
            Expr::Unary { op, value } => {
                let Some(t) = self.ty(*value) else {
                    return Ok(None);
                };
                match self.ctx.resolve_unary(*op, t) {
                    Some(sig) => self.record(id, sig),
                    None => {
                        let key = format!("operator.{}", op.operator_name());
                        let ft = intern(Type::Function(key.clone()));
                        if let Some(did) = crate::extension::external().and_then(|x| x.function(ft))
                        {
                            let raw = self.raw_ty(*value).unwrap_or(t);
                            return self.call_dispatcher(
                                id,
                                did,
                                &key,
                                vec![t],
                                vec![raw],
                                vec![Some(*value)],
                                line,
                            );
                        }
                        return Err(self.no_impl(op.operator_name(), &[t], line, ""));
                    }
                }
            }
            Expr::GetAttr { value, attr } => {
                let Some(t) = self.ty(*value) else {
                    return Ok(None);
                };
                // A constant string's methods may need its text (`"{}".format(x)`).
                let t = match self.raw_ty(*value) {
                    Some(raw) if matches!(raw.get(), Type::StringLiteral(_)) => raw,
                    _ => t,
                };
                let ret = match self.ctx.resolve_getattr(t, attr) {
                    Some(r) => r,
                    None => return self.extension_getattr(id, t, attr, line),
                };
                self.record(
                    id,
                    Signature {
                        ret,
                        args: vec![t],
                        key: ImplKey::GetAttr(attr.clone()),
                    },
                )
            }
            Expr::Call {
                func,
                args,
                kws,
                vararg,
                varkwarg,
                ..
            } => {
                if varkwarg.is_some() {
                    return Err(TypingError::Unsupported {
                        message: "calls with ** arguments are not supported by numba-rs yet"
                            .into(),
                        line,
                    });
                }
                // `f(*t)`: once `t` is known to be a tuple, the caller spreads it into
                // positional arguments and types again (Numba's `*args` of a tuple).
                if let Some(star) = vararg {
                    let Some(t) = self.ty(*star) else {
                        return Ok(None);
                    };
                    let Some(count) = crate::conv::tuple_items(t).map(|items| items.len()) else {
                        return Err(TypingError::Typing {
                            message: format!("a star argument must be a tuple, got {t}"),
                            line,
                        });
                    };
                    return Err(TypingError::StarArgs {
                        call: id,
                        count,
                        line,
                    });
                }
                let Some(ft) = self.ty(*func) else {
                    return Ok(None);
                };
                // A jitted callee binds keywords and defaults as Python does (an
                // extension's method: its parameters after the receiver).
                let mut callee = match ft.get() {
                    Type::Dispatcher { id: did, .. } => Some((did, false)),
                    Type::BoundFunction { key, .. } => {
                        crate::extension::method_dispatcher(&key).map(|did| (did, true))
                    }
                    _ => None,
                };
                // A keyword the native template does not take (`np.sort(a, axis=0)`):
                // numba-rs's own overload of the function, if it has one, binds the call.
                let mut kw_fallback = None;
                if callee.is_none() && !kws.is_empty() {
                    let (key, method) = match ft.get() {
                        Type::Function(k) => (Some(k), false),
                        Type::BoundFunction { key, .. } => (Some(key), true),
                        _ => (None, false),
                    };
                    if let Some(key) = key {
                        let takes = crate::numpy::param_names(&key).is_some_and(|p| {
                            kws.iter().all(|(k, _)| p.contains(&k.as_str()))
                        });
                        if !takes {
                            if let Some(did) =
                                crate::extension::external().and_then(|x| x.function(ft))
                            {
                                callee = Some((did, method));
                                kw_fallback = Some(did);
                            }
                        }
                    }
                }
                if let Some((did, bound_method)) = callee {
                    let params = self.callees.parameters(did).map(|mut p| {
                        if bound_method && !p.names.is_empty() {
                            p.names.remove(0);
                        }
                        p
                    });
                    if let Some(crate::context::Parameters {
                        names,
                        defaults,
                        star,
                        kwonly,
                    }) = params
                    {
                        let needs = !kws.is_empty()
                            || args.len() < names.len()
                            || star
                            || !kwonly.is_empty();
                        if needs {
                            let (fixed, rest) = if star && args.len() > names.len() {
                                args.split_at(names.len())
                            } else {
                                (args.as_slice(), &[][..])
                            };
                            let (kw_only, kws): (Vec<_>, Vec<_>) = kws
                                .iter()
                                .cloned()
                                .partition(|(n, _)| kwonly.iter().any(|(k, _)| k == n));
                            let mut bound = bind_call(fixed, &kws, &names, &defaults)
                                .map_err(|m| {
                                    // Numba's words for a call that does not bind.
                                    let shown = |v: &VarId| {
                                        self.ty(*v).map_or("?".to_string(), |t| t.to_string())
                                    };
                                    let a: Vec<String> = args.iter().map(shown).collect();
                                    let comma = if a.len() == 1 { "," } else { "" };
                                    let k: Vec<String> = kws
                                        .iter()
                                        .map(|(n, v)| format!("'{n}': {}", shown(v)))
                                        .collect();
                                    let sig = pysig_text(&names, &defaults, star, &kwonly);
                                    TypingError::Typing {
                                        message: format!(
                                            "Cannot bind 'args=({}{comma}) kws={{{}}}' to signature '({sig})' due to \"TypeError: {m}\".",
                                            a.join(", "),
                                            k.join(", ")
                                        ),
                                        line,
                                    }
                                })?;
                            if star {
                                bound.push(BoundArg::Pack(rest.to_vec()));
                            }
                            for (k, default) in &kwonly {
                                let given = kw_only.iter().find(|(n, _)| n == k);
                                bound.push(match (given, default) {
                                    (Some((_, v)), _) => BoundArg::Var(*v),
                                    (None, Some(c)) => BoundArg::Const(c.clone()),
                                    (None, None) => {
                                        return Err(TypingError::Typing {
                                            message: format!(
                                                "missing a required keyword-only argument: '{k}'"
                                            ),
                                            line,
                                        })
                                    }
                                });
                            }
                            if self.call_args.get(&id) != Some(&bound) {
                                self.call_args.insert(id, bound);
                            }
                        }
                    }
                }
                // Keywords are placed by parameter name for functions that declare them.
                let dispatcher_bound = callee.is_some() && self.call_args.contains_key(&id);
                let args: Vec<VarId> = if kws.is_empty() || dispatcher_bound {
                    args.clone()
                } else {
                    // A namedtuple class takes its fields by name.
                    let fields: Vec<String> = match ft.get() {
                        Type::NamedTupleClass { names, .. } => names,
                        Type::Function(k) if k.starts_with(crate::extension::INTRINSIC_PREFIX) => {
                            crate::extension::external()
                                .and_then(|x| x.intrinsic_parameters(&k))
                                .unwrap_or_default()
                        }
                        _ => Vec::new(),
                    };
                    let params: Option<Vec<&str>> = match ft.get() {
                        Type::Function(k) if k.starts_with(crate::extension::INTRINSIC_PREFIX) => {
                            Some(fields.iter().map(String::as_str).collect())
                        }
                        Type::Function(key) => {
                            crate::numpy::param_names(&key).map(|p| p.to_vec())
                        }
                        Type::BoundFunction { key, .. } => {
                            crate::numpy::param_names(&key).map(|p| p.to_vec())
                        }
                        Type::NamedTupleClass { .. } => {
                            Some(fields.iter().map(String::as_str).collect())
                        }
                        _ => None,
                    };
                    let Some(params) = params else {
                        return Err(TypingError::Unsupported {
                            message: format!(
                                "calls with keyword arguments to {ft} are not supported by numba-rs yet"
                            ),
                            line,
                        });
                    };
                    let key = match ft.get() {
                        Type::Function(k) | Type::BoundFunction { key: k, .. } => k,
                        _ => String::new(),
                    };
                    match bind_keywords(args, kws, &params, |p| {
                        crate::numpy::param_default(&key, p)
                    }) {
                        Ok(bound) => {
                            // Lowering passes them in parameter order too.
                            let vars = bound
                                .iter()
                                .filter_map(|b| match b {
                                    BoundArg::Var(v) => Some(*v),
                                    BoundArg::Const(_) | BoundArg::Pack(_) => None,
                                })
                                .collect();
                            if self.call_args.get(&id) != Some(&bound) {
                                self.call_args.insert(id, bound);
                            }
                            vars
                        }
                        Err(m) => return Err(TypingError::Typing { message: m, line }),
                    }
                };
                let mut atys = Vec::with_capacity(args.len());
                // The literal types too, for templates that need a constant (`kind=`).
                let mut raw_atys = Vec::with_capacity(args.len());
                // The variable behind each argument, where one is (for `literally`).
                let mut arg_vars: Vec<Option<VarId>> = Vec::with_capacity(args.len());
                match self.call_args.get(&id) {
                    Some(bound) => {
                        for b in bound.clone() {
                            arg_vars.push(match &b {
                                BoundArg::Var(v) => Some(*v),
                                _ => None,
                            });
                            match b {
                                BoundArg::Var(v) => match self.raw_ty(v) {
                                    Some(t) => {
                                        atys.push(t.unliteral());
                                        raw_atys.push(t);
                                    }
                                    None => return Ok(None),
                                },
                                BoundArg::Pack(vars) => {
                                    let mut items = Vec::with_capacity(vars.len());
                                    for v in vars {
                                        match self.ty(v) {
                                            Some(t) => items.push(t),
                                            None => return Ok(None),
                                        }
                                    }
                                    let t = crate::types::tuple_of(&items);
                                    atys.push(t);
                                    raw_atys.push(t);
                                }
                                BoundArg::Const(c) => match typeof_const(&c) {
                                    Some(t) => {
                                        atys.push(t.unliteral());
                                        raw_atys.push(t);
                                    }
                                    None => {
                                        return Err(TypingError::Unsupported {
                                            message: format!(
                                                "a default value {} is not supported by numba-rs yet",
                                                c.py_repr()
                                            ),
                                            line,
                                        })
                                    }
                                },
                            }
                        }
                    }
                    None => {
                        arg_vars.extend(args.iter().map(|a| Some(*a)));
                        for a in &args {
                            match self.raw_ty(*a) {
                                Some(t) => {
                                    atys.push(t.unliteral());
                                    raw_atys.push(t);
                                }
                                None => return Ok(None),
                            }
                        }
                    }
                }
                if let Some(did) = kw_fallback {
                    return self.call_overload(id, did, ft, atys, raw_atys, arg_vars, line);
                }
                // A method an extension adds: its dispatcher, the receiver first.
                if let Type::BoundFunction { key, this } = ft.get() {
                    if let Some(did) = crate::extension::method_dispatcher(&key) {
                        let mut all = vec![this];
                        all.extend_from_slice(&atys);
                        let mut raw = vec![this];
                        raw.extend_from_slice(&raw_atys);
                        let name = key.clone();
                        let mut vars = vec![None];
                        vars.extend(arg_vars);
                        return self.call_dispatcher(id, did, &name, all, raw, vars, line);
                    }
                }
                match ft.get() {
                    Type::Dispatcher { id: did, name } => {
                        return self.call_dispatcher(
                            id, did, &name, atys, raw_atys, arg_vars, line,
                        );
                    }
                    // A C function (ctypes, cffi): its address is the callee's value.
                    Type::ExternalFunctionPointer { args: params, ret } => {
                        let fits = params.len() == atys.len()
                            && atys
                                .iter()
                                .zip(&params)
                                .all(|(&a, &p)| self.ctx.can_convert(a, p).is_some());
                        if !fits {
                            let a: Vec<String> = atys.iter().map(|t| t.to_string()).collect();
                            return Err(TypingError::Typing {
                                message: format!(
                                    "No implementation of function {ft} found for signature:\n \n >>> {ft}({})",
                                    a.join(", ")
                                ),
                                line,
                            });
                        }
                        let mut args = vec![ft];
                        args.extend(params);
                        self.record(
                            id,
                            Signature {
                                ret,
                                args,
                                key: ImplKey::Function(C_CALL_KEY.into()),
                            },
                        )
                    }
                    Type::UFunc { id: uid, .. } => {
                        let sig = self
                            .callees
                            .resolve_ufunc(uid, &atys)
                            .and_then(|l| crate::ufunc_call::signature(ft, &l, &atys))
                            .map_err(|message| TypingError::Typing { message, line })?;
                        self.record(id, sig)
                    }
                    // An array comprehension's allocation: its dtype is what the loop
                    // stores (found at the `SetItem`s below).
                    Type::Function(k) if k == EMPTY_INFERRED_KEY => {
                        let ndim = match atys.as_slice() {
                            [t] => tuple_items(*t).filter(|i| i.iter().all(|i| i.is_integer())),
                            _ => None,
                        }
                        .map(|i| i.len() as u32)
                        .ok_or_else(|| TypingError::Typing {
                            message: "empty_inferred takes one tuple of sizes".into(),
                            line,
                        })?;
                        let root = self.target.and_then(|t| self.inferred_roots.get(&t).copied());
                        let Some(dtype) = root.and_then(|r| self.inferred_dtypes.get(&r).copied()) else {
                            return Ok(None);
                        };
                        self.record(
                            id,
                            Signature {
                                ret: crate::types::array(dtype, ndim, Layout::C),
                                args: atys,
                                key: ImplKey::Function(EMPTY_INFERRED_KEY.into()),
                            },
                        )
                    }
                    // A host's intrinsic: its typing function gives the signature.
                    Type::Function(k) if k.starts_with(crate::extension::INTRINSIC_PREFIX) => {
                        let Some(x) = crate::extension::external() else {
                            return Err(TypingError::Typing {
                                message: format!("no host types the intrinsic {k}"),
                                line,
                            });
                        };
                        // The argument types as written (literals kept): the host tries
                        // them and their non-literal forms in the intrinsic's order
                        // (`prefer_literal`).
                        let found = match x.intrinsic(&k, &raw_atys) {
                            Some(Ok(sig)) => Some(sig),
                            Some(Err(message)) => {
                                return Err(TypingError::Typing { message, line })
                            }
                            None => None,
                        };
                        let Some((ret, args)) = found else {
                            let a: Vec<String> = atys.iter().map(|t| t.to_string()).collect();
                            return Err(TypingError::Typing {
                                message: format!(
                                    "No implementation of function {ft} found for signature:\n \n >>> {k}({})",
                                    a.join(", ")
                                ),
                                line,
                            });
                        };
                        self.record(
                            id,
                            Signature {
                                ret,
                                args,
                                key: ImplKey::Function(k.clone()),
                            },
                        )
                    }
                    // `isinstance(x, cls)`: the literal answer, from `x`'s type.
                    Type::Function(k) if k == "isinstance" && raw_atys.len() == 2 => {
                        let yes = crate::isinstance::decide(raw_atys[0], raw_atys[1])
                            .map_err(|message| TypingError::Typing { message, line })?;
                        self.record(
                            id,
                            Signature {
                                ret: intern(Type::BooleanLiteral(yes)),
                                args: raw_atys.clone(),
                                key: ImplKey::Function(k.clone()),
                            },
                        )
                    }
                    // `literally(x)` of a value not known as a literal: the function is
                    // compiled again with the argument `x` comes from as a literal.
                    Type::Function(k)
                        if crate::builtins::LITERALLY_KEYS.contains(&k.as_str())
                            && raw_atys.len() == 1
                            && !raw_atys[0].is_literal() =>
                    {
                        let arg = args.first().copied();
                        return Err(self.literal_request(arg, line, false));
                    }
                    Type::Function(_)
                    | Type::NamedTupleClass { .. }
                    | Type::NumberClass(_)
                    | Type::ExceptionClass(_)
                    | Type::BoundFunction { .. } => {
                        // As Numba does, literal arguments are tried when their base types
                        // match nothing.
                        let resolved = self.ctx.resolve_call(ft, &atys).or_else(|| {
                            if raw_atys != atys {
                                self.ctx.resolve_call(ft, &raw_atys)
                            } else {
                                None
                            }
                        }).or_else(|| {
                            // Optional arguments as their values (Numba's
                            // `resolve_function_type`): the call unwraps them, a None
                            // raising TypeError("expected T, got None").
                            let unwrapped: Vec<TypeId> = atys
                                .iter()
                                .map(|t| match t.get() {
                                    Type::Optional(x) => x,
                                    _ => *t,
                                })
                                .collect();
                            (unwrapped != atys)
                                .then(|| self.ctx.resolve_call(ft, &unwrapped))
                                .flatten()
                        });
                        // A library's overload of this function, for types numba-rs's
                        // own templates reject.
                        if resolved.is_none() {
                            if let Some(did) =
                                crate::extension::external().and_then(|x| x.function(ft))
                            {
                                let receiver = usize::from(matches!(ft.get(), Type::BoundFunction { .. }));
                                let (mut atys, mut raw_atys, mut arg_vars) = (atys, raw_atys, arg_vars);
                                self.fill_overload_defaults(
                                    id, did, &args, receiver, &mut atys, &mut raw_atys, &mut arg_vars, line,
                                )?;
                                return self.call_overload(id, did, ft, atys, raw_atys, arg_vars, line);
                            }
                        }
                        // A store into an empty list types the list; a store that widens
                        // a list built here widens it (Numba's `list.append` refining its
                        // receiver). A list from elsewhere keeps its item type: the item
                        // converts to it.
                        let mut refine = None;
                        let resolved = match (resolved, ft.get()) {
                            (Some(sig), Type::BoundFunction { this, .. })
                                if sig.args.first().is_some_and(|&a| a != this) =>
                            {
                                if crate::lists::is_imprecise(this) || self.built_here(*func) {
                                    refine = Some(sig.args[0]);
                                    Some(sig)
                                } else {
                                    crate::lists::unrefined(sig, this)
                                }
                            }
                            (resolved, _) => resolved,
                        };
                        match resolved {
                            Some(sig) => {
                                if let Some(t) = refine {
                                    self.refine_receiver(*func, t, line)?;
                                }
                                self.record(id, sig)
                            }
                            None => {
                                if let Some(message) = self.ctx.explain_call(ft, &atys) {
                                    return Err(TypingError::Typing { message, line });
                                }
                                let fname = match ft.get() {
                                    Type::Function(k) => k,
                                    Type::NumberClass(t) => t.to_string(),
                                    other => other.to_string(),
                                };
                                let a: Vec<String> = atys.iter().map(|t| t.to_string()).collect();
                                let known = self.ctx.describe_function(ft);
                                let known = if known.is_empty() {
                                    String::new()
                                } else {
                                    format!("\n \nKnown signatures: {known}")
                                };
                                return Err(TypingError::Typing {
                                    message: format!(
                                        "No implementation of function {ft} found for signature:\n \n >>> {fname}({}){known}",
                                        a.join(", ")
                                    ),
                                    line,
                                });
                            }
                        }
                    }
                    other => {
                        return Err(TypingError::Typing {
                            message: format!(
                                "Cannot call a value of type {other}: it is not callable"
                            ),
                            line,
                        })
                    }
                }
            }
            Expr::GetIter { value } => {
                let Some(t) = self.ty(*value) else {
                    return Ok(None);
                };
                match crate::numpy::getiter(t) {
                    Some(it) => self.record(
                        id,
                        Signature {
                            ret: it,
                            args: vec![t],
                            key: ImplKey::GetIter,
                        },
                    ),
                    None => return Err(self.no_impl("getiter", &[t], line, "")),
                }
            }
            Expr::IterNext { value } => {
                let Some(t) = self.ty(*value) else {
                    return Ok(None);
                };
                match crate::numpy::iter_yield(t) {
                    Some(y) => self.record(
                        id,
                        Signature {
                            ret: intern(Type::Pair(y, BOOLEAN)),
                            args: vec![t],
                            key: ImplKey::IterNext,
                        },
                    ),
                    None => return Err(self.no_impl("iternext", &[t], line, "")),
                }
            }
            Expr::PairFirst { value } | Expr::PairSecond { value } => {
                let Some(t) = self.ty(*value) else {
                    return Ok(None);
                };
                match t.get() {
                    Type::Pair(a, b) => {
                        if matches!(ir.expr(id), Expr::PairFirst { .. }) {
                            a
                        } else {
                            b
                        }
                    }
                    other => {
                        return Err(TypingError::Typing {
                            message: format!("expected a pair, got {other}"),
                            line,
                        })
                    }
                }
            }
            Expr::GetItem { value, index } => return self.type_getitem(id, value, index, line),
            Expr::StaticGetItem {
                value,
                index_var: Some(iv),
                ..
            } if self.ty(*value).is_some_and(|v| crate::conv::tuple_items(v).is_none()) => {
                return self.type_getitem(id, value, iv, line)
            }
            Expr::StaticGetItem { value, index, .. } => {
                let Some(v) = self.ty(*value) else {
                    return Ok(None);
                };
                let n = crate::conv::tuple_items(v).map_or(0, |items| items.len() as i64);
                let i = if *index < 0 { *index + n } else { *index };
                let elem = crate::conv::tuple_items(v)
                    .and_then(|items| usize::try_from(i).ok().and_then(|i| items.get(i).copied()));
                match elem {
                    Some(t) => self.record(
                        id,
                        Signature {
                            ret: t,
                            args: vec![v, intern(Type::IntegerLiteral(i))],
                            key: ImplKey::StaticGetItem,
                        },
                    ),
                    None => return Err(self.no_impl("getitem", &[v, INT64], line, "")),
                }
            }
            Expr::BuildTuple { items } => {
                let mut tys = Vec::new();
                for v in items {
                    match self.ty(*v) {
                        Some(t) => tys.push(t),
                        None => return Ok(None),
                    }
                }
                tuple_of(&tys)
            }
            Expr::ExhaustIter { value, count } => {
                let Some(v) = self.ty(*value) else {
                    return Ok(None);
                };
                match v.get() {
                    _ if crate::conv::tuple_items(v).is_some_and(|i| i.len() == *count as usize) => v,
                    Type::List { dtype, .. } => intern(Type::UniTuple(dtype, *count)),
                    // A 1-d array unpacks into its elements (Numba's).
                    Type::Array { dtype, ndim: 1, .. } => intern(Type::UniTuple(dtype, *count)),
                    other => {
                        return Err(TypingError::Typing {
                            message: format!("cannot unpack {other} into {count} values"),
                            line,
                        })
                    }
                }
            }
            Expr::TypedGetItem { .. } | Expr::Null | Expr::Undef | Expr::Extension { .. } => {
                return Err(TypingError::Unsupported {
                    message: "this expression is not supported by numba-rs's typing yet".into(),
                    line,
                })
            }
            Expr::MakeFunction { .. } => return Err(TypingError::Unsupported {
                message:
                    "inner functions, lambdas and comprehensions are not supported by numba-rs yet"
                        .into(),
                line,
            }),
            Expr::Yield { value, .. } => {
                let Some(t) = self.ty(*value) else {
                    return Ok(None);
                };
                if !self.yield_seen.contains(&t) {
                    self.yield_seen.push(t);
                    self.changed = true;
                }
                // Types that do not unify are reported once inference is done, with
                // every type yielded (Numba's message).
                let new = match self.yield_ty {
                    None => t,
                    Some(old) => self.ctx.unify(old, t).unwrap_or(old),
                };
                if self.yield_ty != Some(new) {
                    self.yield_ty = Some(new);
                    self.changed = true;
                }
                send_type(new, self.yield_used)
            }
            Expr::BuildList { items } | Expr::BuildSet { items } => {
                let list = matches!(ir.expr(id), Expr::BuildList { .. });
                let what = if list { "list" } else { "set" };
                let Some(dtype) = self.common_item_type(items, what, line)? else {
                    return Ok(None);
                };
                let dtype = crate::strings::held_text(dtype);
                let holdable = if list {
                    crate::lists::storable(dtype)
                } else {
                    crate::sets::hashable(dtype)
                };
                if dtype != UNDEFINED && !holdable {
                    return Err(TypingError::Unsupported {
                        message: format!("{what}s of {dtype} are not supported by numba-rs yet"),
                        line,
                    });
                }
                if list {
                    crate::lists::list_of(dtype)
                } else {
                    crate::sets::set_of(dtype)
                }
            }
            Expr::BuildMap { items, .. } => {
                let mut tys = Vec::with_capacity(items.len());
                for (k, v) in items {
                    // Keys and values keep their literal types: string constants may
                    // make a literal-string-key dict, whose `literal_value` keeps the
                    // values' literal types.
                    let (Some(k), Some(v)) = (self.raw_ty(*k), self.raw_ty(*v)) else {
                        return Ok(None);
                    };
                    tys.push((k, v));
                }
                crate::dicts::build_map(&tys)
                    .map_err(|message| TypingError::Typing { message, line })?
            }
            Expr::ListToTuple { .. } => {
                return Err(TypingError::Unsupported {
                    message: "`*` unpacking into a tuple is not supported by numba-rs yet".into(),
                    line,
                })
            }
            Expr::Phi { incoming } => {
                let mut acc: Option<TypeId> = None;
                for (v, _) in incoming {
                    if let Some(t) = v.and_then(|v| self.ty(v)) {
                        acc = Some(match acc {
                            None => t,
                            Some(a) => match self.ctx.unify(a, t) {
                                Some(u) => u,
                                None => {
                                    // Literal types first, as Numba reports them.
                                    let (ra, rt) = incoming
                                        .iter()
                                        .filter_map(|(v, _)| v.and_then(|v| self.raw_ty(v)))
                                        .fold((a, t), |acc, x| {
                                            if x.unliteral() == a { (x, acc.1) } else if x.unliteral() == t { (acc.0, x) } else { acc }
                                        });
                                    let name = self
                                        .target
                                        .map(|v| self.user_name(v))
                                        .unwrap_or_default();
                                    return Err(TypingError::Typing {
                                        message: format!(
                                            "Cannot unify {ra} and {rt} for '{name}'"
                                        ),
                                        line,
                                    });
                                }
                            },
                        });
                    }
                }
                match acc {
                    Some(t) => t,
                    None => return Ok(None),
                }
            }
        }))
    }
}

/// Each variable's defining expressions, computed once per typing (`Engine::defs`).
fn definitions<'c>(
    cell: &'c std::sync::OnceLock<HashMap<VarId, Vec<ExprId>>>,
    ir: &FunctionIR,
) -> &'c HashMap<VarId, Vec<ExprId>> {
    cell.get_or_init(|| {
        let mut m: HashMap<VarId, Vec<ExprId>> = HashMap::new();
        for b in ir.blocks.values() {
            for inst in &b.body {
                if let Stmt::Assign { target, value } = &inst.stmt {
                    m.entry(*target).or_default().push(*value);
                }
            }
        }
        m
    })
}

/// The containers a bound method `func` was read from (`l` in `f = l.append`).
fn receivers(defs: &HashMap<VarId, Vec<ExprId>>, ir: &FunctionIR, func: VarId) -> Vec<VarId> {
    // The bound method is read before the arguments are evaluated: one whose argument
    // branches (`m.append(x if c else y)`) reaches the call through copies and phis.
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![func];
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        for &e in defs.get(&v).into_iter().flatten() {
            match ir.expr(e) {
                Expr::GetAttr { value, .. } => out.push(*value),
                Expr::Var(src) => stack.push(*src),
                Expr::Phi { incoming } => stack.extend(incoming.iter().filter_map(|(v, _)| *v)),
                _ => {}
            }
        }
    }
    out
}
