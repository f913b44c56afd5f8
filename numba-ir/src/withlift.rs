//! With-lifting (Numba's `transforms.with_lifting` and `withcontexts`): each top-level
//! `with` block of a nopython function whose context manager the compiler knows is
//! rewritten before typing.
//!
//! - `objmode(x='int64', ...)`: the body becomes a function of its own (inputs: the
//!   variables live into the block that it mentions; outputs: those it defines that are
//!   live after it, each needing a type annotation). The caller asks the driver for the
//!   callee (`ObjModeRegion`), which compiles it in object mode, and the block becomes
//!   a call of it whose result tuple is unpacked into the outputs, as loop lifting does.
//! - `parallel_chunksize(n)`: the chunk size is set on entry and restored on exit.
//! - Numba's testing contexts: `call_context` runs the body as is, `bypass_context`
//!   drops it.
//!
//! A `with` of anything else is Numba's "Unsupported context manager in use".

use std::collections::BTreeSet;

use crate::analysis::{compute_live_map, compute_use_defs};
use crate::global::{Global, GlobalKind, GlobalResolver, WithContextKind};
use crate::ir::*;
use crate::looplift::{call_lifted, extract, region_inout};
use crate::utils::fresh_name;

/// Why a `with` block cannot be compiled: Numba's `CompilerError` or `TypingError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WithLiftError {
    #[error("{message}")]
    Compiler { message: String, line: u32 },
    #[error("{message}")]
    Typing { message: String, line: u32 },
}

impl WithLiftError {
    pub fn line(&self) -> u32 {
        match self {
            WithLiftError::Compiler { line, .. } | WithLiftError::Typing { line, .. } => *line,
        }
    }
}

/// A type annotation of an `objmode` output as written: a string to parse as a
/// signature type, or a type object the names resolved to at compile time.
#[derive(Debug, Clone, PartialEq)]
pub enum Annotation {
    Text(String),
    Object(Global),
}

/// An `objmode` body lifted into a function, for the driver to compile in object mode.
#[derive(Debug, Clone)]
pub struct ObjModeRegion {
    /// The lifted function: parameters `inputs`, returning the tuple of `outputs`.
    pub ir: FunctionIR,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    /// Each output's annotation, in `outputs` order (an output's name without its
    /// version suffix: `x.1` is annotated as `x`).
    pub annotations: Vec<(String, Annotation)>,
    /// The `with` statement's line.
    pub line: u32,
}

/// Rewrite the `with` blocks of `ir`; `objmode` gives the global of the callee that
/// runs an `objmode` body. Returns how many blocks were rewritten.
pub fn lift_withs(
    ir: &mut FunctionIR,
    globals: &dyn GlobalResolver,
    objmode: &mut dyn FnMut(ObjModeRegion) -> Result<Global, WithLiftError>,
) -> Result<usize, WithLiftError> {
    let mut done = 0;
    // One at a time, outermost first: lifting a body takes the withs nested in it along.
    while let Some(w) = next_with(ir)? {
        let (kind, call) = context_manager(ir, globals, &w)?;
        match kind {
            WithContextKind::Bypass => {
                if call.is_some() {
                    return Err(compiler("bypass_context takes no arguments", w.line));
                }
                replace_head(ir, &w, Vec::new(), w.end);
                for l in &w.body {
                    ir.blocks.remove(l);
                    ir.block_locs.remove(l);
                }
            }
            WithContextKind::Call => {
                if call.is_some() {
                    return Err(compiler("call_context takes no arguments", w.line));
                }
                // The body runs where it is: the same semantics as a call of it.
                replace_head(ir, &w, Vec::new(), w.entry);
                strip_pop_blocks(ir, &w.body);
            }
            WithContextKind::ParallelChunksize => chunksize(ir, &w, call)?,
            WithContextKind::ObjMode => lift_objmode(ir, globals, &w, call, objmode)?,
        }
        remove_dead_setup(ir, &w);
        done += 1;
    }
    Ok(done)
}

fn compiler(message: impl Into<String>, line: u32) -> WithLiftError {
    WithLiftError::Compiler {
        message: message.into(),
        line,
    }
}

/// One `with` block: the block holding `enter_with`, the first block of the body, the
/// body's blocks and the block control reaches after it.
struct With {
    head: Label,
    entry: Label,
    body: BTreeSet<Label>,
    end: Label,
    contextmanager: VarId,
    line: u32,
}

