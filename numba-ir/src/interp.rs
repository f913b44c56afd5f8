//! The interpreter: bytecode dataflow → Numba IR (Numba's `interpreter.py`).
//!
//! Blocks are visited in offset order. Within a block, stores of plain copies are folded
//! through an `Assigner` so `LOAD_FAST` temporaries never appear, unused temporaries are
//! dropped, and stack values that cross blocks are assigned to phi variables before the
//! terminator, exactly as Numba does, so variable names match Numba's dumps.

use std::collections::{BTreeSet, HashMap};

use numba_bytecode::flow::{self, is_null_reg, BlockKind, Dataflow, TracedInst};
use numba_bytecode::opcode::{BINARY_OP_SYMBOLS, COMPARE_OP_SYMBOLS};
use numba_bytecode::{ByteCode, CodeObject, Constant, Instruction};

use crate::error::IrError;
use crate::global::{Global, GlobalResolver};
use crate::ir::*;

/// Decode, analyse and interpret a code object in one call.
pub fn compile_to_ir(
    code: CodeObject,
    globals: &dyn GlobalResolver,
) -> Result<FunctionIR, IrError> {
    let bc = ByteCode::decode(code)?;
    let df = flow::analyze(&bc)?;
    let mut ir = interpret(&bc, &df, globals)?;
    crate::postproc::run(&mut ir, false);
    Ok(ir)
}

/// A comprehension's hidden argument `.0` is `implicit0` in Numba (as `inspect` names it).
fn implicit_name(name: &str) -> String {
    match name.strip_prefix('.') {
        Some(rest) if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) => {
            format!("implicit{rest}")
        }
        _ => name.to_string(),
    }
}

/// Numba's `error_extras['reportable']`, appended to messages about internal errors.
const REPORTABLE: &str = "\n-------------------------------------------------------------------------------\nThis should not have happened, a problem has occurred in Numba's internals.\nYou are currently using Numba version 0.68.1.\n\nPlease report the error message and traceback, along with a minimal reproducer\nat: https://github.com/numba/numba/issues/new?template=bug_report.md\n\nIf more help is needed please feel free to ask on the Numba discourse forum:\nhttps://numba.discourse.group/\n\nThanks in advance for your help in improving Numba!\n\n";

