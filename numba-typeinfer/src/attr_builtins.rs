//! `getattr(x, name[, default])` and `hasattr(x, name)` with a constant name, decided
//! from `x`'s type before full typing (Numba types them through `resolve_getattr` with a
//! literal string): after a partial typing, `hasattr` becomes the constant answer (so
//! the branch it decides is pruned, as for `isinstance`), `getattr` becomes the
//! attribute read `x.name`, or, when `x`'s type has no such attribute and a default is
//! given, the default.

use numba_ir::global::GlobalKind;
use numba_ir::{Expr, FunctionIR, Stmt, VarId};

use crate::context::TypingContext;
use crate::types::*;

/// Whether the function calls the builtin `getattr` or `hasattr` (only then is the
/// partial typing for [`fold`] needed).
pub fn mentions(ir: &FunctionIR) -> bool {
    ir.exprs.iter().any(|e| match e {
        Expr::Global { value, .. } => is_attr_builtin(&value.kind).is_some(),
        _ => false,
    })
}

fn is_attr_builtin(kind: &GlobalKind) -> Option<&'static str> {
    match kind {
        GlobalKind::Builtin(n) if n == "getattr" => Some("getattr"),
        GlobalKind::Builtin(n) if n == "hasattr" => Some("hasattr"),
        _ => None,
    }
}

/// Whether values of type `t` have attribute `attr` (a method, a field, a property, an
/// extension's attribute or method, a module's member).
pub fn has_attribute(ctx: &dyn TypingContext, t: TypeId, attr: &str) -> bool {
    if ctx.resolve_getattr(t, attr).is_some() || ctx.resolve_getattr(t.unliteral(), attr).is_some()
    {
        return true;
    }
    let Some(x) = crate::extension::external() else {
        return false;
    };
    if let Type::Module(m) = t.get() {
        return x.module_attribute(&m, attr).is_some();
    }
    let t = t.unliteral();
    x.method(t, attr).is_some() || x.attribute(t, attr).is_some()
}

/// Rewrite the `getattr`/`hasattr` calls whose object's type the partial typing
/// `types` knows and whose name is a constant string; whether anything changed.
pub fn fold(
    ir: &mut FunctionIR,
    types: &[Option<TypeId>],
    ctx: &dyn TypingContext,
) -> Result<bool, (String, u32)> {
    let mut defs = std::collections::HashMap::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            if let Stmt::Assign { target, value } = &inst.stmt {
                defs.insert(*target, *value);
            }
        }
    }
    let builtin_of = |mut v: VarId| {
        for _ in 0..16 {
            match defs.get(&v).map(|&e| ir.expr(e)) {
                Some(Expr::Var(src)) => v = *src,
                Some(Expr::Global { value, .. }) => return is_attr_builtin(&value.kind),
                _ => return None,
            }
        }
        None
    };
    let ty = |v: VarId| types.get(v.0 as usize).copied().flatten();
    let mut rewrites = Vec::new();
    for (&label, block) in &ir.blocks {
        for (i, inst) in block.body.iter().enumerate() {
            let Stmt::Assign { value, .. } = &inst.stmt else {
                continue;
            };
            let Expr::Call {
                func,
                args,
                kws,
                vararg: None,
                varkwarg: None,
                ..
            } = ir.expr(*value)
            else {
                continue;
            };
            let Some(which) = builtin_of(*func) else {
                continue;
            };
            let line = inst.loc.line;
            let arity_ok = match which {
                "hasattr" => args.len() == 2,
                _ => args.len() == 2 || args.len() == 3,
            };
            if !kws.is_empty() || !arity_ok {
                return Err((
                    format!(
                        "{which}() takes {} positional arguments",
                        if which == "hasattr" { "2" } else { "2 or 3" }
                    ),
                    line,
                ));
            }
            let (Some(obj), Some(name)) = (ty(args[0]), ty(args[1])) else {
                continue;
            };
            let Type::StringLiteral(attr) = name.get() else {
                return Err((
                    format!("{which}() needs a constant attribute name, got {name}"),
                    line,
                ));
            };
            let exists = has_attribute(ctx, obj, &attr);
            let new = match (which, args.get(2)) {
                ("hasattr", _) => Expr::Const(numba_bytecode::Constant::Bool(exists)),
                (_, Some(&default)) if !exists => Expr::Var(default),
                _ => Expr::GetAttr {
                    value: args[0],
                    attr: attr.to_string(),
                },
            };
            rewrites.push((label, i, new));
        }
    }
    Ok(crate::isinstance::replace_assigned(ir, rewrites))
}
