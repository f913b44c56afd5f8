//! Object mode (seed 001, stage 6b): untyped IR lowered to calls into the CPython API.
//!
//! Every variable holds a `PyObject*` it owns (a stack slot, null while unbound): an
//! assignment releases the value it overwrites, `del` releases and clears. Operations are
//! the API calls Python's own evaluation loop makes (`PyNumber_Add`, `PyObject_GetAttr`,
//! `PyObject_Call`, ...); a call that fails (null, or -1) leaves the Python error set and
//! branches to the one exit, which releases every slot and returns [`STATUS_EXC`].
//!
//! The function is `i32 f(PyObject** ret, ExcInfo** unused, PyObject* const* args)`:
//! the entry-wrapper shape itself, so it is its own entry point; arguments are borrowed,
//! the result is a new reference. It reads its *environment* through the global
//! `<symbol>.env`, which the embedder fills once with a tuple
//! `(globals, builtins, freevars, lifted, c0, c1, ...)`: the function's globals dict, its
//! builtins dict, a dict of its closure cells by name, a tuple of the dispatchers of the
//! loops lifted out of it, then the constants [`ObjectEnv::consts`] lists in order. Globals are looked up at run time by name, as Python does.

pub mod api;

use std::collections::HashMap;
use std::time::Instant;

use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use numba_bytecode::Constant;
use numba_ir::{BinOp, Expr, ExprId, FunctionIR, Label, Stmt, UnaryOp, VarId};
use numba_typeinfer::types::{self, TypeId};

use crate::callconv::{EntryFn, Shape, STATUS_EXC, STATUS_OK};
use crate::{codegen, llvm_err, mangle, CompiledFunction, LowerError, LowerOptions, R};

pub use api::install_python_api;

/// What the embedder builds an object-mode function's environment from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectEnv {
    /// The address of the `<symbol>.env` cell (a `PyObject*`, null until filled).
    pub cell: usize,
    /// The constants the code reads, in the order of their environment slots (from 4).
    pub consts: Vec<Constant>,
    /// The loops lifted out of the function (`numba_ir::looplift`), before the driver
    /// makes them dispatchers.
    pub lifted_ir: Vec<numba_ir::FunctionIR>,
    /// Their dispatchers' ids: environment item 3 is a tuple of them, in this order.
    pub lifted: Vec<u64>,
}

/// The environment item holding the lifted loops' dispatchers.
const LIFTED: u64 = 3;
/// Where the constants start in the environment tuple.
const FIRST_CONST: u64 = 4;

/// Compile `ir` (untyped, with dels) in object mode. `arg_types` are the types the
/// dispatcher keyed the specialisation by; every argument crosses as its object.
pub fn compile(
    ir: &FunctionIR,
    arg_types: &[TypeId],
    options: &LowerOptions,
) -> R<CompiledFunction> {
    let start = Instant::now();
    let table = api::table()?;
    let machine = codegen::host_machine()?;
    // Compiled code lives as long as the process (as in Numba).
    let ctx: &'static Context = Box::leak(Box::new(Context::create()));
    let symbol = mangle::mangle(&options.module, &ir.qualname, options.uid, arg_types);
    let module = codegen::new_module(ctx, &symbol, machine);
    let consts = {
        let mut lw = ObjLower::new(ctx, &module, &symbol, ir)?;
        lw.lower()?;
        lw.consts.into_inner()
    };
    let llvm_ir = module.print_to_string().to_string();
    let lowered_at = Instant::now();
    // No NRT references here: nothing to prune.
    let prune_stats = codegen::optimise(&module, machine, crate::RefPruneFlags::NONE)?;
    let optimized_ir = module.print_to_string().to_string();
    let assembly = if options.dump_assembly {
        Some(codegen::assembly(&module, machine)?)
    } else {
        None
    };
    let optimised_at = Instant::now();
    let loaded = crate::jit::load_module(&module, table)?;
    let native = loaded.address(&symbol)?;
    // The cell's address, through the accessor `ObjLower::new` made.
    let getter = loaded.address(&format!("{}.get", env_symbol(&symbol)))?;
    // SAFETY: `<symbol>.env.get` was generated as `ptr ()`, returning the cell's address.
    let cell = unsafe { std::mem::transmute::<usize, extern "C" fn() -> usize>(getter)() };
    if cell == 0 {
        return Err(LowerError::Llvm("object mode: no environment cell".into()));
    }
    // SAFETY: the function was generated above with exactly the EntryFn signature.
    let entry: EntryFn = unsafe { std::mem::transmute::<usize, EntryFn>(native) };
    let done = Instant::now();
    Ok(CompiledFunction {
        assembly,
        prune_stats,
        // Every argument and the result cross as objects.
        arg_shapes: arg_types.iter().map(|_| Some(Shape::Object)).collect(),
        ret_shape: Some(Shape::Object),
        timings: vec![
            ("object_mode_lowering".into(), lowered_at - start),
            ("llvm_optimise".into(), optimised_at - lowered_at),
            ("llvm_jit".into(), done - optimised_at),
        ],
        object_env: Some(ObjectEnv {
            cell,
            consts,
            ..ObjectEnv::default()
        }),
        ..CompiledFunction::new(
            (symbol, native, entry),
            (arg_types, types::PYOBJECT),
            (llvm_ir.into(), optimized_ir.into()),
        )
    })
}