/// The first `with` block (by label) still in `ir`.
fn next_with(ir: &FunctionIR) -> Result<Option<With>, WithLiftError> {
    for (&head, block) in &ir.blocks {
        let Some((k, inst)) = block
            .body
            .iter()
            .enumerate()
            .find(|(_, i)| matches!(i.stmt, Stmt::EnterWith { .. }))
        else {
            continue;
        };
        let Stmt::EnterWith { contextmanager, .. } = inst.stmt else {
            unreachable!("matched above");
        };
        let line = inst.loc.line;
        // Numba's `_legalize_with_head`: nothing but the enter and a jump.
        let others = block
            .body
            .iter()
            .enumerate()
            .filter(|(j, i)| *j != k && !matches!(i.stmt, Stmt::Jump { .. } | Stmt::Del { .. }))
            .count();
        let Some(Stmt::Jump { target: entry }) = block.terminator().cloned() else {
            return Err(compiler("with's head-block must have exactly 1 JUMP", line));
        };
        if others != 0 {
            return Err(compiler("illegal statements in with's head-block", line));
        }
        // The body: blocks reached from the entry up to those closing it (`pop_block`).
        let mut body = BTreeSet::new();
        let mut pops = Vec::new();
        let mut stack = vec![entry];
        while let Some(l) = stack.pop() {
            if !body.insert(l) {
                continue;
            }
            let Some(b) = ir.blocks.get(&l) else {
                continue;
            };
            let mut closed = false;
            for i in &b.body {
                match &i.stmt {
                    Stmt::Raise { .. }
                    | Stmt::StaticRaise { .. }
                    | Stmt::DynamicRaise { .. }
                    | Stmt::TryRaise { .. }
                    | Stmt::StaticTryRaise { .. }
                    | Stmt::DynamicTryRaise { .. } => {
                        return Err(compiler(
                            "unsupported control flow due to raise statements inside with block",
                            i.loc.line,
                        ))
                    }
                    Stmt::PopBlock => {
                        pops.push(l);
                        closed = true;
                        break;
                    }
                    _ => {}
                }
            }
            if !closed {
                stack.extend(b.terminator().map(Stmt::successors).unwrap_or_default());
            }
        }
        let leaves = |l: &Label| {
            ir.blocks
                .get(l)
                .and_then(Block::terminator)
                .map(Stmt::successors)
                .unwrap_or_default()
        };
        let ends: BTreeSet<Label> = pops.iter().flat_map(leaves).collect();
        let [end] = ends.into_iter().collect::<Vec<_>>()[..] else {
            return Err(compiler(
                "unsupported control flow: with-context contains branches (i.e. \
                 break/return/raise) that can leave the block ",
                line,
            ));
        };
        if body.contains(&end) || body.contains(&head) {
            return Err(compiler(
                "unsupported control flow: with-context contains branches (i.e. \
                 break/return/raise) that can leave the block ",
                line,
            ));
        }
        return Ok(Some(With {
            head,
            entry,
            body,
            end,
            contextmanager,
            line,
        }));
    }
    Ok(None)
}

/// The one expression assigned to `v`, following plain copies.
fn definition(ir: &FunctionIR, mut v: VarId) -> Option<&Expr> {
    for _ in 0..32 {
        let mut found = None;
        for inst in ir.blocks.values().flat_map(|b| &b.body) {
            if let Stmt::Assign { target, value } = &inst.stmt {
                if *target == v {
                    if found.is_some() {
                        return None; // assigned more than once: not a compile-time value
                    }
                    found = Some(*value);
                }
            }
        }
        match ir.expr(found?) {
            Expr::Var(next) => v = *next,
            e => return Some(e),
        }
    }
    None
}

/// What a variable holds at compile time when it is a global, a free variable or an
/// attribute of a module reached from one (`numba.types.intp`).
fn static_value(ir: &FunctionIR, globals: &dyn GlobalResolver, v: VarId) -> Option<Global> {
    match definition(ir, v)? {
        Expr::Global { value, .. } | Expr::FreeVar { value, .. } => Some(value.clone()),
        Expr::GetAttr { value, attr } => match static_value(ir, globals, *value)?.kind {
            GlobalKind::Module(m) => globals.resolve_attr(&m, attr),
            _ => None,
        },
        _ => None,
    }
}

/// A context manager's call: positional arguments and keywords.
type CmCall = (Vec<VarId>, Vec<(String, VarId)>);

