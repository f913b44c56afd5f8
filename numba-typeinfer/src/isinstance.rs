//! `isinstance(x, cls)` in compiled code, decided from `x`'s type (Numba's
//! `ol_isinstance`): the call's type is the literal answer, so the pipeline can fold the
//! call to a constant after a partial typing and prune the branch it decides before
//! the function is typed in full (a branch for another type never has to type).
//!
//! Numba's rules: `x` must be of a well-known kind (numbers, strings, bytes, containers,
//! tuples, arrays, jitclass instances, None, ...); a class matches a number type exactly
//! (`int` is `int64`, `np.int8` is `int8`), the container classes match any container of
//! their kind, `typed.List` / `typed.Dict` match the typed containers, a jitclass its
//! instances. Classes are tried in order: the first match answers True before a later
//! invalid class is looked at.

use crate::types::*;

/// Whether `var` is an instance of `classes` (a class, or a tuple of them), or Numba's
/// error for the call.
pub fn decide(var: TypeId, classes: TypeId) -> Result<bool, String> {
    let var = var.unliteral();
    if matches!(var.get(), Type::Optional(_)) {
        return Err(format!(
            "isinstance cannot handle optional types. Found: \"{var}\""
        ));
    }
    if !supported(var) {
        return Err(format!(
            "isinstance() does not support variables of type \"{var}\"."
        ));
    }
    let items = match classes.get() {
        Type::UniTuple(..) | Type::Tuple(_) => {
            crate::conv::tuple_items(classes).unwrap_or_default()
        }
        _ => vec![classes],
    };
    for cls in items {
        if matches_class(var, cls)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The kinds of value Numba's `isinstance` accepts.
fn supported(t: TypeId) -> bool {
    matches!(
        t.get(),
        Type::Boolean
            | Type::Integer { .. }
            | Type::Float { .. }
            | Type::Complex { .. }
            | Type::NPDatetime(_)
            | Type::NPTimedelta(_)
            | Type::Unicode
            | Type::Bytes
            | Type::UnicodeCharSeq(_)
            | Type::NoneType
            | Type::RangeState64
            | Type::List { .. }
            | Type::Set { .. }
            | Type::Dict { .. }
            | Type::LiteralStrKeyDict { .. }
            | Type::UniTuple(..)
            | Type::Tuple(_)
            | Type::Array { .. }
            | Type::ClassInstance { .. }
            | Type::Function(_)
            | Type::Dispatcher { .. }
    )
}

fn matches_class(var: TypeId, cls: TypeId) -> Result<bool, String> {
    Ok(match cls.get() {
        // `int`, `float`, `bool`, NumPy scalar classes and Numba's number types: the
        // number type itself.
        Type::NumberClass(t) => var == t,
        Type::Function(k) => match k.as_str() {
            "complex" => var == COMPLEX128,
            // Any unit.
            "numpy.datetime64" => matches!(var.get(), Type::NPDatetime(_)),
            "numpy.timedelta64" => matches!(var.get(), Type::NPTimedelta(_)),
            "str" => var == UNICODE,
            "bytes" => var == BYTES,
            "range" => matches!(var.get(), Type::RangeState64),
            "list" => matches!(var.get(), Type::List { typed: false, .. }),
            "set" => matches!(var.get(), Type::Set { .. }),
            "dict" => matches!(
                var.get(),
                Type::Dict { .. } | Type::LiteralStrKeyDict { .. }
            ),
            "tuple" => matches!(var.get(), Type::UniTuple(..) | Type::Tuple(_)),
            "numba_rs.typed.List" => matches!(var.get(), Type::List { typed: true, .. }),
            "numba_rs.typed.Dict" => {
                crate::dicts::dict_parts(var).is_some() && matches!(var.get(), Type::Dict { .. })
            }
            _ => return Err(format!("Cannot infer Numba type of Python type {cls}")),
        },
        // A jitclass: its instances.
        Type::Dispatcher { id, .. } => match crate::jitclass::constructed_by(id) {
            Some(inst) => var == inst,
            None => return Err(format!("Cannot infer Numba type of Python type {cls}")),
        },
        // A type class (`types.Integer`) as a value: a reference to it (numba-py's
        // `typeref[...]` opaque type), or a type used as a class.
        Type::Opaque { name, .. } if name.starts_with("typeref[") => {
            return Err(
                "Numba type classes (except numba.typed.* container types) are not supported."
                    .into(),
            )
        }
        Type::TypeRef(_) => {
            return Err(
                "Numba type classes (except numba.typed.* container types) are not supported."
                    .into(),
            )
        }
        Type::StringLiteral(s) => {
            return Err(format!("Cannot infer Numba type of Python type {s}"))
        }
        _ => return Err(format!("Cannot infer Numba type of Python type {cls}")),
    })
}

/// Replace each `isinstance` call whose partial typing gave a literal answer by that
/// constant (Numba's literal propagation for `isinstance`); whether anything changed.
/// An argument that is a φ of its branches is Numba's error: which branch's value the
/// call sees is not known before run time.
pub fn fold_literal_calls(
    ir: &mut numba_ir::FunctionIR,
    types: &[Option<TypeId>],
) -> Result<bool, (String, u32)> {
    use numba_ir::global::GlobalKind;
    use numba_ir::{Expr, Stmt};
    let mut defs: std::collections::HashMap<numba_ir::VarId, numba_ir::ExprId> =
        std::collections::HashMap::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            if let Stmt::Assign { target, value } = &inst.stmt {
                defs.insert(*target, *value);
            }
        }
    }
    let is_isinstance = |mut v: numba_ir::VarId| {
        for _ in 0..16 {
            match defs.get(&v).map(|&e| ir.expr(e)) {
                Some(Expr::Var(src)) => v = *src,
                Some(Expr::Global { value, .. }) => return folds_to_literal(&value.kind),
                // `np.issubdtype` read from the module.
                Some(Expr::GetAttr { value, attr }) if attr == "issubdtype" => {
                    return matches!(
                        defs.get(value).map(|&e| ir.expr(e)),
                        Some(Expr::Global { value, .. })
                            if value.kind == GlobalKind::Module("numpy".into())
                    )
                }
                _ => return false,
            }
        }
        false
    };
    let mut folds = Vec::new();
    for (&label, block) in &ir.blocks {
        for (i, inst) in block.body.iter().enumerate() {
            let Stmt::Assign { target, value } = &inst.stmt else {
                continue;
            };
            // A dtype comparison (`a.dtype == np.float64`) is a constant too.
            if let Expr::BinOp { .. } = ir.expr(*value) {
                if let Some(Some(t)) = types.get(target.0 as usize) {
                    if let Type::BooleanLiteral(b) = t.get() {
                        folds.push((label, i, b));
                    }
                }
                continue;
            }
            let Expr::Call { func, args, .. } = ir.expr(*value) else {
                continue;
            };
            if !is_isinstance(*func) {
                continue;
            }
            for a in args {
                if matches!(defs.get(a).map(|&e| ir.expr(e)), Some(Expr::Phi { .. })) {
                    let name = ir.var_name(*a);
                    let name = name.split('.').next().unwrap_or(name);
                    return Err((
                        format!(
                            "isinstance() cannot determine the type of variable \"{name}\" due to a branch."
                        ),
                        inst.loc.line,
                    ));
                }
            }
            if let Some(Some(t)) = types.get(target.0 as usize) {
                if let Type::BooleanLiteral(b) = t.get() {
                    folds.push((label, i, b));
                }
            }
        }
    }
    let folds = folds
        .into_iter()
        .map(|(label, i, b)| (label, i, Expr::Const(numba_bytecode::Constant::Bool(b))))
        .collect();
    Ok(replace_assigned(ir, folds))
}

