//! `module.name` where `module` is one numba-rs's typing does not know (a user's module,
//! a package's submodule): the attribute's value is read when the function is compiled
//! and frozen as a global, as Numba types a module attribute by its value then. Modules
//! the typing context implements (`numpy`, `math`, ...) and attributes an extension
//! overloads keep their `getattr`.

use std::collections::HashMap;

use numba_ir::{Expr, ExprId, FunctionIR, GlobalKind, GlobalResolver, Stmt, VarId};
use numba_typeinfer::types::{intern, Type};
use numba_typeinfer::TypingContext;

/// Replace each `getattr` of such a module (followed through `pkg.sub.f` chains) by the
/// global it is bound to; whether anything changed. Attributes that cannot be resolved,
/// or whose values numba-rs cannot compile, keep their `getattr` (typing then says why).
pub(crate) fn freeze_module_attributes(
    ir: &mut FunctionIR,
    globals: &dyn GlobalResolver,
    ctx: &dyn TypingContext,
) -> bool {
    let mut any = false;
    loop {
        // Each variable's definition, when it has exactly one.
        let mut defs: HashMap<VarId, Option<ExprId>> = HashMap::new();
        for inst in ir.blocks.values().flat_map(|b| &b.body) {
            if let Stmt::Assign { target, value } = inst.stmt {
                defs.entry(target)
                    .and_modify(|d| *d = None)
                    .or_insert(Some(value));
            }
        }
        let module_of = |v: VarId| -> Option<String> {
            let e = defs.get(&v).copied().flatten()?;
            match ir.expr(e) {
                Expr::Global { value, .. } | Expr::FreeVar { value, .. } => match &value.kind {
                    GlobalKind::Module(m) => Some(m.clone()),
                    _ => None,
                },
                _ => None,
            }
        };
        let mut frozen: Vec<(ExprId, Expr)> = Vec::new();
        for inst in ir.blocks.values().flat_map(|b| &b.body) {
            let Stmt::Assign { value, .. } = inst.stmt else {
                continue;
            };
            let Expr::GetAttr { value: recv, attr } = ir.expr(value) else {
                continue;
            };
            let Some(m) = module_of(*recv) else {
                continue;
            };
            if ctx
                .resolve_getattr(intern(Type::Module(m.clone())), attr)
                .is_some()
                || numba_typeinfer::extension::external()
                    .and_then(|x| x.module_attribute(&m, attr))
                    .is_some()
            {
                continue;
            }
            let Some(g) = globals.resolve_attr(&m, attr) else {
                continue;
            };
            if matches!(
                g.kind,
                GlobalKind::Opaque { .. } | GlobalKind::Unsupported { .. } | GlobalKind::Undefined
            ) {
                continue;
            }
            frozen.push((
                value,
                Expr::Global {
                    name: attr.clone(),
                    value: g,
                },
            ));
        }
        if frozen.is_empty() {
            return any;
        }
        for (id, e) in frozen {
            ir.exprs[id.0 as usize] = e;
        }
        any = true;
    }
}