/// The kind of context manager a `with` uses, and its call's arguments when it is
/// called (`objmode(x='int64')`).
fn context_manager(
    ir: &FunctionIR,
    globals: &dyn GlobalResolver,
    w: &With,
) -> Result<(WithContextKind, Option<CmCall>), WithLiftError> {
    let mut cm = w.contextmanager;
    let mut call = None;
    if let Some(Expr::Call {
        func, args, kws, ..
    }) = definition(ir, cm)
    {
        call = Some((args.clone(), kws.clone()));
        cm = *func;
    }
    let value = static_value(ir, globals, cm);
    match value.map(|g| g.kind) {
        Some(GlobalKind::WithContext(kind)) => Ok((kind, call)),
        Some(GlobalKind::Undefined) => Err(compiler(
            "Undefined variable used as context manager",
            w.line,
        )),
        None => Err(compiler("Illegal use of context-manager.", w.line)),
        Some(_) => Err(compiler("Unsupported context manager in use", w.line)),
    }
}

/// Replace the head block by `stmts` and a jump to `target`.
fn replace_head(ir: &mut FunctionIR, w: &With, mut stmts: Vec<Inst>, target: Label) {
    let loc = Loc { line: w.line };
    stmts.push(Inst {
        stmt: Stmt::Jump { target },
        loc,
    });
    ir.blocks.insert(w.head, Block { body: stmts });
}

fn strip_pop_blocks(ir: &mut FunctionIR, labels: &BTreeSet<Label>) {
    for l in labels {
        if let Some(b) = ir.blocks.get_mut(l) {
            b.body.retain(|i| !matches!(i.stmt, Stmt::PopBlock));
        }
    }
}

/// `with parallel_chunksize(n):` — `$save = set_parallel_chunksize(n)` on entry,
/// `set_parallel_chunksize($save)` where the body ends (Numba's `_ParallelChunksize`).
fn chunksize(ir: &mut FunctionIR, w: &With, call: Option<CmCall>) -> Result<(), WithLiftError> {
    let arg = match call {
        Some((args, kws)) if args.len() == 1 && kws.is_empty() => args[0],
        _ => {
            return Err(compiler(
                "parallel_chunksize takes only a single integer argument.",
                w.line,
            ))
        }
    };
    let loc = Loc { line: w.line };
    let global = Global {
        kind: GlobalKind::ModuleFunction {
            module: "numba_rs".into(),
            name: "set_parallel_chunksize".into(),
        },
        repr: "<function set_parallel_chunksize>".into(),
    };
    let call_set = |ir: &mut FunctionIR, value: VarId, target: VarId| -> Vec<Inst> {
        let f = ir.add_var(fresh_name(ir, "$spc"), loc);
        let g = ir.add_expr(Expr::Global {
            name: "set_parallel_chunksize".into(),
            value: global.clone(),
        });
        let c = ir.add_expr(Expr::Call {
            func: f,
            args: vec![value],
            kws: Vec::new(),
            vararg: None,
            varkwarg: None,
            form: CallForm::Plain,
        });
        vec![
            Inst {
                stmt: Stmt::Assign {
                    target: f,
                    value: g,
                },
                loc,
            },
            Inst {
                stmt: Stmt::Assign { target, value: c },
                loc,
            },
        ]
    };
    let save = ir.add_var(fresh_name(ir, "$save_pc"), loc);
    let enter = call_set(ir, arg, save);
    let restored = ir.add_var(fresh_name(ir, "$restored_pc"), loc);
    let leave = call_set(ir, save, restored);
    replace_head(ir, w, enter, w.entry);
    strip_pop_blocks(ir, &w.body);
    if let Some(b) = ir.blocks.get_mut(&w.end) {
        b.body.splice(0..0, leave);
    }
    Ok(())
}