/// Make each `(block, statement index)` assignment assign the new expression instead;
/// whether there was any.
pub(crate) fn replace_assigned(
    ir: &mut numba_ir::FunctionIR,
    folds: Vec<(numba_ir::Label, usize, numba_ir::Expr)>,
) -> bool {
    use numba_ir::Stmt;
    let changed = !folds.is_empty();
    for (label, i, new) in folds {
        let e = ir.add_expr(new);
        if let Some(Stmt::Assign { value, .. }) = ir
            .blocks
            .get_mut(&label)
            .and_then(|blk| blk.body.get_mut(i))
            .map(|inst| &mut inst.stmt)
        {
            *value = e;
        }
    }
    changed
}

/// The functions whose calls are typed as their literal answers: the builtin
/// `isinstance` and `np.issubdtype`.
fn folds_to_literal(kind: &numba_ir::global::GlobalKind) -> bool {
    use numba_ir::global::GlobalKind;
    match kind {
        GlobalKind::Builtin(n) => n == "isinstance",
        GlobalKind::ModuleFunction { module, name } => module == "numpy" && name == "issubdtype",
        _ => false,
    }
}

/// Whether the function calls `isinstance` or `np.issubdtype`, or reads a `.dtype` (only
/// then is the partial typing for [`fold_literal_calls`] worth doing).
pub fn mentions_isinstance(ir: &numba_ir::FunctionIR) -> bool {
    ir.exprs.iter().any(|e| match e {
        numba_ir::Expr::Global { value, .. } => folds_to_literal(&value.kind),
        numba_ir::Expr::GetAttr { attr, .. } => attr == "dtype" || attr == "issubdtype",
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number_class(t: TypeId) -> TypeId {
        intern(Type::NumberClass(t))
    }

    #[test]
    fn numbers_match_exactly_as_numba_does() {
        assert_eq!(decide(INT64, number_class(INT64)), Ok(true));
        assert_eq!(decide(INT32, number_class(INT64)), Ok(false));
        assert_eq!(decide(BOOLEAN, number_class(INT64)), Ok(false));
        assert_eq!(
            decide(intern(Type::IntegerLiteral(3)), number_class(INT64)),
            Ok(true)
        );
        let complex = intern(Type::Function("complex".into()));
        assert_eq!(decide(COMPLEX128, complex), Ok(true));
    }

    #[test]
    fn tuples_of_classes_stop_at_the_first_match() {
        let str_cls = intern(Type::Function("str".into()));
        let bad = intern(Type::StringLiteral("not a type".into()));
        let classes = intern(Type::Tuple(vec![number_class(FLOAT64), bad]));
        assert_eq!(decide(FLOAT64, classes), Ok(true));
        assert!(decide(INT64, classes)
            .unwrap_err()
            .contains("Cannot infer Numba type of Python type"));
        let both = intern(Type::Tuple(vec![str_cls, number_class(INT64)]));
        assert_eq!(decide(UNICODE, both), Ok(true));
    }

    #[test]
    fn optional_and_unsupported_values_are_errors() {
        let opt = intern(Type::Optional(INT64));
        assert!(decide(opt, number_class(INT64))
            .unwrap_err()
            .contains("cannot handle optional types"));
    }
}
