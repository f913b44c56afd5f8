//! numba-rs's IR handed to Python (`numba_rs.inlining.IRBuilder`): Numba's own
//! `numba.core.ir` objects when Numba is loaded, look-alikes otherwise. Inline cost
//! models and `metadata['preserved_ir']` read it.

use numba_ir::{Expr, FunctionIR, RaiseArg, Stmt, VarId};
use numba_typeinfer::TypeId;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::objmode::constant_object;

/// `ir` as a Python `FunctionIR`; `func` is the Python function it was built from (its
/// globals and closure give the values of `global`/`freevar` nodes), when known.
pub(crate) fn function_ir<'py>(
    py: Python<'py>,
    ir: &FunctionIR,
    func: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let b = py
        .import("numba_rs.inlining")?
        .getattr("IRBuilder")?
        .call1((
            func.map_or_else(|| py.None().into_bound(py), |f| f.clone()),
            &ir.name,
            &ir.qualname,
            &ir.filename,
            ir.firstlineno,
        ))?;
    let w = Walk { py, ir, b: &b };
    let blocks = PyDict::new(py);
    for (label, block) in &ir.blocks {
        let stmts = PyList::empty(py);
        for inst in &block.body {
            stmts.append(w.stmt(&inst.stmt, inst.loc.line)?)?;
        }
        let line = ir.block_locs.get(label).map_or(ir.firstlineno, |l| l.line);
        blocks.set_item(*label, b.call_method1("block", (stmts, line))?)?;
    }
    b.call_method1(
        "finish",
        (blocks, ir.arg_names.clone(), ir.is_generator, ir.dump()),
    )
}

/// Variable name to type (`numba_rs.types` objects) for every variable typing saw.
pub(crate) fn typemap<'py>(
    py: Python<'py>,
    ir: &FunctionIR,
    types: &[TypeId],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (v, t) in ir.vars.iter().zip(types) {
        d.set_item(&v.name, crate::typeobj::py_type(py, *t)?)?;
    }
    Ok(d)
}

struct Walk<'a, 'py> {
    py: Python<'py>,
    ir: &'a FunctionIR,
    b: &'a Bound<'py, PyAny>,
}

