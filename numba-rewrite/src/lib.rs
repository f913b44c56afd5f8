//! # numba-rewrite
//!
//! IR rewrites (seed 002): the [`Rewrite`] trait with `matches`/`apply` over one block, and
//! the [`RewriteRegistry`] that runs the registered rewrites of one [`Phase`] to a per-block
//! fixpoint, with an iteration cap that fails naming the rewrite. Users register their own
//! rewrites next to numba-rs's built-ins ([`BUILTINS`], [`RewriteRegistry::with_builtins`]):
//!
//! - before inference ([`builtins`]): constant raises to `<static> raise`, dynamic raises,
//!   constant-index getitems to `static_getitem`, constant `**` exponents recorded as
//!   static operands, `print` calls to print statements;
//! - after inference ([`arrayexpr`]): trees of element-wise array operations fused into one
//!   `arrayexpr` node (an IR extension node holding the fused statements), and
//!   `out[...] = expr` into an in-place `arrayexpr_setitem`.
//!
//! A rewrite sees the function IR and, in the after-inference phase, the typing side
//! tables. Its `apply` gets a [`RewriteCx`], through which it adds variables (with their
//! types once typed), expressions (with their call signatures) and new block labels, so a
//! typed rewrite can introduce temporaries that lowering sees fully typed.
//!
//! This crate knows no LLVM: numba-lower lowers the extension nodes made here.
//!
//! # Example
//!
//! `def axpy(a, x, y): return a * x + y` typed with a float64 scalar and two 1-d arrays:
//! the after-inference phase fuses `a * x` and `+ y` into one `arrayexpr`, as Numba's
//! `RewriteArrayExprs` does (the statement below is what Numba's trace prints).
//!
//! ```rust
//! use std::collections::HashMap;
//!
//! use numba_ir::{compile_to_ir, Global};
//! use numba_rewrite::{Phase, RewriteRegistry};
//! use numba_typeinfer::types::{array, Layout, FLOAT64};
//! use numba_typeinfer::{infer, BaseContext, CallOutcome, CalleeResolver, TypeId};
//! # struct NoCallees;
//! # impl CalleeResolver for NoCallees {
//! #     fn resolve_call(&self, _: u64, _: &[TypeId]) -> Result<CallOutcome, String> {
//! #         Err("no callees".into())
//! #     }
//! # }
//!
//! let blob = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../tests/fixtures/blobs/rewrites.axpy.marshal"
//! ))?;
//! let code = numba_bytecode::marshal::read_code(&blob)?;
//! let mut ir = compile_to_ir(code, &HashMap::<String, Global>::new())?;
//! let vec = array(FLOAT64, 1, Layout::C);
//! let ctx = BaseContext::default();
//! let mut typing = infer(&ir, &[FLOAT64, vec, vec], &ctx, &NoCallees, None)?;
//!
//! let registry = RewriteRegistry::with_builtins();
//! let applied = registry.apply(Phase::AfterInference, &mut ir, Some(&mut typing), None)?;
//! assert_eq!(applied, 1);
//! let dump = ir.dump();
//! assert!(dump.contains(
//!     "    $binop_add14.4 = arrayexpr(expr=(<built-in function add>, \
//!      [(<built-in function mul>, [Var(a, rewrites.py:13), Var(x, rewrites.py:13)]), \
//!      Var(y, rewrites.py:13)]), ty=array(float64, 1d, C))"
//! ));
//! assert!(!dump.contains("a * x"), "{dump}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod arrayexpr;
pub mod builtins;
pub mod consts;

use numba_ir::{Block, Expr, ExprId, FunctionIR, Label, Loc, VarId};
use numba_typeinfer::{Signature, TypeId, TypingResult};
use thiserror::Error;

/// What a rewrite's `apply` may change: the function IR's arenas and, in the typed phase,
/// the typing side tables kept in step with them.
pub struct RewriteCx<'a> {
    pub ir: &'a mut FunctionIR,
    /// The typemap and calltypes (after inference only).
    pub typing: Option<&'a mut TypingResult>,
}