/// A variable's name without its version suffix (`x.1` is `x`), as annotations name it.
fn unversioned(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

fn lift_objmode(
    ir: &mut FunctionIR,
    globals: &dyn GlobalResolver,
    w: &With,
    call: Option<CmCall>,
    objmode: &mut dyn FnMut(ObjModeRegion) -> Result<Global, WithLiftError>,
) -> Result<(), WithLiftError> {
    let (args, kws) = call.unwrap_or_default();
    if !args.is_empty() {
        return Err(compiler(
            "objectmode context doesn't take any positional arguments",
            w.line,
        ));
    }
    let mut annotations = Vec::new();
    for (name, v) in &kws {
        let bad = |msg: &str| {
            compiler(
                format!("Error handling objmode argument '{name}'. {msg}"),
                w.line,
            )
        };
        let a = match definition(ir, *v) {
            Some(Expr::Const(numba_bytecode::Constant::Str(s))) => Annotation::Text(s.clone()),
            Some(Expr::Global { name: g, value }) if value.kind == GlobalKind::Undefined => {
                return Err(bad(&format!("Global '{g}' is not defined.")))
            }
            Some(Expr::FreeVar { name: g, value, .. }) if value.kind == GlobalKind::Undefined => {
                return Err(bad(&format!("Freevar '{g}' is not defined.")))
            }
            Some(Expr::Global { .. }) | Some(Expr::FreeVar { .. }) | Some(Expr::GetAttr { .. }) => {
                match static_value(ir, globals, *v) {
                    Some(g) => Annotation::Object(g),
                    None => return Err(bad("Getattr cannot be resolved at compile-time.")),
                }
            }
            _ => {
                return Err(bad(
                    "The value must be a compile-time constant either as a non-local \
                     variable or a getattr expression that refers to a Numba type.",
                ))
            }
        };
        annotations.push((name.clone(), a));
    }
    // Inputs and outputs, as Numba's `find_region_inout_vars` finds them.
    let cfg = ir.cfg();
    let ud = compute_use_defs(ir);
    let live = compute_live_map(&cfg, ir.blocks.keys().copied(), &ud);
    let (inputs, outputs) = region_inout(ir, &live, &w.body, (w.head, w.end));
    let out_names: Vec<String> = outputs
        .iter()
        .map(|v| unversioned(ir.var_name(*v)).to_string())
        .collect();
    let extra: Vec<&str> = annotations
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !out_names.iter().any(|o| o == n))
        .collect();
    if !extra.is_empty() {
        let set: Vec<String> = extra.iter().map(|n| format!("'{n}'")).collect();
        return Err(WithLiftError::Typing {
            message: format!(
                "Invalid type annotation on non-outgoing variables: {{{}}}.Suggestion: remove \
                 annotation of the listed variables",
                set.join(", ")
            ),
            line: w.line,
        });
    }
    let mut missing: Vec<&String> = out_names
        .iter()
        .filter(|o| !annotations.iter().any(|(n, _)| n == *o))
        .collect();
    missing.sort();
    missing.dedup();
    if let Some(first) = missing.first() {
        let list: Vec<String> = missing.iter().map(|n| format!("'{n}'")).collect();
        return Err(WithLiftError::Typing {
            message: format!(
                "Missing type annotation on outgoing variable(s): [{}]\n\nExample code: with \
                 objmode({first}='<add_type_as_string_here>')\n",
                list.join(", ")
            ),
            line: w.line,
        });
    }
    let ordered = out_names
        .iter()
        .map(|o| {
            let a = annotations
                .iter()
                .find(|(n, _)| n == o)
                .map(|(_, a)| a.clone());
            (o.clone(), a.unwrap_or(Annotation::Text(String::new())))
        })
        .collect();
    let mut lifted = extract(ir, &w.body, (w.head, w.entry, w.end), &inputs, &outputs);
    strip_pop_blocks(&mut lifted, &w.body);
    lifted.firstlineno = ir.firstlineno;
    let region = ObjModeRegion {
        ir: lifted,
        inputs: inputs.iter().map(|v| ir.var_name(*v).to_string()).collect(),
        outputs: outputs
            .iter()
            .map(|v| ir.var_name(*v).to_string())
            .collect(),
        annotations: ordered,
        line: w.line,
    };
    let global = objmode(region)?;
    // The head block is replaced by the call; the body goes.
    let mut region: BTreeSet<Label> = w.body.clone();
    region.insert(w.head);
    call_lifted(
        ir,
        &region,
        (w.head, w.end),
        ("ObjModeLiftedWith".into(), global),
        &inputs,
        &outputs,
    );
    Ok(())
}

/// The statements that set the context manager up (`objmode(...)` and the copies of its
/// result), once nothing uses them: they have no nopython meaning.
fn remove_dead_setup(ir: &mut FunctionIR, w: &With) {
    let mut pending = vec![w.contextmanager];
    while let Some(v) = pending.pop() {
        let used = ir
            .blocks
            .values()
            .flat_map(|b| &b.body)
            .any(|i| ir.stmt_vars(&i.stmt).contains(&v) && !assigns(&i.stmt, v));
        if used {
            continue;
        }
        let mut removed = Vec::new();
        for b in ir.blocks.values_mut() {
            b.body.retain(|i| match &i.stmt {
                Stmt::Assign { target, value } if *target == v => {
                    removed.push(*value);
                    false
                }
                Stmt::Del { var } if *var == v => false,
                _ => true,
            });
        }
        for e in removed {
            pending.extend(ir.expr_uses(ir.expr(e)));
        }
    }
}

fn assigns(s: &Stmt, v: VarId) -> bool {
    matches!(s, Stmt::Assign { target, .. } if *target == v)
}