impl<'py> Walk<'_, 'py> {
    fn var(&self, v: VarId) -> PyResult<Bound<'py, PyAny>> {
        let data = self.ir.var(v);
        self.b.call_method1("var", (&data.name, data.loc.line))
    }

    fn opt_var(&self, v: Option<VarId>) -> PyResult<Bound<'py, PyAny>> {
        v.map_or_else(|| Ok(self.py.None().into_bound(self.py)), |v| self.var(v))
    }

    fn vars(&self, vs: &[VarId]) -> PyResult<Bound<'py, PyList>> {
        let items = vs
            .iter()
            .map(|&v| self.var(v))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(self.py, items)
    }

    fn expr_node(
        &self,
        op: &str,
        line: u32,
        fields: &[(&str, Bound<'py, PyAny>)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let kws = PyDict::new(self.py);
        for (k, v) in fields {
            kws.set_item(k, v)?;
        }
        self.b.call_method1("expr", (op, line, kws))
    }

    fn value(&self, e: &Expr, line: u32) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let s = |text: &str| text.into_pyobject(py).map(|o| o.into_any());
        let none = || py.None().into_bound(py);
        let b = self.b;
        Ok(match e {
            Expr::Arg { index, name } => b.call_method1("arg", (*index, name, line))?,
            Expr::Const(k) => b.call_method1("const", (constant_object(py, k)?, line))?,
            Expr::Global { name, value } => {
                b.call_method1("glob", (name, line, self.known(&value.kind)?))?
            }
            Expr::FreeVar { index, name, value } => {
                b.call_method1("freevar", (*index, name, line, self.known(&value.kind)?))?
            }
            Expr::Var(v) => self.var(*v)?,
            Expr::Call {
                func,
                args,
                kws,
                vararg,
                varkwarg,
                ..
            } => {
                let kw = kws
                    .iter()
                    .map(|(k, v)| Ok(PyTuple::new(py, [s(k)?, self.var(*v)?])?.into_any()))
                    .collect::<PyResult<Vec<_>>>()?;
                self.expr_node(
                    "call",
                    line,
                    &[
                        ("func", self.var(*func)?),
                        ("args", self.vars(args)?.into_any()),
                        ("kws", PyList::new(py, kw)?.into_any()),
                        ("vararg", self.opt_var(*vararg)?),
                        ("varkwarg", self.opt_var(*varkwarg)?),
                        ("target", none()),
                    ],
                )?
            }
            Expr::BinOp { op, lhs, rhs } => self.expr_node(
                "binop",
                line,
                &[
                    ("fn", s(op.operator_name())?),
                    ("lhs", self.var(*lhs)?),
                    ("rhs", self.var(*rhs)?),
                ],
            )?,
            Expr::InplaceBinOp { op, lhs, rhs } => self.expr_node(
                "inplace_binop",
                line,
                &[
                    (
                        "fn",
                        s(&format!("i{}", op.operator_name().trim_end_matches('_')))?,
                    ),
                    ("immutable_fn", s(op.operator_name())?),
                    ("lhs", self.var(*lhs)?),
                    ("rhs", self.var(*rhs)?),
                ],
            )?,
            Expr::Unary { op, value } => self.expr_node(
                "unary",
                line,
                &[("fn", s(op.operator_name())?), ("value", self.var(*value)?)],
            )?,
            Expr::GetAttr { value, attr } => self.expr_node(
                "getattr",
                line,
                &[("value", self.var(*value)?), ("attr", s(attr)?)],
            )?,
            Expr::GetItem { value, index } => self.expr_node(
                "getitem",
                line,
                &[
                    ("value", self.var(*value)?),
                    ("index", self.var(*index)?),
                    ("fn", s("getitem")?),
                ],
            )?,
            Expr::StaticGetItem {
                value,
                index,
                index_var,
            } => self.expr_node(
                "static_getitem",
                line,
                &[
                    ("value", self.var(*value)?),
                    ("index", index.into_pyobject(py)?.into_any()),
                    ("index_var", self.opt_var(*index_var)?),
                    ("fn", s("getitem")?),
                ],
            )?,
            Expr::TypedGetItem {
                value,
                dtype,
                index,
            } => self.expr_node(
                "typed_getitem",
                line,
                &[
                    ("value", self.var(*value)?),
                    ("dtype", s(dtype)?),
                    ("index", self.var(*index)?),
                ],
            )?,
            Expr::Cast { value } => self.one("cast", *value, line)?,
            Expr::GetIter { value } => self.one("getiter", *value, line)?,
            Expr::IterNext { value } => self.one("iternext", *value, line)?,
            Expr::PairFirst { value } => self.one("pair_first", *value, line)?,
            Expr::PairSecond { value } => self.one("pair_second", *value, line)?,
            Expr::ListToTuple { list } => self.one("list_to_tuple", *list, line)?,
            Expr::ExhaustIter { value, count } => self.expr_node(
                "exhaust_iter",
                line,
                &[
                    ("value", self.var(*value)?),
                    ("count", count.into_pyobject(py)?.into_any()),
                ],
            )?,
            Expr::BuildTuple { items } => self.items("build_tuple", items, line)?,
            Expr::BuildList { items } => self.items("build_list", items, line)?,
            Expr::BuildSet { items } => self.items("build_set", items, line)?,
            Expr::BuildMap { items, size, .. } => {
                let pairs = items
                    .iter()
                    .map(|(k, v)| Ok(PyTuple::new(py, [self.var(*k)?, self.var(*v)?])?.into_any()))
                    .collect::<PyResult<Vec<_>>>()?;
                self.expr_node(
                    "build_map",
                    line,
                    &[
                        ("items", PyList::new(py, pairs)?.into_any()),
                        ("size", size.into_pyobject(py)?.into_any()),
                        ("literal_value", none()),
                        ("value_indexes", PyDict::new(py).into_any()),
                    ],
                )?
            }
            Expr::Phi { incoming } => {
                let values = incoming
                    .iter()
                    .map(|(v, _)| self.opt_var(*v))
                    .collect::<PyResult<Vec<_>>>()?;
                let blocks: Vec<_> = incoming.iter().map(|(_, l)| *l).collect();
                self.expr_node(
                    "phi",
                    line,
                    &[
                        ("incoming_values", PyList::new(py, values)?.into_any()),
                        ("incoming_blocks", PyList::new(py, blocks)?.into_any()),
                    ],
                )?
            }
            Expr::MakeFunction {
                code,
                closure,
                defaults,
            } => self.expr_node(
                "make_function",
                line,
                &[
                    ("name", s(&code.qualname)?),
                    ("code", none()),
                    ("closure", self.opt_var(*closure)?),
                    ("defaults", self.opt_var(*defaults)?),
                ],
            )?,
            Expr::Null => self.expr_node("null", line, &[])?,
            Expr::Undef => self.expr_node("undef", line, &[])?,
            Expr::Yield { value, index } => {
                b.call_method1("yield_", (self.var(*value)?, *index, line))?
            }
            Expr::Extension(node) => {
                b.call_method1("extension", (&node.kind, self.vars(&node.operands)?, line))?
            }
        })
    }

    /// A frozen constant's value as a 1-tuple (None when the value is not a constant:
    /// the builder reads it from the function's globals or closure).
    fn known(&self, kind: &numba_ir::GlobalKind) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match kind {
            numba_ir::GlobalKind::Const(k) => {
                Ok(Some(PyTuple::new(self.py, [constant_object(self.py, k)?])?))
            }
            _ => Ok(None),
        }
    }

    fn one(&self, op: &str, v: VarId, line: u32) -> PyResult<Bound<'py, PyAny>> {
        self.expr_node(op, line, &[("value", self.var(v)?)])
    }

    fn items(&self, op: &str, items: &[VarId], line: u32) -> PyResult<Bound<'py, PyAny>> {
        self.expr_node(op, line, &[("items", self.vars(items)?.into_any())])
    }

    fn raise_args(&self, args: &[RaiseArg]) -> PyResult<Bound<'py, PyAny>> {
        let items = args
            .iter()
            .map(|a| match a {
                RaiseArg::Const(k) => Ok(constant_object(self.py, k)?.into_bound(self.py)),
                RaiseArg::Var(v) => self.var(*v),
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyTuple::new(self.py, items)?.into_any())
    }

    fn const_args(
        &self,
        args: &Option<Vec<numba_bytecode::Constant>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match args {
            None => Ok(self.py.None().into_bound(self.py)),
            Some(items) => {
                let objs = items
                    .iter()
                    .map(|k| constant_object(self.py, k))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyTuple::new(self.py, objs)?.into_any())
            }
        }
    }

    fn stmt(&self, s: &Stmt, line: u32) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let b = self.b;
        let v = |id: VarId| self.var(id);
        let none = || py.None().into_bound(py);
        let text = |t: &str| t.into_pyobject(py).map(|o| o.into_any());
        let opt_text = |t: &Option<String>| match t {
            Some(t) => text(t),
            None => Ok(none()),
        };
        let call = |kind: &str, fields: Vec<Bound<'py, PyAny>>| {
            let mut args: Vec<Bound<'py, PyAny>> =
                vec![text(kind)?, line.into_pyobject(py)?.into_any()];
            args.extend(fields);
            b.call_method1("stmt", PyTuple::new(py, args)?)
        };
        match s {
            Stmt::Assign { target, value } => call(
                "Assign",
                vec![self.value(self.ir.expr(*value), line)?, v(*target)?],
            ),
            Stmt::SetItem {
                target,
                index,
                value,
            } => call("SetItem", vec![v(*target)?, v(*index)?, v(*value)?]),
            Stmt::SetAttr {
                target,
                attr,
                value,
            } => call("SetAttr", vec![v(*target)?, text(attr)?, v(*value)?]),
            Stmt::DelItem { target, index } => call("DelItem", vec![v(*target)?, v(*index)?]),
            Stmt::DelAttr { target, attr } => call("DelAttr", vec![v(*target)?, text(attr)?]),
            Stmt::Del { var } => call("Del", vec![text(self.ir.var_name(*var))?]),
            Stmt::Raise { exception } => call("Raise", vec![self.opt_var(*exception)?]),
            Stmt::TryRaise { exception } => call("TryRaise", vec![self.opt_var(*exception)?]),
            Stmt::StaticRaise { exc_class, args } => call(
                "StaticRaise",
                vec![opt_text(exc_class)?, self.const_args(args)?],
            ),
            Stmt::StaticTryRaise { exc_class, args } => call(
                "StaticTryRaise",
                vec![opt_text(exc_class)?, self.const_args(args)?],
            ),
            Stmt::DynamicRaise { exc_class, args } => call(
                "DynamicRaise",
                vec![opt_text(exc_class)?, self.raise_args(args)?],
            ),
            Stmt::DynamicTryRaise { exc_class, args } => call(
                "DynamicTryRaise",
                vec![opt_text(exc_class)?, self.raise_args(args)?],
            ),
            Stmt::StaticSetItem {
                target,
                index,
                index_var,
                value,
            } => call(
                "StaticSetItem",
                vec![
                    v(*target)?,
                    constant_object(py, index)?.into_bound(py),
                    v(*index_var)?,
                    v(*value)?,
                ],
            ),
            Stmt::StoreMap { dct, key, value } => {
                call("StoreMap", vec![v(*dct)?, v(*key)?, v(*value)?])
            }
            Stmt::Print { args, vararg } => call(
                "Print",
                vec![self.vars(args)?.into_any(), self.opt_var(*vararg)?],
            ),
            Stmt::Extension(node) => call(
                "Extension",
                vec![text(&node.kind)?, self.vars(&node.operands)?.into_any()],
            ),
            Stmt::EnterWith {
                contextmanager,
                begin,
                end,
            } => call(
                "EnterWith",
                vec![
                    v(*contextmanager)?,
                    begin.into_pyobject(py)?.into_any(),
                    end.into_pyobject(py)?.into_any(),
                ],
            ),
            Stmt::PopBlock => call("PopBlock", vec![]),
            Stmt::Return { value } => call("Return", vec![v(*value)?]),
            Stmt::Jump { target } => call("Jump", vec![target.into_pyobject(py)?.into_any()]),
            Stmt::Branch {
                cond,
                truebr,
                falsebr,
            } => call(
                "Branch",
                vec![
                    v(*cond)?,
                    truebr.into_pyobject(py)?.into_any(),
                    falsebr.into_pyobject(py)?.into_any(),
                ],
            ),
        }
    }
}