impl RewriteCx<'_> {
    /// A new variable named after `prefix` (made unique), typed `ty` in the typed phase.
    pub fn new_var(&mut self, prefix: &str, loc: Loc, ty: Option<TypeId>) -> VarId {
        let mut name = prefix.to_string();
        let mut n = 0;
        while self.ir.var_by_name(&name).is_some() {
            n += 1;
            name = format!("{prefix}.{n}");
        }
        let v = self.ir.add_var(name, loc);
        if let (Some(t), Some(ty)) = (self.typing.as_deref_mut(), ty) {
            let i = v.0 as usize;
            if t.typemap.len() <= i {
                t.typemap.resize(i + 1, numba_typeinfer::types::NONE);
            }
            t.typemap[i] = ty;
        }
        v
    }

    /// A new expression; `sig` is its resolved signature (for calls and operators) in the
    /// typed phase.
    pub fn new_expr(&mut self, e: Expr, sig: Option<Signature>) -> ExprId {
        let id = self.ir.add_expr(e);
        if let (Some(t), Some(sig)) = (self.typing.as_deref_mut(), sig) {
            t.calltypes.insert(id, sig);
        }
        id
    }

    /// A label no block has, for a block the rewrite adds.
    pub fn new_label(&self) -> Label {
        self.ir.blocks.keys().next_back().map_or(0, |l| l + 1)
    }

    /// The type of `v` in the typed phase.
    pub fn type_of(&self, v: VarId) -> Option<TypeId> {
        self.typing.as_deref().map(|t| t.type_of(v))
    }
}

/// When a rewrite runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// On untyped IR, before type inference (Numba's `before-inference`).
    BeforeInference,
    /// On typed IR (Numba's `after-inference`).
    AfterInference,
}

/// A rewrite of one block.
pub trait Rewrite {
    /// A short name, used in traces and errors.
    fn name(&self) -> &str;
    /// Whether this rewrite applies to `label`'s block; should be quick. A rewrite may
    /// remember what it found for `apply`.
    fn matches(&mut self, ir: &FunctionIR, label: Label, typing: Option<&TypingResult>) -> bool;
    /// The replacement block for the block last matched. New variables, expressions and
    /// blocks go through `cx` (typed when the phase is); added blocks may be inserted
    /// into `cx.ir.blocks` directly under labels from [`RewriteCx::new_label`].
    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block;
}

/// A rewrite failed to reach a fixpoint.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RewriteError {
    #[error("rewrite {name} did not reach a fixpoint on block {label} after {limit} applications")]
    NoFixpoint {
        name: String,
        label: Label,
        limit: usize,
    },
}

type Factory = Box<dyn Fn() -> Box<dyn Rewrite> + Send + Sync>;

/// Rewrites by phase, in registration order.
#[derive(Default)]
pub struct RewriteRegistry {
    before: Vec<Factory>,
    after: Vec<Factory>,
}

impl std::fmt::Debug for RewriteRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewriteRegistry")
            .field("before", &self.before.len())
            .field("after", &self.after.len())
            .finish()
    }
}

/// A built-in rewrite: its phase and how to make one (its name is [`Rewrite::name`]).
pub type BuiltinRewrite = (Phase, fn() -> Box<dyn Rewrite>);

/// numba-rs's own rewrites, in the order they run (Numba's registration order).
pub const BUILTINS: &[BuiltinRewrite] = &[
    (Phase::BeforeInference, || {
        Box::<builtins::RewriteConstGetitems>::default()
    }),
    (Phase::BeforeInference, || {
        Box::<builtins::RewriteConstRaises>::default()
    }),
    (Phase::BeforeInference, || {
        Box::<builtins::DetectStaticBinops>::default()
    }),
    (Phase::BeforeInference, || {
        Box::<builtins::RewritePrintCalls>::default()
    }),
    (Phase::BeforeInference, || {
        Box::<builtins::RewriteDynamicRaises>::default()
    }),
    (Phase::AfterInference, || {
        Box::<arrayexpr::RewriteArrayExprs>::default()
    }),
];

/// Applications of one rewrite to one block before giving up.
pub const ITERATION_LIMIT: usize = 1000;

