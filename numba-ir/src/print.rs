//! `NUMBA_DUMP_IR` text: `Display` for IR nodes in Numba 0.68's exact format.

use std::fmt::{self, Write};

use crate::ir::*;

/// Python's `str.center(width, fill)`.
pub fn center(text: &str, width: usize, fill: char) -> String {
    let len = text.chars().count();
    if len >= width {
        return text.to_string();
    }
    let marg = width - len;
    let left = marg / 2 + (marg & width & 1);
    let right = marg - left;
    let f = fill.to_string();
    format!("{}{}{}", f.repeat(left), text, f.repeat(right))
}

/// `args=(a,)` / `args=(a, b)` / `args=()`: Python's tuple repr of the items.
fn py_tuple(items: &[String]) -> String {
    match items.len() {
        1 => format!("args=({},)", items[0]),
        _ => format!("args=({})", items.join(", ")),
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

impl FunctionIR {
    /// `Var(x, file.py:5)`, Numba's `repr` of a variable.
    pub fn var_repr(&self, v: VarId) -> String {
        let d = self.var(v);
        format!(
            "Var({}, {}:{})",
            d.name,
            basename(&self.filename),
            d.loc.line
        )
    }

    /// An extension node: its owner's printer, or `kind(operands..., k=v...)`.
    pub fn extension_to_string(&self, node: &ExtensionNode) -> String {
        if let Some(p) = node.printer {
            return p(node, self);
        }
        let mut parts: Vec<String> = node
            .operands
            .iter()
            .map(|v| self.var_name(*v).to_string())
            .collect();
        parts.extend(node.attrs.iter().map(|(k, v)| format!("{k}={v}")));
        format!("{}({})", node.kind, parts.join(", "))
    }

    /// An expression as Numba prints it.
    pub fn expr_to_string(&self, e: &Expr) -> String {
        let n = |v: &VarId| self.var_name(*v).to_string();
        match e {
            Expr::Arg { index, name } => format!("arg({index}, name={name})"),
            Expr::Const(c) => format!("const({}, {})", c.type_name(), c.py_str()),
            // A lifted `objmode` body: Numba holds its dispatcher as a constant.
            Expr::Global { value, .. } if value.repr.starts_with("ObjModeLiftedWith(") => {
                format!("const(ObjModeLiftedWith, {})", value.repr)
            }
            Expr::Global { value, .. }
                if matches!(value.kind, crate::GlobalKind::LiftedLoop { .. }) =>
            {
                format!("const(LiftedLoop, {})", value.repr)
            }
            Expr::Global { name, value } => format!("global({name}: {})", value.repr),
            Expr::FreeVar { name, value, .. } => format!("freevar({name}: {})", value.repr),
            Expr::Var(v) => n(v),
            Expr::Call {
                func,
                args,
                kws,
                vararg,
                varkwarg,
                form,
            } => {
                let mut parts: Vec<String> = args.iter().map(n).collect();
                if let Some(v) = vararg {
                    parts.push(format!("*{}", n(v)));
                }
                let args_repr: Vec<String> = args.iter().map(|v| self.var_repr(*v)).collect();
                let kws_list = matches!(form, CallForm::Keywords | CallForm::Star);
                let kws_repr = if !kws_list {
                    "()".to_string()
                } else {
                    let items: Vec<String> = kws
                        .iter()
                        .map(|(k, v)| format!("('{k}', {})", self.var_repr(*v)))
                        .collect();
                    format!("[{}]", items.join(", "))
                };
                let opt = |v: &Option<VarId>| v.map(|v| n(&v)).unwrap_or_else(|| "None".into());
                parts.push(format!("func={}", n(func)));
                parts.push(if *form == CallForm::Synthetic {
                    py_tuple(&args_repr)
                } else {
                    format!("args=[{}]", args_repr.join(", "))
                });
                parts.push(format!("kws={kws_repr}"));
                parts.push(format!("vararg={}", opt(vararg)));
                parts.push(format!("varkwarg={}", opt(varkwarg)));
                parts.push("target=None".into());
                format!("call {}({})", n(func), parts.join(", "))
            }
            Expr::BinOp { op, lhs, rhs } => {
                if *op == BinOp::In {
                    // contains(b, a) prints as `a in b`.
                    format!("{} in {}", n(rhs), n(lhs))
                } else if *op == BinOp::MatMul {
                    // Numba has no symbol for matmul in its binop printer.
                    format!("{} <built-in function matmul> {}", n(lhs), n(rhs))
                } else {
                    format!("{} {} {}", n(lhs), op.symbol(), n(rhs))
                }
            }
            Expr::InplaceBinOp { op, lhs, rhs } => format!(
                "inplace_binop(fn=<built-in function i{}>, immutable_fn=<built-in function {}>, lhs={}, rhs={}, static_lhs=Undefined, static_rhs=Undefined)",
                op.operator_name().trim_end_matches('_'),
                op.operator_name(),
                n(lhs),
                n(rhs)
            ),
            Expr::Unary { op, value } => {
                format!("unary(fn=<built-in function {}>, value={})", op.operator_name(), n(value))
            }
            Expr::GetAttr { value, attr } => format!("getattr(value={}, attr={attr})", n(value)),
            Expr::GetItem { value, index } => format!(
                "getitem(value={}, index={}, fn=<built-in function getitem>)",
                n(value),
                n(index)
            ),
            Expr::StaticGetItem {
                value,
                index,
                index_var,
            } => format!(
                "static_getitem(value={}, index={index}, index_var={}, fn=<built-in function getitem>)",
                n(value),
                index_var.map(|v| n(&v)).unwrap_or_else(|| "None".into())
            ),
            Expr::Cast { value } => format!("cast(value={})", n(value)),
            Expr::GetIter { value } => format!("getiter(value={})", n(value)),
            Expr::IterNext { value } => format!("iternext(value={})", n(value)),
            Expr::PairFirst { value } => format!("pair_first(value={})", n(value)),
            Expr::PairSecond { value } => format!("pair_second(value={})", n(value)),
            Expr::ExhaustIter { value, count } => {
                format!("exhaust_iter(value={}, count={count})", n(value))
            }
            Expr::BuildTuple { items } | Expr::BuildList { items } | Expr::BuildSet { items } => {
                let kind = match e {
                    Expr::BuildTuple { .. } => "build_tuple",
                    Expr::BuildList { .. } => "build_list",
                    _ => "build_set",
                };
                let reprs: Vec<String> = items.iter().map(|v| self.var_repr(*v)).collect();
                format!("{kind}(items=[{}])", reprs.join(", "))
            }
            Expr::BuildMap {
                items,
                size,
                literal_value,
                value_indexes,
            } => {
                let items: Vec<String> = items
                    .iter()
                    .map(|(k, v)| format!("({}, {})", self.var_repr(*k), self.var_repr(*v)))
                    .collect();
                let literal = match literal_value {
                    None => "None".to_string(),
                    Some(entries) => {
                        let parts: Vec<String> = entries
                            .iter()
                            .map(|(k, v)| {
                                let v = match v {
                                    LiteralValue::Known(c) => c.py_repr(),
                                    LiteralValue::Unknown(name) => format!("_UNKNOWN_VALUE({name})"),
                                };
                                format!("{}: {v}", k.py_repr())
                            })
                            .collect();
                        format!("{{{}}}", parts.join(", "))
                    }
                };
                let indexes: Vec<String> = value_indexes
                    .iter()
                    .map(|(k, i)| format!("{}: {i}", k.py_repr()))
                    .collect();
                format!(
                    "build_map(items=[{}], size={size}, literal_value={literal}, value_indexes={{{}}})",
                    items.join(", "),
                    indexes.join(", ")
                )
            }
            Expr::MakeFunction {
                code,
                closure,
                defaults,
            } => {
                let opt = |v: &Option<VarId>| v.map(|v| n(&v)).unwrap_or_else(|| "None".into());
                format!(
                    "make_function(name=None, code={code}, closure={}, defaults={})",
                    opt(closure),
                    opt(defaults)
                )
            }
            Expr::Yield { value, .. } => format!("yield {}", n(value)),
            Expr::TypedGetItem {
                value,
                dtype,
                index,
            } => format!("typed_getitem(value={}, dtype={dtype}, index={})", n(value), n(index)),
            Expr::Null => "null()".into(),
            Expr::Undef => "undef()".into(),
            Expr::Extension(node) => self.extension_to_string(node),
            Expr::ListToTuple { list } => format!("list_to_tuple(info=('{}',))", n(list)),
            Expr::Phi { incoming } => {
                let vals: Vec<String> = incoming
                    .iter()
                    .map(|(v, _)| v.map_or_else(|| "Undefined".to_string(), |v| self.var_repr(v)))
                    .collect();
                let blocks: Vec<String> = incoming.iter().map(|(_, b)| b.to_string()).collect();
                format!(
                    "phi(incoming_values=[{}], incoming_blocks=[{}])",
                    vals.join(", "),
                    blocks.join(", ")
                )
            }
        }
    }

    /// ` <class 'X'>(a, b)` / ` <class 'X'>` / `` for the raise statements: constant
    /// arguments by `repr`, variables as `Var(...)`.
    fn raise_tail(&self, exc_class: &Option<String>, args: Option<&Vec<RaiseArg>>) -> String {
        match (exc_class, args) {
            (None, _) => String::new(),
            (Some(c), None) => format!(" {c}"),
            (Some(c), Some(a)) => {
                let a: Vec<String> = a
                    .iter()
                    .map(|x| match x {
                        RaiseArg::Const(k) => k.py_repr(),
                        RaiseArg::Var(v) => self.var_repr(*v),
                    })
                    .collect();
                format!(" {c}({})", a.join(", "))
            }
        }
    }

    /// A statement as Numba prints it.
    pub fn stmt_to_string(&self, s: &Stmt) -> String {
        let n = |v: &VarId| self.var_name(*v).to_string();
        match s {
            Stmt::Assign { target, value } => {
                format!("{} = {}", n(target), self.expr_to_string(self.expr(*value)))
            }
            Stmt::SetItem {
                target,
                index,
                value,
            } => format!("{}[{}] = {}", n(target), n(index), n(value)),
            Stmt::SetAttr {
                target,
                attr,
                value,
            } => format!("({}).{attr} = {}", n(target), n(value)),
            Stmt::DelItem { target, index } => format!("del {}[{}]", n(target), n(index)),
            Stmt::DelAttr { target, attr } => format!("del ({}).{attr}", n(target)),
            Stmt::Del { var } => format!("del {}", n(var)),
            Stmt::Raise { exception } => match exception {
                Some(e) => format!("raise {}", n(e)),
                None => "raise None".into(),
            },
            Stmt::EnterWith { contextmanager, .. } => format!("enter_with {}", n(contextmanager)),
            Stmt::StaticSetItem {
                target,
                index,
                value,
                ..
            } => format!("{}[{}] = {}", n(target), index.py_repr(), n(value)),
            Stmt::StoreMap { dct, key, value } => {
                format!("{}[{}] = {}", n(dct), n(key), n(value))
            }
            Stmt::DynamicRaise { exc_class, args } => {
                format!("<dynamic> raise{}", self.raise_tail(exc_class, Some(args)))
            }
            Stmt::StaticTryRaise { exc_class, args } => {
                let args: Option<Vec<RaiseArg>> = args
                    .as_ref()
                    .map(|a| a.iter().cloned().map(RaiseArg::Const).collect());
                format!(
                    "static_try_raise{}",
                    self.raise_tail(exc_class, args.as_ref())
                )
            }
            Stmt::DynamicTryRaise { exc_class, args } => {
                format!(
                    "dynamic_try_raise{}",
                    self.raise_tail(exc_class, Some(args))
                )
            }
            Stmt::Print { args, vararg } => {
                let mut parts: Vec<String> = args.iter().map(n).collect();
                if let Some(v) = vararg {
                    parts.push(format!("*{}", n(v)));
                }
                format!("print({})", parts.join(", "))
            }
            Stmt::Extension(node) => self.extension_to_string(node),
            Stmt::PopBlock => "pop_block".into(),
            Stmt::TryRaise { exception } => match exception {
                Some(e) => format!("try_raise {}", n(e)),
                None => "try_raise None".into(),
            },
            Stmt::StaticRaise { exc_class, args } => match (exc_class, args) {
                (None, _) => "<static> raise".into(),
                (Some(c), None) => format!("<static> raise {c}"),
                (Some(c), Some(a)) => {
                    let a: Vec<String> = a.iter().map(|c| c.py_repr()).collect();
                    format!("<static> raise {c}({})", a.join(", "))
                }
            },
            Stmt::Return { value } => format!("return {}", n(value)),
            Stmt::Jump { target } => format!("jump {target}"),
            Stmt::Branch {
                cond,
                truebr,
                falsebr,
            } => format!("branch {}, {truebr}, {falsebr}", n(cond)),
        }
    }

    /// The body of `NUMBA_DUMP_IR` (without the header line).
    pub fn dump(&self) -> String {
        let mut out = String::new();
        for (label, block) in &self.blocks {
            let _ = writeln!(out, "label {label}:");
            out.push_str(&self.block_dump(block));
        }
        out.push('\n');
        out
    }

    /// One block as Numba's `Block.dump` prints it: each statement padded to 40 columns,
    /// then the sorted names of the variables it mentions.
    pub fn block_dump(&self, block: &Block) -> String {
        let mut out = String::new();
        for inst in &block.body {
            if let Stmt::Extension(node) = &inst.stmt {
                if let Some(d) = node.dumper {
                    out.push_str(&d(node, self));
                    continue;
                }
            }
            // Numba's `Del` holds a name, not a variable: it lists no variables.
            let vars = match inst.stmt {
                Stmt::Del { .. } => Vec::new(),
                ref s => self.stmt_vars(s),
            };
            let mut names: Vec<String> =
                vars.iter().map(|v| self.var_name(*v).to_string()).collect();
            names.sort();
            let list: Vec<String> = names
                .iter()
                .map(|s| numba_bytecode::Constant::Str(s.clone()).py_repr())
                .collect();
            let _ = writeln!(
                out,
                "    {:<40} [{}]",
                self.stmt_to_string(&inst.stmt),
                list.join(", ")
            );
        }
        out
    }

    /// The whole `NUMBA_DUMP_IR` output: centred header, then the blocks, then for a
    /// generator its `GENERATOR INFO`.
    pub fn dump_with_header(&self) -> String {
        let mut out = format!(
            "{}\n{}",
            center(&format!("IR DUMP: {}", self.qualname), 80, '-'),
            self.dump()
        );
        if self.generator_info.is_some() {
            out.push_str(&center(
                &format!("GENERATOR INFO: {}", self.qualname),
                80,
                '-',
            ));
            out.push('\n');
            out.push_str(&self.dump_generator_info());
        }
        out
    }
}

impl fmt::Display for FunctionIR {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dump())
    }
}