fn env_symbol(symbol: &str) -> String {
    format!("{symbol}.env")
}

struct ObjLower<'ctx, 'a> {
    ctx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    func: FunctionValue<'ctx>,
    ir: &'a FunctionIR,
    /// One owned-reference slot per variable.
    slots: Vec<PointerValue<'ctx>>,
    blocks: HashMap<Label, BasicBlock<'ctx>>,
    env: PointerValue<'ctx>,
    args: PointerValue<'ctx>,
    ret: PointerValue<'ctx>,
    status: PointerValue<'ctx>,
    error: BasicBlock<'ctx>,
    exit: BasicBlock<'ctx>,
    consts: std::cell::RefCell<Vec<Constant>>,
    line: u32,
}

fn unsupported(what: impl Into<String>, line: u32) -> LowerError {
    LowerError::Unsupported {
        message: what.into(),
        line,
    }
}

impl<'ctx, 'a> ObjLower<'ctx, 'a> {
    fn new(
        ctx: &'ctx Context,
        module: &'a Module<'ctx>,
        symbol: &str,
        ir: &'a FunctionIR,
    ) -> R<Self> {
        let ptr = ctx.ptr_type(AddressSpace::default());
        let fnty = ctx
            .i32_type()
            .fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
        let func = module.add_function(symbol, fnty, None);
        let cell = module.add_global(ptr, None, &env_symbol(symbol));
        cell.set_initializer(&ptr.const_null());
        cell.set_linkage(Linkage::External);
        let b = ctx.create_builder();
        // `ptr <symbol>.env.get()`: how the embedder finds the cell after JIT.
        let getter = module.add_function(
            &format!("{}.get", env_symbol(symbol)),
            ptr.fn_type(&[], false),
            None,
        );
        b.position_at_end(ctx.append_basic_block(getter, "entry"));
        b.build_return(Some(&cell.as_pointer_value()))
            .map_err(llvm_err)?;
        let entry = ctx.append_basic_block(func, "entry");
        b.position_at_end(entry);
        let param = |i: u32| -> R<PointerValue<'ctx>> {
            func.get_nth_param(i)
                .map(|p| p.into_pointer_value())
                .ok_or_else(|| LowerError::Llvm("object-mode parameter".into()))
        };
        let (ret, args) = (param(0)?, param(2)?);
        let env = b
            .build_load(ptr, cell.as_pointer_value(), "env")
            .map_err(llvm_err)?
            .into_pointer_value();
        let status = b.build_alloca(ctx.i32_type(), "status").map_err(llvm_err)?;
        let mut slots = Vec::with_capacity(ir.vars.len());
        for v in &ir.vars {
            let s = b.build_alloca(ptr, &v.name).map_err(llvm_err)?;
            b.build_store(s, ptr.const_null()).map_err(llvm_err)?;
            slots.push(s);
        }
        let error = ctx.append_basic_block(func, "error");
        let exit = ctx.append_basic_block(func, "exit");
        let mut blocks = HashMap::new();
        for &label in ir.blocks.keys() {
            blocks.insert(label, ctx.append_basic_block(func, &format!("B{label}")));
        }
        let first = *ir
            .blocks
            .keys()
            .next()
            .ok_or_else(|| LowerError::Llvm("object mode: no blocks".into()))?;
        b.build_unconditional_branch(blocks[&first])
            .map_err(llvm_err)?;
        Ok(ObjLower {
            ctx,
            module,
            b,
            func,
            ir,
            slots,
            blocks,
            env,
            args,
            ret,
            status,
            error,
            exit,
            consts: Default::default(),
            line: ir.firstlineno,
        })
    }

    fn ptr_ty(&self) -> inkwell::types::PointerType<'ctx> {
        self.ctx.ptr_type(AddressSpace::default())
    }

    fn lower(&mut self) -> R<()> {
        for (&label, block) in &self.ir.blocks {
            self.b.position_at_end(self.blocks[&label]);
            for inst in &block.body {
                self.line = inst.loc.line;
                self.stmt(&inst.stmt)?;
            }
            if block.terminator().is_none() {
                return Err(LowerError::Llvm(format!(
                    "object mode: block {label} has no terminator"
                )));
            }
        }
        // The error exit and the common exit: every slot released, the status returned.
        self.b.position_at_end(self.error);
        self.b
            .build_store(
                self.status,
                self.ctx.i32_type().const_int(STATUS_EXC as u64, true),
            )
            .map_err(llvm_err)?;
        self.b
            .build_unconditional_branch(self.exit)
            .map_err(llvm_err)?;
        self.b.position_at_end(self.exit);
        for i in 0..self.slots.len() {
            let p = self.load_slot(self.slots[i])?;
            self.call_void("Py_DecRef", &[p.into()])?;
        }
        let st = self
            .b
            .build_load(self.ctx.i32_type(), self.status, "st")
            .map_err(llvm_err)?;
        self.b.build_return(Some(&st)).map_err(llvm_err)?;
        Ok(())
    }

    // ---- calls and checks -------------------------------------------------------------

    fn call(
        &self,
        name: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> R<inkwell::values::BasicValueEnum<'ctx>> {
        let f = api::function(self.ctx, self.module, name)?;
        self.b
            .build_call(f, args, "")
            .map_err(llvm_err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm(format!("{name} returns void")))
    }

    fn call_void(&self, name: &str, args: &[BasicMetadataValueEnum<'ctx>]) -> R<()> {
        let f = api::function(self.ctx, self.module, name)?;
        self.b.build_call(f, args, "").map_err(llvm_err)?;
        Ok(())
    }

    /// A call returning a new reference: null means the error is set.
    fn call_obj(&self, name: &str, args: &[BasicMetadataValueEnum<'ctx>]) -> R<PointerValue<'ctx>> {
        let p = self.call(name, args)?.into_pointer_value();
        self.check_null(p)?;
        Ok(p)
    }

    /// A call returning an `int` status: -1 (negative) means the error is set. Returns
    /// the status.
    fn call_status(
        &self,
        name: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> R<inkwell::values::IntValue<'ctx>> {
        self.call_status_owning(name, args, &[])
    }

    /// A status call that, on failure, first releases `owned` (containers being built).
    fn call_status_owning(
        &self,
        name: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
        owned: &[PointerValue<'ctx>],
    ) -> R<inkwell::values::IntValue<'ctx>> {
        let r = self.call(name, args)?.into_int_value();
        let bad = self
            .b
            .build_int_compare(IntPredicate::SLT, r, r.get_type().const_zero(), "")
            .map_err(llvm_err)?;
        self.release_on(bad, owned)?;
        Ok(r)
    }

    fn check_null(&self, p: PointerValue<'ctx>) -> R<()> {
        let bad = self.b.build_is_null(p, "").map_err(llvm_err)?;
        self.release_on(bad, &[])
    }

    /// When `bad`, release `owned` and take the error exit; continue otherwise.
    fn release_on(
        &self,
        bad: inkwell::values::IntValue<'ctx>,
        owned: &[PointerValue<'ctx>],
    ) -> R<()> {
        let ok = self.ctx.append_basic_block(self.func, "ok");
        let fail = if owned.is_empty() {
            self.error
        } else {
            self.ctx.append_basic_block(self.func, "failed")
        };
        self.b
            .build_conditional_branch(bad, fail, ok)
            .map_err(llvm_err)?;
        if !owned.is_empty() {
            self.b.position_at_end(fail);
            for &p in owned {
                self.decref(p)?;
            }
            self.b
                .build_unconditional_branch(self.error)
                .map_err(llvm_err)?;
        }
        self.b.position_at_end(ok);
        Ok(())
    }

    fn incref(&self, p: PointerValue<'ctx>) -> R<()> {
        self.call_void("Py_IncRef", &[p.into()])
    }

    fn decref(&self, p: PointerValue<'ctx>) -> R<()> {
        self.call_void("Py_DecRef", &[p.into()])
    }

    /// A name as a `str` object from the environment, borrowed (interned by the
    /// embedder, as CPython interns identifiers).
    fn name(&self, s: &str) -> R<PointerValue<'ctx>> {
        let i = self.const_index(&Constant::Str(s.to_string()));
        self.env_item(i)
    }

    fn int(&self, v: i64) -> inkwell::values::IntValue<'ctx> {
        self.ctx.i64_type().const_int(v as u64, true)
    }

    /// `True`/`False` for an i1, as a new reference.
    fn bool_obj(&self, c: inkwell::values::IntValue<'ctx>) -> R<PointerValue<'ctx>> {
        let t = api::data(self.ctx, self.module, "_Py_TrueStruct").as_pointer_value();
        let f = api::data(self.ctx, self.module, "_Py_FalseStruct").as_pointer_value();
        let p = self
            .b
            .build_select(c, t, f, "")
            .map_err(llvm_err)?
            .into_pointer_value();
        self.incref(p)?;
        Ok(p)
    }

    // ---- variables --------------------------------------------------------------------

    fn load_slot(&self, slot: PointerValue<'ctx>) -> R<PointerValue<'ctx>> {
        Ok(self
            .b
            .build_load(self.ptr_ty(), slot, "")
            .map_err(llvm_err)?
            .into_pointer_value())
    }

    /// A variable's value, borrowed. A user variable read while unbound raises Python's
    /// UnboundLocalError; the interpreter's temporaries are always bound.
    fn get(&self, v: VarId) -> R<PointerValue<'ctx>> {
        let p = self.load_slot(self.slots[v.0 as usize])?;
        let name = self.ir.var_name(v);
        if !name.starts_with('$') {
            let unbound = self.b.build_is_null(p, "").map_err(llvm_err)?;
            let raise = self.ctx.append_basic_block(self.func, "unbound");
            let ok = self.ctx.append_basic_block(self.func, "bound");
            self.b
                .build_conditional_branch(unbound, raise, ok)
                .map_err(llvm_err)?;
            self.b.position_at_end(raise);
            let user = name.split('.').next().unwrap_or(name);
            let n = self.name(user)?;
            self.call_void("numba_rs_obj_unbound", &[n.into()])?;
            self.b
                .build_unconditional_branch(self.error)
                .map_err(llvm_err)?;
            self.b.position_at_end(ok);
        }
        Ok(p)
    }

    /// A variable's value as a new reference.
    fn get_owned(&self, v: VarId) -> R<PointerValue<'ctx>> {
        let p = self.get(v)?;
        self.incref(p)?;
        Ok(p)
    }

    /// Store a new reference into `v`, releasing what it held.
    fn set(&self, v: VarId, value: PointerValue<'ctx>) -> R<()> {
        let slot = self.slots[v.0 as usize];
        let old = self.load_slot(slot)?;
        self.b.build_store(slot, value).map_err(llvm_err)?;
        self.decref(old)
    }

    fn const_index(&self, c: &Constant) -> u64 {
        let mut consts = self.consts.borrow_mut();
        let i = match consts.iter().position(|k| same_constant(k, c)) {
            Some(i) => i,
            None => {
                consts.push(c.clone());
                consts.len() - 1
            }
        };
        FIRST_CONST + i as u64
    }

    /// Environment item `i`, borrowed.
    fn env_item(&self, i: u64) -> R<PointerValue<'ctx>> {
        Ok(self
            .call(
                "PyTuple_GetItem",
                &[self.env.into(), self.int(i as i64).into()],
            )?
            .into_pointer_value())
    }

    // ---- statements -------------------------------------------------------------------

    fn stmt(&mut self, stmt: &Stmt) -> R<()> {
        match stmt {
            Stmt::Assign { target, value } => {
                let v = self.expr(*value)?;
                self.set(*target, v)?;
            }
            Stmt::SetItem {
                target,
                index,
                value,
            }
            | Stmt::StaticSetItem {
                target,
                index_var: index,
                value,
                ..
            } => {
                let (t, i, v) = (self.get(*target)?, self.get(*index)?, self.get(*value)?);
                self.call_status("PyObject_SetItem", &[t.into(), i.into(), v.into()])?;
            }
            Stmt::StoreMap { dct, key, value } => {
                let (t, i, v) = (self.get(*dct)?, self.get(*key)?, self.get(*value)?);
                self.call_status("PyDict_SetItem", &[t.into(), i.into(), v.into()])?;
            }
            Stmt::SetAttr {
                target,
                attr,
                value,
            } => {
                let (t, v) = (self.get(*target)?, self.get(*value)?);
                let n = self.name(attr)?;
                self.call_status("PyObject_SetAttr", &[t.into(), n.into(), v.into()])?;
            }
            Stmt::DelItem { target, index } => {
                let (t, i) = (self.get(*target)?, self.get(*index)?);
                self.call_status("PyObject_DelItem", &[t.into(), i.into()])?;
            }
            Stmt::DelAttr { target, attr } => {
                let t = self.get(*target)?;
                let n = self.name(attr)?;
                let null = self.ptr_ty().const_null();
                self.call_status("PyObject_SetAttr", &[t.into(), n.into(), null.into()])?;
            }
            Stmt::Del { var } => {
                let slot = self.slots[var.0 as usize];
                let old = self.load_slot(slot)?;
                self.b
                    .build_store(slot, self.ptr_ty().const_null())
                    .map_err(llvm_err)?;
                self.decref(old)?;
            }
            Stmt::Raise { exception } => {
                let e = match exception {
                    Some(v) => self.get(*v)?,
                    None => self.ptr_ty().const_null(),
                };
                self.call_void("numba_rs_obj_raise", &[e.into()])?;
                self.b
                    .build_unconditional_branch(self.error)
                    .map_err(llvm_err)?;
            }
            Stmt::StaticRaise { exc_class, args } => {
                // The interpreter's own guards (an unreachable RERAISE): a builtin class.
                let name = exc_class
                    .as_deref()
                    .and_then(|r| r.strip_prefix("<class '"))
                    .and_then(|r| r.strip_suffix("'>"))
                    .filter(|n| !n.contains('.'))
                    .ok_or_else(|| {
                        unsupported("a raise of this class in object mode", self.line)
                    })?;
                let n = self.name(name)?;
                let a = match args {
                    Some(a) => {
                        let i = self.const_index(&Constant::Tuple(a.clone()));
                        self.env_item(i)?
                    }
                    None => self.ptr_ty().const_null(),
                };
                self.call_void(
                    "numba_rs_obj_raise_builtin",
                    &[self.env.into(), n.into(), a.into()],
                )?;
                self.b
                    .build_unconditional_branch(self.error)
                    .map_err(llvm_err)?;
            }
            Stmt::Return { value } => {
                let v = self.get_owned(*value)?;
                self.b.build_store(self.ret, v).map_err(llvm_err)?;
                self.b
                    .build_store(
                        self.status,
                        self.ctx.i32_type().const_int(STATUS_OK as u64, false),
                    )
                    .map_err(llvm_err)?;
                self.b
                    .build_unconditional_branch(self.exit)
                    .map_err(llvm_err)?;
            }
            Stmt::Jump { target } => {
                self.b
                    .build_unconditional_branch(self.block(*target)?)
                    .map_err(llvm_err)?;
            }
            Stmt::Branch {
                cond,
                truebr,
                falsebr,
            } => {
                let c = self.get(*cond)?;
                let r = self.call_status("PyObject_IsTrue", &[c.into()])?;
                let t = self
                    .b
                    .build_int_compare(IntPredicate::NE, r, r.get_type().const_zero(), "")
                    .map_err(llvm_err)?;
                self.b
                    .build_conditional_branch(t, self.block(*truebr)?, self.block(*falsebr)?)
                    .map_err(llvm_err)?;
            }
            Stmt::TryRaise { .. } | Stmt::StaticTryRaise { .. } | Stmt::DynamicTryRaise { .. } => {
                return Err(unsupported("try/except in object mode", self.line))
            }
            Stmt::DynamicRaise { .. } => {
                return Err(unsupported(
                    "a raise with run-time arguments after rewriting",
                    self.line,
                ))
            }
            Stmt::Print { .. } => {
                return Err(unsupported(
                    "the print statement node in object mode",
                    self.line,
                ))
            }
            Stmt::EnterWith { .. } | Stmt::PopBlock => {
                return Err(unsupported("a with block in object mode", self.line))
            }
            Stmt::Extension(n) => {
                return Err(unsupported(
                    format!("the {} node in object mode", n.kind),
                    self.line,
                ))
            }
        }
        Ok(())
    }

    fn block(&self, label: Label) -> R<BasicBlock<'ctx>> {
        self.blocks
            .get(&label)
            .copied()
            .ok_or_else(|| LowerError::Llvm(format!("object mode: no block {label}")))
    }

    // ---- expressions ------------------------------------------------------------------

    /// Evaluate an expression to a new reference.
    fn expr(&mut self, id: ExprId) -> R<PointerValue<'ctx>> {
        let ir = self.ir;
        match ir.expr(id) {
            Expr::Arg { index, .. } => {
                let slot = unsafe {
                    // SAFETY: in-bounds by the entry contract (one slot per argument).
                    self.b
                        .build_gep(
                            self.ctx.i64_type(),
                            self.args,
                            &[self.int(*index as i64)],
                            "",
                        )
                        .map_err(llvm_err)?
                };
                let p = self.load_slot(slot)?;
                self.incref(p)?;
                Ok(p)
            }
            Expr::Const(c) => {
                let i = self.const_index(c);
                let p = self.env_item(i)?;
                self.incref(p)?;
                Ok(p)
            }
            Expr::Global { value, name } => match value.kind {
                // The interpreter's try-block markers: Numba's object mode has no
                // exception handling either.
                numba_ir::GlobalKind::Intrinsic(_) => {
                    Err(unsupported("try/except in object mode", self.line))
                }
                numba_ir::GlobalKind::LiftedLoop { index } => {
                    let loops = self.env_item(LIFTED)?;
                    let p = self
                        .call(
                            "PyTuple_GetItem",
                            &[loops.into(), self.int(index as i64).into()],
                        )?
                        .into_pointer_value();
                    self.check_null(p)?;
                    self.incref(p)?;
                    Ok(p)
                }
                // Any other global is looked up when the code runs, as Python does.
                _ => {
                    let n = self.name(name)?;
                    self.call_obj("numba_rs_obj_global", &[self.env.into(), n.into()])
                }
            },
            Expr::FreeVar { name, .. } => {
                let n = self.name(name)?;
                self.call_obj("numba_rs_obj_freevar", &[self.env.into(), n.into()])
            }
            Expr::Var(v) | Expr::Cast { value: v } => self.get_owned(*v),
            Expr::Call {
                func,
                args,
                kws,
                vararg,
                varkwarg,
                ..
            } => self.call_expr(*func, args, kws, *vararg, *varkwarg),
            Expr::BinOp { op, lhs, rhs } => self.binop(*op, *lhs, *rhs, false),
            Expr::InplaceBinOp { op, lhs, rhs } => self.binop(*op, *lhs, *rhs, true),
            Expr::Unary { op, value } => {
                let v = self.get(*value)?;
                match op {
                    UnaryOp::Neg => self.call_obj("PyNumber_Negative", &[v.into()]),
                    UnaryOp::Pos => self.call_obj("PyNumber_Positive", &[v.into()]),
                    UnaryOp::Invert => self.call_obj("PyNumber_Invert", &[v.into()]),
                    UnaryOp::Not => {
                        let r = self.call_status("PyObject_Not", &[v.into()])?;
                        let c = self
                            .b
                            .build_int_compare(IntPredicate::NE, r, r.get_type().const_zero(), "")
                            .map_err(llvm_err)?;
                        self.bool_obj(c)
                    }
                }
            }
            Expr::GetAttr { value, attr } => {
                let v = self.get(*value)?;
                let n = self.name(attr)?;
                self.call_obj("PyObject_GetAttr", &[v.into(), n.into()])
            }
            Expr::GetItem { value, index } => {
                let (v, i) = (self.get(*value)?, self.get(*index)?);
                self.call_obj("PyObject_GetItem", &[v.into(), i.into()])
            }
            Expr::StaticGetItem {
                value,
                index,
                index_var,
            } => {
                let v = self.get(*value)?;
                match index_var {
                    Some(iv) => {
                        let i = self.get(*iv)?;
                        self.call_obj("PyObject_GetItem", &[v.into(), i.into()])
                    }
                    None => {
                        let i = self.call_obj("PyLong_FromLongLong", &[self.int(*index).into()])?;
                        let r = self.call("PyObject_GetItem", &[v.into(), i.into()])?;
                        self.decref(i)?;
                        let r = r.into_pointer_value();
                        self.check_null(r)?;
                        Ok(r)
                    }
                }
            }
            Expr::GetIter { value } => {
                let v = self.get(*value)?;
                self.call_obj("PyObject_GetIter", &[v.into()])
            }
            Expr::IterNext { value } => {
                let v = self.get(*value)?;
                self.call_obj("numba_rs_obj_iternext", &[v.into()])
            }
            Expr::PairFirst { value } | Expr::PairSecond { value } => {
                let at = i64::from(matches!(ir.expr(id), Expr::PairSecond { .. }));
                let v = self.get(*value)?;
                let p = self
                    .call("PyTuple_GetItem", &[v.into(), self.int(at).into()])?
                    .into_pointer_value();
                self.check_null(p)?;
                self.incref(p)?;
                Ok(p)
            }
            Expr::ExhaustIter { value, count } => {
                let v = self.get(*value)?;
                self.call_obj(
                    "numba_rs_obj_unpack",
                    &[v.into(), self.int(*count as i64).into()],
                )
            }
            Expr::BuildTuple { items } => {
                let vals = self.get_all(items)?;
                self.build_seq("PyTuple_New", "PyTuple_SetItem", &vals)
            }
            Expr::BuildList { items } => {
                let vals = self.get_all(items)?;
                self.build_seq("PyList_New", "PyList_SetItem", &vals)
            }
            Expr::BuildSet { items } => {
                let vals = self.get_all(items)?;
                let null = self.ptr_ty().const_null();
                let s = self.call_obj("PySet_New", &[null.into()])?;
                for v in vals {
                    self.call_status_owning("PySet_Add", &[s.into(), v.into()], &[s])?;
                }
                Ok(s)
            }
            Expr::BuildMap { items, .. } => {
                let mut vals = Vec::with_capacity(items.len());
                for &(k, v) in items {
                    vals.push((self.get(k)?, self.get(v)?));
                }
                let d = self.call_obj("PyDict_New", &[])?;
                for (k, v) in vals {
                    self.call_status_owning(
                        "PyDict_SetItem",
                        &[d.into(), k.into(), v.into()],
                        &[d],
                    )?;
                }
                Ok(d)
            }
            Expr::ListToTuple { list } => {
                let v = self.get(*list)?;
                self.call_obj("PySequence_Tuple", &[v.into()])
            }
            Expr::MakeFunction { .. } => Err(unsupported(
                "a closure or lambda (make_function) in object mode",
                self.line,
            )),
            Expr::Yield { .. } => Err(unsupported("a generator in object mode", self.line)),
            Expr::Phi { .. }
            | Expr::TypedGetItem { .. }
            | Expr::Null
            | Expr::Undef
            | Expr::Extension(_) => Err(unsupported(
                format!("the IR node {} in object mode", expr_kind(ir.expr(id))),
                self.line,
            )),
        }
    }

    /// The variables' values, borrowed (read first, so an unbound one fails before
    /// anything is built).
    fn get_all(&self, items: &[VarId]) -> R<Vec<PointerValue<'ctx>>> {
        items.iter().map(|&v| self.get(v)).collect()
    }

    /// A tuple or list of the values (`SetItem` steals a reference to each).
    fn build_seq(
        &self,
        new: &str,
        set: &str,
        values: &[PointerValue<'ctx>],
    ) -> R<PointerValue<'ctx>> {
        let t = self.call_obj(new, &[self.int(values.len() as i64).into()])?;
        for (i, &v) in values.iter().enumerate() {
            self.incref(v)?;
            self.call(set, &[t.into(), self.int(i as i64).into(), v.into()])?;
        }
        Ok(t)
    }

    fn call_expr(
        &self,
        func: VarId,
        args: &[VarId],
        kws: &[(String, VarId)],
        vararg: Option<VarId>,
        varkwarg: Option<VarId>,
    ) -> R<PointerValue<'ctx>> {
        let f = self.get(func)?;
        let vals = self.get_all(args)?;
        let mut kwvals = Vec::with_capacity(kws.len());
        for (name, v) in kws {
            kwvals.push((name, self.get(*v)?));
        }
        let null = self.ptr_ty().const_null();
        let va = match vararg {
            Some(v) => self.get(v)?,
            None => null,
        };
        let vk = match varkwarg {
            Some(v) => self.get(v)?,
            None => null,
        };
        let tuple = self.build_seq("PyTuple_New", "PyTuple_SetItem", &vals)?;
        let kw = if kws.is_empty() {
            null
        } else {
            let d = self.call("PyDict_New", &[])?.into_pointer_value();
            let bad = self.b.build_is_null(d, "").map_err(llvm_err)?;
            self.release_on(bad, &[tuple])?;
            for (name, v) in kwvals {
                let n = self.name(name)?;
                self.call_status_owning(
                    "PyDict_SetItem",
                    &[d.into(), n.into(), v.into()],
                    &[tuple, d],
                )?;
            }
            d
        };
        let r = if vararg.is_none() && varkwarg.is_none() {
            self.call("PyObject_Call", &[f.into(), tuple.into(), kw.into()])?
        } else {
            self.call(
                "numba_rs_obj_call",
                &[f.into(), tuple.into(), kw.into(), va.into(), vk.into()],
            )?
        }
        .into_pointer_value();
        self.decref(tuple)?;
        self.decref(kw)?;
        self.check_null(r)?;
        Ok(r)
    }

    fn binop(&self, op: BinOp, lhs: VarId, rhs: VarId, inplace: bool) -> R<PointerValue<'ctx>> {
        let (l, r) = (self.get(lhs)?, self.get(rhs)?);
        let arith = |plain: &'static str, inp: &'static str| if inplace { inp } else { plain };
        let name = match op {
            BinOp::Add => arith("PyNumber_Add", "PyNumber_InPlaceAdd"),
            BinOp::Sub => arith("PyNumber_Subtract", "PyNumber_InPlaceSubtract"),
            BinOp::Mul => arith("PyNumber_Multiply", "PyNumber_InPlaceMultiply"),
            BinOp::TrueDiv => arith("PyNumber_TrueDivide", "PyNumber_InPlaceTrueDivide"),
            BinOp::FloorDiv => arith("PyNumber_FloorDivide", "PyNumber_InPlaceFloorDivide"),
            BinOp::Mod => arith("PyNumber_Remainder", "PyNumber_InPlaceRemainder"),
            BinOp::LShift => arith("PyNumber_Lshift", "PyNumber_InPlaceLshift"),
            BinOp::RShift => arith("PyNumber_Rshift", "PyNumber_InPlaceRshift"),
            BinOp::And => arith("PyNumber_And", "PyNumber_InPlaceAnd"),
            BinOp::Or => arith("PyNumber_Or", "PyNumber_InPlaceOr"),
            BinOp::Xor => arith("PyNumber_Xor", "PyNumber_InPlaceXor"),
            BinOp::MatMul => arith("PyNumber_MatrixMultiply", "PyNumber_InPlaceMatrixMultiply"),
            BinOp::Pow => {
                let none = api::data(self.ctx, self.module, "_Py_NoneStruct").as_pointer_value();
                let name = arith("PyNumber_Power", "PyNumber_InPlacePower");
                return self.call_obj(name, &[l.into(), r.into(), none.into()]);
            }
            BinOp::Lt | BinOp::Le | BinOp::Eq | BinOp::Ne | BinOp::Gt | BinOp::Ge => {
                // CPython's Py_LT .. Py_GE.
                let code = match op {
                    BinOp::Lt => 0,
                    BinOp::Le => 1,
                    BinOp::Eq => 2,
                    BinOp::Ne => 3,
                    BinOp::Gt => 4,
                    _ => 5,
                };
                let c = self.ctx.i32_type().const_int(code, false);
                return self.call_obj("PyObject_RichCompare", &[l.into(), r.into(), c.into()]);
            }
            BinOp::Is | BinOp::IsNot => {
                let pred = if op == BinOp::Is {
                    IntPredicate::EQ
                } else {
                    IntPredicate::NE
                };
                let c = self.b.build_int_compare(pred, l, r, "").map_err(llvm_err)?;
                return self.bool_obj(c);
            }
            BinOp::In => {
                // `lhs` is the container (Numba's operand order for `contains`).
                let res = self.call_status("PySequence_Contains", &[l.into(), r.into()])?;
                let c = self
                    .b
                    .build_int_compare(IntPredicate::NE, res, res.get_type().const_zero(), "")
                    .map_err(llvm_err)?;
                return self.bool_obj(c);
            }
        };
        self.call_obj(name, &[l.into(), r.into()])
    }
}

/// Constants are equal for sharing a slot only when they are the same Python value of the
/// same type (`1`, `1.0` and `True` compare equal in Python but are different objects).
fn same_constant(a: &Constant, b: &Constant) -> bool {
    match (a, b) {
        (Constant::Float(x), Constant::Float(y)) => x.to_bits() == y.to_bits(),
        (Constant::Complex(a1, b1), Constant::Complex(a2, b2)) => {
            a1.to_bits() == a2.to_bits() && b1.to_bits() == b2.to_bits()
        }
        (Constant::Tuple(x), Constant::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_constant(p, q))
        }
        _ => std::mem::discriminant(a) == std::mem::discriminant(b) && a == b,
    }
}

fn expr_kind(e: &Expr) -> &'static str {
    match e {
        Expr::Phi { .. } => "phi",
        Expr::TypedGetItem { .. } => "typed_getitem",
        Expr::Null => "null",
        Expr::Undef => "undef",
        Expr::Extension(_) => "extension",
        _ => "expression",
    }
}