impl RewriteRegistry {
    /// A registry holding numba-rs's built-in rewrites ([`BUILTINS`]).
    pub fn with_builtins() -> Self {
        let mut r = RewriteRegistry::default();
        for &(phase, make) in BUILTINS {
            r.register(phase, make);
        }
        r
    }

    /// Register a rewrite; `factory` makes a fresh instance per function.
    pub fn register(
        &mut self,
        phase: Phase,
        factory: impl Fn() -> Box<dyn Rewrite> + Send + Sync + 'static,
    ) {
        match phase {
            Phase::BeforeInference => self.before.push(Box::new(factory)),
            Phase::AfterInference => self.after.push(Box::new(factory)),
        }
    }

    /// Run every rewrite of `phase` on every block until none matches; returns how many
    /// rewrites were applied. With `trace`, appends Numba's `REWRITING (Name):` record of
    /// each application (the block before, a rule, the block after) to it.
    pub fn apply(
        &self,
        phase: Phase,
        ir: &mut FunctionIR,
        mut typing: Option<&mut TypingResult>,
        mut trace: Option<&mut String>,
    ) -> Result<usize, RewriteError> {
        let factories = match phase {
            Phase::BeforeInference => &self.before,
            Phase::AfterInference => &self.after,
        };
        let mut applied = 0;
        for factory in factories {
            let mut rw = factory();
            let labels: Vec<Label> = ir.blocks.keys().copied().collect();
            for label in labels {
                let mut count = 0;
                while rw.matches(ir, label, typing.as_deref()) {
                    count += 1;
                    if count > ITERATION_LIMIT {
                        return Err(RewriteError::NoFixpoint {
                            name: rw.name().to_string(),
                            label,
                            limit: ITERATION_LIMIT,
                        });
                    }
                    let before = trace.is_some().then(|| block_text(ir, label));
                    let new = rw.apply(&mut RewriteCx {
                        ir,
                        typing: typing.as_deref_mut(),
                    });
                    ir.blocks.insert(label, new);
                    applied += 1;
                    if let (Some(out), Some(before)) = (trace.as_deref_mut(), before) {
                        out.push_str(&"_".repeat(70));
                        out.push_str(&format!("\nREWRITING ({}):\n", rw.name()));
                        out.push_str(&before);
                        out.push_str(&"_".repeat(60));
                        out.push('\n');
                        out.push_str(&block_text(ir, label));
                        out.push_str(&"_".repeat(70));
                        out.push('\n');
                    }
                }
            }
        }
        Ok(applied)
    }
}