/// Python dict semantics for a list of entries: a repeated key keeps its first position
/// and takes the last value.
fn dict_entries(entries: Vec<(Constant, LiteralValue)>) -> Vec<(Constant, LiteralValue)> {
    let mut out: Vec<(Constant, LiteralValue)> = Vec::new();
    for (k, v) in entries {
        match out.iter_mut().find(|(ok, _)| *ok == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// `{key: index}` with the last index for a repeated key.
fn dict_indexes(keys: &[Constant]) -> Vec<(Constant, usize)> {
    let mut out: Vec<(Constant, usize)> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        match out.iter_mut().find(|(ok, _)| ok == k) {
            Some(slot) => slot.1 = i,
            None => out.push((k.clone(), i)),
        }
    }
    out
}

/// Numba's `Assigner`: remembers which temporaries are copies of which variables, per block.
#[derive(Default)]
struct Assigner {
    dest_to_src: HashMap<VarId, VarId>,
    src_invalidate: HashMap<VarId, Vec<VarId>>,
    unused_dests: BTreeSet<VarId>,
}

impl Assigner {
    fn assign(&mut self, src: VarId, dest: VarId, dest_is_temp: bool) -> VarId {
        if let Some(ds) = self.src_invalidate.remove(&dest) {
            for d in ds {
                self.dest_to_src.remove(&d);
            }
        }
        let src = self.dest_to_src.get(&src).copied().unwrap_or(src);
        if dest_is_temp {
            self.dest_to_src.insert(dest, src);
            self.src_invalidate.entry(src).or_default().push(dest);
            self.unused_dests.insert(dest);
        }
        src
    }

    fn source_of(&mut self, dest: VarId) -> Option<VarId> {
        match self.dest_to_src.get(&dest) {
            Some(s) => Some(*s),
            None => {
                self.unused_dests.remove(&dest);
                None
            }
        }
    }
}

struct Interp<'a> {
    bc: &'a ByteCode,
    df: &'a Dataflow,
    globals: &'a dyn GlobalResolver,
    ir: FunctionIR,
    names: HashMap<String, VarId>,
    redefined: HashMap<String, u32>,
    backbone: BTreeSet<Label>,
    current: Option<Label>,
    body: Vec<Inst>,
    loc: Loc,
    assigner: Assigner,
    /// Every value stored into each variable (Numba's `Interpreter.definitions`).
    definitions: HashMap<VarId, Vec<ExprId>>,
    /// The active `try` of the previous block, to know where a new one starts.
    prev_try: Option<u32>,
    /// Registers standing for exception objects (only `None` placeholders in Numba).
    exception_vars: BTreeSet<VarId>,
    /// Exit offsets of the open `with` blocks, innermost last.
    with_exits: Vec<u32>,
}

/// Interpret a function's dataflow into IR, resolving globals through `globals`.
pub fn interpret(
    bc: &ByteCode,
    df: &Dataflow,
    globals: &dyn GlobalResolver,
) -> Result<FunctionIR, IrError> {
    let code = &bc.code;
    let in_loops: BTreeSet<Label> = df
        .cfg
        .loops
        .values()
        .flat_map(|l| l.body.iter().copied())
        .collect();
    let backbone = df.cfg.backbone().difference(&in_loops).copied().collect();
    let mut it = Interp {
        bc,
        df,
        globals,
        ir: FunctionIR {
            name: code.name.clone(),
            qualname: code.qualname.clone(),
            filename: code.filename.clone(),
            firstlineno: code.firstlineno,
            arg_names: code.arg_names().iter().map(|n| implicit_name(n)).collect(),
            ..FunctionIR::default()
        },
        names: HashMap::new(),
        redefined: HashMap::new(),
        backbone,
        current: None,
        body: Vec::new(),
        loc: Loc::default(),
        assigner: Assigner::default(),
        definitions: HashMap::new(),
        prev_try: None,
        exception_vars: BTreeSet::new(),
        with_exits: Vec::new(),
    };
    it.ir.is_generator = code.is_generator();
    if code.flags & numba_bytecode::code::CO_VARARGS != 0 {
        it.ir.star_param = Some(code.argcount as usize);
    }
    for (i, (&label, block)) in df.blocks.iter().enumerate() {
        it.start_block(label);
        if i == 0 {
            for (index, name) in it.ir.arg_names.clone().into_iter().enumerate() {
                let e = Expr::Arg {
                    index: index as u32,
                    name: name.clone(),
                };
                it.store(e, &name, false);
            }
        }
        for ti in &block.insts {
            let inst = bc.at(ti.offset).ok_or_else(|| IrError::Unsupported {
                message: "dataflow refers to a missing instruction".into(),
                line: it.loc.line,
            })?;
            it.loc = Loc { line: inst.line };
            // Reaching the end of a with-body closes it.
            if it
                .with_exits
                .last()
                .is_some_and(|&exit| inst.offset >= exit)
            {
                it.with_exits.pop();
                it.emit(Stmt::PopBlock);
            }
            it.dispatch(inst, ti)?;
        }
        it.end_block(label)?;
    }
    it.end_try_blocks();
    it.legalize_exception_vars()?;
    let mut ir = it.ir;
    split_at_pop_block(&mut ir)?;
    list_to_tuple(&mut ir);
    delete_with_exit(&mut ir);
    Ok(ir)
}

/// `peep_hole_split_at_pop_block`: a block containing `pop_block` is split so that the
/// statements before it, the `pop_block` itself and the rest are blocks `L`, `L+1`, `L+2`.
fn split_at_pop_block(ir: &mut FunctionIR) -> Result<(), IrError> {
    let labels: Vec<Label> = ir.blocks.keys().copied().collect();
    for (idx, &label) in labels.iter().enumerate() {
        let body = &ir.blocks[&label].body;
        let pops: Vec<usize> = body
            .iter()
            .enumerate()
            .filter(|(_, i)| matches!(i.stmt, Stmt::PopBlock))
            .map(|(i, _)| i)
            .collect();
        let Some(&last_pop) = pops.last() else {
            continue;
        };
        let loc = body.first().map(|i| i.loc).unwrap_or_default();
        let body = body.clone();
        let mut pieces: Vec<Vec<Inst>> = Vec::new();
        for &i in &pops {
            pieces.push(body[..i].to_vec());
            pieces.push(vec![body[i].clone()]);
        }
        let block_loc = ir.block_locs.get(&label).copied().unwrap_or(loc);
        let mut prev = label;
        for mut piece in pieces {
            ir.block_locs.insert(prev, block_loc);
            piece.push(Inst {
                stmt: Stmt::Jump { target: prev + 1 },
                loc,
            });
            ir.blocks.insert(prev, Block { body: piece });
            prev += 1;
        }
        if labels.get(idx + 1).is_some_and(|&next| prev >= next) {
            return Err(IrError::Unsupported {
                message: "POP_BLOCK peephole failed".into(),
                line: loc.line,
            });
        }
        ir.block_locs.insert(prev, block_loc);
        ir.blocks.insert(
            prev,
            Block {
                body: body[last_pop + 1..].to_vec(),
            },
        );
    }
    Ok(())
}

/// `peep_hole_list_to_tuple`: `(*a, b)` and `f(x, *rest)` build a list with `append` and
/// `extend` and convert it with `LIST_TO_TUPLE`; rewrite each such window into tuple
/// concatenation (`build_tuple` for appends, `tuple(x)` for extends, joined by `+`).
fn list_to_tuple(ir: &mut FunctionIR) {
    let labels: Vec<Label> = ir.blocks.keys().copied().collect();
    for label in labels {
        // Each rewrite removes one list_to_tuple, so this terminates.
        while rewrite_one_list_to_tuple(ir, label) {}
    }
}

fn rewrite_one_list_to_tuple(ir: &mut FunctionIR, label: Label) -> bool {
    let body = ir.blocks[&label].body.clone();
    let assign_of = |i: &Inst| match i.stmt {
        Stmt::Assign { target, value } => Some((target, value)),
        _ => None,
    };
    // The last list_to_tuple, and the assignment to its list before it.
    let mut region = None;
    for (t2l_idx, inst) in body.iter().enumerate().rev() {
        let Some((_, value)) = assign_of(inst) else {
            continue;
        };
        let Expr::ListToTuple { list } = *ir.expr(value) else {
            continue;
        };
        let name = ir.var_name(list).to_string();
        let init = body[..t2l_idx]
            .iter()
            .rposition(|i| assign_of(i).is_some_and(|(t, _)| ir.var_name(t) == name));
        region = init.map(|init_idx| (t2l_idx, init_idx));
        break;
    }
    let Some((t2l_idx, init_idx)) = region else {
        return false;
    };
    let (the_list, init_expr) = assign_of(&body[init_idx]).expect("found as an assignment");
    let init_has_items =
        matches!(ir.expr(init_expr), Expr::BuildList { items } if !items.is_empty());
    let (t2l_target, _) = assign_of(&body[t2l_idx]).expect("found as an assignment");
    let window = &body[init_idx..t2l_idx];
    let mut appends = BTreeSet::new();
    let mut extends = BTreeSet::new();
    for inst in window {
        if let Some((t, e)) = assign_of(inst) {
            if let Expr::GetAttr { value, attr } = ir.expr(e) {
                if *value == the_list {
                    match attr.as_str() {
                        "extend" => extends.insert(t),
                        "append" => appends.insert(t),
                        _ => false,
                    };
                }
            }
        }
    }
    let mut new_hole: Vec<Inst> = Vec::new();
    let mut pending: Vec<VarId> = Vec::new();
    let mut acc = the_list;
    let fresh = |ir: &mut FunctionIR, base: &str, loc: Loc| -> VarId {
        let name = crate::utils::fresh_name(ir, base);
        ir.add_var(name, loc)
    };
    let assign = |ir: &mut FunctionIR, target: VarId, e: Expr, loc: Loc| -> Inst {
        let value = ir.add_expr(e);
        Inst {
            stmt: Stmt::Assign { target, value },
            loc,
        }
    };
    // Emit pending appends as one build_tuple added to the accumulator; with `target`,
    // write the result there.
    let flush = |ir: &mut FunctionIR,
                 new_hole: &mut Vec<Inst>,
                 pending: &mut Vec<VarId>,
                 mut acc: VarId,
                 loc: Loc,
                 target: Option<VarId>|
     -> VarId {
        if !pending.is_empty() {
            let items = std::mem::take(pending);
            let tup = Expr::BuildTuple { items };
            if acc == the_list && !init_has_items {
                if let Some(t) = target {
                    new_hole.push(assign(ir, t, tup, loc));
                    return t;
                }
                let a = fresh(ir, "$_list_append_tuple", loc);
                new_hole.push(assign(ir, a, tup, loc));
                return a;
            }
            let tup_var = fresh(ir, "$_list_append_tuple", loc);
            new_hole.push(assign(ir, tup_var, tup, loc));
            let acc_var = fresh(ir, "$_list_append_acc", loc);
            new_hole.push(assign(
                ir,
                acc_var,
                Expr::BinOp {
                    op: BinOp::Add,
                    lhs: acc,
                    rhs: tup_var,
                },
                loc,
            ));
            acc = acc_var;
        }
        if let Some(t) = target {
            new_hole.push(assign(ir, t, Expr::Var(acc), loc));
            return t;
        }
        acc
    };
    for inst in window {
        let Some((target, e)) = assign_of(inst) else {
            new_hole.push(inst.clone());
            continue;
        };
        match ir.expr(e).clone() {
            Expr::GetAttr { .. } if extends.contains(&target) || appends.contains(&target) => {}
            Expr::Call { func, args, .. } if extends.contains(&func) || appends.contains(&func) => {
                let Some(&arg) = args.first() else {
                    new_hole.push(inst.clone());
                    continue;
                };
                let is_append = appends.contains(&func);
                if is_append {
                    pending.push(arg);
                    continue;
                }
                acc = flush(ir, &mut new_hole, &mut pending, acc, inst.loc, None);
                let tmp_name = format!("{}_var_{}", ir.var_name(func), ir.var_name(arg));
                let gv = fresh(ir, "$_list_extend_gv_tuple", inst.loc);
                new_hole.push(assign(
                    ir,
                    gv,
                    Expr::Global {
                        name: "tuple".into(),
                        value: Global::builtin("tuple"),
                    },
                    inst.loc,
                ));
                let tmp = match ir.var_by_name(&tmp_name) {
                    Some(v) => v,
                    None => ir.add_var(tmp_name, inst.loc),
                };
                new_hole.push(assign(
                    ir,
                    tmp,
                    Expr::synthetic_call(gv, vec![arg]),
                    inst.loc,
                ));
                new_hole.push(assign(
                    ir,
                    target,
                    Expr::BinOp {
                        op: BinOp::Add,
                        lhs: acc,
                        rhs: tmp,
                    },
                    inst.loc,
                ));
                acc = target;
            }
            Expr::BuildList { items } if target == the_list => {
                new_hole.push(assign(ir, target, Expr::BuildTuple { items }, inst.loc));
            }
            _ => new_hole.push(inst.clone()),
        }
    }
    let loc = body[init_idx].loc;
    flush(ir, &mut new_hole, &mut pending, acc, loc, Some(t2l_target));
    let mut new_body = body[..init_idx].to_vec();
    new_body.extend(new_hole);
    new_body.extend_from_slice(&body[t2l_idx + 1..]);
    if let Some(b) = ir.blocks.get_mut(&label) {
        b.body = new_body;
    }
    true
}

/// `peep_hole_delete_with_exit`: drop every statement that touches the `__exit__`
/// function `BEFORE_WITH` stored (`$setup_with_exitfn...`) or a value derived from it.
fn delete_with_exit(ir: &mut FunctionIR) {
    let mut dead: BTreeSet<VarId> = BTreeSet::new();
    let labels: Vec<Label> = ir.blocks.keys().copied().collect();
    for label in labels {
        let body = ir.blocks[&label].body.clone();
        for inst in &body {
            let used = ir.stmt_vars(&inst.stmt);
            for v in &used {
                if ir.var_name(*v).starts_with("$setup_with_exitfn") {
                    dead.insert(*v);
                }
            }
            if used.iter().any(|v| dead.contains(v)) {
                if let Stmt::Assign { target, .. } = inst.stmt {
                    dead.insert(target);
                }
            }
        }
        let kept: Vec<Inst> = body
            .into_iter()
            .filter(|i| !ir.stmt_vars(&i.stmt).iter().any(|v| dead.contains(v)))
            .collect();
        if let Some(b) = ir.blocks.get_mut(&label) {
            b.body = kept;
        }
    }
}

impl Interp<'_> {
    fn start_block(&mut self, label: Label) {
        self.current = Some(label);
        self.body.clear();
        self.assigner = Assigner::default();
        if let Some(inst) = self.bc.at(label) {
            self.loc = Loc { line: inst.line };
        }
        self.ir.block_locs.insert(label, self.loc);
        // Blocks past the end of an open with-body close it.
        while self.with_exits.last().is_some_and(|&exit| label >= exit) {
            self.with_exits.pop();
            self.emit(Stmt::PopBlock);
        }
        // A block entering a different try than its predecessor in label order marks it.
        let active = self.df.blocks[&label].active_try().map(|t| t.id);
        if active.is_some() && active != self.prev_try {
            self.inject_call("mark_try_block", None);
        }
        self.prev_try = active;
    }

    /// Numba's `_inject_call`: `name = global(name: <intrinsic name>)` then
    /// `res = call name()`, both redefined on each use (`name.1`, `$callres_name.1`, ...).
    fn inject_call(&mut self, name: &str, res: Option<&str>) {
        self.store(
            Expr::Global {
                name: name.to_string(),
                value: Global::intrinsic(name),
            },
            name,
            true,
        );
        let func = self
            .lookup(name)
            .expect("the intrinsic was stored just above");
        let res = res.map_or_else(|| format!("$callres_{name}"), str::to_string);
        self.store(Expr::synthetic_call(func, Vec::new()), &res, true);
    }

    /// `_insert_exception_check`: the values the handler edge pushes become `None`
    /// placeholders, then `$exception_check = call exception_check()`.
    fn insert_exception_check(&mut self, label: Label) -> Result<(), IrError> {
        let block = &self.df.blocks[&label];
        if let Some(tryblk) = block.active_try() {
            let pushed: Vec<String> = block
                .edges
                .iter()
                .filter(|e| e.target == tryblk.end && e.npush > 0)
                .flat_map(|e| e.stack[e.stack.len() - e.npush..].to_vec())
                .collect();
            for reg in pushed {
                if self.names.contains_key(&reg) {
                    return Err(IrError::Unsupported {
                        message: "exception variable CANNOT be defined by other code".into(),
                        line: self.loc.line,
                    });
                }
                let v = self.store(Expr::Const(Constant::None), &reg, false);
                self.exception_vars.insert(v);
            }
        }
        self.inject_call("exception_check", Some("$exception_check"));
        Ok(())
    }

    /// `_end_try_blocks`: a block reached from inside a `try` it is not in (the handler,
    /// or the code after the body) starts with `end_try_block()`.
    fn end_try_blocks(&mut self) {
        let labels: Vec<Label> = self.ir.blocks.keys().copied().collect();
        for label in labels {
            let Some(info) = self.df.blocks.get(&label) else {
                continue;
            };
            let cur = &info.blockstack;
            let leaves_try = self.df.cfg.predecessors(label).any(|p| {
                let inc = &self.df.blocks[&p].blockstack;
                let common = cur
                    .iter()
                    .zip(inc)
                    .take_while(|(a, b)| a.id == b.id)
                    .count();
                inc[common..].iter().any(|b| b.kind == BlockKind::Try)
            });
            if leaves_try {
                let old = std::mem::take(&mut self.body);
                self.body = Vec::new();
                self.inject_call("end_try_block", None);
                let mut marker = std::mem::replace(&mut self.body, old);
                if let Some(b) = self.ir.blocks.get_mut(&label) {
                    marker.append(&mut b.body);
                    b.body = marker;
                }
            }
        }
    }

    /// `_legalize_exception_vars`: an exception object may not reach a user variable.
    fn legalize_exception_vars(&self) -> Result<(), IrError> {
        // Numba propagates in one pass over its definitions in insertion order; our
        // variable order differs (locals exist up front), so propagate to a fixpoint.
        let mut excvars = self.exception_vars.clone();
        let mut changed = true;
        while changed {
            changed = false;
            for (&var, defs) in &self.definitions {
                if excvars.contains(&var) {
                    continue;
                }
                let from_exc = defs
                    .iter()
                    .any(|&e| matches!(self.ir.expr(e), Expr::Var(src) if excvars.contains(src)));
                if from_exc {
                    excvars.insert(var);
                    changed = true;
                }
            }
        }
        match excvars.iter().find(|v| !self.ir.var(**v).is_temp()) {
            Some(&v) => Err(IrError::Unsupported {
                message: format!(
                    "Exception object cannot be stored into variable ({}).",
                    self.ir.var_name(v)
                ),
                line: self.ir.var(v).loc.line,
            }),
            None => Ok(()),
        }
    }

    fn is_terminated(&self) -> bool {
        self.body.last().is_some_and(|i| i.stmt.is_terminator())
    }

    fn end_block(&mut self, label: Label) -> Result<(), IrError> {
        let in_try = self.df.blocks[&label].active_try().copied();
        if !self.is_terminated() && in_try.is_some() {
            self.insert_exception_check(label)?;
        }
        self.remove_unused_temporaries();
        let block = &self.df.blocks[&label];
        let term = if self.is_terminated() {
            self.body.pop()
        } else {
            None
        };
        for (phi, value) in &block.outgoing_phis {
            let target = self.get_or_define(phi);
            let v = match self.lookup(value) {
                Some(v) => self.ir.add_expr(Expr::Var(v)),
                None => self.ir.add_expr(Expr::Const(Constant::None)),
            };
            // Recorded as Numba records them (`_legalize_exception_vars` follows them).
            self.definitions.entry(target).or_default().push(v);
            self.emit(Stmt::Assign { target, value: v });
        }
        match term {
            Some(t) => self.body.push(t),
            None => {
                // A block without a terminator falls through to the next block; inside a
                // try it branches to the handler when an exception is pending.
                let next = self
                    .df
                    .blocks
                    .range(label + 1..)
                    .next()
                    .map(|(&l, _)| l)
                    .or_else(|| block.edges.first().map(|e| e.target));
                if let Some(next) = next {
                    let handler = in_try
                        .map(|t| t.end)
                        .filter(|h| self.df.blocks.contains_key(h));
                    match handler {
                        Some(h) => {
                            let cond = self.get("$exception_check")?;
                            self.emit(Stmt::Branch {
                                cond,
                                truebr: h,
                                falsebr: next,
                            });
                        }
                        None => self.emit(Stmt::Jump { target: next }),
                    }
                }
            }
        }
        self.ir.blocks.insert(
            label,
            Block {
                body: std::mem::take(&mut self.body),
            },
        );
        Ok(())
    }

    /// Numba's `_remove_unused_temporaries`.
    fn remove_unused_temporaries(&mut self) {
        let mut new_body: Vec<Inst> = Vec::with_capacity(self.body.len());
        let mut replaced: HashMap<VarId, VarId> = HashMap::new();
        for mut inst in std::mem::take(&mut self.body) {
            // `a = b[i] = 1` stores one temporary twice: later item and attribute stores
            // read the variable it was folded into.
            if let Stmt::SetItem { value, .. } | Stmt::SetAttr { value, .. } = &mut inst.stmt {
                if let Some(&r) = replaced.get(value) {
                    *value = r;
                }
            }
            if let Stmt::Assign { target, value } = inst.stmt {
                let tvar = self.ir.var(target);
                if tvar.is_temp() && self.assigner.unused_dests.contains(&target) {
                    continue;
                }
                // Chained unpacking (`a = (b, c) = t`) reuses the temporary too.
                if let Expr::ExhaustIter { value: src, count } = self.ir.expr(value).clone() {
                    if let Some(&r) = replaced.get(&src) {
                        let e = self.ir.add_expr(Expr::ExhaustIter { value: r, count });
                        inst.stmt = Stmt::Assign { target, value: e };
                        new_body.push(inst);
                        continue;
                    }
                }
                if let Expr::Var(src) = self.ir.expr(value).clone() {
                    if let Some(&r) = replaced.get(&src) {
                        let e = self.ir.add_expr(Expr::Var(r));
                        inst.stmt = Stmt::Assign { target, value: e };
                        new_body.push(inst);
                        continue;
                    }
                    if self.ir.var(src).is_temp() {
                        if let Some(Inst {
                            stmt:
                                Stmt::Assign {
                                    target: prev_t,
                                    value: prev_v,
                                },
                            ..
                        }) = new_body.last_mut()
                        {
                            let used_in_binop = matches!(
                                self.ir.expr(*prev_v),
                                Expr::BinOp { lhs, rhs, .. } | Expr::InplaceBinOp { lhs, rhs, .. }
                                    if *lhs == target || *rhs == target
                            );
                            if *prev_t == src && !used_in_binop {
                                replaced.insert(src, target);
                                *prev_t = target;
                                continue;
                            }
                        }
                    }
                }
            }
            new_body.push(inst);
        }
        self.body = new_body;
    }

    fn emit(&mut self, stmt: Stmt) {
        self.body.push(Inst {
            stmt,
            loc: self.loc,
        });
    }

    fn define(&mut self, name: &str) -> VarId {
        let id = self.ir.add_var(name, self.loc);
        self.names.insert(name.to_string(), id);
        id
    }

    fn latest_name(&self, name: &str) -> String {
        match self.redefined.get(name) {
            Some(n) => format!("{name}.{n}"),
            None => name.to_string(),
        }
    }

    fn get_or_define(&mut self, name: &str) -> VarId {
        let name = self.latest_name(name);
        match self.names.get(&name) {
            Some(&v) => v,
            None => self.define(&name),
        }
    }

    fn redefine(&mut self, name: &str) -> VarId {
        if !self.names.contains_key(name) {
            return self.define(name);
        }
        loop {
            let ct = self.redefined.entry(name.to_string()).or_insert(0);
            *ct += 1;
            let newname = format!("{name}.{ct}");
            if !self.names.contains_key(&newname) {
                return self.define(&newname);
            }
        }
    }

    /// Numba's `Interpreter.get`: through the assigner, then the latest definition.
    fn lookup(&mut self, name: &str) -> Option<VarId> {
        let name = &implicit_name(name);
        let latest = self.latest_name(name);
        let v = *self.names.get(&latest)?;
        Some(self.assigner.source_of(v).unwrap_or(v))
    }

    fn get(&mut self, name: &str) -> Result<VarId, IrError> {
        self.lookup(name).ok_or_else(|| IrError::Unsupported {
            message: format!("variable '{name}' is used before it is defined"),
            line: self.loc.line,
        })
    }

    fn store(&mut self, value: Expr, name: &str, redefine: bool) -> VarId {
        let label_in_backbone = self
            .current_label()
            .is_some_and(|l| self.backbone.contains(&l));
        let target = if redefine || label_in_backbone {
            // A cell variable keeps its name: a closure may capture it.
            if self.bc.code.cellvars().iter().any(|c| c == name) {
                self.get_or_define(name)
            } else {
                self.redefine(name)
            }
        } else {
            self.get_or_define(name)
        };
        let value = match value {
            Expr::Var(src) => {
                let is_temp = self.ir.var(target).is_temp();
                Expr::Var(self.assigner.assign(src, target, is_temp))
            }
            other => other,
        };
        let e = self.ir.add_expr(value);
        self.definitions.entry(target).or_default().push(e);
        self.emit(Stmt::Assign { target, value: e });
        target
    }

    /// The constant a variable is defined as, when it has exactly one definition and that
    /// is a constant (Numba's `definitions` check for literal dicts).
    fn sole_const(&self, v: VarId) -> Option<Constant> {
        match self.definitions.get(&v).map(Vec::as_slice) {
            Some([e]) => match self.ir.expr(*e) {
                Expr::Const(c) => Some(c.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// `getattr(target, attr)` into `attrvar`, then a synthetic call of it with `args` into
    /// `res` (how Numba lowers `LIST_APPEND`, `SET_ADD`, `MAP_ADD`, ...).
    fn method_call(
        &mut self,
        target: VarId,
        attr: &str,
        args: Vec<VarId>,
        attrvar: &str,
        res: &str,
    ) -> Result<(), IrError> {
        self.store(
            Expr::GetAttr {
                value: target,
                attr: attr.to_string(),
            },
            attrvar,
            false,
        );
        let func = self.get(attrvar)?;
        self.store(Expr::synthetic_call(func, args), res, false);
        Ok(())
    }

    fn current_label(&self) -> Option<Label> {
        self.current
    }

    fn unsupported(&self, inst: &Instruction) -> IrError {
        IrError::Unsupported {
            message: format!(
                "Use of unsupported opcode ({}) found: numba-rs does not support it yet",
                inst.opname
            ),
            line: inst.line,
        }
    }

    fn global_value(&self, name: &str) -> Global {
        self.globals.resolve_global(name)
    }

    fn dispatch(&mut self, inst: &Instruction, ti: &TracedInst) -> Result<(), IrError> {
        let arg = inst.arg_or_zero();
        let code = &self.bc.code;
        let out = |i: usize| ti.outputs.get(i).cloned().unwrap_or_default();
        match inst.opname {
            "NOP" | "RESUME" | "PRECALL" | "CACHE" | "COPY_FREE_VARS" | "MAKE_CELL" => {}
            "LOAD_GLOBAL" => {
                let name = code
                    .names
                    .get((arg >> 1) as usize)
                    .cloned()
                    .ok_or_else(|| self.unsupported(inst))?;
                let value = self.global_value(&name);
                self.store(Expr::Global { name, value }, &out(0), false);
            }
            "LOAD_FAST" => {
                let src = code.localsplus_name(arg).unwrap_or_default().to_string();
                let v = self.get(&src)?;
                self.store(Expr::Var(v), &out(0), false);
            }
            "STORE_FAST" => {
                let dst = code.localsplus_name(arg).unwrap_or_default().to_string();
                let v = self.get(&ti.inputs[0])?;
                self.store(Expr::Var(v), &dst, false);
            }
            "LOAD_CONST" => {
                let value = code
                    .consts
                    .get(arg as usize)
                    .cloned()
                    .unwrap_or(Constant::None);
                // Constant tuples and frozensets become build_tuple/build_set of one
                // `$const_<str(x)>` per element, as Numba's op_LOAD_CONST does.
                let e = match value {
                    Constant::Tuple(items) => Expr::BuildTuple {
                        items: self.const_elements(items),
                    },
                    Constant::FrozenSet(items) => Expr::BuildSet {
                        items: self.const_elements(
                            Constant::frozenset_order(&items)
                                .into_iter()
                                .cloned()
                                .collect(),
                        ),
                    },
                    other => Expr::Const(other),
                };
                self.store(e, &out(0), false);
            }
            "BINARY_OP" => {
                let sym = BINARY_OP_SYMBOLS.get(arg as usize).copied().unwrap_or("?");
                let op = BinOp::from_symbol(sym).ok_or_else(|| self.unsupported(inst))?;
                let lhs = self.get(&ti.inputs[0])?;
                let rhs = self.get(&ti.inputs[1])?;
                let e = if sym.ends_with('=') {
                    Expr::InplaceBinOp { op, lhs, rhs }
                } else {
                    Expr::BinOp { op, lhs, rhs }
                };
                self.store(e, &out(0), false);
            }
            "COMPARE_OP" | "IS_OP" => {
                let sym = if inst.opname == "IS_OP" {
                    if arg == 1 {
                        "is not"
                    } else {
                        "is"
                    }
                } else {
                    COMPARE_OP_SYMBOLS.get(arg as usize).copied().unwrap_or("?")
                };
                let op = BinOp::from_symbol(sym).ok_or_else(|| self.unsupported(inst))?;
                let lhs = self.get(&ti.inputs[0])?;
                let rhs = self.get(&ti.inputs[1])?;
                self.store(Expr::BinOp { op, lhs, rhs }, &out(0), false);
            }
            "CONTAINS_OP" => {
                // `a in b` is `contains(b, a)`; Numba swaps the operands.
                let lhs = self.get(&ti.inputs[1])?;
                let rhs = self.get(&ti.inputs[0])?;
                self.store(
                    Expr::BinOp {
                        op: BinOp::In,
                        lhs,
                        rhs,
                    },
                    &out(0),
                    false,
                );
                if arg == 1 {
                    let tmp = self.get(&out(0))?;
                    self.store(
                        Expr::Unary {
                            op: UnaryOp::Not,
                            value: tmp,
                        },
                        &out(0),
                        false,
                    );
                }
            }
            "UNARY_POSITIVE" | "UNARY_NEGATIVE" | "UNARY_NOT" | "UNARY_INVERT" => {
                let op = match inst.opname {
                    "UNARY_POSITIVE" => UnaryOp::Pos,
                    "UNARY_NEGATIVE" => UnaryOp::Neg,
                    "UNARY_NOT" => UnaryOp::Not,
                    _ => UnaryOp::Invert,
                };
                let value = self.get(&ti.inputs[0])?;
                self.store(Expr::Unary { op, value }, &out(0), false);
            }
            "LOAD_ATTR" | "LOAD_METHOD" => {
                let attr = code.names.get(arg as usize).cloned().unwrap_or_default();
                let value = self.get(&ti.inputs[0])?;
                self.store(Expr::GetAttr { value, attr }, &out(0), false);
            }
            "BINARY_SUBSCR" => {
                let value = self.get(&ti.inputs[0])?;
                let index = self.get(&ti.inputs[1])?;
                self.store(Expr::GetItem { value, index }, &out(0), false);
            }
            "STORE_SUBSCR" => {
                let target = self.get(&ti.inputs[0])?;
                let index = self.get(&ti.inputs[1])?;
                let value = self.get(&ti.inputs[2])?;
                self.emit(Stmt::SetItem {
                    target,
                    index,
                    value,
                });
            }
            "BUILD_TUPLE" | "BUILD_LIST" | "BUILD_SET" => {
                let items = ti
                    .inputs
                    .iter()
                    .map(|r| self.get(r))
                    .collect::<Result<Vec<_>, _>>()?;
                let e = match inst.opname {
                    "BUILD_TUPLE" => Expr::BuildTuple { items },
                    "BUILD_LIST" => Expr::BuildList { items },
                    _ => Expr::BuildSet { items },
                };
                self.store(e, &out(0), false);
            }
            "GET_ITER" => {
                let value = self.get(&ti.inputs[0])?;
                self.store(Expr::GetIter { value }, &out(0), false);
            }
            "FOR_ITER" => {
                let it = self.get(&ti.inputs[0])?;
                self.store(Expr::IterNext { value: it }, &out(0), false);
                let pair = self.get(&out(0))?;
                self.store(Expr::PairFirst { value: pair }, &out(1), false);
                let pair = self.get(&out(0))?;
                self.store(Expr::PairSecond { value: pair }, &out(2), false);
                let cond = self.get(&out(2))?;
                let exit = inst.jump_target.ok_or_else(|| self.unsupported(inst))?;
                self.emit(Stmt::Branch {
                    cond,
                    truebr: inst.next,
                    falsebr: exit,
                });
            }
            "RETURN_VALUE" => {
                let v = self.get(&ti.inputs[0])?;
                self.store(Expr::Cast { value: v }, &out(0), false);
                let value = self.get(&out(0))?;
                self.emit(Stmt::Return { value });
            }
            "RAISE_VARARGS" => {
                let exception = match ti.inputs.first() {
                    Some(r) => Some(self.get(r)?),
                    None => None,
                };
                match self.active_try() {
                    Some(handler) => {
                        self.emit(Stmt::TryRaise { exception });
                        self.inject_call("end_try_block", None);
                        self.emit(Stmt::Jump { target: handler });
                    }
                    None => self.emit(Stmt::Raise { exception }),
                }
            }
            "CHECK_EXC_MATCH" => {
                self.store(
                    Expr::Global {
                        name: "exception_match".into(),
                        value: Global::intrinsic("exception_match"),
                    },
                    "$exc_match",
                    true,
                );
                let func = self.get("$exc_match")?;
                let lhs = self.get(&ti.inputs[0])?;
                let rhs = self.get(&ti.inputs[1])?;
                self.store(Expr::synthetic_call(func, vec![lhs, rhs]), &out(0), false);
            }
            "POP_JUMP_FORWARD_IF_TRUE" | "POP_JUMP_BACKWARD_IF_TRUE" | "JUMP_IF_TRUE_OR_POP" => {
                self.jump_if(inst, &ti.inputs[0], true)?
            }
            "POP_JUMP_FORWARD_IF_FALSE" | "POP_JUMP_BACKWARD_IF_FALSE" | "JUMP_IF_FALSE_OR_POP" => {
                self.jump_if(inst, &ti.inputs[0], false)?
            }
            "POP_JUMP_FORWARD_IF_NONE"
            | "POP_JUMP_BACKWARD_IF_NONE"
            | "POP_JUMP_FORWARD_IF_NOT_NONE"
            | "POP_JUMP_BACKWARD_IF_NOT_NONE" => self.jump_if_none(inst, &ti.inputs[0])?,
            "JUMP_FORWARD" | "JUMP_BACKWARD" | "JUMP_BACKWARD_NO_INTERRUPT" => {
                let target = inst.jump_target.ok_or_else(|| self.unsupported(inst))?;
                self.emit(Stmt::Jump { target });
            }
            "CALL" => {
                let func = self.get(&ti.inputs[0])?;
                let mut args = ti.inputs[1..]
                    .iter()
                    .filter(|r| !is_null_reg(r))
                    .map(|r| self.get(r))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut kws = Vec::new();
                if let Some(k) = ti.kw_names {
                    if let Some(Constant::Tuple(names)) = code.consts.get(k as usize) {
                        let split = args.len().saturating_sub(names.len());
                        let tail = args.split_off(split);
                        kws = names.iter().map(Constant::py_str).zip(tail).collect();
                    }
                }
                let form = if ti.kw_names.is_some() {
                    CallForm::Keywords
                } else {
                    CallForm::Plain
                };
                let e = Expr::Call {
                    func,
                    args,
                    kws,
                    vararg: None,
                    varkwarg: None,
                    form,
                };
                self.store(e, &out(0), false);
            }
            "UNPACK_SEQUENCE" => {
                let value = self.get(&ti.inputs[0])?;
                let tup = out(0);
                self.store(Expr::ExhaustIter { value, count: arg }, &tup, false);
                for (i, st) in ti.outputs[1..].iter().enumerate() {
                    let t = self.get(&tup)?;
                    self.store(
                        Expr::StaticGetItem {
                            value: t,
                            index: i as i64,
                            index_var: None,
                        },
                        st,
                        false,
                    );
                }
            }
            "PUSH_NULL" | "RETURN_GENERATOR" => {}
            "LIST_EXTEND" => self.list_extend(ti)?,
            "LIST_TO_TUPLE" => {
                let list = self.get(&ti.inputs[0])?;
                self.store(Expr::ListToTuple { list }, &out(0), false);
            }
            "CALL_FUNCTION_EX" => {
                let func = self.get(&ti.inputs[0])?;
                let vararg = self.get(&ti.inputs[1])?;
                if ti.inputs.len() > 2 {
                    // Numba turns `f(**kw)` into keywords only when `kw` is a literal
                    // `build_map` (calls with more than 15 keywords); 3.11 compiles every
                    // other `**` call with DICT_MERGE, which is rejected earlier.
                    return Err(IrError::Unsupported {
                        message: "CALL_FUNCTION_EX with **kwargs not supported.".into(),
                        line: self.loc.line,
                    });
                }
                self.store(
                    Expr::Call {
                        func,
                        args: Vec::new(),
                        kws: Vec::new(),
                        vararg: Some(vararg),
                        varkwarg: None,
                        form: CallForm::Star,
                    },
                    &out(0),
                    false,
                );
            }
            "BEFORE_WITH" => {
                // `with cm as v:` stores what `__enter__` returned; Numba rejects it.
                if self.bc.at(inst.next).is_some_and(|n| n.opname != "POP_TOP") {
                    return Err(IrError::Unsupported {
                        message: "The 'with (context manager) as (variable):' construct is not \
                                  supported."
                            .into(),
                        line: self.loc.line,
                    });
                }
                let end = ti.with_end.unwrap_or(inst.next);
                self.with_exits.push(end);
                let contextmanager = self.get(&ti.inputs[0])?;
                self.emit(Stmt::EnterWith {
                    contextmanager,
                    begin: inst.offset,
                    end,
                });
                self.store(Expr::Const(Constant::None), &out(0), false);
            }
            "YIELD_VALUE" => {
                let value = self.get(&ti.inputs[0])?;
                self.store(Expr::Yield { value, index: None }, &out(0), false);
            }
            "LOAD_CLOSURE" | "LOAD_DEREF" => {
                let name = code.localsplus_name(arg).unwrap_or_default().to_string();
                let value = if let Some(idx) = code.freevars().iter().position(|f| *f == name) {
                    Expr::FreeVar {
                        index: idx as u32,
                        value: self.globals.resolve_freevar(idx, &name),
                        name,
                    }
                } else {
                    let v = self.lookup(&name).ok_or_else(|| IrError::Unsupported {
                        message: "Unsupported use of cell variable encountered".into(),
                        line: self.loc.line,
                    })?;
                    Expr::Var(v)
                };
                self.store(value, &out(0), false);
            }
            "STORE_DEREF" => {
                let name = code.localsplus_name(arg).unwrap_or_default().to_string();
                let v = self.get(&ti.inputs[0])?;
                self.store(Expr::Var(v), &name, false);
            }
            "MAKE_FUNCTION" => {
                if arg & 0x2 != 0 {
                    return Err(IrError::Unsupported {
                        message: "op_MAKE_FUNCTION with kwdefaults is not implemented".into(),
                        line: self.loc.line,
                    });
                }
                let codevar = self.get(&ti.inputs[0])?;
                let fcode = match self.definitions.get(&codevar).and_then(|d| d.first()) {
                    Some(&e) => match self.ir.expr(e) {
                        Expr::Const(Constant::Code(c)) => Some(c.clone()),
                        _ => None,
                    },
                    None => None,
                };
                let fcode = fcode.ok_or_else(|| IrError::Unsupported {
                    message: "Unsupported use of closure. Probably caused by complex control-flow constructs; e.g. try-except".into(),
                    line: self.loc.line,
                })?;
                // Inputs after the code, in flag order: closure, annotations, kwdefaults,
                // defaults.
                let mut rest = ti.inputs[1..].iter();
                let closure = if arg & 0x8 != 0 {
                    rest.next().map(|r| self.get(r)).transpose()?
                } else {
                    None
                };
                if arg & 0x4 != 0 {
                    rest.next();
                }
                let defaults = if arg & 0x1 != 0 {
                    rest.next().map(|r| self.get(r)).transpose()?
                } else {
                    None
                };
                self.store(
                    Expr::MakeFunction {
                        code: fcode,
                        closure,
                        defaults,
                    },
                    &out(0),
                    false,
                );
            }
            "LOAD_ASSERTION_ERROR" => {
                let value = self.global_value("AssertionError");
                self.store(
                    Expr::Global {
                        name: "AssertionError".into(),
                        value,
                    },
                    &out(0),
                    false,
                );
            }
            "STORE_ATTR" | "DELETE_ATTR" => {
                let attr = code.names.get(arg as usize).cloned().unwrap_or_default();
                let target = self.get(&ti.inputs[0])?;
                if inst.opname == "STORE_ATTR" {
                    let value = self.get(&ti.inputs[1])?;
                    self.emit(Stmt::SetAttr {
                        target,
                        attr,
                        value,
                    });
                } else {
                    self.emit(Stmt::DelAttr { target, attr });
                }
            }
            "DELETE_SUBSCR" => {
                let index = self.get(&ti.inputs[1])?;
                let target = self.get(&ti.inputs[0])?;
                self.emit(Stmt::DelItem { target, index });
            }
            "DELETE_FAST" => {
                let name = code.localsplus_name(arg).unwrap_or_default().to_string();
                let var = self.get_or_define(&name);
                self.emit(Stmt::Del { var });
            }
            "BUILD_SLICE" => {
                let (slicevar, res) = (out(0), out(1));
                let args = ti
                    .inputs
                    .iter()
                    .map(|r| self.get(r))
                    .collect::<Result<Vec<_>, _>>()?;
                self.store(
                    Expr::Global {
                        name: "slice".into(),
                        value: Global::builtin("slice"),
                    },
                    &slicevar,
                    false,
                );
                let func = self.get(&slicevar)?;
                self.store(Expr::synthetic_call(func, args), &res, false);
            }
            "LIST_APPEND" | "SET_ADD" | "SET_UPDATE" | "DICT_UPDATE" => {
                let target = self.get(&ti.inputs[0])?;
                let value = self.get(&ti.inputs[1])?;
                let attr = match inst.opname {
                    "LIST_APPEND" => "append",
                    "SET_ADD" => "add",
                    "SET_UPDATE" => "update",
                    _ => "_update_from_bytecode",
                };
                self.method_call(target, attr, vec![value], &out(0), &out(1))?;
            }
            "MAP_ADD" => {
                let target = self.get(&ti.inputs[0])?;
                let key = self.get(&ti.inputs[1])?;
                let value = self.get(&ti.inputs[2])?;
                self.method_call(target, "__setitem__", vec![key, value], &out(0), &out(1))?;
            }
            "FORMAT_VALUE" => {
                // `str(value)`, or `format(value, spec)` when the field has a spec; `!r`
                // and `!a` fields convert the value with `repr` / `ascii` first.
                let mut value = self.get(&ti.inputs[0])?;
                let spec = ti.inputs.get(1).map(|s| self.get(s)).transpose()?;
                let mut k = 0;
                if ti.outputs.len() == 4 {
                    let conv = if arg & 3 == 3 { "ascii" } else { "repr" };
                    self.store(
                        Expr::Global {
                            name: conv.into(),
                            value: Global::builtin(conv),
                        },
                        &out(0),
                        false,
                    );
                    let func = self.get(&out(0))?;
                    self.store(Expr::synthetic_call(func, vec![value]), &out(1), false);
                    value = self.get(&out(1))?;
                    k = 2;
                }
                let name = if spec.is_some() { "format" } else { "str" };
                self.store(
                    Expr::Global {
                        name: name.into(),
                        value: Global::builtin(name),
                    },
                    &out(k),
                    false,
                );
                let func = self.get(&out(k))?;
                let mut args = vec![value];
                args.extend(spec);
                self.store(Expr::synthetic_call(func, args), &out(k + 1), false);
            }
            "BUILD_STRING" => {
                if ti.inputs.is_empty() {
                    let last = ti.outputs.last().cloned().unwrap_or_default();
                    self.store(Expr::Const(Constant::Str(String::new())), &last, false);
                } else {
                    let mut prev = self.get(&ti.inputs[0])?;
                    for (other, tmp) in ti.inputs[1..].iter().zip(&ti.outputs) {
                        let rhs = self.get(other)?;
                        self.store(
                            Expr::BinOp {
                                op: BinOp::Add,
                                lhs: prev,
                                rhs,
                            },
                            tmp,
                            false,
                        );
                        prev = self.get(tmp)?;
                    }
                }
            }
            "BUILD_MAP" => {
                let mut items = Vec::new();
                for pair in ti.inputs.chunks(2) {
                    if let [k, v] = pair {
                        items.push((self.get(k)?, self.get(v)?));
                    }
                }
                let e = self.build_map(items, arg as usize, None);
                self.store(e, &out(0), false);
            }
            "BUILD_CONST_KEY_MAP" => self.build_const_key_map(ti)?,
            "RERAISE" if self.active_try().is_some() => {
                let handler = self.active_try().unwrap_or_default();
                self.emit(Stmt::TryRaise { exception: None });
                self.inject_call("end_try_block", None);
                self.emit(Stmt::Jump { target: handler });
            }
            "RERAISE" => {
                // Outside a try: a guard Numba keeps for a path that cannot run.
                self.emit(Stmt::StaticRaise {
                    exc_class: Some("<class 'AssertionError'>".into()),
                    args: Some(vec![Constant::Str(format!(
                        "Unreachable condition reached (op code RERAISE executed){REPORTABLE}"
                    ))]),
                });
            }
            _ => return Err(self.unsupported(inst)),
        }
        Ok(())
    }

    /// Numba's `op_BUILD_MAP` literal analysis: constant keys (and values) are recorded so
    /// literal dicts can be typed. `keys` gives the constant keys when they are known from
    /// `BUILD_CONST_KEY_MAP`.
    fn build_map(
        &self,
        items: Vec<(VarId, VarId)>,
        size: usize,
        keys: Option<Vec<Constant>>,
    ) -> Expr {
        let literal = |vars: Vec<VarId>| -> Vec<Constant> {
            let mut out = Vec::new();
            for v in vars {
                match self.sole_const(v) {
                    Some(c) => out.push(c),
                    None => break,
                }
            }
            out
        };
        let n = items.len();
        let values: Vec<VarId> = items.iter().map(|(_, v)| *v).collect();
        let literal_values = literal(values.clone());
        let (literal_value, value_indexes) = match keys {
            Some(keys) => {
                let entries = if literal_values.len() == n {
                    keys.iter()
                        .cloned()
                        .zip(literal_values.into_iter().map(LiteralValue::Known))
                        .collect()
                } else {
                    keys.iter()
                        .cloned()
                        .zip(values.iter().map(|&v| match self.sole_const(v) {
                            Some(c) => LiteralValue::Known(c),
                            None => LiteralValue::Unknown(self.ir.var_name(v).to_string()),
                        }))
                        .collect()
                };
                (Some(dict_entries(entries)), dict_indexes(&keys))
            }
            None => {
                let literal_keys = literal(items.iter().map(|(k, _)| *k).collect());
                if literal_keys.len() != n && literal_values.len() != n {
                    (None, Vec::new())
                } else if literal_keys.len() == n && literal_values.len() != n {
                    let entries = literal_keys
                        .iter()
                        .cloned()
                        .zip(
                            items
                                .iter()
                                .map(|(_, v)| LiteralValue::Unknown(self.ir.var_name(*v).into())),
                        )
                        .collect();
                    (Some(dict_entries(entries)), dict_indexes(&literal_keys))
                } else {
                    // Numba zips whatever keys were literal with the literal values.
                    let entries = literal_keys
                        .iter()
                        .cloned()
                        .zip(literal_values.into_iter().map(LiteralValue::Known))
                        .collect();
                    (Some(dict_entries(entries)), dict_indexes(&literal_keys))
                }
            }
        };
        Expr::BuildMap {
            items,
            size,
            literal_value,
            value_indexes,
        }
    }

    /// `BUILD_CONST_KEY_MAP`: the key tuple's `build_tuple` and its `$const_` elements are
    /// taken out of the block and re-emitted as one constant per key temporary.
    fn build_const_key_map(&mut self, ti: &TracedInst) -> Result<(), IrError> {
        let keyvar = self.get(&ti.inputs[0])?;
        let values = ti.inputs[1..]
            .iter()
            .map(|r| self.get(r))
            .collect::<Result<Vec<_>, _>>()?;
        let mut keys: Vec<Constant> = Vec::new();
        let pos = self
            .body
            .iter()
            .position(|i| matches!(i.stmt, Stmt::Assign { target, .. } if target == keyvar));
        if let Some(pos) = pos {
            let inst = self.body.remove(pos);
            if let Stmt::Assign { value, .. } = inst.stmt {
                if let Expr::BuildTuple { items } = self.ir.expr(value).clone() {
                    for x in items {
                        let found = self.body.iter().rposition(
                            |i| matches!(i.stmt, Stmt::Assign { target, .. } if target == x),
                        );
                        if let Some(p) = found {
                            if let Stmt::Assign { value, .. } = self.body.remove(p).stmt {
                                if let Expr::Const(c) = self.ir.expr(value) {
                                    keys.push(c.clone());
                                }
                            }
                        }
                    }
                }
            }
        }
        if keys.len() != values.len() {
            return Err(IrError::Unsupported {
                message: "BUILD_CONST_KEY_MAP without a constant key tuple".into(),
                line: self.loc.line,
            });
        }
        let n = values.len();
        let keytmps = &ti.outputs[..n];
        let mut items = Vec::new();
        for ((k, tmp), v) in keys.iter().zip(keytmps).zip(&values) {
            self.store(Expr::Const(k.clone()), tmp, false);
            items.push((self.get(tmp)?, *v));
        }
        // Numba records size=2 for every constant-key map (numba-facts §1.2).
        let e = self.build_map(items, 2, Some(keys));
        self.store(e, &ti.outputs[n], false);
        Ok(())
    }

    /// `LIST_EXTEND`: a constant initialiser (`[1, 2, 3]` compiles to an empty list
    /// extended by a constant tuple) becomes that `build_list`'s items; anything else is
    /// `target.extend(value)`.
    fn list_extend(&mut self, ti: &TracedInst) -> Result<(), IrError> {
        let target = self.get(&ti.inputs[0])?;
        let value = self.get(&ti.inputs[1])?;
        let unsupported = || {
            IrError::Unsupported {
            message: "An unsupported bytecode sequence has been encountered: op_LIST_EXTEND at the start of a block.\n\nThis could be due to the use of a branch in a tuple unpacking statement.".into(),
            line: self.loc.line,
        }
        };
        let Some(last) = self.body.last() else {
            return Err(unsupported());
        };
        let tuple_items = match last.stmt {
            Stmt::Assign { value, .. } => match self.ir.expr(value) {
                Expr::BuildTuple { items } => Some(items.clone()),
                _ => None,
            },
            _ => None,
        };
        let mut build_empty_list = None;
        let mut ok = tuple_items.is_some();
        if ok {
            for (pos, inst) in self.body[..self.body.len() - 1].iter().enumerate().rev() {
                let Stmt::Assign {
                    target: t,
                    value: e,
                } = inst.stmt
                else {
                    ok = false;
                    break;
                };
                match self.ir.expr(e) {
                    Expr::Const(_) => continue,
                    Expr::BuildList { items } if t == target => {
                        ok = items.is_empty();
                        build_empty_list = Some(pos);
                        break;
                    }
                    _ if t == target => {
                        ok = false;
                        break;
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
        }
        match (ok, build_empty_list, tuple_items) {
            (true, None, _) => Err(unsupported()),
            (true, Some(pos), Some(items)) => {
                let inst = self.body.remove(pos);
                if let Stmt::Assign { value, .. } = inst.stmt {
                    self.ir.exprs[value.0 as usize] = Expr::BuildList { items };
                }
                self.body.push(inst);
                Ok(())
            }
            _ => self.method_call(
                target,
                "extend",
                vec![value],
                &ti.outputs[0],
                &ti.outputs[1],
            ),
        }
    }

    /// The handler of the current block's active try, if any.
    fn active_try(&self) -> Option<Label> {
        let label = self.current?;
        self.df.blocks.get(&label)?.active_try().map(|t| t.end)
    }

    fn const_elements(&mut self, items: Vec<Constant>) -> Vec<VarId> {
        items
            .into_iter()
            .map(|x| {
                let nm = format!("$const_{}", x.py_str());
                self.store(Expr::Const(x), &nm, true)
            })
            .collect()
    }

    fn jump_if(&mut self, inst: &Instruction, pred: &str, iftrue: bool) -> Result<(), IrError> {
        let target = inst.jump_target.ok_or_else(|| self.unsupported(inst))?;
        let (truebr, falsebr) = if iftrue {
            (target, inst.next)
        } else {
            (inst.next, target)
        };
        let name = format!("$bool{}", inst.offset);
        self.store(
            Expr::Global {
                name: "bool".into(),
                value: Global::builtin("bool"),
            },
            &name,
            false,
        );
        let func = self.get(&name)?;
        let p = self.get(pred)?;
        let pname = format!("${}pred", inst.offset);
        let cond = self.store(
            Expr::Call {
                func,
                args: vec![p],
                kws: vec![],
                vararg: None,
                varkwarg: None,
                form: CallForm::Synthetic,
            },
            &pname,
            false,
        );
        self.emit(Stmt::Branch {
            cond,
            truebr,
            falsebr,
        });
        Ok(())
    }

    fn jump_if_none(&mut self, inst: &Instruction, pred: &str) -> Result<(), IrError> {
        let target = inst.jump_target.ok_or_else(|| self.unsupported(inst))?;
        let is_none = inst.opname.ends_with("_IF_NONE");
        let off = inst.offset;
        let none = self.store(
            Expr::Const(Constant::None),
            &format!("$constNone{off}"),
            false,
        );
        let p = self.get(pred)?;
        let op = if is_none { BinOp::IsNot } else { BinOp::Is };
        let maybe = self.store(
            Expr::BinOp {
                op,
                lhs: p,
                rhs: none,
            },
            &format!("$maybeNone{off}"),
            false,
        );
        let bname = format!("$bool{off}");
        self.store(
            Expr::Global {
                name: "bool".into(),
                value: Global::builtin("bool"),
            },
            &bname,
            false,
        );
        let func = self.get(&bname)?;
        let cond = self.store(
            Expr::Call {
                func,
                args: vec![maybe],
                kws: vec![],
                vararg: None,
                varkwarg: None,
                form: CallForm::Synthetic,
            },
            &format!("$pred{off}"),
            false,
        );
        self.emit(Stmt::Branch {
            cond,
            truebr: inst.next,
            falsebr: target,
        });
        Ok(())
    }
}