fn block_text(ir: &FunctionIR, label: Label) -> String {
    ir.blocks
        .get(&label)
        .map_or_else(String::new, |b| ir.block_dump(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use numba_bytecode::Constant;
    use numba_ir::{Expr, Inst, Loc, Stmt};

    /// Folds `const(int, 1)` into `const(int, 2)`, one at a time.
    struct OneToTwo;

    impl Rewrite for OneToTwo {
        fn name(&self) -> &str {
            "OneToTwo"
        }
        fn matches(&mut self, ir: &FunctionIR, label: Label, _: Option<&TypingResult>) -> bool {
            ir.blocks[&label].body.iter().any(|i| {
                matches!(i.stmt, Stmt::Assign { value, .. } if ir.expr(value) == &Expr::Const(Constant::Int(1)))
            })
        }
        fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
            let ir = &mut *cx.ir;
            let (label, block) = ir
                .blocks
                .iter()
                .find(|(_, b)| b.body.iter().any(|i| matches!(i.stmt, Stmt::Assign { value, .. } if ir.expr(value) == &Expr::Const(Constant::Int(1)))))
                .map(|(l, b)| (*l, b.clone()))
                .expect("matched block exists");
            let _ = label;
            let mut block = block;
            for inst in block.body.iter_mut() {
                if let Stmt::Assign { target, value } = inst.stmt {
                    if ir.expr(value) == &Expr::Const(Constant::Int(1)) {
                        let e = ir.add_expr(Expr::Const(Constant::Int(2)));
                        inst.stmt = Stmt::Assign { target, value: e };
                        break;
                    }
                }
            }
            block
        }
    }

    /// Always matches: must hit the iteration cap.
    struct Forever;

    impl Rewrite for Forever {
        fn name(&self) -> &str {
            "Forever"
        }
        fn matches(&mut self, _: &FunctionIR, _: Label, _: Option<&TypingResult>) -> bool {
            true
        }
        fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
            cx.ir.blocks[&0].clone()
        }
    }

    fn sample() -> FunctionIR {
        let mut ir = FunctionIR::default();
        let loc = Loc { line: 1 };
        let mut body = Vec::new();
        for name in ["a", "b"] {
            let v = ir.add_var(name, loc);
            let e = ir.add_expr(Expr::Const(Constant::Int(1)));
            body.push(Inst {
                stmt: Stmt::Assign {
                    target: v,
                    value: e,
                },
                loc,
            });
        }
        let a = ir.var_by_name("a").expect("a");
        body.push(Inst {
            stmt: Stmt::Return { value: a },
            loc,
        });
        ir.blocks.insert(0, Block { body });
        ir
    }

    #[test]
    fn runs_to_fixpoint() {
        let mut reg = RewriteRegistry::default();
        reg.register(Phase::BeforeInference, || Box::new(OneToTwo));
        let mut ir = sample();
        assert_eq!(
            reg.apply(Phase::BeforeInference, &mut ir, None, None),
            Ok(2)
        );
        assert!(ir.dump().contains("a = const(int, 2)"));
        assert!(ir.dump().contains("b = const(int, 2)"));
        // The other phase has nothing registered.
        assert_eq!(reg.apply(Phase::AfterInference, &mut ir, None, None), Ok(0));
    }

    /// Typed phase: splits `return a` into `t = a; return t` with `t` a new typed
    /// temporary, once.
    struct Spill {
        done: bool,
    }

    impl Rewrite for Spill {
        fn name(&self) -> &str {
            "Spill"
        }
        fn matches(&mut self, _: &FunctionIR, _: Label, typing: Option<&TypingResult>) -> bool {
            typing.is_some() && !self.done
        }
        fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
            self.done = true;
            let loc = Loc { line: 1 };
            let a = cx.ir.var_by_name("a").expect("a");
            let ty = cx.type_of(a);
            let t = cx.new_var("$spill", loc, ty);
            let e = cx.new_expr(Expr::Var(a), None);
            let mut block = cx.ir.blocks[&0].clone();
            let ret = block.body.pop().expect("return");
            block.body.push(Inst {
                stmt: Stmt::Assign {
                    target: t,
                    value: e,
                },
                loc,
            });
            block.body.push(Inst {
                stmt: Stmt::Return { value: t },
                loc: ret.loc,
            });
            // A label for a block the rewrite could add.
            assert_eq!(cx.new_label(), 1);
            block
        }
    }

    #[test]
    fn typed_rewrites_add_typed_temporaries() {
        let mut reg = RewriteRegistry::default();
        reg.register(Phase::AfterInference, || Box::new(Spill { done: false }));
        let mut ir = sample();
        let int64 = numba_typeinfer::types::INT64;
        let mut typing = TypingResult {
            typemap: vec![int64; ir.vars.len()],
            calltypes: Default::default(),
            return_type: int64,
            arg_types: vec![],
            call_args: Default::default(),
            setitem_calls: Default::default(),
            delitem_calls: Default::default(),
            setattr_calls: Default::default(),
        };
        assert_eq!(
            reg.apply(Phase::AfterInference, &mut ir, Some(&mut typing), None),
            Ok(1)
        );
        let t = ir.var_by_name("$spill").expect("the temporary exists");
        assert_eq!(typing.type_of(t), int64);
        assert!(ir.dump().contains("$spill = a"), "{}", ir.dump());
        assert!(ir.dump().contains("return $spill"));
    }

    #[test]
    fn cap_names_the_rewrite() {
        let mut reg = RewriteRegistry::default();
        reg.register(Phase::BeforeInference, || Box::new(Forever));
        let mut ir = sample();
        let err = reg
            .apply(Phase::BeforeInference, &mut ir, None, None)
            .unwrap_err();
        assert!(err.to_string().contains("Forever"));
    }
}
